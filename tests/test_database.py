"""The embedded server and the connection pool."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pgvector import Vector
from psycopg import sql
from psycopg_pool import PoolTimeout
from psycopg_pool.pool import AddConnection

from emergent_memory.auth.principal import Principal
from emergent_memory.db import pool as pool_module
from emergent_memory.db.connection import open_database, with_role
from emergent_memory.db.pool import RECONNECT_DELAY_MAX, DatabasePool, create_pool, lost_connection
from emergent_memory.errors import DatabaseUnavailable
from emergent_memory.memory import MemoryConfig, MemoryService
from tests.embedders import BagOfWordsEmbedder
from tests.helpers import outage_role_url, set_login, wait_until


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="emd-", dir="/tmp"))  # short: holds the socket
    yield path
    shutil.rmtree(path, ignore_errors=True)


def server_pid(pgdata: Path) -> int | None:
    pid_file = pgdata / "postmaster.pid"
    return int(pid_file.read_text().split()[0]) if pid_file.exists() else None


def test_embedded_server_is_reused_across_runs_and_stopped_after_each(data_dir: Path) -> None:
    import psycopg

    with open_database(None, data_dir) as db:
        assert db.embedded
        assert db.pgdata == data_dir / "pgdata"
        with psycopg.connect(db.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (note text)")
            conn.execute("INSERT INTO kept VALUES ('still here')")
    assert server_pid(data_dir / "pgdata") is None  # stopped cleanly: no postmaster.pid left

    with open_database(None, data_dir) as db, psycopg.connect(db.url) as conn:
        assert conn.execute("SELECT note FROM kept").fetchall() == [("still here",)]
        assert conn.execute("SELECT current_database()").fetchone() == ("emergent_memory",)


def test_nested_use_in_one_process_keeps_the_server_until_the_last_user_leaves(
    data_dir: Path,
) -> None:
    import psycopg

    with open_database(None, data_dir) as outer:
        with open_database(None, data_dir) as inner:
            assert inner.url == outer.url
        with psycopg.connect(outer.url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert server_pid(data_dir / "pgdata") is None


def test_a_configured_url_is_used_as_is(data_dir: Path) -> None:
    url = "postgresql://someone@db.example:5432/memory"
    with open_database(url, data_dir) as db:
        assert db.url == url
        assert not db.embedded
    assert not (data_dir / "pgdata").exists()  # no embedded server was started


def test_an_unusable_data_dir_is_a_clear_error(data_dir: Path) -> None:
    blocker = data_dir / "file"
    blocker.write_text("not a directory")
    with (
        pytest.raises(DatabaseUnavailable, match="could not start the embedded PostgreSQL"),
        open_database(None, blocker / "sub"),
    ):
        pass


def test_pool_connections_know_the_vector_type(database_url: str) -> None:
    pool = create_pool(database_url, min_size=1, max_size=2, timeout=30)
    try:
        with pool.connection() as conn:
            row = conn.execute("SELECT '[1,2,3]'::vector").fetchone()
            assert row == (Vector([1.0, 2.0, 3.0]),)
            echoed = conn.execute("SELECT %s::vector", (Vector([0.5, 0.25]),)).fetchone()
            assert echoed == (Vector([0.5, 0.25]),)
    finally:
        pool.close()


def test_pool_on_an_unreachable_database_fails_clearly(data_dir: Path) -> None:
    url = f"postgresql://postgres@/nowhere?host={data_dir}&connect_timeout=1"
    with pytest.raises(DatabaseUnavailable, match="could not connect to the database within"):
        create_pool(url, min_size=1, max_size=1, timeout=1)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://postgres:@/db?host=/tmp/x", "postgresql://app:p%40ss@/db?host=/tmp/x"),
        ("postgresql://owner:secret@h:5432/db", "postgresql://app:p%40ss@h:5432/db"),
        (
            "host=/tmp dbname=db user=postgres password=old",
            "user=app dbname=db host=/tmp password=p@ss",
        ),
    ],
)
def test_with_role_swaps_the_login_and_drops_the_old_password(url: str, expected: str) -> None:
    swapped = with_role(url, "app", "p@ss")
    assert psycopg.conninfo.conninfo_to_dict(swapped) == psycopg.conninfo.conninfo_to_dict(expected)
    assert "secret" not in with_role(url, "app")
    assert "old" not in with_role(url, "app")


def test_the_server_and_its_children_never_hold_the_locks(data_dir: Path) -> None:
    """The lock descriptors are not inherited: PostgreSQL (started by pg_ctl from this
    process) and other child processes (psql) do not hold them, so they never keep the server
    registered after this process leaves (it is stopped: no postmaster.pid)."""
    locks = {str(data_dir / "pgdata.control.lock"), str(data_dir / "pgdata.users.lock")}
    with open_database(None, data_dir):
        postmaster = server_pid(data_dir / "pgdata")
        assert postmaster is not None
        with subprocess.Popen(["sleep", "30"], close_fds=False) as child:
            try:
                for pid in (postmaster, child.pid):
                    held = open_files(pid) & locks
                    assert held == set(), f"process {pid} holds {held}"
            finally:
                child.kill()
        assert str(data_dir / "pgdata.users.lock") in open_files(os.getpid())  # registered
    assert server_pid(data_dir / "pgdata") is None


def open_files(pid: int) -> set[str]:
    """The paths a process has open (Linux)."""
    paths = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed meanwhile
            paths.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return paths


OUTAGE_ROLE = "emergent_memory_test_outage"


@pytest.fixture
def outage_url(database_url: str) -> Iterator[str]:
    """The session database as a login role of its own, which a test may lock out (NOLOGIN,
    its connections terminated): for the pool, the database is then down. Let in again, and
    its connection limit lifted, at the end."""
    yield outage_role_url(database_url, OUTAGE_ROLE)
    set_login(database_url, OUTAGE_ROLE, allowed=True)
    set_connection_limit(database_url, -1)


def set_connection_limit(owner_url: str, limit: int) -> None:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(
                sql.Identifier(OUTAGE_ROLE), sql.Literal(limit)
            )
        )


def outage_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the database module logged (psycopg_pool's own records are the CLI's to tune)."""
    return [record for record in caplog.records if record.name == "emergent_memory.db.pool"]


