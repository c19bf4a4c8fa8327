"""Relationships: typed edges between canonical ids, validated by the pack, versioned."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from emergent_memory import graph
from emergent_memory.errors import (
    InvalidInput,
    ObjectNotFound,
    RelationshipConflict,
    RelationshipNotFound,
    UnknownType,
)
from tests.helpers import count_rows, memory


def make_memory(conn: psycopg.Connection[Any], project_id: uuid.UUID, content: str) -> uuid.UUID:
    created = graph.create_object(
        conn, project_id=project_id, type="Memory", properties=memory(content)
    )
    return created.canonical_id


def make_context(conn: psycopg.Connection[Any], project_id: uuid.UUID, name: str) -> uuid.UUID:
    created = graph.create_object(
        conn, project_id=project_id, type="MemoryContext", properties={"name": name}
    )
    return created.canonical_id


def test_relationships_survive_new_versions_of_either_end(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    new = make_memory(conn, project_id, "The user prefers spaces")
    old = make_memory(conn, project_id, "The user prefers tabs")
    edge = graph.create_relationship(
        conn, project_id=project_id, type="SUPERSEDES", src_id=new, dst_id=old
    )
    assert (edge.src_id, edge.dst_id, edge.version) == (new, old, 1)

    graph.update_object(conn, new, properties={"content": "The user prefers 4 spaces"})
    graph.update_object(conn, old, properties={"confidence": 0.5})
    graph.update_object(conn, old, properties={"confidence": 0.4})

    assert graph.list_relationships(conn, src_id=new) == [edge]
    assert graph.list_relationships(conn, dst_id=old) == [edge]
    assert graph.list_relationships(conn, object_id=old, type="SUPERSEDES") == [edge]
    assert graph.list_relationships(conn, object_id=old, type="RELEVANT_TO") == []
    target = graph.get_head(conn, edge.dst_id)
    assert target is not None
    assert target.version == 3


def test_endpoint_types_are_checked_against_the_pack(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    note = make_memory(conn, project_id, "The user prefers tabs")
    context = make_context(conn, project_id, "style")
    with pytest.raises(InvalidInput, match="cannot end at a Memory; allowed target types: Memory"):
        graph.create_relationship(
            conn, project_id=project_id, type="BELONGS_TO_CONTEXT", src_id=note, dst_id=note
        )
    with pytest.raises(InvalidInput, match="cannot start at a MemoryContext"):
        graph.create_relationship(
            conn, project_id=project_id, type="SUPERSEDES", src_id=context, dst_id=note
        )
    with pytest.raises(UnknownType, match=r"unknown relationship type 'LIKES'.*SUPERSEDES"):
        graph.create_relationship(
            conn, project_id=project_id, type="LIKES", src_id=note, dst_id=note
        )
    # RELEVANT_TO accepts any target type
    relevant = graph.create_relationship(
        conn, project_id=project_id, type="RELEVANT_TO", src_id=note, dst_id=context
    )
    assert relevant.type == "RELEVANT_TO"
    assert count_rows(conn, "graph_relationships", project_id) == 1


def test_ends_must_be_live_objects(conn: psycopg.Connection[Any], project_id: uuid.UUID) -> None:
    note = make_memory(conn, project_id, "The user prefers tabs")
    gone = make_memory(conn, project_id, "The user prefers spaces")
    graph.delete_object(conn, gone)
    missing = uuid.uuid4()
    with pytest.raises(ObjectNotFound, match=f"source object {missing}"):
        graph.create_relationship(
            conn, project_id=project_id, type="SUPERSEDES", src_id=missing, dst_id=note
        )
    with pytest.raises(ObjectNotFound, match=f"target object {gone}"):
        graph.create_relationship(
            conn, project_id=project_id, type="SUPERSEDES", src_id=note, dst_id=gone
        )
    assert count_rows(conn, "graph_relationships", project_id) == 0


def test_creating_an_existing_edge_returns_it_or_reports_the_conflict(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    note = make_memory(conn, project_id, "The user prefers tabs")
    context = make_context(conn, project_id, "style")
    arguments: dict[str, Any] = {
        "project_id": project_id,
        "type": "BELONGS_TO_CONTEXT",
        "src_id": note,
        "dst_id": context,
    }
    first = graph.create_relationship(conn, **arguments)
    assert graph.create_relationship(conn, **arguments) == first
    with pytest.raises(RelationshipConflict, match=r"already exists .* with other properties"):
        graph.create_relationship(conn, **arguments, properties={"weight": 2})
    assert count_rows(conn, "graph_relationships", project_id) == 1


def test_relationships_are_versioned_and_soft_deleted(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    note = make_memory(conn, project_id, "The user prefers tabs")
    context = make_context(conn, project_id, "style")
    edge = graph.create_relationship(
        conn, project_id=project_id, type="BELONGS_TO_CONTEXT", src_id=note, dst_id=context
    )
    updated = graph.update_relationship(conn, edge.canonical_id, properties={"weight": 2})
    assert (updated.version, updated.properties) == (2, {"weight": 2})
    assert graph.update_relationship(conn, edge.canonical_id, properties={"weight": 2}) == updated

    tombstone = graph.delete_relationship(conn, edge.canonical_id, reason="moved")
    assert (tombstone.version, tombstone.delete_reason) == (3, "moved")
    assert graph.get_relationship(conn, edge.canonical_id) is None
    assert graph.list_relationships(conn, src_id=note) == []
    assert graph.list_relationships(conn, src_id=note, include_deleted=True) == [tombstone]
    assert [v.version for v in graph.list_relationship_versions(conn, edge.canonical_id)] == [
        1,
        2,
        3,
    ]
    with pytest.raises(RelationshipNotFound):
        graph.delete_relationship(conn, edge.canonical_id)

    # the same edge can be created again once the old one is deleted
    again = graph.create_relationship(
        conn, project_id=project_id, type="BELONGS_TO_CONTEXT", src_id=note, dst_id=context
    )
    assert again.canonical_id != edge.canonical_id


def test_listing_needs_a_filter(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(InvalidInput, match="give at least one of"):
        graph.list_relationships(conn)
