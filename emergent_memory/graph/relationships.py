"""Graph relationships: typed, versioned edges between canonical object ids.

Edges name canonical ids, so they keep pointing at the same objects whatever versions those
objects go through. Like objects, they are versioned and soft-deleted; store functions never
commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from psycopg import Connection, sql
from psycopg.rows import class_row, kwargs_row
from psycopg.types.json import Jsonb

from emergent_memory.errors import (
    InvalidInput,
    ObjectNotFound,
    RelationshipConflict,
    RelationshipNotFound,
)
from emergent_memory.graph.models import GraphRelationship, select_list
from emergent_memory.graph.objects import get_heads
from emergent_memory.graph.packs import PACK_STAMP, PackValidation, stamp_of
from emergent_memory.graph.versioning import (
    lock_versions,
    merge_properties,
    require_transaction,
    savepoint,
)

TABLE = "kb.graph_relationships"

INSERT_VERSION = """
INSERT INTO kb.graph_relationships (
    canonical_id, version, project_id, actor_id, type, src_id, dst_id, properties,
    deleted_at, delete_reason, created_at
) VALUES (
    coalesce(%(canonical_id)s::uuid, gen_random_uuid()), %(version)s, %(project_id)s,
    %(actor_id)s, %(type)s, %(src_id)s, %(dst_id)s, %(properties)s,
    CASE WHEN %(deleted)s THEN now() END, %(delete_reason)s, coalesce(%(created_at)s, now())
)
ON CONFLICT (project_id, type, src_id, dst_id) WHERE is_head AND deleted_at IS NULL DO NOTHING
RETURNING {columns}, {pack_stamp} AS pack_stamp
"""

RETIRE_HEAD = "UPDATE kb.graph_relationships SET is_head = false WHERE id = %(id)s AND is_head"

GET_HEAD = """
SELECT {columns} FROM kb.graph_relationships
WHERE canonical_id = %(canonical_id)s AND is_head
"""

GET_LIVE_EDGE = """
SELECT {columns} FROM kb.graph_relationships
WHERE project_id = %(project_id)s AND type = %(type)s
  AND src_id = %(src_id)s AND dst_id = %(dst_id)s
  AND is_head AND deleted_at IS NULL
