"""The hot filters use their indexes once the table holds enough rows for it to matter."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg import sql

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
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


def _nearest_plan(
    conn: psycopg.Connection[Any], actor: uuid.UUID, exact_near: int, *, analyze: bool = False
) -> dict[str, Any]:
    """The plan of the save path's nearest-memory search (store.FIND_NEAREST) for `actor`'s
    user memories, with `exact_near` as the cap of the exact read."""
    query = store.nearest_statement("user").as_string(conn)
    params = {
        "actor_id": actor,
        "project_id": uuid.UUID(int=5),
        "model": "m",
        "embedding": "[" + ",".join(["0.2"] * 384) + "]",
        "exclude": None,
        "limit": NEARBY,  # as a save reads them
        "exact_near": exact_near,
    }
    explain = "EXPLAIN (ANALYZE, FORMAT JSON) " if analyze else "EXPLAIN (FORMAT JSON) "
    conn.execute(store.ITERATIVE_SCAN)
    row = conn.execute(
        explain + query.replace("%(embedding)s", "%(embedding)s::vector"), params
    ).fetchone()
    assert row is not None
    return dict(row[0][0]["Plan"])


def _scans(node: dict[str, Any]) -> list[dict[str, Any]]:
    """Every scan of a table in a plan's own rows (not in its InitPlans)."""
    found = [node] if "Relation Name" in node else []
    for child in node.get("Plans", []):
        if child.get("Parent Relationship") != "InitPlan":
            found.extend(_scans(child))
    return found


def _branches_run(plan: dict[str, Any]) -> list[bool]:
    """For each branch of FIND_NEAREST's UNION ALL (exact, then the walk): whether it read
    a row of the table."""
    nodes = [plan]
    while nodes:
        node = nodes.pop()
        if node.get("Node Type") == "Append":
            return [
                any(scan.get("Actual Loops", 0) > 0 for scan in _scans(branch))
                for branch in node["Plans"]
            ]
        nodes.extend(node.get("Plans", []))
    raise AssertionError("no UNION ALL in the plan")


def test_under_row_level_security_the_nearest_neighbour_search_uses_an_index(
    as_application: tuple[psycopg.Connection[Any], uuid.UUID],
) -> None:
    conn, actor = as_application
    explained = json.dumps(_nearest_plan(conn, actor, store.EXACT_NEAR))
    # the actor has one memory: any index of the actor's memories finds it (the browsing
    # list's, by creation time or by confidence, as well as the scope index)
    actor_indexes = (
        "graph_objects_actor_scope_idx",
        "graph_objects_memory_created_idx",
        "graph_objects_memory_confidence_idx",
    )
    assert any(index in explained for index in actor_indexes)
    assert "Seq Scan" not in explained


def test_a_scope_within_the_cap_is_read_exactly_and_a_larger_one_by_the_hnsw_walk(
    populated: psycopg.Connection[Any], app_database_url: str
) -> None:
    """Only one of FIND_NEAREST's two branches reads rows: the exact one while the scope holds
    at most the cap's memories (the HNSW index is never walked), the walk's above it (with
    30 memories the planner may read the walk's branch by the actor's B-tree too: which
    index a branch uses is the planner's choice, which branch runs is the statement's)."""
    actor = uuid.uuid4()
    populated.execute(
        """
        INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope,
                                      type, properties, labels, embedding, embedding_model)
        SELECT gen_random_uuid(), 1, %(project)s, %(actor)s, 'user', 'Memory',
               jsonb_build_object('content', 'near memory ' || i, 'category', 'fact'),
               ARRAY['memory', 'fact', 'user'],
               array_fill((0.01 + i / 100.0)::real, ARRAY[384])::vector, 'm'
        FROM generate_series(1, 30) AS i
        """,
        {"actor": actor, "project": uuid.UUID(int=5)},
    )
    name = populated.info.dbname
    with psycopg.connect(with_database_name(app_database_url, name)) as conn:
        graph.act_as(conn, actor, uuid.UUID(int=5))
        # the actor has 30 memories
        for cap, exact in ((store.EXACT_NEAR, True), (30, True), (29, False), (1, False)):
            plan = _nearest_plan(conn, actor, cap, analyze=True)
            assert _branches_run(plan) == [exact, not exact], cap
            if exact:
                assert "graph_objects_embedding_hnsw_idx" not in json.dumps(
                    [scan for scan in _scans(plan) if scan.get("Actual Loops", 0) > 0]
                )
            assert "Seq Scan" not in json.dumps(plan)
        conn.rollback()


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


def test_the_save_paths_nearest_memories_are_the_exact_nearest(
    populated: psycopg.Connection[Any], app_database_url: str
) -> None:
    """store.find_near gives the memories a full comparison ranks first, in that order, for an
    actor whose 400 memories are a small part of a table with 2,400 embedded ones. (The HNSW
    walk, forced on this table with sorts turned off, returned none of the actor's memories:
    its 2,000 other vectors point one way, and the walk stops among them.)"""
    actor = uuid.uuid4()
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(400, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with populated.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope,
                                          type, properties, labels, embedding, embedding_model)
            VALUES (gen_random_uuid(), 1, %(project)s, %(actor)s, 'user', 'Memory',
                    jsonb_build_object('content', %(content)s::text, 'category', 'fact'),
                    ARRAY['memory', 'fact', 'user'], %(embedding)s::vector, 'm')
            """,
            [
                {
                    "project": uuid.UUID(int=5),
                    "actor": actor,
                    "content": f"vector {i}",
                    "embedding": "[" + ",".join(f"{x:.6f}" for x in vector) + "]",
                }
                for i, vector in enumerate(vectors)
            ],
        )
    stored = np.round(vectors, 6)
    principal = Principal(actor_id=actor, project_id=uuid.UUID(int=5))
    name = populated.info.dbname
    with psycopg.connect(with_database_name(app_database_url, name)) as conn:
        register_vector(conn)
        graph.act_as(conn, actor, uuid.UUID(int=5))
        for query in rng.normal(size=(40, 384)).astype(np.float32):
            query /= np.linalg.norm(query)
            expected = [f"vector {i}" for i in np.argsort(-(stored @ query))[:NEARBY]]
            found = store.find_near(conn, principal, "user", Vector(query), "m", limit=NEARBY)
            assert [near.content for near in found] == expected
            assert all(a.similarity >= b.similarity for a, b in itertools.pairwise(found))
        conn.rollback()
