"""The SQL of browsing: the memory list with filters, sorts and keyset pages, a memory's
history and neighbours, contexts, statistics, the injection log, LLM usage and the capture
queue.

Connection first, never commits; BrowseService owns the transaction, which acts for a
principal (row-level security applies to every statement). Which memories a principal sees
is kb.visible_to's rule (store.VISIBLE), spelled out in two branches here (its own memories,
and global ones) so that each branch reads an index in the page's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any, Literal
from uuid import UUID

from psycopg import Connection, sql
from psycopg.rows import class_row

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import store


@dataclass(frozen=True, slots=True)
class SortKey:
    """One sort: the key's expressions (compared as a row, all in one direction, the last
    one the canonical id so that the order is total), the SQL type of each (a cursor's
    values are cast to it) and whether the order is descending.

    A key on use (`unused` set) starts with a value of the recall log; a memory never
    recalled has `unused` there. Such a sort reads two parts, each in the key's order: the
    memories the principal used (from its recall log, which holds far fewer memories than
    it has) and the others (on the created_at index), so that no page sorts every memory."""

    expressions: tuple[str, ...]
    types: tuple[str, ...]
    descending: bool
    unused: Any = None  # the first key's value for a memory never used (a use sort)


NEVER = datetime(1900, 1, 1, tzinfo=UTC)  # the last use of a memory never used, to sort it
USES_KEY = "u.uses"
LAST_USED_KEY = "u.last_used"
CONFIDENCE_KEY = "coalesce((o.properties ->> 'confidence')::float8, 0.7)"
BY_TIME = ("timestamptz", "uuid")
SORTS: dict[str, SortKey] = {
    "recent": SortKey(("o.created_at", "o.canonical_id"), BY_TIME, True),
    "oldest": SortKey(("o.created_at", "o.canonical_id"), BY_TIME, False),
    "most_used": SortKey(
        (USES_KEY, "o.created_at", "o.canonical_id"), ("bigint", *BY_TIME), True, 0
    ),
    "least_used": SortKey(
        (USES_KEY, "o.created_at", "o.canonical_id"), ("bigint", *BY_TIME), False, 0
    ),
    "last_used": SortKey(
        (LAST_USED_KEY, "o.created_at", "o.canonical_id"), ("timestamptz", *BY_TIME), True, NEVER
    ),
    "confidence": SortKey(
        (CONFIDENCE_KEY, "o.created_at", "o.canonical_id"), ("float8", *BY_TIME), True
    ),
}

# Which head versions of memories each status keeps (archived: live, not superseded, with
# archived_at; kb.is_active_memory leaves those out).
STATUSES = {
    "active": "o.deleted_at IS NULL AND NOT (o.properties ? 'superseded_by') "
    "AND NOT (o.properties ? 'archived_at')",
    "archived": "o.deleted_at IS NULL AND NOT (o.properties ? 'superseded_by') "
    "AND o.properties ? 'archived_at'",
    "superseded": "o.deleted_at IS NULL AND o.properties ? 'superseded_by'",
    "deleted": "o.deleted_at IS NOT NULL",
    "all": "true",
}

# A memory's importance (absent: normal).
IMPORTANCE = "coalesce(o.properties ->> 'importance', 'normal')"

# The two halves of store.VISIBLE: the principal's own memories (on the actor's index) and
# global ones (on the global index).
OWN_BRANCH = (
    "o.actor_id = %(actor_id)s AND o.scope <> 'global' "
    "AND (o.scope = 'user' OR o.project_id = %(project_id)s)"
)
GLOBAL_BRANCH = "o.scope = 'global'"
# A principal reading all its projects (Principal.all_projects: the dashboard's All projects
# view; row-level security allows it, migration 0022): its own memories of every project.
ALL_PROJECTS_BRANCH = "o.actor_id = %(actor_id)s AND o.scope <> 'global'"
ALL_PROJECTS_VISIBLE = "(o.actor_id = %(actor_id)s OR o.scope = 'global')"

# How often the principal recalled each memory, and when last (kb.memory_use_counts: the
# recall log counted as it grows, migration 0024; the actor's own rows under row-level
# security, and the filter lets it use no other row).
USED = """
JOIN kb.memory_use_counts u ON u.actor_id = %(actor_id)s AND u.canonical_id = o.canonical_id
"""
NEVER_USED = """ AND NOT EXISTS (
    SELECT 1 FROM kb.memory_use_counts r
    WHERE r.actor_id = %(actor_id)s AND r.canonical_id = o.canonical_id
)"""

# The memories of a context (the principal's own, matched ignoring case).
IN_CONTEXT = """EXISTS (
    SELECT 1 FROM kb.graph_relationships e
    JOIN kb.graph_objects c ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
    WHERE e.src_id = o.canonical_id AND e.type = 'BELONGS_TO_CONTEXT' AND e.is_head
      AND e.deleted_at IS NULL AND c.type = 'MemoryContext' AND c.actor_id = %(actor_id)s
      AND lower(c.properties ->> 'name') = lower(%(context)s)
)"""

FILTERS = {
    "category": "o.properties ->> 'category' = %(category)s",
    "scope": "o.scope = %(scope)s",
    "importance": IMPORTANCE + " = %(importance)s",
    "project_id": "o.project_id = %(project_id_filter)s",
    "context": IN_CONTEXT,
    "text": "o.fts @@ websearch_to_tsquery('english', %(text)s)",
    "created_after": "o.created_at >= %(created_after)s",
    "created_before": "o.created_at < %(created_before)s",
    "used_after": "u.last_used >= %(used_after)s",
    "used_before": "u.last_used < %(used_before)s",
}
USE_FILTERS = ("used_after", "used_before")
# Filters that keep a good share of an actor's memories or bound the key itself: with only
# these, a page is read best by walking the key's index (created_at's; for a use sort,
# kb.memory_use_counts') from the cursor and filtering as it goes, which the planner does not
# see when it misjudges how many rows a filter keeps (category: 79 estimated, 11,098 kept at
# 100,000 memories; it then read and sorted every memory of the actor, 490 ms instead of
# 0.6). Full-text and context filters may keep a handful of rows: the planner's choice stands
# for them.
WALKED_FILTERS = frozenset(
    {"category", "scope", "importance", "project_id", "created_after", "created_before"}
)
WALK_THE_INDEX = ("SET LOCAL enable_bitmapscan = off", "SET LOCAL enable_seqscan = off")
PLANNER_CHOOSES = ("SET LOCAL enable_bitmapscan = on", "SET LOCAL enable_seqscan = on")

# One branch of the page: its memories in the key's order, after the cursor.
BRANCH = """(
    SELECT o.canonical_id AS id, {keys}
    FROM kb.graph_objects o
    {uses}
    WHERE o.type = 'Memory' AND o.is_head AND {branch} AND {status} {filters} {unused} {after}
    ORDER BY {order}
    LIMIT %(limit)s
)"""

PAGE = """
SELECT id, {columns} FROM ({branches}) page
ORDER BY {page_order}
LIMIT %(limit)s
"""

# How many memories one branch of the list holds with the filters (the page's, without order
# or cursor): the list's total is the sum of its branches'.
COUNT_BRANCH = """(
    SELECT count(*) AS n
    FROM kb.graph_objects o
    {uses}
    WHERE o.type = 'Memory' AND o.is_head AND {branch} AND {status} {filters}
)"""
COUNT = "SELECT coalesce(sum(n), 0)::bigint FROM ({branches}) counted"
# The count reads a memory's category in its labels (["memory", category, scope], kept with
# the category): the active memories' count index holds them (migration 0021), so a count by
# category is read from the index alone as well.
COUNT_FILTERS = {**FILTERS, "category": "o.labels @> ARRAY[%(category)s::text]"}

# The memories one bulk change of the dashboard changed: the principal's own (and, for an
# administrator, global ones), still deleted or archived with the reason that change wrote.
BULK_CHANGED = {
    "delete": "o.deleted_at IS NOT NULL AND o.delete_reason = %(reason)s",
    "archive": "o.deleted_at IS NULL AND NOT (o.properties ? 'superseded_by') "
    "AND o.properties ? 'archived_at' AND o.properties ->> 'archive_reason' = %(reason)s",
}
CHANGED_TOGETHER = """
SELECT o.canonical_id FROM kb.graph_objects o
WHERE o.type = 'Memory' AND o.is_head AND ({branches}) AND {changed}
ORDER BY o.canonical_id
LIMIT %(limit)s
"""

# Every memory of `ids` (head version, any status) in full, as list and get show it.
ROWS = (
    store.ANY_STATUS
    + """WHERE o.canonical_id = ANY(%(ids)s) AND o.is_head AND o.type = 'Memory' AND {visible}
