"""The Claude Code plugin (integrations/claude-code/, listed by .claude-plugin/marketplace.json)
with the real, pinned Claude Code CLI, offline: validated, added as a local marketplace,
installed, used by headless sessions against the fake Messages API, uninstalled.

One install gives the MCP tools (in the session's first request) and every hook; the first
session start writes the hooks file by itself (no token copied by hand: hooks/setup.py), and
from then on the memories are injected. Uninstalling takes the tools and the hooks away.
The files the plugin ships are what the code says they are: hooks.json is `hooks install`'s
entries run by the plugin's launcher, and the versions are the package's.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from emergent_memory import __version__
from emergent_memory.hooks.claude_settings import EVENTS, plugin_hooks
from tests import claude_code
from tests.embedders import EmbeddingServer
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text, tool_use
from tests.helpers import (
    COMMAND,
    fake_embedder_env,
    free_port,
    http_server_process,
    run_cli,
    wait_until,
)

REPOSITORY = Path(__file__).resolve().parents[1]
PLUGIN = REPOSITORY / "integrations" / "claude-code"
NAME = "emergent-memory"  # the plugin's and the marketplace's
INSTALLED = f"{NAME}@{NAME}"
# Claude Code names a plugin's MCP tools mcp__plugin_<plugin>_<server>__<tool>
PLUGIN_TOOLS = {
    f"mcp__plugin_{NAME}_{NAME}__{tool}"
    for tool in ("save_memory", "recall_memories", "manage_memory", "verify_memory")
}
REMEMBERED = "The user wants pnpm, never npm, in every repository"
PROMPT = "Which package manager should I use for this change?"
# what the model writes into Claude Code's own auto memory in the second session
NOTE = "The user indents Python with tabs, never spaces"
NOTE_FILE = (
    "---\nname: indentation\ndescription: how the user indents\nmetadata:\n  type: user\n---\n"
    f"{NOTE}\n"
)


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def test_the_plugin_files_say_what_the_code_does() -> None:
    """hooks.json holds `hooks install`'s entry for every event, run by the launcher; the
    plugin's version is the package's, as the launcher's uvx fallback pins it."""
    assert load(PLUGIN / "hooks" / "hooks.json") == plugin_hooks()
    assert set(plugin_hooks()["hooks"]) == set(EVENTS)
    assert load(PLUGIN / ".claude-plugin" / "plugin.json")["version"] == __version__
    launcher = PLUGIN / "scripts" / "emergent-memory"
    assert f"VERSION={__version__}\n" in launcher.read_text()
    assert launcher.stat().st_mode & stat.S_IXUSR
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {
        NAME: {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/emergent-memory", "args": ["serve"]}
    }
    [listed] = load(REPOSITORY / ".claude-plugin" / "marketplace.json")["plugins"]
    assert (REPOSITORY / listed["source"]).resolve() == PLUGIN


def test_the_launcher_says_what_to_install_when_nothing_is_there(tmp_path: Path) -> None:
    """With no emergent-memory to run (no clone's .venv, none on PATH, no uvx), the launcher
    tells the session how to install it and a hook still exits 0; `serve` fails."""
    copy = tmp_path / "claude-code" / "scripts"
    copy.mkdir(parents=True)
    (copy / "emergent-memory").write_bytes((PLUGIN / "scripts" / "emergent-memory").read_bytes())
    (copy / "emergent-memory").chmod(0o755)
    # PATH: the launcher itself (skipped) and the two tools it uses, so that no uvx or
    # emergent-memory of this machine is found
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("dirname", "basename"):
        found = shutil.which(tool)
        assert found is not None
        (tools / tool).symlink_to(found)
    env = {"PATH": f"{copy}:{tools}", "HOME": str(tmp_path)}
    start = subprocess.run(
        [str(copy / "emergent-memory"), "hook", "SessionStart"],
        env=env,
        input="{}",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert start.returncode == 0
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "uv tool install emergent-memory" in context
    assert "emergent-memory is not installed" in start.stderr
    serve = subprocess.run(
        [str(copy / "emergent-memory"), "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert serve.returncode == 1
    assert serve.stdout == ""


def test_the_launcher_runs_the_configured_executable_and_a_hook_never_fails(
    tmp_path: Path,
) -> None:
    """EMERGENT_MEMORY_BIN wins, with the arguments as given; a hook exits 0 even when the
    program fails (and SessionStart says so in the session), while `serve` passes the
    program's exit status on."""
    echo = tmp_path / "echo-args"
    echo.write_text('#!/bin/sh\necho "$@"\n')
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 3\n")
    for script in (echo, failing):
        script.chmod(0o755)
    launcher = str(PLUGIN / "scripts" / "emergent-memory")

    def run(program: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [launcher, *args],
            env={"PATH": "/usr/bin:/bin", "EMERGENT_MEMORY_BIN": str(program)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    assert run(echo, "serve").stdout == "serve\n"
    assert run(echo, "hook", "Stop").stdout == "hook Stop\n"
    start = run(failing, "hook", "SessionStart")
    assert start.returncode == 0
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "could not run the hook (exit status 3)" in context
    quiet = run(failing, "hook", "UserPromptSubmit")
    assert (quiet.returncode, quiet.stdout) == (0, "")
    assert run(failing, "serve").returncode == 3


def claude(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(claude_code.claude_executable()), *args],
        env=claude_code.session_env(home, "http://127.0.0.1:9"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def injected(lines: list[dict[str, Any]]) -> list[str]:
    """The hooks' additional context in a transcript."""
    return [
        "".join(line["attachment"]["content"])
        for line in lines
        if line.get("attachment", {}).get("type") == "hook_additional_context"
    ]


def first_with_tools(requests: list[RecordedRequest]) -> RecordedRequest:
    return next(r for r in requests if r.tool_names)


def has_tool_result(request: RecordedRequest) -> bool:
    return any(
        isinstance(turn["content"], list)
        and any(block.get("type") == "tool_result" for block in turn["content"])
        for turn in request.json["messages"]
    )


def test_install_a_session_and_uninstall_with_the_real_claude_code(
    tmp_path: Path, embedding_server: EmbeddingServer
) -> None:
    """On the embedded database, as a user's machine has it: the HTTP server (the hooks'
    server, which the test starts on a port of its own) creates and migrates it, the plugin's
    MCP server and first-time setup share it."""
    home, project, data = tmp_path / "home", tmp_path / "project", tmp_path / "data"
    for folder in (home, project, data):
        folder.mkdir()
    port = free_port()
    settings = fake_embedder_env(
        embedding_server,
        EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
        EMERGENT_MEMORY_DATA_DIR=str(data),
        EMERGENT_MEMORY_HOOK_URL=f"http://127.0.0.1:{port}",
    )
    # the session's environment: ours; the clone's .venv (the launcher's second choice) or,
    # in a checkout without one (a worktree), this venv's `emergent-memory` on PATH (its
    # third); the code under test on PYTHONPATH
    ours = {k: v for k, v in settings.items() if k.startswith("EMERGENT_MEMORY_")}
    ours["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    if not (REPOSITORY / ".venv" / "bin" / "emergent-memory").exists():
        ours["PATH"] = f"{Path(sys.executable).parent}:{ours['PATH']}"
    ours["PYTHONPATH"] = os.environ.get("PYTHONPATH", str(REPOSITORY))
    ours["MCP_CONNECTION_NONBLOCKING"] = "false"  # wait for the MCP server, as a user's does
    ours["MCP_CONNECT_TIMEOUT_MS"] = "60000"

    assert "Validation passed" in claude(home, "plugin", "validate", str(REPOSITORY)).stdout
    assert "Validation passed" in claude(home, "plugin", "validate", str(PLUGIN)).stdout
    claude(home, "plugin", "marketplace", "add", str(REPOSITORY))
    claude(home, "plugin", "install", INSTALLED)
    assert INSTALLED in load(home / ".claude" / "plugins" / "installed_plugins.json")["plugins"]
    hooks_file = home / ".config" / "emergent-memory" / "hooks.json"
    assert not hooks_file.exists()

    def session(fake: FakeAnthropic) -> claude_code.Session:
        done = claude_code.run_session(
            claude_code.claude_executable(),
            PROMPT,
            home=home,
            project=project,
            base_url=fake.url,
            args=("--permission-mode", "acceptEdits"),
            env=ours,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        return done

    with http_server_process(settings, port=port):
        saved = run_cli(
            "save", REMEMBERED, "-c", "preference", "--source", "explicit", "--importance",
            "core", env=settings | {"HOME": str(home)},
        )  # fmt: skip
        assert saved.returncode == 0, saved.stderr
        with FakeAnthropic(default=text("Use pnpm.")) as fake:
            first = session(fake)
            requests = fake.message_requests
        # the tools were there from the first request of the first session
        assert set(first_with_tools(requests).tool_names) >= PLUGIN_TOOLS
        # its start either waited for the setup or said it runs: never silent
        said = injected(first.transcript())
        assert said, "the first session start said nothing"
        assert REMEMBERED in said[0] or "setting itself up for its first session" in said[0]
        # the first session start made the hooks file itself: a token, private to the user
        wait_until(hooks_file.exists, 120, "the plugin's first-time setup wrote the hooks file")
        assert stat.S_IMODE(hooks_file.stat().st_mode) == 0o600
        assert load(hooks_file)["token"].startswith("emt_")
        assert load(hooks_file)["url"] == f"http://127.0.0.1:{port}"

        # the second session: the model keeps a note in Claude Code's own memory, as its system
        # prompt tells it to (its Write tool); the plugin's PostToolUse hook saves it
        memory_folder = home / ".claude" / "projects" / claude_code.project_folder(project)
        note_path = memory_folder / "memory" / "indentation.md"

        def writes_a_note(request: RecordedRequest) -> Reply | None:
            if "Write" not in request.tool_names:
                return None  # a side request (a title): the default answer
            if has_tool_result(request):
                return text("Use pnpm.")
            return tool_use("Write", {"file_path": str(note_path), "content": NOTE_FILE})

        with FakeAnthropic(handler=writes_a_note, default=text("Use pnpm.")) as fake:
            second = session(fake)
            [system] = [
                m["content"]
                for m in first_with_tools(fake.message_requests).json["messages"]
                if m["role"] == "system"
            ]
        start_context = injected(second.transcript())[0]
        assert REMEMBERED in start_context
        assert "<emergent-memory>" in start_context
        assert REMEMBERED in system  # what the model received
        assert NOTE in note_path.read_text()  # Claude Code wrote it (rewriting its frontmatter)
        # in another project of the same user, recall finds the note: a user-scoped memory
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        recalled = subprocess.run(
            [*COMMAND, "recall", NOTE, "--json"],
            cwd=elsewhere,
            env=settings | {"HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert recalled.returncode == 0, recalled.stderr
        found = [r for r in json.loads(recalled.stdout)["memories"] if NOTE in r["content"]]
        assert found, recalled.stdout
        assert found[0]["scope"] == "user"
        assert found[0]["category"] == "preference"

        claude(home, "plugin", "uninstall", INSTALLED)
        assert (
            INSTALLED
            not in load(home / ".claude" / "plugins" / "installed_plugins.json")["plugins"]
        )
        with FakeAnthropic(default=text("Use pnpm.")) as fake:
            after = session(fake)
            tools = set(first_with_tools(fake.message_requests).tool_names)
        assert not tools & PLUGIN_TOOLS
        assert not any(REMEMBERED in context for context in injected(after.transcript()))


def test_only_a_plugin_hook_without_any_token_sets_itself_up(tmp_path: Path) -> None:
    """The first-time setup runs for a plugin's hook (CLAUDE_PLUGIN_ROOT) that has no token
    anywhere; a hooks file that exists, whatever it holds, or a token in the environment
    means someone configured the hooks, and nothing of theirs is replaced."""
    from emergent_memory.hooks import setup

    hooks_file = tmp_path / "hooks.json"
    plugin = {"CLAUDE_PLUGIN_ROOT": str(PLUGIN), "EMERGENT_MEMORY_HOOK_CONFIG": str(hooks_file)}
    assert setup.wanted(plugin)
    assert not setup.wanted({"EMERGENT_MEMORY_HOOK_CONFIG": str(hooks_file)})  # settings' hook
    assert not setup.wanted(plugin | {"EMERGENT_MEMORY_HOOK_TOKEN": "emt_given"})
    hooks_file.write_text("{}")  # no token in it: still the user's file
    assert not setup.wanted(plugin)


def test_a_failed_first_time_setup_is_said_at_once_and_not_retried_at_every_start(
    tmp_path: Path,
) -> None:
    """A setup that failed (its marker, less than 10 minutes old) is not started again: the
    session start says it failed and what to run, without waiting for it."""
    import io

    from emergent_memory.hooks import setup
    from emergent_memory.hooks.run import main as run_hook

    data = tmp_path / "data"
    environ = {
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
        "EMERGENT_MEMORY_HOOK_CONFIG": str(tmp_path / "hooks.json"),
        "EMERGENT_MEMORY_DATA_DIR": str(data),
        "HOME": str(tmp_path),
    }
    setup._note_failure(data, 1)
    assert setup.failed_recently(data) is not None
    out = io.StringIO()
    payload = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "cwd": "/"})
    run_hook(
        ["SessionStart"],
        stdin=io.BytesIO(payload.encode()),
        stdout=out,
        environ=environ,
        watchdog=False,
    )
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "first-time setup failed (exit status 1)" in context
    assert "hooks install --no-settings" in context
    assert not (data / "hooks" / "setup.lock").exists()  # no setup was started
