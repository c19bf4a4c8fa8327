"""Records the fixtures in this folder from the real Claude Code CLI (the version pinned in
tests/claude_code.py): every hook's stdin JSON, the transcript JSONL, and the request the
Messages API received, for a few headless sessions run against tests/fake_anthropic.py.

    .venv/bin/python -m tests.data.claude_code.record

The hooks it installs are this same file (`record.py hook EVENT`, standard library only): each
writes the JSON it got on stdin, the names of the environment variables it got and how many
lines the transcript had at that moment, and answers SessionStart and UserPromptSubmit with the
additional context the scenario sets. Paths, the device id and the commands are sanitized (see
README.md); nothing else is changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONTEXT_PREFIX = "RECORD_CONTEXT_"  # + event name: the additionalContext the hook answers
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")

# What the fixtures say instead of this machine's paths.
FIXTURE_HOME = "/home/dev"
FIXTURE_PROJECT = "/home/dev/src/shop"
FIXTURE_PYTHON = "python3"
FIXTURE_HOOK = "tests/data/claude_code/record.py"
ZERO_DEVICE = "0" * 64


# -- the hook ------------------------------------------------------------------------------


def hook(event: str) -> None:
    """Write what Claude Code handed this hook to $RECORD_DIR; answer with the scenario's
    context, if any."""
    received = sys.stdin.read()
    out = Path(os.environ["RECORD_DIR"])
    try:
        data = json.loads(received)
        transcript = Path(data["transcript_path"])
        lines: int | None = len(transcript.read_text().splitlines())
    except FileNotFoundError:
        lines = None  # not written yet
    entry = {
        "event": event,
        "input": json.loads(received),
        "transcript_lines_at_hook": lines,
        "environment": sorted(os.environ),
        "claude_environment": {k: v for k, v in os.environ.items() if k.startswith("CLAUDE")},
        "time": time.time(),
    }
    name = f"{time.time_ns()}-{event}.json"
    (out / name).write_text(json.dumps(entry))
    context = os.environ.get(CONTEXT_PREFIX + event)
    if context:
        answer = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
        print(json.dumps(answer))


# -- the sessions ------------------------------------------------------------------------------


PREFERENCE = "I always want pnpm, never npm, in this repo"
START_CONTEXT = (
    "<emergent-memory>\n- [m-1] (preference) The user writes tests first.\n</emergent-memory>"
)
PROMPT_CONTEXT = (
    "<emergent-memory>\n- [m-2] (convention) Packages live in packages/.\n</emergent-memory>"
)
LARGE_CONTEXT = (
    "<emergent-memory>\n" + "- [m-3] (fact) a long memory text.\n" * 300 + "</emergent-memory>"
)


class Recorder:
    """Runs the scenarios in one temporary HOME (with the project inside it) and writes the
    sanitized fixtures."""

    def __init__(self, base: Path) -> None:
        from tests import claude_code

        self.claude = claude_code.claude_executable()
        self.home = base / "home"
        self.project = self.home / "src" / "shop"
        self.dumps = base / "dumps"
        for folder in (self.project / ".claude", self.dumps):
            folder.mkdir(parents=True)
        command = f"{sys.executable} {Path(__file__).resolve()} hook"
        hooks = {
            event: [{"hooks": [{"type": "command", "command": f"{command} {event}"}]}]
            for event in EVENTS
        }
        settings = self.project / ".claude" / "settings.json"
        settings.write_text(json.dumps({"hooks": hooks}, indent=2))
        home = str(self.home.resolve())
        self.replacements = [
            (sys.executable, FIXTURE_PYTHON),
            (str(Path(__file__).resolve()), FIXTURE_HOOK),
            (str(self.project.resolve()), FIXTURE_PROJECT),
            (home, FIXTURE_HOME),
            (
                claude_code.project_folder(Path(home)),
                claude_code.project_folder(Path(FIXTURE_HOME)),
            ),
        ]

    def session(self, fake: Any, prompt: str, *, resume: str | None = None, **options: Any) -> Any:
        from tests import claude_code

        contexts = options.pop("contexts", {})
        env = {"RECORD_DIR": str(self.dumps)}
        env |= {CONTEXT_PREFIX + event: text for event, text in contexts.items()}
        done = claude_code.run_session(
            self.claude,
            prompt,
            home=self.home,
            project=self.project,
            base_url=fake.url,
            resume=resume,
            env=env,
            **options,
        )
        if done.returncode != 0:
            raise RuntimeError(f"claude -p failed: {done.stdout}\n{done.stderr}")
        return done

    def hook_calls(self) -> list[dict[str, Any]]:
        """What the hooks recorded since the last call, in order (then forgotten)."""
        calls = []
        for dump in sorted(self.dumps.iterdir()):
            calls.append(json.loads(dump.read_text()))
            dump.unlink()
        return calls

    def save(self, name: str, session: Any, fake: Any) -> None:
        """The scenario's hooks, transcript and last request, sanitized, into this folder."""
        hooks = self.hook_calls()
        started = hooks[0]["time"]
        for entry in hooks:
            entry["seconds_after_first_hook"] = round(entry.pop("time") - started, 2)
        write(HERE / f"{name}.hooks.json", self.clean(json.dumps(hooks, indent=2)))
        write(HERE / f"{name}.jsonl", self.clean(session.transcript_path.read_text()))
        [*_, last] = fake.message_requests
        body = dict(last.json)
        body["system"] = [block["text"][:120] for block in body["system"]]
        body["tools"] = [tool["name"] for tool in body["tools"]]
        request = {"path": last.path, "query": last.query, "headers": last.headers, "body": body}
        headers = request["headers"]
        for secret in ("x-api-key", "authorization", "host"):
            headers.pop(secret, None)
        write(HERE / f"{name}.request.json", self.clean(json.dumps(request, indent=2)))

    def clean(self, text: str) -> str:
        for mine, theirs in self.replacements:
            text = text.replace(mine, theirs)
            text = text.replace(json.dumps(mine)[1:-1], json.dumps(theirs)[1:-1])
        text = re.sub(r'(device_id\\*":\\*")[0-9a-f]{64}', rf"\g<1>{ZERO_DEVICE}", text)
        return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:8999", text)


