"""The memory service's vocabulary: who is asking (Principal) and the plain-data results."""

from __future__ import annotations

from typing import Literal, NotRequired, get_args

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from emergent_memory.graph.models import Scope

# The vocabularies, each named once. The category, source and scope of a memory are the enums
# of the agent-memory pack's Memory type (packs/agent-memory.json); tests/test_packs.py holds
# them equal. The tools' argument types, the CLI's choices and the checks of validation.py all
# come from here.
Category = Literal[
    "preference",
    "pattern",
    "correction",
    "fact",
    "instruction",
    "convention",
    "decision",
    "lesson",
    "risk",
]
Source = Literal["explicit", "inferred", "corrected"]
MemoryScope = Scope  # a memory's scope is its graph object's
Action = Literal[
    "list",
    "delete",
    "update",
    "restore",
    "forget_all",
    "reinforce",
    "archive",
    "supersede",
    "keep_both",
]
# How much a memory matters (absent: normal). Core memories are injected at every session's
# start (within the budget), never decay and are never archived.
Importance = Literal["low", "normal", "high", "core"]
# Where a piece of evidence came from (kb.memory_evidence.origin).
EvidenceOrigin = Literal["save", "repeat", "reinforce", "capture"]
# What manage_memory list shows: active memories (the default), or the history restore can
# bring back.
ListStatus = Literal["active", "superseded", "deleted", "archived"]
# What restore brought a memory back from.
RestoredFrom = Literal["superseded", "deleted", "superseded and deleted", "archived"]

CATEGORIES: tuple[Category, ...] = get_args(Category)
SOURCES: tuple[Source, ...] = get_args(Source)
SCOPES: tuple[MemoryScope, ...] = get_args(MemoryScope)
ACTIONS: tuple[Action, ...] = get_args(Action)
LIST_STATUSES: tuple[ListStatus, ...] = get_args(ListStatus)
IMPORTANCES: tuple[Importance, ...] = get_args(Importance)

# Starting confidence of a memory by how it was learned (DESIGN.md 4).
CONFIDENCE_BY_SOURCE: dict[Source, float] = {"explicit": 1.0, "corrected": 0.9, "inferred": 0.7}
# How much each piece of independent evidence raises a memory's stored confidence: it closes
# this share of the distance to 1 (never above 1).
REINFORCEMENT_STEP = 0.25


class TurnRange(TypedDict):
    """Turns of a client session, both included (0 = the session's first message)."""

    first: int
    last: int


class Provenance(TypedDict):
    """Where a memory came from: the conversation window (Episode) automatic capture derived
    it from (`episode_id`), in which client session, which turns, and when it was read."""

    episode_id: str
    session_id: str
    client: str
    turns: TurnRange
    captured_at: str


class LastEvidence(TypedDict):
    """The latest piece of evidence recorded for a memory: when, the evidence itself (None
    when a repeat gave none), where it came from, and in which client session (if known)."""

    at: str
    evidence: str | None
    origin: str
    session_id: str | None


class MemoryRecord(TypedDict):
    """A memory as the tools return it. `id` is the canonical id, stable across updates.
    `derived_from`: the conversation it was captured from, or None (saved by a tool, or its
    episode is not visible to the caller here).

    `importance` is "normal" when the memory has none; `valid_from` / `valid_until` (ISO 8601,
    UTC) and `rationale` are None when absent. `confidence` is the stored confidence,
    `effective_confidence` that confidence decayed since the memory was last used, reinforced
    or changed (core memories never decay). `evidence_count` / `last_evidence`: the evidence
    recorded by the caller (kb.memory_evidence). `conflicts_with`: the ids of the active
    memories that state another value of the same subject (CONFLICTS_WITH); `conflict`:
    "current" when this one has the stronger source, or the same and is newer, than all of
    them, "outranked" when one of them does, None without conflicts."""

    id: str
    content: str
    category: str
    scope: str
    source: str
    confidence: float
    contexts: list[str]
    use_count: int
    last_used: str | None
    created_at: str
    updated_at: str
    derived_from: Provenance | None
    importance: str
    valid_from: str | None
    valid_until: str | None
    rationale: str | None
    effective_confidence: float
    evidence_count: int
    last_evidence: LastEvidence | None
    conflicts_with: list[str]  # the active memories it conflicts with (CONFLICTS_WITH)
    conflict: Literal["current", "outranked"] | None  # which side of its conflicts it is


