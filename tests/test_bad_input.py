"""Bad input, through the MCP tools and over HTTP: each is refused with an error that names
the problem and what to fix, and nothing is written."""

from __future__ import annotations

import json
import os
import select
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest
from fastmcp import Client, FastMCP

from emergent_memory.auth.principal import Principal
from emergent_memory.mcp.arguments import mark_lone_surrogates, stdin_with_marked_surrogates
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from tests.embedders import EmbeddingServer
from tests.helpers import (
    COMMAND,
    HttpServer,
    client_for,
    fake_embedder_env,
    make_token,
    running_http_server,
)

pytestmark = pytest.mark.anyio

MAX = 2000  # max_content_length of the test service (MemoryConfig's default)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Ref:
    """An id the table refers to, known only once the fixture has saved the memories."""

    name: str


@dataclass(frozen=True)
class Short(Ref):
    """The same id as the tools' answers show it: its first 8 hex digits."""


@dataclass(frozen=True)
class World:
    """The caller and the memories around it."""

    principal: Principal
    ids: dict[str, str]

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Short):
            return self.ids[value.name][:8]
        if isinstance(value, Ref):
            return self.ids[value.name]
        if isinstance(value, dict):
            return {key: self.resolve(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        return value


@pytest.fixture
def world(service: MemoryService, principal: Principal) -> World:
    def saved(who: Principal, content: str, scope: str = "user") -> str:
        return str(service.save(who, content, "fact", scope=scope)["memory"]["id"])

    other_actor = Principal(uuid.uuid4(), principal.project_id)
    other_project = Principal(principal.actor_id, uuid.uuid4())
    return World(
        principal,
        {
            "mine": saved(principal, "The user prefers tabs over spaces"),
            # another actor's memory, in the caller's project
            "foreign": saved(other_actor, "Bob deploys the billing service", scope="project"),
            # the caller's own memories, saved in another project: a user-scope one (visible
            # here) and a project-scope one (not visible here)
            "elsewhere": saved(other_project, "The side project is written in Go"),
            "elsewhere_project": saved(
                other_project, "The side project deploys with Nomad", scope="project"
            ),
            "nowhere": str(uuid.uuid4()),
        },
    )


@pytest.fixture
def server(service: MemoryService, principal: Principal) -> FastMCP:
    return create_server(lambda: nullcontext(service), lambda: principal)


@pytest.fixture
async def client(server: FastMCP) -> AsyncIterator[Client[Any]]:
    async with Client(server) as connected:
        yield connected


WRITES = """
SELECT
  (SELECT count(*) FROM kb.graph_objects
   WHERE actor_id = %(actor)s OR project_id = %(project)s),
  (SELECT count(*) FROM kb.graph_relationships
   WHERE actor_id = %(actor)s OR project_id = %(project)s),
  (SELECT count(*) FROM kb.graph_embedding_jobs WHERE project_id = %(project)s),
  (SELECT count(*) FROM kb.memory_recalls WHERE actor_id = %(actor)s OR project_id = %(project)s)
"""


@pytest.fixture
def writes(
    connect: Callable[[], psycopg.Connection[Any]], principal: Principal
) -> Callable[[], tuple[int, ...]]:
    """Rows (every version) of the caller's actor or project in each table a tool writes."""
    conn = connect()

    def count() -> tuple[int, ...]:
        row = conn.execute(
            WRITES, {"actor": principal.actor_id, "project": principal.project_id}
        ).fetchone()
        assert row is not None
        return tuple(int(n) for n in row)

    return count


async def result_of(client: Client[Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's full result (asked with detail)."""
    result = await client.call_tool(tool, {**arguments, "detail": True}, raise_on_error=False)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error_of(client: Client[Any], tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


def case(tool: str, arguments: dict[str, Any], *expected: str, id: str) -> Any:
    return pytest.param(tool, arguments, expected, id=id)


def update(**updates: Any) -> dict[str, Any]:
    return {"action": "update", "memory_id": Ref("mine"), "updates": updates}


NOT_AN_ID = "is not a memory id (ids look like '0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d21')"
SCHEMA = "invalid arguments for"

BAD_INPUT = [
    # empty or whitespace content
    case("save_memory", {"content": "", "category": "fact"}, "content is empty", id="empty"),
    case(
        "save_memory",
        {"content": " \t\n\r ", "category": "fact"},
        "content is empty",
        "one specific sentence",
        id="whitespace",
    ),
    case("manage_memory", update(content="   "), "content is empty", id="update-whitespace"),
    case("recall_memories", {"query": " \n "}, "query is empty", id="query-whitespace"),
    # content over the limit
    case(
        "save_memory",
        {"content": "x" * (MAX + 1), "category": "fact"},
        f"content is {MAX + 1} characters long; the limit is {MAX}: keep one fact per memory",
        id="content-too-long",
    ),
    case(
        "manage_memory",
        update(content="word " * 1000),
        f"content is {len(('word ' * 1000).strip())} characters long; the limit is {MAX}",
        id="update-too-long",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "options": {"context": "c" * 201}},
        "context is 201 characters long; the limit is 200",
        id="context-too-long",
    ),
    # NUL and other control characters, and text that is not Unicode
    case(
        "save_memory",
        {"content": "use\x00tabs", "category": "fact"},
        "content contains a NUL character (\\u0000); remove it",
        id="nul",
    ),
    case(
        "save_memory",
        {"content": "red \x1b[31m text", "category": "fact"},
        "content contains the control character U+001B; remove it",
        id="escape",
    ),
    case(
        "save_memory",
        {"content": "bell \x07 and delete \x7f", "category": "fact"},
        "content contains the control character U+0007",
        id="bell",
    ),
    case(
        "save_memory",
        {"content": "next line \x85 here", "category": "fact"},
        "content contains the control character U+0085",
        id="c1-control",
    ),
    case(
        "manage_memory",
        update(content="tabs\x00"),
        "content contains a NUL character",
        id="update-nul",
    ),
    case(
        "recall_memories", {"query": "tabs\x00"}, "query contains a NUL character", id="query-nul"
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "options": {"context": "front\x00end"}},
        "context contains a NUL character",
        id="context-nul",
    ),
    case(
        "save_memory",
        {"content": "half a pair \ud83d here", "category": "fact"},
        "content contains U+D83D, half of a UTF-16 surrogate pair, which is not valid Unicode",
        id="lone-surrogate",
    ),
    case(
        "manage_memory",
        update(content="\udfff"),
        "updates.content contains U+DFFF",
        id="update-lone-surrogate",
    ),
    # unknown category, source, scope, action
    case(
        "save_memory",
        {"content": "ok", "category": "colour"},
        f"{SCHEMA} save_memory: category should be 'preference', 'pattern', 'correction', "
        "'fact', 'instruction', 'convention', 'decision', 'lesson' or 'risk', got 'colour'",
        id="unknown-category",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "source": "rumour"},
        "source should be 'explicit', 'inferred' or 'corrected', got 'rumour'",
        id="unknown-source",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "scope": "team"},
        "scope should be 'user', 'project' or 'global', got 'team'",
        id="unknown-scope",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "options": {"scope": "everyone"}},
        "options.scope should be 'user', 'project' or 'global'",
        id="recall-unknown-scope",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "category": "Preference"},
        "category should be 'preference'",
        "got 'Preference'",
        id="recall-unknown-category",
    ),
    case(
        "manage_memory",
        {"action": "purge"},
        "action should be 'list', 'delete', 'update', 'restore', 'forget_all', 'reinforce', "
        "'archive', 'supersede' or 'keep_both', got 'purge'",
        id="unknown-action",
    ),
    case(
        "manage_memory",
        update(category="colour"),
        "category must be one of preference, pattern, correction, fact, instruction, "
        "convention, decision, lesson, risk; got 'colour'",
        id="update-unknown-category",
    ),
    # limit 0, negative, huge or a string
    case(
        "recall_memories",
        {"query": "tabs", "limit": 0},
        "limit should be greater than or equal to 1, got 0",
        id="limit-0",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": -5},
        "limit should be greater than or equal to 1, got -5",
        id="limit-negative",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": 51},
        "limit should be less than or equal to 50, got 51",
        id="limit-over",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": 10**30},
        "limit should be less than or equal to 50, got a number too large to show",
        id="limit-huge",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": 10**5000},
        "a number in the arguments is too large",
        id="limit-beyond-json",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": "5"},
        "limit should be a valid integer, got '5'",
        id="limit-string",
    ),
    case(
        "recall_memories",
        {"query": "tabs", "limit": 2.5},
        "limit should be a valid integer, got 2.5",
        id="limit-fraction",
    ),
    case(
        "manage_memory",
        {"action": "list", "limit": 0},
        "limit should be greater than or equal to 1, got 0",
        id="list-limit-0",
    ),
    case(
        "manage_memory",
        {"action": "list", "limit": 101},
        "limit should be less than or equal to 100, got 101",
        id="list-limit-over",
    ),
    case(
        "manage_memory",
        {"action": "list", "limit": "20"},
        "limit should be a valid integer, got '20'",
        id="list-limit-string",
    ),
    # malformed or foreign memory ids
    case(
        "manage_memory",
        {"action": "delete", "memory_id": "tabs"},
        f"memory_id 'tabs' {NOT_AN_ID}",
        id="malformed-id",
    ),
    case(
        "manage_memory",
        {"action": "delete", "memory_id": ""},
        f"memory_id '' {NOT_AN_ID}",
        id="empty-id",
    ),
    case(
        "manage_memory",
        {"action": "delete", "memory_id": "0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d2"},
        NOT_AN_ID,
        id="short-id",
    ),
    case(
        "manage_memory",
        {"action": "update", "memory_id": "x" * 10_000, "updates": {"content": "ok"}},
        f"memory_id '{'x' * 57}...' {NOT_AN_ID}",
        id="long-id",
    ),
    case(
        "manage_memory",
        {"action": "delete"},
        "memory_id is required: the id of a memory, as save_memory returns it",
        id="missing-id",
    ),
    case(
        "manage_memory",
        {"action": "delete", "memory_id": Ref("nowhere")},
        "not found",
        id="unknown-id",
    ),
    case(
        "manage_memory",
        {"action": "delete", "memory_id": Ref("foreign")},
        "not found",
        id="foreign-id-delete",
    ),
    case(
        "manage_memory",
        {"action": "update", "memory_id": Ref("foreign"), "updates": {"content": "mine now"}},
        "not found",
        id="foreign-id-update",
    ),
    case(
        "manage_memory",
        {"action": "keep_both", "memory_id": Ref("mine"), "other": Ref("foreign")},
        "not found",
        id="foreign-id-keep-both",
    ),
    case(
        "manage_memory",
        {"action": "keep_both", "memory_id": Ref("mine")},
        "keep_both needs other: the id of the memory memory_id conflicts with",
        id="keep-both-without-other",
    ),
    case(
        "manage_memory",
        {"action": "keep_both", "memory_id": Ref("mine"), "other": Ref("mine")},
        "keep_both needs two memories; other names memory_id again",
        id="keep-both-one-memory",
    ),
    # related_to pointing nowhere or to another project
    case(
        "save_memory",
        {
            "content": "Tabs are 4 wide",
            "category": "fact",
            "options": {"related_to": [Ref("nowhere")]},
        },
        "related_to: no object with id",
        "in this project",
        id="related-nowhere",
    ),
    case(
        "save_memory",
        {
            "content": "Tabs are 4 wide",
            "category": "fact",
            "options": {"related_to": [Ref("elsewhere")]},
        },
        "related_to: no object with id",
        id="related-other-project",
    ),
    case(
        "save_memory",
        {
            "content": "Tabs are 4 wide",
            "category": "fact",
            "options": {"related_to": [Ref("foreign")]},
        },
        "related_to: no object with id",
        id="related-foreign",
    ),
    case(
        "save_memory",
        {
            "content": "Tabs are 4 wide",
            "category": "fact",
            "options": {"related_to": [Ref("mine"), Ref("elsewhere_project")]},
        },
        "related_to: no object with id",
        id="related-one-of-two-elsewhere",
    ),
    case(
        "save_memory",
        {"content": "Tabs are 4 wide", "category": "fact", "options": {"related_to": ["tabs"]}},
        f"related_to id 'tabs' {NOT_AN_ID}",
        id="related-malformed",
    ),
    case(
        "save_memory",
        {
            "content": "Tabs are 4 wide",
            "category": "fact",
            "options": {"related_to": [str(uuid.uuid4()) for _ in range(21)]},
        },
        "related_to holds 21 ids; the limit is 20",
        id="related-too-many",
    ),
    # updates with unknown fields, or none
    case(
        "manage_memory",
        update(owner="someone else"),
        "updates cannot change owner; only content, category, confidence, importance, "
        "valid_from, valid_until, rationale can be updated",
        id="updates-unknown-field",
    ),
    case(
        "manage_memory",
        update(content="ok", scope="global", actor_id=str(uuid.uuid4())),
        "updates cannot change actor_id, scope; only content, category, confidence",
        id="updates-unknown-fields",
    ),
    case(
        "manage_memory",
        {"action": "update", "memory_id": Ref("mine"), "updates": {}},
        "updates must be an object with at least one of: content, category, confidence",
        id="updates-empty",
    ),
    case(
        "manage_memory",
        {"action": "update", "memory_id": Ref("mine")},
        "updates must be an object with at least one of",
        id="updates-missing",
    ),
    case(
        "manage_memory",
        update(confidence=1.5),
        "confidence must be a number from 0 to 1; got 1.5",
        id="confidence-over",
    ),
    case(
        "manage_memory",
        update(confidence="high"),
        "confidence must be a number from 0 to 1; got a string",
        id="confidence-string",
    ),
    case(
        "manage_memory",
        update(confidence=True),
        "confidence must be a number from 0 to 1; got a boolean",
        id="confidence-boolean",
    ),
    # forget_all without confirm
    case(
        "manage_memory",
        {"action": "forget_all"},
        "forget_all deletes every memory you saved in this project; call it again with "
        "confirm: true to go ahead",
        id="forget-all-unconfirmed",
    ),
    case(
        "manage_memory",
        {"action": "forget_all", "confirm": False},
        "call it again with confirm: true",
        id="forget-all-false",
    ),
    case(
        "manage_memory",
        {"action": "forget_all", "confirm": "true"},
        "confirm should be a valid boolean, got 'true'",
        id="forget-all-string",
    ),
    case(
        "manage_memory",
        {"action": "forget_all", "confirm": 1},
        "confirm should be a valid boolean, got 1",
        id="forget-all-number",
    ),
    # very long queries
    case(
        "recall_memories",
        {"query": "tabs " * 401},
        f"query is {len(('tabs ' * 401).strip())} characters long; the limit is {MAX}",
        id="query-too-long",
    ),
    case(
        "recall_memories",
        {"query": "q" * 100_000},
        f"query is 100000 characters long; the limit is {MAX}",
        id="query-far-too-long",
    ),
    # JSON with wrong types, unknown or missing parameters
    case(
        "save_memory",
        {"content": 42, "category": "fact"},
        "content should be a valid string, got 42",
        id="content-number",
    ),
    case(
        "save_memory",
        {"content": None, "category": "fact"},
        "content should be a valid string, got null",
        id="content-null",
    ),
    case(
        "save_memory",
        {"content": ["tabs"], "category": "fact"},
        "content should be a valid string, got a list",
        id="content-list",
    ),
    case(
        "save_memory",
        {"content": {"text": "tabs"}, "category": "fact"},
        "content should be a valid string, got an object",
        id="content-object",
    ),
    case(
        "save_memory",
        {"category": "fact"},
        f"{SCHEMA} save_memory: content is required",
        id="content-missing",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "actor_id": str(uuid.uuid4())},
        f"{SCHEMA} save_memory: actor_id is not a parameter of save_memory",
        id="unknown-parameter",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "options": {"related_to": Ref("mine")}},
        "options.related_to should be a valid list, got '",
        id="related-to-string",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "options": {"related_to": [7]}},
        "options.related_to[0] should be a valid string, got 7",
        id="related-to-number",
    ),
    case(
        "save_memory",
        {"content": "ok", "category": "fact", "options": {"context": 5}},
        "options.context should be a valid string, got 5",
        id="context-number",
    ),
    case(
        "recall_memories",
        {"query": ["tabs"]},
        "query should be a valid string, got a list",
        id="query-list",
    ),
    case(
        "manage_memory",
        {"action": "delete", "memory_id": 12},
        "memory_id should be a valid string, got 12",
        id="id-number",
    ),
    case(
        "manage_memory",
        {"action": "update", "memory_id": Ref("mine"), "updates": "content=tabs"},
        "updates should be an object, got 'content=tabs'",
        id="updates-string",
    ),
    case(
        "save_memory",
        {"content": 1, "category": 2, "source": 3, "scope": 4, "options": 5, "detail": 6},
        "content should be a valid string, got 1",
        "category should be 'preference'",
        "and 1 more",
        id="everything-wrong",
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_INPUT)
async def test_bad_input_is_refused_clearly_and_writes_nothing(
    client: Client[Any],
    world: World,
    writes: Callable[[], tuple[int, ...]],
    tool: str,
    arguments: dict[str, Any],
    expected: tuple[str, ...],
) -> None:
    before = writes()
    assert before[0] >= 2  # the check below counts real rows: the caller's memories are there
    message = await error_of(client, tool, world.resolve(arguments))
    for fragment in expected:
        assert fragment in message
    assert "Error calling tool" not in message  # never the masked internal error
    assert writes() == before


