"""The HTTP server under a hostile or careless client (issue 26, findings 7-10), over the real
`serve --transport http` process: fair shares of MCP and dashboard sessions, deeply nested
JSON, and error answers that say what happened and what to do."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import psycopg
import pytest

from emergent_memory.auth.dashboard import digest
from emergent_memory.auth.principal import READ
from tests.embedders import EmbeddingServer
from tests.helpers import HttpServer, client_for, make_token, running_http_server

pytestmark = pytest.mark.anyio

PER_TOKEN, PER_ACTOR, TOTAL = 3, 4, 6
SIGN_INS_PER_TOKEN = 2
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LEGACY = "2025-06-18"  # the session-based protocol: an initialize opens a session


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def module_embeddings() -> Iterator[EmbeddingServer]:
    embeddings = EmbeddingServer()
    embeddings.thread.start()
    yield embeddings
    embeddings.httpd.shutdown()
    embeddings.httpd.server_close()


@pytest.fixture(scope="module")
def server(database_url: str, module_embeddings: EmbeddingServer) -> Iterator[HttpServer]:
    """One server for the module, with small limits (each test uses tokens of its own)."""
    with running_http_server(
        database_url,
        module_embeddings,
        EMERGENT_MEMORY_HTTP_MAX_SESSIONS_PER_TOKEN=str(PER_TOKEN),
        EMERGENT_MEMORY_HTTP_MAX_SESSIONS_PER_ACTOR=str(PER_ACTOR),
        EMERGENT_MEMORY_HTTP_MAX_SESSIONS=str(TOTAL),
        EMERGENT_MEMORY_DASHBOARD_SESSIONS_PER_TOKEN=str(SIGN_INS_PER_TOKEN),
        EMERGENT_MEMORY_LOG_LEVEL="INFO",
    ) as running:
        yield running


def new_token(database_url: str, *scopes: str, actor: uuid.UUID | None = None) -> str:
    return make_token(database_url, actor or uuid.uuid4(), uuid.uuid4(), *scopes)[0]


def actor_of(database_url: str, token: str) -> uuid.UUID:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT actor_id FROM kb.api_tokens WHERE token_hash = %s", (digest(token),)
        ).fetchone()
    assert row is not None
    return uuid.UUID(str(row[0]))


def initialize(server: HttpServer, token: str) -> httpx.Response:
    """An `initialize` without a session id: it opens a session."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    headers = ACCEPT | {"Authorization": f"Bearer {token}"}
    return httpx.post(server.url, json=body, headers=headers, timeout=30)


class Sessions:
    """MCP sessions a test opens; each is ended (DELETE) at the end of the test, so that the
    next test starts with none open on the module's server."""

    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.opened: list[tuple[str, str]] = []

    def open(self, token: str) -> str:
        response = initialize(self.server, token)
        assert response.status_code == 200, response.text
        session = str(response.headers["mcp-session-id"])
        self.opened.append((token, session))
        return session

    def headers(self, token: str, session: str) -> dict[str, str]:
        return ACCEPT | {
            "Authorization": f"Bearer {token}",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": LEGACY,
        }

    def ping(self, token: str, session: str) -> int:
        """The status of a ping in the session (404 once the session is closed)."""
        body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        headers = self.headers(token, session)
        return httpx.post(self.server.url, json=body, headers=headers, timeout=30).status_code

    def open_busy(self, token: str, streams: ExitStack) -> str:
        """A session with a request in flight for as long as `streams` is open: its event
        stream (GET)."""
        session = self.open(token)
        headers = self.headers(token, session)
        notified = httpx.post(
            self.server.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=headers,
            timeout=30,
        )
        assert notified.status_code == 202
        stream = streams.enter_context(
            httpx.stream(
                "GET",
                self.server.url,
                headers=headers | {"Accept": "text/event-stream"},
                timeout=30,
            )
        )
        assert stream.status_code == 200
        return session

    def end_all(self) -> None:
        for token, session in self.opened:
            httpx.delete(self.server.url, headers=self.headers(token, session), timeout=30)


@pytest.fixture
def sessions(server: HttpServer) -> Iterator[Sessions]:
    opened = Sessions(server)
    yield opened
    opened.end_all()


# -- finding 7: fair shares of sessions -------------------------------------------------------


def test_one_token_opening_sessions_without_end_never_locks_out_another_actor(
    sessions: Sessions, database_url: str
) -> None:
    """Before: each initialize kept a session; past the server's limit every client, of any
    actor, got 503 until a restart. Now the token's oldest idle session is closed instead."""
    flooding = new_token(database_url, READ)
    opened = [sessions.open(flooding) for _ in range(TOTAL + 4)]
    alive = [sessions.ping(flooding, session) for session in opened]
    assert alive == [404] * (len(opened) - PER_TOKEN) + [200] * PER_TOKEN  # the newest kept

    other = new_token(database_url)
    session = sessions.open(other)
    assert sessions.ping(other, session) == 200


