"""verify_memory's learned confirmation: a claim the rules find only related (or new) is
confirmed when a small model, fitted on the spent held-out claims, says its closest memory
states it.

The rules confirm a claim only when it keeps the memory's words and values; a claim that says
the same in other words stays `related`. The model reads what the rules already have, for the
closest candidate: its similarity and how far it leads the next one, how many of the claim's
words, numbers and negations the memory holds and the other way round, and whether the rules
found any candidate related. It is a boosted tree ensemble (`verify_learned.json`, written by
`python -m benchmarks.verify_learned fit`): its probability that the claim is confirmed, and
the threshold chosen so that, on the sets it was fitted on, at most 1% of the conflicts are
answered `confirmed` (rules and model together). It never overrides a `conflict` or a
`confirmed` of the rules, and reads only a closest memory at least the rules' `related_from`
close, a pair that both read as English (as the rules, it does not trust a similarity in a
language the model does not read) and in which the rules read no difference (`eligible`);
nothing without vectors (its similarities are the local model's: another embedding model's
policy leaves it off), and never a claim that gives a quantity another number than its
memory does ("about 8 hours" / "a 3-hour session": `another_quantity`). benchmarks/README.md,
section 10, has its cross-validated and held-out numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from emergent_memory.memory import dedup, trees
from emergent_memory.memory.dedup import reads_english
from emergent_memory.memory.dedup_learned import negations, numbers, words
from emergent_memory.memory.trees import TreeEnsemble
from emergent_memory.memory.verify_rules import (
    Answer,
    Judged,
    PairFeatures,
    VerifyPolicy,
    read_pair,
)

__all__ = [
    "FEATURES",
    "confirm",
    "eligible",
    "features",
    "learned",
    "load",
]

# what the model reads, in this order (benchmarks/verify_learned.py fits on the same function)
FEATURES = (
    "rules_new",  # 1 when the rules found no candidate related, 0 when they answered related
    "similarity",  # the closest candidate's
    "second_similarity",  # the next candidate's (0 when there is none)
    "lead",  # the difference of the two
    "claim_words_held",  # share of the claim's words the closest memory has
    "memory_words_held",  # share of the memory's words the claim has
    "claim_words_not_held",  # how many of the claim's words the memory lacks
    "claim_numbers_not_held",
    "numbers_shared",
    "claim_numbers",
    "claim_negations",
    "memory_negations",
    "claim_words",
    "memory_words",
)


def features(
    claim: str, memory: str, similarities: Sequence[float], rules_new: bool
) -> list[float]:
    """The model's input (FEATURES) for a claim and its closest memory; `similarities` are
    every candidate's, the closest first."""
    claim_words, memory_words = words(claim), words(memory)
    held = claim_words & memory_words
    claim_numbers, memory_numbers = numbers(claim), numbers(memory)
    first = similarities[0] if similarities else 0.0
    second = similarities[1] if len(similarities) > 1 else 0.0
    return [
        float(rules_new),
        first,
        second,
        first - second,
        len(held) / max(1, len(claim_words)),
        len(held) / max(1, len(memory_words)),
        float(len(claim_words - memory_words)),
        float(len(claim_numbers - memory_numbers)),
        float(len(claim_numbers & memory_numbers)),
        float(len(claim_numbers)),
        float(negations(claim)),
        float(negations(memory)),
        float(len(claim_words)),
        float(len(memory_words)),
    ]


# The units whose number a claim may give otherwise than its memory without the rules reading
# it ("lasted about 8 hours" / "after a 3-hour debugging session"): the durations, sizes,
# masses, lengths and volumes the save rule converts (dedup.unit_size), and besides them
# shares, counts of times, pounds, miles and temperatures, each to one name.
OTHER_UNITS = {
    **dict.fromkeys(("%", "percent", "per cent"), "%"),
    **dict.fromkeys(("times", "x"), "times"),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), "lb"),
    **dict.fromkeys(("mile", "miles"), "mile"),
    **{"°c": "°c", "°f": "°f"},
}
# a number (as dedup_learned.numbers reads it), the word or sign after it (not inside a word:
# "v2", "M3"), and what it is per, if anything ("10 kg per charity", "3 times a week", "20 kg/h")
_QUANTITY = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*-?\s*(%|per cent|°\s?[cf]|[a-z]+)(?![a-z])"
    r"(?:(?:\s*/\s*|\s+(?:per|an?)\s+)([a-z]+))?",
    re.IGNORECASE,
)


