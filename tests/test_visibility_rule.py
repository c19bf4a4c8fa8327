"""The rule "visible to this principal and active" has one home in SQL, kb.visible_to and
kb.is_active_memory (migration 0010), and one Python mirror, store.visible_to and
store.is_active: they agree on every kind of row, and so do the store's SQL, the read policy
and the planner's view of them.

The rows are a grid over what the rule looks at: owner (the principal, another actor, none),
scope, project (the principal's, another), type, head or older version, deleted or not,
superseded (no property, an id, a JSON null) and archived or not (migration 0013).
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.graph.models import GraphObject, select_list
from emergent_memory.memory import store

ME, SOMEONE_ELSE = uuid.uuid4(), uuid.uuid4()
HERE, ELSEWHERE = uuid.uuid4(), uuid.uuid4()
PRINCIPALS = [Principal(ME, HERE), Principal(SOMEONE_ELSE, HERE), Principal(ME, ELSEWHERE)]

INSERT = """
INSERT INTO kb.graph_objects (canonical_id, version, is_head, project_id, actor_id, scope,
                              type, properties, deleted_at, delete_reason)
VALUES (gen_random_uuid(), 1, %(is_head)s, %(project_id)s, %(actor_id)s, %(scope)s, %(type)s,
        %(properties)s, CASE WHEN %(deleted)s THEN now() END,
        CASE WHEN %(deleted)s THEN 'test' END)
