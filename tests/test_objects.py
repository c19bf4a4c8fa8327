"""Graph objects: versions, one head, tombstones, restore, lists, and concurrent writers."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg import sql

from emergent_memory import graph
from emergent_memory.errors import InvalidInput, KeyConflict, ObjectNotFound
from emergent_memory.graph import Embedding
from tests.helpers import count_rows, memory

Connect = Callable[[], psycopg.Connection[Any]]


def unit_vector(axis: int, dimensions: int = 384) -> list[float]:
    return [1.0 if i == axis else 0.0 for i in range(dimensions)]


def new_memory(
    conn: psycopg.Connection[Any], project_id: uuid.UUID, **overrides: Any
) -> graph.GraphObject:
    arguments: dict[str, Any] = {
        "project_id": project_id,
        "type": "Memory",
        "properties": memory(),
        "actor_id": uuid.uuid4(),
        "labels": ["memory", "preference", "user"],
        "scope": "user",
    }
    return graph.create_object(conn, **(arguments | overrides))


def heads(conn: psycopg.Connection[Any], canonical_id: uuid.UUID) -> int:
    row = conn.execute(
        "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s AND is_head",
        (canonical_id,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_create_returns_version_one_with_everything_stored(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    embedding = Embedding.of(unit_vector(0), "test-model")
    created = new_memory(conn, project_id, embedding=embedding, key="tabs", status="active")
    assert created.version == 1
    assert created.is_head
    assert created.project_id == project_id
    assert created.properties == memory()
    assert created.labels == ["memory", "preference", "user"]
    assert created.scope == "user"
    assert created.embedding == embedding.vector
    assert created.embedding_model == "test-model"
    assert len(created.content_hash) == 32
    assert graph.get_head(conn, created.canonical_id) == created


def test_new_versions_keep_the_identity_and_one_head(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(conn, project_id)
    for number in range(2, 7):
        head = graph.update_object(
            conn, created.canonical_id, properties={"content": f"version {number}"}
        )
        assert (head.canonical_id, head.version) == (created.canonical_id, number)
    assert heads(conn, created.canonical_id) == 1
    versions = graph.list_versions(conn, created.canonical_id)
    assert [v.version for v in versions] == [1, 2, 3, 4, 5, 6]
    assert [v.is_head for v in versions] == [False] * 5 + [True]
    old = graph.get_version(conn, created.canonical_id, 3)
    assert old is not None
    assert old.properties["content"] == "version 3"
    assert {v.created_at for v in versions} == {created.created_at}


def test_update_patches_properties_and_replaces_labels(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(conn, project_id, properties=memory() | {"confidence": 0.7})
    updated = graph.update_object(
        conn,
        created.canonical_id,
        properties={"confidence": None, "source": "explicit"},
        labels=["memory", "fact"],
        status="reviewed",
    )
    assert updated.properties == memory() | {"source": "explicit"}
    assert updated.labels == ["memory", "fact"]
    assert updated.status == "reviewed"
    assert updated.content_hash != created.content_hash


def test_a_no_op_patch_writes_nothing(conn: psycopg.Connection[Any], project_id: uuid.UUID) -> None:
    created = new_memory(conn, project_id, embedding=Embedding.of(unit_vector(1), "m"))
    same = graph.update_object(
        conn,
        created.canonical_id,
        properties={"content": created.properties["content"]},
        labels=created.labels,
        embedding=Embedding.of(unit_vector(1), "m"),
    )
    assert same == created
    assert count_rows(conn, "graph_objects", project_id) == 1


def test_new_versions_carry_the_embedding_unless_replaced(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(conn, project_id, embedding=Embedding.of(unit_vector(2), "m"))
    carried = graph.update_object(conn, created.canonical_id, labels=["memory"])
    assert (carried.embedding, carried.embedding_model) == (created.embedding, "m")
    replaced = graph.update_object(
        conn, created.canonical_id, embedding=Embedding.of(unit_vector(3), "m2")
    )
    assert replaced.embedding == Embedding.of(unit_vector(3), "m2").vector
    assert replaced.embedding_model == "m2"
    cleared = graph.update_object(conn, created.canonical_id, embedding=None)
    assert (cleared.embedding, cleared.embedding_model) == (None, None)


def test_an_embedding_of_the_wrong_dimension_is_refused(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    with pytest.raises(InvalidInput, match="expected 384 dimensions, not 3"):
        new_memory(conn, project_id, embedding=Embedding.of([1.0, 0.0, 0.0], "tiny"))
    assert count_rows(conn, "graph_objects", project_id) == 0


def test_an_unknown_scope_is_refused(conn: psycopg.Connection[Any], project_id: uuid.UUID) -> None:
    with pytest.raises(InvalidInput, match="scope must be one of user, project, global"):
        new_memory(conn, project_id, scope="team")
    assert count_rows(conn, "graph_objects", project_id) == 0


def test_a_tombstone_hides_the_object_and_restore_brings_it_back(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    embedding = Embedding.of(unit_vector(4), "m")
    created = new_memory(conn, project_id, embedding=embedding)
    kept = new_memory(conn, project_id, properties=memory("The user writes Rust"))

    tombstone = graph.delete_object(conn, created.canonical_id, reason="user asked")
    assert tombstone.version == 2
    assert tombstone.deleted_at is not None
    assert tombstone.delete_reason == "user asked"
    assert graph.get_head(conn, created.canonical_id) is None
    assert graph.get_head(conn, created.canonical_id, include_deleted=True) == tombstone
    assert [o.canonical_id for o in graph.list_heads(conn, project_id)] == [kept.canonical_id]
    assert len(graph.list_heads(conn, project_id, include_deleted=True)) == 2

    with pytest.raises(ObjectNotFound):
        graph.update_object(conn, created.canonical_id, properties={"content": "x"})
    with pytest.raises(ObjectNotFound):
        graph.delete_object(conn, created.canonical_id)

    restored = graph.restore_object(conn, created.canonical_id)
    assert restored.version == 3
    assert restored.deleted_at is None
    assert restored.properties == created.properties
    assert restored.embedding == embedding.vector
    assert {o.canonical_id for o in graph.list_heads(conn, project_id)} == {
        created.canonical_id,
        kept.canonical_id,
    }
    with pytest.raises(InvalidInput, match="is not deleted"):
        graph.restore_object(conn, created.canonical_id)


def test_restore_can_patch_the_properties_in_the_same_version(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(conn, project_id)
    graph.update_object(conn, created.canonical_id, properties={"superseded_by": str(uuid.uuid4())})
    graph.delete_object(conn, created.canonical_id)
    restored = graph.restore_object(conn, created.canonical_id, properties={"superseded_by": None})
    assert restored.version == 4  # one version for both changes
    assert restored.deleted_at is None
    assert restored.properties == created.properties
    graph.delete_object(conn, created.canonical_id)
    with pytest.raises(InvalidInput, match="confidence"):  # the patch is validated
        graph.restore_object(conn, created.canonical_id, properties={"confidence": "high"})


def test_missing_objects_are_not_found(conn: psycopg.Connection[Any]) -> None:
    missing = uuid.uuid4()
    assert graph.get_head(conn, missing) is None
    for operation in (
        lambda: graph.update_object(conn, missing, properties={"content": "x"}),
        lambda: graph.delete_object(conn, missing),
        lambda: graph.restore_object(conn, missing),
    ):
        with pytest.raises(ObjectNotFound, match=str(missing)):
            operation()


def test_list_filters_by_type_labels_properties_and_actor(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    actor = uuid.uuid4()
    tabs = new_memory(conn, project_id, actor_id=actor)
    rust = new_memory(
        conn,
        project_id,
        properties=memory("Services are written in Rust", "convention"),
        labels=["memory", "convention", "project"],
    )
    context = graph.create_object(
        conn, project_id=project_id, type="MemoryContext", properties={"name": "backend"}
    )
    other_project = uuid.uuid4()
    graph.install_pack(conn, other_project, "agent-memory")
    new_memory(conn, other_project)

    def ids(**filters: Any) -> set[uuid.UUID]:
        return {o.canonical_id for o in graph.list_heads(conn, project_id, **filters)}

    assert ids() == {tabs.canonical_id, rust.canonical_id, context.canonical_id}
    assert ids(type="Memory") == {tabs.canonical_id, rust.canonical_id}
    assert ids(labels=["memory", "convention"]) == {rust.canonical_id}
    assert ids(properties={"category": "preference"}) == {tabs.canonical_id}
    assert ids(actor_id=actor) == {tabs.canonical_id}
    assert ids(type="MemoryContext", properties={"name": "backend"}) == {context.canonical_id}
    assert len(graph.list_heads(conn, project_id, limit=2)) == 2
    with pytest.raises(InvalidInput, match="limit"):
        graph.list_heads(conn, project_id, limit=0)


def test_one_live_object_per_key(conn: psycopg.Connection[Any], project_id: uuid.UUID) -> None:
    first = new_memory(conn, project_id, key="indentation")
    with pytest.raises(KeyConflict, match="key 'indentation' already exists"):
        new_memory(conn, project_id, key="indentation")
    # the failed write left the transaction usable and wrote nothing
    assert count_rows(conn, "graph_objects", project_id) == 1
    graph.delete_object(conn, first.canonical_id)
    second = new_memory(conn, project_id, key="indentation")
    with pytest.raises(KeyConflict):
        graph.restore_object(conn, first.canonical_id)
    assert graph.get_head(conn, first.canonical_id, include_deleted=True) is not None
    assert heads(conn, first.canonical_id) == 1
    assert graph.get_head(conn, second.canonical_id) == second


def test_create_keeps_a_given_id_but_never_reuses_one(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    wanted = uuid.uuid4()
    created = new_memory(conn, project_id, canonical_id=wanted)
    assert created.canonical_id == wanted
    with pytest.raises(InvalidInput, match=f"an object with id {wanted} already exists"):
        new_memory(conn, project_id, canonical_id=wanted)
    assert graph.list_versions(conn, wanted) == [created]


def test_the_database_refuses_a_second_head(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(conn, project_id)
    with pytest.raises(psycopg.errors.UniqueViolation, match="graph_objects_one_head_idx"):
        conn.execute(
            "INSERT INTO kb.graph_objects (canonical_id, version, project_id, type) "
            "VALUES (%s, 2, %s, 'Memory')",
            (created.canonical_id, project_id),
        )


def test_writes_outside_a_transaction_are_refused(connect: Connect) -> None:
    conn = connect()  # autocommit, no transaction
    with pytest.raises(RuntimeError, match="inside a transaction"):
        graph.update_object(conn, uuid.uuid4(), properties={"content": "x"})


def test_twenty_concurrent_patches_leave_one_head_at_version_21(connect: Connect) -> None:
    setup = connect()
    project = uuid.uuid4()
    with setup.transaction():
        graph.install_pack(setup, project, "agent-memory")
        created = graph.create_object(setup, project_id=project, type="Memory", properties=memory())
    start = threading.Barrier(20)
    errors: list[BaseException] = []

    def patch(number: int) -> None:
        try:
            conn = connect()
            start.wait()
            with conn.transaction():
                graph.update_object(
                    conn, created.canonical_id, properties={"content": f"writer {number}"}
                )
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=patch, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    versions = graph.list_versions(setup, created.canonical_id)
    assert [v.version for v in versions] == list(range(1, 22))
    assert heads(setup, created.canonical_id) == 1
    head = graph.get_head(setup, created.canonical_id)
    assert head is not None
    assert head.version == 21
    assert {v.properties["content"] for v in versions[1:]} == {f"writer {n}" for n in range(20)}


def test_fts_is_maintained_by_the_database_with_key_and_content_weighted_highest(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = new_memory(
        conn, project_id, key="deploys", properties=memory("Deploys happen on Fridays", "fact")
    )
    row = conn.execute(
        "SELECT fts::text FROM kb.graph_objects WHERE id = %s", (created.id,)
    ).fetchone()
    assert row is not None
    # key and content weigh A; other properties (here the category) are not indexed
    assert row[0] == "'deploy':1A,2A 'friday':5A 'happen':3A"
    updated = graph.update_object(conn, created.canonical_id, properties={"content": "On Mondays"})
    found = conn.execute(
        sql.SQL(
            "SELECT version FROM kb.graph_objects WHERE canonical_id = %s "
            "AND fts @@ websearch_to_tsquery('english', %s)"
        ),
        (created.canonical_id, "monday"),
    ).fetchall()
    assert found == [(updated.version,)]
