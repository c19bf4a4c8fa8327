"""The embedding job queue (kb.graph_embedding_jobs): objects whose vector is still missing."""

from __future__ import annotations

from typing import Any

from psycopg import Connection

from emergent_memory.graph.models import GraphObject

ENQUEUE = """
INSERT INTO kb.graph_embedding_jobs (object_id, canonical_id, project_id, actor_id, scope)
VALUES (%(object_id)s, %(canonical_id)s, %(project_id)s, %(actor_id)s, %(scope)s)
ON CONFLICT (object_id) WHERE status IN ('pending', 'running') DO NOTHING
"""


def enqueue(conn: Connection[Any], obj: GraphObject) -> None:
    """Queue the object's embedding, in the caller's transaction (it commits with the write)."""
    conn.execute(
        ENQUEUE,
        {
            "object_id": obj.id,
            "canonical_id": obj.canonical_id,
            "project_id": obj.project_id,
            # whom a worker acts for when it reads and updates the object (row-level security)
            "actor_id": obj.actor_id,
            "scope": obj.scope,
        },
    )
