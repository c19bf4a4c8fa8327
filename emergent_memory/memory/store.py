"""Memory SQL on the graph tables: visibility, duplicates, contexts, recall and usage.

Connection first, never commits; the service owns the transaction. Which rows an actor may
see (DESIGN.md 5) is always part of the SQL, never a filter applied afterwards.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection, sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.compatibility import LACKING_VECTOR
from emergent_memory.errors import InvalidInput
from emergent_memory.graph.models import GraphObject, select_list

MEMORY = "Memory"
MEMORY_TEXT = "content"  # the property of a memory that is embedded and searched
CONTEXT = "MemoryContext"
BELONGS_TO_CONTEXT = "BELONGS_TO_CONTEXT"
SUPERSEDES = "SUPERSEDES"
RELEVANT_TO = "RELEVANT_TO"
CONFLICTS_WITH = "CONFLICTS_WITH"
# A conversation window automatic capture read, and the edge from each memory it produced or
# reinforced to it (pack 1.1.0).
EPISODE = "Episode"
DERIVED_FROM = "DERIVED_FROM"
EPISODE_TEXT = "summary"  # the property of an episode that is embedded (its text is not)
# What gets a vector, for the embedding worker, re-embedding and the start-up check (given to
# them by the composition root): per object type, the property that holds its text. An
# episode is embedded by its summary, a sentence or two (the model reads 256 tokens at most,
# far less than a window's text); one without a summary has no vector and is found by words.
EMBEDDED_TEXT = {MEMORY: MEMORY_TEXT, EPISODE: EPISODE_TEXT}


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A memory with its usage, contexts, provenance and lifecycle: its importance, validity
    and rationale as stored (None when absent), when it was last active (used, reinforced or
    changed: what decay counts from) and the caller's evidence for it (how many pieces, the
    latest as EVIDENCE's JSON)."""

    id: UUID
    content: str
    category: str
    scope: str
    source: str | None
    confidence: float | None
    use_count: int
    last_used: datetime | None
    contexts: list[str]
    created_at: datetime
    updated_at: datetime
    derived_from: dict[str, Any] | None  # PROVENANCE's JSON
    conflicts_with: list[dict[str, Any]] | None  # CONFLICTS' JSON (active ones, of an active one)
    importance: str | None
    valid_from: str | None
    valid_until: str | None
    rationale: str | None
    last_active: datetime | None
    evidence_count: int
    last_evidence: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class RecallRow:
    """A row of kb.recall_memories()."""

    id: UUID
    content: str
    category: str
    scope: str
    source: str | None
    confidence: float | None
    contexts: list[str]
    use_count: int
    last_used: datetime | None
    created_at: datetime
    updated_at: datetime
    lexical_rank: int | None
    lexical_score: float | None
    vector_rank: int | None
    similarity: float | None
    fused: float
    score: float
    effective_confidence: float
    recency: float
    importance_factor: float
    derived_from: dict[str, Any] | None  # PROVENANCE's JSON
    conflicts_with: list[dict[str, Any]] | None  # CONFLICTS' JSON (active ones, of an active one)
    importance: str | None
    valid_from: str | None
    valid_until: str | None
    rationale: str | None
    last_active: datetime | None
    evidence_count: int
    last_evidence: dict[str, Any] | None
    archived_at: datetime | None  # only include_archived finds archived memories


# Which memories the principal sees, and which are active: the rule lives in SQL, in
# kb.visible_to and kb.is_active_memory (migration 0010). PostgreSQL inlines both, so a query
# filtering with them uses the indexes it would with the expressions written out.
# visible_to and is_active below are the rule's Python mirror; tests/test_visibility_rule.py
# holds these filters and the mirror equal to the SQL functions.
VISIBLE = "kb.visible_to(o, %(actor_id)s, %(project_id)s)"
ACTIVE = "kb.is_active_memory(o)"
# A live memory that nothing superseded: active, or archived (migration 0013). ARCHIVED is the
# latter alone.
LIVE = (
    "o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL "
    "AND NOT (o.properties ? 'superseded_by')"
)
ARCHIVED = LIVE + " AND o.properties ? 'archived_at'"

# VISIBLE for one scope (the duplicate checks look in the new memory's scope only), spelled
# out so that each sits on an index.
SAME_SCOPE = {
    "user": "o.actor_id = %(actor_id)s AND o.scope = 'user'",
    "project": "o.actor_id = %(actor_id)s AND o.scope = 'project' "
    "AND o.project_id = %(project_id)s",
    "global": "o.scope = 'global'",
}

# What a principal may change: its own user and project memories (VISIBLE but for global
# ones, spelled out so that it sits on the actor's index), and global ones as admin.
OWN = (
    "(o.actor_id = %(actor_id)s AND (o.scope = 'user' "
    "OR (o.scope = 'project' AND o.project_id = %(project_id)s)))"
)
WRITABLE_BY_ADMIN = VISIBLE

# `exclude`: a memory that does not count (the one being updated or restored). With {state}
# LIVE (a save's repeat), an active memory comes before an archived one.
FIND_EXACT = """
SELECT o.canonical_id, o.properties ? 'archived_at' AS archived FROM kb.graph_objects o
WHERE {state} AND {same_scope}
  AND o.content_fingerprint = kb.memory_fingerprint(%(content)s)
  AND o.canonical_id IS DISTINCT FROM %(exclude)s::uuid
ORDER BY o.properties ? 'archived_at', o.created_at
LIMIT 1
"""

# The save path's nearest memories of one scope: read exactly (no index can serve the exact
# order, so the scope's B-tree reads the rows and every distance is computed; ties go to the
# older memory) while the scope holds at most %(exact_near)s memories, by the HNSW walk above
# that. The count stops at one past the cap, and the branch not taken never runs (its filter is
# decided once, before either reads a row). One statement, as the save's round trips count.
FIND_NEAREST = """
WITH scope_size AS (
    SELECT count(*) AS n FROM (
        SELECT 1 FROM kb.graph_objects o
        WHERE {active} AND {same_scope} AND o.embedding_model = %(model)s
        LIMIT %(exact_near)s + 1
    ) AS counted
)
SELECT * FROM (
    (SELECT {columns} FROM kb.graph_objects o
     WHERE {active} AND {same_scope} AND o.embedding_model = %(model)s
       AND o.canonical_id IS DISTINCT FROM %(exclude)s::uuid
       AND (SELECT n FROM scope_size) <= %(exact_near)s
     ORDER BY (o.embedding <=> %(embedding)s) + 0, o.created_at, o.canonical_id
     LIMIT %(limit)s)
    UNION ALL
    (SELECT {columns} FROM kb.graph_objects o
     WHERE {active} AND {same_scope} AND o.embedding_model = %(model)s
       AND o.canonical_id IS DISTINCT FROM %(exclude)s::uuid
       AND (SELECT n FROM scope_size) > %(exact_near)s
     ORDER BY o.embedding <=> %(embedding)s
     LIMIT %(limit)s)
) AS nearest
ORDER BY similarity DESC, created_at, canonical_id
"""
NEAREST_COLUMNS = """o.canonical_id, kb.cosine_similarity(o.embedding, %(embedding)s) AS similarity,
       o.properties ->> 'content' AS content, o.properties ->> 'category' AS category,
       o.created_at"""

