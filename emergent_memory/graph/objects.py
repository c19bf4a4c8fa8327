"""Graph objects: create, version, soft-delete, restore, read and list typed objects.

Store functions take a connection, never commit, and leave the transaction to the caller.
Every write is validated against the packs installed in the object's project, so a bad write
raises and leaves nothing in the table (packs.PackValidation: usually without a query of its
own, the write's statement telling whether the packs validated against were the ones in force).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import psycopg
from psycopg import Connection, sql
from psycopg.rows import class_row, kwargs_row
from psycopg.types.json import Jsonb

from emergent_memory.errors import InvalidInput, KeyConflict, ObjectNotFound
from emergent_memory.graph.models import (
    UNSET,
    Embedding,
    GraphObject,
    Scope,
    Unset,
    select_list,
)
from emergent_memory.graph.packs import PACK_STAMP, PackValidation, stamp_of
from emergent_memory.graph.versioning import (
    lock_versions,
    merge_properties,
    require_transaction,
    savepoint,
    try_lock_versions,
)

TABLE = "kb.graph_objects"
SCOPES = ("user", "project", "global")

# A new version, and the head it replaces (`retire_id`; None for version 1) no longer the head,
# in one statement. The new row's created_at reads `retired`, so the head is retired before
# the row is inserted and the one-head index never holds two.
INSERT_VERSION = """
WITH retired AS (
    UPDATE kb.graph_objects SET is_head = false
    WHERE id = %(retire_id)s AND is_head
    RETURNING created_at
)
INSERT INTO kb.graph_objects (
    canonical_id, version, project_id, actor_id, scope, type, key, status,
    properties, labels, embedding, embedding_model, deleted_at, delete_reason, created_at
) VALUES (
    coalesce(%(canonical_id)s::uuid, gen_random_uuid()), %(version)s, %(project_id)s,
    %(actor_id)s, %(scope)s, %(type)s, %(key)s, %(status)s, %(properties)s, %(labels)s,
    %(embedding)s, %(embedding_model)s,
    CASE WHEN %(deleted)s THEN now() END, %(delete_reason)s,
    coalesce((SELECT created_at FROM retired), %(created_at)s, now())
)
RETURNING {columns}, {pack_stamp} AS pack_stamp
"""

GET_HEAD = (
    "SELECT {columns} FROM kb.graph_objects WHERE canonical_id = %(canonical_id)s AND is_head"
)

GET_HEADS = """
SELECT {columns} FROM kb.graph_objects
WHERE canonical_id = ANY(%(canonical_ids)s) AND is_head
"""

GET_VERSION = """
SELECT {columns} FROM kb.graph_objects
WHERE canonical_id = %(canonical_id)s AND version = %(version)s
"""

LIST_VERSIONS = """
SELECT {columns} FROM kb.graph_objects
WHERE canonical_id = %(canonical_id)s
ORDER BY version
"""

LIST_HEADS = """
SELECT {columns} FROM kb.graph_objects
WHERE is_head AND project_id = %(project_id)s {filters}
ORDER BY created_at DESC, canonical_id
LIMIT %(limit)s OFFSET %(offset)s
"""

LIVE_KEY_INDEX = "graph_objects_live_key_idx"
CANONICAL_VERSION_KEY = "graph_objects_canonical_version_key"


def create_object(
    conn: Connection[Any],
    *,
    project_id: UUID,
    type: str,
    properties: Mapping[str, Any],
    actor_id: UUID | None = None,
    scope: Scope = "project",
    key: str | None = None,
    status: str | None = None,
    labels: Sequence[str] = (),
    embedding: Embedding | None = None,
    canonical_id: UUID | None = None,
) -> GraphObject:
    """Create version 1 of a new object, after validating it against the project's packs."""
    require_transaction(conn)
    _check_scope(scope)
    validation = PackValidation.of_object(conn, project_id, type, properties)
    with savepoint(conn):
        return _insert_version(
            conn,
            {
                "canonical_id": canonical_id,
                "version": 1,
                "project_id": project_id,
                "actor_id": actor_id,
                "scope": scope,
                "type": type,
                "key": key,
                "status": status,
                "properties": dict(properties),
                "labels": list(labels),
                "embedding": embedding,
                "deleted": False,
                "delete_reason": None,
                "created_at": None,
            },
            validation,
            retire_id=None,
        )


