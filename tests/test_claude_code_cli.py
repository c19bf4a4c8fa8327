"""The pinned Claude Code CLI, run headless against the fake Messages API, still does what the
fixtures in tests/data/claude_code/ recorded: the hooks' input fields, the transcript's lines,
where a hook's additional context goes. The hooks' own unit tests rely on those fixtures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests import claude_code
from tests.data.claude_code.record import (
    PREFERENCE,
    PROMPT_CONTEXT,
    START_CONTEXT,
    Recorder,
)
from tests.fake_anthropic import FakeAnthropic, text

FIXTURES = Path(__file__).parent / "data" / "claude_code"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def shape(line: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """What a transcript line is: its type, its attachment's type, its message's role."""
    return line["type"], line.get("attachment", {}).get("type"), line.get("message", {}).get("role")


def test_the_pinned_version_is_installed() -> None:
    claude = claude_code.claude_executable()
    said = subprocess.run(
        [str(claude), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert said.stdout.strip() == f"{claude_code.VERSION} (Claude Code)"


def test_a_session_matches_the_recorded_fixtures(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    contexts = {"SessionStart": START_CONTEXT, "UserPromptSubmit": PROMPT_CONTEXT}
    with FakeAnthropic(default=text("Understood: pnpm, never npm, in this repo.")) as fake:
        session = recorder.session(fake, PREFERENCE, contexts=contexts)
        [request] = fake.message_requests

    assert session.result == "Understood: pnpm, never npm, in this repo."
    calls = recorder.hook_calls()
    recorded = fixture("preference.hooks.json")
    assert [(c["event"], sorted(c["input"])) for c in calls] == [
        (c["event"], sorted(c["input"])) for c in recorded
    ]
    start, prompt, stop, end = (call["input"] for call in calls)
    assert {c["session_id"] for c in (start, prompt, stop, end)} == {session.session_id}
    assert start["source"] == "startup"
    assert prompt["prompt"] == PREFERENCE
    assert stop["last_assistant_message"] == session.result
    assert end["reason"] == "other"
    assert Path(start["transcript_path"]) == session.transcript_path
    assert start["cwd"] == str(recorder.project.resolve())

    lines = session.transcript()
    assert [shape(line) for line in lines] == [
        shape(json.loads(line)) for line in (FIXTURES / "preference.jsonl").read_text().splitlines()
    ]
    injected = [
        line["attachment"]
        for line in lines
        if line.get("attachment", {}).get("type") == "hook_additional_context"
    ]
    assert [(a["hookEvent"], a["content"]) for a in injected] == [
        ("SessionStart", [START_CONTEXT]),
        ("UserPromptSubmit", [PROMPT_CONTEXT]),
    ]

    [system] = [m["content"] for m in request.json["messages"] if m["role"] == "system"]
    assert f"SessionStart hook additional context: {START_CONTEXT}" in system
    assert system.endswith(f"UserPromptSubmit hook additional context: {PROMPT_CONTEXT}")
