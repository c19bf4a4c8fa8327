"""The newer of two memories that answer the same question with different values comes first.

A fact that changed is often saved again in other words ("Ivo is on call for billing this
rotation", later "The billing on-call engineer is Hana"). The save rule compares a new memory
with its nearest one only, and two phrasings of one fact can be far apart (0.31 for those
two), so both stay active and unlinked; recall then ranks them by how well each matches the
question, and the old value comes first about a third of the time (benchmarks/README.md,
section 12). A question names the slot the save could not see: recall reads its answer for
memories that compete for it and puts the newer one first.

Two memories returned for one query compete when
- they have the same category, one that states what is so now (a fact, a preference, a
  convention, a decision: not an instruction, correction, lesson, risk or pattern, which
  hold side by side);
- they share the content words of the query that either holds (the subject the question
  asks about: "on call" and "billing" for "who is on call for billing"): all of them, or
  two thirds of three or more;
- each states a value the other does not, of the same kind (a name, a number, a version, a
  day: memory/dedup.py's values, and a name that opens the text, "*Ivo* is on call").

Then the one with the stronger source (memory/authority.py), or the same source and newer,
moves right before the other when recall ranked it below; nothing is dropped or rescored,
and other memories keep their places. A linked conflict (CONFLICTS_WITH) is ordered the same
way by records.current_first; this reads the pairs nobody linked.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from emergent_memory.memory import authority, dedup

# Words of a question that say what is asked, not what it is about.
_ASKING = "who whom whose what which when where why how does do did use uses used"
_ASKING_WORDS = dedup.content_words(_ASKING)


def _subject(query: str) -> frozenset[str]:
    return dedup.content_words(query) - _ASKING_WORDS


# Words that open a sentence in capitals without being a name ("Always run ...", "Page Ivo").
_OPENERS = dedup.content_words(
    "always never please use run page ask make keep our their all every each new old current"
)


def _values(one: dedup.Statement) -> frozenset[str]:
    """The statement's values, and a name that opens it ("*Ivo* is on call"): the save rule
    leaves a first word out, as it may be any word written in capitals."""
    first = one.tokens[0] if one.tokens else None
    if (
        first is not None
        and first.text.isalpha()
        and first.text[:1].isupper()
        and first.text[1:].islower()
        and first.norm not in dedup.STOPWORDS
        and first.norm not in _OPENERS
    ):
        return one.values | {first.norm}
    return one.values


# The categories that state what is so now, one value at a time. Instructions, corrections,
# lessons, risks and patterns hold side by side ("ask Nadia before changing the schema" and
# "ask Ivo to review migrations"): a newer one does not replace an older one.
STATE_CATEGORIES = frozenset({"fact", "preference", "convention", "decision"})


def compete(first: dict[str, Any], second: dict[str, Any], subject: frozenset[str]) -> bool:
    """Whether the two memories answer the question about `subject` with different values."""
    if first["category"] != second["category"] or first["category"] not in STATE_CATEGORIES:
        return False
    a, b = dedup.statement(first["content"]), dedup.statement(second["content"])
    asked = subject & (a.words | b.words)
    shared = asked & a.words & b.words
    # every word asked about, or of three or more, all but a third ("the ledger *service*")
    if not shared or (shared != asked and (len(asked) < 3 or 3 * len(shared) < 2 * len(asked))):
        return False
    only_a = {dedup.value_kind(v) for v in _values(a) - b.words if not v.startswith("q:")}
    only_b = {dedup.value_kind(v) for v in _values(b) - a.words if not v.startswith("q:")}
    return bool(only_a & only_b)


def _rank(memory: dict[str, Any]) -> tuple[int, datetime]:
    return authority.rank_key(memory["source"], datetime.fromisoformat(memory["created_at"]))


def newer_value_first(memories: list[Any], query: str) -> list[Any]:
    """Memories (records) in their order, but a memory that outranks one ranked above it and
    competes with it for the query (see the module docstring) moved right before it."""
    subject = _subject(query)
    if not subject:
        return list(memories)
    ordered = list(memories)
    for memory in list(ordered):
        position = ordered.index(memory)
        losers = [
            i
            for i, other in enumerate(ordered[:position])
            if _rank(memory) > _rank(other) and compete(other, memory, subject)
        ]
        if losers:
            ordered.remove(memory)
            ordered.insert(min(losers), memory)
    return ordered
