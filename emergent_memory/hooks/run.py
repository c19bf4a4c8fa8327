"""`emergent-memory hook EVENT`: one Claude Code hook run, from its JSON on stdin to stdout.

SessionStart and UserPromptSubmit ask the server for the context to inject
(POST /api/v1/context) and print it as Claude Code expects:
{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": "..."}}; they print
nothing when there is nothing to add. Stop, PreCompact and SessionEnd send the part of the
transcript not sent yet (POST /api/v1/capture) and print nothing (additionalContext on Stop
would make the conversation go on). PostToolUse sends the files Claude wrote, edited or
deleted in the session's auto memory folder (hooks/auto_memory.py) and prints nothing.

Turns the server did not take wait in the project's backlog (hooks/capture.py). When the
context answer says capture is on and the project has a backlog, SessionStart starts
`hook Backlog` detached once its output is written, so that the session's start never waits
for it; that run sends the backlog within its own budget. When the answer says capture is
off, the session's first SessionStart says so in the context, in one short line. Likewise,
when the session's auto memory folder changed since it was last sent, SessionStart starts
`hook AutoMemorySync` detached once its output is written (the catch-up).

Whatever happens (malformed input, no server, a slow or failing server, a bug) the hook
exits 0, prints nothing but that JSON, and finishes within its event's time budget: a
watchdog ends the process when the budget is spent. Problems go to the hooks' log file.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from emergent_memory.auth.local_ids import canonical_uuid, derived_project_id_text, project_root
from emergent_memory.hooks.client import Answer, Server, Unreachable, error_code
from emergent_memory.hooks.config import (
    CLIENT,
    ConfigProblem,
    HookConfig,
    data_dir,
    default_log_file,
    load_config,
)
from emergent_memory.hooks.hook_input import MAX_INPUT_BYTES, read_input
from emergent_memory.hooks.log import HookLog, error_location
from emergent_memory.hooks.setup import SETUP_EVENT
from emergent_memory.hooks.state import (
    SessionState,
    hooks_dir,
    load_state,
    locked,
    remember_capture,
    remove_stale_states,
    save_state,
    state_path,
    unsent_sessions,
    write_atomically,
)
from emergent_memory.markers import MARKER_CLOSE, MARKER_OPEN

# typing (several ms to import) for the checker only; autostart and capture where used
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd", "PostToolUse")
BACKLOG_EVENT = "Backlog"  # not Claude Code's: the detached run that sends a project's backlog
# not Claude Code's either: the detached run that sends a session's auto memory folder
AUTO_MEMORY_EVENT = "AutoMemorySync"
DETACHED_EVENTS = (BACKLOG_EVENT, AUTO_MEMORY_EVENT)
CONTEXT_PATH = "/api/v1/context"
# Said once per session, at its start, when the server answers that capture is off.
CAPTURE_OFF_LINE = "Automatic capture is off: memories are saved only when you call save_memory."


class Budget:
    __slots__ = ("request", "stdin", "total")

    def __init__(self, *, total: float, request: float, stdin: float) -> None:
        self.total = total  # seconds, from the start of the run, for all of its work
        self.request = request  # seconds one HTTP request may take
        self.stdin = stdin  # seconds to wait for the hook's input


# Each budget, with the watchdog's grace, is under the `timeout` that `hooks install` writes
# for its event (claude_settings.HOOK_TIMEOUTS; tested). SessionEnd's stays short all the
# same: an entry without that timeout (written by hand) gets Claude Code's default for
# SessionEnd, about 1.5 s. The context requests may wait a few seconds: a server that has just
# started (the hook's own autostart, or `serve` a moment before) answers once its embedding
# model, which it starts loading at its start, is loaded (a second or two on two cores).
BUDGETS = {
    "SessionStart": Budget(total=9.0, request=4.0, stdin=0.5),
    "UserPromptSubmit": Budget(total=4.0, request=3.0, stdin=0.5),
    "Stop": Budget(total=8.0, request=2.0, stdin=0.5),
    "PreCompact": Budget(total=8.0, request=2.0, stdin=0.5),
    "SessionEnd": Budget(total=1.2, request=1.0, stdin=0.2),
    # after a tool call: Claude waits for it, so it stays short; a file not sent in time is
    # sent by the next sync
    "PostToolUse": Budget(total=4.0, request=3.0, stdin=0.5),
}
# The detached backlog run's: no one waits for it (capture.MAX_BACKLOG_REQUESTS bounds its
# requests).
BACKLOG_BUDGET = Budget(total=60.0, request=5.0, stdin=0.5)
AUTO_MEMORY_BUDGET = Budget(total=30.0, request=20.0, stdin=0.5)
# `hook Setup`, the plugin's first-time setup (hooks/setup.py): a first start of the embedded
# database and its migration, then the server's start
SETUP_BUDGET = Budget(total=300.0, request=5.0, stdin=0.5)
DETACHED_BUDGETS = {
    BACKLOG_EVENT: BACKLOG_BUDGET,
    AUTO_MEMORY_EVENT: AUTO_MEMORY_BUDGET,
    SETUP_EVENT: SETUP_BUDGET,
}
UNKNOWN_EVENT_BUDGET = Budget(total=1.0, request=1.0, stdin=0.2)
WATCHDOG_GRACE = 0.3  # the watchdog ends the process this long after the budget
AUTOSTART_WAIT = 5.0  # how long SessionStart waits for a server it (or another) started
FINAL_EVENTS = frozenset({"PreCompact", "SessionEnd"})
MAX_PROMPT_CHARS = 8_000
MIN_WORDS_VARIABLE = "EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS"
DEFAULT_MIN_PROMPT_WORDS = 3
WORD = r"\w+"  # a word as the server counts one (memory/injection.py): "fix auth.py" has 3
SOURCES = frozenset({"startup", "resume", "clear", "compact"})


def main(
    argv: Sequence[str],
    *,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    watchdog: bool = True,
) -> int:
    """Run the hook for argv[0] (the event); always returns 0."""
    started = time.monotonic()
    event = argv[0] if argv else ""
    budget = DETACHED_BUDGETS.get(event) or BUDGETS.get(event, UNKNOWN_EVENT_BUDGET)
    if watchdog:
        _start_watchdog(budget.total + WATCHDOG_GRACE)
    environ = os.environ if environ is None else environ
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    run = HookRun(event, budget, started + budget.total, environ)
    output = ""
    try:
        output = run.execute(stdin)
    except KeyboardInterrupt:
        return 0
    except Exception as error:  # a bug must not break the session: log where, not what
        run.log.error(f"internal error: {type(error).__name__} at {error_location(error)}")
    if output:  # ASCII JSON: any stdout encoding can write it (cp1252 on Windows, ascii)
        try:
            stdout.write(output)
            stdout.flush()
        except (OSError, ValueError) as error:  # a closed pipe, a closed stream
            run.log.error(f"the hook's output could not be written ({type(error).__name__})")
    try:
        run.after_output()
    except Exception as error:
        run.log.error(f"internal error: {type(error).__name__} at {error_location(error)}")
    return 0


def _start_watchdog(seconds: float) -> None:
    def expire() -> None:
        try:
            sys.stdout.flush()
        finally:
            os._exit(0)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


class HookRun:
    """One hook run: its event, time budget, configuration and log."""

    def __init__(
        self, event: str, budget: Budget, deadline: float, environ: Mapping[str, str]
    ) -> None:
        self.event = event
        self.budget = budget
        self.deadline = deadline
        self.environ = environ
        self.log = HookLog(default_log_file(environ), event)
        self.config: HookConfig | None = None
        self.server: Server | None = None
        self.session_id = ""
        self.payload: dict[str, Any] = {}
        self.problem = ""  # why the hooks cannot work, for the session start's notice
        self.setting_up = False  # the plugin's first-time setup runs (hooks/setup.py)
        self.capture: str | None = None  # "on" or "off", as the context answer said
        self.backlog_project: str | None = None  # whose backlog to send once output is out
        # the auto memory folder (and its project) to send once output is out
        self.auto_memory: tuple[Path, str] | None = None
        self.auto_memory_project: str | None = None  # SessionStart's, for the catch-up

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def execute(self, stdin: BinaryIO) -> str:
        if self.event == SETUP_EVENT:
            from emergent_memory.hooks import setup

            setup.run(self.environ, data_dir(self.environ), self.log)
            return ""
        if self.event not in EVENTS and self.event not in DETACHED_EVENTS:
            self.log.warning(f"unknown hook event {self.event[:40]!r}; nothing done")
            return ""
        raw = read_input(stdin, min(self.budget.stdin, self.left()))
        if raw is None:
            self.log.warning(f"the hook input is over {MAX_INPUT_BYTES} bytes; ignored")
            return ""
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self.log.warning(f"the hook input is not a JSON object ({len(raw)} bytes); ignored")
            return ""
        if self.event == BACKLOG_EVENT:
            self.payload = payload
            self.send_backlog()
            return ""
        if self.event == AUTO_MEMORY_EVENT:
            self.payload = payload
            self.sync_auto_memory()
            return ""
        session_id = payload.get("session_id")
        if not isinstance(session_id, str) or not 1 <= len(session_id) <= 200:
            self.log.warning("the hook input has no valid session_id; ignored")
            return ""
        self.payload, self.session_id = payload, session_id
        if not self._configure():  # a session start says so: hooks must not fail silently
            return self._output(self._setup_notice()) if self.event == "SessionStart" else ""
        if self.event == "SessionStart":
            return self.session_start()
        if self.event == "UserPromptSubmit":
            return self.prompt_submit()
        if self.event == "PostToolUse":
            self.after_tool()
            return ""
        from emergent_memory.hooks.capture import TranscriptCapture

        TranscriptCapture(self).send(final=self.event in FINAL_EVENTS)
        return ""

    # -- configuration and identity -----------------------------------------------------------

    def _configure(self) -> bool:
        try:
            config = load_config(self.environ)
        except ConfigProblem as problem:
            self._log_once(str(problem))
            self.problem = str(problem)
            return False
        self.log = HookLog(config.log_file, self.event)
        if not config.token and self.event == "SessionStart" and self._set_up():
            config = load_config(self.environ)
        if not config.token:
            if self.setting_up or self.problem:  # the setup runs, or failed: said already
                return False
            self.problem = (
                f"no token for the server: run emergent-memory hooks install (or set "
                f"EMERGENT_MEMORY_HOOK_TOKEN); hooks file {config.hooks_file}"
            )
            self.log.warning(self.problem)
            return False
        try:
            self.server = Server.from_url(config.url)
        except ValueError:
            self.problem = f"the hooks' URL is not an http(s) URL: see {config.hooks_file}"
            self.log.warning(self.problem)
            return False
        self.config = config
        return True

    def _set_up(self) -> bool:
        """The plugin's first session (hooks/setup.py): start the setup that writes the hooks
        file, and wait for it while the context request still fits in this hook's time.
        False, with the session's notice in `problem`, when it is not done in that time."""
        from emergent_memory.hooks import setup

        if not setup.wanted(self.environ):
            return False
        failure = setup.failed_recently(data_dir(self.environ))
        if failure is not None:
            self.problem = failure
            return False
        if not setup.start(self.environ, data_dir(self.environ), self.log):
            return False
        if setup.wait_for_token(self.environ, self.deadline - self.budget.request - 1.0):
            return True
        self.setting_up = True
        return False

    def _log_once(self, problem: str) -> None:
        """Log a configuration problem once, not on every prompt of every session."""
        marker = hooks_dir(data_dir(self.environ)) / "config-problem"
        try:
            if marker.read_text() == problem:
                return
        except OSError:
            pass
        self.log.error(problem)
        try:  # noqa: SIM105 - contextlib would be imported for this alone
            write_atomically(marker, problem.encode())
        except OSError:
            pass

    def project_id(self, state: SessionState | None) -> str | None:
        """The session's project, as the stdio server derives it for the same directory:
        EMERGENT_MEMORY_PROJECT_ID, else the git repository (or directory) of the session's
        project directory (CLAUDE_PROJECT_DIR, else the hook's cwd). None: misconfigured."""
        configured = self.environ.get("EMERGENT_MEMORY_PROJECT_ID")
        if configured:
            try:
                return canonical_uuid(configured)
            except ValueError:
                self.log.error("EMERGENT_MEMORY_PROJECT_ID is not a UUID; nothing done")
                return None
        cwd = self.payload.get("cwd")
        directory = self.environ.get("CLAUDE_PROJECT_DIR") or (
            cwd if isinstance(cwd, str) and cwd else os.getcwd()
        )
        if state is not None and state.project_dir == directory and state.project_id:
            return state.project_id
        root = project_root(Path(directory), timeout=max(0.1, min(1.0, self.left() / 4)))
        project = derived_project_id_text(root)
        if state is not None:
            state.project_dir, state.project_id = directory, project
        return project

    # -- injection ------------------------------------------------------------------------------

    def session_start(self) -> str:
        assert self.config is not None
        remove_stale_states(self.config.data_dir)
        path = state_path(self.config.data_dir, self.session_id)
        state = load_state(path)
        project = self.project_id(state)
        if project is None:
            return ""
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "event": "session_start",
            "client": CLIENT,
            "project_id": project,
        }
        source = self.payload.get("source")
        if source in SOURCES:
            body["source"] = source
        context, notice = self._context_with_autostart(body)
        if context is None and notice and not state.notice_shown:
            state.notice_shown = True
            context = f"{MARKER_OPEN}\n{notice}\n{MARKER_CLOSE}"
        if self.capture is not None:
            self.note_capture(self.capture)
        if self.capture == "off" and not state.capture_off_said:
            state.capture_off_said = True
            context = with_line(context, CAPTURE_OFF_LINE)
        if self.capture == "on" and unsent_sessions(self.config.data_dir, project):
            self.backlog_project = project  # sent by a detached run, once the output is out
        self.save(path, state)
        self.auto_memory_project = project  # its folder is looked at once the output is out
        return self._output(context)

    def _auto_memory_pending(self, project: str) -> tuple[Path, str] | None:
        """The session's auto memory folder when it changed since it was last sent (the
        detached catch-up sends it); else None."""
        from emergent_memory.hooks.auto_memory import AutoMemorySync, session_memory_folder

        folder = session_memory_folder(self.payload)
        if folder is None or not AutoMemorySync(self, folder, project).pending():
            return None
        return folder, project

    def after_tool(self) -> None:
        """PostToolUse: a sync of the session's auto memory folder when the tool call may
        have changed it."""
        from emergent_memory.hooks.auto_memory import AutoMemorySync, session_memory_folder, touches

        folder = session_memory_folder(self.payload)
        if folder is None or not touches(self.payload, folder):
            return
        assert self.config is not None
        path = state_path(self.config.data_dir, self.session_id)
        state = load_state(path)
        cached = (state.project_dir, state.project_id)
        project = self.project_id(state)
        if project is None:
            return
        if (state.project_dir, state.project_id) != cached:
            self.save(path, state)
        AutoMemorySync(self, folder, project).sync()

    def sync_auto_memory(self) -> None:
        """The detached catch-up (`hook AutoMemorySync`, input {"memory_folder",
        "project_id"}): send what changed in the folder."""
        from emergent_memory.hooks.auto_memory import AutoMemorySync

        folder = self.payload.get("memory_folder")
        try:
            project = canonical_uuid(str(self.payload.get("project_id")))
        except ValueError:
            self.log.warning("the auto memory run's input has no valid project_id; nothing sent")
            return
        if not isinstance(folder, str) or not Path(folder).is_dir():
            self.log.warning("the auto memory run's input has no memory folder; nothing sent")
            return
        if not self._configure():
            return
        AutoMemorySync(self, Path(folder), project).sync()

    def note_capture(self, capture: str) -> None:
        """Keep what the server said of capture ("on" or "off") for `hooks status` and the
        next runs."""
        assert self.config is not None
        try:
            remember_capture(self.config.data_dir, self.config.url, capture)
        except OSError as error:
            self.log.warning(f"cannot note what the server said of capture: {error.strerror}")

    def after_output(self) -> None:
        """What a run does once its output is written: SessionStart starts the detached runs
        that send the project's backlog and the session's auto memory folder (no session's
        start waits for them)."""
        if self.backlog_project is not None:
            payload = {"project_id": self.backlog_project}
            self._detached(BACKLOG_EVENT, payload, "the project's unsent turns")
        # reading the folder's notes comes after the output: a slow disk or an unreadable
        # file never costs the session its context
        if self.auto_memory_project is not None:
            self.auto_memory = self._auto_memory_pending(self.auto_memory_project)
        if self.auto_memory is not None:
            folder, project = self.auto_memory
            payload = {"memory_folder": str(folder), "project_id": project}
            self._detached(AUTO_MEMORY_EVENT, payload, "the auto memory folder's changes")

    def _detached(self, event: str, payload: dict[str, str], what: str) -> None:
        if self.config is None:
            return
        from emergent_memory.hooks import autostart

        command = [sys.executable, "-m", "emergent_memory", "hook", event]
        try:
            pid = autostart.spawn_detached(
                command, self.config.data_dir, self.environ, json.dumps(payload).encode()
            )
        except OSError as error:
            self.log.warning(f"cannot start the run that sends {what}: {error.strerror}")
            return
        self.log.info(f"sending {what} in the background (pid {pid})")

    def send_backlog(self) -> None:
        """The detached run (`hook Backlog`, input {"project_id"}): send the project's
        backlog; one such run per project at a time."""
        try:
            project = canonical_uuid(str(self.payload.get("project_id")))
        except ValueError:
            self.log.warning("the backlog run's input has no valid project_id; nothing sent")
            return
        if not self._configure():
            return
        assert self.config is not None
        from emergent_memory.hooks.capture import MAX_BACKLOG_REQUESTS, TranscriptCapture

        lock = hooks_dir(self.config.data_dir) / "locks" / f"backlog-{project}.lock"
        with locked(lock, wait=0) as have:
            if not have:
                self.log.info("another run is sending this project's backlog; left to it")
                return
            TranscriptCapture(self).send_backlog(project, MAX_BACKLOG_REQUESTS[BACKLOG_EVENT])

    def _context_with_autostart(self, body: dict[str, Any]) -> tuple[str | None, str]:
        """The context, or None and a notice for the user when there is none to be had."""
        assert self.config is not None
        assert self.server is not None
        try:
            return self._context(body), ""
        except Unreachable as error:
            if error.timed_out:  # it runs, but slowly: no notice for a moment's slowness
                self.log.warning(
                    f"the server at {self.config.url} did not answer within "
                    f"{self.budget.request:g} s (timed out); no context"
                )
                return None, ""
            if not (error.refused and self.server.is_loopback):
                self.log.warning(f"the server at {self.config.url} is unreachable: {error.reason}")
                return None, (
                    f"emergent-memory's memory server at {self.config.url} could not be "
                    f"reached ({error.reason}), so no memories were loaded for this session. "
                    f"The hooks' log is {self.log.path}."
                )
        except _Refused as refusal:
            return None, refusal.notice
        from emergent_memory.hooks import autostart  # only when the server is not running

        command = list(self.config.start_command or autostart.default_start_command(self.server))
        server_log = autostart.server_log_path(self.config.data_dir)
        wait_until = min(self.deadline - self.budget.request, time.monotonic() + AUTOSTART_WAIT)
        outcome = autostart.ensure_server(
            self.server, command, self.config.data_dir, self.log, wait_until
        )
        if outcome.healthy:
            try:
                return self._context(body), ""
            except (Unreachable, _Refused) as error:
                self.log.warning(f"the server started but did not answer: {error}")
                return None, ""
        if outcome.pending:
            return None, (
                "emergent-memory's memory server was not running, so no memories were loaded "
                "at the start of this session. It is being started in the background and "
                f"will be used once it is up; its log is {server_log}."
            )
        return None, (
            f"emergent-memory's memory server is not running and could not be started "
            f"({outcome.problem}), so no memories were loaded for this session. Its log is "
            f"{server_log}; start it with: emergent-memory serve --transport http"
        )

    def prompt_submit(self) -> str:
        prompt = self.payload.get("prompt")
        if not isinstance(prompt, str):
            return ""
        prompt = prompt[:MAX_PROMPT_CHARS]  # what is sent, and what the server counts
        if len(re.findall(WORD, prompt)) < self._min_words():
            return ""
        assert self.config is not None
        path = state_path(self.config.data_dir, self.session_id)
        state = load_state(path)
        cached = (state.project_dir, state.project_id)
        project = self.project_id(state)
        if project is None:
            return ""
        if (state.project_dir, state.project_id) != cached:
            self.save(path, state)
        body = {
            "session_id": self.session_id,
            "event": "prompt",
            "prompt": prompt,
            "client": CLIENT,
            "project_id": project,
        }
        try:
            return self._output(self._context(body))
        except Unreachable as error:
            what = "is not running" if error.refused else f"is unreachable ({error.reason})"
            if error.timed_out:
                what = (
                    f"did not answer within {self.budget.request:g} s (timed out; a server that "
                    "has just started may still be loading its embedding model)"
                )
            self.log.warning(f"the server at {self.config.url} {what}; no context")
        except _Refused:
            pass
        return ""

    def _min_words(self) -> int:
        try:
            words = int(self.environ.get(MIN_WORDS_VARIABLE, DEFAULT_MIN_PROMPT_WORDS))
        except ValueError:
            return DEFAULT_MIN_PROMPT_WORDS
        return words if 1 <= words <= 50 else DEFAULT_MIN_PROMPT_WORDS

    def _context(self, body: dict[str, Any]) -> str | None:
        """The server's context ("" when it has none). Raises Unreachable, or _Refused when
        the server answered with an error."""
        answer = self.post(CONTEXT_PATH, body)
        if answer.status != 200:
            raise _Refused(self.refusal(answer))
        context = answer.body.get("context") if isinstance(answer.body, dict) else None
        capture = answer.body.get("capture") if isinstance(answer.body, dict) else None
        self.capture = capture if capture in ("on", "off") else None
        if not isinstance(context, str):
            self.log.warning("the server's context answer has no context string")
            raise _Refused("")
        return context

    def refusal(self, answer: Answer) -> str:
        """Log a refusal; the notice for the user when the token is the problem."""
        assert self.config is not None
        self.log.warning(
            f"the server answered {answer.status} ({error_code(answer)}) to {self.event}"
        )
        if answer.status in (401, 403):
            return (
                f"emergent-memory's memory server refused the hooks' token ({answer.status}), "
                "so no memories were loaded for this session. Run: emergent-memory hooks "
                f"install (it checks the token and makes a new one). The hooks' log is "
                f"{self.log.path}."
            )
        return ""

    def _setup_notice(self) -> str:
        if self.setting_up:
            return (
                f"{MARKER_OPEN}\nemergent-memory is setting itself up for its first session "
                "(starting its database, making the hooks' token) in the background, so no "
                "memories were loaded at this session's start; they will be from the next "
                f"session. The hooks' log is {self.log.path}.\n{MARKER_CLOSE}"
            )
        return (
            f"{MARKER_OPEN}\nemergent-memory's hooks cannot reach the memory server, so no "
            f"memories were loaded for this session: {self.problem}. `emergent-memory hooks "
            f"status` shows the installation.\n{MARKER_CLOSE}"
        )

    def _output(self, context: str | None) -> str:
        if not context:
            return ""
        specific = {"hookEventName": self.event, "additionalContext": context}
        return json.dumps({"hookSpecificOutput": specific})  # ASCII, whatever stdout encodes

    def post(self, path: str, body: dict[str, Any]) -> Answer:
        assert self.config is not None
        assert self.server is not None
        timeout = min(self.budget.request, self.left())
        return self.server.request(
            "POST", path, timeout=timeout, payload=body, token=self.config.token
        )

    def save(self, path: Path, state: SessionState) -> None:
        try:
            save_state(path, state)
        except OSError as error:
            self.log.warning(f"cannot save the session's state in {path}: {error.strerror}")


def with_line(context: str | None, line: str) -> str:
    """The context with one more line inside its last marker block (in a block of its own
    when it has none)."""
    if context and context.rstrip().endswith(MARKER_CLOSE):
        head = context.rstrip()[: -len(MARKER_CLOSE)].rstrip("\n")
        return f"{head}\n{line}\n{MARKER_CLOSE}"
    block = f"{MARKER_OPEN}\n{line}\n{MARKER_CLOSE}"
    return f"{context}\n{block}" if context else block


class _Refused(Exception):
    """The server answered with an error; `notice` is for the user ("" for none)."""

    def __init__(self, notice: str) -> None:
        super().__init__(notice)
        self.notice = notice
