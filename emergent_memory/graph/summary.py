"""A summary of what the graph holds: published packs, projects, live objects and edges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import Connection

COUNTS = """
SELECT
    (SELECT count(*) FROM kb.graph_objects WHERE is_head AND deleted_at IS NULL),
    (SELECT count(*) FROM kb.graph_relationships WHERE is_head AND deleted_at IS NULL),
    (SELECT count(DISTINCT project_id) FROM kb.project_template_packs)
"""

PUBLISHED_PACKS = "SELECT name || ' ' || version FROM kb.template_packs ORDER BY name, version"


@dataclass(frozen=True, slots=True)
class GraphSummary:
    published_packs: list[str]
    projects_with_packs: int
    live_objects: int
    live_relationships: int


def summarize(conn: Connection[Any]) -> GraphSummary:
    row = conn.execute(COUNTS).fetchone()
    assert row is not None
    objects, relationships, projects = row
    packs = [str(pack) for (pack,) in conn.execute(PUBLISHED_PACKS)]
    return GraphSummary(
        published_packs=packs,
        projects_with_packs=projects,
        live_objects=objects,
        live_relationships=relationships,
    )
