"""The embedded server and the connection pool."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pgvector import Vector

from emergent_memory.database import create_pool, open_database, with_role
from emergent_memory.errors import DatabaseUnavailable


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
    pool = create_pool(database_url, min_size=1, max_size=2, timeout=5)
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