# Let the HNSW scan keep going until enough rows pass the filters (pgvector 0.8).
ITERATIVE_SCAN = "SET LOCAL hnsw.iterative_scan = 'relaxed_order'"

# How many memories of a scope the save path reads exactly (FIND_NEAREST). An HNSW walk is
# approximate: it may miss the owner's nearest memory, and its graph depends on the order and
# timing of inserts, so the same saves could be judged differently from one store to the next
# (benchmarks/README.md, section 12). At 1,000,000 memories over 100 actors an exact scan of
# one actor's 10,000 was faster than the walk (section 1).
EXACT_NEAR = 20_000


def nearest_statement(scope: str) -> sql.Composed:
    """FIND_NEAREST for one scope ("user", "project" or "global")."""
    return sql.SQL(FIND_NEAREST).format(
        active=sql.SQL(ACTIVE),
        same_scope=sql.SQL(SAME_SCOPE[scope]),
        columns=sql.SQL(NEAREST_COLUMNS),
    )


FIND_CONTEXT = """
SELECT canonical_id FROM kb.graph_objects
WHERE type = 'MemoryContext' AND actor_id = %(actor_id)s AND is_head AND deleted_at IS NULL
  AND lower(properties ->> 'name') = lower(%(name)s)
ORDER BY created_at
LIMIT 1
"""

CONTEXTS_OF = """
SELECT e.dst_id FROM kb.graph_relationships e
WHERE e.src_id = %(id)s AND e.type = 'BELONGS_TO_CONTEXT' AND e.is_head AND e.deleted_at IS NULL
"""

# Where a memory came from, as JSON: the conversation window (Episode) it was derived from by
# automatic capture (the earliest, when capture met it again later), if the caller sees that
# episode here (its own: user scope, or project scope in this project, as OWN; never another
# actor's, nor a global or ownerless one); NULL for a memory saved by a tool. A lateral join
# on the memory's id ({memory_id}): one probe of the edges' source index per row, inside the
# statement that reads the rows, so provenance costs no round trip. The principal is the
# transaction's (kb.current_actor_id, migration 0006): the rule is spelled out rather than
# kb.visible_to (0010), so that the recall statement also runs at the revisions the
# benchmarks' baselines downgrade to.
PROVENANCE = """
LEFT JOIN LATERAL (
    SELECT jsonb_build_object(
               'episode_id', ep.canonical_id,
               'session_id', ep.properties ->> 'session_id',
               'client', ep.properties ->> 'client',
               'turns', jsonb_build_object('first', ep.properties -> 'first_turn',
                                           'last', ep.properties -> 'last_turn'),
               'captured_at', coalesce(
                   ep.properties ->> 'captured_at',
                   (to_jsonb(ep.created_at AT TIME ZONE 'UTC') #>> '{{}}') || '+00:00')
           ) AS derived_from
    FROM kb.graph_relationships e
    JOIN kb.graph_objects ep
      ON ep.canonical_id = e.dst_id AND ep.is_head AND ep.deleted_at IS NULL
    WHERE e.src_id = {memory_id} AND e.type = 'DERIVED_FROM' AND e.is_head
      AND e.deleted_at IS NULL AND ep.type = 'Episode'
      AND ep.actor_id = (SELECT kb.current_actor_id())
      AND (ep.scope = 'user'
           OR (ep.scope = 'project' AND ep.project_id = (SELECT kb.current_project_id())))
    ORDER BY ep.created_at, ep.canonical_id
    LIMIT 1
) provenance ON true
"""

# The active memories a memory conflicts with (CONFLICTS_WITH, either way; migration 0016), as
# JSON: each one's id, source and creation time, for ranking and marking (row-level security
# keeps it to what the caller sees). None for a memory that is itself superseded or deleted
# (`memory_active` false): its conflict is settled (the link stays, for undo and its
# relationships). A lateral join on the memory's id, like PROVENANCE.
CONFLICTS = """
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object(
               'id', other.canonical_id, 'source', other.properties ->> 'source',
               'created_at', (to_jsonb(other.created_at AT TIME ZONE 'UTC') #>> '{{}}') || '+00:00')
           ORDER BY other.created_at, other.canonical_id) AS conflicts_with
    FROM kb.graph_relationships e
    JOIN kb.graph_objects other
      ON other.canonical_id = CASE WHEN e.src_id = {memory_id} THEN e.dst_id ELSE e.src_id END
     AND other.is_head
    WHERE (e.src_id = {memory_id} OR e.dst_id = {memory_id}) AND e.type = 'CONFLICTS_WITH'
      AND e.is_head AND e.deleted_at IS NULL AND kb.is_active_memory(other) AND {memory_active}
) conflicts ON true
"""

# How many pieces of evidence a memory has (kb.memory_evidence, migration 0013), when the
# newest was recorded and what it was; `{memory_id}` is the column of the statement's row.
EVIDENCE = """
LEFT JOIN LATERAL (
    SELECT count(*) AS evidence_count, max(ev.created_at) AS last_at,
           (array_agg(jsonb_build_object(
                'at', (to_jsonb(ev.created_at AT TIME ZONE 'UTC') #>> '{{}}') || '+00:00',
                'evidence', ev.evidence, 'origin', ev.origin, 'session_id', ev.session_id)
            ORDER BY ev.created_at DESC, ev.id DESC))[1] AS last_evidence
    FROM kb.memory_evidence ev WHERE ev.canonical_id = {memory_id}
) ev ON true
"""

# How often the principal recalled each memory (kb.memory_use_counts: the recall log counted).
USES = """
LEFT JOIN kb.memory_use_counts u
  ON u.actor_id = %(actor_id)s AND u.canonical_id = o.canonical_id
"""