TARGET = Ref("target")
USES_OF_AN_ID = {
    "delete": ("manage_memory", {"action": "delete", "memory_id": TARGET}),
    "delete-short-id": ("manage_memory", {"action": "delete", "memory_id": Short("target")}),
    "reinforce-short-id": (
        "manage_memory",
        {"action": "reinforce", "memory_id": Short("target"), "evidence": "seen"},
    ),
    "update-content": (
        "manage_memory",
        {"action": "update", "memory_id": TARGET, "updates": {"content": "x"}},
    ),
    "update-confidence": (
        "manage_memory",
        {"action": "update", "memory_id": TARGET, "updates": {"confidence": 1}},
    ),
    "related_to": (
        "save_memory",
        {"content": "Tabs are 4 wide", "category": "fact", "options": {"related_to": [TARGET]}},
    ),
}
# Ids the caller may not use: another actor's memory; the caller's own memories kept in
# another project, which related_to may not point to (a project-scope one may not be changed
# either; a user-scope one may: it belongs to the caller everywhere).
HIDDEN = [
    pytest.param(*USES_OF_AN_ID[use], hidden, id=f"{use}-{hidden}")
    for use in USES_OF_AN_ID
    for hidden in ("foreign", "elsewhere", "elsewhere_project")
    if not (hidden == "elsewhere" and use != "related_to")
]


