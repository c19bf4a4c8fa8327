"""What the server logs: never a memory's content, a query, a bearer token or a refused
secret, at any log level (docs/security.md, "What is logged")."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import psycopg
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPError

from tests.embedders import EmbeddingServer
from tests.helpers import (
    COMMAND,
    client_for,
    fake_embedder_env,
    lock_waiters,
    make_token,
    outage_role_url,
    running_http_server,
    set_login,
    wait_until,
)

pytestmark = pytest.mark.anyio

CONTENT = "The user keeps the zanzibar marmalade recipe in the blue notebook"
QUERY = "where is the quokka-lantern recipe kept"
SECRET = "The staging database password=Xq7-hunter2-Vz9-plover"


@pytest.mark.parametrize("level", ["WARNING", "INFO", "DEBUG"])
async def test_the_server_log_holds_no_content_query_token_or_secret(
    app_database_url: str,
    database_url: str,
    embedding_server: EmbeddingServer,
    level: str,
) -> None:
    token, _ = make_token(database_url, uuid.uuid4(), uuid.uuid4())
    with running_http_server(
        app_database_url, embedding_server, EMERGENT_MEMORY_LOG_LEVEL=level
    ) as server:
        async with client_for(server, token) as client:
            saved: Any = await client.call_tool(
                "save_memory", {"content": CONTENT, "category": "fact", "detail": True}
            )
            assert saved.structured_content["status"] == "created"
            await client.call_tool("recall_memories", {"query": QUERY})
            refused = await client.call_tool(
                "save_memory", {"content": SECRET, "category": "fact"}, raise_on_error=False
            )
            assert refused.is_error
            missing = await client.call_tool(
                "manage_memory",
                {"action": "delete", "memory_id": str(uuid.uuid4())},
                raise_on_error=False,
            )
            assert missing.is_error
    log = server.log
    assert "  automatic capture: off (set EMERGENT_MEMORY_ANTHROPIC_API_KEY" in log
    assert "MCP over streamable HTTP at" in log  # the log was captured
    for private in (token, "zanzibar", "quokka", "Xq7-hunter2", "plover"):
        assert private not in log, f"{private!r} appears in the {level} log:\n{log}"
    if level == "WARNING":
        # nothing but the banner, warnings and errors: no uvicorn start-up or request lines,
        # no "Starting MCP server"
        assert not_warnings_or_errors(log) == [], log
    if level == "INFO":
        # the caller's mistakes are there, as INFO, named by tool only
        assert "Error calling tool 'save_memory'" in log
        # one line per embedding request is noise, and a URL may hold credentials
        assert "/v1/embeddings" not in log


BANNER = ("emergent-memory: MCP over streamable HTTP at ", "  ")


def not_warnings_or_errors(log: str) -> list[str]:
    """The lines of a server's log that are neither its banner nor a WARNING or ERROR record."""
    return [
        line
        for line in log.splitlines()
        if line and not line.startswith((*BANNER, "WARNING ", "ERROR "))
    ]


OUTAGE_ROLE = "emergent_memory_test_log_outage"


