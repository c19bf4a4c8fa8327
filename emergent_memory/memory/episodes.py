"""Episode SQL: the caller's captured conversation windows, searched by words and by meaning.

Connection first, never commits; the service owns the transaction. An Episode (agent-memory
pack 1.1.0) is a window of a client session that automatic capture read. Only the caller's
own episodes are ever searched: its user-scope ones in every project and its project-scope
ones in this project (store.OWN, as for the memories capture offers the extractor: never a
global or ownerless object, nor another actor's), inside both branches' SQL.

- **Words.** kb.graph_objects.fts does not cover an episode's `summary` or `text` (its
  expression reads key, content, name, title and description), and no index covers them, so
  the words are looked for in a bounded set: the caller's EPISODE_SCAN newest episodes (of
  the session, when one is given). The query's words are stemmed as full text stems them
  (stop words dropped; the first MAX_WORDS); one pass of a regular expression over each
  episode's summary and text finds its words that start like one of them, and those are
  stemmed to check (so "making" matches make and "policies" policy, but "user" not use),
  case-insensitively. Computing a whole text's tsvector instead took about 3 ms per 30 KB
  episode here, 30 times as long. A word weighs ln((n + 1) / found) among the n episodes
  looked at, so a rare word counts most, as in the memory recall (migration 0008); an
  episode's coverage is the weight of the words it has over the weight of all of them.
- **Meaning.** Episodes embedded by their summary (store.EMBEDDED_TEXT) are compared with
  the query's vector through the HNSW index, among all of the caller's episodes.
- Both are fused by weighted reciprocal rank with the memory recall's settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection, sql
from psycopg.rows import class_row

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import store

EPISODE_SCAN = 200  # the newest episodes of the caller whose words are searched
MAX_WORDS = 12  # the query's words looked for
EXCERPT_CHARS = 300  # an excerpt's length
EXCERPT_BEFORE = 100  # characters of context shown before the matched word

# The caller's own live episodes (store.OWN: user scope everywhere, project scope in this
# project; never a global or ownerless object), optionally of one scope and of one session.
OWN_EPISODES = """
o.type = 'Episode' AND o.is_head AND o.deleted_at IS NULL AND {own}
AND (%(scope)s::text IS NULL OR o.scope = %(scope)s::text)
AND (%(session_id)s::text IS NULL
     OR o.properties @> jsonb_build_object('session_id', %(session_id)s::text))
