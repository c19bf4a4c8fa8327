"""The real `emergent-memory serve` process, driven by an MCP client over stdio and HTTP."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from emergent_memory.auth import tokens
from tests.embedders import EmbeddingServer
from tests.helpers import (
    INITIALIZE,
    HttpServer,
    clean_env,
    client_for,
    make_token,
    run_cli,
    running_http_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_stdio_server_with_the_local_model(database_url: str) -> None:
    actor, project = str(uuid.uuid4()), str(uuid.uuid4())
    transport = StdioTransport(
        command=sys.executable,
        args=["-m", "emergent_memory", "serve", "--transport", "stdio"],
        env=clean_env(
            EMERGENT_MEMORY_DATABASE_URL=database_url,
            EMERGENT_MEMORY_ACTOR_ID=actor,
            EMERGENT_MEMORY_PROJECT_ID=project,
        ),
    )
    async with Client(transport, timeout=120) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert names == {"save_memory", "recall_memories", "manage_memory", "verify_memory"}
        saved = await client.call_tool(
            "save_memory",
            {
                "content": "network configuration problems on the office router",
                "category": "fact",
                "detail": True,
            },
        )
        assert saved.structured_content["status"] == "created"
        recalled = await client.call_tool(
            "recall_memories", {"query": "WiFi issue", "detail": True}
        )
        [hit] = recalled.structured_content["memories"]
        assert hit["id"] == saved.structured_content["memory"]["id"]
        verified = await client.call_tool(  # serve's verify service, on the real model
            "verify_memory",
            {"claim": "network configuration problems on the office router", "detail": True},
        )
        assert verified.structured_content["verdict"] == "confirmed"
        assert verified.structured_content["matches"][0]["id"] == hit["id"]
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT actor_id::text, project_id::text FROM kb.graph_objects WHERE canonical_id = %s",
            (hit["id"],),
        ).fetchone()
    assert row == (actor, project)  # the identity came from the configuration


@pytest.fixture(scope="module")
def http_server(
    database_url: str, module_embedding_server: EmbeddingServer
) -> Iterator[HttpServer]:
    """A server shared by the module's tests that take it (each with tokens of its own)."""
    with running_http_server(database_url, module_embedding_server) as server:
        yield server


