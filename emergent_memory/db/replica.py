"""The read replica's pool: reads on a streaming standby, or on the primary while it is down or
behind."""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any, Literal, TypedDict

import psycopg

from emergent_memory.db.connection import APPLICATION_NAME
from emergent_memory.db.pool import DatabasePool, one_line
from emergent_memory.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

# While the replica is down, reads go to the primary without trying it; a read tries it again
# after this many seconds (the health check, which probes it at most once a second, brings
# reads back to it as soon as it answers).
DOWN_RETRY_INTERVAL = 10.0
# A read measures the replica's lag at most this often (one query on the connection it got);
# while the replica is behind, reads go to the primary and the lag is measured again after
# this long.
LAG_CHECK_INTERVAL = 1.0

# How many seconds the standby's replay is behind the primary: 0 when it has replayed all the
# WAL it received (or is not a standby at all), else the age of the last transaction it
# replayed. It overstates the lag when the primary had been idle (the last replayed commit is
# old): reads then go to the primary for a moment, which is safe.
# And whether it streams from the primary: a standby that stopped receiving has replayed all
# it received, so its lag alone reads 0 while it serves ever staler reads. Its WAL receiver
# must be running (a row of pg_stat_wal_receiver) and, where the role may read it (superuser,
# pg_read_all_stats or pg_monitor), streaming; a role without those privileges sees the
# receiver's row with its status hidden (NULL), so for it a running receiver counts.
REPLAY_LAG = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0.0
    WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0.0
    ELSE coalesce(
        extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0.0
    )
