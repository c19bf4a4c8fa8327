"""The MCP server through an in-memory FastMCP client, on the real service and database."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import nullcontext
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from psycopg_pool import ConnectionPool

from emergent_memory import __version__, graph
from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY, VERIFY_POLICIES
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.mcp import guidelines
from emergent_memory.mcp.metrics import tool_outcome
from emergent_memory.mcp.server import ServiceHolder, create_server
from emergent_memory.memory import MemoryService, store
from emergent_memory.memory.verify import VerifyConfig, VerifyService

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def rules_verifier(memory: MemoryService) -> nullcontext[VerifyService]:
    """verify_memory's service as the server builds it without an Anthropic key (the test
    embedder has the policy of a model nobody calibrated)."""
    return nullcontext(VerifyService(memory, None, VerifyConfig(UNCALIBRATED_VERIFY_POLICY)))


def server_for(service: MemoryService, principal: Principal) -> FastMCP:
    return create_server(
        lambda: nullcontext(service), lambda: principal, open_verifier=rules_verifier
    )


@pytest.fixture
def server(service: MemoryService, principal: Principal) -> FastMCP:
    return server_for(service, principal)


@pytest.fixture
async def client(server: FastMCP) -> AsyncIterator[Client[Any]]:
    async with Client(server) as connected:
        yield connected


async def call(client: Client[Any], tool: str, **arguments: Any) -> Any:
    """The tool's full result: its structured content with detail, but for the text."""
    result = await client.call_tool(tool, {**arguments, "detail": True})
    assert not result.is_error
    assert isinstance(result.structured_content["text"], str)
    return {k: v for k, v in result.structured_content.items() if k != "text"}


