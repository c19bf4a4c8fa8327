"""Save's learned reading (memory/dedup_learned.py): what the model reads, which pairs it may
read, the shipped model on pairs of my own, and a supersession it decides through the
service with the real model (and what the superseded memory then says of it)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest

from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import MemoryService, dedup, dedup_learned, trees
from emergent_memory.memory.dedup import Decision, DedupPolicy, Reason
from emergent_memory.memory.dedup_learned import (
    COMPARED,
    FEATURES,
    LearnedReading,
    eligible,
    features,
)

POLICY = DEDUP_POLICIES[LOCAL_MODEL_NAME]
RULES = replace(POLICY, learned=None)
READING = LearnedReading("dedup_learned.json")
UNDECIDED = Decision("possible_duplicate", "not enough evidence")

# one speaker says the value changed, which the rules do not take from a chat turn alone
SHIFT = ("Oskar: my shift starts at 7", "Oskar: my shift starts at 8 now")


def test_the_model_reads_words_numbers_negations_and_the_rules_comparison() -> None:
    existing, new = "Backups run at 3 every night.", "Backups do not run at 3 and 4 o'clock."
    pair = dedup._compared(existing, new, False)
    named = dict(zip(FEATURES, features(0.8, existing, new, pair), strict=True))
    assert named["similarity"] == 0.8
    # new: backups do not run at 3 and 4 o clock (10); old: backups run at 3 every night (6)
    assert (named["new_words"], named["old_words"]) == (10, 6)
    assert named["new_words_held"] == pytest.approx(4 / 10)
    assert named["old_words_held"] == pytest.approx(4 / 6)
    assert (named["new_words_not_held"], named["old_words_not_held"]) == (6, 2)
    assert (named["new_numbers_not_held"], named["old_numbers_not_held"]) == (1, 0)
    assert named["numbers_shared"] == 1
    assert (named["new_negations"], named["old_negations"]) == (1, 0)
    # every field of the comparison, in order: numbers as they are, flags as 0 or 1
    assert FEATURES[12:] == COMPARED == tuple(sorted(COMPARED))
    assert named["changes"] == pair.changes
    assert named["opposite"] == float(pair.opposite)
    assert named["swapped"] == float(pair.swapped is not None)


@pytest.mark.parametrize(
    ("existing", "new", "reason", "readable"),
    [
        (*SHIFT, "not enough evidence", True),
        # kept for a difference the rules read, not for want of evidence: never read
        (*SHIFT, "different value", False),
        (*SHIFT, "another occasion", False),
        (*SHIFT, "different holder", False),
        # a text the model does not read as English, on either side
        ("Oskar: mein Dienst beginnt um 7", "Oskar: mein Dienst beginnt jetzt um 8", None, False),
        (
            "The user's shift starts at 7.",
            "Le service de l'utilisateur commence à 8 h.",
            None,
            False,
        ),
        # two values in swapped places, a negation of the other
        ("Ana reviews, Ben merges.", "Ben reviews, Ana merges.", None, False),
        ("The API is idempotent.", "The API is not idempotent.", None, False),
        # a negator one text says and the other does not, in other words
        ("Staging has TLS enabled.", "TLS isn't turned on in staging.", None, False),
        ("Uploads are scanned for viruses.", "Nobody scans the uploads for viruses.", None, False),
        # ... unless a word says the value changed
        (
            "Raj: I drink coffee every morning",
            "Raj: I no longer drink coffee, switched to tea",
            None,
            True,
        ),
    ],
)
def test_only_pairs_kept_for_want_of_evidence_in_english_without_swaps_or_negations(
    existing: str, new: str, reason: str | None, readable: bool
) -> None:
    pair = dedup._compared(existing, new, False)
    decision = UNDECIDED if reason is None else Decision("possible_duplicate", cast(Reason, reason))
    assert eligible(existing, new, pair, decision) is readable
    if not readable:  # whatever the similarity, the rules' decision stands
        assert READING.decide(0.99, existing, new, pair, decision) == decision


@pytest.mark.parametrize(
    ("existing", "new", "similarity"),
    [
        (*SHIFT, 0.935),
        ("Oskar: my shift starts at 7", "Oskar: they moved my shift, it starts at 8 now", 0.877),
        (
            "Jun: the gym closes at 10pm on weekdays",
            "Jun: the gym now closes at 9pm on weekdays",
            0.982,
        ),
    ],
)
def test_the_shipped_model_supersedes_a_speakers_stated_change_the_rules_keep(
    existing: str, new: str, similarity: float
) -> None:
    assert RULES.explain(similarity, existing, new) == UNDECIDED
    assert POLICY.explain(similarity, existing, new) == Decision("supersede", "learned reading")


@pytest.mark.parametrize(
    ("existing", "new", "similarity"),
    [
        # the same fact, but the model is not sure enough (p about 0.4, 0.6, 0.2): kept, reported
        ("Sol: the spare key is under the mat", "Sol: spare key's under the doormat", 0.719),
        ("Bea: the book club meets on Thursdays", "Bea: book club is on thursdays", 0.947),
        (
            "The user prefers pnpm over npm",
            "pnpm is the package manager the user reaches for",
            0.678,
        ),
    ],
)
def test_below_its_threshold_the_rules_decision_stands(
    existing: str, new: str, similarity: float
) -> None:
    pair = dedup._compared(existing, new, False)
    probability = READING.probability(similarity, existing, new, pair, UNDECIDED)
    assert probability is not None
    model = dedup_learned.load("dedup_learned.json")
    assert probability < model.threshold_for(dedup_learned.kind(pair))
    assert POLICY.explain(similarity, existing, new) == UNDECIDED


def test_two_texts_under_one_label_need_a_higher_probability() -> None:
    """Two turns under one label share topics more often than facts: their threshold is
    their own, higher than the rest's; a rewording of the rest supersedes at a probability
    that keeps a rewording of one chat speaker."""
    model = dedup_learned.load("dedup_learned.json")
    assert model.threshold_for(dedup_learned.LABELLED) > model.threshold_for(None)
    note = ("The team's standup is at 9:30 every weekday", "Daily standup: 9:30, Monday to Friday")
    turn = ("Grace: our wifi password is tulip2024", "Grace: wifi pw is tulip2024")
    for (existing, new), similarity, kind, verdict in [
        (note, 0.814, None, "supersede"),
        (turn, 0.841, dedup_learned.LABELLED, "possible_duplicate"),
    ]:
        pair = dedup._compared(existing, new, False)
        assert dedup_learned.kind(pair) == kind
        probability = READING.probability(similarity, existing, new, pair, UNDECIDED)
        assert probability is not None
        assert (
            model.threshold_for(None) <= probability < model.threshold_for(dedup_learned.LABELLED)
        )
        assert RULES.explain(similarity, existing, new) == UNDECIDED
        assert POLICY.explain(similarity, existing, new).verdict == verdict


def test_a_difference_the_rules_read_is_never_superseded_by_the_model() -> None:
    # another holder, another occasion: as close as the changes above, kept by the rules
    for existing, new, similarity in [
        (
            "Liam: my daughter starts school in September",
            "Liam: my son starts school in September",
            0.925,
        ),
        ("Liam: I run every morning", "Liam: went for a run this morning", 0.846),
    ]:
        assert POLICY.explain(similarity, existing, new) == RULES.explain(similarity, existing, new)
        assert POLICY.explain(similarity, existing, new).verdict != "supersede"


def test_only_the_local_models_policy_has_it_and_its_file_is_its_features() -> None:
    assert POLICY.learned == READING
    assert DedupPolicy.plain(0.98).learned is None
    shipped = json.loads((Path(dedup_learned.__file__).with_name("dedup_learned.json")).read_text())
    assert shipped["features"] == list(FEATURES)
    assert 0.5 <= shipped["threshold"] < 1


def test_a_model_fitted_on_other_features_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "trees.py").write_text("")
    (tmp_path / "old.json").write_text(
        json.dumps({"features": ["similarity"], "baseline": 0, "threshold": 0.9, "trees": []})
    )
    monkeypatch.setattr(trees, "__file__", str(tmp_path / "trees.py"))
    dedup_learned.load.cache_clear()
    try:
        with pytest.raises(ValueError, match="other features"):
            dedup_learned.load("old.json")
    finally:
        dedup_learned.load.cache_clear()


def test_a_save_the_model_reads_as_the_same_fact_supersedes_and_says_why(
    semantic: MemoryService, principal: Principal
) -> None:
    """Through the service with the real model: a chat speaker's stated change supersedes;
    the superseded memory says the learned reading replaced it, with the similarity."""
    old = semantic.save(principal, SHIFT[0], "fact")
    new = semantic.save(principal, SHIFT[1], "fact")
    assert new["status"] == "updated", new
    assert new["superseded_ids"] == [old["memory"]["id"]]
    [replaced] = semantic.list_memories(principal, status="superseded")["memories"]
    assert replaced["superseded_because"].startswith(
        "the save rule: the same fact in other words (a model fitted on labelled pairs read "
        "them as one) (similarity 0."
    )
    # another speaker's turn of the same shape is another holder's: kept beside it
    other = semantic.save(principal, "Mira: my shift starts at 9 now", "fact")
    assert other["status"] == "created"


def test_a_weaker_source_is_kept_beside_a_stronger_one_whatever_the_model_reads(
    semantic: MemoryService, principal: Principal
) -> None:
    old = semantic.save(principal, SHIFT[0], "fact", source="explicit")
    new = semantic.save(principal, SHIFT[1], "fact", source="inferred")
    assert new["status"] == "created"
    assert [d["id"] for d in new["possible_duplicates"]] == [old["memory"]["id"]]
    assert "kept beside it" in new["possible_duplicates"][0]["kept_because"]
