"""The embedded PostgreSQL shared by real `emergent-memory serve` processes: stdio servers one
after another and overlapping, a server killed with SIGKILL, PostgreSQL killed under a running
HTTP server (docs/operations.md, "The embedded server").

Each test has its own data directory (short: it holds the server's socket) and drives the real
command; the embedding provider is a local OpenAI-compatible fake, so servers start quickly.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database
from emergent_memory.db.embedded import postmaster_pid as running_postmaster
from tests.embedders import EmbeddingServer
from tests.helpers import (
    COMMAND,
    client_for,
    fake_embedder_env,
    http_server_process,
    make_token,
    run_cli,
    wait_until,
)

pytestmark = pytest.mark.anyio

# PostgreSQL's log line for each start of the server (pgdata/log)
STARTED = "database system is ready to accept connections"
# emergent-memory's log line when a request finds the server gone and starts it again
RESTARTED = "had stopped; started it again"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def migrated_data_dir() -> Iterator[Path]:
    """A data directory whose embedded database is migrated, its server stopped: made once
    for the module (initdb, a start, the migrations and a stop took about 4 s a test)."""
    path = Path(tempfile.mkdtemp(prefix="emst-", dir="/tmp"))
    try:
        with open_database(None, path) as db:
            migrate.upgrade(db.url)
        assert postmaster_pid(path) is None
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def data_dir(migrated_data_dir: Path) -> Iterator[Path]:
    """A data directory whose embedded database is migrated, and stopped when the test
    begins (a copy of migrated_data_dir's, owners and modes kept: PostgreSQL runs as another
    user when the tests run as root); a server a failed test left running is stopped at the
    end."""
    path = Path(tempfile.mkdtemp(prefix="ems-", dir="/tmp"))  # short: holds the socket
    try:
        subprocess.run(["cp", "-a", f"{migrated_data_dir}/.", str(path)], check=True)
        assert postmaster_pid(path) is None
        yield path
    finally:
        pid = postmaster_pid(path)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(path, ignore_errors=True)


def postmaster_pid(data_dir: Path) -> int | None:
    """The embedded server's process id while it runs (a killed one that is a zombie does
    not run)."""
    return running_postmaster(data_dir / "pgdata")


def starts_logged(data_dir: Path) -> int:
    """How many times PostgreSQL has started in this data directory, by its log."""
    log = data_dir / "pgdata" / "log"
    return log.read_text().count(STARTED) if log.exists() else 0


def users_lock_is_held(data_dir: Path) -> bool:
    """Whether some process holds the users lock of the embedded server (is registered)."""
    fd = os.open(data_dir / "pgdata.users.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def server_env(data_dir: Path, embedding_server: EmbeddingServer) -> dict[str, str]:
    """The embedded database of `data_dir`, the fake embedding provider, a new actor."""
    return fake_embedder_env(
        embedding_server,
        EMERGENT_MEMORY_DATA_DIR=str(data_dir),
        EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
        EMERGENT_MEMORY_PROJECT_ID=str(uuid.uuid4()),
    )


def stdio_client(env: dict[str, str], log: Path) -> Client[Any]:
    """A client of its own `serve --transport stdio` process, which it stops when it closes
    (closes its stdin, then SIGTERM after 2 s, as MCP clients do); the server's stderr is
    appended to `log`."""
    transport = StdioTransport(
        command=COMMAND[0], args=[*COMMAND[1:], "serve"], env=env, keep_alive=False, log_file=log
    )
    return Client(transport, timeout=60)


async def save_and_recall(client: Client[Any], content: str) -> None:
    """A save and a recall that finds it: both succeed, or the test fails with their error."""
    saved = await client.call_tool(
        "save_memory",
        {"content": content, "category": "fact", "detail": True},
        raise_on_error=False,
    )
    assert not saved.is_error, saved.content
    recalled = await client.call_tool(
        "recall_memories", {"query": content, "detail": True}, raise_on_error=False
    )
    assert not recalled.is_error, recalled.content
    found = [m["id"] for m in recalled.structured_content["memories"]]
    assert saved.structured_content["memory"]["id"] in found


async def opened(client: Client[Any]) -> None:
    """Once the server has opened its database: it answers initialize before it does
    (mcp/server.py ServiceHolder), and a tool call waits for it."""
    answer = await client.call_tool("recall_memories", {"query": "anything"}, raise_on_error=False)
    assert not answer.is_error, answer.content


HANDOVERS = 3  # each a server's start (about 5 s of CPU): ten took 55 s of the suite


async def test_stdio_servers_one_after_another_all_find_the_database(
    data_dir: Path, embedding_server: EmbeddingServer, tmp_path: Path
) -> None:
    """Agent sessions in a row, each with its own stdio server (the common case), three times:
    a session's server is up (its database opened) before the previous session's server
    exits (a client restarting a session does not wait for the old one), then the previous
    one exits, then the session works. Every call of every server succeeds on the PostgreSQL
    the first one started: since their lives overlap, no exiting server stopped it under
    another (same process, one start in its log, no server had to start it again); the last
    one to exit stops it."""
    env = server_env(data_dir, embedding_server)
    log = tmp_path / "servers.log"
    starts_before = starts_logged(data_dir)
    sessions = [stdio_client(env, log) for _ in range(HANDOVERS + 1)]
    running: list[Client[Any]] = []

    async def start(client: Client[Any]) -> None:
        await client.__aenter__()
        await opened(client)
        running.append(client)

    async def stop(client: Client[Any]) -> None:
        running.remove(client)
        await client.__aexit__(None, None, None)

    try:
        await asyncio.gather(start(sessions[0]), start(sessions[1]))
        await save_and_recall(sessions[0], "Session 0 took notes about the release")
        postgres = postmaster_pid(data_dir)
        assert postgres is not None
        for number in range(1, HANDOVERS + 1):
            # the previous session's server exits while the next session's server starts
            following = [start(sessions[number + 1])] if number < HANDOVERS else []
            await asyncio.gather(stop(sessions[number - 1]), *following)
            await save_and_recall(sessions[number], f"Session {number} took notes")
            assert postmaster_pid(data_dir) == postgres, f"PostgreSQL restarted by session {number}"
    finally:
        for client in list(running):
            await stop(client)
    wait_until(lambda: postmaster_pid(data_dir) is None, 60, "the last server stopped PostgreSQL")
    assert starts_logged(data_dir) == starts_before + 1
    assert RESTARTED not in log.read_text(), log.read_text()


async def test_a_server_keeps_the_database_when_an_earlier_one_exits(
    data_dir: Path, embedding_server: EmbeddingServer, tmp_path: Path
) -> None:
    """Two stdio servers at once, the first one started first (and its database opened) and
    closed first: the second keeps working on the same PostgreSQL (the first did not stop it:
    same process, one start in its log, nobody had to start it again), which stops only when
    the second exits too."""
    env = server_env(data_dir, embedding_server)
    log = tmp_path / "servers.log"
    starts_before = starts_logged(data_dir)
    async with stdio_client(env, log) as first:
        await save_and_recall(first, "The first session uses the database")
        postgres = postmaster_pid(data_dir)
        assert postgres is not None
        second = stdio_client(env, log)
        await second.__aenter__()
        await opened(second)
    try:
        assert postmaster_pid(data_dir) == postgres  # the second server still uses it
        for number in range(3):
            await save_and_recall(second, f"The second session still works, call {number}")
            assert postmaster_pid(data_dir) == postgres
    finally:
        await second.__aexit__(None, None, None)
    wait_until(lambda: postmaster_pid(data_dir) is None, 60, "the last server stopped PostgreSQL")
    assert starts_logged(data_dir) == starts_before + 1
    assert RESTARTED not in log.read_text(), log.read_text()


def new_token(data_dir: Path) -> str:
    """A token for a new actor, in the embedded database of `data_dir`."""
    with open_database(None, data_dir) as db:
        return make_token(db.url, uuid.uuid4(), uuid.uuid4())[0]


async def test_after_a_server_is_killed_the_next_one_is_registered_and_stops_postgres(
    data_dir: Path, embedding_server: EmbeddingServer
) -> None:
    """A server killed with SIGKILL cannot leave: the next server is registered as a user of
    PostgreSQL (it holds the users lock), serves, and on its clean exit, being the last user,
    stops PostgreSQL."""
    env = server_env(data_dir, embedding_server)
    token = new_token(data_dir)
    with http_server_process(env) as killed:
        killed.process.send_signal(signal.SIGKILL)
        killed.process.wait(timeout=30)
    assert postmaster_pid(data_dir) is not None  # nobody stopped it
    with http_server_process(env) as server:
        assert users_lock_is_held(data_dir)
        async with client_for(server, token) as client:
            await save_and_recall(client, "Saved after a server was killed")
    assert "Traceback" not in server.log, server.log
    assert not users_lock_is_held(data_dir)
    wait_until(lambda: postmaster_pid(data_dir) is None, 60, "the last server stopped PostgreSQL")


async def test_postgres_killed_under_a_running_server_is_reported_and_restarted(
    data_dir: Path, embedding_server: EmbeddingServer
) -> None:
    """kill -9 of the embedded PostgreSQL under an HTTP server (without its worker, which
    would restart it on its own): /health answers 503 "database unavailable", and keeps
    doing so (it never restarts anything); the next request restarts PostgreSQL and succeeds
    (within the pool's timeout, else it would fail as busy); /health is 200 again. Then
    PostgreSQL is killed again and started by someone else (another emergent-memory command)
    after the pool's reconnection backoff would have grown: the next request again succeeds.
    Each outage is a line or two in the log, no traceback."""
    env = server_env(data_dir, embedding_server)
    token = new_token(data_dir)
    with http_server_process(env, "--no-worker") as server:
        async with client_for(server, token) as client:
            await save_and_recall(client, "Saved before PostgreSQL was killed")

        def health() -> tuple[int, Any]:
            answer = httpx.get(server.base + "/health", timeout=10)
            return answer.status_code, answer.json()

        for restarted_by in ("a request", "another command"):
            pid = postmaster_pid(data_dir)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: health()[0] == 503, 60, "/health reports the database down")
            assert health() == (503, {"status": "database unavailable"})
            if restarted_by == "another command":
                # down for a while (a duration, nothing to poll): psycopg_pool alone would wait
                # 1, 2, 4 s... between its attempts, and come back seconds after the database
                time.sleep(5)
                assert health()[0] == 503  # nobody restarted it meanwhile
                started = run_cli("db", "psql", "--", "-c", "select 1", env=env)
                assert started.returncode == 0, started.stderr
                assert postmaster_pid(data_dir) is not None  # left running: the server uses it
            # the first request succeeds (one that got no connection within the pool's timeout
            # would fail as busy); how soon the pool reconnects after an outage, the issue's
            # recovery bound, is counted rather than timed by
            # test_database.test_the_pool_tries_to_reconnect_at_most_a_second_apart
            async with client_for(server, token) as client:
                await save_and_recall(
                    client, f"Saved after PostgreSQL was restarted by {restarted_by}"
                )
            wait_until(lambda: health()[0] == 200, 60, "/health reports the database back")
    log = server.log
    assert "Traceback" not in log, log
    assert log.count("the embedded PostgreSQL in") == 1, log  # restarted once, by the request