class ScoreBreakdown(TypedDict):
    """Why a memory ranked where it did: each branch's rank (1 = best; None = not a candidate
    of that branch), the full-text score, the cosine similarity, the fused score, the three
    factors it was multiplied by (effective confidence, recency, importance) and the final
    score."""

    lexical_rank: int | None
    lexical_score: float | None
    vector_rank: int | None
    similarity: float | None
    fused: float
    effective_confidence: float
    recency: float
    importance_factor: float
    score: float


class RecalledMemory(MemoryRecord):
    """`archived_at`: when the memory was archived (only a recall with include_archived finds
    archived memories), else None."""

    score: float
    scores: ScoreBreakdown
    archived_at: str | None
    # the estimated chance it answers the query (memory/relevance.py), 0 to 1
    relevance: float


class PossibleDuplicate(TypedDict):
    """A visible memory close to a new one that the dedup rule did not supersede: the agent
    decides whether it is the same fact (then updates or deletes the older one)."""

    id: str
    content: str
    similarity: float
    # why the two were kept beside each other, in words (records.pair_why, or kept_because)
    why: str
    # why a memory the rule would have superseded was kept (memory/authority.py)
    kept_because: NotRequired[str]
    # it states another value of the same subject: the two are linked by CONFLICTS_WITH
    conflict: NotRequired[bool]


class SaveResult(TypedDict):
    """`restored`: only when the save repeated an archived memory exactly, which it brought
    back (and reinforced)."""

    status: Literal["created", "updated", "unchanged"]
    memory: MemoryRecord
    superseded_ids: list[str]
    similarity: float | None
    possible_duplicates: list[PossibleDuplicate]
    degraded: bool
    restored: NotRequired[bool]


# What a save did, as a person reads it (the dashboard's add form and import): a new memory
# (with a similar one kept beside it, or linked as a conflict with one stating another value),
# one it replaced (a rewording or a correction: superseded), an archived copy brought back,
# or nothing new (the same text was remembered).
SaveOutcome = Literal["added", "similar", "conflict", "replaced", "restored", "unchanged"]


def save_outcome(saved: SaveResult) -> SaveOutcome:
    """Which SaveOutcome a save's result says."""
    if saved.get("restored"):
        return "restored"
    if saved["status"] == "unchanged":
        return "unchanged"
    if saved["status"] == "updated":
        return "replaced"
    nearby = saved["possible_duplicates"]
    if any(pair.get("conflict") for pair in nearby):
        return "conflict"
    return "similar" if nearby else "added"


class RecalledEpisode(TypedDict):
    """A captured conversation window that matched a recall with include_episodes: which
    session, client and turns, when it was read, its summary (None when capture gave none), a
    bounded excerpt of its text around the first match of the query's rarest word found (else
    its beginning), and its fused score (words and meaning, as for memories)."""

    id: str
    session_id: str
    client: str
    turns: TurnRange
    captured_at: str
    summary: str | None
    excerpt: str
    score: float


class RecallResult(TypedDict):
    """`episodes` only when the recall asked for them (include_episodes), never mixed with
    the memories. `min_relevance`: the floor the memories reached (the caller's, or the
    calibrated one); `nothing_relevant`: no memory reached it (`memories` is empty)."""

    memories: list[RecalledMemory]
    degraded: bool
    min_relevance: float
    nothing_relevant: bool
    episodes: NotRequired[list[RecalledEpisode]]


