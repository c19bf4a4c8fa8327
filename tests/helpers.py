"""Small helpers shared by tests: polling, rows and locks, and the real `emergent-memory`
process (its environment, the CLI, the HTTP server, its tokens and clients)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import httpx
import psycopg
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from psycopg import sql

from emergent_memory.auth import tokens
from emergent_memory.db.connection import with_role
from emergent_memory.db.roles import ensure_login_role
from tests.embedders import EmbeddingServer


def count_rows(conn: psycopg.Connection[Any], table: str, project_id: UUID) -> int:
    """Rows (every version) of a kb table that belong to a project."""
    query = {
        "graph_objects": "SELECT count(*) FROM kb.graph_objects WHERE project_id = %s",
        "graph_relationships": "SELECT count(*) FROM kb.graph_relationships WHERE project_id = %s",
    }[table]
    row = conn.execute(query, (project_id,)).fetchone()
    assert row is not None
    return int(row[0])


def memory(content: str = "The user prefers tabs", category: str = "preference") -> dict[str, Any]:
    return {"content": content, "category": category}


def wait_until(condition: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    """Poll `condition` until it holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(0.05)


def lock_waiters(owner_url: str, blocker_pid: int | None = None) -> int:
    """How many backends of this database wait on a lock (held by `blocker_pid`, if given)."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND cardinality(pg_blocking_pids(pid)) > 0 "
            "AND (%(pid)s::int IS NULL OR %(pid)s::int = ANY(pg_blocking_pids(pid)))",
            {"pid": blocker_pid},
        ).fetchone()
    return 0 if row is None else int(row[0])


def hold_advisory_lock(conn: psycopg.Connection[Any], key: str) -> None:
    """Take, in `conn`'s transaction, the advisory lock the store takes for `key`
    (store.lock_saves, versioning.lock_versions: hashtextextended(key, 0))."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


# What the MCP server logs when a request fails with an internal error: a tool's exception
# (masked for the client), or any exception that escaped to the ASGI server (an HTTP 500).
INTERNAL_ERROR_MARKERS = (
    "ERROR emergent_memory.mcp.server: internal error in",
    "Exception in ASGI",
)


def internal_errors(server_log: str) -> list[str]:
    """The internal errors in a server's stderr, each with its traceback up to the exception's
    own line, for a test to show."""
    found: list[str] = []
    lines = iter(server_log.splitlines())
    for line in lines:
        if not any(marker in line for marker in INTERNAL_ERROR_MARKERS):
            continue
        error = [line]
        for more in lines:
            error.append(more)
            if more and not more.startswith((" ", "Traceback", "\t")):
                break  # the exception's line ends the traceback
        found.append("\n".join(error))
    return found


# -- the real emergent-memory process --------------------------------------------------------

COMMAND = [sys.executable, "-m", "emergent_memory"]
# what an MCP client sends first (over stdio: one JSON line)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without its EMERGENT_MEMORY_ settings, plus `settings`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    return base | settings


def fake_embedder_env(embedding_server: EmbeddingServer, **settings: str) -> dict[str, str]:
    """clean_env with the embedding provider set to the local OpenAI-compatible fake (a server
    then starts in a moment, without loading a model), plus `settings`."""
    return clean_env(
        EMERGENT_MEMORY_EMBEDDING_PROVIDER="openai",
        EMERGENT_MEMORY_EMBEDDING_MODEL="test-remote",
        EMERGENT_MEMORY_EMBEDDING_DIMENSIONS="384",
        EMERGENT_MEMORY_EMBEDDING_BASE_URL=embedding_server.base_url,
        **settings,
    )


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`emergent-memory ARGS` in a process of its own, without standard input; its output
    captured."""
    return subprocess.run(
        [*COMMAND, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """A running `serve --transport http` process: its MCP URL, base URL, process, and what it
    wrote on stderr (in `log` once it has stopped)."""

    def __init__(self, url: str, process: subprocess.Popen[str]) -> None:
        self.url = url
        self.base = url.removesuffix("/mcp")
        self.process = process
        self.log = ""


@contextmanager
def http_server_process(
    env: dict[str, str], *args: str, port: int | None = None
) -> Iterator[HttpServer]:
    """`emergent-memory serve --transport http ARGS` on `port` (default: a free one), with this
    environment, until /health answers 200; terminated at the end (unless the test killed
    it)."""
    port = free_port() if port is None else port
    # stderr goes to a file, not a pipe nobody reads while it runs (a full pipe would block
    # the server)
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            [*COMMAND, "serve", "--transport", "http", "--port", str(port), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        server = HttpServer(f"http://127.0.0.1:{port}/mcp", process)

        def written() -> str:
            log.seek(0)
            return log.read()

        def healthy() -> bool:
            assert process.poll() is None, written()
            try:
                return httpx.get(server.base + "/health", timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        try:
            wait_until(healthy, 60, "the HTTP server is healthy")
            yield server
        finally:
            if process.poll() is None:
                process.terminate()
            process.wait(timeout=60)
            server.log = written()


@contextmanager
def running_http_server(
    database_url: str, embedding_server: EmbeddingServer, **settings: str
) -> Iterator[HttpServer]:
    """The HTTP server on a configured database, with the fake embedding provider and these
    extra settings, until it is healthy; stopped at the end."""
    env = fake_embedder_env(embedding_server, EMERGENT_MEMORY_DATABASE_URL=database_url, **settings)
    with http_server_process(env) as server:
        yield server


def make_token(
    database_url: str, actor: uuid.UUID, project: uuid.UUID, *scopes: str
) -> tuple[str, uuid.UUID]:
    """A new API token (read and write unless `scopes` are given) and its id."""
    with psycopg.connect(database_url) as conn:
        new = tokens.create_token(
            conn,
            name="test",
            actor_id=actor,
            project_id=project,
            scopes=list(scopes) or ["memory:read", "memory:write"],
        )
    return new.token, new.info.id


def client_for(server: HttpServer, token: str, *, timeout: float = 30) -> Client[Any]:
    """An MCP client of the server with this token; it gives up on a call after `timeout`
    seconds."""
    transport = StreamableHttpTransport(server.url, headers={"Authorization": f"Bearer {token}"})
    return Client(transport, timeout=timeout)


# -- a database outage -------------------------------------------------------------------------


def outage_role_url(owner_url: str, role: str) -> str:
    """The same database for a login role of its own (created or given a new password), which
    a test may lock out with set_login: for whoever connects as it, the database is then down."""
    password = secrets.token_hex(16)
    ensure_login_role(owner_url, role, password=password)
    return with_role(owner_url, role, password)


def set_login(owner_url: str, role: str, *, allowed: bool, cut: bool = True) -> None:
    """Let a role log in, or lock it out (NOLOGIN) and, unless not `cut`, cut its
    connections."""
    login = sql.SQL("LOGIN" if allowed else "NOLOGIN")
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} {}").format(sql.Identifier(role), login))
        if not allowed and cut:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )
