"""Capture's provenance check (memory/provenance.py, through extraction.not_users_word): a
proposal is the user's word only when the user turns it cites hold its words. Cases of each
class the check must tell apart, beyond the labelled and held-out sets of
benchmarks/data/provenance_*.json (whose measurement is benchmarks/provenance.py, smoke-run by
tests/test_benchmarks.py)."""

from __future__ import annotations

import pytest

from emergent_memory.memory.capture_text import Turn
from emergent_memory.memory.extraction import not_users_word
from emergent_memory.memory.provenance import assents, backing


def turns(*said: tuple[str, str]) -> list[Turn]:
    return [Turn(index, role, text) for index, (role, text) in enumerate(said)]  # type: ignore[arg-type]


READ_PAGE = turns(
    ("user", "Please read the vendor docs on schema changes and summarise them."),
    ("tool", "Vendor notes: the user now edits the schema by hand in production."),
    ("assistant", "The notes describe manual schema edits in production."),
)


@pytest.mark.parametrize(
    ("content", "conversation", "cited", "by"),
    [
        # the page's words, cited to the user's request to read it
        ("The user edits the schema by hand in production", READ_PAGE, {0}, "tool"),
        # one detail swapped in from a file: the user said pnpm, the lockfile says npm
        (
            "The project uses npm for installs",
            turns(
                ("user", "we use pnpm here, install the deps"),
                ("tool", "package-lock.json found; npm ci recommended"),
            ),
            {0},
            "tool",
        ),
        # a number from the file, every other word the user's
        (
            "The gateway timeout is 120 seconds and must not change",
            turns(
                ("user", "the gateway timeout is 60 seconds, do not change it"),
                ("tool", "proxy_read_timeout 120s;"),
            ),
            {0},
            "tool",
        ),
        # what the agent assumed, acknowledged with thanks
        (
            "The user is vegetarian",
            turns(
                ("user", "dinner ideas for tonight?"),
                ("assistant", "Since you're vegetarian, how about a lentil curry?"),
                ("user", "haha ok thanks"),
            ),
            {0, 2},
            "assistant",
        ),
        # a question the user said no to is not what the user wants
        (
            "The user wants the 6am flight to Lisbon",
            turns(
                ("assistant", "Shall I book the 6am flight to Lisbon?"),
                ("user", "god no, something after lunch"),
            ),
            {0, 1},
            "assistant",
        ),
    ],
)
def test_words_from_elsewhere_are_not_the_users(
    content: str, conversation: list[Turn], cited: set[int], by: str
) -> None:
    assert backing(content, conversation, cited) == by
    assert not_users_word(content, conversation, cited) is not None


@pytest.mark.parametrize(
    ("content", "conversation", "cited"),
    [
        # a paraphrase that shares few words
        ("The user prefers concise answers", turns(("user", "keep it short please")), {0}),
        # identifiers the user typed, echoed by a tool the proposal also cites
        (
            "Deploys go to the eu-west-3 region from the release/2027 branch",
            turns(
                ("user", "deploy from release/2027 to eu-west-3 from now on"),
                ("tool", "$ git checkout release/2027\nregion: eu-west-3"),
            ),
            {0, 1},
        ),
        # a number written two ways
        (
            "The user's budget for the trip is €3,500",
            turns(("user", "my budget is 3.5k€ for the whole trip"), ("assistant", "Noted.")),
            {0},
        ),
        # accepting what the assistant asked
        (
            "Squash merges on this repository",
            turns(
                ("assistant", "Should I squash merges on this repository from now on?"),
                ("user", "yesss"),
            ),
            {0, 1},
        ),
        # correcting what the assistant said: the corrected words come from it
        (
            "The standup is on Tuesday at 10, not Monday at 9",
            turns(
                ("assistant", "Your standup with Priya is on Monday at 9."),
                ("user", "no, it moved to tuesday 10"),
            ),
            {1},
        ),
        # a translation into English: nothing matches, nothing is foreign
        (
            "The user prefers dark mode",
            turns(("user", "我更喜欢深色模式"), ("assistant", "好的。")),
            {0},
        ),
        # the same language without spaces, with a tool turn in English
        (
            "ユーザーは深夜のデプロイを禁止している",
            turns(
                ("user", "深夜のデプロイは禁止です"),
                ("tool", "deploy.sh: runs at any hour"),
            ),
            {0},
        ),
    ],
)
def test_the_users_own_words_restated_are_the_users(
    content: str, conversation: list[Turn], cited: set[int]
) -> None:
    assert not_users_word(content, conversation, cited) is None


def test_a_proposal_citing_no_user_turn_is_never_the_users_word() -> None:
    assert not_users_word("The CI runs on GitHub Actions", READ_PAGE, {1}) == "a tool result"
    assert not_users_word("The notes describe schema edits", READ_PAGE, {2}) == "no user turn"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes please", True),
        ("Yesss!", True),
        ("ok", True),
        ("ja, gerne", True),
        ("好的", True),
        ("نعم", True),
        ("go on", False),
        ("no", False),
        ("yes, but first explain to me in detail why the migration failed last night in CI", False),
    ],
)
def test_what_counts_as_assent(text: str, expected: bool) -> None:
    assert assents(text) is expected
