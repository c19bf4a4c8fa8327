"""Small helpers shared by tests."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg


def count_rows(conn: psycopg.Connection[Any], table: str, project_id: UUID) -> int:
    """Rows (every version) of a kb table that belong to a project."""
    query = {
        "graph_objects": "SELECT count(*) FROM kb.graph_objects WHERE project_id = %s",
        "graph_relationships": "SELECT count(*) FROM kb.graph_relationships WHERE project_id = %s",
    }[table]
    row = conn.execute(query, (project_id,)).fetchone()
    assert row is not None
    return int(row[0])


def memory(content: str = "The user prefers tabs", category: str = "preference") -> dict[str, Any]:
    return {"content": content, "category": category}