# Which of the memories `ids` are the outranked side of a conflict: an active memory they
# conflict with (CONFLICTS_WITH, either way) has a stronger source, or the same and is newer
# (memory/authority.py's rank_key). Checked for the few candidates of a session's start, not
# in its ordering over every memory of the actor.
OUTRANKED_AMONG = """
SELECT o.canonical_id FROM kb.graph_objects o
WHERE o.canonical_id = ANY(%(ids)s) AND o.is_head AND EXISTS (
    SELECT 1 FROM kb.graph_relationships e
    JOIN kb.graph_objects w
      ON w.canonical_id = CASE WHEN e.src_id = o.canonical_id THEN e.dst_id ELSE e.src_id END
     AND w.is_head
    WHERE (e.src_id = o.canonical_id OR e.dst_id = o.canonical_id)
      AND e.type = 'CONFLICTS_WITH' AND e.is_head AND e.deleted_at IS NULL
      AND kb.is_active_memory(w)
      AND (array_position(ARRAY['inferred', 'corrected', 'explicit'],
                          coalesce(w.properties ->> 'source', 'inferred')), w.created_at)
        > (array_position(ARRAY['inferred', 'corrected', 'explicit'],
                          coalesce(o.properties ->> 'source', 'inferred')), o.created_at)
)
"""

# A context's priority when none was set (0 to 100): its memories neither before nor after
# those of no context at a session's start
DEFAULT_CONTEXT_PRIORITY = 50

# The active memories the principal sees that have not expired, best first for a session's
# start (injection), each category getting its fair share: core memories first, then the
# others in turns, each turn taking the next best memory of every category in the order of
# %(order)s (a category with none left is passed over). Within a category (and among core
# memories) the best is the most important, then in the context of highest priority (the
# highest of its contexts'; DEFAULT_CONTEXT_PRIORITY without one), then confident, used and
# recent. So a user with many corrections still sees their preferences and facts: the budget
# fills by turns.
START_CANDIDATES = """
SELECT c.id, c.content, c.category
FROM (
    SELECT o.canonical_id AS id, o.properties ->> 'content' AS content,
           o.properties ->> 'category' AS category,
           coalesce(o.properties ->> 'importance' = 'core', false) AS core,
           row_number() OVER (
               PARTITION BY coalesce(o.properties ->> 'importance' = 'core', false),
                            o.properties ->> 'category'
               ORDER BY kb.memory_importance_value(o.properties ->> 'importance') DESC,
                        coalesce(ctx.priority, %(context_priority)s) DESC,
                        coalesce((o.properties ->> 'confidence')::float8, 0.7) DESC,
                        coalesce(u.uses, 0) DESC, o.updated_at DESC, o.canonical_id
           ) AS turn
    FROM kb.graph_objects o
    {uses}
    LEFT JOIN (  -- the highest priority of each memory's contexts (one pass over the links),
                 -- read only when one of the actor's contexts has a priority of its own (a
                 -- one-time check: with every priority the default, the order is the same)
        SELECT e.src_id, max(coalesce(round((c.properties ->> 'priority')::numeric)::int,
                                      %(context_priority)s)) AS priority
        FROM kb.graph_relationships e
        JOIN kb.graph_objects c
          ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
        WHERE e.type = 'BELONGS_TO_CONTEXT' AND e.actor_id = %(actor_id)s
          AND e.is_head AND e.deleted_at IS NULL
          AND EXISTS (
              SELECT FROM kb.graph_objects p
              WHERE p.actor_id = %(actor_id)s AND p.type = 'MemoryContext' AND p.is_head
                AND p.deleted_at IS NULL
                AND round((p.properties ->> 'priority')::numeric)::int <> %(context_priority)s
          )
        GROUP BY e.src_id
    ) ctx ON ctx.src_id = o.canonical_id
    WHERE {active} AND {visible}
      AND coalesce((o.properties ->> 'valid_until')::timestamptz > now(), true)
) c
ORDER BY c.core DESC, c.turn, array_position(%(order)s::text[], c.category) NULLS LAST,
         c.category, c.id
LIMIT %(limit)s
"""

RECALL = """
SELECT r.id, r.content, r.category, r.scope, r.source, r.confidence, r.contexts, r.use_count,
       r.last_used, r.created_at, r.updated_at, r.lexical_rank, r.lexical_score, r.vector_rank,
       r.similarity, r.fused, r.score, r.effective_confidence, r.recency, r.importance_factor,
       provenance.derived_from, conflicts.conflicts_with,
       h.properties ->> 'importance' AS importance, h.properties ->> 'valid_from' AS valid_from,
       h.properties ->> 'valid_until' AS valid_until, h.properties ->> 'rationale' AS rationale,
       greatest(r.last_used, ev.last_at, h.updated_at) AS last_active,
       coalesce(ev.evidence_count, 0) AS evidence_count, ev.last_evidence,
       (h.properties ->> 'archived_at')::timestamptz AS archived_at
FROM kb.recall_memories(
    p_actor_id => %(actor_id)s,
    p_project_id => %(project_id)s,
    p_query => %(query)s,
    p_query_embedding => %(embedding)s,
    p_embedding_model => %(model)s,
    p_category => %(category)s,
    p_scope => %(scope)s,
    p_limit => %(limit)s,
    p_candidates => %(candidates)s,
    p_rrf_k => %(rrf_k)s,
    p_lexical_weight => %(lexical_weight)s,
    p_vector_weight => %(vector_weight)s,
    p_confidence_weight => %(confidence_weight)s,
    p_min_similarity => %(min_similarity)s,
    p_include_archived => %(include_archived)s,
    p_as_of => %(as_of)s,
    p_recency_weight => %(recency_weight)s,
    p_importance_weight => %(importance_weight)s,
    p_decay_floor => %(decay_floor)s,
    p_decay_grace_days => %(decay_grace_days)s,
    p_decay_half_life_days => %(decay_half_life_days)s
) WITH ORDINALITY AS r
{version}
{evidence}
{provenance}
ORDER BY r.ordinality
"""

# The version whose lifecycle properties a recalled memory shows: its head; with as_of, the
# version that was its head then (the latest written by then), whose content recall returned.
RECALLED_HEAD = "JOIN kb.graph_objects h ON h.canonical_id = r.id AND h.is_head"
RECALLED_AS_OF = """
JOIN LATERAL (
    SELECT v.* FROM kb.graph_objects v
    WHERE v.canonical_id = r.id AND v.updated_at <= %(as_of)s
    ORDER BY v.version DESC
    LIMIT 1
) h ON true
"""

LIVE_SUPERSESSION = """
SELECT canonical_id FROM kb.graph_relationships
WHERE src_id = %(new_id)s AND dst_id = %(old_id)s AND type = 'SUPERSEDES'
  AND is_head AND deleted_at IS NULL
"""

