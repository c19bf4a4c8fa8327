"""verify_memory's learned confirmation (memory/verify_learned.py): what the model reads, how
its trees are read, when it may change the rules' answer, and the shipped model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY, VERIFY_POLICIES
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import trees, verify_learned
from emergent_memory.memory.trees import TreeEnsemble
from emergent_memory.memory.verify_learned import (
    FEATURES,
    confirm,
    eligible,
    features,
    learned,
)
from emergent_memory.memory.verify_rules import Answer, Judged, read_pair

POLICY = VERIFY_POLICIES[LOCAL_MODEL_NAME]

# one tree: "similarity" (feature 1) above 0.8 gives log-odds +3 (p 0.95), else -3 (p 0.05)
STUMP = TreeEnsemble(
    baseline=0.0,
    trees=(((1, 0.8, 1, 2, 0.0), (-1, 0.0, 0, 0, -3.0), (-1, 0.0, 0, 0, 3.0)),),
    threshold=0.9,
)
PAIRS: list[tuple[str, float | None]] = [
    ("Sprints last two weeks and end on a Friday.", 0.71),
    ("The team ships every second Friday.", 0.86),
]
CLAIM = "Each sprint is fourteen days long."


def related(*indices: int) -> Answer:
    return Answer("related", "the same subject", [Judged(i, 0.5, "related", "r") for i in indices])


def test_the_model_reads_words_numbers_and_negations_of_the_closest_memory() -> None:
    row = features(
        "Backups do not run at 3 and 4 o'clock.",
        "Backups run at 3 every night.",
        [0.9, 0.6],
        rules_new=False,
    )
    named = dict(zip(FEATURES, row, strict=True))
    assert named["rules_new"] == 0.0
    assert named["similarity"] == 0.9
    assert named["second_similarity"] == 0.6
    assert named["lead"] == pytest.approx(0.3)
    # claim words: backups do not run at 3 and 4 o clock (10); held: backups run at 3 (4)
    assert named["claim_words"] == 10
    assert named["claim_words_held"] == pytest.approx(4 / 10)
    assert named["memory_words"] == 6  # backups run at 3 every night
    assert named["memory_words_held"] == pytest.approx(4 / 6)
    assert named["claim_words_not_held"] == 6
    assert (named["claim_numbers"], named["numbers_shared"], named["claim_numbers_not_held"]) == (
        2,
        1,
        1,
    )
    assert (named["claim_negations"], named["memory_negations"]) == (1, 0)
    # one candidate: no second similarity, the lead is the whole similarity
    alone = dict(zip(FEATURES, features("a", "b", [0.4], rules_new=True), strict=True))
    assert (alone["rules_new"], alone["second_similarity"], alone["lead"]) == (1.0, 0.0, 0.4)


def test_the_trees_are_read_as_log_odds() -> None:
    high = [0.0, 0.85, *[0.0] * (len(FEATURES) - 2)]
    low = [0.0, 0.80, *[0.0] * (len(FEATURES) - 2)]  # a threshold goes left when equal
    assert STUMP.probability(high) == pytest.approx(0.9526, abs=1e-4)
    assert STUMP.probability(low) == pytest.approx(0.0474, abs=1e-4)


def test_a_related_claim_is_confirmed_by_its_closest_memory_from_the_threshold() -> None:
    answer = confirm(STUMP, CLAIM, PAIRS, related(0, 1), 0.53)
    assert answer.verdict == "confirmed"
    [confirming] = [j for j in answer.judged if j.relation == "confirms"]
    assert confirming.index == 1  # the closest, not the first given
    assert confirming.similarity == 0.86
    assert "learned reading" in answer.why
    assert "0.95" in answer.why
    assert len(answer.judged) == 2  # the other candidate stays related
    # a claim the rules found nothing for (new) too
    assert confirm(STUMP, CLAIM, PAIRS, Answer("new", "nothing"), 0.53).verdict == "confirmed"
    # under the threshold: the rules' answer, untouched
    far = [(content, 0.5) for content, _ in PAIRS]
    assert confirm(STUMP, CLAIM, far, related(0), 0.53) == related(0)
    # however sure the model is, a closest memory under the floor (the rules' related_from)
    # states nothing of the claim
    assert confirm(STUMP, CLAIM, PAIRS, related(0, 1), 0.9) == related(0, 1)


@pytest.mark.parametrize("verdict", ["conflict", "confirmed"])
def test_the_rules_conflict_or_confirmation_is_never_changed(verdict: str) -> None:
    relation = "conflicts" if verdict == "conflict" else "confirms"
    answer = Answer(verdict, "the rules", [Judged(0, 0.71, relation, "r")])  # type: ignore[arg-type]
    assert confirm(STUMP, CLAIM, PAIRS, answer, 0.53) is answer


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # another value, too far for the rules to call a conflict: never confirmed
        ("The laptop has 36 GB of RAM and a 1 TB disk.", "The laptop only has 18 GB of memory."),
        # a negation the claim has and the memory not
        ("Backups run every night at 02:00.", "Backups do not run every night."),
        # the other value of one setting
        ("The user prefers tabs for indentation.", "The user prefers spaces for indentation."),
    ],
)
def test_a_pair_the_rules_read_a_difference_in_is_never_confirmed(memory: str, claim: str) -> None:
    assert not eligible(claim, memory, 0.9, 0.53)
    close = [(memory, 0.9)]
    assert confirm(STUMP, claim, close, related(0), 0.53) == related(0)


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # another number of a unit the memory gives, which the rules do not read as a value
        # of the same subject (set 58's u047 and u037, set 36's q271, set 51's r104)
        ("After a 3-hour debugging session, the team moved the cron to UTC.",
         "The debugging session before the cron moved to UTC lasted about 8 hours."),
        ("About 0.7% of returns hit the docking bug.", "Roughly 7% of returns hit the bug."),
        ("The worker retries a webhook at most 3 times with a 30-second backoff.",
         "The worker retries each webhook up to 5 times."),
        ("Nightly exports keep 14 days of history and take 2 GB.",
         "Nightly exports keep three weeks, about 20 GB."),
        ("Orders are capped at 400 kg per partner charity per week.",
         "Orders are capped at 500 kg per partner charity."),
        ("Chilled vans must stay between 0 and 5 °C.", "Chilled vans must stay under 8 °C."),
        ("The export job runs 3 times a week.", "The export job runs 5 times per week."),
    ],
)  # fmt: skip
def test_another_number_of_a_unit_the_memory_gives_is_never_confirmed(
    memory: str, claim: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert verify_learned.another_quantity(claim, memory)
    # as if the rules read no difference at all: the guard alone keeps the model off
    unread = replace(
        read_pair(memory, claim),
        difference=None,
        part_difference=None,
        clause_difference=None,
        opposite_word=None,
        claim_denies=False,
    )
    assert not eligible(claim, memory, 0.9, 0.53, unread)
    assert confirm(STUMP, claim, [(memory, 0.9)], related(0), 0.53, [unread]) == related(0)
    monkeypatch.setattr(verify_learned, "another_quantity", lambda claim, memory: False)
    assert eligible(claim, memory, 0.9, 0.53, unread)  # without the guard, it would read it
    assert confirm(STUMP, claim, [(memory, 0.9)], related(0), 0.53, [unread]).verdict == (
        "confirmed"
    )


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("The request timeout is 30 seconds.", "Requests time out after 30 s."),  # same number
        ("Cache entries live for 300 seconds.", "Cache entries live for 5 minutes."),  # units
        ("Backfills over 30 days run in weekly chunks.", "Backfills over 30 days: 7-day chunks."),
        ("The API allows 600 requests per minute.", "The API allows 10 requests per second."),
        ("Python 3.12 runs the API.", "The API runs on Python 3.12, upgraded 2 weeks ago."),
        ("The table only goes up to 60 °C.", "The table only reaches 140 °F."),  # other units
        ("The job runs 3 times a month.", "The job runs 5 times a week."),  # another rate
        ("Pages load in 50 ms per page.", "Each request takes 5 ms per request."),
    ],
)  # fmt: skip
def test_the_same_quantity_written_otherwise_may_still_be_read(memory: str, claim: str) -> None:
    assert not verify_learned.another_quantity(claim, memory)


def test_the_pairs_the_caller_read_are_used_not_read_again() -> None:
    # verify passes read_pair's reading of every candidate: a difference it holds keeps the
    # answer, though the texts alone would let the model confirm
    read = [read_pair(content, CLAIM) for content, _ in PAIRS]
    assert confirm(STUMP, CLAIM, PAIRS, related(0, 1), 0.53, read).verdict == "confirmed"
    differing = [read[0], replace(read[1], difference="another value: 2 / 3")]
    assert confirm(STUMP, CLAIM, PAIRS, related(0, 1), 0.53, differing) == related(0, 1)


def test_what_the_model_may_read() -> None:
    memory = "Lena answers support tickets at the end of each day, after the last deploy."
    claim = "Lena handles support tickets at the close of her day, once the last deploy is out."
    assert eligible(claim, memory, 0.84, 0.53)
    assert not eligible(claim, memory, 0.5, 0.53)  # farther than the rules' related floor
    # a text the model does not read (not English), on either side
    german = "Lena beantwortet die Tickets immer am Ende des Tages, nach dem letzten Deploy."
    assert not eligible(german, memory, 0.84, 0.53)
    assert not eligible(claim, "レナは毎日の終わりにサポートチケットに答える。", 0.84, 0.53)


def test_words_only_or_no_candidate_is_left_to_the_rules() -> None:
    words_only: list[tuple[str, float | None]] = [(content, None) for content, _ in PAIRS]
    assert confirm(STUMP, CLAIM, words_only, related(0), 0.53) == related(0)
    assert confirm(STUMP, CLAIM, [], Answer("new", "nothing"), 0.53) == Answer("new", "nothing")


def test_only_the_local_models_policy_has_a_learned_reading() -> None:
    assert POLICY.learned_confirmation == "verify_learned.json"
    assert UNCALIBRATED_VERIFY_POLICY.learned_confirmation == ""
    # another model's policy: the rules' answer whatever the claim
    high = [(content, 0.99) for content, _ in PAIRS]
    assert learned(UNCALIBRATED_VERIFY_POLICY, CLAIM, high, related(0)) == related(0)


def test_the_shipped_model_reads_its_features_and_confirms_only_close_restatements() -> None:
    model = verify_learned.load(POLICY.learned_confirmation)
    data = json.loads(
        Path(verify_learned.__file__).with_name(POLICY.learned_confirmation).read_text()
    )
    assert data["features"] == list(FEATURES)
    assert 0.5 <= model.threshold < 1.0
    assert len(model.trees) == 100
    # a restatement of its only close memory (at the local model's similarity), the rules'
    # related ("about another thing of the same kind")
    memory = "Lena answers support tickets at the end of each day, after the last deploy."
    claim = (
        "Lena tends to handle support tickets at the close of her day, once the final deploy "
        "is out."
    )
    other = "The orders service is written in Go."
    close = [(memory, 0.842), (other, 0.4), (other, 0.3)]
    assert learned(POLICY, claim, close, related(0, 1)).verdict == "confirmed"
    # far from every memory: not confirmed
    far = [(memory, 0.35), (other, 0.30)]
    assert learned(POLICY, "The user is allergic to peanuts.", far, related(0)).verdict == (
        "related"
    )


def test_a_model_fitted_on_other_features_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "trees.py"
    stale.write_text("")
    (tmp_path / "old.json").write_text(
        json.dumps({"features": ["similarity"], "baseline": 0, "threshold": 0.9, "trees": []})
    )
    monkeypatch.setattr(trees, "__file__", str(stale))
    verify_learned.load.cache_clear()
    try:
        with pytest.raises(ValueError, match="other features"):
            verify_learned.load("old.json")
    finally:
        verify_learned.load.cache_clear()


def test_a_policy_without_a_model_answers_by_the_rules() -> None:
    alone = replace(POLICY, learned_confirmation="")
    high = [(content, 0.99) for content, _ in PAIRS]
    assert learned(alone, CLAIM, high, related(0)) == related(0)
