"""Every SQL example in docs/admin-sql.md runs, and the main ones answer what they claim."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.memory import MemoryConfig, MemoryService, store
from tests.embedders import BagOfWordsEmbedder, DownEmbedder

DOC = Path(__file__).resolve().parent.parent / "docs" / "admin-sql.md"
ACTOR = uuid.UUID("11111111-1111-1111-1111-111111111111")
PROJECT = uuid.UUID("22222222-2222-2222-2222-222222222222")
THURSDAYS = "Deploys to production now happen on Thursdays"


def examples() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def captured_conversation(pool: ConnectionPool, owner: Principal) -> uuid.UUID:
    """An Episode as automatic capture keeps one, for the provenance example."""
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, owner.actor_id, owner.project_id)
        graph.install_pack(conn, owner.project_id, "agent-memory")
        made = graph.create_object(
            conn,
            project_id=owner.project_id,
            type=store.EPISODE,
            actor_id=owner.actor_id,
            properties={
                "session_id": "session-1",
                "client": "claude-code",
                "first_turn": 0,
                "last_turn": 3,
                "captured_at": "2026-11-20T10:15:00+00:00",
                "digest": "d" * 64,
                "text": "user: keep commit messages short, please",
            },
        )
    return made.canonical_id


@pytest.fixture(scope="module")
def results(pool: ConnectionPool, admin_database_url: str) -> dict[int, list[tuple[Any, ...]]]:
    """Memories of the documented actor, then every example's rows, by position, run as an
    administrator role (the application role would see no row without a principal)."""
    service = MemoryService(pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.75))
    user = Principal(ACTOR, PROJECT)
    service.save(user, "Deploys to production happen on Fridays", "fact", context="ops")
    service.save(user, THURSDAYS, "fact")  # says it changed: supersedes
    source = captured_conversation(pool, user)
    service.save(user, "The user prefers short commit messages", "preference", derived_from=source)
    service.recall(user, "commit messages")
    someone_else = Principal(uuid.uuid4(), uuid.uuid4())  # keeps the documented actor's rows exact
    MemoryService(pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.8)).save(
        someone_else, "Saved while the embedding provider was down", "fact"
    )
    wrongly = service.save(someone_else, "The spare key is with the neighbour", "fact")
    service.save(someone_else, "The spare key is with the neighbour now", "fact")
    service.restore(someone_else, wrongly["memory"]["id"])
    with psycopg.connect(admin_database_url) as conn:
        # a pair the duplicate check flagged (tests/test_duplicates.py shows save recording
        # them), and a dashboard session of the documented actor
        ids = {
            row[0]: row[1]
            for row in conn.execute(
                "SELECT content, id FROM kb.memories WHERE actor_id = %s", (ACTOR,)
            )
        }
        conn.execute(
            "INSERT INTO kb.possible_duplicates (actor_id, project_id, memory_id, duplicate_of,"
            " similarity) VALUES (%s, %s, %s, %s, 0.81)",
            (ACTOR, PROJECT, ids["The user prefers short commit messages"], ids[THURSDAYS]),
        )
        conn.execute(
            "INSERT INTO kb.dashboard_sessions (session_hash, actor_id, project_id, scopes,"
            " label, expires_at) VALUES (%s, %s, %s, ARRAY['memory:read'], 'local user',"
            " now() + interval '1 hour')",
            (bytes(32), ACTOR, PROJECT),
        )
        return {n: conn.execute(sql.encode()).fetchall() for n, sql in enumerate(examples())}


def test_the_doc_has_the_examples_the_issue_asks_for() -> None:
    text = "\n".join(examples())
    for name in (
        "kb.recall_memories",
        "kb.memories",
        "kb.memory_supersessions",
        "kb.memory_lineage",
        "kb.memory_stats",
        "delete_reason",
    ):
        assert name in text


def test_recall_from_sql_finds_the_current_fact(results: dict[int, list[tuple[Any, ...]]]) -> None:
    rows = results[0]
    assert [row[0] for row in rows] == [THURSDAYS]


def test_the_users_memories_are_listed(results: dict[int, list[tuple[Any, ...]]]) -> None:
    contents = [row[0] for row in results[1]]
    assert contents == [
        "The user prefers short commit messages",
        THURSDAYS,
    ]


def test_supersessions_and_lineage(results: dict[int, list[tuple[Any, ...]]]) -> None:
    assert (
        "Deploys to production happen on Fridays",
        THURSDAYS,
    ) in [(row[1], row[2]) for row in results[2]]
    assert [(row[0], row[1]) for row in results[3]] == [
        (0, THURSDAYS),
        (1, "Deploys to production happen on Fridays"),
    ]


def test_stats(results: dict[int, list[tuple[Any, ...]]]) -> None:
    # the ten actors with the most active memories, most first: the documented actor, unless
    # ten actors of other tests in the shared database have more than its two
    top = results[4]
    assert len(top) <= 10
    assert [row[1] for row in top] == sorted((row[1] for row in top), reverse=True)
    assert (ACTOR, 2, 1, 0) in top or (len(top) == 10 and top[-1][1] >= 2)
    assert results[5] == [(ACTOR, 2, 1, 0, 0, 1, 0, 0)]


def test_usage_and_queue_examples_run(results: dict[int, list[tuple[Any, ...]]]) -> None:
    # the ten most used memories of the shared database, most used first: the recalled one,
    # unless ten memories of other tests were used at least as often
    top = results[6]
    assert [row[1] for row in top] == sorted((row[1] for row in top), reverse=True)
    used = {row[0]: row[1] for row in top}
    assert used.get("The user prefers short commit messages", 0) >= 1 or (
        len(top) == 10 and top[-1][1] >= 1
    )
    pending = {status: jobs for status, jobs, _ in results[7]}
    assert pending.get("pending", 0) >= 1  # the memory saved while the provider was down
    models = dict(results[8])
    assert models.get("test/bag-of-words", 0) >= 2
    assert models.get("(none)", 0) >= 1


def test_restored_memories_are_found(results: dict[int, list[tuple[Any, ...]]]) -> None:
    restored = [(row[2], row[3]) for row in results[9]]
    assert (
        "The spare key is with the neighbour",
        "The spare key is with the neighbour now",
    ) in restored
    reasons = [row[1] for row in results[9]]
    assert all(reason.startswith("restored: ") for reason in reasons)


def test_what_one_actor_sees_is_its_active_memories(
    results: dict[int, list[tuple[Any, ...]]],
) -> None:
    """kb.visible_to and kb.is_active_memory in an administrator's query: the documented
    actor's two active memories (global memories of other tests may be listed too), not the
    one superseded, nor anyone else's."""
    contents = [row[2] for row in results[10] if row[1] != "global"]
    assert contents == [THURSDAYS, "The user prefers short commit messages"]


def test_memories_and_the_conversation_they_came_from(
    results: dict[int, list[tuple[Any, ...]]],
) -> None:
    """The captured memory with its episode's session, client, turns, time and text; the
    documented actor's memories saved without capture are not listed."""
    assert results[11] == [
        (
            "The user prefers short commit messages",
            "session-1",
            "claude-code",
            0,
            3,
            "2026-11-20T10:15:00+00:00",
            "user: keep commit messages short, please",
        )
    ]


def test_open_duplicates_and_dashboard_sessions(results: dict[int, list[tuple[Any, ...]]]) -> None:
    """The open pair with both contents; the live session, then signed out everywhere."""
    # the documented actor's rows, exactly (other tests' actors share the database)
    assert [(row[0], row[1], row[2], float(row[3])) for row in results[12] if row[0] == ACTOR] == [
        (ACTOR, "The user prefers short commit messages", THURSDAYS, 0.81)
    ]
    assert [(row[0], row[1]) for row in results[13] if row[0] == ACTOR] == [(ACTOR, "local user")]
    assert [row[0] for row in results[14]] == ["local user"]