# The live CONFLICTS_WITH edges between two memories, either way.
LIVE_CONFLICTS = """
SELECT canonical_id FROM kb.graph_relationships
WHERE type = 'CONFLICTS_WITH' AND is_head AND deleted_at IS NULL
  AND ((src_id = %(a)s AND dst_id = %(b)s) OR (src_id = %(b)s AND dst_id = %(a)s))
"""

# The delete reason of a conflict link removed because both memories are true (the review
# queue's keep_both, manage_memory's keep_both).
KEPT_BOTH = "both kept: both are true"

# The review queue's open pairs of two memories, decided keep_both (manage_memory keep_both
# settles what the queue would ask).
KEEP_BOTH_PAIRS = """
UPDATE kb.possible_duplicates SET decision = 'keep_both', kept_id = NULL, decided_at = now()
WHERE actor_id = %(actor_id)s AND decision IS NULL
  AND ((memory_id = %(a)s AND duplicate_of = %(b)s) OR (memory_id = %(b)s AND duplicate_of = %(a)s))
"""

RECORD_RECALLS = """
INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, query, query_sha256)
SELECT id, %(actor_id)s, %(project_id)s, %(query)s, %(query_sha256)s
FROM unnest(%(ids)s::uuid[]) AS id
ORDER BY id  -- the order the log's trigger locks the use counts in (record_recalls)
RETURNING recalled_at
"""

# The characters of a query the recall log keeps (kb.memory_recalls.query, migration 0020)
RECALL_QUERY_CHARS = 500

# Active and archived memories: superseded ones are history and stay so (a deleted version of
# them would count as a deleted memory in kb.memory_stats).
FORGET_ALL = """
SELECT {columns} FROM kb.graph_objects o
WHERE {live}
  AND o.actor_id = %(actor_id)s AND o.project_id = %(project_id)s AND o.scope <> 'global'
ORDER BY o.created_at
"""

# A memory in any status in full (its head version), with its uses, contexts, provenance, its
# lifecycle (importance, validity, rationale; when it was last active: used, reinforced or
# changed; the caller's evidence for it: how many pieces and the latest), what replaced it,
# when it was archived or deleted and why, and where it was saved and by whom: the select of
# the memory rows, the list of inactive ones (LIST_INACTIVE) and the browse rows
# (browse_store.ROWS), whose WHERE follows it.
ANY_STATUS = """
SELECT o.canonical_id AS id, o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category, o.scope, o.properties ->> 'source' AS source,
       (o.properties ->> 'confidence')::double precision AS confidence,
       coalesce(u.use_count, 0) AS use_count, u.last_used, coalesce(ctx.names, '{{}}') AS contexts,
       o.created_at, o.updated_at, provenance.derived_from, conflicts.conflicts_with,
       o.properties ->> 'importance' AS importance, o.properties ->> 'valid_from' AS valid_from,
       o.properties ->> 'valid_until' AS valid_until, o.properties ->> 'rationale' AS rationale,
       greatest(u.last_used, ev.last_at, o.updated_at) AS last_active,
       coalesce(ev.evidence_count, 0) AS evidence_count, ev.last_evidence,
       o.properties ->> 'superseded_by' AS superseded_by, o.deleted_at, o.project_id,
       o.actor_id, (o.properties ->> 'archived_at')::timestamptz AS archived_at,
       o.properties ->> 'archive_reason' AS archive_reason,
       o.properties ->> 'supersede_reason' AS supersede_reason, o.delete_reason,
       o.properties ->> 'supersede_rule' AS supersede_rule,
       (o.properties ->> 'supersede_similarity')::double precision AS supersede_similarity
FROM kb.graph_objects o
LEFT JOIN LATERAL (
    SELECT count(*) AS use_count, max(m.recalled_at) AS last_used
    FROM kb.memory_recalls m WHERE m.canonical_id = o.canonical_id
) u ON true
LEFT JOIN LATERAL (
    SELECT array_agg(c.properties ->> 'name' ORDER BY c.properties ->> 'name') AS names
    FROM kb.graph_relationships e
    JOIN kb.graph_objects c ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
    WHERE e.src_id = o.canonical_id AND e.type = 'BELONGS_TO_CONTEXT'
      AND e.is_head AND e.deleted_at IS NULL
) ctx ON true
{evidence}
{provenance}
"""

# Memories of `ids` in any status (their head versions), as the service returns them.
MEMORY_ROWS = (
    ANY_STATUS
    + """
WHERE o.canonical_id = ANY(%(ids)s) AND o.is_head AND o.type = 'Memory'
"""
)

# Superseded, deleted or archived memories the principal may change, most recently changed
# first, with what replaced them or when they were deleted or archived: what `restore` can
# bring back (global ones only for an administrator).
LIST_INACTIVE = (
    ANY_STATUS
    + """
WHERE o.type = 'Memory' AND o.is_head AND {writable} AND {state}
  AND (%(category)s::text IS NULL OR o.labels @> ARRAY[%(category)s::text])
ORDER BY o.updated_at DESC, o.canonical_id
LIMIT %(limit)s
"""
)
INACTIVE_STATES = {
    "superseded": "o.deleted_at IS NULL AND o.properties ? 'superseded_by'",
    "deleted": "o.deleted_at IS NOT NULL",
    "archived": ARCHIVED,
}

# The memories whose id begins with a prefix (the range of ids that share it), among those
# the principal sees, in any status: what a short id the tools showed may name. Two at most
# (more than one: the prefix is ambiguous).
ID_PREFIX = """
SELECT o.canonical_id FROM kb.graph_objects o
WHERE o.type = 'Memory' AND o.is_head AND {visible}
  AND o.canonical_id BETWEEN %(lowest)s AND %(highest)s
ORDER BY o.canonical_id
LIMIT 2
"""

# Live objects of the embedded types (EMBEDDED_TEXT) whose text property holds some text
# and that have no vector from the model: memories, and episodes with a summary
# (compatibility.LACKING_VECTOR, which the start-up check counts too).
NEEDING_EMBEDDING = """
SELECT o.canonical_id, t.property, o.properties ->> t.property
FROM {lacking_vector}
ORDER BY o.id
LIMIT %(limit)s
"""

COUNT_NEEDING_EMBEDDING = "SELECT count(*) FROM {lacking_vector}"

# A lock on a name until the transaction ends (saves, context names, capture's Episodes).
ADVISORY_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%(key)s, 0))"


def _params(principal: Principal, **more: Any) -> dict[str, Any]:
    return {"actor_id": principal.actor_id, "project_id": principal.project_id, **more}