@pytest.mark.parametrize(("tool", "arguments", "hidden"), HIDDEN)
async def test_an_id_the_caller_may_not_use_answers_exactly_like_an_unknown_one(
    client: Client[Any],
    world: World,
    writes: Callable[[], tuple[int, ...]],
    tool: str,
    arguments: dict[str, Any],
    hidden: str,
) -> None:
    before = writes()
    unknown, hidden_id = world.ids["nowhere"], world.ids[hidden]
    for_unknown = await error_of(
        client, tool, World(world.principal, {"target": unknown}).resolve(arguments)
    )
    for_hidden = await error_of(
        client, tool, World(world.principal, {"target": hidden_id}).resolve(arguments)
    )
    assert for_hidden.replace(hidden_id, "<id>").replace(hidden_id[:8], "<id>") == (
        for_unknown.replace(unknown, "<id>").replace(unknown[:8], "<id>")
    )
    assert writes() == before


PUNCTUATION_QUERIES = [
    "!!!",
    "&|!():*",
    "<->",
    "' OR 1=1 --",
    "'); DELETE FROM kb.graph_objects; --",
    'tabs" OR "',
    "!(tabs & spaces) | <2> :* \\",
    "-",
    "or",
    '"""',
    "%_\\%",
    "$1 %s %(actor_id)s {}",
]