async def error_of(client: Client[Any], tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


async def test_the_four_tools_with_their_annotations_and_schemas(client: Client[Any]) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert set(tools) == {"save_memory", "recall_memories", "manage_memory", "verify_memory"}
    assert tools["recall_memories"].annotations.read_only_hint is True
    assert tools["verify_memory"].annotations.read_only_hint is True
    assert tools["verify_memory"].annotations.destructive_hint is False
    assert tools["manage_memory"].annotations.destructive_hint is True
    assert tools["save_memory"].annotations.destructive_hint is False
    assert tools["save_memory"].annotations.read_only_hint is False
    save = tools["save_memory"].input_schema
    assert save["required"] == ["content", "category"]
    assert set(save["properties"]) == {
        "content",
        "category",
        "source",
        "scope",
        "options",
        "detail",
    }
    # the rarely used ones, in options: named there, checked by the tool (SaveOptions)
    for option in (
        "context",
        "related_to",
        "importance",
        "evidence",
        "valid_from",
        "valid_until",
        "rationale",
        "supersede_reason",
    ):
        assert option in save["properties"]["options"]["description"]
    assert save["properties"]["category"]["enum"] == [
        "preference",
        "pattern",
        "correction",
        "fact",
        "instruction",
        "convention",
        "decision",
        "lesson",
        "risk",
    ]
    verify = tools["verify_memory"].input_schema
    assert verify["required"] == ["claim"]
    assert set(verify["properties"]) == {"claim", "category", "scope", "limit", "detail"}
    assert (verify["properties"]["limit"]["minimum"], verify["properties"]["limit"]["maximum"]) == (
        1,
        20,
    )
    assert tools["verify_memory"].output_schema is not None
    assert {"verdict", "why", "matches", "judge", "degraded"} <= set(
        tools["verify_memory"].output_schema["properties"]
    )
    assert "confirmed" in (tools["verify_memory"].description or "")
    # read-only for memories, but an ambiguous claim may cost an LLM call: said
    assert "LLM call" in (tools["verify_memory"].description or "")
    assert "daily token budget" in (tools["verify_memory"].description or "")
    recall = tools["recall_memories"].input_schema
    assert set(recall["properties"]) == {"query", "category", "limit", "options", "detail"}
    options = ("include_episodes", "include_archived", "as_of", "scope", "min_relevance")
    for option in (*options, "conversations"):
        assert option in recall["properties"]["options"]["description"]
    assert set(tools["manage_memory"].input_schema["properties"]) == {
        "action",
        "memory_id",
        "updates",
        "category",
        "limit",
        "confirm",
        "status",
        "evidence",
        "reason",
        "replaces",
        "other",
        "detail",
    }
    manage = tools["manage_memory"].input_schema["properties"]
    assert {"reinforce", "archive", "supersede", "keep_both"} <= set(manage["action"]["enum"])
    assert "archived" in manage["status"]["enum"]
    assert "start of every task" in (tools["recall_memories"].description or "")
    assert "as soon as you learn it" in (tools["save_memory"].description or "")
    assert "Never save secrets" in " ".join((tools["save_memory"].description or "").split())
    assert "by meaning" in (tools["recall_memories"].description or "")
    assert tools["save_memory"].output_schema is not None


async def test_recall_memories_searches_episodes_only_when_asked(
    client: Client[Any], principal: Principal, pool: ConnectionPool
) -> None:
    """include_episodes: the caller's captured conversations in their own list, described in
    the tool's description and output schema; memories show derived_from."""
    [tool] = [t for t in await client.list_tools() if t.name == "recall_memories"]
    assert "include_episodes" in tool.input_schema["properties"]["options"]["description"]
    assert tool.output_schema is not None
    assert "episodes" in tool.output_schema["properties"]
    assert "episodes" not in tool.output_schema.get("required", [])
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        graph.install_pack(conn, principal.project_id, "agent-memory")
        episode = graph.create_object(
            conn,
            project_id=principal.project_id,
            type=store.EPISODE,
            actor_id=principal.actor_id,
            properties={
                "session_id": "s-1",
                "client": "claude-code",
                "first_turn": 0,
                "last_turn": 3,
                "digest": "c" * 64,
                "text": "user: we chose Redis for the session cache",
            },
        )

    plain = await call(client, "recall_memories", query="session cache")
    assert plain == {
        "memories": [],
        "degraded": False,
        "min_relevance": 0.0,
        "nothing_relevant": True,
    }
    found = await call(
        client, "recall_memories", query="session cache", options={"include_episodes": True}
    )
    assert [item["id"] for item in found["episodes"]] == [str(episode.canonical_id)]
    assert found["episodes"][0]["turns"] == {"first": 0, "last": 3}
    assert "Redis" in found["episodes"][0]["excerpt"]
    saved = await call(client, "save_memory", content="The user likes Redis", category="fact")
    assert saved["memory"]["derived_from"] is None
    assert "options.include_episodes should be a valid boolean" in await error_of(
        client, "recall_memories", query="x", options={"include_episodes": "yes"}
    )


async def test_the_memory_guidelines_prompt(client: Client[Any]) -> None:
    prompts = {prompt.name for prompt in await client.list_prompts()}
    assert prompts == {"memory_guidelines"}
    result = await client.get_prompt("memory_guidelines")
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert text == guidelines.MEMORY_GUIDELINES
    for topic in ("When to recall", "When to save", "good memory", "never to save", "Credentials"):
        assert topic in text


async def test_the_guidelines_teach_the_lifecycle(client: Client[Any]) -> None:
    """When to verify, reinforce, give validity and importance, and the new categories: each
    taught with the tool, action or parameter that does it, in the words the tools use."""
    result = await client.get_prompt("memory_guidelines")
    text = " ".join(result.messages[0].content.text.split())  # type: ignore[union-attr]
    for teaching in (
        # verify before acting on a remembered fact, and before saving a possible contradiction
        "Before acting on a remembered fact that may have changed",
        "before saving something that may contradict what is remembered, call verify_memory",
        *(f"**{verdict}**" for verdict in ("confirmed", "conflict", "related", "new")),
        # reinforce when the user confirms, with evidence
        'When the user confirms a remembered fact ("yes, still pnpm")',
        'manage_memory action "reinforce" with its memory_id and evidence',
        # validity with a known end or start
        'valid_until "2027-03-01"',
        "a fact that starts later gets valid_from",
        # importance: core only for what shapes every session, low for trivia
        '"core" only for what must shape every session',
        '"low" for trivia',
        # the categories coding agents need
        "a **decision** taken with the user, with its rationale",
        "a **lesson** learned: what went wrong and what to do instead",
        "a **risk**, a known pitfall",
        # archived memories and reasons
        'status "superseded", "archived" or "deleted"',
        "with a reason",
        # the answers and the options the tools' definitions leave to this prompt
        "[id] category, age, flags: content",
        "pass it as memory_id to manage_memory as shown",
        'recall with options {"include_episodes": true}',
        "These go in save_memory's options",
        'supersede the wrong one with the right one (manage_memory action "supersede"',
    ):
        assert teaching in text, teaching
    tools = {tool.name: tool.description or "" for tool in await client.list_tools()}
    for name in ("verify_memory", "save_memory", "recall_memories"):
        assert name in guidelines.INSTRUCTIONS  # the server's instructions name them too
    assert "reinforce" in tools["manage_memory"]
    assert "valid_until" in tools["save_memory"] + json.dumps(await input_schemas(client))
    assert "as_of" in json.dumps(await input_schemas(client))


async def input_schemas(client: Client[Any]) -> dict[str, Any]:
    return {tool.name: tool.input_schema for tool in await client.list_tools()}


async def test_the_whole_lifecycle_through_the_tools(client: Client[Any]) -> None:
    saved = await call(
        client, "save_memory", content="The user prefers pnpm", category="preference"
    )
    assert saved["status"] == "created"
    memory_id = saved["memory"]["id"]
    again = await call(
        client, "save_memory", content="the user prefers pnpm", category="preference"
    )
    assert again["status"] == "unchanged"

    recalled = await call(client, "recall_memories", query="pnpm")
    assert [m["id"] for m in recalled["memories"]] == [memory_id]
    assert recalled["memories"][0]["scores"]["lexical_rank"] == 1

    updated = await call(
        client,
        "manage_memory",
        action="update",
        memory_id=memory_id,
        updates={"content": "The user prefers yarn"},
    )
    assert updated["memory"]["id"] == memory_id
    listed = await call(client, "manage_memory", action="list")
    assert [m["content"] for m in listed["memories"]] == ["The user prefers yarn"]

    assert await call(client, "manage_memory", action="delete", memory_id=memory_id) == {
        "deleted": memory_id
    }
    assert (await call(client, "recall_memories", query="yarn"))["memories"] == []

    await call(client, "save_memory", content="Another one", category="fact")
    forgotten = await call(client, "manage_memory", action="forget_all", confirm=True)
    assert forgotten == {"deleted_count": 1}


async def test_save_memory_reports_possible_duplicates_for_the_agent_to_judge(
    make_service: Callable[..., MemoryService], principal: Principal
) -> None:
    banded = make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)
    server = create_server(lambda: nullcontext(banded), lambda: principal)
    async with Client(server) as client:
        [tool] = [t for t in await client.list_tools() if t.name == "save_memory"]
        assert tool.output_schema is not None
        assert "possible_duplicates" in tool.output_schema["properties"]
        assert "close or conflicting memories" in (tool.description or "")
        assert "manage_memory" in (tool.description or "")
        old = await call(
            client,
            "save_memory",
            content="Deploys to production happen on Fridays",
            category="fact",
        )
        assert old["possible_duplicates"] == []
        new = await call(
            client,
            "save_memory",
            content="Deploys to production happen on Thursdays",
            category="fact",
        )
    assert new["status"] == "created"
    assert new["possible_duplicates"] == [
        {
            "id": old["memory"]["id"],
            "content": "Deploys to production happen on Fridays",
            "similarity": new["similarity"],
            "why": "the same subject with another value, and neither says it changed",
            # another value of the same subject: linked as a conflict (CONFLICTS_WITH)
            "conflict": True,
        }
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("save_memory", {"content": " ", "category": "fact"}, "content is empty"),
        ("save_memory", {"content": "x", "category": "colour"}, "category"),
        ("save_memory", {"content": "x", "category": "fact", "scope": "global"}, "administrator"),
        (
            "save_memory",
            {"content": "key AKIAIOSFODNN7REALKEY", "category": "fact"},
            "AWS access key",
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"related_to": ["nope"]}},
            "not a memory id",
        ),
        ("recall_memories", {"query": ""}, "query is empty"),
        ("recall_memories", {"query": "x", "limit": 0}, "limit"),
        ("manage_memory", {"action": "purge"}, "action"),
        ("verify_memory", {"claim": " "}, "claim is empty"),
        ("verify_memory", {"claim": "x", "limit": 0}, "limit"),
        ("verify_memory", {"claim": "x", "limit": 21}, "limit"),
        ("verify_memory", {"claim": "x", "category": "colour"}, "category"),
        ("verify_memory", {"claim": "x", "scope": "everyone"}, "scope"),
        ("verify_memory", {"claim": "password=hunter2hunter2"}, "refusing to verify"),
        ("verify_memory", {}, "claim is required"),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"importance": "urgent"}},
            "options.importance should be 'low', 'normal', 'high' or 'core', got 'urgent'",
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "importance": "high"},
            'importance goes in options: {"options": {"importance": ...}}',
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"colour": "red"}},
            "options.colour is not a parameter of save_memory",
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"valid_from": "yesterday"}},
            "valid_from 'yesterday' is not an ISO 8601 date or date-time",
        ),
        (
            "save_memory",
            {
                "content": "x",
                "category": "fact",
                "options": {"valid_from": "2026-03-01", "valid_until": "2026-02-01"},
            },
            "valid_until (2026-02-01T00:00:00Z) must be after valid_from",
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"rationale": "r" * 1001}},
            "rationale",
        ),
        (
            "save_memory",
            {"content": "x", "category": "fact", "options": {"evidence": "e" * 501}},
            "evidence",
        ),
        (
            "recall_memories",
            {"query": "x", "options": {"as_of": "soon"}},
            "as_of 'soon' is not an ISO 8601",
        ),
        (
            "recall_memories",
            {"query": "x", "options": {"include_archived": "yes"}},
            "options.include_archived",
        ),
        ("recall_memories", {"query": "x", "options": "yes"}, "options should be"),
        (
            "recall_memories",
            {"query": "x", "options": {"min_relevance": 1.5}},
            "options.min_relevance",
        ),
        (
            "manage_memory",
            {"action": "reinforce", "memory_id": str(uuid.uuid4())},
            "evidence is required",
        ),
        ("manage_memory", {"action": "archive"}, "memory_id is required"),
        (
            "manage_memory",
            {"action": "list", "evidence": "seen"},
            "evidence goes with reinforce; list does not take it",
        ),
        (
            "manage_memory",
            {"action": "update", "memory_id": str(uuid.uuid4()), "reason": "why"},
            "reason goes with delete, archive and supersede; update does not take it",
        ),
        ("manage_memory", {"action": "list", "status": "expired"}, "status"),
        (
            "manage_memory",
            {"action": "supersede", "memory_id": str(uuid.uuid4())},
            "supersede needs replaces: the id of the memory that memory_id replaces",
        ),
        (
            "manage_memory",
            {"action": "delete", "memory_id": str(uuid.uuid4()), "replaces": str(uuid.uuid4())},
            "replaces goes with supersede; delete does not take it",
        ),
        (
            "manage_memory",
            {"action": "supersede", "memory_id": str(uuid.uuid4()), "replaces": "nope"},
            "replaces 'nope' is not a memory id",
        ),
        (
            "manage_memory",
            {"action": "delete", "memory_id": str(uuid.uuid4()), "reason": "r" * 501},
            "reason",
        ),
        ("manage_memory", {"action": "forget_all"}, "confirm: true"),
        ("manage_memory", {"action": "forget_all", "confirm": "yes"}, "confirm"),
        ("manage_memory", {"action": "forget_all", "confirm": 1}, "confirm"),
        ("recall_memories", {"query": "x", "limit": "5"}, "limit"),
        ("manage_memory", {"action": "delete"}, "memory_id is required"),
        (
            "manage_memory",
            {"action": "delete", "memory_id": "00000000-0000-0000-0000-000000000000"},
            "memory 00000000-0000-0000-0000-000000000000 not found",
        ),
        (
            "manage_memory",
            {"action": "update", "memory_id": str(uuid.uuid4()), "updates": {"owner": "me"}},
            "updates cannot change owner",
        ),
    ],
)
async def test_every_error_is_a_tool_error_with_a_useful_message(
    client: Client[Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert message in await error_of(client, tool, **arguments)


async def test_internal_errors_are_masked(principal: Principal) -> None:
    class Broken:
        def recall(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("connection string postgresql://admin:hunter2@db/prod")

    server = create_server(lambda: nullcontext(Broken()), lambda: principal)  # type: ignore[arg-type,return-value]
    async with Client(server) as client:
        message = await error_of(client, "recall_memories", query="anything")
    assert "hunter2" not in message
    assert "recall_memories" in message


async def test_a_wrong_deletion_is_found_and_restored_through_the_tools(
    client: Client[Any],
) -> None:
    saved = await call(
        client, "save_memory", content="The user's locker is number 214", category="fact"
    )
    memory_id = saved["memory"]["id"]
    await call(client, "manage_memory", action="delete", memory_id=memory_id)
    deleted = await call(client, "manage_memory", action="list", status="deleted")
    assert [(m["id"], m["status"]) for m in deleted["memories"]] == [(memory_id, "deleted")]
    restored = await call(client, "manage_memory", action="restore", memory_id=memory_id)
    assert restored["restored_from"] == "deleted"
    assert restored["memory"]["id"] == memory_id
    assert [
        m["id"] for m in (await call(client, "recall_memories", query="locker"))["memories"]
    ] == [memory_id]
    again = await error_of(client, "manage_memory", action="restore", memory_id=memory_id)
    assert "is active; there is nothing to restore" in again


async def test_the_server_names_itself_with_the_products_version(client: Client[Any]) -> None:
    info = client.server_info
    assert info is not None
    assert (info.name, info.version) == ("emergent-memory", __version__)


async def test_verify_memory_confirms_finds_conflicts_and_new_claims(
    client: Client[Any],
) -> None:
    saved = await call(
        client, "save_memory", content="The staging database is db-2", category="fact"
    )
    memory_id = saved["memory"]["id"]
    confirmed = await call(client, "verify_memory", claim="The staging database is db-2")
    assert (confirmed["verdict"], confirmed["judge"]) == ("confirmed", "rules")
    assert [(m["id"], m["relation"]) for m in confirmed["matches"]] == [(memory_id, "confirms")]
    conflict = await call(client, "verify_memory", claim="The staging database is db-3")
    assert conflict["verdict"] == "conflict", conflict["why"]
    assert conflict["matches"][0]["id"] == memory_id
    assert conflict["matches"][0]["relation"] == "conflicts"
    new = await call(client, "verify_memory", claim="The user's cat is called Miso")
    assert (new["verdict"], new["matches"]) == ("new", [])
    # read-only: verifying counted no use
    [listed] = (await call(client, "manage_memory", action="list"))["memories"]
    assert listed["use_count"] == 0


async def test_verify_memory_sees_only_the_callers_memories(
    service: MemoryService, principal: Principal
) -> None:
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    async with (
        Client(server_for(service, principal)) as me,
        Client(server_for(service, other)) as them,
    ):
        claim = "The user's locker code hint is Lisbon"
        saved = await call(me, "save_memory", content=claim, category="fact")
        mine = await call(me, "verify_memory", claim=claim)
        assert [m["id"] for m in mine["matches"]] == [saved["memory"]["id"]]
        theirs = await call(them, "verify_memory", claim=claim)
        assert (theirs["verdict"], theirs["matches"]) == ("new", [])


def local_verify_server(semantic: MemoryService, principal: Principal) -> FastMCP:
    """A server on the local model with its calibrated verify policy, as serve runs them."""
    policy = VERIFY_POLICIES[LOCAL_MODEL_NAME]
    return create_server(
        lambda: nullcontext(semantic),
        lambda: principal,
        open_verifier=lambda memory: nullcontext(
            VerifyService(memory, None, VerifyConfig(policy=policy))
        ),
    )


async def test_verify_memory_calls_a_negation_in_other_words_a_conflict(
    semantic: MemoryService, principal: Principal
) -> None:
    """The local model and its calibrated policy, as the server runs them: a negation that
    keeps few of the memory's words conflicts from its own threshold (verify_rules)."""
    async with Client(local_verify_server(semantic, principal)) as client:
        saved = await call(
            client,
            "save_memory",
            content="Deploys to production happen on Tuesdays after the standup.",
            category="convention",
        )
        claim = "Production deploys never happen on Tuesdays."
        result = await call(client, "verify_memory", claim=claim)
        text = await client.call_tool("verify_memory", {"claim": claim})
    assert result["verdict"] == "conflict", result["why"]
    [best, *_] = result["matches"]
    assert (best["id"], best["relation"]) == (saved["memory"]["id"], "conflicts")
    assert "the claim negates what the other states" in best["why"]
    # what the model reads: the verdict and why on the first line
    first = text.structured_content["text"].splitlines()[0]
    assert first.startswith("conflict: a memory states something else about the same subject")


async def test_save_memory_supersedes_a_stated_change_by_the_learned_reading(
    semantic: MemoryService, principal: Principal
) -> None:
    """The local model's dedup policy, as the server runs it: a chat speaker's stated change,
    which the rules keep beside the old turn, is read by the learned reading
    (memory/dedup_learned.py) as the same fact: the old memory is superseded and says why."""
    async with Client(local_verify_server(semantic, principal)) as client:
        old = await call(
            client, "save_memory", content="Oskar: my shift starts at 7", category="fact"
        )
        new = await call(
            client, "save_memory", content="Oskar: my shift starts at 8 now", category="fact"
        )
        listed = await call(client, "manage_memory", action="list", status="superseded")
    assert new["status"] == "updated", new
    assert new["superseded_ids"] == [old["memory"]["id"]]
    [gone] = listed["memories"]
    assert gone["id"] == old["memory"]["id"]
    assert "a model fitted on labelled pairs read them as one" in gone["superseded_because"]


async def test_verify_memory_confirms_a_restatement_by_the_learned_reading(
    semantic: MemoryService, principal: Principal
) -> None:
    """The local model's policy, as the server runs it: a restatement the rules find only
    related is confirmed by the learned reading (memory/verify_learned.py), and the line
    the model reads says so."""
    async with Client(local_verify_server(semantic, principal)) as client:
        saved = await call(
            client,
            "save_memory",
            content="Lena answers support tickets at the end of each day, after the last deploy.",
            category="fact",
        )
        claim = (
            "Lena tends to handle support tickets at the close of her day, once the final "
            "deploy is out."
        )
        result = await call(client, "verify_memory", claim=claim)
        text = await client.call_tool("verify_memory", {"claim": claim})
    assert result["verdict"] == "confirmed", result["why"]
    [best, *_] = result["matches"]
    assert (best["id"], best["relation"]) == (saved["memory"]["id"], "confirms")
    first = text.structured_content["text"].splitlines()[0]
    assert first.startswith("confirmed: the closest memory states the claim in other words")
    assert "learned reading" in first


async def test_verify_memory_without_a_verify_service_says_so(
    service: MemoryService, principal: Principal
) -> None:
    server = create_server(lambda: nullcontext(service), lambda: principal)
    async with Client(server) as client:
        message = await error_of(client, "verify_memory", claim="anything")
    assert "verify_memory is not available on this server" in message


def test_the_holders_errors_are_counted_unavailable() -> None:
    """Starting, or verify_memory not offered: the server's state, not the caller's input."""
    holder = ServiceHolder()
    errors = []
    for attempt in (holder.get, holder.verifier):
        try:
            attempt()
        except ToolError as error:
            errors.append(error)
    holder.verifies = True
    try:
        holder.verifier()
    except ToolError as error:
        errors.append(error)
    assert len(errors) == 3
    assert [tool_outcome(error) for error in errors] == ["unavailable"] * 3


async def test_save_memory_keeps_the_lifecycle_properties_and_the_evidence(
    make_service: Callable[..., MemoryService], principal: Principal
) -> None:
    weighted = make_service(recall_importance_weight=0.1)  # off by default
    async with Client(server_for(weighted, principal)) as client:
        await check_the_lifecycle_properties(client)


async def check_the_lifecycle_properties(client: Client[Any]) -> None:
    saved = await call(
        client,
        "save_memory",
        content="The API paginates with cursors, not offsets",
        category="decision",
        options={
            "importance": "high",
            "evidence": "design review of 3 March",
            "valid_from": "2026-03-01",
            "valid_until": "2030-01-01T12:00:00+02:00",
            "rationale": "offsets skip rows when items are added while paging",
        },
    )
    memory = saved["memory"]
    assert (memory["category"], memory["importance"]) == ("decision", "high")
    assert (memory["valid_from"], memory["valid_until"]) == (
        "2026-03-01T00:00:00Z",
        "2030-01-01T10:00:00Z",
    )
    assert memory["rationale"] == "offsets skip rows when items are added while paging"
    assert memory["evidence_count"] == 1
    assert memory["last_evidence"]["evidence"] == "design review of 3 March"
    assert memory["last_evidence"]["origin"] == "save"
    [recalled] = (await call(client, "recall_memories", query="cursors offsets"))["memories"]
    assert (recalled["id"], recalled["importance"]) == (memory["id"], "high")
    assert recalled["effective_confidence"] == recalled["confidence"]
    assert recalled["scores"]["importance_factor"] == 1.1  # 1 + 0.1 x high (+1)
    assert {"recency", "effective_confidence"} <= set(recalled["scores"])


async def test_reinforce_raises_confidence_with_independent_evidence_only(
    client: Client[Any],
) -> None:
    saved = await call(client, "save_memory", content="The user's editor is Helix", category="fact")
    memory_id = saved["memory"]["id"]
    assert saved["memory"]["confidence"] == 0.7  # inferred
    first = await call(
        client,
        "manage_memory",
        action="reinforce",
        memory_id=memory_id,
        evidence="the user: yes, I use Helix",
    )
    assert (first["independent"], first["confidence_before"], first["confidence_after"]) == (
        True,
        0.7,
        0.775,
    )
    # the save's own row (origin "save") and this one
    assert (first["memory"]["confidence"], first["evidence_count"]) == (0.775, 2)
    again = await call(
        client,
        "manage_memory",
        action="reinforce",
        memory_id=memory_id,
        evidence="The user: yes, I use  Helix",  # the same evidence: kept, raises nothing
    )
    assert (again["independent"], again["memory"]["confidence"]) == (False, 0.775)
    assert again["memory"]["evidence_count"] == 3
    assert again["memory"]["last_evidence"]["origin"] == "reinforce"


async def test_archive_delete_reasons_and_restore_through_the_tools(client: Client[Any]) -> None:
    saved = await call(
        client, "save_memory", content="The office printer is on floor 3", category="fact"
    )
    memory_id = saved["memory"]["id"]
    archived = await call(
        client, "manage_memory", action="archive", memory_id=memory_id, reason="moved offices"
    )
    assert (archived["archived"], archived["archive_reason"]) == (memory_id, "moved offices")
    assert (archived["memory"]["status"], archived["memory"]["archive_reason"]) == (
        "archived",
        "moved offices",
    )
    assert (await call(client, "recall_memories", query="office printer"))["memories"] == []
    found = await call(
        client, "recall_memories", query="office printer", options={"include_archived": True}
    )
    assert [m["id"] for m in found["memories"]] == [memory_id]
    assert found["memories"][0]["archived_at"] is not None  # marked as archived
    listed = await call(client, "manage_memory", action="list", status="archived")
    assert [(m["id"], m["status"], m["archive_reason"]) for m in listed["memories"]] == [
        (memory_id, "archived", "moved offices")
    ]
    restored = await call(client, "manage_memory", action="restore", memory_id=memory_id)
    assert restored["restored_from"] == "archived"
    recalled = await call(client, "recall_memories", query="office printer")
    assert [m["id"] for m in recalled["memories"]] == [memory_id]

    await call(client, "manage_memory", action="delete", memory_id=memory_id, reason="user asked")
    deleted = await call(client, "manage_memory", action="list", status="deleted")
    assert [(m["id"], m["delete_reason"]) for m in deleted["memories"]] == [
        (memory_id, "user asked")
    ]


async def test_update_changes_importance_validity_and_rationale(client: Client[Any]) -> None:
    saved = await call(
        client,
        "save_memory",
        content="Releases are frozen during the audit",
        category="instruction",
        options={"valid_until": "2030-06-01"},
    )
    updated = await call(
        client,
        "manage_memory",
        action="update",
        memory_id=saved["memory"]["id"],
        updates={"importance": "core", "valid_until": None, "rationale": "audit rules"},
    )
    memory = updated["memory"]
    assert (memory["importance"], memory["valid_until"], memory["rationale"]) == (
        "core",
        None,
        "audit rules",
    )


async def test_recall_as_of_answers_what_held_at_that_time(client: Client[Any]) -> None:
    saved = await call(
        client,
        "save_memory",
        content="The staging database is db-2",
        category="fact",
        options={"valid_until": "2030-03-01"},
    )
    memory_id = saved["memory"]["id"]
    during = await call(
        client, "recall_memories", query="staging database", options={"as_of": "2030-02-28"}
    )
    assert [m["id"] for m in during["memories"]] == [memory_id]
    after = await call(
        client, "recall_memories", query="staging database", options={"as_of": "2030-03-01"}
    )
    assert after["memories"] == []  # valid_until is the first moment it no longer holds
    before = await call(
        client, "recall_memories", query="staging database", options={"as_of": "2001-01-01"}
    )
    assert before["memories"] == []  # not yet recorded then


async def test_another_actor_cannot_reinforce_or_archive_my_memory(
    service: MemoryService, principal: Principal
) -> None:
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    async with (
        Client(server_for(service, principal)) as me,
        Client(server_for(service, other)) as them,
    ):
        saved = await call(me, "save_memory", content="The user's bike is blue", category="fact")
        memory_id = saved["memory"]["id"]
        for action, extra in (("reinforce", {"evidence": "I saw it"}), ("archive", {})):
            message = await error_of(
                them, "manage_memory", action=action, memory_id=memory_id, **extra
            )
            assert f"memory {memory_id} not found" in message
        [mine] = (await call(me, "manage_memory", action="list"))["memories"]
        assert (mine["confidence"], mine["evidence_count"]) == (0.7, 1)  # the save's


async def test_a_supersession_keeps_the_reason_given_with_the_save(client: Client[Any]) -> None:
    old = await call(
        client, "save_memory", content="Deploys to production happen on Fridays", category="fact"
    )
    new = await call(
        client,
        "save_memory",
        content="Production deploys happen on Fridays",
        category="fact",
        options={"supersede_reason": "reworded by the user"},
    )
    assert new["superseded_ids"] == [old["memory"]["id"]]
    superseded = await call(client, "manage_memory", action="list", status="superseded")
    assert [(m["id"], m["supersede_reason"]) for m in superseded["memories"]] == [
        (old["memory"]["id"], "reworded by the user")
    ]


async def test_a_weaker_source_does_not_replace_a_stronger_one_through_the_tool(
    client: Client[Any],
) -> None:
    said = await call(
        client,
        "save_memory",
        content="Never push directly to the main branch",
        category="instruction",
        source="explicit",
        options={"importance": "high"},
    )
    answered = await client.call_tool(
        "save_memory",
        {
            "content": "Never push directly to main branch",
            "category": "instruction",
            "source": "inferred",
            "detail": True,
        },
    )
    inferred = answered.structured_content
    assert inferred["status"] == "created"
    assert inferred["superseded_ids"] == []
    [close] = inferred["possible_duplicates"]
    assert close["id"] == said["memory"]["id"]
    assert "an inferred memory does not replace an explicit one" in close["kept_because"]
    listed = await call(client, "manage_memory", action="list")
    assert {m["id"] for m in listed["memories"]} == {said["memory"]["id"], inferred["memory"]["id"]}
    [tool] = [t for t in await client.list_tools() if t.name == "save_memory"]
    assert "kept_because" in json.dumps(tool.output_schema)
    # the agent reads why it was kept beside, and that it asks the user (compact.save_text)
    [_, kept] = inferred["text"].splitlines()
    assert kept.startswith(f"[{said['memory']['id'][:8]}] kept beside it: an inferred memory")
    assert "ask the user" in kept


def memory_with_id(pool: ConnectionPool, owner: Principal, canonical_id: uuid.UUID) -> None:
    """A user-scope memory of `owner` with a chosen id (ids are random otherwise)."""
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, owner.actor_id, owner.project_id)
        graph.install_pack(conn, owner.project_id, "agent-memory")
        graph.create_object(
            conn,
            project_id=owner.project_id,
            type=store.MEMORY,
            actor_id=owner.actor_id,
            scope="user",
            properties={"content": f"memory {canonical_id}", "category": "fact"},
            labels=["fact"],
            canonical_id=canonical_id,
        )


async def test_a_memory_is_named_by_the_short_id_the_answers_show(
    client: Client[Any], principal: Principal, pool: ConnectionPool
) -> None:
    saved = await client.call_tool(
        "save_memory", {"content": "The user's locker is number 214", "category": "fact"}
    )
    [line] = saved.structured_content["text"].splitlines()
    short = line.removeprefix("Saved [").split("]")[0]
    assert len(short) == 8
    reinforced = await call(
        client, "manage_memory", action="reinforce", memory_id=short, evidence="the user: 214"
    )
    assert reinforced["memory"]["content"] == "The user's locker is number 214"
    assert "memory 0000000000 not found" in await error_of(
        client, "manage_memory", action="delete", memory_id="0000000000"
    )
    # another user's memory that begins alike is neither matched nor counted
    prefix = uuid.uuid4().hex[:8]
    mine, theirs, also_mine = (uuid.UUID(prefix + digit + uuid.uuid4().hex[9:]) for digit in "012")
    memory_with_id(pool, principal, mine)
    memory_with_id(pool, Principal(uuid.uuid4(), principal.project_id), theirs)
    archived = await call(client, "manage_memory", action="archive", memory_id=prefix)
    assert archived["archived"] == str(mine)
    assert f"memory {prefix}1 not found" in await error_of(
        client, "manage_memory", action="delete", memory_id=prefix + "1"
    )
    # two of mine: the prefix is refused, one more digit names one
    memory_with_id(pool, principal, also_mine)
    assert (
        f"memory_id {prefix} is the beginning of more than one of your memories"
        in await error_of(client, "manage_memory", action="restore", memory_id=prefix)
    )
    restored = await call(client, "manage_memory", action="restore", memory_id=prefix + "0")
    assert restored["memory"]["id"] == str(mine)
    # save's related_to takes short ids too, under the same rule
    related = await call(
        client,
        "save_memory",
        content="The locker key is kept at the front desk",
        category="fact",
        options={"related_to": [short]},
    )
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        edge = conn.execute(
            "SELECT type FROM kb.graph_relationships WHERE src_id = %s AND dst_id = %s",
            (related["memory"]["id"], reinforced["memory"]["id"]),
        ).fetchall()
    assert edge == [("RELEVANT_TO",)]
    assert f"memory {prefix}1 not found" in await error_of(
        client,
        "save_memory",
        content="The spare locker key is at reception",
        category="fact",
        options={"related_to": [prefix + "1"]},
    )


async def test_a_conflict_is_settled_by_superseding_one_side_with_the_other(
    client: Client[Any],
) -> None:
    """Through MCP, as through the REST API's decision on a pair: the memory that stays
    supersedes the wrong one, both named by the short ids the answers show."""
    old = await call(client, "save_memory", content="The staging database is db-2", category="fact")
    new = await call(
        client,
        "save_memory",
        content="The staging database is db-3",
        category="fact",
        source="explicit",
    )
    assert [close.get("conflict") for close in new["possible_duplicates"]] == [True]
    stays, wrong = new["memory"]["id"], old["memory"]["id"]
    answer = await client.call_tool(
        "manage_memory",
        {
            "action": "supersede",
            "memory_id": stays[:8],
            "replaces": wrong[:8],
            "reason": "the user moved it",
        },
    )
    head, line = answer.structured_content["text"].splitlines()
    assert head == f"Superseded [{wrong[:8]}]; this one stays:"
    assert line == f"[{stays[:8]}] fact, now: The staging database is db-3"
    listed = await call(client, "manage_memory", action="list", status="superseded")
    assert [(m["id"], m["superseded_by"], m["supersede_reason"]) for m in listed["memories"]] == [
        (wrong, stays, "the user moved it")
    ]
    [current] = (await call(client, "manage_memory", action="list"))["memories"]
    assert (current["id"], current["conflicts_with"]) == (stays, [])


async def test_a_conflict_both_true_is_settled_by_keep_both(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    """Both sides of a conflict hold (another place, another time): keep_both removes the
    link, so neither is outranked or flagged any more, and closes the review queue's pair;
    a pair not linked, a memory named twice, another actor's memory and a missing `other`
    are refused with what to do, and change nothing."""
    stranger = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    async with (
        Client(server_for(service, principal)) as client,
        Client(server_for(service, stranger)) as them,
    ):
        old = await call(
            client, "save_memory", content="The staging database is db-2", category="fact"
        )
        new = await call(
            client, "save_memory", content="The staging database is db-3", category="fact"
        )
        assert [close.get("conflict") for close in new["possible_duplicates"]] == [True]
        first, second = new["memory"]["id"], old["memory"]["id"]
        flagged = await client.call_tool("recall_memories", {"query": "staging database"})
        assert "outranked" in flagged.structured_content["text"]
        unrelated = await call(
            client, "save_memory", content="The user's laptop runs Fedora 41", category="fact"
        )
        theirs = await call(
            them, "save_memory", content="The staging database is db-9", category="fact"
        )
        refused = [
            (
                {"memory_id": first[:8], "other": unrelated["memory"]["id"][:8]},
                "are not marked as conflicting; there is nothing to settle",
            ),
            ({"memory_id": first[:8], "other": first}, "keep_both needs two memories"),
            ({"memory_id": first[:8]}, "keep_both needs other: the id of the memory"),
            (
                {"memory_id": first, "other": theirs["memory"]["id"]},
                f"memory {theirs['memory']['id']} not found",
            ),
        ]
        for arguments, message in refused:
            assert message in await error_of(
                client, "manage_memory", action="keep_both", **arguments
            )
        assert "other goes with keep_both; delete does not take it" in await error_of(
            client, "manage_memory", action="delete", memory_id=first, other=second
        )
        stranger_sees = await error_of(
            them, "manage_memory", action="keep_both", memory_id=first, other=second
        )
        assert any(f"memory {id_} not found" in stranger_sees for id_ in (first, second))
        await call(client, "manage_memory", action="archive", memory_id=second)
        assert f"memory {second} is not active; restore it first" in await error_of(
            client, "manage_memory", action="keep_both", memory_id=first, other=second
        )
        await call(client, "manage_memory", action="restore", memory_id=second)
        answer = await client.call_tool(
            "manage_memory", {"action": "keep_both", "memory_id": first[:8], "other": second[:8]}
        )
        head, *lines = answer.structured_content["text"].splitlines()
        assert head == "Kept both; they no longer conflict:"
        assert lines == [
            f"[{first[:8]}] fact, now: The staging database is db-3",
            f"[{second[:8]}] fact, now: The staging database is db-2",
        ]
        recalled = await client.call_tool("recall_memories", {"query": "staging database"})
        assert "outranked" not in recalled.structured_content["text"]
        assert "conflict" not in recalled.structured_content["text"]
        listed = (await call(client, "manage_memory", action="list"))["memories"]
        assert {
            m["id"]: (m["conflicts_with"], m["conflict"])
            for m in listed
            if m["id"]
            in (
                first,
                second,
            )
        } == {first: ([], None), second: ([], None)}
        again = await error_of(
            client, "manage_memory", action="keep_both", memory_id=first, other=second
        )
        assert "not marked as conflicting" in again
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        decided = conn.execute(
            "SELECT decision FROM kb.possible_duplicates "
            "WHERE memory_id = %s AND duplicate_of = %s",
            (uuid.UUID(first), uuid.UUID(second)),
        ).fetchall()
        links = conn.execute(
            "SELECT delete_reason FROM kb.graph_relationships WHERE type = 'CONFLICTS_WITH' "
            "AND is_head AND src_id = ANY(%s) AND dst_id = ANY(%s)",
            ([uuid.UUID(first), uuid.UUID(second)], [uuid.UUID(first), uuid.UUID(second)]),
        ).fetchall()
    assert decided == [("keep_both",)]
    assert links == [(store.KEPT_BOTH,)]