def test_a_database_that_is_down_is_reported_at_once_and_used_again_when_back(
    database_url: str, outage_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """While the database cannot be reached, requests fail at once (none waits in the pool's
    queue for its 30 s timeout) with DatabaseUnavailable, "database unavailable", not "busy";
    the health probe says so. Once it is back, the next request succeeds. The outage is logged
    once when it starts and once when it ends, and no more."""
    pool = create_pool(outage_url, min_size=2, max_size=4, timeout=30)
    service = MemoryService(pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8))
    me = Principal(uuid.uuid4(), uuid.uuid4())
    try:
        service.save(me, "The outage drill is on Fridays", "fact")
        with caplog.at_level(logging.WARNING, logger="emergent_memory.db.pool"):
            set_login(database_url, OUTAGE_ROLE, allowed=False)
            queued = pool.get_stats().get("requests_queued", 0)
            for _ in range(3):
                with pytest.raises(DatabaseUnavailable, match=r"^database unavailable: "):
                    service.recall(me, "outage drill")
            assert pool.get_stats().get("requests_queued", 0) == queued  # none waited
            assert not pool.database_reachable()

            set_login(database_url, OUTAGE_ROLE, allowed=True)
            # succeeds, not "busy" after the pool's timeout: the pool has a connection again.
            # How soon it reconnects (the recovery bound) is counted, not timed, by
            # test_the_pool_tries_to_reconnect_at_most_a_second_apart.
            found = service.recall(me, "outage drill")["memories"]
            assert [m["content"] for m in found] == ["The outage drill is on Fridays"]
            assert pool.database_reachable()
        messages = [record.getMessage() for record in outage_records(caplog)]
        assert len(messages) == 2, messages
        assert messages[0].startswith("the database is unavailable (")
        assert messages[1] == "the database is reachable again"
        assert all(record.exc_info is None for record in outage_records(caplog))
    finally:
        pool.close()


