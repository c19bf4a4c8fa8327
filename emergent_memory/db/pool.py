"""The connection pool, which tells a database that is down from one that is busy."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

from emergent_memory.db.connection import APPLICATION_NAME
from emergent_memory.errors import DatabaseUnavailable, ServiceBusy

logger = logging.getLogger(__name__)

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

    def get_stats(self) -> dict[str, int]:
        """psycopg_pool's statistics, with `pool_lent`: the connections handed out and not yet
        given back (pool_size - pool_available would also count those still being opened,
        such as the attempts on a database that is down)."""
        stats = super().get_stats()
        with self._lent_lock:
            stats["pool_lent"] = max(0, self._lent)
        return stats

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


STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', %(milliseconds)s, true)"


@contextmanager
def quick_transaction(
    pool: ConnectionPool[psycopg.Connection[Any]], seconds: float
) -> Iterator[psycopg.Connection[Any]]:
    """A transaction that waits at most `seconds` for a connection and whose statements are
    cancelled after `seconds` (what /metrics reads at scrape time). The pool's own errors
    (PoolTimeout, OperationalError) pass through: the caller drops what it was reading."""
    with pool.connection(timeout=seconds) as conn, conn.transaction():
        conn.execute(STATEMENT_TIMEOUT, {"milliseconds": str(max(1, round(seconds * 1000)))})
        yield conn


# What a request is told when the connection it held went away mid-request.
LOST_CONNECTION = (
    "lost the database connection during this request (the database restarted or is "
    "unreachable); try again in a moment"
)


@contextmanager
def transaction(
    pool: ConnectionPool[psycopg.Connection[Any]], *, lost: str = LOST_CONNECTION
) -> Iterator[psycopg.Connection[Any]]:
    """A pooled connection in one transaction: committed on success, else rolled back.

    The one place where the pool's failures become domain errors: every connection in use for
    the pool's whole timeout is ServiceBusy; a database that is down is DatabaseUnavailable
    (raised by DatabasePool itself, which probes it); a connection lost mid-request is
    DatabaseUnavailable with `lost` as its message. Other errors pass through.
    """
    conn: psycopg.Connection[Any] | None = None
    try:
        with pool.connection() as conn, conn.transaction():
            yield conn
    except PoolTimeout as error:
        raise ServiceBusy(
            f"the memory server is busy: no database connection became free within "
            f"{pool.timeout:g} s (all are in use); try again in a moment"
        ) from error
    except psycopg.OperationalError as error:
        if conn is not None and conn.broken:  # the server went away mid-request
            raise DatabaseUnavailable(lost) from error
        raise
