"""The Claude Code plugin's first session: the hooks file made without the user's help.

Installed as a plugin, the hooks come from the plugin (Claude Code gives its hooks
CLAUDE_PLUGIN_ROOT) and nobody ran `emergent-memory hooks install`, so the first SessionStart
finds no hooks file, hence no token. It then starts `hook Setup` detached: that run writes the
hooks file as `hooks install --no-settings` does (a token of the local actor with the hooks'
scopes; the embedded database is started and migrated first, as `hooks install` does), then
starts the HTTP server as SessionStart would. The session start waits for the file a bounded
time; a setup that takes longer (the very first start of the embedded database) finishes in
the background, and the session says so in its context.

Only then: a plugin's hook, no EMERGENT_MEMORY_HOOK_TOKEN, and no hooks file at all. A hooks file
the user wrote or `hooks install` wrote is never replaced here, whatever it holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from emergent_memory.hooks.config import (
    TOKEN_VARIABLE,
    ConfigProblem,
    hooks_file_path,
    load_config,
)
from emergent_memory.hooks.log import HookLog
from emergent_memory.hooks.state import hooks_dir, locked, write_atomically

SETUP_EVENT = "Setup"  # not Claude Code's: the detached run that writes the hooks file
PLUGIN_VARIABLE = "CLAUDE_PLUGIN_ROOT"  # set by Claude Code for a plugin's hooks
INSTALL_SECONDS = 240.0  # `hooks install --no-settings`, a first initdb and migration included
RETRY_SECONDS = 600.0  # a failed setup is not tried again before this


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether this hook should set the hooks up: a plugin's hook with no token anywhere."""
    return (
        bool(environ.get(PLUGIN_VARIABLE))
        and not environ.get(TOKEN_VARIABLE)
        and not hooks_file_path(environ).exists()
    )


def _lock(data_dir: Path) -> Path:
    return hooks_dir(data_dir) / "setup.lock"


def _failure(data_dir: Path) -> Path:
    return hooks_dir(data_dir) / "setup-failed.json"


def failed_recently(data_dir: Path) -> str | None:
    """Why the last setup failed, when it failed less than RETRY_SECONDS ago (the session
    says so at once, instead of waiting for a setup that fails again); None otherwise."""
    try:
        failed = json.loads(_failure(data_dir).read_bytes())
        at, status = float(failed["at"]), int(failed["status"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not 0 <= time.time() - at < RETRY_SECONDS:
        return None
    return (
        f"emergent-memory's first-time setup failed (exit status {status}); run `emergent-memory "
        "hooks install --no-settings` to see why (it is tried again at a session start 10 "
        "minutes after it failed)"
    )


def start(environ: Mapping[str, str], data_dir: Path, log: HookLog) -> bool:
    """Start the detached setup run unless one runs already; False when it cannot start."""
    from emergent_memory.hooks import autostart

    with locked(_lock(data_dir), wait=0) as free:
        if not free:
            return True  # a setup run holds the lock: it is under way
    command = [sys.executable, "-m", "emergent_memory", "hook", SETUP_EVENT]
    try:
        autostart.spawn_detached(command, data_dir, environ, b"{}")
    except OSError as error:
        log.error(f"cannot start the first-time setup: {error.strerror}")
        return False
    log.warning("no hooks file yet (the plugin's first session): first-time setup started")
    return True


def wait_for_token(environ: Mapping[str, str], deadline: float) -> bool:
    """Wait until the hooks file holds a token, or `deadline` (time.monotonic())."""
    path = hooks_file_path(environ)
    while True:
        if path.exists():
            try:
                if load_config(environ).token:
                    return True
            except ConfigProblem:  # half written, or not yet private: look again
                pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def run(environ: Mapping[str, str], data_dir: Path, log: HookLog) -> None:
    """The setup run: write the hooks file, then start the server it names (if local)."""
    with locked(_lock(data_dir), wait=0) as have:
        if not have:
            return  # another setup run is under way
        if hooks_file_path(environ).exists():
            return  # made meanwhile (by the other run, or by `hooks install`)
        command = [sys.executable, "-m", "emergent_memory", "hooks", "install", "--no-settings"]
        try:
            done = subprocess.run(  # noqa: S603 - our own command, no shell
                command,
                env=dict(environ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=INSTALL_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            log.error(f"first-time setup failed: {type(error).__name__}")
            _note_failure(data_dir, -1)
            return
        if done.returncode != 0:
            log.error(
                f"first-time setup failed (exit status {done.returncode}): run "
                "`emergent-memory hooks install --no-settings` to see why"
            )
            _note_failure(data_dir, done.returncode)
            return
        log.warning("first-time setup wrote the hooks file")
        _failure(data_dir).unlink(missing_ok=True)
    _start_server(environ, data_dir, log)


def _note_failure(data_dir: Path, status: int) -> None:
    try:  # noqa: SIM105 - contextlib would be imported for this alone
        write_atomically(
            _failure(data_dir), json.dumps({"at": time.time(), "status": status}).encode()
        )
    except OSError:
        pass


def _start_server(environ: Mapping[str, str], data_dir: Path, log: HookLog) -> None:
    from emergent_memory.hooks import autostart
    from emergent_memory.hooks.client import Server

    try:
        config = load_config(environ)
        server = Server.from_url(config.url)
    except (ConfigProblem, ValueError) as error:  # the next session start reports it
        log.warning(f"after setup, the server was not started: {type(error).__name__}")
        return
    if not server.is_loopback:
        return
    command = list(config.start_command or autostart.default_start_command(server, environ))
    autostart.ensure_server(server, command, data_dir, log, time.monotonic())
