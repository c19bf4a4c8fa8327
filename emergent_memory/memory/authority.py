"""Which source may replace which memory, and what a replacement keeps of the memory it replaces.

Sources are ordered by how directly the user gave the memory: `explicit` (the user said it)
outranks `corrected` (the user corrected the agent), which outranks `inferred` (the agent's
reading, and everything automatic capture takes from a conversation). A memory from a weaker
source never supersedes, nor changes through an exact repeat, a memory from a stronger one:
the two are kept side by side and the save reports the older one as a possible duplicate, with
why. A core memory is changed only by an explicit source. Nor does a memory of one category
replace one of another by its wording alone (`other_kind`), unless it is a correction.

A memory that supersedes another loses nothing the other had (`inherited`): it keeps the
higher importance, the stronger source, the higher confidence and, unless it gives its own,
the other's rationale; the service also files it in the other's contexts and copies its
evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from emergent_memory.memory.models import CONFIDENCE_BY_SOURCE, IMPORTANCES, SOURCES, Source

# What a memory that supersedes another takes from it (`inherited`), and what the undo of a
# person's supersede decision gives back.
INHERITED = ("importance", "source", "confidence", "rationale")

# Weakest first.
SOURCE_ORDER: tuple[Source, ...] = ("inferred", "corrected", "explicit")
assert set(SOURCE_ORDER) == set(SOURCES)


def source_of(properties: Mapping[str, Any]) -> Source:
    """A memory's source (a version written before sources existed counts as inferred)."""
    source = properties.get("source")
    return source if source in SOURCE_ORDER else "inferred"


def stronger(one: Source, other: Source) -> Source:
    return max(one, other, key=SOURCE_ORDER.index)


def refusal(existing: Mapping[str, Any], source: Source) -> str | None:
    """Why a memory from `source` may not replace or change the existing memory (its
    properties), or None when it may."""
    held = source_of(existing)
    if SOURCE_ORDER.index(source) < SOURCE_ORDER.index(held):
        return (
            f"kept beside it: {_a(source)} memory does not replace {_a(held)} one "
            "(a stronger source)"
        )
    if existing.get("importance") == "core" and source != "explicit":
        return "kept beside it: it is a core memory, which only an explicit one replaces"
    return None


def rank_key(source: object, created_at: datetime) -> tuple[int, datetime]:
    """What decides which side of a conflict is current: the stronger source, then the newer."""
    held = source if source in SOURCE_ORDER else "inferred"
    return SOURCE_ORDER.index(held), created_at


def other_kind(held: str | None, category: str) -> str | None:
    """Why a memory of `category` may not replace, by its text alone, a memory of the `held`
    category (a lesson is not a restatement of an instruction, nor a decision of a fact); None
    when they are of one kind. A correction (its category, or its source `corrected`) is not
    asked: it says by itself what it corrects."""
    if held is None or held == category:
        return None
    return f"kept beside it: {_a(category)} does not replace {_a(held)} by its wording alone"


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def given_back(
    before: Mapping[str, Any], decided: Mapping[str, Any], now: Mapping[str, Any]
) -> dict[str, Any]:
    """The patch that gives a kept memory back what it had `before` a supersede decision
    made it `decided`: each inherited property the decision changed and nothing has changed
    since (`now`), at its earlier value (None: the property was absent)."""
    return {
        key: before.get(key)
        for key in INHERITED
        if decided.get(key) != before.get(key) and now.get(key) == decided.get(key)
    }


def inherited(existing: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The properties of a memory (`new`, as it would be written) that supersedes `existing`,
    with what it must not lose: the higher importance, the stronger source and the higher
    confidence of the two, and the existing rationale when the new memory gives none."""
    merged = dict(new)
    importance = max(
        existing.get("importance", "normal"),
        new.get("importance", "normal"),
        key=IMPORTANCES.index,
    )
    if importance != "normal":
        merged["importance"] = importance
    else:
        merged.pop("importance", None)
    source = stronger(source_of(existing), source_of(new))
    merged["source"] = source
    merged["confidence"] = max(
        float(existing.get("confidence", CONFIDENCE_BY_SOURCE[source_of(existing)])),
        float(new.get("confidence", CONFIDENCE_BY_SOURCE[source])),
        CONFIDENCE_BY_SOURCE[source],
    )
    if new.get("rationale") is None and existing.get("rationale") is not None:
        merged["rationale"] = existing["rationale"]
    return merged