def lock_saves(conn: Connection[Any], principal: Principal, scope: str) -> None:
    """Serialize dedup-and-insert among saves that could see each other's memories."""
    if scope == "global":
        key = "memory-save:global"
    elif scope == "user":
        key = f"memory-save:user:{principal.actor_id}"
    else:
        key = f"memory-save:project:{principal.actor_id}:{principal.project_id}"
    conn.execute(ADVISORY_LOCK, {"key": key})


def lock_context_name(conn: Connection[Any], actor_id: UUID, name: str) -> None:
    """Serialize find-or-create of one actor's context name (names match ignoring case)."""
    conn.execute(ADVISORY_LOCK, {"key": f"memory-context:{actor_id}:{name.lower()}"})


def find_exact(
    conn: Connection[Any],
    principal: Principal,
    scope: str,
    text: str,
    *,
    exclude: UUID | None = None,
) -> UUID | None:
    """An active visible memory of this scope with the same normalized content (other than
    `exclude`)."""
    statement = sql.SQL(FIND_EXACT).format(
        state=sql.SQL(ACTIVE), same_scope=sql.SQL(SAME_SCOPE[scope])
    )
    row = conn.execute(statement, _params(principal, content=text, exclude=exclude)).fetchone()
    return None if row is None else UUID(str(row[0]))


def find_repeat(
    conn: Connection[Any], principal: Principal, scope: str, text: str
) -> tuple[UUID, bool] | None:
    """The memory a save repeats exactly: an active visible memory of this scope with the same
    normalized content, else an archived one (which the repeat brings back); with whether it
    is archived. One statement."""
    statement = sql.SQL(FIND_EXACT).format(
        state=sql.SQL(LIVE), same_scope=sql.SQL(SAME_SCOPE[scope])
    )
    row = conn.execute(statement, _params(principal, content=text, exclude=None)).fetchone()
    return None if row is None else (UUID(str(row[0])), bool(row[1]))


@dataclass(frozen=True, slots=True)
class Nearest:
    """A memory similar to a new one, with its similarity, for the dedup decision."""

    id: UUID
    similarity: float
    content: str
    category: str | None = None


def find_nearest(
    conn: Connection[Any],
    principal: Principal,
    scope: str,
    embedding: Vector,
    model: str,
    *,
    exclude: UUID | None = None,
) -> Nearest | None:
    """The most similar active visible memory of this scope embedded by the same model (other
    than `exclude`)."""
    found = find_near(conn, principal, scope, embedding, model, limit=1, exclude=exclude)
    return found[0] if found else None


def find_near(
    conn: Connection[Any],
    principal: Principal,
    scope: str,
    embedding: Vector,
    model: str,
    *,
    limit: int,
    exclude: UUID | None = None,
) -> list[Nearest]:
    """The `limit` most similar active visible memories of this scope embedded by the same
    model (other than `exclude`), the most similar first: exactly while the scope holds at
    most EXACT_NEAR of them, by the HNSW index above that (FIND_NEAREST)."""
    conn.execute(ITERATIVE_SCAN)
    params = _params(
        principal,
        embedding=embedding,
        model=model,
        exclude=exclude,
        limit=limit,
        exact_near=EXACT_NEAR,
    )
    return [
        Nearest(UUID(str(row[0])), float(row[1]), str(row[2]), row[3])
        for row in conn.execute(nearest_statement(scope), params).fetchall()
    ]


def find_context(conn: Connection[Any], actor_id: UUID, name: str) -> UUID | None:
    row = conn.execute(FIND_CONTEXT, {"actor_id": actor_id, "name": name}).fetchone()
    return None if row is None else UUID(str(row[0]))


def contexts_of(conn: Connection[Any], memory_id: UUID) -> list[UUID]:
    return [UUID(str(row[0])) for row in conn.execute(CONTEXTS_OF, {"id": memory_id})]


def provenance_join(memory_id: str, *, memory_active: str) -> sql.Composed:
    """PROVENANCE and CONFLICTS joined on the memory id of the statement's row (`memory_id`, a
    column): where it came from and what it conflicts with, while the row is an active memory
    (`memory_active`, an expression of the row)."""
    return sql.SQL(PROVENANCE + CONFLICTS).format(
        memory_id=sql.SQL(memory_id), memory_active=sql.SQL(memory_active)
    )


# The rows of ANY_STATUS (kb.graph_objects o) are in any status: the conflicts of an active one.
ANY_STATUS_JOIN = {"memory_id": "o.canonical_id", "memory_active": "kb.is_active_memory(o)"}


def evidence_join(memory_id: str) -> sql.Composed:
    """EVIDENCE joined on the memory id of the statement's row (`memory_id`, a column)."""
    return sql.SQL(EVIDENCE).format(memory_id=sql.SQL(memory_id))


def memory_rows(conn: Connection[Any], ids: list[UUID]) -> dict[UUID, InactiveRow]:
    """The memories of `ids` that the transaction sees, in any status, by id."""
    statement = sql.SQL(MEMORY_ROWS).format(
        provenance=provenance_join(**ANY_STATUS_JOIN), evidence=evidence_join("o.canonical_id")
    )
    with conn.cursor(row_factory=class_row(InactiveRow)) as cur:
        cur.execute(statement, {"ids": ids})
        return {row.id: row for row in cur.fetchall()}


@dataclass(frozen=True, slots=True)
class StartRow:
    """A memory offered at a session's start: its id, text and category."""

    id: UUID
    content: str
    category: str


def start_candidates(
    conn: Connection[Any], principal: Principal, order: Sequence[str], limit: int
) -> list[StartRow]:
    """The visible active memories in START_CANDIDATES' order, but the outranked side of a
    conflict (OUTRANKED_AMONG)."""
    statement = sql.SQL(START_CANDIDATES).format(
        uses=sql.SQL(USES), active=sql.SQL(ACTIVE), visible=sql.SQL(VISIBLE)
    )
    with conn.cursor(row_factory=class_row(StartRow)) as cur:
        params = _params(
            principal, order=list(order), limit=limit, context_priority=DEFAULT_CONTEXT_PRIORITY
        )
        cur.execute(statement, params, prepare=False)
        rows = cur.fetchall()
    if not rows:
        return rows
    # never the outranked side of a conflict: its current value is what holds
    outranked = {
        UUID(str(row[0]))
        for row in conn.execute(OUTRANKED_AMONG, {"ids": [row.id for row in rows]})
    }
    return [row for row in rows if row.id not in outranked]


@dataclass(frozen=True, slots=True)
class InactiveRow(MemoryRow):
    """A memory of ANY_STATUS: what replaced it, when it was deleted or archived and why, and
    where it was saved and by whom (None: ownerless)."""

    superseded_by: str | None
    deleted_at: datetime | None
    project_id: UUID
    actor_id: UUID | None
    archived_at: datetime | None
    archive_reason: str | None
    supersede_reason: str | None
    delete_reason: str | None
    supersede_rule: str | None  # what replaced it: the save rule's reason, or "decided"
    supersede_similarity: float | None  # the two memories' similarity, when the rule decided