def update_object(
    conn: Connection[Any],
    canonical_id: UUID,
    *,
    properties: Mapping[str, Any] | None = None,
    labels: Sequence[str] | None = None,
    status: str | Unset | None = UNSET,
    key: str | Unset | None = UNSET,
    embedding: Embedding | Unset | None = UNSET,
) -> GraphObject:
    """Write a new version of a live object; returns the new head.

    `properties` is a top-level merge patch (a None value removes the property), `labels`
    replaces the labels. The embedding is carried over unless a new one (or None) is given,
    so a new version is searchable at once. A patch that changes nothing writes nothing and
    returns the current head. Concurrent updates of one object are serialized.
    """
    lock_versions(conn, TABLE, canonical_id)
    head = _live_head(conn, canonical_id)
    changes: dict[str, Any] = {
        "properties": merge_properties(head.properties, properties or {}),
        "labels": list(head.labels if labels is None else labels),
        "status": head.status if isinstance(status, Unset) else status,
        "key": head.key if isinstance(key, Unset) else key,
    }
    new_embedding = _current_embedding(head) if isinstance(embedding, Unset) else embedding
    unchanged = (
        changes["properties"] == head.properties
        and changes["labels"] == head.labels
        and changes["status"] == head.status
        and changes["key"] == head.key
        and new_embedding == _current_embedding(head)
    )
    if unchanged:
        return head
    validation = PackValidation.of_object(conn, head.project_id, head.type, changes["properties"])
    return _next_version(conn, head, validation, embedding=new_embedding, **changes)


def delete_object(
    conn: Connection[Any], canonical_id: UUID, reason: str | None = None
) -> GraphObject:
    """Soft-delete: write a tombstone version (deleted_at, delete_reason) and return it.

    The tombstone keeps the properties and the embedding, so `restore_object` brings the
    object back exactly as it was.
    """
    lock_versions(conn, TABLE, canonical_id)
    head = _live_head(conn, canonical_id)
    return _next_version(conn, head, deleted=True, delete_reason=reason)


def restore_object(
    conn: Connection[Any], canonical_id: UUID, *, properties: Mapping[str, Any] | None = None
) -> GraphObject:
    """Bring a soft-deleted object back as a new live version with its last properties,
    patched by `properties` (a top-level merge patch, as in update_object) if given."""
    lock_versions(conn, TABLE, canonical_id)
    head = get_head(conn, canonical_id, include_deleted=True)
    if head is None:
        raise ObjectNotFound(f"no object {canonical_id}")
    if not head.deleted:
        raise InvalidInput(f"object {canonical_id} is not deleted")
    if not properties:
        return _next_version(conn, head)
    merged = merge_properties(head.properties, properties)
    validation = PackValidation.of_object(conn, head.project_id, head.type, merged)
    return _next_version(conn, head, validation, properties=merged)


def lock_object(conn: Connection[Any], canonical_id: UUID) -> None:
    """Hold, until the caller's transaction ends, the lock every writer of this object's
    versions takes: read its head after this and it stays the head (the lock is re-entrant,
    so the caller may then update or delete the object)."""
    lock_versions(conn, TABLE, canonical_id)


def try_lock_object(conn: Connection[Any], canonical_id: UUID) -> bool:
    """lock_object, or False at once when another transaction holds the lock (no wait)."""
    return try_lock_versions(conn, TABLE, canonical_id)


def get_head(
    conn: Connection[Any], canonical_id: UUID, *, include_deleted: bool = False
) -> GraphObject | None:
    """The live version of an object; None when there is none (or it is deleted, by default)."""
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(_compose(GET_HEAD), {"canonical_id": canonical_id})
        head = cur.fetchone()
    if head is None or (head.deleted and not include_deleted):
        return None
    return head


def get_heads(
    conn: Connection[Any], canonical_ids: Sequence[UUID], *, include_deleted: bool = False
) -> dict[UUID, GraphObject]:
    """The live versions of several objects (one query), by canonical id; an object without
    one (or deleted, by default) is missing from the result."""
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(_compose(GET_HEADS), {"canonical_ids": list(canonical_ids)})
        heads = cur.fetchall()
    return {head.canonical_id: head for head in heads if include_deleted or not head.deleted}


def get_version(conn: Connection[Any], canonical_id: UUID, version: int) -> GraphObject | None:
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(_compose(GET_VERSION), {"canonical_id": canonical_id, "version": version})
        return cur.fetchone()


def list_versions(conn: Connection[Any], canonical_id: UUID) -> list[GraphObject]:
    """Every version of an object, oldest first (tombstones included)."""
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(_compose(LIST_VERSIONS), {"canonical_id": canonical_id})
        return cur.fetchall()