"""
)

# How many words of a text the full-text search can look for (0: only stop words).
QUERY_WORDS = "SELECT numnode(websearch_to_tsquery('english', %(text)s))"


# A memory in any status, with where it was saved and by whom (store.ANY_STATUS).
BrowseRow = store.InactiveRow


def _params(principal: Principal, **more: Any) -> dict[str, Any]:
    return {"actor_id": principal.actor_id, "project_id": principal.project_id, **more}


def query_words(conn: Connection[Any], text: str) -> int:
    row = conn.execute(QUERY_WORDS, {"text": text}).fetchone()
    return 0 if row is None else int(row[0])


def page(
    conn: Connection[Any],
    principal: Principal,
    *,
    status: str,
    sort: str,
    filters: dict[str, Any],
    after: Sequence[Any] | None,
    limit: int,
    reverse: bool = False,
) -> list[tuple[Any, ...]]:
    """One page of memory ids in the sort's order: (id, *sort key values) per row.

    `filters`: FILTERS' names with their values (None: no filter); `after`: the key values
    of the last row of the previous page (a cursor's). `reverse`: in the opposite order
    (after `after` in that order: the rows before it, nearest first; with no `after`, the
    list's last rows, last first), which reads the same index backwards."""
    key = SORTS[sort]
    if reverse:
        key = replace(key, descending=not key.descending)
    used, params, conditions = _filtered(principal, filters)
    params["limit"] = limit
    if after is not None:
        params.update({f"after_{index}": value for index, value in enumerate(after)})
    # the parts: None (no recall log), "used" (memories in it), "unused" (never recalled)
    parts: list[str | None] = [None]
    if any(name in used for name in USE_FILTERS):
        parts = ["used"]
    elif key.unused is not None:
        # every row of the first part comes before every row of the second in the key's
        # order (used: a count above 0, a real time), so the second is read only when the
        # first has too few rows
        parts = ["used", "unused"] if key.descending else ["unused", "used"]
    visibility = _branches(principal, used.get("scope"))
    columns = [sql.Identifier(f"k{i}") for i in range(len(key.expressions))]
    direction = sql.SQL("DESC" if key.descending else "ASC")
    found: list[tuple[Any, ...]] = []
    for part in parts:
        if len(found) >= limit:
            break
        params["limit"] = limit - len(found)
        expressions = list(key.expressions)
        if part == "unused":
            expressions[0] = f"%(unused)s::{key.types[0]}"
            params["unused"] = key.unused
        after_sql = _after(key, part, after)
        if after_sql is None:
            continue  # the cursor is past every row of this part
        keys = [sql.SQL(e) for e in expressions]
        key_list = sql.SQL(", ").join(
            sql.SQL("{} AS {}").format(e, c) for e, c in zip(keys, columns, strict=True)
        )
        # a constant key is no order: leave it out, so that the index gives the order
        ordered = keys[1:] if part == "unused" else keys
        order = sql.SQL(", ").join(sql.SQL("{} {}").format(k, direction) for k in ordered)
        branches = [
            sql.SQL(BRANCH).format(
                keys=key_list,
                uses=sql.SQL(USED if part == "used" else ""),
                branch=sql.SQL(branch),
                status=sql.SQL(STATUSES[status]),
                filters=conditions,
                unused=sql.SQL(NEVER_USED if part == "unused" else ""),
                after=after_sql,
                order=order,
            )
            for branch in visibility
        ]
        statement = sql.SQL(PAGE).format(
            columns=sql.SQL(", ").join(columns),
            branches=sql.SQL(" UNION ALL ").join(branches),
            page_order=sql.SQL(", ").join(sql.SQL("{} {}").format(c, direction) for c in columns),
        )
        # (the recall log's part too: kb.memory_use_counts' indexes give the use sorts'
        # order, migration 0024)
        walk = used.keys() <= WALKED_FILTERS
        for setting in WALK_THE_INDEX if walk else ():
            conn.execute(setting)
        try:
            # never prepared: a generic plan (without the principal and the filters) is slower
            rows = conn.execute(statement, params, prepare=False).fetchall()
        finally:
            for setting in PLANNER_CHOOSES if walk else ():
                conn.execute(setting)
        found.extend(tuple(row) for row in rows)
    return found


def _filtered(
    principal: Principal, filters: dict[str, Any], conditions_of: dict[str, str] = FILTERS
) -> tuple[dict[str, Any], dict[str, Any], sql.Composable]:
    """The filters in use, the statement's parameters and the filters' conditions (those of
    `conditions_of`: FILTERS, or COUNT_FILTERS)."""
    used = {name: value for name, value in filters.items() if value is not None}
    params = _params(principal)
    params.update({("project_id_filter" if k == "project_id" else k): v for k, v in used.items()})
    conditions = sql.SQL("").join(
        sql.SQL(" AND " + conditions_of[name]) for name in conditions_of if name in used
    )
    return used, params, conditions


def _branches(principal: Principal, scope: str | None) -> list[str]:
    """The visibility branches a list reads: own memories (of every project for a principal
    reading all) unless only global ones are asked for, global ones unless another scope is."""
    own = ALL_PROJECTS_BRANCH if principal.all_projects else OWN_BRANCH
    return [
        branch
        for branch, wanted in (
            (own, scope != "global"),
            (GLOBAL_BRANCH, scope in (None, "global")),
        )
        if wanted
    ]


def count(
    conn: Connection[Any], principal: Principal, *, status: str, filters: dict[str, Any]
) -> int:
    """How many memories the list of these filters holds (every page of it), under the same
    row-level security and visibility as `page`."""
    used, params, conditions = _filtered(principal, filters, COUNT_FILTERS)
    uses = any(name in used for name in USE_FILTERS)
    branches = [
        sql.SQL(COUNT_BRANCH).format(
            uses=sql.SQL(USED if uses else ""),
            branch=sql.SQL(branch),
            status=sql.SQL(STATUSES[status]),
            filters=conditions,
        )
        for branch in _branches(principal, used.get("scope"))
    ]
    statement = sql.SQL(COUNT).format(branches=sql.SQL(" UNION ALL ").join(branches))
    row = conn.execute(statement, params, prepare=False).fetchone()
    return 0 if row is None else int(row[0])


def changed_together(
    conn: Connection[Any], principal: Principal, change: str, reason: str, limit: int
) -> list[UUID]:
    """The memories (at most `limit`) still deleted or archived (`change`) with `reason`
    that the principal owns, and global ones for an administrator."""
    branches = [OWN_BRANCH, *([GLOBAL_BRANCH] if principal.is_admin else [])]
    statement = sql.SQL(CHANGED_TOGETHER).format(
        branches=sql.SQL(" OR ").join(sql.SQL("({})").format(sql.SQL(b)) for b in branches),
        changed=sql.SQL(BULK_CHANGED[change]),
    )
    rows = conn.execute(statement, _params(principal, reason=reason, limit=limit)).fetchall()
    return [row[0] for row in rows]


def _after(key: SortKey, part: str | None, after: Sequence[Any] | None) -> sql.Composable | None:
    """The keyset condition of a part: rows after the cursor's key (an empty condition on
    the first page), or None when no row of the part comes after it."""
    if after is None:
        return sql.SQL("")
    first = 0
    if part == "unused":  # the first key is the same constant for every row of the part
        if after[0] != key.unused:
            past = after[0] > key.unused if key.descending else after[0] < key.unused
            return sql.SQL("") if past else None
        first = 1
    placeholders = [
        sql.SQL("{}::{}").format(sql.Placeholder(f"after_{i}"), sql.SQL(key.types[i]))
        for i in range(first, len(key.types))
    ]
    return sql.SQL("AND ({}) {} ({})").format(
        sql.SQL(", ").join(sql.SQL(e) for e in key.expressions[first:]),
        sql.SQL("<" if key.descending else ">"),
        sql.SQL(", ").join(placeholders),
    )


def rows(conn: Connection[Any], principal: Principal, ids: Sequence[UUID]) -> dict[UUID, BrowseRow]:
    """The memories of `ids` that the principal sees (any status), by id."""
    statement = sql.SQL(ROWS).format(
        provenance=store.provenance_join(**store.ANY_STATUS_JOIN),
        evidence=store.evidence_join("o.canonical_id"),
        visible=sql.SQL(ALL_PROJECTS_VISIBLE if principal.all_projects else store.VISIBLE),
    )
    with conn.cursor(row_factory=class_row(BrowseRow)) as cur:
        cur.execute(statement, _params(principal, ids=list(ids)), prepare=False)
        return {row.id: row for row in cur.fetchall()}


# What a memory superseded, and what those superseded, in turn (live SUPERSEDES edges: a
# restored memory's edge is deleted), nearest first; at most %(depth)s steps.
SUPERSEDED_CHAIN = """
WITH RECURSIVE chain(id, depth) AS (
    SELECT e.dst_id, 1 FROM kb.graph_relationships e
    WHERE e.src_id = %(id)s AND e.type = 'SUPERSEDES' AND e.is_head AND e.deleted_at IS NULL
    UNION
    SELECT e.dst_id, chain.depth + 1 FROM chain
    JOIN kb.graph_relationships e
      ON e.src_id = chain.id AND e.type = 'SUPERSEDES' AND e.is_head AND e.deleted_at IS NULL
    WHERE chain.depth < %(depth)s
)
SELECT chain.id, min(chain.depth) AS depth FROM chain GROUP BY chain.id ORDER BY depth, chain.id
"""

# What superseded a memory, and what superseded that, in turn (its superseded_by property,
# which a global memory keeps even when another administrator's edge is not visible).
SUPERSEDING_CHAIN = """
WITH RECURSIVE chain(id, depth) AS (
    SELECT (o.properties ->> 'superseded_by')::uuid, 1 FROM kb.graph_objects o
    WHERE o.canonical_id = %(id)s AND o.is_head AND o.properties ? 'superseded_by'
    UNION
    SELECT (o.properties ->> 'superseded_by')::uuid, chain.depth + 1 FROM chain
    JOIN kb.graph_objects o ON o.canonical_id = chain.id AND o.is_head
    WHERE o.properties ? 'superseded_by' AND chain.depth < %(depth)s
)
SELECT chain.id, min(chain.depth) AS depth FROM chain GROUP BY chain.id ORDER BY depth, chain.id
"""

# A memory's live edges both ways, with the object at the other end when the principal sees
# it (an edge to an object it does not see is left out).
NEIGHBOURS = """
SELECT e.type, CASE WHEN e.src_id = %(id)s THEN 'out' ELSE 'in' END AS direction,
       other.canonical_id AS other_id, other.type AS other_type,
       left(coalesce(other.properties ->> 'content', other.properties ->> 'name',
                     other.properties ->> 'summary', other.properties ->> 'title',
                     other.key, other.type), 200) AS other_label,
       e.created_at
FROM kb.graph_relationships e
JOIN kb.graph_objects other
  ON other.canonical_id = CASE WHEN e.src_id = %(id)s THEN e.dst_id ELSE e.src_id END
 AND other.is_head
WHERE (e.src_id = %(id)s OR e.dst_id = %(id)s) AND e.is_head AND e.deleted_at IS NULL
ORDER BY e.type, e.created_at, other.canonical_id
LIMIT %(limit)s
"""

RECENT_RECALLS = """
SELECT recalled_at, project_id, query, query_sha256 IS NOT NULL AS withheld
FROM kb.memory_recalls
WHERE canonical_id = %(id)s AND actor_id = %(actor_id)s
ORDER BY recalled_at DESC
LIMIT %(limit)s
"""

# The injections of a memory into the actor's sessions, newest first, and how many in all
# (kb.injections: the actor's own rows under row-level security)
RECENT_INJECTIONS_OF = """
SELECT created_at, session_id, client, event, count(*) OVER () AS total
FROM kb.injections
WHERE actor_id = %(actor_id)s AND %(id)s = ANY(memory_ids)
ORDER BY created_at DESC
LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class RecallUse:
    recalled_at: datetime
    project_id: UUID
    query: str | None
    withheld: bool  # the query held a secret: only its SHA-256 was kept


@dataclass(frozen=True, slots=True)
class InjectionUse:
    created_at: datetime
    session_id: str
    client: str
    event: str
    total: int


@dataclass(frozen=True, slots=True)
class Neighbour:
    type: str
    direction: str
    other_id: UUID
    other_type: str
    other_label: str | None
    created_at: datetime


def superseded_chain(conn: Connection[Any], memory_id: UUID, depth: int) -> list[UUID]:
    rows = conn.execute(SUPERSEDED_CHAIN, {"id": memory_id, "depth": depth}).fetchall()
    return [UUID(str(row[0])) for row in rows]


def superseding_chain(conn: Connection[Any], memory_id: UUID, depth: int) -> list[UUID]:
    rows = conn.execute(SUPERSEDING_CHAIN, {"id": memory_id, "depth": depth}).fetchall()
    return [UUID(str(row[0])) for row in rows]


def neighbours(conn: Connection[Any], memory_id: UUID, limit: int) -> list[Neighbour]:
    with conn.cursor(row_factory=class_row(Neighbour)) as cur:
        cur.execute(NEIGHBOURS, {"id": memory_id, "limit": limit})
        return cur.fetchall()


def recent_recalls(
    conn: Connection[Any], principal: Principal, memory_id: UUID, limit: int
) -> list[RecallUse]:
    with conn.cursor(row_factory=class_row(RecallUse)) as cur:
        cur.execute(RECENT_RECALLS, _params(principal, id=memory_id, limit=limit))
        return cur.fetchall()


def recent_injections_of(
    conn: Connection[Any], principal: Principal, memory_id: UUID, limit: int
) -> list[InjectionUse]:
    with conn.cursor(row_factory=class_row(InjectionUse)) as cur:
        cur.execute(RECENT_INJECTIONS_OF, _params(principal, id=memory_id, limit=limit))
        return cur.fetchall()


# The principal's evidence for a memory (kb.memory_evidence: its own rows under row-level
# security), newest first: each save, repeat, reinforcement and capture that backed it.
EVIDENCE = """
SELECT created_at, origin, session_id, episode_id, evidence, independent,
       confidence_before, confidence_after
FROM kb.memory_evidence
WHERE canonical_id = %(id)s AND actor_id = %(actor_id)s
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    created_at: datetime
    origin: str
    session_id: str | None
    episode_id: UUID | None
    evidence: str | None
    independent: bool
    confidence_before: float | None
    confidence_after: float | None


def evidence(
    conn: Connection[Any], principal: Principal, memory_id: UUID, limit: int
) -> list[EvidenceRow]:
    with conn.cursor(row_factory=class_row(EvidenceRow)) as cur:
        cur.execute(EVIDENCE, _params(principal, id=memory_id, limit=limit))
        return cur.fetchall()


VERSIONS = """
SELECT version, properties, deleted_at, delete_reason, updated_at FROM kb.graph_objects
WHERE canonical_id = %(id)s
ORDER BY version
"""


@dataclass(frozen=True, slots=True)
class VersionRow:
    version: int
    properties: dict[str, Any]
    deleted_at: datetime | None
    delete_reason: str | None
    updated_at: datetime


def versions(conn: Connection[Any], memory_id: UUID) -> list[VersionRow]:
    """Every version of a memory, oldest first (tombstones included)."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(VERSIONS, {"id": memory_id})
        return cur.fetchall()


# When the memory replaced another (a SUPERSEDES edge from it was made) and when that was
# undone (the edge's tombstone): the moments a version of it took over what the other had,
# and gave it back (MemoryService.give_back). Edges carry their first version's created_at.
REPLACEMENTS = """
SELECT dst_id, created_at, deleted_at FROM kb.graph_relationships
WHERE src_id = %(id)s AND type = 'SUPERSEDES'
ORDER BY version
"""


def replacements(
    conn: Connection[Any], memory_id: UUID
) -> dict[datetime, tuple[Literal["took", "gave back"], UUID]]:
    """By moment: the memory took over another's properties (it replaced it) or gave them
    back (the replacement was undone), and which memory that was."""
    found: dict[datetime, tuple[Literal["took", "gave back"], UUID]] = {}
    for other, created, deleted in conn.execute(REPLACEMENTS, {"id": memory_id}):
        found.setdefault(created, ("took", other))
        if deleted is not None:
            found[deleted] = ("gave back", other)
    return found


# -- possible duplicates (kb.possible_duplicates, the principal's own rows) ------------------

# Pairs still waiting for a decision whose two memories are active and visible, newest first.
# the principal's pairs waiting for a decision whose two memories are active and visible
OPEN = """
FROM kb.possible_duplicates d
WHERE d.actor_id = %(actor_id)s AND d.decision IS NULL
  AND EXISTS (SELECT 1 FROM kb.graph_objects o
              WHERE o.canonical_id = d.memory_id AND {active} AND {visible})
  AND EXISTS (SELECT 1 FROM kb.graph_objects o
              WHERE o.canonical_id = d.duplicate_of AND {active} AND {visible})
"""
OPEN_PAIRS = f"""
SELECT d.id, d.memory_id, d.duplicate_of, d.similarity, d.created_at, d.reason
{OPEN}
  {{after}}
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s
"""
COUNT_OPEN_PAIRS = f"SELECT count(*) {OPEN}"
OPEN_PAIRS_AFTER = "AND (d.created_at, d.id) < (%(after_time)s, %(after_id)s)"

LOCK_PAIR = """
SELECT id, memory_id, duplicate_of, similarity, created_at, decision, reason, kept_id,
       decided_at
FROM kb.possible_duplicates
WHERE id = %(id)s AND actor_id = %(actor_id)s
FOR UPDATE
"""

DECIDE_PAIR = """
UPDATE kb.possible_duplicates SET decision = %(decision)s, kept_id = %(kept_id)s,
       decided_at = now()
WHERE id = %(id)s AND actor_id = %(actor_id)s AND decision IS NULL
RETURNING decided_at
"""

# An undo: the pair waits for a decision again
REOPEN_PAIR = """
UPDATE kb.possible_duplicates SET decision = NULL, kept_id = NULL, decided_at = NULL
WHERE id = %(id)s AND actor_id = %(actor_id)s AND decision IS NOT NULL
"""

# At most two of the principal's pairs (decided or not) whose id begins with a prefix: the
# lowest and highest ids it can begin
PAIR_ID_PREFIX = """
SELECT id FROM kb.possible_duplicates
WHERE actor_id = %(actor_id)s AND id BETWEEN %(lowest)s AND %(highest)s
ORDER BY id
LIMIT 2
"""

# The CONFLICTS_WITH edges between two memories that keep_both removed ("both are true")
KEPT_BOTH_CONFLICTS = """
SELECT r.canonical_id FROM kb.graph_relationships r
WHERE r.type = 'CONFLICTS_WITH' AND r.is_head AND r.deleted_at IS NOT NULL
  AND r.delete_reason = %(reason)s
  AND ((r.src_id = %(a)s AND r.dst_id = %(b)s) OR (r.src_id = %(b)s AND r.dst_id = %(a)s))
"""


@dataclass(frozen=True, slots=True)
class PairRow:
    id: UUID
    memory_id: UUID
    duplicate_of: UUID
    similarity: float
    created_at: datetime
    decision: str | None = None
    reason: str | None = None
    kept_id: UUID | None = None
    decided_at: datetime | None = None


def open_pairs(
    conn: Connection[Any],
    principal: Principal,
    after: tuple[datetime, UUID] | None,
    limit: int,
) -> list[PairRow]:
    statement = sql.SQL(OPEN_PAIRS).format(
        active=sql.SQL(store.ACTIVE),
        visible=sql.SQL(store.VISIBLE),
        after=sql.SQL(OPEN_PAIRS_AFTER if after is not None else ""),
    )
    params = _params(principal, limit=limit)
    if after is not None:
        params.update(after_time=after[0], after_id=after[1])
    with conn.cursor(row_factory=class_row(PairRow)) as cur:
        cur.execute(statement, params, prepare=False)
        return cur.fetchall()


def count_open_pairs(conn: Connection[Any], principal: Principal) -> int:
    """How many of the principal's pairs wait for a decision (open_pairs, all pages)."""
    statement = sql.SQL(COUNT_OPEN_PAIRS).format(
        active=sql.SQL(store.ACTIVE), visible=sql.SQL(store.VISIBLE)
    )
    row = conn.execute(statement, _params(principal), prepare=False).fetchone()
    return 0 if row is None else int(row[0])


def reopen_pair(conn: Connection[Any], principal: Principal, pair_id: UUID) -> None:
    conn.execute(REOPEN_PAIR, _params(principal, id=pair_id))


def kept_both_conflicts(conn: Connection[Any], a: UUID, b: UUID, reason: str) -> list[UUID]:
    """The CONFLICTS_WITH edges between `a` and `b` deleted with this reason (by keep_both)."""
    rows = conn.execute(KEPT_BOTH_CONFLICTS, {"a": a, "b": b, "reason": reason})
    return [UUID(str(row[0])) for row in rows]


def pair_ids_with_prefix(conn: Connection[Any], principal: Principal, prefix: str) -> list[UUID]:
    """At most two of the principal's pairs whose id's hex digits begin with `prefix`
    (lower-case hex, at most 32 digits)."""
    lowest, highest = store.prefix_bounds(prefix)
    rows = conn.execute(PAIR_ID_PREFIX, _params(principal, lowest=lowest, highest=highest))
    return [UUID(str(row[0])) for row in rows]


def lock_pair(conn: Connection[Any], principal: Principal, pair_id: UUID) -> PairRow | None:
    """The principal's pair, locked until the transaction ends (None: no such pair of its)."""
    with conn.cursor(row_factory=class_row(PairRow)) as cur:
        cur.execute(LOCK_PAIR, _params(principal, id=pair_id))
        return cur.fetchone()


def decide_pair(
    conn: Connection[Any],
    principal: Principal,
    pair_id: UUID,
    decision: str,
    kept_id: UUID | None,
) -> datetime | None:
    """Record the decision of an open pair; None when it was decided already."""
    params = _params(principal, id=pair_id, decision=decision, kept_id=kept_id)
    row = conn.execute(DECIDE_PAIR, params).fetchone()
    return None if row is None else row[0]


# -- contexts -------------------------------------------------------------------------------

# The principal's contexts, with how many of its active memories each holds.
CONTEXTS = """
SELECT c.canonical_id AS id, c.properties ->> 'name' AS name,
       coalesce(round((c.properties ->> 'priority')::numeric)::int, 50) AS priority,
       (SELECT count(*) FROM kb.graph_relationships e
        JOIN kb.graph_objects o ON o.canonical_id = e.src_id AND {active}
        WHERE e.dst_id = c.canonical_id AND e.type = 'BELONGS_TO_CONTEXT' AND e.is_head
          AND e.deleted_at IS NULL) AS memory_count
FROM kb.graph_objects c
WHERE c.type = 'MemoryContext' AND c.actor_id = %(actor_id)s AND c.is_head
  AND c.deleted_at IS NULL AND (%(id)s::uuid IS NULL OR c.canonical_id = %(id)s::uuid)
ORDER BY lower(c.properties ->> 'name'), c.canonical_id
"""


@dataclass(frozen=True, slots=True)
class ContextRow:
    id: UUID
    name: str
    priority: int
    memory_count: int


def contexts(
    conn: Connection[Any], principal: Principal, context_id: UUID | None = None
) -> list[ContextRow]:
    """The principal's contexts (or the one with `context_id`), by name."""
    statement = sql.SQL(CONTEXTS).format(active=sql.SQL(store.ACTIVE))
    with conn.cursor(row_factory=class_row(ContextRow)) as cur:
        cur.execute(statement, _params(principal, id=context_id))
        return cur.fetchall()


# -- statistics -----------------------------------------------------------------------------

# The memories the principal sees (head versions), counted by status, category, scope, the
# project they were saved in, and the UTC day they were created and deleted on if that was
# since %(since)s: one read of the memories for every count of the statistics.
COUNTS = """
SELECT CASE WHEN o.deleted_at IS NOT NULL THEN 'deleted'
            WHEN o.properties ? 'superseded_by' THEN 'superseded'
            WHEN o.properties ? 'archived_at' THEN 'archived'
            ELSE 'active' END AS status,
       coalesce(o.properties ->> 'category', '') AS category, o.scope, o.project_id,
       coalesce(o.properties ->> 'importance', 'normal') AS importance,
       CASE WHEN o.created_at >= %(since)s
            THEN (o.created_at AT TIME ZONE 'UTC')::date END AS created_day,
       CASE WHEN o.deleted_at >= %(since)s
            THEN (o.deleted_at AT TIME ZONE 'UTC')::date END AS deleted_day,
       count(*) AS n
FROM kb.graph_objects o
WHERE o.type = 'Memory' AND o.is_head AND {visible}
GROUP BY 1, 2, 3, 4, 5, 6, 7
"""

# The principal's embedding jobs (that table has no row-level security: filtered here).
EMBEDDING_QUEUE = """
SELECT status, count(*) FROM kb.graph_embedding_jobs
WHERE actor_id = %(actor_id)s AND status IN ('pending', 'running', 'dead')
GROUP BY status
"""

CAPTURE_QUEUE = """
SELECT status, count(*) FROM kb.capture_windows
WHERE actor_id = %(actor_id)s
GROUP BY status
"""

DEAD_WINDOWS = """
SELECT id, session_id, client, first_turn, end_turn, attempts, last_error, updated_at
FROM kb.capture_windows
WHERE actor_id = %(actor_id)s AND status = 'dead'
ORDER BY updated_at DESC, id
LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class CountRow:
    status: str
    category: str
    scope: str
    project_id: UUID
    importance: str
    created_day: date | None
    deleted_day: date | None
    n: int


@dataclass(frozen=True, slots=True)
class DeadWindow:
    id: UUID
    session_id: str
    client: str
    first_turn: int
    end_turn: int
    attempts: int
    last_error: str | None
    updated_at: datetime


def counts(conn: Connection[Any], principal: Principal, since: datetime) -> list[CountRow]:
    statement = sql.SQL(COUNTS).format(visible=sql.SQL(store.VISIBLE))
    with conn.cursor(row_factory=class_row(CountRow)) as cur:
        cur.execute(statement, _params(principal, since=since), prepare=False)
        return cur.fetchall()


def status_counts(conn: Connection[Any], principal: Principal, queue: str) -> dict[str, int]:
    """The principal's items of a queue ("embedding" or "capture") by status."""
    query = EMBEDDING_QUEUE if queue == "embedding" else CAPTURE_QUEUE
    return {str(row[0]): int(row[1]) for row in conn.execute(query, _params(principal))}


def dead_windows(conn: Connection[Any], principal: Principal, limit: int) -> list[DeadWindow]:
    with conn.cursor(row_factory=class_row(DeadWindow)) as cur:
        cur.execute(DEAD_WINDOWS, _params(principal, limit=limit))
        return cur.fetchall()


# -- the injection log ----------------------------------------------------------------------

# Sessions with answers of injection, the most recent first (keyset on the last injection's time and
# the session id).
INJECTION_SESSIONS = """
SELECT i.session_id, max(i.client) AS client, max(i.created_at) AS last_at,
       min(i.created_at) AS first_at, count(*) AS injections,
       sum(i.estimated_tokens) AS estimated_tokens
FROM kb.injections i
WHERE i.actor_id = %(actor_id)s {session} {project}
GROUP BY i.session_id
{after}
ORDER BY last_at DESC, i.session_id DESC
LIMIT %(limit)s
"""
# only the answers in the principal's project (the dashboard's log of the project shown)
IN_THIS_PROJECT = "AND i.project_id = %(project_id)s"
INJECTION_SESSIONS_AFTER = (
    "HAVING (max(i.created_at), i.session_id) < (%(after_time)s, %(after_session)s)"
)

# Each session's injections, the latest %(per_session)s, newest first.
SESSION_INJECTIONS = """
SELECT id, session_id, project_id, event, outcome, prompt, prompt_length, prompt_sha256,
       memory_ids, memory_texts, memory_tokens, estimated_tokens, budget_tokens, created_at
FROM (
    SELECT i.*, row_number() OVER (PARTITION BY i.session_id
                                   ORDER BY i.created_at DESC, i.id) AS n
    FROM kb.injections i
    WHERE i.actor_id = %(actor_id)s AND i.session_id = ANY(%(sessions)s) {project}
) i
WHERE n <= %(per_session)s
ORDER BY session_id, created_at DESC, id
"""

# The content, status and category of the memories of `ids` that the principal sees (any
# status).
CONTENTS = """
SELECT o.canonical_id, o.properties ->> 'content',
       CASE WHEN o.deleted_at IS NOT NULL THEN 'deleted'
            WHEN o.properties ? 'superseded_by' THEN 'superseded'
            WHEN o.properties ? 'archived_at' THEN 'archived' ELSE 'active' END,
       o.properties ->> 'category'
FROM kb.graph_objects o
WHERE o.canonical_id = ANY(%(ids)s) AND o.is_head AND o.type = 'Memory' AND {visible}
"""


@dataclass(frozen=True, slots=True)
class SessionRow:
    session_id: str
    client: str
    last_at: datetime
    first_at: datetime
    injections: int
    estimated_tokens: int


@dataclass(frozen=True, slots=True)
class InjectionRow:
    id: UUID
    session_id: str
    project_id: UUID
    event: str
    outcome: str
    prompt: str | None
    prompt_length: int | None
    prompt_sha256: str | None
    memory_ids: list[UUID]
    memory_texts: list[str] | None  # NULL before migration 0019
    memory_tokens: list[int] | None
    estimated_tokens: int
    budget_tokens: int
    created_at: datetime


def injection_sessions(
    conn: Connection[Any],
    principal: Principal,
    session_id: str | None,
    after: tuple[datetime, str] | None,
    limit: int,
    this_project: bool = False,
) -> list[SessionRow]:
    statement = sql.SQL(INJECTION_SESSIONS).format(
        session=sql.SQL("AND i.session_id = %(session_id)s" if session_id is not None else ""),
        project=sql.SQL(IN_THIS_PROJECT if this_project else ""),
        after=sql.SQL(INJECTION_SESSIONS_AFTER if after is not None else ""),
    )
    params = _params(principal, session_id=session_id, limit=limit)
    if after is not None:
        params.update(after_time=after[0], after_session=after[1])
    with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        cur.execute(statement, params, prepare=False)
        return cur.fetchall()


def session_injections(
    conn: Connection[Any],
    principal: Principal,
    sessions: list[str],
    per_session: int,
    this_project: bool = False,
) -> list[InjectionRow]:
    params = _params(principal, sessions=sessions, per_session=per_session)
    statement = sql.SQL(SESSION_INJECTIONS).format(
        project=sql.SQL(IN_THIS_PROJECT if this_project else "")
    )
    with conn.cursor(row_factory=class_row(InjectionRow)) as cur:
        cur.execute(statement, params, prepare=False)
        return cur.fetchall()


def contents(
    conn: Connection[Any], principal: Principal, ids: Sequence[UUID]
) -> dict[UUID, tuple[str, str, str]]:
    """(content, status, category) of the memories of `ids` that the principal sees."""
    statement = sql.SQL(CONTENTS).format(visible=sql.SQL(store.VISIBLE))
    rows = conn.execute(statement, _params(principal, ids=list(ids)), prepare=False)
    return {UUID(str(row[0])): (str(row[1]), str(row[2]), str(row[3])) for row in rows}


# -- LLM usage ------------------------------------------------------------------------------

LLM_USAGE = """
SELECT (created_at AT TIME ZONE 'UTC')::date AS day, model, count(*) AS calls,
       count(*) FILTER (WHERE outcome = 'error') AS errors,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens
FROM kb.llm_calls
WHERE actor_id = %(actor_id)s AND created_at >= %(since)s
GROUP BY 1, 2
ORDER BY 1, 2
"""


@dataclass(frozen=True, slots=True)
class UsageRow:
    day: date
    model: str
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int


def llm_usage(conn: Connection[Any], principal: Principal, since: datetime) -> list[UsageRow]:
    with conn.cursor(row_factory=class_row(UsageRow)) as cur:
        cur.execute(LLM_USAGE, _params(principal, since=since))
        return cur.fetchall()


# The projects an actor has worked in, as its rows show them: where its user-scope memories
# were saved (one index probe per project: a loose scan of (actor_id, scope, project_id)),
# where sessions were injected into and captured, and the project acted in; read as the
# principal (row-level security: the actor's own rows only).
# The projects where the actor saved memories, one index probe per project and scope (a loose
# scan of graph_objects_actor_idx: actor, scope, project; 'project' and 'user' sort after
# 'global'): under row-level security, its project-scope ones are found in other projects
# only when the transaction reads all of them.
ACTOR_PROJECTS = """
WITH RECURSIVE saved(scope, project_id) AS (
    (SELECT scope, project_id FROM kb.graph_objects
     WHERE actor_id = %(actor_id)s AND scope > 'global'
     ORDER BY scope, project_id LIMIT 1)
    UNION ALL
    SELECT later.scope, later.project_id FROM saved s, LATERAL (
        SELECT o.scope, o.project_id FROM kb.graph_objects o
        WHERE o.actor_id = %(actor_id)s AND (o.scope, o.project_id) > (s.scope, s.project_id)
        ORDER BY o.scope, o.project_id LIMIT 1
    ) later
)
SELECT p.project_id, n.name FROM (
    SELECT project_id FROM saved
    UNION SELECT DISTINCT project_id FROM kb.injections WHERE actor_id = %(actor_id)s
    UNION SELECT DISTINCT project_id FROM kb.capture_windows WHERE actor_id = %(actor_id)s
    UNION SELECT project_id FROM kb.project_names WHERE actor_id = %(actor_id)s
    UNION SELECT %(project_id)s::uuid
    ORDER BY 1
    LIMIT %(limit)s
) p
LEFT JOIN kb.project_names n ON n.actor_id = %(actor_id)s AND n.project_id = p.project_id
ORDER BY n.name IS NULL, lower(n.name), p.project_id
"""


def actor_projects(
    conn: Connection[Any], principal: Principal, limit: int
) -> list[tuple[UUID, str | None]]:
    """The actor's projects with its names of them: named ones first, by name."""
    rows = conn.execute(
        ACTOR_PROJECTS,
        {"actor_id": principal.actor_id, "project_id": principal.project_id, "limit": limit},
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


# A client session's capture windows, oldest first, with what their LLM calls cost
# (kb.capture_windows and kb.llm_calls: the actor's own rows under row-level security)
SESSION_CAPTURE = """
SELECT w.id, w.project_id, w.first_turn, w.end_turn, w.status, w.attempts, w.created_at,
       w.updated_at, w.episode_id, w.outcome, w.last_error,
       coalesce(calls.per_call, '[]') AS per_call
FROM kb.capture_windows w
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_array(c.model, c.input_tokens, c.output_tokens)) AS per_call
    FROM kb.llm_calls c WHERE c.window_id = w.id AND c.actor_id = w.actor_id
) calls ON true
WHERE w.actor_id = %(actor_id)s AND w.session_id = %(session_id)s
  AND w.project_id = %(project_id)s
ORDER BY w.first_turn, w.created_at
LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class CaptureWindowRow:
    id: UUID
    project_id: UUID
    first_turn: int
    end_turn: int
    status: str
    attempts: int
    created_at: datetime
    updated_at: datetime
    episode_id: UUID | None
    outcome: dict[str, Any] | None
    last_error: str | None
    per_call: list[list[Any]]  # [model, input tokens, output tokens] of each LLM call


def session_capture(
    conn: Connection[Any], principal: Principal, session_id: str, limit: int
) -> list[CaptureWindowRow]:
    params = _params(principal, session_id=session_id, limit=limit)
    with conn.cursor(row_factory=class_row(CaptureWindowRow)) as cur:
        cur.execute(SESSION_CAPTURE, params)
        return cur.fetchall()