def write(path: Path, text: str) -> None:
    path.write_text(text if text.endswith("\n") else text + "\n")
    print(f"wrote {path.relative_to(HERE.parents[2])}")


def record() -> None:
    from tests.fake_anthropic import FakeAnthropic, text, tool_use

    base = Path(tempfile.mkdtemp(prefix="claude-code-record-"))
    try:
        recorder = Recorder(base)
        contexts = {"SessionStart": START_CONTEXT, "UserPromptSubmit": PROMPT_CONTEXT}

        # 1. A preference stated; both injection points answer with context.
        with FakeAnthropic(default=text("Understood: pnpm, never npm, in this repo.")) as fake:
            first = recorder.session(fake, PREFERENCE, contexts=contexts)
            recorder.save("preference", first, fake)

            # 2. The same session resumed three times, compacted with /compact, resumed again.
            for prompt in ("Add a lint script", "Run the tests", "Now the build"):
                recorder.session(fake, prompt, resume=first.session_id, contexts=contexts)
            recorder.session(fake, "/compact", resume=first.session_id, contexts=contexts)
            last = recorder.session(
                fake, "Which package manager?", resume=first.session_id, contexts=contexts
            )
            recorder.save("resume_compact", last, fake)

        # 3. A tool call (Bash, allowed) and its result, then the answer.
        with FakeAnthropic(default=text("It printed hello.")) as fake:
            fake.enqueue(tool_use("Bash", {"command": "echo hello", "description": "Say hello"}))
            tooled = recorder.session(
                fake, "Run echo hello please", contexts=contexts, args=("--allowedTools", "Bash")
            )
            recorder.save("tool_call", tooled, fake)

        # 4. A UserPromptSubmit context over 10,000 characters.
        with FakeAnthropic(default=text("OK.")) as fake:
            large = recorder.session(
                fake, "What do you know?", contexts={"UserPromptSubmit": LARGE_CONTEXT}
            )
            recorder.save("large_context", large, fake)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:
        hook(sys.argv[2])
    else:
        record()
