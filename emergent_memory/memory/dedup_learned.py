"""Save's learned reading: a pair the rules keep beside each other for want of evidence
("not enough evidence") is superseded when a small model, fitted on the spent labelled dedup
pairs, reads the two as the same fact (a rewording, or a correction of one chat speaker).

The rules supersede only on evidence in the words (every word kept, the same values, one word
exchanged, a stated change); a rewording that shares few words ("Noor's timezone: CET" /
"Noor works on Central European Time") is kept beside the old memory and reported. The model
reads what the rules already have of the pair: the similarity, every feature of their
comparison (dedup.Comparison: holders, values changed, change words, negations, what one says
more or less, ...) and how many words, numbers and negations each text holds of the other's.
It is a boosted tree ensemble (`dedup_learned.json`, written by
`python -m benchmarks.dedup_learned fit --write`) with a threshold per kind of pair (`kind`:
two texts under one label, which share topics more often than facts, and the rest), chosen so
that, on the sets it was fitted on, the supersessions it adds are wrong for at most 0.1% of
the pairs that must not supersede in each regime (agent notes and chat turns, out of fold). It
reads only a pair the rules keep for want of evidence (no holder, value, occasion or statement
they read as different), both texts read as English (as the rules, it does not trust a
similarity in a language the model does not read), with no values in swapped places and no
negation of the other (`eligible`); nothing else ever changes. Only all-MiniLM-L6-v2's policy
has it (its similarities are that model's). benchmarks/README.md, section 3, has its numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from functools import cache

from emergent_memory.memory import trees
from emergent_memory.memory.dedup import (
    NEGATORS,
    Comparison,
    Decision,
    Reason,
    reads_english,
    statement,
)

__all__ = [
    "COMPARED",
    "FEATURES",
    "LABELLED",
    "REASON",
    "LearnedReading",
    "eligible",
    "features",
    "kind",
    "load",
    "negations",
    "numbers",
    "words",
]

# the comparison's fields added after the shipped model was fitted, which it does not read (a
# refit, `python -m benchmarks.dedup_learned fit --write`, may take them in): corrects_another
# keeps a pair from the model altogether (eligible)
NOT_READ = frozenset(
    {
        "corrects_another",
        "same_written",
        "only_the_change",
        "another_version",
        "another_tool",
        "rejected_aside",
        "aside",
        "another_numbered",
        "scope_dropped",
        "part_opened",
        "role_holder_changed",
        "role_given",
        "role_restated",
    }
)
# the comparison's fields the model reads, in this order (numbers; `swapped` as present or not)
COMPARED = tuple(sorted(field.name for field in fields(Comparison) if field.name not in NOT_READ))

# what the model reads, in this order (benchmarks/dedup_learned.py fits on the same function)
FEATURES = (
    "similarity",
    "new_words_held",  # share of the new text's words the old one has
    "old_words_held",  # share of the old text's words the new one has
    "new_words_not_held",  # how many of the new text's words the old one lacks
    "old_words_not_held",
    "new_numbers_not_held",
    "old_numbers_not_held",
    "numbers_shared",
    "old_negations",
    "new_negations",
    "old_words",
    "new_words",
    *COMPARED,
)

# the kind of pair with a threshold of its own (`kind`)
LABELLED = "labelled"

# why a pair the model read was superseded
REASON: Reason = "learned reading"

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def words(text: str) -> set[str]:
    """The text's words, in lower case (what both learned readings count)."""
    return {word.lower() for word in _WORD.findall(text)}


def numbers(text: str) -> set[str]:
    """The numbers written in digits in the text."""
    return set(_NUMBER.findall(text))


def negations(text: str) -> int:
    """How many negators the text says (save's: dedup.NEGATORS, "don't" read as "not")."""
    return sum(1 for token in statement(text).tokens if token.norm in NEGATORS)


def features(similarity: float, existing: str, new: str, pair: Comparison) -> list[float]:
    """The model's input (FEATURES) for a pair and the rules' comparison of it."""
    old_words, new_words = words(existing), words(new)
    held = old_words & new_words
    old_numbers, new_numbers = numbers(existing), numbers(new)
    compared = [getattr(pair, name) for name in COMPARED]
    return [
        similarity,
        len(held) / max(1, len(new_words)),
        len(held) / max(1, len(old_words)),
        float(len(new_words - old_words)),
        float(len(old_words - new_words)),
        float(len(new_numbers - old_numbers)),
        float(len(old_numbers - new_numbers)),
        float(len(old_numbers & new_numbers)),
        float(negations(existing)),
        float(negations(new)),
        float(len(old_words)),
        float(len(new_words)),
        *(
            float(value) if isinstance(value, int) else float(value is not None)
            for value in compared
        ),
    ]


def eligible(existing: str, new: str, pair: Comparison, decision: Decision) -> bool:
    """Whether the model may read the pair: the rules kept it for want of evidence alone (not
    for a difference they read), both texts read as English, no values in swapped places and
    no negation of the other: neither one the rules read (the opposite value) nor a negation
    one text says and the other does not (Statement.negations: two in one clause cancel, "not
    only" or "nothing but" is none), without a word that says the value changed
    ("Staging has TLS enabled" / "TLS isn't turned on in staging"; not "Raj: I drink coffee
    every morning" / "Raj: I no longer drink coffee, switched to tea")."""
    if decision.reason != "not enough evidence":
        return False
    if pair.crosswise or pair.opposite or pair.swapped is not None or pair.reordered:
        return False
    if pair.corrects_another:  # "..., not 68" of a memory that never said 68
        return False
    if not (reads_english(existing) and reads_english(new)):
        return False
    # (the rules' own reading of a negation: two in one clause cancel, "not only" is none)
    return pair.marked or statement(existing).negations == statement(new).negations


def kind(pair: Comparison) -> str | None:
    """The kind of pair with a threshold of its own: two texts under one label (two turns of
    one chat speaker, "Kenji: ..." / "Kenji: ...", or two notes under one heading), which
    share topics far more often than facts; None for the rest."""
    return LABELLED if pair.labelled else None


@cache
def load(name: str) -> trees.TreeEnsemble:
    """The fitted model in the file `name` beside this module (read once per process)."""
    return trees.read(name, FEATURES)


@dataclass(frozen=True, slots=True)
class LearnedReading:
    """dedup.DedupPolicy's second reading: the model in the file `name` (read on first use)."""

    name: str

    def probability(
        self, similarity: float, existing: str, new: str, pair: Comparison, decision: Decision
    ) -> float | None:
        """The model's probability that the pair states one fact; None where it may not read
        the pair (`eligible`)."""
        if not eligible(existing, new, pair, decision):
            return None
        return load(self.name).probability(features(similarity, existing, new, pair))

    def decide(
        self, similarity: float, existing: str, new: str, pair: Comparison, decision: Decision
    ) -> Decision:
        """The rules' decision, or a supersession when the model reads the two as one fact."""
        probability = self.probability(similarity, existing, new, pair, decision)
        if probability is None or probability < load(self.name).threshold_for(kind(pair)):
            return decision
        return Decision("supersede", REASON)
