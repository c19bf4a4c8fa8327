"""The hot filters use their indexes once the table holds enough rows for it to matter."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql

from emergent_memory import graph
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_database_name
from emergent_memory.memory import store
from emergent_memory.memory.service import NEARBY
from tests.embedders import BagOfWordsEmbedder

ROWS = 20_000
CATEGORIES = ["preference", "pattern", "correction", "fact", "instruction", "convention"]


@pytest.fixture(scope="module")
def populated(make_database: Callable[[], str]) -> Iterator[psycopg.Connection[Any]]:
    """A database of its own holding 20k memories (2k with embeddings) over 200 projects."""
    url = make_database()
    migrate.upgrade(url)
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


@pytest.fixture(scope="module")
def large_actors(make_database: Callable[[], str]) -> Iterator[psycopg.Connection[Any]]:
    """A database of its own holding 20k memories of 10 actors (2k each)."""
    url = make_database()
    migrate.upgrade(url)
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(
        """
        INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope,
                                      type, properties, labels)
        SELECT gen_random_uuid(), 1, %(project)s,
               ('00000000-0000-0000-0000-' || lpad((i %% 10)::text, 12, '0'))::uuid,
               'user', 'Memory',
               jsonb_build_object('content', 'memory number ' || i || ' of the ledger',
                                  'category', 'fact'),
               ARRAY['memory', 'fact', 'user']
        FROM generate_series(1, 20000) AS i
        """,
        {"project": uuid.UUID(int=1)},
    )
    conn.execute("VACUUM ANALYZE kb.graph_objects")
    yield conn
    conn.close()


def test_recall_finds_words_through_the_owner_keyed_index(
    large_actors: psycopg.Connection[Any],
) -> None:
    """kb.recall_memories_for's full-text lookups use the index on kb.memory_text_owner (the
    function's expression must be the index's): counted by the index's scan statistics, the
    one view into a function's plans."""
    conn = large_actors

    def scans() -> int:
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT idx_scan FROM pg_stat_user_indexes "
            "WHERE indexrelname = 'graph_objects_memory_owner_fts_idx'"
        ).fetchone()
        assert row is not None
        return int(row[0])

    before = scans()
    # 'ledger' is in all 2,000 memories of actor 7, '777' in one: a rare and a common word
    found = conn.execute(
        "SELECT content, lexical_rank FROM kb.recall_memories_for(%s, %s, 'ledger 777 rounding')",
        (uuid.UUID(int=7), uuid.UUID(int=1)),
    ).fetchall()
    assert found[0] == ("memory number 777 of the ledger", 1)
    assert scans() > before


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


@pytest.fixture
def as_application(
    populated: psycopg.Connection[Any], app_database_url: str
) -> Iterator[tuple[psycopg.Connection[Any], uuid.UUID]]:
    """A connection to the populated database as the application role, in a transaction
    acting for the actor of one of its memories (row-level security applies)."""
    row = populated.execute(
        "SELECT actor_id FROM kb.graph_objects WHERE properties ->> 'content' = 'memory number 5'"
    ).fetchone()
    assert row is not None
    name = populated.info.dbname
    with psycopg.connect(with_database_name(app_database_url, name)) as conn:
        graph.act_as(conn, row[0], uuid.UUID(int=5))
        yield conn, row[0]


def test_under_row_level_security_the_duplicate_check_uses_its_index(
    populated: psycopg.Connection[Any], app_database_url: str
) -> None:
    """An index on a non-leakproof expression would be unusable under the policies: the
    fingerprint is a stored column compared with text equality (leakproof). The actor has
    a few thousand memories: for an actor with one, an index of the actor's memories by
    creation time (the browsing list's) finds it as fast, and the planner may take either."""
    actor = uuid.uuid4()
    populated.execute(
        """
        INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope,
                                      type, properties, labels)
        SELECT gen_random_uuid(), 1, %(project)s, %(actor)s, 'user', 'Memory',
               jsonb_build_object('content', 'many memories number ' || i),
               ARRAY['memory', 'fact', 'user']
        FROM generate_series(1, 3000) AS i
        """,
        {"project": uuid.UUID(int=5), "actor": actor},
    )
    populated.execute("ANALYZE kb.graph_objects")
    queries = [
        sql.SQL(store.FIND_EXACT).format(
            state=sql.SQL(state), same_scope=sql.SQL(store.SAME_SCOPE["user"])
        )
        for state in (store.ACTIVE, store.LIVE)  # save's repeat: active or archived
    ]
    params = {
        "actor_id": actor,
        "project_id": uuid.UUID(int=5),
        "content": "Many  memories number 5",
        "exclude": None,
    }
    name = populated.info.dbname
    with psycopg.connect(with_database_name(app_database_url, name)) as conn:
        graph.act_as(conn, actor, uuid.UUID(int=5))
        for query in queries:
            for exclude in (None, uuid.uuid4()):  # a save; an update or restore of another
                params["exclude"] = exclude
                explained = plan(conn, query.as_string(conn), params)
                assert "graph_objects_content_fingerprint_idx" in explained
                assert "Seq Scan" not in explained


def test_under_row_level_security_the_nearest_neighbour_search_uses_an_index(
    as_application: tuple[psycopg.Connection[Any], uuid.UUID],
) -> None:
    conn, actor = as_application
    query = sql.SQL(store.FIND_NEAREST).format(
        active=sql.SQL(store.ACTIVE), same_scope=sql.SQL(store.SAME_SCOPE["user"])
    )
    params = {
        "actor_id": actor,
        "project_id": uuid.UUID(int=5),
        "model": "m",
        "embedding": "[" + ",".join(["0.2"] * 384) + "]",
        "exclude": None,
        "limit": NEARBY,  # as a save reads them
    }
    explained = plan(
        conn, query.as_string(conn).replace("%(embedding)s", "%(embedding)s::vector"), params
    )
    # the actor has one memory: any index of the actor's memories finds it (the browsing
    # list's, by creation time or by confidence, as well as the scope index)
    actor_indexes = (
        "graph_objects_actor_scope_idx",
        "graph_objects_memory_created_idx",
        "graph_objects_memory_confidence_idx",
    )
    assert "graph_objects_embedding_hnsw_idx" in explained or any(
        index in explained for index in actor_indexes
    )
    assert "Seq Scan" not in explained


def test_the_test_embedder_never_ties_distances_that_hnsw_would_break_against_a_newcomer() -> None:
    """pgvector's HNSW drops a newcomer from a full neighbour list when a kept neighbour is
    exactly as close to it: after 2*m texts that share the same few words with a new one, the
    new one had no incoming edge and no index scan found it (recall's vector branch missed an
    exact match in test_mcp after test_authority, a save in test_faults after many alike).
    The bag-of-words embedder therefore perturbs each bag a little: distances from a new text
    to texts alike but not identical differ, and identical bags still embed identically."""
    embedder = BagOfWordsEmbedder()
    cluster = [f"Deploys of the {name} service happen on Fridays" for name in _names(40)]
    new = np.array(embedder.embed_query("The staging database is db-2"))
    distances = {float(np.dot(new, np.array(v))) for v in embedder.embed_documents(cluster)}
    assert len(distances) == len(cluster)
    one, same = embedder.embed_documents(
        ["db-2 is the staging database", "The staging database is db-2"]
    )
    assert one == same  # the same bag of words
    assert embedder.embed_query("!!!") == [0.0] * embedder.dimensions  # no words, no direction


def _names(count: int) -> list[str]:
    """`count` different words: aaa, baa, caa, ..."""
    return ["".join(chr(ord("a") + n // 26**k % 26) for k in range(3)) for n in range(count)]
