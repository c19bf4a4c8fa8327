"""Memory SQL on the graph tables: visibility, duplicates, contexts, recall and usage.

Connection first, never commits; the service owns the transaction. Which rows an actor may
see (DESIGN.md 5) is always part of the SQL, never a filter applied afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection, sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.compatibility import LACKING_VECTOR
from emergent_memory.graph.models import GraphObject, select_list

MEMORY = "Memory"
MEMORY_TEXT = "content"  # the property of a memory that is embedded and searched
CONTEXT = "MemoryContext"
BELONGS_TO_CONTEXT = "BELONGS_TO_CONTEXT"
SUPERSEDES = "SUPERSEDES"
RELEVANT_TO = "RELEVANT_TO"
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
    """A row of the kb.memories view (an active memory with usage and contexts)."""

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
    derived_from: dict[str, Any] | None  # PROVENANCE's JSON


# Which memories the principal sees, and which are active: the rule lives in SQL, in
# kb.visible_to and kb.is_active_memory (migration 0010). PostgreSQL inlines both, so a query
# filtering with them uses the indexes it would with the expressions written out.
# visible_to and is_active below are the rule's Python mirror; tests/test_visibility_rule.py
# holds these filters and the mirror equal to the SQL functions.
VISIBLE = "kb.visible_to(o, %(actor_id)s, %(project_id)s)"
ACTIVE = "kb.is_active_memory(o)"

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

# `exclude`: a memory that does not count (the one being updated or restored).
FIND_EXACT = """
SELECT o.canonical_id FROM kb.graph_objects o
WHERE {active} AND {same_scope}
  AND o.content_fingerprint = kb.memory_fingerprint(%(content)s)
  AND o.canonical_id IS DISTINCT FROM %(exclude)s::uuid
ORDER BY o.created_at
LIMIT 1
"""

FIND_NEAREST = """
SELECT o.canonical_id, 1 - (o.embedding <=> %(embedding)s) AS similarity,
       o.properties ->> 'content' AS content
FROM kb.graph_objects o
WHERE {active} AND {same_scope} AND o.embedding_model = %(model)s
  AND o.canonical_id IS DISTINCT FROM %(exclude)s::uuid
ORDER BY o.embedding <=> %(embedding)s
LIMIT 1
"""

# Let the HNSW scan keep going until enough rows pass the filters (pgvector 0.8).
ITERATIVE_SCAN = "SET LOCAL hnsw.iterative_scan = 'relaxed_order'"

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

MEMORY_ROWS = """
SELECT m.id, m.content, m.category, m.scope, m.source, m.confidence, m.use_count, m.last_used,
       m.contexts, m.created_at, m.updated_at, provenance.derived_from
FROM kb.memories m
{provenance}
WHERE m.id = ANY(%(ids)s)
"""

# The page is chosen from ids and sort keys only (use counts from the recall log, which
# holds few rows per memory), then only the page's rows are read in full from kb.memories.
# How often the principal recalled each memory (the recall log holds few rows per memory).
USES = """
LEFT JOIN (
    SELECT canonical_id, count(*) AS uses FROM kb.memory_recalls
    WHERE actor_id = %(actor_id)s GROUP BY canonical_id
) u ON u.canonical_id = o.canonical_id
"""

LIST_VISIBLE = """
WITH page AS (
    SELECT o.canonical_id, coalesce(u.uses, 0) AS uses, o.created_at
    FROM kb.graph_objects o
    {uses}
    WHERE {active} AND {visible}
      AND (%(category)s::text IS NULL OR o.labels @> ARRAY[%(category)s::text])
    ORDER BY uses DESC, o.created_at DESC, o.canonical_id
    LIMIT %(limit)s
)
SELECT m.id, m.content, m.category, m.scope, m.source, m.confidence, m.use_count,
       m.last_used, m.contexts, m.created_at, m.updated_at, provenance.derived_from
FROM page JOIN kb.memories m ON m.id = page.canonical_id
{provenance}
ORDER BY page.uses DESC, page.created_at DESC, page.canonical_id
"""

# The active memories the principal sees, best first for a session's start (injection):
# by the position of their category in %(order)s, then confidence, use and recency.
START_CANDIDATES = """
SELECT o.canonical_id AS id, o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category
FROM kb.graph_objects o
{uses}
WHERE {active} AND {visible}
ORDER BY array_position(%(order)s::text[], o.properties ->> 'category') NULLS LAST,
         coalesce((o.properties ->> 'confidence')::float8, 0.7) DESC,
         coalesce(u.uses, 0) DESC, o.updated_at DESC, o.canonical_id
