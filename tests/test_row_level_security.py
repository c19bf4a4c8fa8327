"""Row-level security: the database keeps each principal to its rows, whatever the query.

Everything here connects as a login role that is a member of emergent_memory_app (neither
superuser nor owner), as the server does in production.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import ADMIN, ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryConfig, MemoryService
from tests.embedders import BagOfWordsEmbedder


@pytest.fixture
def world(service: MemoryService, global_memories_cleanup: None) -> dict[str, Any]:
    """Two actors with user and project memories in two projects, and a global memory."""
    project_1, project_2 = uuid.uuid4(), uuid.uuid4()
    alice, bob = uuid.uuid4(), uuid.uuid4()
    admin = Principal(uuid.uuid4(), project_1, frozenset({READ, WRITE, ADMIN}))
    ids: dict[str, str] = {}
    for name, actor in (("alice", alice), ("bob", bob)):
        here = Principal(actor, project_1)
        ids[f"{name}_user"] = service.save(
            here, f"{name} prefers tabs", "preference", context="style"
        )["memory"]["id"]
        ids[f"{name}_project"] = service.save(
            here, f"{name} deploys project one with make", "fact", scope="project"
        )["memory"]["id"]
        service.recall(here, "tabs")  # a recall row of their own
    ids["global"] = service.save(admin, "Every service logs in JSON", "convention", scope="global")[
        "memory"
    ]["id"]
    return {"project_1": project_1, "project_2": project_2, "alice": alice, "bob": bob, **ids}


def ids_of(conn: psycopg.Connection[Any], query: str) -> set[str]:
    return {str(row[0]) for row in conn.execute(query)}


MEMORY_IDS = (
    "SELECT canonical_id FROM kb.graph_objects WHERE type = 'Memory' AND is_head "
    "AND deleted_at IS NULL"
)


def test_a_query_without_any_scope_predicate_returns_only_the_principals_rows(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_1"])
        assert ids_of(conn, MEMORY_IDS) == {
            world["alice_user"],
            world["alice_project"],
            world["global"],
        }
        assert ids_of(conn, "SELECT id FROM kb.memories") == {
            world["alice_user"],
            world["alice_project"],
            world["global"],
        }
        actors = {row[0] for row in conn.execute("SELECT actor_id FROM kb.graph_relationships")}
        assert actors == {world["alice"]}
        recallers = {row[0] for row in conn.execute("SELECT actor_id FROM kb.memory_recalls")}
        assert recallers == {world["alice"]}
        stats = {row[0] for row in conn.execute("SELECT actor_id FROM kb.memory_stats")}
        assert world["bob"] not in stats


def test_project_memories_stay_in_their_project_even_for_their_owner(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_2"])
        assert ids_of(conn, MEMORY_IDS) == {world["alice_user"], world["global"]}


def test_reading_all_projects_shows_the_actors_own_memories_of_every_project_only(
    app_connect: Callable[[], psycopg.Connection[Any]],
    world: dict[str, Any],
    service: MemoryService,
) -> None:
    """emergent_memory.all_projects (migration 0022, the dashboard's All projects view): the
    actor's own project-scope memories of every project become readable; another actor's
    never; and writes still need the object's own project."""
    elsewhere = Principal(world["alice"], world["project_2"])
    second = service.save(elsewhere, "alice runs project two on Fridays", "fact", scope="project")
    bobs = Principal(world["bob"], world["project_2"])
    service.save(bobs, "bob's project two secret plan", "fact", scope="project")
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_1"], all_projects=True)
        assert ids_of(conn, MEMORY_IDS) == {
            world["alice_user"],
            world["alice_project"],
            second["memory"]["id"],
            world["global"],
        }
        updated = conn.execute(
            "UPDATE kb.graph_objects SET properties = '{}' WHERE canonical_id = %s",
            (second["memory"]["id"],),
        )
        assert updated.rowcount == 0  # read, but not written from another project
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
            conn.transaction(),
        ):
            conn.execute(
                "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, "
                "scope, type) VALUES (gen_random_uuid(), 1, %s, %s, 'project', 'Memory')",
                (world["project_2"], world["alice"]),
            )
    with conn.transaction():  # the setting ends with the transaction
        graph.act_as(conn, world["alice"], world["project_1"])
        assert second["memory"]["id"] not in ids_of(conn, MEMORY_IDS)
    # the principal that reads all projects needs the scope that lets it choose any project
    with pytest.raises(ValueError, match="memory:any-project"):
        Principal(world["alice"], world["project_1"], all_projects=True)
    reader = Principal(
        world["alice"], world["project_1"], frozenset({READ, WRITE, ANY_PROJECT}), all_projects=True
    )
    assert not reader.can_write