async def test_a_busy_pool_and_a_database_outage_are_warning_lines_without_traceback(
    database_url: str, embedding_server: EmbeddingServer
) -> None:
    """At WARNING, a request that finds every connection busy, and a database that goes down
    (its role locked out, its connections cut) and comes back, give one-line warnings, never
    a traceback: the outage itself twice in all (down, back), whatever the number of requests
    and worker rounds meanwhile. The token check then answers 503 "database unavailable"."""
    outage_url = outage_role_url(database_url, OUTAGE_ROLE)
    actor = uuid.uuid4()
    token, _ = make_token(database_url, actor, uuid.uuid4())
    with running_http_server(
        outage_url,
        embedding_server,
        EMERGENT_MEMORY_LOG_LEVEL="WARNING",
        EMERGENT_MEMORY_POOL_MIN_SIZE="1",
        EMERGENT_MEMORY_POOL_MAX_SIZE="1",
        EMERGENT_MEMORY_POOL_TIMEOUT="0.5",
        EMERGENT_MEMORY_WORKER_POLL_INTERVAL_SECONDS="0.2",
    ) as server:
        async with client_for(server, token) as client:
            await client.call_tool("save_memory", {"content": "Warm-up", "category": "fact"})
            # busy: a save holds the only connection, waiting on its actor's save lock
            with psycopg.connect(database_url, autocommit=True) as blocker:
                blocker.execute(
                    "SELECT pg_advisory_lock(hashtextextended(%s, 0))",
                    (f"memory-save:user:{actor}",),
                )
                blocked = asyncio.create_task(
                    client.call_tool("save_memory", {"content": "Blocked", "category": "fact"})
                )
                await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: lock_waiters(database_url) > 0, what="a waiter")
                )
                busy = await outcome(client.call_tool("recall_memories", {"query": "x"}))
                assert "busy" in busy, busy
            await blocked

        set_login(database_url, OUTAGE_ROLE, allowed=False)
        try:
            request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            headers = {
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {token}",
            }
            for _ in range(3):
                refused = httpx.post(server.url, json=request, headers=headers, timeout=30)
                assert refused.status_code == 503
                assert "database unavailable" in refused.json()["error"]["message"]
            # a few worker rounds meet the outage (a duration: at WARNING they leave nothing
            # to poll for)
            await asyncio.sleep(1)
        finally:
            set_login(database_url, OUTAGE_ROLE, allowed=True)
        async with client_for(server, token) as client:
            await client.call_tool("recall_memories", {"query": "Warm-up"})
    log = server.log
    assert "Traceback" not in log, log
    assert not_warnings_or_errors(log) == [], log
    assert log.count("the database is unavailable") == 1, log
    assert log.count("the database is reachable again") == 1, log


async def outcome(call: Any) -> str:
    """The text of a call's failure (tool error or JSON-RPC error), or "ok"."""
    try:
        result = await call
    except MCPError as error:
        return error.error.message
    if result.is_error:
        return " ".join(getattr(part, "text", "") for part in result.content)
    return "ok"


async def test_an_outage_over_stdio_is_one_warning_however_many_calls_meet_it(
    database_url: str, embedding_server: EmbeddingServer, tmp_path: Path
) -> None:
    """A stdio server at WARNING whose database goes down (its role locked out, its connections
    cut) while tools are called, then comes back: each call meanwhile fails with "database
    unavailable", but the log holds one warning when the outage starts and one when it ends,
    nothing else (the failed calls are INFO), and no traceback."""
    log = tmp_path / "server.log"
    env = fake_embedder_env(
        embedding_server,
        EMERGENT_MEMORY_DATABASE_URL=outage_role_url(database_url, OUTAGE_ROLE),
        EMERGENT_MEMORY_LOG_LEVEL="WARNING",
        EMERGENT_MEMORY_WORKER_POLL_INTERVAL_SECONDS="0.2",
        EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
        EMERGENT_MEMORY_PROJECT_ID=str(uuid.uuid4()),
    )
    transport = StdioTransport(
        command=COMMAND[0], args=[*COMMAND[1:], "serve"], env=env, keep_alive=False, log_file=log
    )
    async with Client(transport, timeout=60) as client:
        await client.call_tool("save_memory", {"content": "Warm-up", "category": "fact"})
        set_login(database_url, OUTAGE_ROLE, allowed=False)
        try:
            for tool, arguments in [
                ("recall_memories", {"query": "Warm-up"}),
                ("save_memory", {"content": "During the outage", "category": "fact"}),
                ("manage_memory", {"action": "list"}),
            ]:
                failed = await outcome(client.call_tool(tool, arguments, raise_on_error=False))
                assert failed.startswith("database unavailable"), failed
        finally:
            set_login(database_url, OUTAGE_ROLE, allowed=True)
        recalled = await client.call_tool("recall_memories", {"query": "Warm-up"})
        assert recalled.structured_content["text"].endswith(": Warm-up")
    written = log.read_text()
    # all but the identity the server prints when it starts
    lines = [line for line in written.splitlines() if not line.startswith("emergent-memory: ")]
    assert "Traceback" not in written, written
    assert len(lines) == 2, written
    assert lines[0].startswith("WARNING emergent_memory.db.pool: the database is unavailable (")
    assert lines[1] == "WARNING emergent_memory.db.pool: the database is reachable again"