def test_an_actor_shares_its_limit_over_all_its_tokens(
    sessions: Sessions, database_url: str
) -> None:
    actor = uuid.uuid4()
    first, second = (new_token(database_url, actor=actor) for _ in range(2))
    oldest = sessions.open(first)
    newer = [sessions.open(first) for _ in range(PER_TOKEN - 1)]
    of_second = sessions.open(second)  # the actor now holds PER_ACTOR sessions
    sessions.open(second)  # one more: the actor's oldest idle one is closed, the first token's
    assert sessions.ping(first, oldest) == 404
    assert all(sessions.ping(first, session) == 200 for session in newer)
    assert sessions.ping(second, of_second) == 200


def test_at_the_servers_limit_an_idle_session_is_closed_not_the_newcomer_refused(
    sessions: Sessions, database_url: str
) -> None:
    """Many actors, one session each, fill the server: a new actor still gets in, and the
    session idle the longest is closed."""
    holders = [new_token(database_url) for _ in range(TOTAL)]
    opened = [sessions.open(token) for token in holders]
    newcomer = new_token(database_url)
    session = sessions.open(newcomer)
    assert sessions.ping(newcomer, session) == 200
    assert sessions.ping(holders[0], opened[0]) == 404
    assert all(sessions.ping(t, s) == 200 for t, s in zip(holders[1:], opened[1:], strict=True))


def test_when_every_session_of_the_token_is_busy_the_refusal_says_when_to_retry(
    sessions: Sessions, server: HttpServer, database_url: str
) -> None:
    """A session with a request in flight (an open event stream) is not closed: the token's
    next session is refused with 429, Retry-After and what to do."""
    token = new_token(database_url)
    with ExitStack() as streams:
        for _ in range(PER_TOKEN):
            sessions.open_busy(token, streams)
        refused = initialize(server, token)
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "10"
        message = refused.json()["error"]["message"]
        assert "this token has 3 open" in message
        assert "EMERGENT_MEMORY_HTTP_MAX_SESSIONS_PER_TOKEN" in message
        assert "an HTTP delete request to /mcp with its Mcp-Session-Id header" in message
        assert "retry in 10 seconds" in message
        other = new_token(database_url)  # another actor is not refused
        sessions.open(other)