def list_inactive(
    conn: Connection[Any], principal: Principal, state: str, category: str | None, limit: int
) -> list[InactiveRow]:
    """Memories in `state` ("superseded", "deleted" or "archived") that the principal may
    restore, most recently changed first."""
    writable = WRITABLE_BY_ADMIN if principal.is_admin else OWN
    statement = sql.SQL(LIST_INACTIVE).format(
        writable=sql.SQL(writable),
        state=sql.SQL(INACTIVE_STATES[state]),
        provenance=provenance_join(**ANY_STATUS_JOIN),
        evidence=evidence_join("o.canonical_id"),
    )
    with conn.cursor(row_factory=class_row(InactiveRow)) as cur:
        cur.execute(statement, _params(principal, category=category, limit=limit), prepare=False)
        return cur.fetchall()


# The beginning of a memory id as the tools show it (mcp/compact.py): 8 to 31 of its hex
# digits, without dashes (a whole id, or a cut one with dashes, is not a prefix).
SHORTEST_ID_PREFIX = 8
_ID_PREFIX = re.compile(rf"[0-9a-fA-F]{{{SHORTEST_ID_PREFIX},31}}")


def id_prefix(value: object) -> str | None:
    """`value` in lower case when it is the beginning of an id as the tools show it, else
    None."""
    if isinstance(value, str) and _ID_PREFIX.fullmatch(value):
        return value.lower()
    return None


def ids_with_prefix(conn: Connection[Any], principal: Principal, prefix: str) -> list[UUID]:
    """At most two visible memories (any status) whose id's hex digits begin with `prefix`
    (lower-case hex, at most 32 digits)."""
    statement = sql.SQL(ID_PREFIX).format(visible=sql.SQL(VISIBLE))
    lowest, highest = prefix_bounds(prefix)
    rows = conn.execute(statement, _params(principal, lowest=lowest, highest=highest)).fetchall()
    return [row[0] for row in rows]


def prefix_bounds(prefix: str) -> tuple[UUID, UUID]:
    """The lowest and the highest id that begin with `prefix` (lower-case hex, at most 32
    digits): an id prefix is a range of the index."""
    return UUID(prefix.ljust(32, "0")), UUID(prefix.ljust(32, "f"))


def the_one(
    found: Sequence[UUID], missing: Exception, prefix: str, field: str, kind: str, whole_ids: str
) -> UUID:
    """The one id a short id (`prefix`, of argument `field`) names among `found` (at most two
    that begin with it): none raises `missing` (the not-found of an unknown id), several are
    refused, saying where the whole ids are shown (`whole_ids`); `kind` names what they are
    ("memories", "pairs")."""
    if not found:
        raise missing
    if len(found) > 1:
        raise InvalidInput(
            f"{field} {prefix} is the beginning of more than one of your {kind}: give more of "
            f"it, or the whole id ({whole_ids})"
        )
    return found[0]


def live_conflicts(conn: Connection[Any], a: UUID, b: UUID) -> list[UUID]:
    """The live CONFLICTS_WITH edges between memories `a` and `b`."""
    return [UUID(str(row[0])) for row in conn.execute(LIVE_CONFLICTS, {"a": a, "b": b})]


def settle_as_both_true(conn: Connection[Any], a: UUID, b: UUID) -> int:
    """Delete the live CONFLICTS_WITH links between `a` and `b` with the reason KEPT_BOTH
    (what the review queue's undo looks for); how many there were."""
    links = live_conflicts(conn, a, b)
    for link in links:
        graph.delete_relationship(conn, link, reason=KEPT_BOTH)
    return len(links)


def keep_both_pairs(conn: Connection[Any], actor_id: UUID, a: UUID, b: UUID) -> int:
    """Decide the actor's open review-queue pairs of `a` and `b` as keep_both; how many."""
    return conn.execute(KEEP_BOTH_PAIRS, {"actor_id": actor_id, "a": a, "b": b}).rowcount


def live_supersession(conn: Connection[Any], new_id: UUID, old_id: UUID) -> UUID | None:
    """The live SUPERSEDES edge from `new_id` to `old_id`, if there is one."""
    row = conn.execute(LIVE_SUPERSESSION, {"new_id": new_id, "old_id": old_id}).fetchone()
    return None if row is None else UUID(str(row[0]))


def recall(
    conn: Connection[Any],
    principal: Principal,
    *,
    include_archived: bool = False,
    as_of: datetime | None = None,
    recency_weight: float = 0.05,
    importance_weight: float = 0.0,
    decay_floor: float = 0.3,
    decay_grace_days: float = 30.0,
    decay_half_life_days: float = 180.0,
    **arguments: Any,
) -> list[RecallRow]:
    """kb.recall_memories with `arguments` (query, embedding, model, category, scope, limit
    and the fusion's tuning), archived memories only with `include_archived`, and with `as_of`
    what was believed true then (each memory as its version at that time: its content and
    lifecycle properties); ranked with the recency, importance and decay settings."""
    statement = sql.SQL(RECALL).format(
        version=sql.SQL(RECALLED_HEAD if as_of is None else RECALLED_AS_OF),
        provenance=provenance_join("r.id", memory_active="true"),  # recall finds active ones
        evidence=evidence_join("r.id"),
    )
    params = _params(
        principal,
        include_archived=include_archived,
        as_of=as_of,
        recency_weight=recency_weight,
        importance_weight=importance_weight,
        decay_floor=decay_floor,
        decay_grace_days=decay_grace_days,
        decay_half_life_days=decay_half_life_days,
        **arguments,
    )
    with conn.cursor(row_factory=class_row(RecallRow)) as cur:
        cur.execute(statement, params)
        return cur.fetchall()


def now(conn: Connection[Any]) -> datetime:
    """The transaction's time (what now() gives its statements)."""
    row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def record_recalls(
    conn: Connection[Any], principal: Principal, ids: list[UUID], query: str | None = None
) -> datetime | None:
    """Append one recall row per memory (no lock on the memories; their use counts are kept by
    a trigger, in the ids' order), with the recall's `query`
    (its first RECALL_QUERY_CHARS characters; only its SHA-256 when the secret scanner finds a
    secret in it); returns the time.

    The transaction then commits without waiting for its WAL to reach the disk: the recall
    log is usage statistics, and a crash can lose at most its last fraction of a second
    (never corrupt it), while waiting for the flush cost every recall a disk write.
    """
    if not ids:
        return None
    conn.execute("SET LOCAL synchronous_commit = off")
    kept, digest = logged_query(query)
    # RECORD_RECALLS inserts in the ids' order: the log's trigger locks each memory's use
    # count (migration 0024), and two recalls that lock the same ones in the same order wait
    # for each other instead of deadlocking
    params = _params(principal, ids=ids, query=kept, query_sha256=digest)
    row = conn.execute(RECORD_RECALLS, params).fetchone()
    return None if row is None else row[0]


