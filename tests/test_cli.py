"""The `emergent-memory` command, run as a real process on the embedded server and on a URL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from alembic.script import ScriptDirectory

from emergent_memory.db import migrate
from emergent_memory.resources import migrations_dir
from tests.helpers import wait_until

HEAD = migrate.head_revision()
COMMAND = [sys.executable, "-m", "emergent_memory"]


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    return subprocess.run(
        [*COMMAND, *args],
        env=base | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def embedded_env() -> Iterator[dict[str, str]]:
    data_dir = Path(tempfile.mkdtemp(prefix="emc-", dir="/tmp"))  # short: holds the socket
    yield {"EMERGENT_MEMORY_DATA_DIR": str(data_dir)}
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def url_env(make_database: Callable[[], str]) -> dict[str, str]:
    return {"EMERGENT_MEMORY_DATABASE_URL": make_database()}


@pytest.fixture(params=["embedded", "url"])
def env(request: pytest.FixtureRequest) -> dict[str, str]:
    fixture = "embedded_env" if request.param == "embedded" else "url_env"
    return dict(request.getfixturevalue(fixture))


def test_db_commands_migrate_report_and_connect(env: dict[str, str]) -> None:
    refused = run("status", env=env)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: the database is not migrated yet")
    assert "emergent-memory db upgrade" in refused.stderr

    assert run("db", "current", env=env).stdout == f"base (not migrated; head is {HEAD})\n"
    upgraded = run("db", "upgrade", env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout == f"upgraded database from base to {HEAD}\n"
    assert run("db", "upgrade", env=env).stdout == f"database already at {HEAD}; nothing to do\n"
    assert run("db", "current", env=env).stdout == f"{HEAD} (head)\n"

    packs = run(
        "db",
        "psql",
        "--",
        "-At",
        "-c",
        "select name || ' ' || version from kb.template_packs order by version",
        env=env,
    )
    assert (packs.returncode, packs.stdout) == (
        0,
        "agent-memory 1.0.0\nagent-memory 1.1.0\nagent-memory 1.2.0\nagent-memory 1.3.0\n",
    )

    status = run("status", env=env)
    assert status.returncode == 0, status.stderr
    assert f"schema:        {HEAD} (head)" in status.stdout
    assert (
        "packs:         agent-memory 1.0.0, agent-memory 1.1.0, agent-memory 1.2.0, "
        "agent-memory 1.3.0" in status.stdout
    )

    downgraded = run("db", "downgrade", "0002_versioned_graph", env=env)
    assert downgraded.stdout == f"downgraded database from {HEAD} to 0002_versioned_graph\n"
    assert "behind head" in run("db", "current", env=env).stdout
    behind = run("status", env=env)
    assert behind.returncode == 1
    assert "at revision 0002_versioned_graph" in behind.stderr

    migrated = run("status", "--migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    assert f"{HEAD} (head)" in migrated.stdout

    assert run("db", "downgrade", "base", env=env).returncode == 0
    assert run("db", "current", env=env).stdout.startswith("base")


def test_downgrade_by_one_step_and_the_refusal_suggests_only_options_the_command_has(
    url_env: dict[str, str],
) -> None:
    assert run("db", "upgrade", env=url_env).returncode == 0
    stepped = run("db", "downgrade", "-1", env=url_env)
    assert stepped.returncode == 0, stepped.stderr
    scripts = ScriptDirectory(str(migrations_dir()))
    previous = scripts.get_revision(HEAD).down_revision
    assert stepped.stdout == f"downgraded database from {HEAD} to {previous}\n"
    # status takes --migrate, so its refusal suggests it; list does not, so its refusal does not
    status = run("status", env=url_env)
    assert status.returncode == 1
    assert "run `emergent-memory db upgrade` first (or add --migrate)" in status.stderr
    listed = run("list", env=url_env)
    assert listed.returncode == 1
    assert "run `emergent-memory db upgrade` first" in listed.stderr
    assert "--migrate" not in listed.stderr
    assert run("db", "upgrade", env=url_env).returncode == 0


def test_db_url_prints_a_url_psql_can_use(env: dict[str, str]) -> None:
    printed = run("db", "url", env=env)
    assert printed.returncode == 0
    url = printed.stdout.strip()
    assert url.startswith("postgresql://")
    if "EMERGENT_MEMORY_DATABASE_URL" in env:
        assert url == env["EMERGENT_MEMORY_DATABASE_URL"]
    else:
        assert "/emergent_memory?host=" in url
        assert "embedded server runs only while" in printed.stderr


def test_psql_exit_status_and_errors_come_through(embedded_env: dict[str, str]) -> None:
    failed = run("db", "psql", "--", "-v", "ON_ERROR_STOP=1", "-c", "select nope", env=embedded_env)
    assert failed.returncode != 0
    assert 'column "nope" does not exist' in failed.stderr


def test_a_bad_setting_is_one_clear_line_and_a_failure() -> None:
    bad = run("db", "current", env={"EMERGENT_MEMORY_POOL_MAX_SIZE": "lots"})
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("error: invalid configuration: EMERGENT_MEMORY_POOL_MAX_SIZE")
    typo = run("db", "current", env={"EMERGENT_MEMORY_DATABASE_ULR": "postgresql://x/y"})
    assert "did you mean EMERGENT_MEMORY_DATABASE_URL?" in typo.stderr


def test_an_unreachable_database_is_a_clear_error(embedded_env: dict[str, str]) -> None:
    missing = f"postgresql://postgres@/nowhere?host={embedded_env['EMERGENT_MEMORY_DATA_DIR']}"
    result = run("db", "current", env={"EMERGENT_MEMORY_DATABASE_URL": missing})
    assert result.returncode == 1
    assert result.stderr.startswith("error: could not connect to the database")


def test_a_bad_revision_is_reported(url_env: dict[str, str]) -> None:
    result = run("db", "downgrade", "nope", env=url_env)
    assert result.returncode == 1
    assert "Can't locate revision identified by 'nope'" in result.stderr


def test_version_and_help() -> None:
    assert run("--version", env={}).stdout.startswith("emergent-memory, version ")
    helped = run("db", "--help", env={})
    for command in ("upgrade", "downgrade", "current", "url", "psql"):
        assert command in helped.stdout


def sleep_is_running(pid_file: Path) -> bool:
    """Whether the embedded server (its socket named in postmaster.pid) runs the test's
    `select pg_sleep(60)`: psql is connected and waits on it."""
    try:
        lines = pid_file.read_text().splitlines()
        port, socket_dir = lines[3].strip(), lines[4].strip()
    except (OSError, IndexError):  # not started yet, or the file is being written
        return False
    try:
        with psycopg.connect(
            host=socket_dir, port=port, user="postgres", dbname="postgres", connect_timeout=30
        ) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE state = 'active' AND query = 'select pg_sleep(60)'"
            ).fetchone()
    except psycopg.OperationalError:  # still starting
        return False
    return row is not None and row[0] > 0


def test_sigterm_stops_the_embedded_server_cleanly(embedded_env: dict[str, str]) -> None:
    import signal

    pid_file = Path(embedded_env["EMERGENT_MEMORY_DATA_DIR"]) / "pgdata" / "postmaster.pid"
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    process = subprocess.Popen(
        [*COMMAND, "db", "psql", "--", "-c", "select pg_sleep(60)"],
        env=base | embedded_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the signal comes while psql runs its query (not while the server is still being
        # set up), however long that takes on a loaded machine
        wait_until(lambda: sleep_is_running(pid_file), 120, "psql runs its query")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        process.kill()
        process.wait()
    assert not pid_file.exists()  # the server was stopped, not left running