LIMIT %(limit)s
"""

RECALL = """
SELECT r.id, r.content, r.category, r.scope, r.source, r.confidence, r.contexts, r.use_count,
       r.last_used, r.created_at, r.updated_at, r.lexical_rank, r.lexical_score, r.vector_rank,
       r.similarity, r.fused, r.score, provenance.derived_from
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
    p_min_similarity => %(min_similarity)s
) WITH ORDINALITY AS r
{provenance}
ORDER BY r.ordinality
"""

LIVE_SUPERSESSION = """
SELECT canonical_id FROM kb.graph_relationships
WHERE src_id = %(new_id)s AND dst_id = %(old_id)s AND type = 'SUPERSEDES'
  AND is_head AND deleted_at IS NULL
"""

RECORD_RECALLS = """
INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id)
SELECT unnest(%(ids)s::uuid[]), %(actor_id)s, %(project_id)s
RETURNING recalled_at
"""

# Active memories only: superseded ones are history and stay so (a deleted version of them
# would count as a deleted memory in kb.memory_stats).
FORGET_ALL = """
SELECT {columns} FROM kb.graph_objects o
WHERE {active}
  AND o.actor_id = %(actor_id)s AND o.project_id = %(project_id)s AND o.scope <> 'global'
ORDER BY o.created_at
"""

# A memory in any status in full (its head version), with its uses, contexts, provenance,
# what replaced it or when it was deleted, and where it was saved and by whom: the select of
# LIST_INACTIVE and of the browse rows (browse_store.ROWS), whose WHERE follows it.
ANY_STATUS = """
SELECT o.canonical_id AS id, o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category, o.scope, o.properties ->> 'source' AS source,
       (o.properties ->> 'confidence')::double precision AS confidence,
       coalesce(u.use_count, 0) AS use_count, u.last_used, coalesce(ctx.names, '{{}}') AS contexts,
       o.created_at, o.updated_at, provenance.derived_from,
       o.properties ->> 'superseded_by' AS superseded_by, o.deleted_at, o.project_id,
       o.actor_id
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
{provenance}
"""

# Superseded or deleted memories the principal may change, most recently changed first, with
# what replaced them or when they were deleted: what `restore` can bring back (global ones
# only for an administrator).
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
}

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
        active=sql.SQL(ACTIVE), same_scope=sql.SQL(SAME_SCOPE[scope])
    )
    row = conn.execute(statement, _params(principal, content=text, exclude=exclude)).fetchone()
    return None if row is None else UUID(str(row[0]))


@dataclass(frozen=True, slots=True)
class Nearest:
    """The memory most similar to a new one, for the dedup decision."""

    id: UUID
    similarity: float
    content: str


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
    conn.execute(ITERATIVE_SCAN)
    statement = sql.SQL(FIND_NEAREST).format(
        active=sql.SQL(ACTIVE), same_scope=sql.SQL(SAME_SCOPE[scope])
    )
    params = _params(principal, embedding=embedding, model=model, exclude=exclude)
    row = conn.execute(statement, params).fetchone()
    return None if row is None else Nearest(UUID(str(row[0])), float(row[1]), str(row[2]))


def find_context(conn: Connection[Any], actor_id: UUID, name: str) -> UUID | None:
    row = conn.execute(FIND_CONTEXT, {"actor_id": actor_id, "name": name}).fetchone()
    return None if row is None else UUID(str(row[0]))


def contexts_of(conn: Connection[Any], memory_id: UUID) -> list[UUID]:
    return [UUID(str(row[0])) for row in conn.execute(CONTEXTS_OF, {"id": memory_id})]


def provenance_join(memory_id: str) -> sql.Composed:
    """PROVENANCE joined on the memory id of the statement's row (`memory_id`, a column)."""
    return sql.SQL(PROVENANCE).format(memory_id=sql.SQL(memory_id))


def memory_rows(conn: Connection[Any], ids: list[UUID]) -> dict[UUID, MemoryRow]:
    statement = sql.SQL(MEMORY_ROWS).format(provenance=provenance_join("m.id"))
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
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
    """The visible active memories in START_CANDIDATES' order."""
    statement = sql.SQL(START_CANDIDATES).format(
        uses=sql.SQL(USES), active=sql.SQL(ACTIVE), visible=sql.SQL(VISIBLE)
    )
    with conn.cursor(row_factory=class_row(StartRow)) as cur:
        cur.execute(statement, _params(principal, order=list(order), limit=limit), prepare=False)
        return cur.fetchall()