"""

# One statement: both branches, their fusion, and each result's excerpt.
SEARCH = r"""
WITH words AS (
    -- the query's words as full text stems them, in their order, each with the prefix that
    -- the words stemming to it start with (the stem without a final e or i: "making" is
    -- 'make', "policy" 'polici'), every character but letters, digits and _ escaped
    SELECT w.lexeme,
           regexp_replace(
               CASE WHEN length(w.lexeme) > 3 AND right(w.lexeme, 1) IN ('e', 'i')
                    THEN left(w.lexeme, -1) ELSE w.lexeme END,
               '([^[:alnum:]_])', '\\\1', 'g') AS prefix
    FROM unnest(to_tsvector('english'::regconfig, %(query)s)) AS w
    ORDER BY w.positions[1], w.lexeme
    LIMIT %(max_words)s
),
recent AS (
    -- chosen by date first, so that only their texts are read
    SELECT e.canonical_id, e.created_at,
           coalesce(e.properties ->> 'summary', '') || E'\n'
               || coalesce(e.properties ->> 'text', '') AS body
    FROM (
        SELECT o.id FROM kb.graph_objects o
        WHERE {own_episodes}
        ORDER BY o.created_at DESC, o.canonical_id
        LIMIT %(scan)s
    ) newest
    JOIN kb.graph_objects e ON e.id = newest.id
),
hits AS (
    -- which of the query's words each episode has: one pass of a regular expression over its
    -- text finds the words that start like any of them, and those are stemmed to check
    -- ("user" starts like 'use' but is not it)
    SELECT r.canonical_id, s.lexeme, min(c.word) AS word
    FROM recent r
    CROSS JOIN (
        SELECT '\m((?:' || string_agg(prefix, '|') || ')[[:alnum:]_]*)' AS any_word FROM words
    ) p
    CROSS JOIN LATERAL (
        SELECT DISTINCT lower(x[1]) AS word FROM regexp_matches(r.body, p.any_word, 'gi') AS x
    ) c
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector('english'::regconfig, c.word)))
        AS s(lexeme)
    WHERE s.lexeme IN (SELECT lexeme FROM words)
    GROUP BY r.canonical_id, s.lexeme
),
weights AS (
    SELECT w.lexeme, ln((n.total + 1.0) / greatest(count(h.canonical_id), 1)) AS weight
    FROM words w
    CROSS JOIN (SELECT count(*) AS total FROM recent) n
    LEFT JOIN hits h ON h.lexeme = w.lexeme
    GROUP BY w.lexeme, n.total
),
lexical AS (
    SELECT h.canonical_id,
           (sum(wt.weight) / (SELECT sum(weight) FROM weights))::double precision AS coverage,
           (array_agg(h.word ORDER BY wt.weight DESC, wt.lexeme))[1] AS rarest
    FROM hits h JOIN weights wt ON wt.lexeme = h.lexeme
    GROUP BY h.canonical_id
),
lexical_ranked AS (
    SELECT l.canonical_id, l.coverage, l.rarest,
           row_number() OVER (ORDER BY l.coverage DESC, r.created_at DESC, l.canonical_id)
               AS lexical_rank
    FROM lexical l JOIN recent r ON r.canonical_id = l.canonical_id
    ORDER BY lexical_rank
    LIMIT %(candidates)s
),
nearest AS (
    SELECT o.canonical_id, kb.cosine_similarity(o.embedding, %(embedding)s::vector) AS similarity
    FROM kb.graph_objects o
    WHERE {own_episodes}
      AND %(embedding)s::vector IS NOT NULL AND o.embedding_model = %(model)s
    ORDER BY o.embedding <=> %(embedding)s::vector
    LIMIT %(candidates)s
),
vector_ranked AS (
    SELECT v.canonical_id, v.similarity,
           row_number() OVER (ORDER BY v.similarity DESC, v.canonical_id) AS vector_rank
    FROM nearest v
    WHERE v.similarity >= %(min_similarity)s
),
fused AS (
    SELECT coalesce(l.canonical_id, v.canonical_id) AS id, l.rarest,
           coalesce(%(lexical_weight)s * l.coverage / (%(rrf_k)s + l.lexical_rank), 0)
           + coalesce(%(vector_weight)s / (%(rrf_k)s + v.vector_rank), 0) AS score
    FROM lexical_ranked l FULL JOIN vector_ranked v ON v.canonical_id = l.canonical_id
    ORDER BY score DESC, id
    LIMIT %(limit)s
)
SELECT f.id,
       ep.properties ->> 'session_id' AS session_id,
       ep.properties ->> 'client' AS client,
       (ep.properties ->> 'first_turn')::integer AS first_turn,
       (ep.properties ->> 'last_turn')::integer AS last_turn,
       coalesce(ep.properties ->> 'captured_at',
                (to_jsonb(ep.created_at AT TIME ZONE 'UTC') #>> '{{}}') || '+00:00')
           AS captured_at,
       ep.properties ->> 'summary' AS summary,
       x.start AS excerpt_start,
       substring(t.body FROM x.start FOR %(excerpt_chars)s) AS excerpt,
       length(t.body) AS text_length,
       f.score
FROM fused f
JOIN kb.graph_objects ep ON ep.canonical_id = f.id AND ep.is_head
CROSS JOIN LATERAL (SELECT coalesce(ep.properties ->> 'text', '') AS body) t
CROSS JOIN LATERAL (
    -- from a little before the first place the text has the rarest word found (the text
    -- before it is the shortest match of "anything, then the word"), else from its beginning
    SELECT greatest(
               1,
               coalesce(length(substring(t.body FROM '(?i)^(.*?)\m' || regexp_replace(
                   f.rarest, '([^[:alnum:]_])', '\\\1', 'g') || '\M')) + 1, 1)
                   - %(excerpt_before)s
           ) AS start
) x
ORDER BY f.score DESC, f.id
"""


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """A found episode: what it is, its excerpt (`excerpt_start`: where in the text it
    starts, from 1; `text_length`: the whole text's), and its fused score."""

    id: UUID
    session_id: str
    client: str
    first_turn: int
    last_turn: int
    captured_at: str
    summary: str | None
    excerpt_start: int
    excerpt: str
    text_length: int
    score: float


def search(
    conn: Connection[Any],
    principal: Principal,
    *,
    query: str,
    embedding: Vector | None,
    model: str,
    scope: str | None,
    session_id: str | None,
    limit: int,
    candidates: int,
    rrf_k: int,
    lexical_weight: float,
    vector_weight: float,
    min_similarity: float,
) -> list[EpisodeRow]:
    """The caller's episodes that best match the query, best first (at most `limit`)."""
    if embedding is not None:
        conn.execute(store.ITERATIVE_SCAN)  # a selective filter still fills the candidates
    own_episodes = sql.SQL(OWN_EPISODES).format(own=sql.SQL(store.OWN))
    statement = sql.SQL(SEARCH).format(own_episodes=own_episodes)
    params = {
        "actor_id": principal.actor_id,
        "project_id": principal.project_id,
        "query": query,
        "embedding": embedding,
        "model": model,
        "scope": scope,
        "session_id": session_id,
        "limit": limit,
        "candidates": candidates,
        "scan": EPISODE_SCAN,
        "max_words": MAX_WORDS,
        "rrf_k": rrf_k,
        "lexical_weight": lexical_weight,
        "vector_weight": vector_weight,
        "min_similarity": min_similarity,
        "excerpt_chars": EXCERPT_CHARS,
        "excerpt_before": EXCERPT_BEFORE,
    }
    with conn.cursor(row_factory=class_row(EpisodeRow)) as cur:
        # planned with its values each time (as the memory lists): whether the caller has a few
        # episodes or thousands, and whether there is a vector, changes the best plan
        cur.execute(statement, params, prepare=False)
        return cur.fetchall()