def logged_query(query: str | None) -> tuple[str | None, str | None]:
    """A recall's query as the recall log keeps it: (its first RECALL_QUERY_CHARS characters,
    None), or (None, its SHA-256) when it holds a secret (read with a margin past the cut, so
    that a secret across it is seen whole), or (None, None) without one."""
    if query is None:
        return None, None
    from emergent_memory.memory.secrets import find_secrets  # its rules compile on first use

    if find_secrets(query[: RECALL_QUERY_CHARS + 200]):
        return None, hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()
    return query[:RECALL_QUERY_CHARS], None


def own_memories_in_project(conn: Connection[Any], principal: Principal) -> list[GraphObject]:
    statement = sql.SQL(FORGET_ALL).format(columns=select_list(GraphObject), live=sql.SQL(LIVE))
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(statement, _params(principal))
        return cur.fetchall()


def is_active(obj: GraphObject | None) -> bool:
    """Whether an object already read is an active memory: the live head version of a Memory
    that nothing superseded and that is not archived (kb.is_active_memory in Python)."""
    return (
        obj is not None
        and obj.type == MEMORY
        and obj.is_head
        and obj.deleted_at is None
        and "superseded_by" not in obj.properties
        and "archived_at" not in obj.properties
    )


def is_archived(obj: GraphObject | None) -> bool:
    """Whether an object already read is an archived memory (ARCHIVED in Python)."""
    return (
        obj is not None
        and obj.type == MEMORY
        and obj.is_head
        and obj.deleted_at is None
        and "superseded_by" not in obj.properties
        and "archived_at" in obj.properties
    )


def visible_to(obj: GraphObject, principal: Principal) -> bool:
    """Whether the principal may see an object already read: its own user-scope objects in
    every project, its own project-scope objects in this project, and global objects
    (kb.visible_to, VISIBLE, in Python)."""
    if obj.scope == "global":
        return True
    if obj.actor_id != principal.actor_id:
        return False
    return obj.scope == "user" or (
        obj.scope == "project" and obj.project_id == principal.project_id
    )


def needing_embedding(conn: Connection[Any], model: str, limit: int) -> list[tuple[UUID, str, str]]:
    """Live memories and episodes (EMBEDDED_TEXT) without a vector from `model`: (canonical
    id, the property that holds the text, the text to embed)."""
    params = {"model": model, "limit": limit, "embedded_text": Jsonb(EMBEDDED_TEXT)}
    rows = conn.execute(_lacking_vector(NEEDING_EMBEDDING), params).fetchall()
    return [(UUID(str(row[0])), str(row[1]), str(row[2])) for row in rows]


def count_needing_embedding(conn: Connection[Any], model: str) -> int:
    params = {"model": model, "embedded_text": Jsonb(EMBEDDED_TEXT)}
    row = conn.execute(_lacking_vector(COUNT_NEEDING_EMBEDDING), params).fetchone()
    return 0 if row is None else int(row[0])


def _lacking_vector(query: str) -> sql.Composed:
    return sql.SQL(query).format(lacking_vector=sql.SQL(LACKING_VECTOR))


STATS = """
SELECT project_id, active, superseded, deleted, archived, preferences, patterns, corrections,
       facts, instructions, conventions, decisions, lessons, risks
FROM kb.memory_stats
WHERE actor_id = %(actor_id)s
ORDER BY project_id
"""


@dataclass(frozen=True, slots=True)
class StatsRow:
    """How many memories the caller saved in one project (a row of kb.memory_stats)."""

    project_id: UUID
    active: int
    superseded: int
    deleted: int
    archived: int
    preferences: int
    patterns: int
    corrections: int
    facts: int
    instructions: int
    conventions: int
    decisions: int
    lessons: int
    risks: int


def stats_rows(conn: Connection[Any], principal: Principal) -> list[StatsRow]:
    with conn.cursor(row_factory=class_row(StatsRow)) as cur:
        return cur.execute(STATS, _params(principal)).fetchall()


# A pair save's (or update's) duplicate check answered as possible_duplicates, kept for a
# person to decide (kb.possible_duplicates, migration 0012); a pair already recorded, either
# way round, keeps its row and its decision.
RECORD_POSSIBLE_DUPLICATE = """
INSERT INTO kb.possible_duplicates (actor_id, project_id, memory_id, duplicate_of, similarity,
                                    reason)
SELECT %(actor_id)s, %(project_id)s, %(memory_id)s, %(duplicate_of)s, %(similarity)s,
       %(reason)s
WHERE NOT EXISTS (
    SELECT 1 FROM kb.possible_duplicates d
    WHERE d.actor_id = %(actor_id)s AND d.memory_id = %(duplicate_of)s
      AND d.duplicate_of = %(memory_id)s
)
ON CONFLICT (actor_id, memory_id, duplicate_of) DO NOTHING
"""


def record_possible_duplicate(
    conn: Connection[Any],
    principal: Principal,
    memory_id: UUID,
    duplicate_of: UUID,
    similarity: float,
    reason: str | None = None,
) -> None:
    """Keep a pair the duplicate check found close, for a person to decide (in the caller's
    transaction: the pair is kept when the save or update commits), with why it was kept
    (memory/duplicates.py says it in words)."""
    conn.execute(
        RECORD_POSSIBLE_DUPLICATE,
        _params(
            principal,
            memory_id=memory_id,
            duplicate_of=duplicate_of,
            similarity=max(-1.0, min(1.0, similarity)),
            reason=None if reason is None else reason[:300],
        ),
    )


# -- evidence (kb.memory_evidence, migration 0013) -----------------------------------------

# Whether the caller already recorded this evidence for the memory (the same text ignoring
# case, spacing and punctuation: kb.memory_fingerprint's normalisation of the letters and
# digits alone, so "EV-3483." repeats "ev 3483"): then it is not independent.
EVIDENCE_SEEN = """
SELECT EXISTS (
    SELECT 1 FROM kb.memory_evidence e
    WHERE e.canonical_id = %(id)s AND e.evidence IS NOT NULL
      AND kb.memory_fingerprint(regexp_replace(e.evidence, '[^[:alnum:]]+', ' ', 'g'))
          = kb.memory_fingerprint(regexp_replace(%(evidence)s, '[^[:alnum:]]+', ' ', 'g'))
)
"""

