"""Starting the local server when SessionStart finds nothing listening on a loopback URL.

The server is started detached (a session of its own, standard input from /dev/null, its
output appended to `<data dir>/logs/server.log`), so it outlives the hook and Claude Code's
timeout cannot kill it. A lock file and a marker of the last start keep two sessions that
start at once from starting two servers. Then the hook waits a bounded time for /health.
`spawn_detached` starts the run that sends a project's backlog the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from emergent_memory.hooks.client import Server
from emergent_memory.hooks.log import HookLog
from emergent_memory.hooks.state import hooks_dir, locked, write_atomically

# A start younger than this, by a process still alive, is not repeated: the server it
# started is still coming up.
RECENT_START_SECONDS = 120.0


class StartOutcome:
    """How the start went (a plain class, as the others a hook loads: dataclasses would cost
    it several ms to import)."""

    __slots__ = ("healthy", "pending", "problem", "started")

    def __init__(self, started: bool, healthy: bool, problem: str, pending: bool = False) -> None:
        self.started = started  # this hook run started the server
        self.healthy = healthy  # /health answered 200 in time
        self.problem = problem  # why not healthy: for the log and the notice ("" when healthy)
        self.pending = pending  # not healthy yet, but a server was started and is coming up


def server_log_path(data_dir: Path) -> Path:
    return data_dir / "logs" / "server.log"


def default_start_command(server: Server, environ: Mapping[str, str] = os.environ) -> list[str]:
    """`emergent-memory serve` over HTTP on the URL's address (in the hook's environment,
    which the server inherits), migrating the schema of the embedded database (the user's
    own) but never of a configured EMERGENT_MEMORY_DATABASE_URL: a hook must not migrate a
    shared database; a server refused for its schema says so in the server log."""
    migrate = [] if environ.get("EMERGENT_MEMORY_DATABASE_URL") else ["--migrate"]
    return [
        sys.executable,
        "-m",
        "emergent_memory",
        "serve",
        "--transport",
        "http",
        "--host",
        server.host,
        "--port",
        str(server.port),
        *migrate,
    ]


def ensure_server(
    server: Server,
    command: list[str],
    data_dir: Path,
    log: HookLog,
    deadline: float,
) -> StartOutcome:
    """Start the server unless it runs or another hook started it a moment ago, then wait
    for /health until `deadline` (time.monotonic())."""
    process: subprocess.Popen[bytes] | None = None
    marker = hooks_dir(data_dir) / "server-start.json"
    with locked(hooks_dir(data_dir) / "server-start.lock", wait=_left(deadline) / 3) as have:
        if have and not server.healthy(min(0.5, _left(deadline))):
            if _recent_start(marker):
                log.info("the server is being started by another hook; waiting for it")
            else:
                try:
                    process = _spawn(command, data_dir)
                except OSError as error:
                    problem = f"its start command failed: {error.strerror or type(error).__name__}"
                    log.error(f"could not start the server ({command[0]}): {problem}")
                    return StartOutcome(False, False, problem)
                log.info(f"started the server (pid {process.pid}): {' '.join(command)}")
                started = {"pid": process.pid, "at": time.time()}
                try:
                    write_atomically(marker, json.dumps(started).encode())
                except OSError as error:
                    log.warning(f"cannot write {marker}: {error.strerror}")
    while _left(deadline) > 0:
        if server.healthy(min(0.5, _left(deadline))):
            return StartOutcome(process is not None, True, "")
        status = None if process is None else process.poll()
        if status:  # a command that exits 0 may have started a service: keep waiting
            problem = f"it exited with status {status}"
            log.error(f"the server stopped at once ({problem}); see its log")
            return StartOutcome(True, False, problem)
        time.sleep(min(0.1, max(0.0, _left(deadline))))
    # started by this run, or by another hook (which held the lock, or did a moment ago)
    log.warning("the server did not answer /health in time")
    return StartOutcome(process is not None, False, "it did not answer in time", pending=True)


def _left(deadline: float) -> float:
    return deadline - time.monotonic()


# The servers this process started: the hook does not wait for them, and keeping their
# handles spares it Popen's "still running" warning when a handle is collected.
STARTED: list[subprocess.Popen[bytes]] = []


def _spawn(command: list[str], data_dir: Path) -> subprocess.Popen[bytes]:
    log_path = server_log_path(data_dir)
    log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    output = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        process = subprocess.Popen(  # noqa: S603 - the configured start command, no shell
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            cwd=data_dir,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(output)
    STARTED.append(process)
    return process


def spawn_detached(
    command: list[str], data_dir: Path, environ: Mapping[str, str], payload: bytes
) -> int:
    """Start `command` detached as the server is (a session of its own, in the data
    directory, never holding the hook's output), `payload` on its standard input and its
    output discarded; its pid. Raises OSError."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    process = subprocess.Popen(  # noqa: S603 - our own hook command, no shell
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=data_dir,
        env=dict(environ),
        start_new_session=True,
        close_fds=True,
    )
    STARTED.append(process)
    assert process.stdin is not None
    try:
        process.stdin.write(payload)  # a few bytes: the pipe holds them at once
        process.stdin.close()
    except OSError:  # it ended already: its log says why
        pass
    return process.pid


def _recent_start(marker: Path) -> bool:
    try:
        started = json.loads(marker.read_bytes())
        pid, at = int(started["pid"]), float(started["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return time.time() - at < RECENT_START_SECONDS and _alive(pid)


def _alive(pid: int) -> bool:
    if os.name != "posix":  # pragma: no cover
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
