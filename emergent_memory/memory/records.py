"""How the memory service shapes rows into the plain-data results the tools return: a memory
(its lifecycle and provenance), one in another status, a found episode, a project's counts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from emergent_memory.memory import authority, episodes, store
from emergent_memory.memory.models import (
    InactiveMemory,
    LastEvidence,
    MemoryRecord,
    ProjectStats,
    Provenance,
    RecalledEpisode,
)

# a superseded memory's supersede_rule when the LLM judge decided (memory/dedup_judge.py):
# "judge: same", "judge: corrects"; here, so that shaping a record does not import the judge
RULE_PREFIX = "judge: "


# the reason an update records for a memory its new text came close to
EDITED = "edited"

# Why a save kept both memories of a pair and asks a person: the save rule's reasons
# (memory/dedup.py), the LLM judge's verdict (memory/dedup_judge.py), an edit; authority's
# reasons are sentences already ("kept beside it: ...").
PAIR_WHY = {
    "not enough evidence": "close in meaning, but nothing in the words shows it is the same fact",
    "different value": "the same subject with another value, and neither says it changed",
    "opposite value": "the opposite value of the same thing, and neither says it changed",
    "swapped values": "the same values in swapped places, and neither says it changed",
    "keeps the subject": "it says the value of the same subject changed, in words far from the "
    "old one's: kept beside it as a conflict, the newer first",
    "next nearest changed": "it says the value of this memory's subject changed, "
    "though another memory is closer in meaning: kept beside it as a conflict, the newer first",
    "different values": "close in meaning, but several values differ",
    "different subject": "close in meaning, but about another subject (another service, "
    "place, role or kind)",
    "different attribute": "close in meaning, but another attribute of the same thing (how "
    "often against how long, or another attribute changed while this one, it says, still "
    "holds)",
    "different phrase": "close in meaning, but one part of the sentence says something else",
    "narrower statement": "close in meaning, but the new one says it of a part only (which "
    "one, for whom, where, until when, from what bound)",
    "wider statement": "close in meaning, but the old one says it of a part only (which one, "
    "for whom, where, when) and the new one names no part: which it means, the words do not "
    "say",
    "says more": "close in meaning, but the new one says all the old one says and more (a "
    "part, a bound, an exception, a detail, someone's view of it): the old one may still hold "
    "as it stands",
    "different holder": "close in meaning, but about another person or thing",
    "another statement": "close in meaning, but another speaker or holder, another kind of "
    "statement (a risk and its mitigation, a lesson and a rule), a question, a "
    "statement that adds a fact, how someone takes a fact, a number a thing changed by, "
    "the other direction (the way back), or the same said of another thing (two rules "
    "against two things, an opposite of another thing)",
    "another occasion": "close in meaning, but about another occasion or time",
    "unknown to the model": "text the embedding model cannot read (another language or "
    "script), so closeness in meaning proves nothing",
    RULE_PREFIX + "conflicts": "the LLM judge: another value of the same subject, and neither says "
    "which holds",
    EDITED: "an edit made it close to the other",
}
PAIR_WHY_UNKNOWN = "close in meaning; the save could not tell whether it is the same fact"


def pair_why(reason: str | None) -> str:
    """Why a pair waits for a decision, in words (None: recorded before reasons were kept)."""
    if reason is None:
        return PAIR_WHY_UNKNOWN
    return PAIR_WHY.get(reason, reason)


def memory_record(
    row: store.MemoryRow | store.RecallRow,
    *,
    use_count: int | None = None,
    last_used: datetime | None = None,
    decay: store.Decay | None = None,
    now: datetime | None = None,
) -> MemoryRecord:
    """A row as the tools return a memory; `effective_confidence` decays the stored one with
    `decay` (the settings' defaults when None) as of `now` (the present when None)."""
    used = row.last_used if last_used is None else last_used
    confidence = float(row.confidence if row.confidence is not None else 0.7)
    effective = store.effective_confidence(
        confidence,
        row.importance,
        row.last_active,
        now or datetime.now(UTC),
        decay or store.Decay(),
    )
    return {
        "id": str(row.id),
        "content": row.content,
        "category": row.category,
        "scope": row.scope,
        "source": row.source or "inferred",
        "confidence": confidence,
        "contexts": list(row.contexts),
        "use_count": row.use_count if use_count is None else use_count,
        "last_used": None if used is None else used.isoformat(),
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "derived_from": provenance_record(row.derived_from),
        "importance": row.importance or "normal",
        "valid_from": row.valid_from,
        "valid_until": row.valid_until,
        "rationale": row.rationale,
        "effective_confidence": round(effective, 4),
        "evidence_count": row.evidence_count,
        "last_evidence": _last_evidence(row.last_evidence),
        "conflicts_with": [str(other["id"]) for other in row.conflicts_with or []],
        "conflict": conflict_state(row),
    }


def conflict_state(
    row: store.MemoryRow | store.RecallRow,
) -> Literal["current", "outranked"] | None:
    """Where the memory stands in its conflicts (CONFLICTS_WITH): "outranked" when a memory it
    conflicts with has a stronger source, or the same and is newer; "current" when it
    outranks all of them; None without conflicts."""
    if not row.conflicts_with:
        return None
    mine = authority.rank_key(row.source, row.created_at)
    others = [
        authority.rank_key(o["source"], datetime.fromisoformat(o["created_at"]))
        for o in row.conflicts_with
    ]
    return "outranked" if any(other > mine for other in others) else "current"


def outranks(
    row: store.MemoryRow | store.RecallRow, stale: store.MemoryRow | store.RecallRow
) -> bool:
    """`row` is a side of a conflict of `stale` (CONFLICTS_WITH) with the stronger source, or
    the same and newer: conflict_state's order."""
    linked = {str(other["id"]) for other in stale.conflicts_with or []}
    mine = authority.rank_key(row.source, row.created_at)
    return str(row.id) in linked and mine > authority.rank_key(stale.source, stale.created_at)


def _last_evidence(found: Mapping[str, Any] | None) -> LastEvidence | None:
    if found is None:
        return None
    return {
        "at": str(found["at"]),
        "evidence": found.get("evidence"),
        "origin": str(found["origin"]),
        "session_id": found.get("session_id"),
    }


def provenance_record(found: Mapping[str, Any] | None) -> Provenance | None:
    """store.PROVENANCE's JSON as the tools return it."""
    if found is None:
        return None
    turns = found["turns"]
    return {
        "episode_id": str(found["episode_id"]),
        "session_id": str(found["session_id"]),
        "client": str(found["client"]),
        "turns": {"first": int(turns["first"]), "last": int(turns["last"])},
        "captured_at": str(found["captured_at"]),
    }


def episode_record(row: episodes.EpisodeRow) -> RecalledEpisode:
    """A found episode as recall returns it: the excerpt marked with an ellipsis where the
    text goes on before or after it."""
    before = "\u2026" if row.excerpt_start > 1 else ""
    after = "\u2026" if row.excerpt_start - 1 + len(row.excerpt) < row.text_length else ""
    return {
        "id": str(row.id),
        "session_id": row.session_id,
        "client": row.client,
        "turns": {"first": row.first_turn, "last": row.last_turn},
        "captured_at": row.captured_at,
        "summary": row.summary,
        "excerpt": before + row.excerpt + after,
        "score": round(row.score, 6),
    }


def project_stats(row: store.StatsRow) -> ProjectStats:
    return {
        "project_id": str(row.project_id),
        "active": row.active,
        "superseded": row.superseded,
        "deleted": row.deleted,
        "archived": row.archived,
        "by_category": {  # in the order of CATEGORIES
            "preference": row.preferences,
            "pattern": row.patterns,
            "correction": row.corrections,
            "fact": row.facts,
            "instruction": row.instructions,
            "convention": row.conventions,
            "decision": row.decisions,
            "lesson": row.lessons,
            "risk": row.risks,
        },
    }


def inactive_record(row: store.InactiveRow, decay: store.Decay | None = None) -> InactiveMemory:
    status: Literal["superseded", "deleted", "archived"] = "archived"
    if row.deleted_at is not None:
        status = "deleted"
    elif row.superseded_by is not None:
        status = "superseded"
    return {
        **memory_record(row, decay=decay),
        "status": status,
        "superseded_by": row.superseded_by,
        "deleted_at": None if row.deleted_at is None else row.deleted_at.isoformat(),
        "archived_at": None if row.archived_at is None else row.archived_at.isoformat(),
        "supersede_reason": row.supersede_reason,
        "superseded_because": superseded_because(row) if status == "superseded" else None,
        "delete_reason": row.delete_reason,
        "archive_reason": row.archive_reason,
    }


# What each reason of the save rule (memory/dedup.py) means, for a person reading why a memory
# was replaced.
RULE_WORDS = {
    "similar": "the same fact reworded",
    "says it changed": "it says the value changed",
    "keeps every word": "it says all the old one said",
    "reworded": "the same fact with one word exchanged for another",
    "same values": "the same values and names in other words",
    "names the change": "it names the old value and the new one",
    "same holder": "the same person in the same role, said in other words",
    "learned reading": "the same fact in other words (a model fitted on labelled pairs read "
    "them as one)",
}

# the LLM judge's verdicts that supersede (supersede_rule "judge: same", "judge: corrects")
JUDGE_WORDS = {
    "same": "the same fact reworded",
    "corrects": "it corrects the old value",
}


def superseded_because(row: store.InactiveRow) -> str | None:
    """Why a superseded memory was replaced, in words: the save rule that decided and the two
    memories' similarity ("the save rule: it says the value changed (similarity 0.81)"), or
    that someone decided; with the reason given, if any. None when nothing was recorded (a
    memory superseded before this was kept)."""
    parts = []
    if row.supersede_rule == "decided":
        parts.append("someone chose the newer memory (manage_memory, the API or the dashboard)")
    elif row.supersede_rule is not None:
        rule = row.supersede_rule
        if rule.startswith(RULE_PREFIX):
            verdict = rule.removeprefix(RULE_PREFIX)
            said = f"the LLM judge: {JUDGE_WORDS.get(verdict, verdict)}"
        else:
            said = f"the save rule: {RULE_WORDS.get(rule, rule)}"
        similarity = row.supersede_similarity
        parts.append(said + (f" (similarity {similarity:.2f})" if similarity is not None else ""))
    if row.supersede_reason:
        parts.append(f"reason given: {row.supersede_reason}")
    return "; ".join(parts) or None


def current_first(memories: list[Any]) -> list[Any]:
    """Memories (records) in their order, but the memories linked by conflicts (directly or
    through one another) keep the places they were found in and fill them in the order of
    authority: the current value takes the first place any side of its conflict was found
    in, however much better the outranked side matched the query."""
    ordered = list(memories)
    found = {memory["id"]: i for i, memory in enumerate(ordered)}
    group = list(range(len(ordered)))  # union-find over the positions

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, memory in enumerate(ordered):
        for other in memory["conflicts_with"]:
            if other in found:
                group[root(found[other])] = root(i)
    places: dict[int, list[int]] = {}
    for i in range(len(ordered)):
        places.setdefault(root(i), []).append(i)
    for positions in places.values():
        if len(positions) < 2:
            continue
        members = sorted(
            (ordered[i] for i in positions),
            key=lambda m: authority.rank_key(m["source"], datetime.fromisoformat(m["created_at"])),
            reverse=True,
        )
        for i, memory in zip(positions, members, strict=True):
            ordered[i] = memory
    return ordered


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