def list_heads(
    conn: Connection[Any],
    project_id: UUID,
    *,
    type: str | None = None,
    labels: Sequence[str] = (),
    properties: Mapping[str, Any] | None = None,
    actor_id: UUID | None = None,
    include_deleted: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> list[GraphObject]:
    """Live objects of a project, newest first.

    Filters combine with AND: `type`; `labels` (the object has all of them; GIN index);
    `properties` (JSONB containment `@>`, jsonb_path_ops GIN index); `actor_id`.
    """
    if limit < 1 or offset < 0:
        raise InvalidInput("limit must be at least 1 and offset at least 0")
    filters: list[sql.Composable] = []
    params: dict[str, Any] = {"project_id": project_id, "limit": limit, "offset": offset}
    if type is not None:
        filters.append(sql.SQL("AND type = %(type)s"))
        params["type"] = type
    if labels:
        filters.append(sql.SQL("AND labels @> %(labels)s::text[]"))
        params["labels"] = list(labels)
    if properties:
        filters.append(sql.SQL("AND properties @> %(properties)s"))
        params["properties"] = Jsonb(dict(properties))
    if actor_id is not None:
        filters.append(sql.SQL("AND actor_id = %(actor_id)s"))
        params["actor_id"] = actor_id
    if not include_deleted:
        filters.append(sql.SQL("AND deleted_at IS NULL"))
    statement = sql.SQL(LIST_HEADS).format(
        columns=select_list(GraphObject), filters=sql.SQL(" ").join(filters)
    )
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(statement, params)
        return cur.fetchall()


def _live_head(conn: Connection[Any], canonical_id: UUID) -> GraphObject:
    head = get_head(conn, canonical_id)
    if head is None:
        raise ObjectNotFound(f"no live object {canonical_id}")
    return head


def _current_embedding(head: GraphObject) -> Embedding | None:
    if head.embedding is None or head.embedding_model is None:
        return None
    return Embedding(head.embedding, head.embedding_model)


def _next_version(
    conn: Connection[Any],
    head: GraphObject,
    validation: PackValidation | None = None,
    *,
    deleted: bool = False,
    delete_reason: str | None = None,
    **changes: Any,
) -> GraphObject:
    values = {
        "canonical_id": head.canonical_id,
        "version": head.version + 1,
        "project_id": head.project_id,
        "actor_id": head.actor_id,
        "scope": head.scope,
        "type": head.type,
        "key": head.key,
        "status": head.status,
        "properties": head.properties,
        "labels": head.labels,
        "embedding": _current_embedding(head),
        "deleted": deleted,
        "delete_reason": delete_reason,
        "created_at": head.created_at,
    }
    values.update(changes)
    with savepoint(conn):
        return _insert_version(conn, values, validation, retire_id=head.id)


def _insert_version(
    conn: Connection[Any],
    values: dict[str, Any],
    validation: PackValidation | None,
    *,
    retire_id: UUID | None,
) -> GraphObject:
    """Insert a version, retiring the head `retire_id`, and confirm its validation, if any
    (inside the caller's savepoint: a refused version leaves the old head in place)."""
    embedding: Embedding | None = values.pop("embedding")
    params = {
        **values,
        "retire_id": retire_id,
        "properties": Jsonb(values["properties"]),
        "embedding": None if embedding is None else embedding.vector,
        "embedding_model": None if embedding is None else embedding.model,
    }
    statement = sql.SQL(INSERT_VERSION).format(
        columns=select_list(GraphObject), pack_stamp=sql.SQL(PACK_STAMP)
    )
    try:
        with conn.cursor(row_factory=kwargs_row(_version_and_stamp)) as cur:
            cur.execute(statement, params)
            row = cur.fetchone()
    except psycopg.errors.UniqueViolation as error:
        if error.diag.constraint_name == CANONICAL_VERSION_KEY and values["version"] == 1:
            raise InvalidInput(
                f"an object with id {values['canonical_id']} already exists"
            ) from error
        if error.diag.constraint_name == LIVE_KEY_INDEX:
            raise KeyConflict(
                f"a live {values['type']} with key {values['key']!r} already exists in project "
                f"{values['project_id']}"
            ) from error
        raise
    except psycopg.errors.DataException as error:
        if embedding is not None and "dimensions" in str(error):
            raise InvalidInput(
                f"embedding from model {embedding.model!r} does not fit the database: {error}"
            ) from error
        raise
    assert row is not None
    version, stamp = row
    if validation is not None:
        validation.confirm(conn, stamp)
    return version


def _version_and_stamp(
    *, pack_stamp: list[str] | None, **columns: Any
) -> tuple[GraphObject, frozenset[str]]:
    return GraphObject(**columns), stamp_of(pack_stamp)


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")


def _compose(statement: str) -> sql.Composed:
    return sql.SQL(statement).format(columns=select_list(GraphObject))
