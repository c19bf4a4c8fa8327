"""kb.memory_use_counts (migration 0024): how often each actor used each memory, kept by a
trigger on the recall log. The Browse page's use sorts and filters and a session start read
it instead of counting the log; it must always say what the log's GROUP BY says."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db import migrate
from emergent_memory.memory import MemoryService

COUNTED = """
SELECT actor_id, canonical_id, uses, last_used FROM kb.memory_use_counts
WHERE actor_id = ANY(%(actors)s) ORDER BY 1, 2
"""
FROM_THE_LOG = """
SELECT actor_id, canonical_id, count(*), max(recalled_at) FROM kb.memory_recalls
WHERE actor_id = ANY(%(actors)s) GROUP BY 1, 2 ORDER BY 1, 2
"""


def both(conn: psycopg.Connection[Any], *actors: uuid.UUID) -> tuple[list[Any], list[Any]]:
    params = {"actors": list(actors)}
    return conn.execute(COUNTED, params).fetchall(), conn.execute(FROM_THE_LOG, params).fetchall()


def test_the_counts_follow_the_recall_log_as_it_grows_and_shrinks(
    service: MemoryService, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    alice, bob = Principal(uuid.uuid4(), uuid.uuid4()), Principal(uuid.uuid4(), uuid.uuid4())
    for who in (alice, bob):
        service.save(who, "The staging database listens on port 5433", "fact")
        service.save(who, "Deploys go out on Tuesdays after the standup", "convention")
    for query in ("staging database port", "when do deploys go out", "staging port"):
        service.recall(alice, query)
    service.recall(bob, "deploys")
    with connect() as conn:
        counted, logged = both(conn, alice.actor_id, bob.actor_id)
        assert counted == logged
        assert counted  # recalls were logged and counted
        # taking uses away: one of several, then the last one
        actor, memory, uses, _ = next(row for row in counted if row[2] >= 2)
        assert uses >= 2  # the staging memory, recalled twice by alice
        conn.execute(
            "DELETE FROM kb.memory_recalls WHERE ctid = (SELECT ctid FROM kb.memory_recalls "
            "WHERE actor_id = %s AND canonical_id = %s ORDER BY recalled_at DESC LIMIT 1)",
            (actor, memory),
        )
        counted, logged = both(conn, alice.actor_id, bob.actor_id)
        assert counted == logged
        conn.execute(
            "DELETE FROM kb.memory_recalls WHERE actor_id = %s AND canonical_id = %s",
            (actor, memory),
        )
        counted, logged = both(conn, alice.actor_id, bob.actor_id)
        assert counted == logged
        assert all(row[1] != memory or row[0] != actor for row in counted)


def test_each_actor_reads_only_its_counts_and_writes_none(
    service: MemoryService,
    app_connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    alice, bob = Principal(uuid.uuid4(), uuid.uuid4()), Principal(uuid.uuid4(), uuid.uuid4())
    for who in (alice, bob):
        service.save(who, "The build cache lives on the shared volume", "fact")
        service.recall(who, "build cache")
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, alice.actor_id, alice.project_id)
        actors = {row[0] for row in conn.execute("SELECT actor_id FROM kb.memory_use_counts")}
        assert actors == {alice.actor_id}
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("UPDATE kb.memory_use_counts SET uses = 1000")
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute(
                "INSERT INTO kb.memory_use_counts VALUES (%s, gen_random_uuid(), 5, now())",
                (alice.actor_id,),
            )


def test_the_migration_counts_the_log_it_finds(make_database: Callable[[], str]) -> None:
    url = make_database()
    migrate.upgrade(url, "0023_project_names")
    actor, memory, other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(url, autocommit=True) as conn:
        for canonical, at in (
            (memory, "2026-01-01"),
            (memory, "2026-02-01"),
            (other, "2026-03-01"),
        ):
            conn.execute(
                "INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at) "
                "VALUES (%s, %s, gen_random_uuid(), %s)",
                (canonical, actor, at),
            )
        conn.execute(  # a recall without an actor is not anyone's use
            "INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id) "
            "VALUES (%s, NULL, gen_random_uuid())",
            (memory,),
        )
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        counted, logged = both(conn, actor)
        assert counted == logged
        assert [(row[1], row[2]) for row in counted] == sorted(
            [(memory, 2), (other, 1)], key=lambda pair: pair[0]
        )


def test_concurrent_recalls_of_the_same_memories_in_other_orders_all_succeed(
    service: MemoryService, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    """Each recall's rows lock the memories' use counts (the trigger's upsert): taken in the
    ids' order, recalls that rank the same memories differently wait instead of deadlocking."""
    from concurrent.futures import ThreadPoolExecutor

    me = Principal(uuid.uuid4(), uuid.uuid4())
    topics = ["staging database", "deploy window", "build cache", "release train", "log format"]
    for topic in topics:
        service.save(me, f"The {topic} is described in the operations handbook", "fact")
    queries = [f"{a} and {b} in the operations handbook" for a in topics for b in reversed(topics)]

    def recall(query: str) -> int:
        return len(service.recall(me, query)["memories"])

    with ThreadPoolExecutor(max_workers=6) as pool:
        found = list(pool.map(recall, queries * 2))
    assert all(n > 0 for n in found)
    with connect() as conn:
        counted, logged = both(conn, me.actor_id)
    assert counted == logged
    assert sum(row[2] for row in counted) == sum(found)
