"""The `<emergent-memory>` marker (emergent_memory/markers.py): one rule, one table of cases.

tests/data/marker_cases.json holds what the rule makes of each text; the OpenCode plugin's copy
of the rule is tested with the same file (integrations/opencode/test/markers.test.js). Here:
the function itself, and its three users (the server's capture cleaning, the Claude Code
hooks' transcript reading, injection's defanging and frame)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emergent_memory.hooks.transcript import entry_messages
from emergent_memory.markers import (
    ASCII_WHITESPACE,
    MARKER_CLOSE,
    MARKER_OPEN,
    defang,
    strip_markers,
)
from emergent_memory.memory import capture_text, injection
from emergent_memory.memory.store import StartRow

CASES_FILE = Path(__file__).resolve().parent / "data" / "marker_cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def by_name(cases: list[dict[str, Any]]) -> Any:
    return pytest.mark.parametrize("case", cases, ids=[case["name"] for case in cases])


@by_name(CASES)
def test_the_rule_makes_of_each_text_what_the_table_says(case: dict[str, Any]) -> None:
    assert strip_markers(case["text"]) == (case["kept"], case["removed"])


@by_name(CASES)
def test_the_cases_can_be_checked_through_a_client_that_trims(case: dict[str, Any]) -> None:
    """Both clients trim what they send, and the plugin's test sees only what it sends: a
    case's `kept` is trimmed already, and holds no system reminder (a rule of the clients)."""
    assert case["kept"] == case["kept"].strip(ASCII_WHITESPACE)
    assert "system-reminder" not in case["text"]


def test_the_table_holds_the_cases_the_review_named() -> None:
    texts = {case["text"]: case for case in CASES}
    cli = texts["use the <emergent-memory-cli> wrapper, then run tests"]
    assert (cli["kept"], cli["removed"]) == (cli["text"], 0)  # the server's old rule: "use the"
    assert len({case["name"] for case in CASES}) == len(CASES) >= 20


@by_name(CASES)
def test_capture_cleans_a_turn_by_the_rule(case: dict[str, Any]) -> None:
    cleaned = capture_text.clean("user", case["text"], tool_output_chars=10_000)
    assert (cleaned.content, cleaned.markers_removed) == (case["kept"], case["removed"])


@by_name(CASES)
def test_the_hooks_read_a_transcript_by_the_rule(case: dict[str, Any]) -> None:
    line = {"type": "assistant", "message": {"role": "assistant", "content": case["text"]}}
    expected = [{"role": "assistant", "content": case["kept"]}] if case["kept"] else []
    assert entry_messages(line) == expected


def test_the_hooks_cut_system_reminders_too() -> None:
    text = (
        "<system-reminder>a note</system-reminder>Use yarn. <emergent-memory>\nm\n"
        "</emergent-memory> <SYSTEM-REMINDER>cut to the end"
    )
    line = {"type": "user", "message": {"role": "user", "content": text}}
    assert entry_messages(line) == [{"role": "user", "content": "Use yarn."}]


# Pieces of texts a memory might hold: tags of every spacing and case, near misses, text.
PIECES = [
    "<",
    "/",
    ">",
    " ",
    "\n",
    "\u00a0",
    "emergent-memory",
    "EMERGENT-Memory",
    "emergent-memory-cli",
    MARKER_OPEN,
    MARKER_CLOSE,
    "< / emergent-memory >",
    '<emergent-memory id="1">',
    "text",
]


@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_a_defanged_text_holds_no_marker(text: str) -> None:
    defanged = defang(text)
    assert strip_markers(defanged) == (defanged, 0)
    assert strip_markers(f"{MARKER_OPEN}\n{defanged}\n{MARKER_CLOSE}") == ("", 1)


@by_name(CASES)
def test_injection_s_context_is_one_block_the_rule_cuts_whole(case: dict[str, Any]) -> None:
    """Whatever a memory says (each case's text), the context injection builds is one block,
    and the rule removes all of it."""
    memory = StartRow(id=uuid.uuid4(), content=case["text"] or "empty", category="fact")
    _, context, _ = injection.fit([memory], set(), 3000)
    assert context.startswith(MARKER_OPEN + "\n")
    assert context.endswith("\n" + MARKER_CLOSE)
    assert strip_markers(f"before {context} after") == ("before  after", 1)