@pytest.mark.parametrize("query", PUNCTUATION_QUERIES)
async def test_queries_of_punctuation_or_search_operators_are_just_text(
    client: Client[Any], world: World, query: str
) -> None:
    """Decision: full-text operators are not interpreted as operators (the query goes through
    websearch_to_tsquery, as a bound parameter), so such a query is an ordinary query: it
    answers normally (often with nothing), never with an error."""
    result = await result_of(client, "recall_memories", {"query": query})
    assert isinstance(result["memories"], list)
    listed = await result_of(client, "manage_memory", {"action": "list"})
    assert world.ids["mine"] in {m["id"] for m in listed["memories"]}


async def test_operators_around_words_still_find_them(client: Client[Any], world: World) -> None:
    result = await result_of(client, "recall_memories", {"query": "!tabs & (spaces):* <->"})
    assert world.ids["mine"] in {m["id"] for m in result["memories"]}


# -- over HTTP ------------------------------------------------------------------------------

LIMIT = 16_384
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# the envelope of a tools/call at the protocol version the FastMCP client speaks
META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"test","version":"0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}}'
)


@pytest.fixture(scope="module")
def small_http_server(
    database_url: str, module_embedding_server: EmbeddingServer
) -> Iterator[HttpServer]:
    """A server with a small request limit, shared by the module's tests (each has a token and
    project of its own)."""
    with running_http_server(
        database_url, module_embedding_server, EMERGENT_MEMORY_MAX_REQUEST_BYTES=str(LIMIT)
    ) as server:
        yield server