async def test_http_refuses_missing_bad_and_revoked_tokens(
    http_server: HttpServer, database_url: str
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(http_server.url, json=request, headers=headers).status_code == 401
    bad = headers | {"Authorization": "Bearer emt_not-a-real-token"}
    assert httpx.post(http_server.url, json=request, headers=bad).status_code == 401

    token, token_id = make_token(database_url, uuid.uuid4(), uuid.uuid4())
    async with client_for(http_server, token) as client:
        assert len(await client.list_tools()) == 4
    with psycopg.connect(database_url) as conn:
        tokens.revoke_token(conn, token_id)
    revoked = headers | {"Authorization": f"Bearer {token}"}
    assert httpx.post(http_server.url, json=request, headers=revoked).status_code == 401
    assert httpx.get(http_server.base + "/health").json() == {"status": "ok"}


async def test_http_identity_comes_from_the_token(
    http_server: HttpServer, database_url: str, global_memories_cleanup: None
) -> None:
    project = uuid.uuid4()
    alice, _ = make_token(database_url, uuid.uuid4(), project)
    bob, _ = make_token(database_url, uuid.uuid4(), project)
    reader, _ = make_token(database_url, uuid.uuid4(), project, "memory:read")
    admin, _ = make_token(
        database_url, uuid.uuid4(), project, "memory:read", "memory:write", "memory:admin"
    )
    async with client_for(http_server, alice) as client:
        mine = await client.call_tool(
            "save_memory",
            {"content": "Alice keeps her notes in Obsidian", "category": "fact", "detail": True},
        )
        alice_id = mine.structured_content["memory"]["id"]
    async with client_for(http_server, bob) as client:
        seen = await client.call_tool("recall_memories", {"query": "Obsidian notes"})
        assert seen.structured_content["text"] == "Nothing relevant remembered."
        gone = await client.call_tool(
            "manage_memory", {"action": "delete", "memory_id": alice_id}, raise_on_error=False
        )
        assert gone.is_error
        assert f"memory {alice_id} not found" in gone.content[0].text  # type: ignore[union-attr]
        global_try = await client.call_tool(
            "save_memory",
            {"content": "Everyone uses UTC", "category": "convention", "scope": "global"},
            raise_on_error=False,
        )
        assert global_try.is_error
    async with client_for(http_server, reader) as client:
        refused = await client.call_tool(
            "save_memory",
            {"content": "Readers cannot write", "category": "fact"},
            raise_on_error=False,
        )
        assert refused.is_error
        assert "memory:write" in refused.content[0].text  # type: ignore[union-attr]
    async with client_for(http_server, admin) as client:
        shared = await client.call_tool(
            "save_memory",
            {
                "content": "All timestamps are stored in UTC",
                "category": "convention",
                "scope": "global",
                "detail": True,
            },
        )
        shared_id = shared.structured_content["memory"]["id"]
    for token in (alice, bob):
        async with client_for(http_server, token) as client:
            found = await client.call_tool(
                "recall_memories", {"query": "timestamps UTC", "detail": True}
            )
            assert shared_id in {m["id"] for m in found.structured_content["memories"]}
    async with client_for(http_server, admin) as client:  # removed for good by the fixture
        await client.call_tool("manage_memory", {"action": "delete", "memory_id": shared_id})


async def test_http_sessions_are_capped_and_idle_ones_expire(
    database_url: str, embedding_server: EmbeddingServer
) -> None:
    """Many `initialize` calls with one token keep at most EMERGENT_MEMORY_HTTP_MAX_SESSIONS
    sessions open: each new one closes the one idle the longest (its id then gets 404), so
    none is refused (tests/test_http_hardening.py has the per-token and per-actor shares); a
    session without requests for EMERGENT_MEMORY_HTTP_SESSION_IDLE_TIMEOUT seconds is closed."""
    # long enough that the last five sessions opened below are not yet idle that long when
    # the test asks about them, even on a loaded machine; the test then waits that long
    idle_timeout = 5
    token, _ = make_token(database_url, uuid.uuid4(), uuid.uuid4())
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with running_http_server(
        database_url,
        embedding_server,
        EMERGENT_MEMORY_HTTP_MAX_SESSIONS="5",
        EMERGENT_MEMORY_HTTP_SESSION_IDLE_TIMEOUT=str(idle_timeout),
    ) as server:
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:

            async def status(session: str) -> int:
                answer = await http.post(server.url, json=ping, headers={"mcp-session-id": session})
                return answer.status_code

            answers = [await http.post(server.url, json=INITIALIZE) for _ in range(20)]
            assert [a.status_code for a in answers] == [200] * 20
            opened = [a.headers["mcp-session-id"] for a in answers]
            assert [await status(session) for session in opened[:15]] == [404] * 15
            kept = opened[15:]
            assert [await status(session) for session in kept] == [200] * 5

            # left idle past the timeout (not polled: asking about a session is a request,
            # which keeps it alive), each is closed (the deadline only keeps sessions that
            # are never closed from hanging the test)
            deadline = time.monotonic() + idle_timeout + 120
            while kept:
                assert time.monotonic() < deadline, f"{len(kept)} idle sessions still open"
                await asyncio.sleep(idle_timeout + 0.5)
                kept = [session for session in kept if await status(session) != 404]


def test_http_serve_on_a_port_in_use_fails_with_one_line(database_url: str) -> None:
    """A port another program listens on: exit status 1, one line naming the port and what to
    do, before anything else (no banner, the database not even opened)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = run_cli(
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            env=clean_env(EMERGENT_MEMORY_DATABASE_URL=database_url),
        )
    assert refused.returncode == 1
    assert refused.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: port {port} is in use by another program "
        "(another emergent-memory server?); stop it, or choose another port with --port\n"
    )