def test_without_a_principal_the_application_role_sees_nothing(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    with conn.transaction():
        for table in ("graph_objects", "graph_relationships", "memory_recalls", "memories"):
            assert conn.execute(f"SELECT count(*) FROM kb.{table}").fetchone() == (0,), table
        recalled = conn.execute(
            "SELECT * FROM kb.recall_memories(%s, %s, 'tabs')", (world["alice"], world["project_1"])
        ).fetchall()
        assert recalled == []


def test_the_principal_ends_with_the_transaction(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_1"])
        assert len(ids_of(conn, MEMORY_IDS)) == 3
    with conn.transaction():
        assert ids_of(conn, MEMORY_IDS) == set()
        setting = conn.execute("SELECT current_setting('emergent_memory.actor_id', true)")
        assert setting.fetchone() in {("",), (None,)}


def test_a_connection_returned_to_the_pool_carries_no_identity(
    app_database_url: str, world: dict[str, Any]
) -> None:
    """One connection serves alice's request, then anyone's: it remembers nothing of her."""
    single: ConnectionPool = create_pool(app_database_url, min_size=1, max_size=1, timeout=10)
    try:
        service = MemoryService(single, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8))
        alice = Principal(world["alice"], world["project_1"])
        assert service.recall(alice, "tabs")["memories"]
        with single.connection() as conn:
            assert ids_of(conn, MEMORY_IDS) == set()
            row = conn.execute(
                "SELECT current_setting('emergent_memory.actor_id', true), "
                "current_setting('emergent_memory.admin', true)"
            ).fetchone()
            assert row is not None
            assert set(row) <= {"", None}
    finally:
        single.close()


def test_writes_for_another_actor_are_refused_by_the_database(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    insert = (
        "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, type) "
        "VALUES (gen_random_uuid(), 1, %s, %s, %s, 'Memory')"
    )
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_1"])
        # another actor's rows cannot be changed (they are not even there to change)
        updated = conn.execute(
            "UPDATE kb.graph_objects SET properties = '{}' WHERE actor_id = %s", (world["bob"],)
        )
        assert updated.rowcount == 0
        for actor, scope in ((world["bob"], "user"), (world["alice"], "global")):
            with (
                pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
                conn.transaction(),
            ):
                conn.execute(insert, (world["project_1"], actor, scope))
        # project scope: only in the current project
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
            conn.transaction(),
        ):
            conn.execute(insert, (world["project_2"], world["alice"], "project"))
        # rows are never deleted by the application (deletes are tombstone versions)
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("DELETE FROM kb.graph_objects WHERE actor_id = %s", (world["alice"],))
    with conn.transaction(force_rollback=True):
        graph.act_as(conn, world["alice"], world["project_1"], admin=True)
        conn.execute(insert, (world["project_1"], world["alice"], "global"))


def test_recall_answers_only_for_the_transactions_principal(
    app_connect: Callable[[], psycopg.Connection[Any]], world: dict[str, Any]
) -> None:
    conn = app_connect()
    with conn.transaction():
        graph.act_as(conn, world["alice"], world["project_1"])
        mine = conn.execute(
            "SELECT id FROM kb.recall_memories(%s, %s, 'prefers tabs')",
            (world["alice"], world["project_1"]),
        ).fetchall()
        assert {str(row[0]) for row in mine} == {world["alice_user"]}
    for actor, project in (
        (world["bob"], world["project_1"]),
        (world["alice"], world["project_2"]),
    ):
        with conn.transaction():
            graph.act_as(conn, world["alice"], world["project_1"])
            with (
                pytest.raises(psycopg.errors.InsufficientPrivilege, match="principal"),
                conn.transaction(),
            ):
                conn.execute("SELECT * FROM kb.recall_memories(%s, %s, 'tabs')", (actor, project))
    # the unchecked function behind it is not the application's to call
    with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
        conn.execute(
            "SELECT * FROM kb.recall_memories_for(%s, %s, 'tabs')",
            (world["bob"], world["project_1"]),
        )


def test_an_administrator_role_sees_and_recalls_for_everyone(
    admin_database_url: str, world: dict[str, Any]
) -> None:
    """The documented administrator setup: a login role in emergent_memory_admin."""
    with psycopg.connect(admin_database_url) as conn:
        assert {world["alice_user"], world["bob_user"], world["global"]} <= ids_of(conn, MEMORY_IDS)
        recalled = conn.execute(
            "SELECT id FROM kb.recall_memories(%s, %s, 'prefers tabs')",
            (world["bob"], world["project_1"]),
        ).fetchall()
        assert {str(row[0]) for row in recalled} == {world["bob_user"]}


def test_the_tables_force_row_level_security(
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """Even the owner is subject to the policies (it administers through the admin role)."""
    rows = (
        connect()
        .execute(
            "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
            "WHERE relnamespace = 'kb'::regnamespace "
            "AND relname IN ('graph_objects', 'graph_relationships', 'memory_recalls') "
            "ORDER BY relname"
        )
        .fetchall()
    )
    assert rows == [
        ("graph_objects", True, True),
        ("graph_relationships", True, True),
        ("memory_recalls", True, True),
    ]
    views = (
        connect()
        .execute(
            "SELECT c.relname, c.reloptions FROM pg_class c "
            "WHERE c.relnamespace = 'kb'::regnamespace AND c.relkind = 'v' ORDER BY 1"
        )
        .fetchall()
    )
    assert views
    assert all("security_invoker=true" in (options or []) for _, options in views)


AUTOMATIC_MEMORY_ROWS = {
    "agent_sessions": (
        "INSERT INTO kb.agent_sessions (actor_id, session_id, project_id, client) "
        "VALUES (%(actor)s, 's', %(project)s, 'test')"
    ),
    "injections": (
        "INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, "
        "outcome, prompt, prompt_length, memory_ids, estimated_tokens, budget_tokens) "
        "VALUES (%(actor)s, %(project)s, 's', 'test', 'prompt', 'nothing_relevant', "
        "'a prompt', 8, '{}', 0, 500)"
    ),
    "capture_turns": (
        "INSERT INTO kb.capture_turns (actor_id, session_id, turn_index, role, content) "
        "VALUES (%(actor)s, 's', 0, 'user', 'I prefer tabs')"
    ),
    "capture_windows": (
        "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, first_turn, "
        "end_turn) VALUES (%(actor)s, %(project)s, 's', 'test', 0, 1)"
    ),
    "llm_calls": (
        "INSERT INTO kb.llm_calls (actor_id, purpose, model, outcome) "
        "VALUES (%(actor)s, 'gate', 'm', 'ok')"
    ),
    "pair_judgments": (
        "INSERT INTO kb.pair_judgments (actor_id, pair_key, model, verdict) "
        "VALUES (%(actor)s, repeat('a', 64), 'm', 'same')"
    ),
}


@pytest.mark.parametrize("table", sorted(AUTOMATIC_MEMORY_ROWS))
def test_automatic_memorys_tables_hold_each_actors_rows_apart(
    app_connect: Callable[[], psycopg.Connection[Any]], table: str
) -> None:
    owner, other = Principal(uuid.uuid4(), uuid.uuid4()), Principal(uuid.uuid4(), uuid.uuid4())
    values = {"actor": owner.actor_id, "project": owner.project_id}
    count = f"SELECT count(*) FROM kb.{table} WHERE actor_id = %(actor)s"
    with app_connect() as conn:
        with conn.transaction():
            graph.act_as(conn, owner.actor_id, owner.project_id)
            conn.execute(AUTOMATIC_MEMORY_ROWS[table], values)
            assert conn.execute(count, values).fetchone() == (1,)
        with conn.transaction():
            graph.act_as(conn, other.actor_id, other.project_id)
            # another actor neither sees the row nor can write one in the owner's name
            assert conn.execute(count, values).fetchone() == (0,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute(AUTOMATIC_MEMORY_ROWS[table].replace("'s'", "'t'"), values)
        with conn.transaction():
            assert conn.execute(count, values).fetchone() == (0,)  # no principal: nothing