"""

LIST_VERSIONS = """
SELECT {columns} FROM kb.graph_relationships
WHERE canonical_id = %(canonical_id)s
ORDER BY version
"""

LIST_RELATIONSHIPS = """
SELECT {columns} FROM kb.graph_relationships
WHERE is_head {filters}
ORDER BY created_at, canonical_id
LIMIT %(limit)s
"""


def create_relationship(
    conn: Connection[Any],
    *,
    project_id: UUID,
    type: str,
    src_id: UUID,
    dst_id: UUID,
    properties: Mapping[str, Any] | None = None,
    actor_id: UUID | None = None,
) -> GraphRelationship:
    """Join two live objects (by canonical id) with a typed edge.

    The type must be defined by a pack installed in `project_id` for the two objects' types.
    Creating an edge that already exists with the same properties returns the existing one;
    with other properties it is a `RelationshipConflict` (update the edge instead).
    """
    require_transaction(conn)
    ends = get_heads(conn, [src_id, dst_id])
    source = ends.get(src_id)
    if source is None:
        raise ObjectNotFound(f"the source object {src_id} does not exist")
    target = ends.get(dst_id)
    if target is None:
        raise ObjectNotFound(f"the target object {dst_id} does not exist")
    validation = PackValidation.of_relationship(conn, project_id, type, source.type, target.type)
    values = {
        "canonical_id": None,
        "version": 1,
        "project_id": project_id,
        "actor_id": actor_id,
        "type": type,
        "src_id": src_id,
        "dst_id": dst_id,
        "properties": dict(properties or {}),
        "deleted": False,
        "delete_reason": None,
        "created_at": None,
    }
    with savepoint(conn):
        created = _insert_version(conn, values, validation)
    if created is not None:
        return created
    validation.confirm(conn, None)  # nothing written, so no stamp: validate against the packs now
    existing = _fetch_one(conn, GET_LIVE_EDGE, values)
    assert existing is not None, "the conflicting edge is live in this transaction's view"
    if existing.properties != values["properties"]:
        raise RelationshipConflict(
            f"a {type} relationship from {src_id} to {dst_id} already exists "
            f"({existing.canonical_id}) with other properties; update it instead"
        )
    return existing


def update_relationship(
    conn: Connection[Any], canonical_id: UUID, *, properties: Mapping[str, Any]
) -> GraphRelationship:
    """Write a new version with patched properties (None removes one); no-op writes nothing."""
    lock_versions(conn, TABLE, canonical_id)
    head = _live_head(conn, canonical_id)
    merged = merge_properties(head.properties, properties)
    if merged == head.properties:
        return head
    return _next_version(conn, head, properties=merged)


def delete_relationship(
    conn: Connection[Any], canonical_id: UUID, reason: str | None = None
) -> GraphRelationship:
    """Soft-delete an edge with a tombstone version; returns the tombstone."""
    lock_versions(conn, TABLE, canonical_id)
    head = _live_head(conn, canonical_id)
    return _next_version(conn, head, deleted=True, delete_reason=reason)


def get_relationship(
    conn: Connection[Any], canonical_id: UUID, *, include_deleted: bool = False
) -> GraphRelationship | None:
    head = _fetch_one(conn, GET_HEAD, {"canonical_id": canonical_id})
    if head is None or (head.deleted and not include_deleted):
        return None
    return head


def list_relationship_versions(
    conn: Connection[Any], canonical_id: UUID
) -> list[GraphRelationship]:
    with conn.cursor(row_factory=class_row(GraphRelationship)) as cur:
        cur.execute(_compose(LIST_VERSIONS), {"canonical_id": canonical_id})
        return cur.fetchall()


def list_relationships(
    conn: Connection[Any],
    *,
    src_id: UUID | None = None,
    dst_id: UUID | None = None,
    object_id: UUID | None = None,
    type: str | None = None,
    project_id: UUID | None = None,
    include_deleted: bool = False,
    limit: int = 1000,
) -> list[GraphRelationship]:
    """Live edges, oldest first, filtered by end (`object_id`: either end), type, project."""
    if src_id is None and dst_id is None and object_id is None and project_id is None:
        raise InvalidInput("give at least one of src_id, dst_id, object_id or project_id")
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    filters: list[sql.Composable] = []
    params: dict[str, Any] = {"limit": limit}
    for name, value, clause in (
        ("src_id", src_id, "AND src_id = %(src_id)s"),
        ("dst_id", dst_id, "AND dst_id = %(dst_id)s"),
        ("object_id", object_id, "AND (src_id = %(object_id)s OR dst_id = %(object_id)s)"),
        ("type", type, "AND type = %(type)s"),
        ("project_id", project_id, "AND project_id = %(project_id)s"),
    ):
        if value is not None:
            filters.append(sql.SQL(clause))
            params[name] = value
    if not include_deleted:
        filters.append(sql.SQL("AND deleted_at IS NULL"))
    statement = sql.SQL(LIST_RELATIONSHIPS).format(
        columns=select_list(GraphRelationship), filters=sql.SQL(" ").join(filters)
    )
    with conn.cursor(row_factory=class_row(GraphRelationship)) as cur:
        cur.execute(statement, params)
        return cur.fetchall()


def _live_head(conn: Connection[Any], canonical_id: UUID) -> GraphRelationship:
    head = get_relationship(conn, canonical_id)
    if head is None:
        raise RelationshipNotFound(f"no live relationship {canonical_id}")
    return head


def _next_version(
    conn: Connection[Any],
    head: GraphRelationship,
    *,
    deleted: bool = False,
    delete_reason: str | None = None,
    **changes: Any,
) -> GraphRelationship:
    values = {
        "canonical_id": head.canonical_id,
        "version": head.version + 1,
        "project_id": head.project_id,
        "actor_id": head.actor_id,
        "type": head.type,
        "src_id": head.src_id,
        "dst_id": head.dst_id,
        "properties": head.properties,
        "deleted": deleted,
        "delete_reason": delete_reason,
        "created_at": head.created_at,
    }
    values.update(changes)
    with savepoint(conn):
        conn.execute(RETIRE_HEAD, {"id": head.id})
        row = _insert_version(conn, values)
    # the only conflict is another live edge with the same ends, impossible for a version of
    # a live edge (it is that edge) and irrelevant for a tombstone (not live)
    assert row is not None
    return row


def _insert_version(
    conn: Connection[Any], values: dict[str, Any], validation: PackValidation | None = None
) -> GraphRelationship | None:
    """Insert a version (inside the caller's savepoint) and confirm its validation, if any;
    None if a live edge with the same ends and type exists already (nothing written)."""
    params = {**values, "properties": Jsonb(values["properties"])}
    statement = sql.SQL(INSERT_VERSION).format(
        columns=select_list(GraphRelationship), pack_stamp=sql.SQL(PACK_STAMP)
    )
    with conn.cursor(row_factory=kwargs_row(_version_and_stamp)) as cur:
        cur.execute(statement, params)
        row = cur.fetchone()
    if row is None:
        return None
    version, stamp = row
    if validation is not None:
        validation.confirm(conn, stamp)
    return version


def _version_and_stamp(
    *, pack_stamp: list[str] | None, **columns: Any
) -> tuple[GraphRelationship, frozenset[str]]:
    return GraphRelationship(**columns), stamp_of(pack_stamp)


def _fetch_one(
    conn: Connection[Any], statement: str, params: Mapping[str, Any]
) -> GraphRelationship | None:
    with conn.cursor(row_factory=class_row(GraphRelationship)) as cur:
        cur.execute(_compose(statement), params)
        return cur.fetchone()


def _compose(statement: str) -> sql.Composed:
    return sql.SQL(statement).format(columns=select_list(GraphRelationship))
