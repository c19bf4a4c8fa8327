"""recall_memories with include_episodes (the caller's captured conversations, by words and by
meaning, in their own list) and provenance (`derived_from`) in recall and list, on the real
database as the application role (row-level security applies)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from pgvector import Vector
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.cli import cli
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.compatibility import check_compatible
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.embeddings.worker import EmbeddingWorker
from emergent_memory.errors import InvalidInput
from emergent_memory.graph import Embedding
from emergent_memory.memory import MemoryService, episodes, store
from tests.embedders import BagOfWordsEmbedder, DownEmbedder, EmbeddingServer

FILLER = "assistant: I ran the test suite again and read the logs of the build. " * 40
DECISION = "user: so we keep the ledger service pinned at 4.2 until the E5178 rounding bug is fixed"
CAPTURED_AT = "2026-11-20T10:15:00+00:00"


def episode(
    pool: ConnectionPool,
    owner: Principal,
    text: str,
    *,
    summary: str | None = None,
    session_id: str = "session-1",
    scope: str = "project",
    first_turn: int = 0,
    last_turn: int = 15,
    embedder: EmbeddingProvider | None = None,
    queue_embedding: bool = False,
) -> uuid.UUID:
    """An Episode of `owner` as automatic capture writes one, acting as its owner; with an
    `embedder`, embedded by its summary (store.EMBEDDED_TEXT); with `queue_embedding`, left
    to the embedding worker."""
    properties: dict[str, Any] = {
        "session_id": session_id,
        "client": "claude-code",
        "first_turn": first_turn,
        "last_turn": last_turn,
        "captured_at": CAPTURED_AT,
        "digest": uuid.uuid4().hex * 2,
        "text": text,
    }
    if summary is not None:
        properties["summary"] = summary
    embedding = None
    if embedder is not None and summary is not None:
        vector = embedder.embed_documents([summary])[0]
        embedding = Embedding(Vector(vector), embedder.model_name)
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, owner.actor_id, owner.project_id, admin=scope == "global")
        graph.install_pack(conn, owner.project_id, "agent-memory")
        made = graph.create_object(
            conn,
            project_id=owner.project_id,
            type=store.EPISODE,
            actor_id=owner.actor_id,
            scope=scope,  # type: ignore[arg-type]
            properties=properties,
            embedding=embedding,
        )
        if queue_embedding:
            jobs.enqueue(conn, made)
    return made.canonical_id


def found(service: MemoryService, principal: Principal, query: str, **options: Any) -> list[str]:
    result = service.recall(principal, query, include_episodes=True, **options)
    return [item["id"] for item in result["episodes"]]


@pytest.fixture
def someone_else(principal: Principal) -> Principal:
    """Another actor in the same project."""
    return Principal(uuid.uuid4(), principal.project_id)


# -- finding episodes -------------------------------------------------------------------------


def test_an_episode_is_found_by_its_words_with_an_excerpt_around_them(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    found_id = episode(
        pool,
        principal,
        FILLER + DECISION + "\n" + FILLER,
        summary="Release planning for the ledger service",
        first_turn=12,
        last_turn=27,
    )
    episode(pool, principal, "user: the staging database moved to db-2", session_id="other")

    result = service.recall(principal, "what did we decide about E5178", include_episodes=True)

    assert result["memories"] == []
    [item] = result["episodes"]
    assert item["id"] == str(found_id)
    assert (item["session_id"], item["client"]) == ("session-1", "claude-code")
    assert item["turns"] == {"first": 12, "last": 27}
    assert item["captured_at"] == CAPTURED_AT
    assert item["summary"] == "Release planning for the ledger service"
    assert "E5178 rounding bug" in item["excerpt"]
    # bounded, and cut on both sides (the text goes on before and after)
    assert len(item["excerpt"]) <= episodes.EXCERPT_CHARS + 2
    assert item["excerpt"].startswith("\u2026")
    assert item["excerpt"].endswith("\u2026")
    assert item["score"] > 0


def test_the_rarest_word_ranks_and_places_the_excerpt(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    """Every episode says "ledger"; only one names the bug: that one ranks first, and its
    excerpt shows the bug's line, not the first "ledger"."""
    named = episode(pool, principal, "user: the ledger is slow\n" + FILLER + DECISION)
    others = [episode(pool, principal, f"user: the ledger has {n} rows") for n in range(3)]

    ids = found(service, principal, "ledger E5178")

    assert ids[0] == str(named)
    assert set(ids[1:]) == {str(other) for other in others}
    first = service.recall(principal, "ledger E5178", include_episodes=True)["episodes"][0]
    assert "E5178" in first["excerpt"]