def call_body(arguments: bytes, tool: str = "save_memory") -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"'
        + tool.encode()
        + b'","arguments":'
        + arguments
        + b","
        + META
        + b"}}"
    )


def raw_call(
    server: HttpServer, token: str, body: Any, tool: str = "save_memory"
) -> httpx.Response:
    headers = HEADERS | {
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    return httpx.post(server.url, content=body, headers=headers, timeout=30)


def memories_of(database_url: str, project: uuid.UUID) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE project_id = %s", (project,)
        ).fetchone()
    assert row is not None
    return int(row[0])


async def test_http_refuses_oversized_bodies_with_413_and_keeps_serving(
    small_http_server: HttpServer, database_url: str
) -> None:
    project = uuid.uuid4()
    token, _ = make_token(database_url, uuid.uuid4(), project)
    expected = (
        f"the request body is larger than {LIMIT} bytes, the limit set by "
        "EMERGENT_MEMORY_MAX_REQUEST_BYTES"
    )
    huge = call_body(b'{"content":"' + b"x" * LIMIT + b'","category":"fact"}')

    declared = raw_call(small_http_server, token, huge)  # with a Content-Length
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == -32600
    assert expected in declared.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        for start in range(0, len(huge), 1000):
            yield huge[start : start + 1000]

    streamed = raw_call(small_http_server, token, chunks())
    assert streamed.status_code == 413
    assert expected in streamed.json()["error"]["message"]

    unauthenticated = httpx.post(small_http_server.url, content=huge, headers=HEADERS)
    assert unauthenticated.status_code in (401, 413)

    assert memories_of(database_url, project) == 0
    async with client_for(small_http_server, token) as client:  # the server still works
        saved = await result_of(
            client, "save_memory", {"content": "The user prefers tabs", "category": "preference"}
        )
        assert saved["status"] == "created"
        # a body under the limit reaches the tools, which have limits of their own
        long_query = await error_of(client, "recall_memories", {"query": "tabs " * 1000})
        assert "query is 4999 characters long; the limit is 2000" in long_query
    assert memories_of(database_url, project) == 1


