"""`emergent-memory hooks install|uninstall|status`: our entries merged into Claude Code's
settings and removed again, everything else kept, backups, refusals, dry runs, the hooks file
and its token; docs/clients.md shows what install writes; and the installed hooks against
the real HTTP server.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from click.testing import CliRunner, Result

from emergent_memory.auth import tokens
from emergent_memory.auth.identity import local_identity
from emergent_memory.cli import cli
from emergent_memory.cli.hooks import hook_program
from emergent_memory.hooks import run
from emergent_memory.hooks.claude_settings import (
    EVENTS,
    HOOK_MATCHERS,
    HOOK_TIMEOUTS,
    is_ours,
    with_our_hooks,
)
from emergent_memory.hooks.config import write_hooks_file
from emergent_memory.hooks.state import mark_unsent, remember_capture
from tests.embedders import EmbeddingServer
from tests.helpers import (
    client_for,
    fake_embedder_env,
    free_port,
    http_server_process,
    running_http_server,
    wait_until,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "claude_code"
DOC_PROGRAM = "/path/to/emergent-memory/.venv/bin/emergent-memory"
HOOK_SCOPES = {"memory:read", "memory:write", "memory:any-project"}

# What a user might have in their settings already.
EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./check.sh", "timeout": 3}],
            }
        ],
        "Notification": [],
    },
}


class Installer:
    """The CLI in a temporary repository (the current directory is a folder inside it), home,
    config and data directory, on the test database."""

    def __init__(self, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.repo = tmp_path / "repo"
        (self.repo / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        monkeypatch.chdir(self.repo / "src")
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.hooks_file = tmp_path / "config" / "emergent-memory" / "hooks.json"
        self.settings = self.repo / ".claude" / "settings.json"
        self.database_url = database_url
        unset: dict[str, str | None] = {
            k: None for k in os.environ if k.startswith(("EMERGENT_MEMORY_", "CLAUDE_"))
        }
        self.env = unset | {
            "EMERGENT_MEMORY_DATABASE_URL": database_url,
            "EMERGENT_MEMORY_HOOK_CONFIG": str(self.hooks_file),
            "EMERGENT_MEMORY_DATA_DIR": str(tmp_path / "data"),
            "HOME": str(self.home),
        }

    def __call__(self, *args: str, **env: str) -> Result:
        return CliRunner().invoke(cli, ["hooks", *args], env=self.env | env)

    def read(self, path: Path | None = None) -> Any:
        return json.loads((path or self.settings).read_text())

    def hooks_file_content(self) -> dict[str, Any]:
        content: dict[str, Any] = json.loads(self.hooks_file.read_text())
        return content

    def backups(self, path: Path | None = None) -> list[Path]:
        path = path or self.settings
        return sorted(path.parent.glob(f"{path.name}.*.bak"))

    def tokens_of_local_actor(self) -> int:
        actor = local_identity(None, None).principal.actor_id
        with psycopg.connect(self.database_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM kb.api_tokens WHERE actor_id = %s", (actor,)
            ).fetchone()
        assert row is not None
        return int(row[0])


@pytest.fixture
def install(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Installer:
    return Installer(tmp_path, database_url, monkeypatch)


def test_the_program_is_the_installed_executable() -> None:
    program = hook_program()
    assert program == str(Path(sys.executable).with_name("emergent-memory"))
    assert os.path.isabs(program)
    assert os.access(program, os.X_OK)


def test_each_hook_s_budget_ends_before_the_timeout_install_writes() -> None:
    """The watchdog ends a hook run at its budget plus grace, before Claude Code's timeout
    (at which Claude Code cancels the run)."""
    assert EVENTS is run.EVENTS  # one list of the events
    assert set(HOOK_TIMEOUTS) == set(run.BUDGETS) == set(EVENTS)
    for event in EVENTS:
        assert run.BUDGETS[event].total + run.WATCHDOG_GRACE < HOOK_TIMEOUTS[event], event


def test_install_writes_our_hooks_and_the_hooks_file(install: Installer) -> None:
    result = install("install")
    assert result.exit_code == 0, result.output
    written = install.read()
    assert written == with_our_hooks({}, hook_program())
    for event in EVENTS:
        [group] = written["hooks"][event]
        matcher = {"matcher": HOOK_MATCHERS[event]} if event in HOOK_MATCHERS else {}
        assert group == matcher | {
            "hooks": [
                {
                    "type": "command",
                    "command": f"{hook_program()} hook {event}",
                    "timeout": HOOK_TIMEOUTS[event],
                }
            ]
        }
    assert str(install.settings) in result.output
    assert install.backups() == []  # there was nothing to back up

    assert stat.S_IMODE(install.hooks_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(install.hooks_file.parent.stat().st_mode) == 0o700
    content = install.hooks_file_content()
    assert content["url"] == "http://127.0.0.1:8765"
    assert (content["start_command"], content["log_file"]) == (None, None)
    assert content["token"] not in result.output  # only its first characters are shown
    with psycopg.connect(install.database_url) as conn:
        info = tokens.verify_token(conn, content["token"])
    assert info is not None
    local = local_identity(None, None).principal
    assert info.actor_id == local.actor_id  # the actor the stdio server uses
    assert info.project_id == local_identity(None, None, cwd=install.repo).principal.project_id
    assert set(info.scopes) == HOOK_SCOPES


def test_a_second_install_changes_nothing(install: Installer) -> None:
    assert install("install").exit_code == 0
    settings_before = install.settings.read_bytes()
    hooks_file_before = install.hooks_file.read_bytes()
    count = install.tokens_of_local_actor()
    again = install("install")
    assert again.exit_code == 0, again.output
    assert "already installed (nothing changed)" in again.output
    assert install.settings.read_bytes() == settings_before
    assert install.hooks_file.read_bytes() == hooks_file_before  # the same token, kept
    assert install.backups() == []
    assert install.tokens_of_local_actor() == count


def test_install_keeps_everything_else_and_backs_up(install: Installer) -> None:
    install.settings.parent.mkdir()
    original = json.dumps(EXISTING, indent=4)  # the user's own formatting
    install.settings.write_text(original)
    assert install("install").exit_code == 0
    written = install.read()
    for key in ("model", "permissions", "env"):
        assert written[key] == EXISTING[key]
    assert list(written) == ["model", "permissions", "env", "hooks"]
    hooks = written["hooks"]
    assert hooks["SessionStart"][0] == EXISTING["hooks"]["SessionStart"][0]
    assert hooks["SessionStart"][1]["hooks"][0]["command"] == f"{hook_program()} hook SessionStart"
    assert hooks["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert hooks["Notification"] == []
    [backup] = install.backups()
    assert backup.read_text() == original
    assert re.fullmatch(r"settings\.json\.\d{8}-\d{6}\.bak", backup.name)


def test_an_older_install_is_replaced_not_doubled(install: Installer) -> None:
    old = {
        "hooks": {
            "SessionStart": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/emergent-memory hook SessionStart",
                        },
                        {"type": "command", "command": "echo mine"},
                    ]
                }
            ],
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/usr/bin/python3 -m emergent_memory hook Stop",
                        }
                    ]
                }
            ],
        }
    }
    install.settings.parent.mkdir()
    install.settings.write_text(json.dumps(old))
    assert install("install").exit_code == 0
    hooks = install.read()["hooks"]
    assert hooks["SessionStart"][0] == {"hooks": [{"type": "command", "command": "echo mine"}]}
    for event in EVENTS:
        ours = [h for g in hooks[event] for h in g["hooks"] if is_ours(h)]
        assert ours == [
            {
                "type": "command",
                "command": f"{hook_program()} hook {event}",
                "timeout": HOOK_TIMEOUTS[event],
            }
        ]


@pytest.mark.parametrize(
    "content",
    ['{"hooks": {', "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {"hooks": []}}}'],
)
def test_settings_that_are_not_valid_are_refused(install: Installer, content: str) -> None:
    install.settings.parent.mkdir()
    install.settings.write_text(content)
    count = install.tokens_of_local_actor()
    for args in (["install"], ["uninstall"]):
        result = install(*args)
        assert result.exit_code == 1
        assert result.output.startswith("error: ")
        assert "nothing was changed" in result.output
    assert install.settings.read_text() == content
    assert install.backups() == []
    assert not install.hooks_file.exists()
    assert install.tokens_of_local_actor() == count


def test_a_dry_run_writes_nothing(install: Installer) -> None:
    count = install.tokens_of_local_actor()
    result = install("install", "--dry-run")
    assert result.exit_code == 0, result.output
    assert f'+            "command": "{hook_program()} hook Stop",' in result.output
    assert f"would write {install.hooks_file} (mode 0600)" in result.output
    assert not install.settings.exists()
    assert not install.settings.parent.exists()
    assert not install.hooks_file.exists()
    assert install.tokens_of_local_actor() == count

    assert install("install").exit_code == 0
    before = install.settings.read_bytes()
    result = install("uninstall", "--dry-run")
    assert f'-            "command": "{hook_program()} hook Stop",' in result.output
    assert install.settings.read_bytes() == before
    assert install.backups() == []


def test_uninstall_removes_ours_and_only_ours(install: Installer) -> None:
    install.settings.parent.mkdir()
    install.settings.write_text(json.dumps(EXISTING))
    assert install("install").exit_code == 0
    result = install("uninstall")
    assert result.exit_code == 0, result.output
    assert install.read() == EXISTING  # the events and groups only ours held are gone
    assert len(install.backups()) == 2  # one per change
    again = install("uninstall")
    assert "no emergent-memory hooks; nothing changed" in again.output
    assert len(install.backups()) == 2


def test_uninstall_after_install_in_an_empty_file_leaves_it_empty(install: Installer) -> None:
    assert install("install").exit_code == 0
    assert install("uninstall").exit_code == 0
    assert install.read() == {}


def test_the_user_scope(install: Installer, tmp_path: Path) -> None:
    assert install("install", "--scope", "user").exit_code == 0
    user_settings = install.home / ".claude" / "settings.json"
    assert install.read(user_settings) == with_our_hooks({}, hook_program())
    assert not install.settings.exists()
    elsewhere = tmp_path / "claude-config"
    assert install("install", "--scope", "user", CLAUDE_CONFIG_DIR=str(elsewhere)).exit_code == 0
    assert install.read(elsewhere / "settings.json") == with_our_hooks({}, hook_program())
    assert install("uninstall", "--scope", "user").exit_code == 0
    assert install.read(user_settings) == {}


def test_a_given_url_and_token_are_written_without_the_database(install: Installer) -> None:
    count = install.tokens_of_local_actor()
    given = install.env | {"EMERGENT_MEMORY_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    result = CliRunner().invoke(
        cli,
        ["hooks", "install", "--url", "https://memory.example.com/", "--token", "emt_given"],
        env=given,
    )
    assert result.exit_code == 0, result.output
    assert install.hooks_file_content()["url"] == "https://memory.example.com"
    assert install.hooks_file_content()["token"] == "emt_given"
    assert install.tokens_of_local_actor() == count
    refused = install("install", "--url", "ftp://nope")
    assert refused.exit_code == 1
    assert "--url must start with http:// or https://" in refused.output


def test_the_url_comes_from_the_variable_then_the_file_as_the_help_says(
    install: Installer,
) -> None:
    install.hooks_file.parent.mkdir(parents=True)
    install.hooks_file.write_text('{"url": "http://127.0.0.1:9001", "token": "emt_old"}')
    install.hooks_file.chmod(0o600)
    nowhere = {"EMERGENT_MEMORY_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    kept = install("install", "--token", "emt_given", **nowhere)
    assert kept.exit_code == 0, kept.output
    assert install.hooks_file_content()["url"] == "http://127.0.0.1:9001"
    variable = {"EMERGENT_MEMORY_HOOK_URL": "http://127.0.0.1:9002"}
    chosen = install("install", "--token", "emt_given", **nowhere, **variable)
    assert chosen.exit_code == 0, chosen.output
    assert install.hooks_file_content()["url"] == "http://127.0.0.1:9002"
    help_text = " ".join(install("install", "--help").output.split())
    assert (
        "--url TEXT The server's URL (default: EMERGENT_MEMORY_HOOK_URL, else the hooks "
        "file's, else http://127.0.0.1:8765)." in help_text
    )


def test_a_revoked_token_is_replaced(install: Installer) -> None:
    assert install("install").exit_code == 0
    first = install.hooks_file_content()["token"]
    with psycopg.connect(install.database_url) as conn:
        info = tokens.verify_token(conn, first)
        assert info is not None
        tokens.revoke_token(conn, info.id)
    settings_before = install.settings.read_bytes()
    assert install("install").exit_code == 0
    second = install.hooks_file_content()["token"]
    assert second != first
    with psycopg.connect(install.database_url) as conn:
        assert tokens.verify_token(conn, second) is not None
    assert install.settings.read_bytes() == settings_before


def test_a_hooks_file_open_to_others_is_rewritten_private(install: Installer) -> None:
    install.hooks_file.parent.mkdir(parents=True)
    install.hooks_file.write_text('{"url": "http://127.0.0.1:9", "token": "emt_leaked"}')
    install.hooks_file.chmod(0o644)
    result = install("install")
    assert result.exit_code == 0, result.output
    assert "is open to group or others" in result.output
    assert stat.S_IMODE(install.hooks_file.stat().st_mode) == 0o600
    assert install.hooks_file_content()["token"] != "emt_leaked"


def test_status_says_where_and_whether_the_server_answers(install: Installer) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    assert install("install", "--scope", "user", "--url", url).exit_code == 0
    result = install("status", "--json")
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert status["installed"]["user"]["events"] == sorted(EVENTS)
    assert status["installed"]["project"]["events"] == []
    assert status["hooks_file"] == str(install.hooks_file)
    assert (status["url"], status["server_answering"]) == (url, False)
    token = install.hooks_file_content()["token"]
    assert status["token"] == token[:12] + "..."
    assert token not in result.output
    human = install("status")
    assert "not answering" in human.output
    assert f"user     {install.home / '.claude' / 'settings.json'}: " in human.output


def test_status_says_capture_is_off_and_what_waits_to_be_sent(install: Installer) -> None:
    """What the hooks last heard of capture (for the hooks' URL), and the sessions whose
    turns wait to be sent."""
    url = f"http://127.0.0.1:{free_port()}"
    assert install("install", "--scope", "user", "--url", url).exit_code == 0
    data = Path(install.env["EMERGENT_MEMORY_DATA_DIR"] or "")
    unknown = json.loads(install("status", "--json").output)
    assert (unknown["capture"], unknown["unsent_sessions"]) == (None, 0)
    remember_capture(data, url, "off")
    for session in ("s-1", "s-2"):
        mark_unsent(data, str(uuid.uuid4()), session)
    status = json.loads(install("status", "--json").output)
    assert (status["capture"], status["unsent_sessions"], status["unsent_projects"]) == (
        "off",
        2,
        2,
    )
    human = install("status").output
    assert "capture  off (the server has said so since " in human
    assert "memories are saved only when the agent calls save_memory" in human
    assert "unsent   2 session(s) of 2 project(s) wait to be sent" in human
    other = json.loads(install("status", "--json", EMERGENT_MEMORY_HOOK_URL=url + "0").output)
    assert other["capture"] is None  # what another server said is not this one's


def test_the_docs_show_what_install_writes() -> None:
    text = (ROOT / "docs" / "clients.md").read_text()
    section = text.split("## Claude Code hooks\n")[1].split("\n## ")[0]
    blocks = re.findall(r"```json\n(.*?)```", section, re.DOTALL)
    assert json.loads(blocks[0]) == with_our_hooks({}, DOC_PROGRAM)
    for command in ("hooks install", "hooks uninstall", "hooks status", "--scope user"):
        assert command in section


# -- with the real server ----------------------------------------------------------------------


def _hook_runner(install: Installer) -> Any:
    """Runs a hook as Claude Code does, configured only by the hooks file install wrote."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMERGENT_MEMORY_", "CLAUDE"))}
    env |= {
        "EMERGENT_MEMORY_HOOK_CONFIG": str(install.hooks_file),
        "EMERGENT_MEMORY_DATA_DIR": str(install.env["EMERGENT_MEMORY_DATA_DIR"]),
        "CLAUDE_PROJECT_DIR": str(install.repo),
    }
    recorded = {
        call["event"]: call["input"]
        for call in json.loads((FIXTURES / "preference.hooks.json").read_text())
    }

    def run(event: str, session: str, transcript: Path | None = None) -> str:
        payload = recorded[event] | {"session_id": session, "cwd": str(install.repo / "src")}
        if transcript is not None:
            payload["transcript_path"] = str(transcript)
        done = subprocess.run(
            [sys.executable, "-m", "emergent_memory", "hook", event],
            input=json.dumps(payload).encode(),
            env=env,
            cwd=install.repo,
            capture_output=True,
            timeout=60,
            check=True,
        )
        return done.stdout.decode()

    return run