def quantities(text: str) -> dict[str, set[str]]:
    """The numbers the text gives of each unit (_unit); a unit per something is a unit of
    its own ("kg/charity", "times/week", "kg/h"), so a rate is compared only with the same
    rate."""
    found: dict[str, set[str]] = {}
    for number, unit, per in _QUANTITY.findall(text):
        name = _unit(unit)
        if name is None:
            continue
        if per:
            name += "/" + (_unit(per) or per.lower().removesuffix("s"))
        found.setdefault(name, set()).add(number)
    return found


def _unit(word: str) -> str | None:
    return dedup.unit_size(word) or OTHER_UNITS.get(word.lower().replace(" ", ""))


def another_quantity(claim: str, memory: str) -> bool:
    """Whether the claim gives a unit a number the memory does not have, while the memory
    gives that unit a number the claim does not have: another value of a quantity ("about 8
    hours" / "a 3-hour session", "7%" / "0.7%", "up to 5 times" / "at most 3 times")."""
    of_claim, of_memory = quantities(claim), quantities(memory)
    claim_numbers, memory_numbers = numbers(claim), numbers(memory)
    return any(
        unit in of_memory and given - memory_numbers and of_memory[unit] - claim_numbers
        for unit, given in of_claim.items()
    )


def eligible(
    claim: str, memory: str, similarity: float, floor: float, pair: PairFeatures | None = None
) -> bool:
    """Whether the model may read a claim against its closest memory: at least `floor` close
    (the rules' related_from: no farther memory states the claim), both read as English
    (dedup.reads_english, as the rules ask before a similarity alone confirms), and no
    difference the rules read between them (another value, a negation, an opposite word, a
    clause that differs), even one too far for them to call a conflict, nor another number of
    a unit both give (`another_quantity`); `pair` is the two read by read_pair(memory, claim),
    when the caller has read them already."""
    if similarity < floor or not (reads_english(claim) and reads_english(memory)):
        return False
    if another_quantity(claim, memory):
        return False
    pair = pair or read_pair(memory, claim)
    return not (
        pair.difference
        or pair.part_difference
        or pair.clause_difference
        or pair.opposite_word
        or pair.claim_denies
    )


@cache
def load(name: str) -> TreeEnsemble:
    """The fitted model in the file `name` beside this module (read once per process)."""
    return trees.read(name, FEATURES)


def confirm(
    model: TreeEnsemble,
    claim: str,
    pairs: Sequence[tuple[str, float | None]],
    answer: Answer,
    floor: float,
    read: Sequence[PairFeatures] | None = None,
) -> Answer:
    """The rules' answer, or `confirmed` by the closest candidate when the rules found it only
    related (or nothing), the model may read the pair (`eligible`, `floor` being the rules'
    related_from) and its probability reaches its threshold. `read`: every pair as
    read_pair read it, when the caller has them (verify has: none is read twice)."""
    if answer.verdict not in ("related", "new") or not pairs:
        return answer
    if any(similarity is None for _, similarity in pairs):
        return answer  # words only: the model read similarities
    ranked = sorted(range(len(pairs)), key=lambda i: -(pairs[i][1] or 0.0))
    similarities = [pairs[i][1] or 0.0 for i in ranked]
    best = ranked[0]
    pair = None if read is None else read[best]
    if not eligible(claim, pairs[best][0], similarities[0], floor, pair):
        return answer
    row = features(claim, pairs[best][0], similarities, answer.verdict == "new")
    probability = model.probability(row)
    if probability < model.threshold:
        return answer
    why = (
        "the closest memory states the claim in other words (learned reading, probability "
        f"{probability:.2f}, similarity {similarities[0]:.2f})"
    )
    judged = [j for j in answer.judged if j.index != best]
    judged.append(Judged(best, similarities[0], "confirms", why))
    return Answer("confirmed", why, judged)


def learned(
    policy: VerifyPolicy,
    claim: str,
    pairs: Sequence[tuple[str, float | None]],
    answer: Answer,
    read: Sequence[PairFeatures] | None = None,
) -> Answer:
    """The rules' answer, confirmed by the policy's learned model where it reads the claim
    stated in other words; the rules' alone when the policy has none."""
    if not policy.learned_confirmation:
        return answer
    model = load(policy.learned_confirmation)
    return confirm(model, claim, pairs, answer, policy.related_from, read)