class InactiveMemory(MemoryRecord):
    """A memory that list shows with status superseded, deleted or archived: `superseded_by`
    is the id of the memory that replaced it, `deleted_at` when it was deleted, `archived_at`
    when it was archived; each with the reason given, if any."""

    status: Literal["superseded", "deleted", "archived"]
    superseded_by: str | None
    deleted_at: str | None
    archived_at: str | None
    supersede_reason: str | None
    superseded_because: str | None  # the rule and similarity, or the decision, in words
    delete_reason: str | None
    archive_reason: str | None


class ListResult(TypedDict):
    memories: list[InactiveMemory | MemoryRecord]  # InactiveMemory for the other statuses
    count: int


class DeleteResult(TypedDict):
    deleted: str


class ReinforceResult(TypedDict):
    """The memory after the evidence (`memory`); whether the evidence was independent (new
    for this memory: only then does the confidence rise); the stored confidence before and
    after; how many pieces of evidence the memory has now; `restored` when the memory was
    archived and the evidence brought it back."""

    memory: MemoryRecord
    independent: bool
    confidence_before: float
    confidence_after: float
    evidence_count: int
    restored: bool


class ArchiveResult(TypedDict):
    """The archived memory (status archived) and the reason given, if any."""

    archived: str
    memory: InactiveMemory
    archive_reason: str | None


class UpdateResult(TypedDict):
    """`possible_duplicates`: other visible memories close to the new content. An update
    never supersedes another memory; the agent decides (delete one, or keep both)."""

    memory: MemoryRecord
    possible_duplicates: list[PossibleDuplicate]


class RestoreResult(TypedDict):
    """`restored_from`: what the memory was; `broken_supersession`: the id of the memory that
    had superseded it (that one stays active; the link is kept as history, deleted)."""

    memory: MemoryRecord
    restored_from: RestoredFrom
    broken_supersession: str | None


class SupersedeResult(TypedDict):
    """The memory that stays (after its new version, if it got one) and the one it
    superseded."""

    memory: MemoryRecord
    superseded_ids: list[str]


class KeepBothResult(TypedDict):
    """The two memories a conflict linked, both active and no longer in conflict with each
    other (`memories`, in the order named), and their ids (`kept_both`)."""

    memories: list[MemoryRecord]
    kept_both: list[str]


class BulkError(TypedDict):
    code: str
    message: str


class BulkItem(TypedDict):
    """One id of a bulk change: `ok`, or the error that change of it met (`code` as the
    REST API's: not_found, forbidden, invalid_input)."""

    id: str
    ok: bool
    error: NotRequired[BulkError]


class BulkResult(TypedDict):
    """Each id's outcome, in the order given, and how many memories changed."""

    results: list[BulkItem]
    changed: int


class ForgetAllResult(TypedDict):
    deleted_count: int


class ManageResult(TypedDict, total=False):
    """What manage_memory returns: the keys of the action's own result (ListResult for list,
    DeleteResult for delete, UpdateResult for update, RestoreResult for restore,
    ForgetAllResult for forget_all, ReinforceResult for reinforce, ArchiveResult for
    archive, SupersedeResult for supersede, KeepBothResult for keep_both)."""

    memories: list[InactiveMemory | MemoryRecord]
    count: int
    deleted: str
    memory: InactiveMemory | MemoryRecord  # InactiveMemory for archive
    possible_duplicates: list[PossibleDuplicate]
    restored_from: RestoredFrom
    broken_supersession: str | None
    deleted_count: int
    independent: bool
    confidence_before: float
    confidence_after: float
    evidence_count: int
    restored: bool
    archived: str
    archive_reason: str | None
    superseded_ids: list[str]
    kept_both: list[str]


class ProjectStats(TypedDict):
    project_id: str
    active: int
    superseded: int
    deleted: int
    archived: int
    by_category: dict[str, int]


class StatsResult(TypedDict):
    actor_id: str
    project_id: str
    projects: list[ProjectStats]
    active: int
    superseded: int
    deleted: int
    archived: int


class ReembedResult(TypedDict):
    model: str
    reembedded: int
    remaining: int