def test_installed_hooks_against_the_real_server(
    install: Installer, database_url: str, embedding_server: EmbeddingServer, tmp_path: Path
) -> None:
    """`hooks install` against `serve --transport http` (capture on, no model asked), then the
    hooks as Claude Code runs them: the memory saved in this repository comes back at
    SessionStart, once; Stop sends what the transcript holds so far and SessionEnd the rest
    with final: the server stores the turns in order, the tool's output as a tool turn, and
    queues the last window."""
    settings = {
        "EMERGENT_MEMORY_ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
        "EMERGENT_MEMORY_ANTHROPIC_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "EMERGENT_MEMORY_CAPTURE_DAILY_TOKEN_BUDGET": "0",  # no model is asked
    }
    with running_http_server(database_url, embedding_server, **settings) as server:
        assert install("install", "--url", server.base).exit_code == 0
        token = install.hooks_file_content()["token"]
        content = f"The user wants pnpm, never npm, in this repository ({uuid.uuid4().hex[:8]})"

        async def save() -> None:
            async with client_for(server, token) as client:
                await client.call_tool(
                    "save_memory", {"content": content, "category": "preference"}
                )

        anyio.run(save)
        run = _hook_runner(install)
        session = str(uuid.uuid4())
        first = json.loads(run("SessionStart", session))
        context = first["hookSpecificOutput"]["additionalContext"]
        assert first["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert context.startswith("<emergent-memory>")
        assert context.rstrip().endswith("</emergent-memory>")
        assert content in context
        assert run("SessionStart", session) == ""  # never twice in a session

        lines = (FIXTURES / "tool_call.jsonl").read_text().splitlines(keepends=True)
        transcript = tmp_path / "transcript.jsonl"
        transcript.write_text("".join(lines[:10]))  # at Stop the transcript lags
        assert run("Stop", session, transcript) == ""
        transcript.write_text("".join(lines))
        assert run("SessionEnd", session, transcript) == ""
    with psycopg.connect(database_url) as conn:
        turns = conn.execute(
            "SELECT turn_index, role, content FROM kb.capture_turns WHERE session_id = %s "
            "ORDER BY turn_index",
            (session,),
        ).fetchall()
        windows = conn.execute(
            "SELECT first_turn, end_turn FROM kb.capture_windows WHERE session_id = %s",
            (session,),
        ).fetchall()
    assert turns == [
        (0, "user", "Run echo hello please"),
        (1, "tool", "called Bash: echo hello"),
        (2, "tool", "hello"),
        (3, "assistant", "It printed hello."),
    ]
    assert max(end for _, end in windows) == 4  # final: the rest was queued
    # the banner says capture is on, with which models
    assert "automatic capture: on (gate claude-haiku-4-5, extractor claude-sonnet-4-6)" in (
        server.log
    )


def test_a_session_that_ends_before_the_server_is_up_is_sent_by_the_next_start(
    install: Installer, database_url: str, embedding_server: EmbeddingServer, tmp_path: Path
) -> None:
    """The first session starts while its server cannot start yet, and ends before it is up:
    its Stop and SessionEnd find nothing listening. Once the real server runs on the hooks'
    URL, the next session's SessionStart prints its context at once and a detached run sends
    the first session's turns, whole and final, so the server stores and windows them."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    assert install("install", "--url", url).exit_code == 0
    stored = install.hooks_file_content()
    cannot_start = [sys.executable, "-c", "raise SystemExit(3)"]  # the server is not up yet
    write_hooks_file(install.hooks_file, stored | {"start_command": cannot_start})
    run = _hook_runner(install)
    first = str(uuid.uuid4())
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text((FIXTURES / "tool_call.jsonl").read_text())
    notice = json.loads(run("SessionStart", first))["hookSpecificOutput"]["additionalContext"]
    assert "could not be started" in notice
    assert run("Stop", first, transcript) == ""
    assert run("SessionEnd", first, transcript) == ""
    settings = {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
        "EMERGENT_MEMORY_ANTHROPIC_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "EMERGENT_MEMORY_CAPTURE_DAILY_TOKEN_BUDGET": "0",  # no model is asked
    }
    with http_server_process(fake_embedder_env(embedding_server, **settings), port=port):
        second = run("SessionStart", str(uuid.uuid4()))  # did not wait for the backlog
        assert "could not be started" not in second
        assert "capture is off" not in second

        def sent() -> bool:
            with psycopg.connect(database_url) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM kb.capture_turns WHERE session_id = %s", (first,)
                ).fetchone()
            return row is not None and row[0] == 4

        wait_until(sent, 60, "the first session's turns reach the server")
    with psycopg.connect(database_url) as conn:
        turns = conn.execute(
            "SELECT turn_index, role FROM kb.capture_turns WHERE session_id = %s "
            "ORDER BY turn_index",
            (first,),
        ).fetchall()
        [window_end] = conn.execute(
            "SELECT max(end_turn) FROM kb.capture_windows WHERE session_id = %s", (first,)
        ).fetchone() or [None]
    assert turns == [(0, "user"), (1, "tool"), (2, "tool"), (3, "assistant")]
    assert window_end == 4  # sent with final: the session had ended


def test_install_on_a_new_database(
    tmp_path: Path, make_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new user's first command: a configured database that was never migrated is refused
    with what to do, and migrated with --migrate (the embedded database, the user's own, is
    migrated without asking: the same code path with migrate defaulting to yes)."""
    fresh = Installer(tmp_path, make_database(), monkeypatch)
    refused = fresh("install")
    assert refused.exit_code != 0
    assert "emergent-memory db upgrade" in refused.output
    assert not fresh.hooks_file.exists()
    done = fresh("install", "--migrate")
    assert done.exit_code == 0, done.output
    assert fresh.tokens_of_local_actor() == 1
