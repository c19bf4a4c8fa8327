"""Vectors of graph objects: derived data, stored in place on an object's live head version.

A vector is not a new version: it is computed from the text of one property of the head
(which property is the caller's knowledge, not the graph's) and set beside it, with the name
of the model that produced it. The embedding worker and re-embedding both write through
`set_embedding`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection

from emergent_memory.graph.objects import lock_object

# Only the live head, and only while the property still holds the text that was embedded.
# Vector and model change together, so a query never compares vectors of two models.
SET_EMBEDDING = """
UPDATE kb.graph_objects SET embedding = %(embedding)s, embedding_model = %(model)s
WHERE canonical_id = %(canonical_id)s AND is_head AND deleted_at IS NULL
  AND properties ->> %(text_property)s = %(expected_text)s
"""


def set_embedding(
    conn: Connection[Any],
    canonical_id: UUID,
    expected_text: str,
    vector: Vector | Sequence[float],
    model: str,
    *,
    text_property: str,
) -> bool:
    """Store `model`'s vector of `expected_text` on the object's live head, in place, if the
    head's `text_property` still holds that text; returns whether it did.

    Takes the object's version lock (held until the caller's transaction ends), so the head
    cannot change between this write and commit. False when the object is deleted, its text
    changed since it was read, or the head is not writable by the connection's role (row-level
    security); the caller tells these apart by reading the head, which the lock keeps as is.
    """
    lock_object(conn, canonical_id)
    cursor = conn.execute(
        SET_EMBEDDING,
        {
            "canonical_id": canonical_id,
            "text_property": text_property,
            "expected_text": expected_text,
            "embedding": vector if isinstance(vector, Vector) else Vector(list(vector)),
            "model": model,
        },
    )
    return cursor.rowcount == 1
