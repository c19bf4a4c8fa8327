"""BrowseService: what the REST API and the dashboard show of a principal's memories.

The memory list with filters, sorts and cursor pages; one memory with its versions, its
supersession chain both ways, its relationships, provenance and uses; contexts (list,
rename, priority); statistics; the injection log; LLM usage and its cost; the capture queue.
Every method acts for a principal under row-level security (memory.service.acting_for), reads
need memory:read and changes memory:write, and another actor's memory id is not found exactly
like a missing one. Results are plain JSON-serializable dicts. The SQL is browse_store's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any, Literal, get_args
from uuid import UUID

from psycopg import Connection
from typing_extensions import TypedDict

from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.errors import InvalidInput, MemoryNotFound, PermissionDenied
from emergent_memory.memory import browse_store, validation
from emergent_memory.memory.models import MemoryRecord
from emergent_memory.memory.service import _provenance, acting_for

BrowseStatus = Literal["active", "superseded", "deleted", "all"]
BrowseSort = Literal["recent", "oldest", "most_used", "least_used", "last_used", "confidence"]
MemoryStatus = Literal["active", "superseded", "deleted"]
BROWSE_STATUSES: tuple[BrowseStatus, ...] = get_args(BrowseStatus)
BROWSE_SORTS: tuple[BrowseSort, ...] = get_args(BrowseSort)
LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT = 50, 200
CHAIN_DEPTH = 50  # supersession steps get follows each way at most
NEIGHBOURS_LIMIT = 200
RECALLS_SHOWN = 10
MAX_TEXT = 500  # characters of a list's text filter
CURSOR_VERSION = 1


class BrowsedMemory(MemoryRecord):
    """A memory in any status: `superseded_by` the id of the memory that replaced it,
    `deleted_at` when it was deleted, `project_id` the project it was saved in."""

    status: MemoryStatus
    superseded_by: str | None
    deleted_at: str | None
    project_id: str


class BrowseResult(TypedDict):
    """A page of memories; `next_cursor` continues it (None: this was the last page)."""

    memories: list[BrowsedMemory]
    next_cursor: str | None


class Version(TypedDict):
    """One version of a memory, oldest first: `created_at` is when the version was made,
    `change` says in words what it changed from the one before, `changed` which fields."""

    version: int
    content: str
    category: str
    confidence: float | None
    created_at: str
    deleted_at: str | None
    change: str
    changed: list[str]


class ChainLink(TypedDict):
    id: str
    content: str
    status: MemoryStatus


class Relationship(TypedDict):
    """A live edge of the memory: `direction` "out" from it, "in" to it; the object at the
    other end (`other_label`: its content, name or summary, cut to 200 characters)."""

    type: str
    direction: str
    other_id: str
    other_type: str
    other_label: str | None


class Recall(TypedDict):
    recalled_at: str
    project_id: str


class MemoryDetail(BrowsedMemory):
    """A memory's page: the memory, its versions, what it superseded (nearest first, in
    `supersedes`) and what superseded it (`superseded_by_chain`, nearest first), its
    relationships and its last uses by the principal (`recalls`)."""

    versions: list[Version]
    supersedes: list[ChainLink]
    superseded_by_chain: list[ChainLink]
    relationships: list[Relationship]
    recalls: list[Recall]


class BrowseService:
    """Reads and small changes for the REST API and the dashboard, on the application pool."""

    def __init__(self, pool: DatabasePool) -> None:
        self._pool = pool

    # -- the list -------------------------------------------------------------------------

    def list(
        self,
        principal: Principal,
        *,
        status: str = "active",
        category: str | None = None,
        scope: str | None = None,
        project_id: UUID | str | None = None,
        context: str | None = None,
        text: str | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        used_after: datetime | str | None = None,
        used_before: datetime | str | None = None,
        sort: str = "recent",
        cursor: str | None = None,
        limit: int | None = LIST_DEFAULT_LIMIT,
    ) -> BrowseResult:
        """The memories the principal sees (its own user and project ones here, and global
        ones), filtered and sorted, one page at a time (keyset: a page costs the same at
        the 100,000th memory as at the first).

        `text` keeps memories with all its words (full text, as recall's words branch;
        websearch syntax: "quoted phrase", -word, or); dates are ISO 8601 (a time without a
        zone is UTC); `used_*` keep memories the principal recalled in that range (a never
        used one matches neither). `cursor` is the previous page's `next_cursor`, valid with
        the same filters and sort only."""
        status_ = validation.choice(status, BROWSE_STATUSES, "status")
        sort_ = validation.choice(sort, BROWSE_SORTS, "sort")
        limit_ = validation.limit(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
        filters: dict[str, Any] = {
            "category": None if category is None else validation.category(category),
            "scope": None if scope is None else validation.scope(scope),
            "project_id": None if project_id is None else _uuid(project_id, "project_id"),
            "context": None if context is None else validation.context_name(context),
            "text": _text(text),
            "created_after": _time(created_after, "created_after"),
            "created_before": _time(created_before, "created_before"),
            "used_after": _time(used_after, "used_after"),
            "used_before": _time(used_before, "used_before"),
        }
        for low, high in (("created_after", "created_before"), ("used_after", "used_before")):
            if (
                filters[low] is not None
                and filters[high] is not None
                and filters[low] >= filters[high]
            ):
                raise InvalidInput(f"{low} must be earlier than {high}")
        digest = _digest(status_, filters)
        after = None if cursor is None else _decode_cursor(cursor, sort_, digest)
        _require_read(principal)
        with self._transaction(principal) as conn:
            if filters["text"] is not None and browse_store.query_words(conn, filters["text"]) == 0:
                raise InvalidInput(
                    "text has no word to search for (only common words such as 'the'); "
                    "use more specific words"
                )
            found = browse_store.page(
                conn,
                principal,
                status=status_,
                sort=sort_,
                filters=filters,
                after=after,
                limit=limit_ + 1,
            )
            shown = found[:limit_]
            rows = browse_store.rows(conn, principal, [row[0] for row in shown])
        memories = [_browsed(rows[row[0]]) for row in shown if row[0] in rows]
        next_cursor = None
        if len(found) > limit_:
            next_cursor = _encode_cursor(sort_, digest, shown[-1][1:])
        return {"memories": memories, "next_cursor": next_cursor}

    # -- one memory -----------------------------------------------------------------------

    def get(self, principal: Principal, memory_id: UUID | str) -> MemoryDetail:
        """One memory the principal sees, in any status, with its history and neighbours."""
        id_ = _memory_id(memory_id)
        _require_read(principal)
        with self._transaction(principal) as conn:
            found = browse_store.rows(conn, principal, [id_])
            if id_ not in found:
                raise MemoryNotFound(f"memory {id_} not found")
            memory = _browsed(found[id_])
            versions = browse_store.versions(conn, id_)
            back = browse_store.superseded_chain(conn, id_, CHAIN_DEPTH)
            forward = browse_store.superseding_chain(conn, id_, CHAIN_DEPTH)
            linked = browse_store.rows(conn, principal, [*back, *forward])
            neighbours = browse_store.neighbours(conn, id_, NEIGHBOURS_LIMIT)
            recalls = browse_store.recent_recalls(conn, principal, id_, RECALLS_SHOWN)
        return {
            **memory,
            "versions": _versions(versions),
            "supersedes": [_link(linked[i]) for i in back if i in linked],
            "superseded_by_chain": [_link(linked[i]) for i in forward if i in linked],
            "relationships": [
                {
                    "type": n.type,
                    "direction": n.direction,
                    "other_id": str(n.other_id),
                    "other_type": n.other_type,
                    "other_label": n.other_label,
                }
                for n in neighbours
            ],
            "recalls": [
                {"recalled_at": at.isoformat(), "project_id": str(project)}
                for at, project in recalls
            ],
        }

    # -- helpers ------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self, principal: Principal) -> Iterator[Connection[Any]]:
        with acting_for(self._pool, principal) as conn:
            yield conn


def _require_read(principal: Principal) -> None:
    if not principal.can_read:
        raise PermissionDenied("this credential may not read memories (needs memory:read)")


def _require_write(principal: Principal) -> None:
    if not principal.can_write:
        raise PermissionDenied("this credential may not change memories (needs memory:write)")


def _status(row: browse_store.BrowseRow) -> MemoryStatus:
    if row.deleted_at is not None:
        return "deleted"
    return "superseded" if row.superseded_by else "active"


def _browsed(row: browse_store.BrowseRow) -> BrowsedMemory:
    return {
        "id": str(row.id),
        "content": row.content,
        "category": row.category,
        "scope": row.scope,
        "source": row.source or "inferred",
        "confidence": float(row.confidence if row.confidence is not None else 0.7),
        "contexts": list(row.contexts),
        "use_count": row.use_count,
        "last_used": None if row.last_used is None else row.last_used.isoformat(),
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "derived_from": _provenance(row.derived_from),
        "status": _status(row),
        "superseded_by": row.superseded_by,
        "deleted_at": None if row.deleted_at is None else row.deleted_at.isoformat(),
        "project_id": str(row.project_id),
    }


def _link(row: browse_store.BrowseRow) -> ChainLink:
    return {"id": str(row.id), "content": row.content, "status": _status(row)}


TRACKED = ("content", "category", "confidence", "source")


def _versions(versions: list[browse_store.VersionRow]) -> list[Version]:
    """Each version with what it changed from the one before, in words."""
    shown: list[Version] = []
    before: browse_store.VersionRow | None = None
    for row in versions:
        changed: list[str] = []
        if before is None:
            change = "created"
        elif row.deleted_at is not None and before.deleted_at is None:
            change = "deleted" + (f" ({row.delete_reason})" if row.delete_reason else "")
        elif row.deleted_at is None and before.deleted_at is not None:
            change = "restored"
        else:
            changed = [f for f in TRACKED if row.properties.get(f) != before.properties.get(f)]
            was, now = before.properties.get("superseded_by"), row.properties.get("superseded_by")
            if now and now != was:
                change = f"superseded by {now}"
            elif was and not now:
                change = f"restored: no longer superseded by {was}"
            elif changed:
                change = "changed " + ", ".join(changed)
            else:
                change = "no change to its text, category or confidence"
        if before is not None and change.startswith(("deleted", "restored", "superseded")):
            changed = [f for f in TRACKED if row.properties.get(f) != before.properties.get(f)]
        confidence = row.properties.get("confidence")
        shown.append(
            {
                "version": row.version,
                "content": str(row.properties.get("content", "")),
                "category": str(row.properties.get("category", "")),
                "confidence": None if confidence is None else float(confidence),
                "created_at": row.updated_at.isoformat(),
                "deleted_at": None if row.deleted_at is None else row.deleted_at.isoformat(),
                "change": change,
                "changed": changed,
            }
        )
        before = row
    return shown


def _memory_id(value: object) -> UUID:
    if isinstance(value, UUID):
        return value
    return validation.memory_id(value)


def _uuid(value: object, field: str) -> UUID:
    if isinstance(value, UUID):
        return value
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            pass
    raise InvalidInput(
        f"{field} must be an id such as '0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d21'; got {value!r:.60}"
    )


def _text(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("text must be some words to look for, e.g. 'deploy staging'")
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"text is {len(value)} characters long; the limit is {MAX_TEXT}")
    return validation.storable(value.strip())


def _time(value: object, field: str) -> datetime | None:
    """A datetime, or an ISO 8601 date or time; without a zone it is UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(
                f"{field} must be an ISO 8601 date or time such as '2026-01-31' or "
                f"'2026-01-31T14:00:00Z'; got {value!r:.60}"
            ) from None
    else:
        raise InvalidInput(f"{field} must be an ISO 8601 date or time such as '2026-01-31'")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if not 1900 <= moment.year <= 9999:
        raise InvalidInput(f"{field} must be a year from 1900 to 9999")
    return moment


