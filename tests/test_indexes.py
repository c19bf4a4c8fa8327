"""The hot filters use their indexes once the table holds enough rows for it to matter."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from emergent_memory import migrations

ROWS = 20_000
CATEGORIES = ["preference", "pattern", "correction", "fact", "instruction", "convention"]


@pytest.fixture(scope="module")
def populated(make_database: Callable[[], str]) -> Iterator[psycopg.Connection[Any]]:
    """A database of its own holding 20k memories (2k with embeddings) over 200 projects."""
    url = make_database()
    migrations.upgrade(url)
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(
        """
        INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope,
                                      type, properties, labels)
        SELECT gen_random_uuid(), 1,
               ('00000000-0000-0000-0000-' || lpad((i %% 200)::text, 12, '0'))::uuid,
               gen_random_uuid(), 'user', 'Memory',
               jsonb_build_object('content', 'memory number ' || i,
                                  'category', (%(categories)s::text[])[1 + i %% 6],
                                  'topic', 'topic-' || i),
               ARRAY['memory', (%(categories)s::text[])[1 + i %% 6], 'user', 'tag-' || i]
        FROM generate_series(1, %(rows)s) AS i
        """,
        {"categories": CATEGORIES, "rows": ROWS},
    )
    # HNSW inserts cost about a millisecond each: embed one row in ten
    conn.execute(
        "UPDATE kb.graph_objects SET embedding = array_fill((random() + 0.01)::real, "
        "ARRAY[384])::vector, embedding_model = 'm' WHERE properties->>'topic' LIKE '%0'"
    )
    conn.execute("VACUUM ANALYZE kb.graph_objects")
    yield conn
    conn.close()


def plan(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> str:
    rows = conn.execute("EXPLAIN (FORMAT JSON) " + query, params).fetchone()
    assert rows is not None
    return json.dumps(rows[0])


def test_label_filter_uses_the_gin_index(populated: psycopg.Connection[Any]) -> None:
    explained = plan(
        populated,
        "SELECT id FROM kb.graph_objects WHERE labels @> %(labels)s::text[]",
        {"labels": ["tag-1234"]},
    )
    assert "graph_objects_labels_idx" in explained
    assert "Seq Scan" not in explained


def test_property_containment_uses_the_jsonb_path_ops_index(
    populated: psycopg.Connection[Any],
) -> None:
    explained = plan(
        populated,
        "SELECT id FROM kb.graph_objects WHERE properties @> %(filter)s::jsonb",
        {"filter": json.dumps({"topic": "topic-4321"})},
    )
    assert "graph_objects_properties_idx" in explained
    assert "Seq Scan" not in explained


def test_full_text_uses_the_gin_index(populated: psycopg.Connection[Any]) -> None:
    explained = plan(
        populated,
        "SELECT id FROM kb.graph_objects WHERE fts @@ websearch_to_tsquery('english', %(q)s)",
        {"q": "number 777"},
    )
    assert "graph_objects_fts_idx" in explained
    assert "Seq Scan" not in explained


def test_project_and_type_use_the_btree_index(populated: psycopg.Connection[Any]) -> None:
    explained = plan(
        populated,
        "SELECT id FROM kb.graph_objects WHERE project_id = %(project)s AND type = 'Memory'",
        {"project": uuid.UUID(int=17)},
    )
    assert "graph_objects_project_type_idx" in explained
    assert "Seq Scan" not in explained


def test_nearest_neighbours_of_live_heads_use_hnsw(populated: psycopg.Connection[Any]) -> None:
    explained = plan(
        populated,
        "SELECT id FROM kb.graph_objects WHERE is_head AND deleted_at IS NULL "
        "ORDER BY embedding <=> %(q)s::vector LIMIT 10",
        {"q": "[" + ",".join(["0.2"] * 384) + "]"},
    )
    assert "graph_objects_embedding_hnsw_idx" in explained