async def test_http_refuses_text_that_is_not_unicode_with_a_clear_error(
    small_http_server: HttpServer, database_url: str
) -> None:
    project = uuid.uuid4()
    token, _ = make_token(database_url, uuid.uuid4(), project)

    for invalid in (b"caf\xe9", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80"):  # Latin-1, BOM, cut
        body = call_body(b'{"content":"' + invalid + b' tabs","category":"fact"}')
        response = raw_call(small_http_server, token, body)
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32700
        assert "the request body is not valid UTF-8" in error["message"]
        assert "send JSON encoded as UTF-8" in error["message"]

    # valid JSON and UTF-8, but an escaped half of a surrogate pair: not text either
    escaped = call_body(b'{"content":"half \\ud83d a pair","category":"fact"}')
    response = raw_call(small_http_server, token, escaped)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert (
        "content contains U+D83D, half of a UTF-16 surrogate pair" in result["content"][0]["text"]
    )

    key = call_body(
        b'{"action":"update","memory_id":"0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d21",'
        b'"updates":{"content\\udc00":"x"}}',
        tool="manage_memory",
    )
    response = raw_call(small_http_server, token, key, tool="manage_memory")
    assert response.status_code == 200
    text = response.json()["result"]["content"][0]["text"]
    assert "a key of updates contains U+DC00" in text

    assert memories_of(database_url, project) == 0
    async with client_for(small_http_server, token) as client:
        saved = await result_of(
            client,
            "save_memory",
            {"content": "The user writes café in Unicode", "category": "fact"},
        )
        assert saved["memory"]["content"] == "The user writes café in Unicode"


def sse_or_json(response: httpx.Response) -> Any:
    """The JSON-RPC message of a streamable HTTP answer, sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


async def test_half_a_surrogate_pair_is_a_tool_error_in_a_session_of_an_older_protocol(
    small_http_server: HttpServer, database_url: str
) -> None:
    """Clients of the session-based protocol (2025-06-18) are parsed by another part of the MCP
    SDK, which answered such a message with HTTP 400 "Parse error" before any tool ran."""
    project = uuid.uuid4()
    token, _ = make_token(database_url, uuid.uuid4(), project)
    headers = HEADERS | {"Authorization": f"Bearer {token}"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "older-client", "version": "0"},
        },
    }
    started = httpx.post(small_http_server.url, json=initialize, headers=headers, timeout=30)
    assert started.status_code == 200, started.text
    session = headers | {
        "Mcp-Session-Id": started.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    notified = httpx.post(
        small_http_server.url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=session,
        timeout=30,
    )
    assert notified.status_code == 202
    for number, (arguments, expected) in enumerate(
        [
            (b'{"content":"half \\ud83d a pair","category":"fact"}', "content contains U+D83D"),
            (b'{"content":"low \\udc00 first","category":"fact"}', "content contains U+DC00"),
        ],
        start=2,
    ):
        body = (
            b'{"jsonrpc":"2.0","id":' + str(number).encode() + b',"method":"tools/call",'
            b'"params":{"name":"save_memory","arguments":' + arguments + b"}}"
        )
        response = httpx.post(small_http_server.url, content=body, headers=session, timeout=30)
        assert response.status_code == 200, response.text
        result = sse_or_json(response)["result"]
        assert result["isError"] is True
        assert expected in result["content"][0]["text"]
    whole = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"save_memory",'
        b'"arguments":{"content":"a whole pair \\ud83d\\ude00 is text","category":"fact",'
        b'"detail":true}}}'
    )
    saved = sse_or_json(httpx.post(small_http_server.url, content=whole, headers=session))
    assert saved["result"]["structuredContent"]["memory"]["content"] == "a whole pair 😀 is text"
    assert memories_of(database_url, project) == 1


@dataclass
class StdioServer:
    """`emergent-memory serve --transport stdio`, one JSON-RPC message a line."""

    process: subprocess.Popen[bytes]

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "no answer within 60 s"
        return dict(json.loads(self.process.stdout.readline()))


@pytest.fixture(scope="module")
def stdio_server(
    database_url: str, module_embedding_server: EmbeddingServer
) -> Iterator[StdioServer]:
    """A stdio server, initialized (protocol 2025-06-18), shared by the module's tests: each
    reads every answer it asks for, so the next finds none left over."""
    env = fake_embedder_env(
        module_embedding_server,
        EMERGENT_MEMORY_DATABASE_URL=database_url,
        EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
        EMERGENT_MEMORY_PROJECT_ID=str(uuid.uuid4()),
    )
    process = subprocess.Popen(
        [*COMMAND, "serve", "--transport", "stdio", "--no-worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    server = StdioServer(process)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        server.send(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}'
        )
        assert server.answer()["id"] == 1
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield server
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        process.stdout.close()
    assert process.returncode == 0


def test_half_a_surrogate_pair_over_stdio_is_answered_with_a_tool_error(
    stdio_server: StdioServer,
) -> None:
    """The MCP SDK's stdio reader could not parse such a line and sent no answer at all: the
    client waited for ever."""
    stdio_server.send(
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"save_memory",'
        b'"arguments":{"content":"half \\ud83d a pair","category":"fact"}}}'
    )
    refused = stdio_server.answer()
    assert refused["id"] == 2
    assert refused["result"]["isError"] is True
    assert (
        "content contains U+D83D, half of a UTF-16 surrogate pair"
        in (refused["result"]["content"][0]["text"])
    )
    stdio_server.send(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"save_memory",'
        b'"arguments":{"content":"a whole pair \\ud83d\\ude00 is text","category":"fact",'
        b'"detail":true}}}'
    )
    saved = stdio_server.answer()
    assert saved["result"]["structuredContent"]["memory"]["content"] == ("a whole pair 😀 is text")


def test_a_line_that_is_not_a_json_rpc_message_over_stdio_gets_a_json_rpc_error(
    stdio_server: StdioServer,
) -> None:
    """The SDK dropped such a line: no answer at all. Now -32700 (not JSON) or -32600 (JSON,
    not a message), id null, a message that names neither the line nor its text, and the
    server keeps serving."""
    for line, code in [
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/list"', -32700),  # cut short
        (b"[" * 5000, -32700),  # nested deeper than any parser reads
        (b"caf\xe9 secret-word", -32700),  # not UTF-8, not JSON
        (b'{"hello": "secret-word"}', -32600),
    ]:
        stdio_server.send(line)
        answer = stdio_server.answer()
        assert answer["id"] is None
        assert answer["error"]["code"] == code
        assert "secret-word" not in answer["error"]["message"]
        assert "one JSON-RPC message per line" in answer["error"]["message"] or (
            "not a JSON-RPC 2.0 message" in answer["error"]["message"]
        )
    stdio_server.send(b"")  # a blank line is no message: no answer
    stdio_server.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
    listed = stdio_server.answer()
    assert listed["id"] == 7
    assert {tool["name"] for tool in listed["result"]["tools"]} >= {"save_memory"}


@pytest.mark.parametrize(
    ("message", "marked"),
    [
        (rb'"half \ud83d a pair"', '"half \ufdd0\U000f003d a pair"'.encode()),
        (rb'"low \uDC00 first"', '"low \ufdd0\U000f0400 first"'.encode()),
        (rb'"a whole pair \ud83d\ude00"', None),
        (rb'"two highs \ud83d\ud83d\ude00"', '"two highs \ufdd0\U000f003d\\ud83d\\ude00"'.encode()),
        (rb'"an escaped backslash, then text \\ud83d"', None),
        (
            rb'"an escaped backslash, then an escape \\\ud83d"',
            '"an escaped backslash, then an escape \\\\\ufdd0\U000f003d"'.encode(),
        ),
        (rb'"not a surrogate \u0041\ue000"', None),
    ],
)
def test_only_escaped_halves_of_surrogate_pairs_that_stand_alone_are_marked(
    message: bytes, marked: bytes | None
) -> None:
    assert mark_lone_surrogates(message) == (message if marked is None else marked)


def test_standard_input_is_marked_line_by_line_and_restored_afterwards() -> None:
    """Each line read from file descriptor 0 inside the block is the real input's line, marked;
    after the block, descriptor 0 is the real input again."""
    real_read, real_write = os.pipe()
    saved = os.dup(0)
    os.dup2(real_read, 0)
    try:
        real = os.fstat(0)
        with stdin_with_marked_surrogates():
            assert (os.fstat(0).st_dev, os.fstat(0).st_ino) != (real.st_dev, real.st_ino)
            os.write(real_write, b'{"content": "half \\ud83d"}\n{"content": "none"}\n')
            with open(os.dup(0), "rb") as piped:
                assert piped.readline() == '{"content": "half \ufdd0\U000f003d"}\n'.encode()
                assert piped.readline() == b'{"content": "none"}\n'
        assert (os.fstat(0).st_dev, os.fstat(0).st_ino) == (real.st_dev, real.st_ino)
    finally:
        os.dup2(saved, 0)
        for fd in (saved, real_read, real_write):
            os.close(fd)
