"""The dedup rule on its own (emergent_memory/memory/dedup.py): pure functions, no database.

The similarities passed in are what all-MiniLM-L6-v2 gives these pairs (most are pairs of
benchmarks/data/dedup_pairs.json); the rule's numbers on the whole labelled set are in
benchmarks/results/dedup.md.
"""

from __future__ import annotations

import pytest

from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory.dedup import (
    DedupPolicy,
    changes_subject,
    content_words,
    keeps_every_word,
    says_it_changed,
    value_words,
)

POLICY = DEDUP_POLICIES[LOCAL_MODEL_NAME]
TABS = "The user prefers tabs for indentation in Python files."
SPACES = "The user prefers spaces for indentation in Python files."


def test_the_calibrated_policy_is_a_band_below_the_threshold() -> None:
    assert POLICY.text_rule_from is not None
    assert POLICY.text_rule_from < POLICY.threshold


def test_a_tabs_to_spaces_correction_supersedes() -> None:
    assert POLICY.decide(0.82, TABS, SPACES) == "supersede"
    # less similar, but saying that it changed
    switched = "The user switched to spaces for indentation in Python files."
    assert POLICY.decide(0.75, TABS, switched) == "supersede"


def test_the_same_similarity_without_a_change_marker_is_left_to_the_agent() -> None:
    assert POLICY.decide(0.75, TABS, SPACES) == "possible_duplicate"


def test_a_fact_about_another_subject_does_not_supersede_even_when_very_similar() -> None:
    api = "The API runs on port 8080 in local development."
    database = "The database runs on port 5432 in local development."
    assert changes_subject(api, database)
    assert POLICY.decide(0.52, api, database) == "distinct"  # its real similarity
    assert POLICY.decide(0.93, api, database) == "possible_duplicate"
    public = "The public API rate limit is 1000 requests per minute per client."
    internal = "The internal API rate limit is 10000 requests per minute per client."
    assert POLICY.decide(0.94, public, internal) == "possible_duplicate"


def test_a_change_marker_does_not_excuse_a_changed_subject() -> None:
    staging = "The staging environment uses Postgres 15 for its main database."
    production = "The production environment uses Postgres 16 for its main database now."
    assert says_it_changed(staging, production)
    assert changes_subject(staging, production)
    assert POLICY.decide(0.81, staging, production) == "possible_duplicate"


def test_words_replaced_by_a_change_marker_keep_the_subject() -> None:
    old = "The API server runs on port 8080 in local development."
    new = "The API server moved to port 9090 in local development."
    assert not changes_subject(old, new)  # "runs on" became "moved to"; only the port changed
    assert POLICY.decide(0.76, old, new) == "supersede"


def test_a_rewording_supersedes() -> None:
    old = "The API service runs on port 8080 in local development."
    new = "Locally, the API service listens on port 8080 during development."
    assert POLICY.decide(0.91, old, new) == "supersede"


def test_a_restatement_that_keeps_every_word_supersedes_in_the_band() -> None:
    old = "The user writes tests before the implementation."
    new = "The user always writes tests before the implementation, even for small fixes."
    assert keeps_every_word(old, new)
    assert POLICY.decide(0.78, old, new) == "supersede"


def test_below_the_band_nothing_is_suggested() -> None:
    assert POLICY.decide(0.69, TABS, "The user switched to spaces in Python files.") == "distinct"


def test_a_plain_policy_is_the_threshold_alone() -> None:
    plain = DedupPolicy.plain(0.95)
    assert plain.decide(0.96, "Our API runs on port 8080", "Our database runs on port 5432") == (
        "supersede"
    )
    assert plain.decide(0.94, TABS, "The user now prefers spaces in Python files.") == "distinct"


def test_the_band_cannot_start_above_the_threshold() -> None:
    with pytest.raises(ValueError, match="text_rule_from"):
        DedupPolicy(threshold=0.8, text_rule_from=0.9)


def test_change_markers_are_words_or_phrases_new_to_the_new_text() -> None:
    assert says_it_changed("Renovate auto-merges updates.", "Renovate no longer auto-merges.")
    assert says_it_changed("CI runs on CircleCI.", "CI was migrated to GitHub Actions.")
    assert not says_it_changed("The user prefers longer names.", "The user likes long names.")
    # a marker both texts have says nothing about the change
    assert not says_it_changed("The user now uses zsh.", "The user now uses zsh with oh-my-zsh.")
    assert not says_it_changed("We know the codebase.", "We snow the codebase.")  # whole words


def test_content_words_drop_stopwords_and_stem() -> None:
    assert content_words("The user's deploys are deployed on Fridays") == {
        "deploy",
        "friday",
    }


def test_values_are_numbers_identifiers_names_and_quoted_words() -> None:
    text = 'Error E1042 from orders.created in eu-west-1 is handled by Alice with "retry"'
    assert value_words(text) == {"e1042", "orders.created", "eu-west-1", "alice", "retry"}
    assert value_words("Deploys happen weekly") == frozenset()  # a capital that starts it
    assert value_words("The new_checkout flag is on") == {"new_checkout"}


def test_an_acronym_is_a_subject_not_a_value() -> None:
    assert value_words("The API and the CI run on port 8080") == {"8080"}