def test_at_the_servers_limit_with_no_idle_session_the_biggest_holder_gives_way(
    sessions: Sessions, server: HttpServer, database_url: str
) -> None:
    """Every session busy, the server full: the actor holding the most is refused (503), and
    an actor holding fewer gets in, in place of that actor's oldest session."""
    first, second, third = (new_token(database_url) for _ in range(3))
    with ExitStack() as streams:
        oldest = sessions.open_busy(first, streams)
        for _ in range(TOTAL // 2 - 1):
            sessions.open_busy(first, streams)
        for _ in range(TOTAL // 2):
            sessions.open_busy(second, streams)
        sessions.open_busy(third, streams)  # a third actor, holding fewer: room is made
        assert sessions.ping(first, oldest) == 404  # the first actor's oldest gave way

        # now the second actor holds the most (with another of its tokens, under its token's
        # and its actor's limits): refused, with when to retry
        another_of_second = new_token(database_url, actor=actor_of(database_url, second))
        refused = initialize(server, another_of_second)
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "10"
        message = refused.json()["error"]["message"]
        assert "the server has 6 open, the limit set by EMERGENT_MEMORY_HTTP_MAX_SESSIONS" in (
            message
        )
        assert "this token's actor holds the most of them" in message


def test_dashboard_sign_ins_per_token_are_capped_the_least_used_signed_out(
    server: HttpServer, database_url: str
) -> None:
    """Before: a token could open any number of dashboard sessions (300 in 5 s)."""
    token = new_token(database_url)
    cookies = []
    for _ in range(SIGN_INS_PER_TOKEN + 1):
        signed_in = httpx.post(
            server.base + "/ui/signin", data={"token": token}, follow_redirects=False
        )
        assert signed_in.status_code == 303, signed_in.text
        cookies.append(signed_in.cookies)

    def page_status(cookie: httpx.Cookies) -> int:
        page = httpx.get(server.base + "/ui/memories", cookies=cookie, follow_redirects=False)
        return page.status_code

    assert [page_status(cookie) for cookie in cookies] == [303, 200, 200]  # 303: to sign-in


# -- finding 9: deeply nested JSON ------------------------------------------------------------


def endpoints_with_a_body(server: HttpServer) -> list[tuple[str, str]]:
    document = httpx.get(server.base + "/api/v1/openapi.json", timeout=30).json()
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                url = path
                for parameter in operation.get("parameters", []):
                    if parameter["in"] == "path":
                        url = url.replace("{" + parameter["name"] + "}", str(uuid.uuid4()))
                found.append((method, url))
    return found


def test_deeply_nested_json_is_invalid_json_on_every_endpoint_with_a_body(
    server: HttpServer, database_url: str
) -> None:
    """Before: 500 and a traceback in the log (RecursionError)."""
    token = new_token(database_url)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    endpoints = endpoints_with_a_body(server)
    assert len(endpoints) >= 10
    bodies = [
        b"[" * 100_000,  # more than Python's parser reads
        json.dumps({"session_id": json.loads("[" * 40 + "]" * 40)}).encode(),  # 41 levels
    ]
    for method, path in endpoints:
        for body in bodies:
            response = httpx.request(
                method, server.base + path, content=body, headers=headers, timeout=30
            )
            assert response.status_code == 400, (method, path, response.text)
            error = response.json()["error"]
            assert error["code"] == "invalid_json"
            assert "nested more than 32 levels deep" in error["message"]


# -- finding 10: what errors say --------------------------------------------------------------


def test_mcp_without_a_token_or_with_a_bad_one_says_what_to_do(server: HttpServer) -> None:
    """Before: no token gave 401 with an empty body; a bad one spoke of OAuth
    re-registration, which this server does not have."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    without = httpx.post(server.url, json=call, headers=ACCEPT, timeout=30)
    assert without.status_code == 401
    assert without.headers["www-authenticate"] == "Bearer"
    message = without.json()["error"]["message"]
    assert "needs a bearer token" in message
    assert "Authorization: Bearer <token>" in message
    assert "emergent-memory token create" in message

    bad = httpx.post(
        server.url,
        json=call,
        headers=ACCEPT | {"Authorization": "Bearer emt_not-a-live-token"},
        timeout=30,
    )
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    message = bad.json()["error"]["message"]
    assert "the bearer token is not valid" in message
    assert "emergent-memory token create" in message
    assert "register" not in message.lower() + bad.headers["www-authenticate"].lower()
    assert "emt_not-a-live-token" not in bad.text


async def test_changing_a_deleted_memory_says_restore_it_first_but_not_to_another_actor(
    server: HttpServer, database_url: str
) -> None:
    """Before: "not found", while GET showed the memory deleted."""
    project = uuid.uuid4()
    actor = uuid.uuid4()
    token = make_token(database_url, actor, project)[0]
    async with client_for(server, token) as client:
        saved = await client.call_tool(
            "save_memory",
            {"content": "The user keeps notes in Obsidian", "category": "fact", "detail": True},
        )
    memory_id = saved.structured_content["memory"]["id"]  # type: ignore[index]
    api = server.base + "/api/v1/memories"
    mine = {"Authorization": f"Bearer {token}"}
    assert httpx.delete(f"{api}/{memory_id}", headers=mine).status_code == 200
    assert httpx.get(f"{api}/{memory_id}", headers=mine).json()["status"] == "deleted"

    changed = httpx.patch(f"{api}/{memory_id}", json={"category": "preference"}, headers=mine)
    assert changed.status_code == 400
    error = changed.json()["error"]
    assert error["code"] == "invalid_input"
    assert f"memory {memory_id} is deleted; restore it first" in error["message"]
    deleted_again = httpx.delete(f"{api}/{memory_id}", headers=mine)
    assert f"memory {memory_id} is already deleted" in deleted_again.json()["error"]["message"]

    stranger = {"Authorization": f"Bearer {new_token(database_url)}"}
    theirs = httpx.patch(f"{api}/{memory_id}", json={"category": "preference"}, headers=stranger)
    missing_id = str(uuid.uuid4())
    missing = httpx.patch(f"{api}/{missing_id}", json={"category": "preference"}, headers=stranger)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.text.replace(memory_id, "ID") == missing.text.replace(missing_id, "ID")


async def test_a_context_name_holding_a_secret_is_refused_as_a_context_name(
    server: HttpServer, database_url: str
) -> None:
    """Before: "refusing to store this memory", about a memory that held no secret."""
    async with client_for(server, new_token(database_url)) as client:
        refused = await client.call_tool(
            "save_memory",
            {
                "content": "The deploy runs on Fridays",
                "category": "fact",
                "options": {"context": "password=hunter2hunter2"},
            },
            raise_on_error=False,
        )
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "context: the context name contains what looks like a password" in text
    assert "refusing to store this memory" not in text
    assert "hunter2" not in text


def log_so_far(server: HttpServer) -> str:
    """What the running server has written on stderr (a file: tests/helpers.py)."""
    with open(f"/proc/{server.process.pid}/fd/2", encoding="utf-8", errors="replace") as log:
        return log.read()


async def test_invalid_argument_types_are_logged_at_info(
    server: HttpServer, database_url: str
) -> None:
    """Before: FastMCP's "Invalid arguments for tool" line was a WARNING; the caller's mistakes
    are INFO, as docs/operations.md says."""
    async with client_for(server, new_token(database_url)) as client:
        refused = await client.call_tool(
            "save_memory", {"content": "x", "category": 5}, raise_on_error=False
        )
        assert refused.is_error
    log = log_so_far(server)
    lines = [line for line in log.splitlines() if "Invalid arguments for tool" in line]
    assert lines, log
    assert all(line.startswith("INFO ") for line in lines), lines