"""


@pytest.fixture
def grid(conn: psycopg.Connection[Any]) -> list[GraphObject]:
    """Every combination, inserted as the owner (inside the test's rolled-back transaction)."""
    for owner, scope, project, type_, is_head, deleted, superseded, archived in itertools.product(
        (ME, SOMEONE_ELSE, None),
        ("user", "project", "global"),
        (HERE, ELSEWHERE),
        (store.MEMORY, store.CONTEXT),
        (True, False),
        (False, True),
        ({}, {"superseded_by": str(uuid.uuid4())}, {"superseded_by": None}),
        ({}, {"archived_at": "2026-01-01T00:00:00Z"}),
    ):
        conn.execute(
            INSERT,
            {
                "is_head": is_head,
                "project_id": project,
                "actor_id": owner,
                "scope": scope,
                "type": type_,
                "properties": Jsonb({"content": "a grid row", **superseded, **archived}),
                "deleted": deleted,
            },
        )
    query = sql.SQL(
        "SELECT {columns} FROM kb.graph_objects WHERE project_id IN (%s, %s) ORDER BY id"
    ).format(columns=select_list(GraphObject))
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        rows = cur.execute(query, (HERE, ELSEWHERE)).fetchall()
    assert len(rows) == 3 * 3 * 2 * 2 * 2 * 2 * 3 * 2
    return rows


def evaluate(
    conn: psycopg.Connection[Any], condition: str, principal: Principal, **more: Any
) -> dict[uuid.UUID, bool]:
    """The condition (SQL over the alias o, with %(actor_id)s and %(project_id)s) per row."""
    query = sql.SQL(
        "SELECT o.id, coalesce({condition}, false) FROM kb.graph_objects o "
        "WHERE o.project_id IN (%(here)s, %(elsewhere)s)"
    ).format(condition=sql.SQL(condition))
    params = {
        "actor_id": principal.actor_id,
        "project_id": principal.project_id,
        "here": HERE,
        "elsewhere": ELSEWHERE,
        **more,
    }
    return {row[0]: row[1] for row in conn.execute(query, params)}


RULE = "kb.visible_to(o, %(actor_id)s, %(project_id)s)"


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_the_python_mirror_agrees_with_the_sql_rule(
    conn: psycopg.Connection[Any], grid: list[GraphObject], principal: Principal
) -> None:
    visible = evaluate(conn, RULE, principal)
    active = evaluate(conn, "kb.is_active_memory(o)", principal)
    assert {row.id: store.visible_to(row, principal) for row in grid} == visible
    assert {row.id: store.is_active(row) for row in grid} == active
    archived = evaluate(conn, store.ARCHIVED, principal)
    assert {row.id: store.is_archived(row) for row in grid} == archived
    assert set(archived.values()) == {True, False}
    # the grid has rows on both sides of each part of the rule
    assert set(visible.values()) == set(active.values()) == {True, False}


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_the_stores_sql_agrees_with_the_rule(
    conn: psycopg.Connection[Any], grid: list[GraphObject], principal: Principal
) -> None:
    """VISIBLE and ACTIVE call the rule; the filters that spell a part of it out for an index
    (same scope for the duplicate checks; one's own, writable memories) match it."""
    rule = evaluate(conn, RULE, principal)
    assert evaluate(conn, store.VISIBLE, principal) == rule
    assert evaluate(conn, store.WRITABLE_BY_ADMIN, principal) == rule
    assert evaluate(conn, store.ACTIVE, principal) == evaluate(
        conn, "kb.is_active_memory(o)", principal
    )
    # what recall may return (no row of the grid has a validity): the active memories, and
    # with include_archived the archived ones too (store.LIVE)
    active = evaluate(conn, "kb.is_active_memory(o)", principal)
    assert evaluate(conn, "kb.memory_recallable(o, false, NULL)", principal) == active
    live = evaluate(conn, store.LIVE, principal)
    assert evaluate(conn, "kb.memory_recallable(o, true, NULL)", principal) == live
    archived = evaluate(conn, store.ARCHIVED, principal)
    assert {id_ for id_, is_live in live.items() if is_live} == {
        id_ for id_ in live if active[id_] or archived[id_]
    }
    for scope, same_scope in store.SAME_SCOPE.items():
        assert evaluate(conn, same_scope, principal) == evaluate(
            conn, RULE + " AND o.scope = %(scope)s", principal, scope=scope
        ), scope
    assert evaluate(conn, store.OWN, principal) == evaluate(
        conn, RULE + " AND o.scope <> 'global'", principal
    )


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_the_read_policy_is_the_rule_plus_ownerless_objects_of_the_project(
    conn: psycopg.Connection[Any], grid: list[GraphObject], principal: Principal
) -> None:
    with conn.transaction(force_rollback=True):  # the role and principal end with it
        conn.execute("SET LOCAL ROLE emergent_memory_app")
        graph.act_as(conn, principal.actor_id, principal.project_id)
        seen = {
            row[0]
            for row in conn.execute(
                "SELECT id FROM kb.graph_objects WHERE project_id IN (%s, %s)", (HERE, ELSEWHERE)
            )
        }
    ownerless_here = {
        row.id
        for row in grid
        if row.actor_id is None
        and row.scope == "project"
        and row.project_id == principal.project_id
    }
    assert seen == {row.id for row in grid if store.visible_to(row, principal)} | ownerless_here


def plan(conn: psycopg.Connection[Any], query: str, params: Any = None) -> str:
    row = conn.execute("EXPLAIN (FORMAT JSON, VERBOSE) " + query, params).fetchone()
    assert row is not None
    return json.dumps(row[0])


def test_the_planner_inlines_the_rule(conn: psycopg.Connection[Any]) -> None:
    """What keeps the rule's callers on their indexes: the planner writes the expression in
    place of the call, in a query and in the policy (whose principal stays an InitPlan).
    Read on a sequential scan, whose filter shows the whole expression: on an index whose
    predicate implies part of it (0021's partial index of active memories, chosen once the
    table holds enough rows), that part is not written in the plan at all."""
    for setting in ("enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan"):
        conn.execute(f"SET LOCAL {setting} = off")
    explained = plan(
        conn,
        "SELECT o.id FROM kb.graph_objects o "
        "WHERE kb.visible_to(o, %s, %s) AND kb.is_active_memory(o)",
        (ME, HERE),
    )
    assert "visible_to" not in explained
    assert "is_active_memory" not in explained
    assert "superseded_by" in explained
    assert "archived_at" in explained
    assert "'global'" in explained
    explained = plan(
        conn,
        "SELECT o.id FROM kb.graph_objects o WHERE kb.memory_recallable(o, false, NULL)",
    )
    assert "memory_recallable" not in explained
    assert "valid_until" in explained
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL ROLE emergent_memory_app")
        graph.act_as(conn, ME, HERE)
        explained = plan(conn, "SELECT id FROM kb.graph_objects")
    assert "visible_to" not in explained
    assert "'global'" in explained
    assert "InitPlan" in explained