def test_words_match_their_stem_and_are_case_insensitive(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    """A word of the query matches the episode's words that full text stems the same way,
    whatever their case and ending; a word that merely starts the same does not."""
    frozen = episode(pool, principal, "assistant: Deployments are FROZEN on Fridays.")
    policies = episode(pool, principal, "assistant: the retention policies are making trouble")
    greeting = episode(pool, principal, "user: hello\nassistant: hello, user")
    assert found(service, principal, "deployment friday") == [str(frozen)]
    assert found(service, principal, "deployments frozen") == [str(frozen)]
    assert found(service, principal, "policy") == [str(policies)]  # stem 'polici'
    assert found(service, principal, "make") == [str(policies)]  # "making" is 'make'
    assert found(service, principal, "use") == []  # "user" is not 'use'
    assert found(service, principal, "users") == [str(greeting)]


def test_an_embedded_episode_is_found_by_meaning(
    make_service: Callable[..., MemoryService],
    principal: Principal,
    pool: ConnectionPool,
    local_embedder: LocalEmbeddings,
) -> None:
    """No word of the query is in the episode: only its summary's vector finds it."""
    service = make_service(local_embedder)
    by_meaning = episode(
        pool,
        principal,
        "user: amounts are integers in cents from now on\nassistant: changed the billing code",
        summary="Decided to store money amounts as integers in cents in the billing service",
        embedder=local_embedder,
    )
    for summary in (
        "The build pipeline moved from Jenkins to GitHub Actions",
        "Chose PostgreSQL instead of MongoDB for the orders database",
    ):
        episode(pool, principal, "user: hello", summary=summary, embedder=local_embedder)

    ids = found(service, principal, "how are prices represented")

    assert ids[0] == str(by_meaning)


def test_episodes_with_a_summary_are_embedded_by_the_worker(
    make_service: Callable[..., MemoryService],
    principal: Principal,
    pool: ConnectionPool,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """Episode is one of the embedded types (store.EMBEDDED_TEXT): the embedding worker gives
    a queued episode the vector of its summary; one without a summary has nothing to embed."""
    embedder = BagOfWordsEmbedder("test/episodes")
    with_summary = episode(
        pool, principal, "user: hello", summary="Renamed the billing queue", queue_embedding=True
    )
    without = episode(pool, principal, "user: hello again", queue_embedding=True)
    worker = EmbeddingWorker(pool, embedder, embedded_text=store.EMBEDDED_TEXT)
    worker.drain()
    with connect() as conn:
        models = dict(
            conn.execute(
                "SELECT canonical_id, embedding_model FROM kb.graph_objects "
                "WHERE canonical_id = ANY(%s) AND is_head",
                ([with_summary, without],),
            ).fetchall()
        )
    assert models == {with_summary: "test/episodes", without: None}
    service = make_service(embedder)
    result = service.recall(principal, "billing queue renamed", include_episodes=True)
    assert [item["id"] for item in result["episodes"]] == [str(with_summary)]


def test_reembedding_and_the_start_up_check_count_episodes_with_a_summary(
    conn: psycopg.Connection[Any],
) -> None:
    """Re-embedding (store.needing_embedding and its count) and the start-up check see what
    the worker embeds: memories and episodes with a summary, not episodes without one."""
    actor, project = uuid.uuid4(), uuid.uuid4()
    graph.install_pack(conn, project, "agent-memory")
    model = BagOfWordsEmbedder(f"test/never-{uuid.uuid4().hex[:6]}")
    before = check_compatible(conn, model, store.EMBEDDED_TEXT).get(None, 0)
    counted = store.count_needing_embedding(conn, model.model_name)
    made = {}
    for name, summary in (
        ("with", "Chose Postgres for the queue"),
        ("without", None),
        ("blank", " "),
    ):
        properties = {
            "session_id": "s",
            "client": "api",
            "first_turn": 0,
            "last_turn": 1,
            "digest": "a" * 64,
            "text": "user: hi",
        }
        if summary is not None:
            properties["summary"] = summary
        made[name] = graph.create_object(
            conn, project_id=project, type=store.EPISODE, actor_id=actor, properties=properties
        ).canonical_id
    needing = {row[0]: row for row in store.needing_embedding(conn, model.model_name, 1_000_000)}
    assert needing[made["with"]] == (made["with"], "summary", "Chose Postgres for the queue")
    assert made["without"] not in needing
    assert made["blank"] not in needing
    assert check_compatible(conn, model, store.EMBEDDED_TEXT).get(None, 0) == before + 1
    assert store.count_needing_embedding(conn, model.model_name) == counted + 1


# -- what is searched, and what is returned ---------------------------------------------------


def test_without_the_flag_no_episode_appears(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    episode(pool, principal, DECISION)
    saved = service.save(principal, "The ledger service is pinned at 4.2", "fact")

    result = service.recall(principal, "ledger E5178")

    assert "episodes" not in result
    assert [memory["id"] for memory in result["memories"]] == [saved["memory"]["id"]]
    with pytest.raises(InvalidInput, match="pass include_episodes too"):
        service.recall(principal, "ledger", session_id="session-1")


def test_episodes_are_listed_apart_and_never_counted_as_a_use(
    service: MemoryService,
    principal: Principal,
    pool: ConnectionPool,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    episode_id = episode(pool, principal, DECISION)
    saved = service.save(principal, "The ledger service is pinned at 4.2 (bug E5178)", "fact")

    result = service.recall(principal, "ledger E5178", include_episodes=True)

    assert [m["id"] for m in result["memories"]] == [saved["memory"]["id"]]
    assert [e["id"] for e in result["episodes"]] == [str(episode_id)]
    with connect() as conn:
        uses = conn.execute(
            "SELECT canonical_id, count(*) FROM kb.memory_recalls "
            "WHERE canonical_id = ANY(%s) GROUP BY canonical_id",
            ([episode_id, uuid.UUID(saved["memory"]["id"])],),
        ).fetchall()
        versions = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (episode_id,)
        ).fetchone()
    assert uses == [(uuid.UUID(saved["memory"]["id"]), 1)]  # the memory's use, not the episode's
    assert versions == (1,)


def test_one_session_scope_and_limit(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    first = episode(pool, principal, DECISION, session_id="session-1")
    second = episode(pool, principal, DECISION + " again", session_id="session-2", scope="user")

    assert set(found(service, principal, "E5178")) == {str(first), str(second)}
    assert found(service, principal, "E5178", session_id="session-2") == [str(second)]
    assert found(service, principal, "E5178", scope="user") == [str(second)]
    assert found(service, principal, "E5178", scope="global") == []
    assert len(found(service, principal, "E5178", limit=1)) == 1


def test_words_are_looked_for_in_the_newest_episodes_only(
    service: MemoryService,
    principal: Principal,
    pool: ConnectionPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bound that keeps a search by words cheap without an index (episodes.EPISODE_SCAN)."""
    old = episode(pool, principal, "user: the old flag is LEGACY_MODE")
    new = episode(pool, principal, "user: the new flag is FAST_MODE, not LEGACY_MODE")
    monkeypatch.setattr(episodes, "EPISODE_SCAN", 1)
    assert found(service, principal, "LEGACY_MODE") == [str(new)]
    monkeypatch.setattr(episodes, "EPISODE_SCAN", 200)
    assert set(found(service, principal, "LEGACY_MODE")) == {str(old), str(new)}


def test_episodes_are_found_by_words_while_the_embedder_is_down(
    make_service: Callable[..., MemoryService], principal: Principal, pool: ConnectionPool
) -> None:
    found_id = episode(pool, principal, DECISION, summary="Ledger planning")
    result = make_service(DownEmbedder()).recall(principal, "E5178", include_episodes=True)
    assert result["degraded"] is True
    assert [item["id"] for item in result["episodes"]] == [str(found_id)]


def test_a_query_of_stop_words_finds_nothing_by_words(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    episode(pool, principal, "user: what did we do about it")
    assert service.recall(principal, "what did we", include_episodes=True)["episodes"] == []


def test_punctuation_in_a_word_is_matched_literally(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    """A query word with characters that mean something in a regular expression."""
    dotted = episode(pool, principal, "user: upgrade to v1.2.3 of the parser")
    episode(pool, principal, "user: upgrade to v1x2x3 of the parser")
    assert found(service, principal, "v1.2.3") == [str(dotted)]
    assert found(service, principal, "(a+b)* [z] \\") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"include_episodes": "yes"}, "include_episodes must be true or false"),
        ({"include_episodes": True, "session_id": ""}, "session_id must be"),
        ({"include_episodes": True, "session_id": 7}, "session_id must be"),
        ({"include_episodes": True, "session_id": "s" * 201}, "the limit is 200"),
    ],
)
def test_bad_options_are_clear_errors(
    service: MemoryService, principal: Principal, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        service.recall(principal, "anything", **options)


# -- isolation --------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["application", "owner"])
def test_only_the_callers_own_episodes_are_searched(
    make_service: Callable[..., MemoryService],
    role: str,
    principal: Principal,
    someone_else: Principal,
    pool: ConnectionPool,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """Another actor's episodes of every scope (global included, which kb.visible_to alone
    would show everyone), an ownerless one in the caller's project, the caller's own global
    one, and the caller's own project-scope episode of another project never appear; the
    caller's user-scope episode of another project does, as its user memories do. As the
    application role (row-level security too) and as the owner's (the search's SQL alone:
    each layer holds by itself)."""
    service = make_service(maintenance=role == "owner")
    embedder = BagOfWordsEmbedder()
    summary = "Pinned the ledger service because of E5178"
    mine = episode(pool, principal, DECISION, summary=summary, embedder=embedder)
    for scope in ("project", "user", "global"):
        episode(pool, someone_else, DECISION, summary=summary, scope=scope, embedder=embedder)
    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    episode(pool, elsewhere, DECISION, summary=summary, embedder=embedder)
    mine_everywhere = episode(
        pool, elsewhere, DECISION, summary=summary, scope="user", embedder=embedder
    )
    mine_global = episode(pool, principal, DECISION, summary=summary, scope="global")
    with connect() as conn, conn.transaction():  # the owner: graph data without an owner
        graph.create_object(
            conn,
            project_id=principal.project_id,
            type=store.EPISODE,
            properties={
                "session_id": "session-1",
                "client": "api",
                "first_turn": 0,
                "last_turn": 1,
                "digest": "b" * 64,
                "summary": summary,
                "text": DECISION,
            },
            embedding=Embedding(
                Vector(embedder.embed_documents([summary])[0]), "test/bag-of-words"
            ),
        )

    for query in ("E5178", "pinned ledger service", "what did we decide"):
        assert set(found(service, principal, query)) <= {str(mine), str(mine_everywhere)}
    assert set(found(service, principal, "E5178")) == {str(mine), str(mine_everywhere)}
    # nor for an administrator's credential: episodes are never anyone else's to read
    admin = Principal(principal.actor_id, principal.project_id, frozenset({READ, WRITE, ADMIN}))
    assert set(found(service, admin, "E5178")) == {str(mine), str(mine_everywhere)}
    # the other actor finds its own project and user ones, not its global one nor the caller's
    theirs = found(service, someone_else, "E5178")
    assert len(theirs) == 2
    assert not {str(mine), str(mine_global)} & set(theirs)


# -- provenance -------------------------------------------------------------------------------


def test_recall_and_list_say_which_conversation_a_memory_came_from(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    source = episode(pool, principal, DECISION, first_turn=4, last_turn=19)
    captured = service.save(
        principal,
        "The ledger service stays at 4.2 until E5178 is fixed",
        "fact",
        derived_from=source,
    )
    typed = service.save(principal, "The ledger service's owner is Priya", "fact")
    expected = {
        "episode_id": str(source),
        "session_id": "session-1",
        "client": "claude-code",
        "turns": {"first": 4, "last": 19},
        "captured_at": CAPTURED_AT,
    }

    assert captured["memory"]["derived_from"] == expected
    recalled = {m["id"]: m for m in service.recall(principal, "ledger service")["memories"]}
    assert recalled[captured["memory"]["id"]]["derived_from"] == expected
    assert recalled[typed["memory"]["id"]]["derived_from"] is None
    listed = {m["id"]: m for m in service.list_memories(principal)["memories"]}
    assert listed[captured["memory"]["id"]]["derived_from"] == expected
    assert listed[typed["memory"]["id"]]["derived_from"] is None

    service.delete(principal, captured["memory"]["id"])
    deleted = service.list_memories(principal, status="deleted")["memories"]
    assert [(m["id"], m["derived_from"]) for m in deleted] == [(captured["memory"]["id"], expected)]


def test_provenance_names_the_first_conversation_and_falls_back_to_the_creation_time(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    """Captured again later (reinforced from another window), a memory still says where it
    was first learned; an episode without captured_at gives the time it was stored."""
    first = episode(pool, principal, DECISION, session_id="early")
    later = episode(pool, principal, DECISION, session_id="late")
    text = "The ledger service stays at 4.2 until E5178 is fixed"
    service.save(principal, text, "fact", derived_from=first)
    service.save(principal, text, "fact", derived_from=later)
    [memory] = service.recall(principal, "ledger")["memories"]
    assert memory["derived_from"] is not None
    assert memory["derived_from"]["session_id"] == "early"

    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        graph.update_object(conn, first, properties={"captured_at": None})
        stored = graph.get_head(conn, first)
    assert stored is not None
    [memory] = service.recall(principal, "ledger")["memories"]
    assert memory["derived_from"] is not None
    fallback = memory["derived_from"]["captured_at"]
    assert fallback[:19] == stored.created_at.astimezone(UTC).isoformat()[:19]
    assert fallback.endswith("+00:00")


@pytest.mark.parametrize("role", ["application", "owner"])
def test_provenance_never_shows_an_episode_the_caller_cannot_see(
    make_service: Callable[..., MemoryService],
    role: str,
    principal: Principal,
    someone_else: Principal,
    pool: ConnectionPool,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """An edge to another actor's episode (only the database's owner could write one) shows
    nothing; nor does the caller's own project-scope episode in another project. As the
    application role and as the owner's (the provenance SQL alone)."""
    service = make_service(maintenance=role == "owner")
    theirs = [episode(pool, someone_else, DECISION, scope=scope) for scope in ("global", "project")]
    saved = service.save(principal, "The ledger service is pinned", "fact")
    with connect() as conn, conn.transaction():
        for target in theirs:
            graph.create_relationship(
                conn,
                project_id=principal.project_id,
                type=store.DERIVED_FROM,
                src_id=uuid.UUID(saved["memory"]["id"]),
                dst_id=target,
                actor_id=principal.actor_id,
            )
    [memory] = service.list_memories(principal)["memories"]
    assert memory["derived_from"] is None

    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    source = episode(pool, elsewhere, DECISION)  # project scope, in the other project
    captured = service.save(elsewhere, "The ledger runs on db-3", "fact", derived_from=source)
    assert captured["memory"]["derived_from"] is not None  # seen where it was captured
    recalled = {m["id"]: m for m in service.recall(principal, "ledger db-3")["memories"]}
    assert recalled[captured["memory"]["id"]]["derived_from"] is None  # not from here


# -- the command line -------------------------------------------------------------------------


def test_the_cli_recalls_episodes_and_shows_provenance(
    database_url: str,
    embedding_server: EmbeddingServer,
    pool: ConnectionPool,
    service: MemoryService,
) -> None:
    me = Principal(uuid.uuid4(), uuid.uuid4())
    env = {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
        "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
        "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
        "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
        "EMERGENT_MEMORY_ACTOR_ID": str(me.actor_id),
        "EMERGENT_MEMORY_PROJECT_ID": str(me.project_id),
    }

    def run(*args: str) -> Result:
        result = CliRunner().invoke(cli, list(args), env=env)
        assert result.exit_code == 0, result.output
        return result

    source = episode(pool, me, FILLER + DECISION, summary="Ledger release planning")
    episode(pool, me, DECISION, session_id="session-2")
    service.save(
        me, "The ledger service stays at 4.2 until E5178 is fixed", "fact", derived_from=source
    )

    human = run("recall", "E5178", "--include-episodes").stdout
    assert "captured from session session-1 (claude-code), turns 0-15" in human
    assert "2 matching conversations" in human
    assert "Ledger release planning" in human
    assert "E5178 rounding bug" in human
    data = json.loads(
        run("recall", "E5178", "--include-episodes", "--session", "session-1", "--json").stdout
    )
    assert [item["id"] for item in data["episodes"]] == [str(source)]
    assert "episodes" not in json.loads(run("recall", "E5178", "--json").stdout)
    assert "matching conversations" not in run("recall", "E5178").stdout
    assert "captured from session session-1" in run("list").stdout
    refused = CliRunner().invoke(cli, ["recall", "E5178", "--session", "session-1"], env=env)
    assert refused.exit_code != 0
    assert "pass include_episodes too" in refused.output