def _digest(status: str, filters: Mapping[str, Any]) -> str:
    """A short fingerprint of what the list shows: a cursor is valid for it only."""
    shown = {k: None if v is None else str(v) for k, v in filters.items()}
    text = json.dumps([status, shown], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _encode_cursor(sort: str, digest: str, key: tuple[Any, ...]) -> str:
    values = [v.isoformat() if isinstance(v, datetime) else str(v) for v in key]
    raw = json.dumps({"v": CURSOR_VERSION, "s": sort, "f": digest, "k": values})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


BAD_CURSOR = (
    "cursor is not one this list gave (pass next_cursor from the previous page unchanged, "
    "or no cursor for the first page)"
)


def _decode_cursor(
    cursor: object, sort: str, digest: str, types: tuple[str, ...] | None = None
) -> list[Any]:
    """The key values of a cursor that _encode_cursor made for this sort (a list's, or
    another keyset such as the open duplicate pairs', with its `types`) and digest."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 1000:
        raise InvalidInput(BAD_CURSOR)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        decoded = json.loads(raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput(BAD_CURSOR) from None
    if (
        not isinstance(decoded, dict)
        or decoded.get("v") != CURSOR_VERSION
        or not isinstance(decoded.get("s"), str)
        or not isinstance(decoded.get("f"), str)
    ):
        raise InvalidInput(BAD_CURSOR)
    if decoded.get("s") != sort or decoded.get("f") != digest:
        raise InvalidInput(
            "cursor belongs to a list with other filters or another sort; start again "
            "without a cursor"
        )
    if types is None:
        types = browse_store.SORTS[sort].types
    values = decoded.get("k")
    if not isinstance(values, list) or len(values) != len(types):
        raise InvalidInput(BAD_CURSOR)
    parsed: list[Any] = []
    try:
        for value, type_ in zip(values, types, strict=True):
            if not isinstance(value, str):
                raise ValueError(value)
            if type_ == "timestamptz":
                moment = datetime.fromisoformat(value)
                if moment.tzinfo is None:
                    raise ValueError(value)
                parsed.append(moment)
            elif type_ == "uuid":
                parsed.append(UUID(value))
            elif type_ == "bigint":
                parsed.append(int(value))
            else:
                parsed.append(float(value))
    except ValueError:
        raise InvalidInput(BAD_CURSOR) from None
    return parsed