def list_visible(
    conn: Connection[Any], principal: Principal, category: str | None, limit: int
) -> list[MemoryRow]:
    statement = sql.SQL(LIST_VISIBLE).format(
        uses=sql.SQL(USES),
        active=sql.SQL(ACTIVE),
        visible=sql.SQL(VISIBLE),
        provenance=provenance_join("m.id"),
    )
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        # Never a prepared statement: its generic plan (chosen after a few calls, without the
        # category and the principal) took 150 ms instead of 15 for an actor with 10,000
        # memories; planning each call with its values costs about a millisecond.
        cur.execute(statement, _params(principal, category=category, limit=limit), prepare=False)
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class InactiveRow(MemoryRow):
    """A memory of ANY_STATUS: what replaced it or when it was deleted, and where it was saved
    and by whom (None: ownerless)."""

    superseded_by: str | None
    deleted_at: datetime | None
    project_id: UUID
    actor_id: UUID | None


def list_inactive(
    conn: Connection[Any], principal: Principal, state: str, category: str | None, limit: int
) -> list[InactiveRow]:
    """Memories in `state` ("superseded" or "deleted") that the principal may restore, most
    recently changed first."""
    writable = WRITABLE_BY_ADMIN if principal.is_admin else OWN
    statement = sql.SQL(LIST_INACTIVE).format(
        writable=sql.SQL(writable),
        state=sql.SQL(INACTIVE_STATES[state]),
        provenance=provenance_join("o.canonical_id"),
    )
    with conn.cursor(row_factory=class_row(InactiveRow)) as cur:
        cur.execute(statement, _params(principal, category=category, limit=limit), prepare=False)
        return cur.fetchall()


def live_supersession(conn: Connection[Any], new_id: UUID, old_id: UUID) -> UUID | None:
    """The live SUPERSEDES edge from `new_id` to `old_id`, if there is one."""
    row = conn.execute(LIVE_SUPERSESSION, {"new_id": new_id, "old_id": old_id}).fetchone()
    return None if row is None else UUID(str(row[0]))


def recall(conn: Connection[Any], principal: Principal, **arguments: Any) -> list[RecallRow]:
    statement = sql.SQL(RECALL).format(provenance=provenance_join("r.id"))
    with conn.cursor(row_factory=class_row(RecallRow)) as cur:
        cur.execute(statement, _params(principal, **arguments))
        return cur.fetchall()


def record_recalls(conn: Connection[Any], principal: Principal, ids: list[UUID]) -> datetime | None:
    """Append one recall row per memory (no lock on the memories); returns the time.

    The transaction then commits without waiting for its WAL to reach the disk: the recall
    log is usage statistics, and a crash can lose at most its last fraction of a second
    (never corrupt it), while waiting for the flush cost every recall a disk write.
    """
    if not ids:
        return None
    conn.execute("SET LOCAL synchronous_commit = off")
    row = conn.execute(RECORD_RECALLS, _params(principal, ids=ids)).fetchone()
    return None if row is None else row[0]


def own_memories_in_project(conn: Connection[Any], principal: Principal) -> list[GraphObject]:
    statement = sql.SQL(FORGET_ALL).format(columns=select_list(GraphObject), active=sql.SQL(ACTIVE))
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(statement, _params(principal))
        return cur.fetchall()


def is_active(obj: GraphObject | None) -> bool:
    """Whether an object already read is an active memory: the live head version of a Memory
    that nothing superseded (kb.is_active_memory in Python)."""
    return (
        obj is not None
        and obj.type == MEMORY
        and obj.is_head
        and obj.deleted_at is None
        and "superseded_by" not in obj.properties
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
INSERT INTO kb.possible_duplicates (actor_id, project_id, memory_id, duplicate_of, similarity)
SELECT %(actor_id)s, %(project_id)s, %(memory_id)s, %(duplicate_of)s, %(similarity)s
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
) -> None:
    """Keep a pair the duplicate check found close, for a person to decide (in the caller's
    transaction: the pair is kept when the save or update commits)."""
    conn.execute(
        RECORD_POSSIBLE_DUPLICATE,
        _params(
            principal,
            memory_id=memory_id,
            duplicate_of=duplicate_of,
            similarity=max(-1.0, min(1.0, similarity)),
        ),
    )
