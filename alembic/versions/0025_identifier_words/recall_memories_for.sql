-- kb.recall_memories_for as migration 0025 makes it: 0014's function (0014_finite_similarity/
-- recall_memories_for.sql, whose comments below still hold), the query's words for the
-- rare-word lookups including the parts of its paths, hosts and dotted names
-- (kb.identifier_words, migration 0025), as the full-text index holds a memory's: the query
-- app/src/logger.ts finds a memory naming logger.ts or src/logger.ts by those words.
--
-- Two branches find candidates, each inside its index scans and never after ranking:
-- full text (every word of the query, then each of its rare words, migration 0008) and
-- vectors (HNSW); they are fused by weighted reciprocal rank. Which memories either branch
-- may return is kb.memory_recallable (migration 0013: live heads of memories, not superseded,
-- not archived unless p_include_archived, not expired) and kb.visible_to (migration 0010), of
-- the requested category and scope. Row-level security applies on top for callers subject to it.
--
-- With p_as_of, what was believed true at that time: each memory is judged by the version that
-- was its head then (the latest version written by p_as_of, as_of_versions below) and answers
-- with that version's content; a memory deleted since (its current head deleted) never comes
-- back. The indexes hold live heads only, so these versions are matched exactly, not through
-- an index (each branch's second half); without p_as_of that half is skipped (a one-time
-- filter) and the branches plan as before.
--
-- The fused score is then multiplied by three factors (migration 0013):
--   score = fused * (1 - wc + wc * effective_confidence)
--                 * (1 - wr + wr * recency)
--                 * (1 + wi * importance)
-- effective_confidence: kb.memory_effective_confidence (stored confidence decayed since the
-- memory was last used, reinforced or changed; never for core memories, never below the floor);
-- recency: kb.memory_recency (0.5 ^ (days since last use or change / the category's half-life));
-- importance: low -1, normal 0, high +1, core +2 (kb.memory_importance_value).
--
-- 0025_identifier_words.py executes this file as it stands.
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
    p_min_similarity double precision DEFAULT 0.15,
    p_include_archived boolean DEFAULT false,
    p_as_of timestamptz DEFAULT NULL,
    p_recency_weight double precision DEFAULT 0.05,
    p_importance_weight double precision DEFAULT 0.0,
    p_decay_floor double precision DEFAULT 0.3,
    p_decay_grace_days double precision DEFAULT 30,
    p_decay_half_life_days double precision DEFAULT 180
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
    score double precision,
    effective_confidence double precision,
    recency double precision,
    importance_factor double precision
)
LANGUAGE sql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 200
-- plan every call with its own arguments: a generic plan cannot tell an actor with
-- 50 memories (exact scan of them) from one with 50,000 (HNSW), and measured 60 ms
-- instead of 3 ms for the latter; planning costs about a millisecond
SET plan_cache_mode = force_custom_plan
AS $$
    WITH query AS (
        SELECT x.every_word, x.excluded, x.words,
               -- the caller's own memories and global ones, as kb.memory_text_owner marks
               -- them: the full-text index then finds only memories of this actor
               ('''@' || p_actor_id::text || '''')::tsquery || '''@global'''::tsquery
                   AS owner,
               -- any of the words, to order memories that contain as much of the query
               websearch_to_tsquery(
                   'simple', array_to_string(
                       ARRAY(SELECT '"' || w || '"' FROM unnest(x.words) AS w), ' or ')
               ) AS any_word
        FROM (
            SELECT websearch_to_tsquery('english', p_query) AS every_word,
                   websearch_to_tsquery('english', n.excluded) AS excluded,
                   -- the query's words and the parts of its identifiers (migration 0025)
                   ARRAY(SELECT unnest(tsvector_to_array(
                             to_tsvector('english', p_query)
                             || kb.identifier_words(to_tsvector('english', p_query))))
                         EXCEPT
                         SELECT unnest(tsvector_to_array(to_tsvector('english', n.excluded))))
                       AS words
            -- -word and -"a phrase" (websearch syntax); null when nothing is excluded
            FROM (SELECT string_agg(m[1], ' or ') AS excluded
                  FROM regexp_matches(p_query, '(?:^|\s)-("[^"]*"|[^\s"]+)', 'g') AS m) n
        ) x
    ),
    words AS (
        SELECT w.word, t.tsq
        FROM query q, unnest(q.words) AS w(word), phraseto_tsquery('simple', w.word) AS t(tsq)
        WHERE numnode(t.tsq) > 0
    ),
    -- with p_as_of: the version of each memory that was its head then (the latest written
    -- by then), when it was recallable then (kb.memory_recallable as of p_as_of) and the
    -- caller may see it, of the category and scope asked for; only of memories whose current
    -- head is not deleted (a deletion is never undone by asking for the past)
    as_of_versions AS MATERIALIZED (
        SELECT v.id, v.actor_id, v.scope, v.fts, v.embedding, v.embedding_model
        FROM kb.graph_objects h
        CROSS JOIN LATERAL (
            SELECT o.id FROM kb.graph_objects o
            WHERE o.canonical_id = h.canonical_id AND o.updated_at <= p_as_of
            ORDER BY o.version DESC
            LIMIT 1
        ) t
        JOIN kb.graph_objects v ON v.id = t.id
        WHERE p_as_of IS NOT NULL
          AND h.type = 'Memory' AND h.is_head AND h.deleted_at IS NULL
          AND kb.visible_to(h, p_actor_id, p_project_id)
          AND kb.memory_recallable(v, p_include_archived, p_as_of)
          AND kb.visible_to(v, p_actor_id, p_project_id)
          AND (p_category IS NULL OR v.labels @> ARRAY[p_category])
          AND (p_scope IS NULL OR v.scope = p_scope)
    ),
    -- every word of the query (websearch syntax: "quoted phrases", -excluded, or)
    every_word AS (
        SELECT o.id, ts_rank_cd(o.fts, q.any_word) AS rank
        FROM kb.graph_objects o, query q
        -- (an empty query, all stop words, would be the owner word alone: all of them)
        WHERE p_as_of IS NULL
          AND numnode(q.every_word) > 0
          AND kb.memory_text_owner(o.actor_id, o.scope, o.fts) @@ (q.every_word && q.owner)
          -- an active memory the caller may see, of the category and scope asked for (the
          -- same in each branch)
          AND o.is_head AND kb.memory_recallable(o, p_include_archived, NULL)
          AND kb.visible_to(o, p_actor_id, p_project_id)
          AND (p_category IS NULL OR o.labels @> ARRAY[p_category])
          AND (p_scope IS NULL OR o.scope = p_scope)
        UNION ALL
        SELECT a.id, ts_rank_cd(a.fts, q.any_word)
        FROM as_of_versions a, query q
        WHERE numnode(q.every_word) > 0
          AND kb.memory_text_owner(a.actor_id, a.scope, a.fts) @@ (q.every_word && q.owner)
    ),
    -- up to p_candidates + 1 visible memories per word: enough to tell a rare word from
    -- a common one, and the work stays bounded however many memories there are. Skipped
    -- when the memories with every word fill the candidates: no other could get in.
    word_hits AS (
        SELECT w.word, h.id, h.rank, count(*) OVER (PARTITION BY w.word) AS found
        FROM words w, query q, LATERAL (
            (SELECT o.id, ts_rank_cd(o.fts, q.any_word) AS rank
             FROM kb.graph_objects o
             WHERE p_as_of IS NULL
               AND kb.memory_text_owner(o.actor_id, o.scope, o.fts) @@ (w.tsq && q.owner)
               AND (q.excluded IS NULL OR NOT o.fts @@ q.excluded)
               AND o.is_head AND kb.memory_recallable(o, p_include_archived, NULL)
               AND kb.visible_to(o, p_actor_id, p_project_id)
               AND (p_category IS NULL OR o.labels @> ARRAY[p_category])
               AND (p_scope IS NULL OR o.scope = p_scope)
             LIMIT p_candidates + 1)
            UNION ALL
            (SELECT a.id, ts_rank_cd(a.fts, q.any_word)
             FROM as_of_versions a
             WHERE kb.memory_text_owner(a.actor_id, a.scope, a.fts) @@ (w.tsq && q.owner)
               AND (q.excluded IS NULL OR NOT a.fts @@ q.excluded)
             LIMIT p_candidates + 1)
        ) h
        WHERE (SELECT count(*) FROM every_word) < p_candidates
    ),
    -- a word in more than p_candidates memories weighs nothing; one found nowhere the most
    word_weights AS (
        SELECT w.word,
               ln((p_candidates + 1)::double precision
                  / greatest(coalesce(max(h.found), 1), 1)) AS weight
        FROM words w LEFT JOIN word_hits h ON h.word = w.word
        GROUP BY w.word
    ),
    matches AS (
        SELECT h.id,
               max(h.rank) AS rank,
               sum(ww.weight) / nullif((SELECT sum(weight) FROM word_weights), 0)
                   AS coverage
        FROM word_hits h JOIN word_weights ww ON ww.word = h.word
        WHERE h.found <= p_candidates
        GROUP BY h.id
        UNION ALL
        SELECT id, rank, 1.0 FROM every_word
    ),
    -- ranked by coverage, then ts_rank_cd on any of the words (computed in the lookups,
    -- so the matches are not read again)
    lexical AS (
        SELECT m.id,
               max(m.coverage) AS coverage,
               max(m.rank) AS lexical_score,
               row_number() OVER (
                   ORDER BY max(m.coverage) DESC, max(m.rank) DESC, m.id
               ) AS lexical_rank
        FROM matches m
        GROUP BY m.id
        ORDER BY lexical_rank
        LIMIT p_candidates
    ),
    semantic AS (
        (SELECT o.id,
                kb.cosine_similarity(o.embedding, p_query_embedding) AS similarity,
                row_number() OVER (ORDER BY o.embedding <=> p_query_embedding) AS vector_rank
         FROM kb.graph_objects o
         WHERE p_as_of IS NULL
           AND p_query_embedding IS NOT NULL
           AND o.embedding_model = p_embedding_model
           AND o.is_head AND kb.memory_recallable(o, p_include_archived, NULL)
           AND kb.visible_to(o, p_actor_id, p_project_id)
           AND (p_category IS NULL OR o.labels @> ARRAY[p_category])
           AND (p_scope IS NULL OR o.scope = p_scope)
         ORDER BY o.embedding <=> p_query_embedding
         LIMIT p_candidates)
        UNION ALL
        (SELECT a.id,
                kb.cosine_similarity(a.embedding, p_query_embedding),
                row_number() OVER (ORDER BY a.embedding <=> p_query_embedding)
         FROM as_of_versions a
         WHERE p_query_embedding IS NOT NULL
           AND a.embedding_model = p_embedding_model
         ORDER BY a.embedding <=> p_query_embedding
         LIMIT p_candidates)
    ),
    fused AS (
        SELECT coalesce(l.id, s.id) AS id,
               l.lexical_rank::integer AS lexical_rank,
               l.lexical_score,
               s.vector_rank::integer AS vector_rank,
               s.similarity,
               coalesce(p_lexical_weight * l.coverage / (p_rrf_k + l.lexical_rank), 0)
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
    -- the factors of each fused candidate: its last use (the recall log) and last evidence
    -- (kb.memory_evidence), one probe of an index each
    factors AS (
        SELECT f.*, o.canonical_id, o.properties, o.scope, o.created_at, o.updated_at,
               kb.memory_effective_confidence(
                   coalesce((o.properties ->> 'confidence')::double precision, 0.7),
                   o.properties ->> 'importance',
                   greatest(lu.last_used, le.last_evidence, o.updated_at), now(),
                   p_decay_floor, p_decay_grace_days, p_decay_half_life_days
               ) AS effective_confidence,
               kb.memory_recency(o.properties ->> 'category',
                                 greatest(lu.last_used, o.updated_at), now()) AS recency,
               1 + p_importance_weight * kb.memory_importance_value(o.properties ->> 'importance')
                   AS importance_factor
        FROM fused f
        JOIN kb.graph_objects o ON o.id = f.id
        CROSS JOIN LATERAL (
            SELECT max(m.recalled_at) AS last_used
            FROM kb.memory_recalls m WHERE m.canonical_id = o.canonical_id
        ) lu
        CROSS JOIN LATERAL (
            SELECT max(e.created_at) AS last_evidence
            FROM kb.memory_evidence e WHERE e.canonical_id = o.canonical_id
        ) le
    ),
    ranked AS (
        SELECT x.*,
               x.fused * (1 - p_confidence_weight + p_confidence_weight * x.effective_confidence)
                       * (1 - p_recency_weight + p_recency_weight * x.recency)
                       * x.importance_factor AS score
        FROM factors x
        ORDER BY score DESC, x.canonical_id
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
           r.score,
           r.effective_confidence,
           r.recency,
           r.importance_factor
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
