-- kb.recall_memories_for as the downgrade of migration 0008 writes it back: the function of
-- 0004 as 0007 tuned it (hnsw.ef_search = 200), whose full-text branch finds only memories
-- with every word of the query. Its comment on the visibility filter is shorter than 0004's
-- (as released; the SQL is the same). 0008_recall_rare_words.py executes this file as it
-- stands.
--
-- The text between the two $$ is what PostgreSQL stores as the body, byte for byte;
-- tests/test_schema_definitions.py holds it to the released definition.
CREATE OR REPLACE FUNCTION kb.recall_memories_for(
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
SET hnsw.ef_search = 200
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
              -- visible to the actor (DESIGN.md 5)
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
              -- visible to the actor (DESIGN.md 5)
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
        $$;