def test_a_pool_whose_connections_are_all_in_use_is_busy_without_a_probe(
    database_url: str, outage_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every connection of a full pool is lent: a request that waits in vain is told busy
    (PoolTimeout) without probing the database, so that a probe that would fail (here: new
    connections of the role are refused, its open one is kept) does not turn busy into an
    outage."""
    pool = create_pool(outage_url, min_size=1, max_size=1, timeout=30)
    try:
        with caplog.at_level(logging.WARNING, logger="emergent_memory.db.pool"):
            with pool.connection() as held:
                set_login(database_url, OUTAGE_ROLE, allowed=False, cut=False)
                with pytest.raises(PoolTimeout):
                    pool.getconn(timeout=0.5)
                assert held.execute("SELECT 1").fetchone() == (1,)
            assert outage_records(caplog) == []
    finally:
        pool.close()


def test_a_database_with_too_many_connections_is_busy_not_down(
    database_url: str, outage_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The pool cannot grow because the database refuses more connections (SQLSTATE 53300,
    here the role's connection limit): requests are told busy (PoolTimeout), not "database
    unavailable"; the health check finds it up; no outage is logged."""
    pool = create_pool(outage_url, min_size=1, max_size=2, timeout=30)
    try:
        with caplog.at_level(logging.WARNING, logger="emergent_memory.db.pool"):
            with pool.connection():
                set_connection_limit(database_url, 1)  # the connection held is the one allowed
                with pytest.raises(PoolTimeout):
                    pool.getconn(timeout=0.5)
                assert pool.database_reachable()
            assert outage_records(caplog) == []
    finally:
        pool.close()


def test_the_health_check_never_waits_for_a_probe_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While a probe runs (here one that hangs: a port where nothing ever answers, until the
    test closes it), the health check answers at once with the last answer; the probe's own
    answer (down) is kept."""
    # The probe ends when the test closes the port, not after its own PROBE_TIMEOUT (2 s),
    # which a loaded machine could spend before the health check below is even asked (a
    # health check that waited for the probe would still get its answer, down, in a minute).
    monkeypatch.setattr(pool_module, "PROBE_TIMEOUT", 60)
    with ThreadPoolExecutor(1) as executor:
        with socket.socket() as silent:  # the kernel accepts connections; nothing answers
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            url = f"postgresql://nobody@127.0.0.1:{silent.getsockname()[1]}/nothing"
            pool = DatabasePool(url, min_size=1, max_size=1, timeout=1)
            probing = executor.submit(pool.database_reachable)
            wait_until(
                lambda: bool(select.select([silent], [], [], 0)[0]), 60, "the probe connected"
            )
            assert pool.database_reachable()  # the answer before the probe: not known down
            assert not probing.done()
        # closed: the connection the probe waits on is reset, so the probe fails now
        assert probing.result(timeout=60) is False
    assert pool.database_reachable() is False  # down: the probe's answer is kept


def test_the_pool_tries_to_reconnect_at_most_a_second_apart(data_dir: Path) -> None:
    """psycopg_pool doubles the wait between attempts to open a connection (1, 2, 4... 64 s):
    after a long outage the pool would come back a minute after the database. With no server
    at its URL, the delays the pool schedules between attempts stop at RECONNECT_DELAY_MAX."""
    pool = DatabasePool(
        f"postgresql://postgres@/nowhere?host={data_dir}", min_size=1, max_size=1, timeout=1
    )
    delays: list[float] = []
    schedule = pool.schedule_task

    def record(task: Any, delay: float) -> None:
        if isinstance(task, AddConnection):
            delays.append(delay)
            delay = 0  # the test need not wait for the attempts
        schedule(task, delay)

    pool.schedule_task = record  # type: ignore[method-assign]
    pool.open(wait=False)
    try:
        wait_until(lambda: len(delays) >= 8, 60, "eight attempts to connect failed")
    finally:
        pool.close()
    assert 0.8 < delays[0] <= RECONNECT_DELAY_MAX  # psycopg_pool's first: 1 s, +-10%
    assert max(delays) == RECONNECT_DELAY_MAX  # doubling, the eighth would be 128 s


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (psycopg.OperationalError("consuming input failed: server closed the connection"), True),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True),
        (psycopg.errors.ConnectionFailure("connection failure"), True),
        (psycopg.errors.DiskFull("could not extend file"), False),
        (psycopg.errors.OutOfMemory("out of memory"), False),
        (psycopg.errors.DeadlockDetected("deadlock detected"), False),
        (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), False),
        (psycopg.errors.UniqueViolation("duplicate key"), False),
        (ValueError("not a database error"), False),
    ],
)
def test_only_a_lost_connection_counts_as_the_database_going_away(
    error: Exception, lost: bool
) -> None:
    """What the embedding worker treats as the database being away (one quiet line, retried)
    rather than a failure worth a traceback (a full disk, a deadlock...)."""
    assert lost_connection(error) is lost
