"""Memory SQL: the hybrid recall function, recall log, exact-duplicate index and admin views.

Revision ID: 0004_memory_sql
Revises: 0003_seed_agent_memory_pack
Create Date: 2026-11-22

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004_memory_sql"
down_revision: str | None = "0003_seed_agent_memory_pack"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Exact duplicates: same text after trimming, collapsing whitespace and lower-casing.
    op.execute(
        r"""
        CREATE FUNCTION kb.memory_fingerprint(content text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN md5(lower(btrim(regexp_replace(content, '\s+', ' ', 'g'))))
        """
    )
    op.execute(
        """
        CREATE INDEX memories_fingerprint_idx
        ON kb.graph_objects (actor_id, kb.memory_fingerprint(properties ->> 'content'))
        WHERE type = 'Memory' AND is_head AND deleted_at IS NULL
        """
    )
    # Each recall appends rows here instead of updating the memory: concurrent recalls never
    # wait on each other's row locks, and recalling never writes a version.
    op.execute(
        """
        CREATE TABLE kb.memory_recalls (
            canonical_id uuid NOT NULL,
            actor_id uuid,
            project_id uuid NOT NULL,
            recalled_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        "CREATE INDEX memory_recalls_memory_idx ON kb.memory_recalls (canonical_id, recalled_at)"
    )
    op.execute(
        "COMMENT ON TABLE kb.memory_recalls IS "
        "'One row each time a memory was returned by a recall: use_count and last_used.'"
    )
    # Both branches filter by visibility, state, category and scope inside the index scans,
    # never after ranking.
    op.execute(
        """
        CREATE FUNCTION kb.recall_memories(
            p_actor_id uuid,
            p_project_id uuid,
            p_query text,
            p_query_embedding vector DEFAULT NULL,
            p_embedding_model text DEFAULT NULL,
            p_category text DEFAULT NULL,
            p_scope text DEFAULT NULL,
            p_limit integer DEFAULT 10,
            p_candidates integer DEFAULT 50,
            p_rrf_k integer DEFAULT 10,
            p_lexical_weight double precision DEFAULT 1.0,
            p_vector_weight double precision DEFAULT 1.5,
            p_confidence_weight double precision DEFAULT 0.2,
            p_min_similarity double precision DEFAULT 0.15
        ) RETURNS TABLE (
            id uuid,
            content text,
            category text,
            scope text,
            source text,
            confidence double precision,
            contexts text[],
            use_count bigint,
            last_used timestamptz,
            created_at timestamptz,
            updated_at timestamptz,
            lexical_rank integer,
            lexical_score real,
            vector_rank integer,
            similarity double precision,
            fused double precision,
            score double precision
        )
        LANGUAGE sql STABLE
        SET hnsw.iterative_scan = 'relaxed_order'
        SET hnsw.ef_search = 100
        -- plan every call with its own arguments: a generic plan cannot tell an actor with
        -- 50 memories (exact scan of them) from one with 50,000 (HNSW), and measured 60 ms
        -- instead of 3 ms for the latter; planning costs about a millisecond
        SET plan_cache_mode = force_custom_plan
        AS $$
        WITH lexical AS (
            SELECT o.id,
                   ts_rank_cd(o.fts, q.tsq) AS lexical_score,
                   row_number() OVER (ORDER BY ts_rank_cd(o.fts, q.tsq) DESC, o.id) AS lexical_rank
            FROM kb.graph_objects o,
                 -- every word of the query (websearch syntax: "quoted phrases", -excluded,
                 -- or): selective, so the branch stays cheap however many memories share a
                 -- common word; the vector branch covers the loose matches
                 websearch_to_tsquery('english', p_query) AS q(tsq)
            WHERE o.fts @@ q.tsq
              AND o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
              AND NOT (o.properties ? 'superseded_by')
              -- visible to the actor (DESIGN.md 5): own user memories everywhere, own project
              -- memories in this project, and global memories
              AND ((o.actor_id = p_actor_id
                    AND (o.scope = 'user'
                         OR (o.scope = 'project' AND o.project_id = p_project_id)))
                   OR o.scope = 'global')
              AND (p_category IS NULL OR o.labels @> ARRAY[p_category])
              AND (p_scope IS NULL OR o.scope = p_scope)
            ORDER BY lexical_score DESC, o.id
            LIMIT p_candidates
        ),
        semantic AS (
            SELECT o.id,
                   1 - (o.embedding <=> p_query_embedding) AS similarity,
                   row_number() OVER (ORDER BY o.embedding <=> p_query_embedding) AS vector_rank
            FROM kb.graph_objects o
            WHERE p_query_embedding IS NOT NULL
              AND o.embedding_model = p_embedding_model
              AND o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
              AND NOT (o.properties ? 'superseded_by')
              -- visible to the actor (DESIGN.md 5): own user memories everywhere, own project
              -- memories in this project, and global memories
              AND ((o.actor_id = p_actor_id
                    AND (o.scope = 'user'
                         OR (o.scope = 'project' AND o.project_id = p_project_id)))
                   OR o.scope = 'global')
              AND (p_category IS NULL OR o.labels @> ARRAY[p_category])
              AND (p_scope IS NULL OR o.scope = p_scope)
            ORDER BY o.embedding <=> p_query_embedding
            LIMIT p_candidates
        ),
        fused AS (
            SELECT coalesce(l.id, s.id) AS id,
                   l.lexical_rank::integer AS lexical_rank,
                   l.lexical_score,
                   s.vector_rank::integer AS vector_rank,
                   s.similarity,
                   coalesce(p_lexical_weight / (p_rrf_k + l.lexical_rank), 0)
                   + coalesce(p_vector_weight / (p_rrf_k + s.vector_rank), 0) AS fused
            FROM lexical l
            -- when even the closest memory is below p_min_similarity, the query is about
            -- nothing remembered and the vector branch answers nothing; otherwise its
            -- candidates count down to half that similarity (a hard cut at the floor itself
            -- drops weak true matches; no cut at all returns unrelated filler)
            FULL OUTER JOIN (
                SELECT * FROM semantic
                WHERE (SELECT max(similarity) FROM semantic) >= p_min_similarity
                  AND similarity >= p_min_similarity / 2
            ) s ON s.id = l.id
        ),
        ranked AS (
            SELECT f.*, o.canonical_id, o.properties, o.scope, o.created_at, o.updated_at,
                   f.fused * (1 - p_confidence_weight + p_confidence_weight
                              * coalesce((o.properties ->> 'confidence')::double precision, 0.7))
                       AS score
            FROM fused f JOIN kb.graph_objects o ON o.id = f.id
            ORDER BY score DESC, o.canonical_id
            LIMIT p_limit
        )
        SELECT r.canonical_id,
               r.properties ->> 'content',
               r.properties ->> 'category',
               r.scope,
               r.properties ->> 'source',
               (r.properties ->> 'confidence')::double precision,
               coalesce(ctx.names, '{}'),
               coalesce(u.use_count, 0),
               u.last_used,
               r.created_at,
               r.updated_at,
               r.lexical_rank,
               r.lexical_score,
               r.vector_rank,
               r.similarity,
               r.fused,
               r.score
        FROM ranked r
        LEFT JOIN LATERAL (
            SELECT array_agg(c.properties ->> 'name' ORDER BY c.properties ->> 'name') AS names
            FROM kb.graph_relationships e
            JOIN kb.graph_objects c
              ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
            WHERE e.src_id = r.canonical_id AND e.type = 'BELONGS_TO_CONTEXT'
              AND e.is_head AND e.deleted_at IS NULL
        ) ctx ON true
        LEFT JOIN LATERAL (
            SELECT count(*) AS use_count, max(m.recalled_at) AS last_used
            FROM kb.memory_recalls m WHERE m.canonical_id = r.canonical_id
        ) u ON true
        ORDER BY r.score DESC, r.canonical_id
        $$
        """
    )
    op.execute(
        "COMMENT ON FUNCTION kb.recall_memories IS "
        "'Hybrid recall for one actor in one project: full-text and vector candidates, each "
        "filtered by visibility, fused by weighted reciprocal rank and nudged by confidence. "
        "The vector branch answers nothing when its best match is below p_min_similarity, "
        "and drops candidates below half of it. "
        "Without a query embedding it "
        "is full-text only.'"
    )
    op.execute(
        """
        CREATE VIEW kb.memories AS
        SELECT o.canonical_id AS id,
               o.actor_id,
               o.project_id,
               o.properties ->> 'content' AS content,
               o.properties ->> 'category' AS category,
               o.scope,
               o.properties ->> 'source' AS source,
               (o.properties ->> 'confidence')::double precision AS confidence,
               coalesce(u.use_count, 0) AS use_count,
               u.last_used,
               coalesce(ctx.names, '{}') AS contexts,
               o.embedding_model,
               o.created_at,
               o.updated_at
        FROM kb.graph_objects o
        LEFT JOIN LATERAL (
            SELECT count(*) AS use_count, max(m.recalled_at) AS last_used
            FROM kb.memory_recalls m WHERE m.canonical_id = o.canonical_id
        ) u ON true
        LEFT JOIN LATERAL (
            SELECT array_agg(c.properties ->> 'name' ORDER BY c.properties ->> 'name') AS names
            FROM kb.graph_relationships e
            JOIN kb.graph_objects c
              ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
            WHERE e.src_id = o.canonical_id AND e.type = 'BELONGS_TO_CONTEXT'
              AND e.is_head AND e.deleted_at IS NULL
        ) ctx ON true
        WHERE o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
          AND NOT (o.properties ? 'superseded_by')
        """
    )
    op.execute(
        "COMMENT ON VIEW kb.memories IS "
        "'Active memories (live, not superseded), one row each, with usage and contexts.'"
    )
    op.execute(
        """
        CREATE VIEW kb.memory_supersessions AS
        SELECT e.src_id AS new_id,
               e.dst_id AS old_id,
               e.created_at AS superseded_at,
               new.actor_id,
               new.project_id,
               new.properties ->> 'content' AS new_content,
               old.properties ->> 'content' AS old_content
        FROM kb.graph_relationships e
        JOIN kb.graph_objects new ON new.canonical_id = e.src_id AND new.is_head
        JOIN kb.graph_objects old ON old.canonical_id = e.dst_id AND old.is_head
        WHERE e.type = 'SUPERSEDES' AND e.is_head AND e.deleted_at IS NULL
        """
    )
    op.execute(
        "COMMENT ON VIEW kb.memory_supersessions IS "
        "'Each time a saved memory replaced an older one (a reworded or corrected fact).'"
    )
    op.execute(
        """
        CREATE FUNCTION kb.memory_lineage(p_id uuid)
        RETURNS TABLE (depth integer, id uuid, content text, superseded_by uuid,
                       created_at timestamptz)
        LANGUAGE sql STABLE
        AS $$
        WITH RECURSIVE chain(depth, id) AS (
            SELECT 0, p_id
            UNION ALL
            SELECT chain.depth + 1, e.dst_id
            FROM chain
            JOIN kb.graph_relationships e
              ON e.src_id = chain.id AND e.type = 'SUPERSEDES'
             AND e.is_head AND e.deleted_at IS NULL
            WHERE chain.depth < 1000
        )
        SELECT chain.depth, o.canonical_id, o.properties ->> 'content',
               (o.properties ->> 'superseded_by')::uuid, o.created_at
        FROM chain JOIN kb.graph_objects o ON o.canonical_id = chain.id AND o.is_head
        ORDER BY chain.depth
        $$
        """
    )
    op.execute(
        "COMMENT ON FUNCTION kb.memory_lineage IS "
        "'A memory and, step by step, the older memories it superseded (depth 0 = the given one).'"
    )
    op.execute(
        """
        CREATE VIEW kb.memory_stats AS
        SELECT actor_id,
               project_id,
               count(*) FILTER (WHERE state = 'active') AS active,
               count(*) FILTER (WHERE state = 'superseded') AS superseded,
               count(*) FILTER (WHERE state = 'deleted') AS deleted,
               count(*) FILTER (WHERE state = 'active' AND category = 'preference') AS preferences,
               count(*) FILTER (WHERE state = 'active' AND category = 'pattern') AS patterns,
               count(*) FILTER (WHERE state = 'active' AND category = 'correction') AS corrections,
               count(*) FILTER (WHERE state = 'active' AND category = 'fact') AS facts,
               count(*) FILTER (WHERE state = 'active' AND category = 'instruction')
                   AS instructions,
               count(*) FILTER (WHERE state = 'active' AND category = 'convention') AS conventions
        FROM (
            SELECT actor_id, project_id, properties ->> 'category' AS category,
                   CASE WHEN deleted_at IS NOT NULL THEN 'deleted'
                        WHEN properties ? 'superseded_by' THEN 'superseded'
                        ELSE 'active' END AS state
            FROM kb.graph_objects
            WHERE type = 'Memory' AND is_head
        ) m
        GROUP BY actor_id, project_id
        """
    )
    op.execute(
        "COMMENT ON VIEW kb.memory_stats IS "
        "'Per actor and project (where the memory was saved): memories by state and, for "
        "active ones, by category.'"
    )


def downgrade() -> None:
    op.execute("DROP VIEW kb.memory_stats")
    op.execute("DROP FUNCTION kb.memory_lineage(uuid)")
    op.execute("DROP VIEW kb.memory_supersessions")
    op.execute("DROP VIEW kb.memories")
    op.execute("DROP FUNCTION kb.recall_memories")
    op.execute("DROP TABLE kb.memory_recalls")
    op.execute("DROP INDEX kb.memories_fingerprint_idx")
    op.execute("DROP FUNCTION kb.memory_fingerprint(text)")