RECORD_EVIDENCE = """
INSERT INTO kb.memory_evidence (canonical_id, actor_id, project_id, evidence, origin,
                                session_id, episode_id, independent, confidence_before,
                                confidence_after)
VALUES (%(id)s, %(actor_id)s, %(project_id)s, %(evidence)s, %(origin)s, %(session_id)s,
        %(episode_id)s, %(independent)s, %(confidence_before)s, %(confidence_after)s)
"""

COUNT_EVIDENCE = "SELECT count(*) FROM kb.memory_evidence WHERE canonical_id = %(id)s"

# What a memory that supersedes another inherits, in one statement: the old memory's evidence,
# recorded again for the new one (its owner's rows: those of another administrator's global
# memory are not the principal's to see or copy), and the contexts the old one is filed in
# (returned, for the caller to file the new one there too).
INHERIT = """
WITH copied AS (
    INSERT INTO kb.memory_evidence (canonical_id, actor_id, project_id, evidence, origin,
                                    session_id, episode_id, independent, confidence_before,
                                    confidence_after, created_at)
    SELECT %(to)s, %(actor_id)s, %(project_id)s, evidence, origin, session_id, episode_id,
           independent, confidence_before, confidence_after, created_at
    FROM kb.memory_evidence
    WHERE canonical_id = %(from)s AND actor_id = %(actor_id)s AND project_id = %(project_id)s
    ORDER BY id
)
SELECT e.dst_id FROM kb.graph_relationships e
WHERE e.src_id = %(from)s AND e.type = 'BELONGS_TO_CONTEXT' AND e.is_head AND e.deleted_at IS NULL
"""


# The live context links of a memory made (or last changed) in the transaction of `at`
CONTEXT_LINKS_AT = """
SELECT canonical_id FROM kb.graph_relationships
WHERE src_id = %(id)s AND type = 'BELONGS_TO_CONTEXT' AND is_head AND deleted_at IS NULL
  AND updated_at = %(at)s
"""


def context_links_at(conn: Connection[Any], memory_id: UUID, at: datetime) -> list[UUID]:
    """The memory's live BELONGS_TO_CONTEXT links written at `at` (a transaction's time)."""
    rows = conn.execute(CONTEXT_LINKS_AT, {"id": memory_id, "at": at})
    return [UUID(str(row[0])) for row in rows]


def inherit(conn: Connection[Any], principal: Principal, from_id: UUID, to_id: UUID) -> list[UUID]:
    """Copy the evidence of `from_id` to `to_id` and return the contexts `from_id` is in."""
    rows = conn.execute(INHERIT, _params(principal, to=to_id, **{"from": from_id}))
    return [UUID(str(row[0])) for row in rows]


def evidence_seen(conn: Connection[Any], memory_id: UUID, evidence: str) -> bool:
    row = conn.execute(EVIDENCE_SEEN, {"id": memory_id, "evidence": evidence}).fetchone()
    return bool(row and row[0])


@dataclass(frozen=True, slots=True)
class Evidence:
    """A piece of evidence to record for a memory."""

    origin: str
    evidence: str | None = None
    session_id: str | None = None
    episode_id: UUID | None = None


def record_evidence(
    conn: Connection[Any],
    principal: Principal,
    memory_id: UUID,
    evidence: Evidence,
    *,
    independent: bool,
    confidence_before: float,
    confidence_after: float,
) -> None:
    conn.execute(
        RECORD_EVIDENCE,
        _params(
            principal,
            id=memory_id,
            evidence=evidence.evidence,
            origin=evidence.origin,
            session_id=evidence.session_id,
            episode_id=evidence.episode_id,
            independent=independent,
            confidence_before=confidence_before,
            confidence_after=confidence_after,
        ),
    )


def count_evidence(conn: Connection[Any], memory_id: UUID) -> int:
    row = conn.execute(COUNT_EVIDENCE, {"id": memory_id}).fetchone()
    return 0 if row is None else int(row[0])


# -- the lifecycle's rules in Python (the SQL functions of migration 0013) ------------------
# tests/test_lifecycle_memory.py holds each equal to its SQL function over a grid of values.

# Days after which a category's recency halves (kb.memory_half_life); any other category 365.
HALF_LIFE_DAYS: Mapping[str, float] = {"fact": 90.0, "pattern": 180.0}
DEFAULT_HALF_LIFE_DAYS = 365.0
# An importance as a number for ranking (kb.memory_importance_value); none is normal, 0.
IMPORTANCE_VALUE: Mapping[str, int] = {"low": -1, "normal": 0, "high": 1, "core": 2}
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Decay:
    """How a memory's confidence decays when it is not used (settings
    EMERGENT_MEMORY_DECAY_FLOOR, _DECAY_GRACE_DAYS, _DECAY_HALF_LIFE_DAYS)."""

    floor: float = 0.3
    grace_days: float = 30.0
    half_life_days: float = 180.0


def half_life(category: str | None) -> float:
    """kb.memory_half_life."""
    return HALF_LIFE_DAYS.get(category or "", DEFAULT_HALF_LIFE_DAYS)


def importance_value(importance: str | None) -> int:
    """kb.memory_importance_value."""
    return IMPORTANCE_VALUE.get(importance or "", 0)


def _idle_days(last_active: datetime | None, now: datetime) -> float:
    if last_active is None:
        return 0.0
    return (now - last_active).total_seconds() / SECONDS_PER_DAY


def recency(category: str | None, last_active: datetime | None, now: datetime) -> float:
    """kb.memory_recency: 1 when used or changed now, halving every half-life of the
    category."""
    return math.pow(0.5, max(0.0, _idle_days(last_active, now)) / half_life(category))


def effective_confidence(
    stored: float,
    importance: str | None,
    last_active: datetime | None,
    now: datetime,
    decay: Decay = Decay(),
) -> float:
    """kb.memory_effective_confidence: the stored confidence, unchanged for a core memory;
    otherwise halved every `decay.half_life_days` of idleness beyond `decay.grace_days`,
    never below `decay.floor` (or the stored value, if lower)."""
    if importance == "core":
        return stored
    idle = max(0.0, _idle_days(last_active, now) - decay.grace_days)
    return max(min(stored, decay.floor), stored * math.pow(0.5, idle / decay.half_life_days))


def reinforced(confidence: float, step: float) -> float:
    """The stored confidence after one piece of independent evidence: `step` of the way to 1,
    never above 1."""
    return min(1.0, round(confidence + (1.0 - confidence) * step, 4))