END::float8,
NOT pg_is_in_recovery() OR EXISTS (
    SELECT 1 FROM pg_stat_wal_receiver WHERE status IS NULL OR status = 'streaming'
)
"""


def serves_reads(lag: float, streaming: bool, max_lag: float) -> bool:
    """Whether a replica measured so may serve reads: it streams from the primary and its
    replay is at most `max_lag` seconds behind."""
    return streaming and lag <= max_lag


ReplicaState = Literal["ok", "unavailable", "lagging"]


class ReplicaHealth(TypedDict):
    """What /health says of the read replica."""

    status: ReplicaState
    lag_seconds: float | None


class ReplicaPool(DatabasePool):
    """The pool of a read replica (EMERGENT_MEMORY_READ_DATABASE_URL), which never fails a read
    because of the replica: a read it cannot serve is served by the primary's pool.

    - Every transaction on it is read-only (`BEGIN READ ONLY`), on the replica and on the
      primary alike, so a read path that would write fails in tests without a replica too.
    - The replica down (DatabasePool's probe finds it unreachable): the read gets a connection
      of the primary instead, the outage is logged once (WARNING), and reads go to the primary
      for DOWN_RETRY_INTERVAL seconds before one tries the replica again (or the health check
      finds it back). A read in flight when the replica goes away fails once with "lost the
      database connection" like any other; the next one goes to the primary.
    - The replica behind: at most every LAG_CHECK_INTERVAL seconds a read measures its replay
      lag (REPLAY_LAG); above `max_lag` seconds, or when it does not stream from the primary
      (cut off, it would read 0 behind forever), reads go to the primary until a later
      measure finds it caught up (logged once each way).
    - A busy replica (every connection in use for the pool's timeout) is busy, as for the
      primary: "the memory server is busy".

    The primary's connections it lends are given back to the primary's pool.
    """

    def __init__(
        self,
        url: str,
        *,
        primary: DatabasePool,
        max_lag: float,
        min_size: int,
        max_size: int,
        timeout: float,
    ) -> None:
        super().__init__(url, min_size=min_size, max_size=max_size, timeout=timeout)
        self.name = APPLICATION_NAME + "-read"
        self._primary = primary
        self._max_lag = max_lag
        self._route_lock = threading.Lock()
        self._avoiding: Literal["down", "lagging"] | None = None  # why reads go to the primary
        self._avoid_until = -math.inf  # ... until then
        self._lag_lock = threading.Lock()  # one lag measure at a time
        self._lag_checked_at = -math.inf
        self._lag: float | None = None  # the last measure
        self._streaming = True  # ... and whether the replica streamed from the primary then
        self._borrowed: set[int] = set()  # ids of the primary's connections lent by this pool
        self.reads_on_replica = 0  # connections handed out, by where they came from
        self.reads_on_primary = 0

    @property
    def primary(self) -> DatabasePool:
        return self._primary

    def getconn(self, timeout: float | None = None) -> psycopg.Connection[Any]:
        with self._route_lock:
            on_primary = time.monotonic() < self._avoid_until
        if on_primary:
            return self._from_primary(timeout)
        try:
            conn = super().getconn(timeout)
        except DatabaseUnavailable:
            self._avoid("down", DOWN_RETRY_INTERVAL)
            return self._from_primary(timeout)
        try:
            conn.read_only = True
            lag = self._measure_lag(conn)
        except psycopg.Error as error:  # the connection failed under the measure
            logger.warning("could not measure the read replica's lag: %s", one_line(error))
            super().putconn(conn)
            return self._from_primary(timeout)
        if lag is not None and not serves_reads(lag, self._streaming, self._max_lag):
            super().putconn(conn)
            self._avoid("lagging", LAG_CHECK_INTERVAL, lag)
            return self._from_primary(timeout)
        if lag is None and self._lagging():
            super().putconn(conn)  # behind at the last measure, and another read measures it
            return self._from_primary(timeout)
        self._serving()
        with self._route_lock:
            self.reads_on_replica += 1
        return conn

    def putconn(self, conn: psycopg.Connection[Any]) -> None:
        with self._route_lock:
            borrowed = id(conn) in self._borrowed
            self._borrowed.discard(id(conn))
        if borrowed:
            try:
                if not conn.broken and not conn.closed:
                    conn.rollback()  # `connection()` ended the transaction: then a no-op
                    conn.read_only = None
            except psycopg.Error:
                conn.close()  # never a read-only connection back in the primary's pool
            finally:
                self._primary.putconn(conn)
        else:
            super().putconn(conn)

    def start(self) -> None:
        """Open the pool without waiting for the replica, after one probe of it: a replica
        that is down when the server starts is logged as such, and reads go to the primary
        at once instead of waiting for a connection first."""
        with self._probe_lock:
            self._record(self._probe())
        self.open(wait=False)

    def get_stats(self) -> dict[str, int]:
        """DatabasePool's statistics, with `replica_up`: 1 while reads go to the replica as
        far as this pool knows (the last probe reached it and it was not found behind), 0
        while they go to the primary. From the state reads and the health check left, never
        a query of its own."""
        stats = super().get_stats()
        with self._route_lock:
            avoiding = self._avoiding
        stats["replica_up"] = int(not self._down and avoiding is None)
        return stats

    def health(self) -> ReplicaHealth:
        """The replica's state for the health check: unavailable (reads go to the primary),
        lagging (idem), or ok; with the last lag measured. A probe of at most a few seconds
        (DatabasePool.database_reachable)."""
        if not self.database_reachable():
            return {"status": "unavailable", "lag_seconds": None}
        return {"status": "lagging" if self._lagging() else "ok", "lag_seconds": self._lag}

    # -- routing ------------------------------------------------------------------------------

    def _from_primary(self, timeout: float | None) -> psycopg.Connection[Any]:
        conn = self._primary.getconn(timeout)
        try:
            conn.read_only = True
        except BaseException:
            self._primary.putconn(conn)
            raise
        with self._route_lock:
            self._borrowed.add(id(conn))
            self.reads_on_primary += 1
        return conn

    def _measure_lag(self, conn: psycopg.Connection[Any]) -> float | None:
        """The replica's replay lag in seconds, measured on `conn` if no measure is due
        (None: not measured now); with whether it streams (REPLAY_LAG) in `_streaming`."""
        if time.monotonic() - self._lag_checked_at < LAG_CHECK_INTERVAL:
            return None
        if not self._lag_lock.acquire(blocking=False):
            return None  # another read measures it
        try:
            row = conn.execute(REPLAY_LAG).fetchone()
            conn.rollback()
            self._lag = None if row is None else float(row[0])
            self._streaming = row is None or bool(row[1])
            self._lag_checked_at = time.monotonic()
            return self._lag
        finally:
            self._lag_lock.release()

    def _avoid(
        self, reason: Literal["down", "lagging"], seconds: float, lag: float | None = None
    ) -> None:
        """Send reads to the primary for `seconds`; log when this starts."""
        with self._route_lock:
            started = self._avoiding != reason
            self._avoiding = reason
            self._avoid_until = time.monotonic() + seconds
        if started and reason == "lagging" and not self._streaming:
            logger.warning(
                "the read replica is not streaming from the primary (its WAL receiver is not "
                "running or not streaming): reads go to the primary until it streams again"
            )
        elif started and reason == "lagging":
            logger.warning(
                "the read replica is %.1f s behind the primary (more than %g s): reads go to "
                "the primary until it catches up",
                lag or 0.0,
                self._max_lag,
            )

    def _lagging(self) -> bool:
        with self._route_lock:
            return self._avoiding == "lagging"

    def _serving(self) -> None:
        """The replica serves a read: log when it caught up after lagging."""
        with self._route_lock:
            was = self._avoiding
            self._avoiding = None
            self._avoid_until = -math.inf
        if was == "lagging":
            logger.warning("the read replica caught up with the primary: reads go to it again")

    def _record(self, error: Exception | None) -> None:
        """DatabasePool's record of a probe, with the replica's own messages; a probe that
        finds it back (a read's, or the health check's) sends reads to it again."""
        self._probed_at = time.monotonic()
        if error is not None and not self._down:
            logger.warning(
                "the read replica is unavailable (%s); reads go to the primary database until "
                "it is back",
                one_line(error),
            )
        elif error is None and self._down:
            logger.warning("the read replica is reachable again; reads go to it")
            with self._route_lock:
                if self._avoiding == "down":
                    self._avoiding = None
                    self._avoid_until = -math.inf
        self._down = error is not None


def create_replica_pool(
    url: str,
    *,
    primary: DatabasePool,
    max_lag: float,
    min_size: int = 1,
    max_size: int = 10,
    timeout: float = 10.0,
) -> ReplicaPool:
    """An open ReplicaPool beside the primary's pool. It does not wait for the replica: a
    replica that is down when the server starts serves nothing until it answers (reads go to
    the primary meanwhile)."""
    pool = ReplicaPool(
        url,
        primary=primary,
        max_lag=max_lag,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
    )
    pool.start()
    return pool
