"""BrowseService: what the REST API and the dashboard show of a principal's memories.

The memory list with filters, sorts and cursor pages; one memory with its versions, its
supersession chain both ways, its relationships, provenance, uses, evidence and the reasons it
was deleted, archived or superseded; contexts (list,
rename, priority); statistics; the injection log; LLM usage and its cost; the capture queue.
Every method acts for a principal under row-level security (memory.service.acting_for), reads
need memory:read and changes memory:write, and another actor's memory id is not found exactly
like a missing one. Results are plain JSON-serializable dicts. The SQL is browse_store's.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal, NotRequired, get_args
from uuid import UUID

from psycopg import Connection
from typing_extensions import TypedDict

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.errors import InvalidInput, MemoryNotFound, ObjectNotFound, PermissionDenied
from emergent_memory.memory import answers, authority, browse_store, store, validation
from emergent_memory.memory.injection import Candidate, line_of
from emergent_memory.memory.models import CATEGORIES, IMPORTANCES, SCOPES, MemoryRecord
from emergent_memory.memory.own_export import own_export
from emergent_memory.memory.project_names import ProjectNames
from emergent_memory.memory.records import memory_record, superseded_because
from emergent_memory.memory.service import acting_for

BrowseStatus = Literal["active", "archived", "superseded", "deleted", "all"]
BrowseSort = Literal["recent", "oldest", "most_used", "least_used", "last_used", "confidence"]
MemoryStatus = Literal["active", "archived", "superseded", "deleted"]
BROWSE_STATUSES: tuple[BrowseStatus, ...] = get_args(BrowseStatus)
MEMORY_STATUSES: tuple[MemoryStatus, ...] = get_args(MemoryStatus)
BROWSE_SORTS: tuple[BrowseSort, ...] = get_args(BrowseSort)
LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT = 50, 200
CHAIN_DEPTH = 50  # supersession steps get follows each way at most
NEIGHBOURS_LIMIT = 200
RECALLS_SHOWN = 10
EVIDENCE_SHOWN = 50  # a memory's latest pieces of evidence on its page
MAX_TEXT = 500  # characters of a list's text filter
CURSOR_VERSION = 1
# A numbered page is read by skipping the rows before it from the nearer end of the list (the
# last pages read the index backwards): at most this many rows, so that no page jump reads
# more than this many index entries. Pages further from both ends are reached with next and
# previous, whose cursors read no row before the page.
JUMP_ROWS = 2_500
NEARBY_PAGES = 2  # pages linked each side of the current one
GROWTH_DAYS = 90
USED_SHOWN = 10  # most and least used memories in stats
INJECTIONS_DEFAULT_LIMIT, INJECTIONS_MAX_LIMIT = 20, 100  # sessions a page
INJECTIONS_PER_SESSION = 50
INJECTIONS_CURSOR = "injections"
CAPTURE_STATUSES = ("pending", "running", "done", "dead")
USAGE_DEFAULT_DAYS, USAGE_MAX_DAYS = 30, 366
DEAD_LETTERS_SHOWN = 50
MIN_PRIORITY, MAX_PRIORITY = 0, 100


class BrowsedMemory(MemoryRecord):
    """A memory in any status: `superseded_by` the id of the memory that replaced it,
    `deleted_at` when it was deleted, `archived_at` when it was archived, each with the reason
    given (None: not in that status); `expired` whether its validity ended (valid_until now or
    past); `project_id` the project it was saved in."""

    status: MemoryStatus
    superseded_by: str | None
    deleted_at: str | None
    archived_at: str | None
    supersede_reason: str | None
    superseded_because: str | None  # the rule and similarity, or the decision, in words
    delete_reason: str | None
    archive_reason: str | None
    expired: bool
    project_id: str


class BrowseResult(TypedDict):
    """A page of memories; `next_cursor` continues it (None: this was the last page);
    `total`, when asked for, how many memories the filters match (every page)."""

    memories: list[BrowsedMemory]
    next_cursor: str | None
    total: NotRequired[int]


class PageLink(TypedDict):
    """A numbered page near the current one: its cursor (None: the first page)."""

    page: int
    cursor: str | None


class NumberedPage(TypedDict):
    """A page of the list with its place in it: how many memories match the filters
    (`total`), this page's number of `pages`, cursors to the next and previous pages
    (`has_previous` with no `previous_cursor`: the previous page is the first), the pages
    nearby, and for each superseded memory shown the memory that replaced it
    (`replacements`, by the superseded memory's id; one the principal cannot see is left
    out)."""

    memories: list[BrowsedMemory]
    total: int
    page: int
    pages: int
    next_cursor: str | None
    previous_cursor: str | None
    has_previous: bool
    nearby: list[PageLink]
    replacements: dict[str, ChainLink]


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
    """A use by a recall (a tool's, or the REST API's for an agent): when, in which project,
    its `query` (None: not kept, see `query_withheld`, or recorded before the log kept
    queries), `query_withheld` when it held a secret (only its SHA-256 was kept)."""

    recalled_at: str
    project_id: str
    query: str | None
    query_withheld: bool


class Injected(TypedDict):
    """An injection of the memory into a client session: when, which session and client, at
    its start (`session_start`) or for a prompt (`prompt`)."""

    injected_at: str
    session_id: str
    client: str
    event: str


class Evidence(TypedDict):
    """One piece of evidence for a memory: when, how it came (`origin`: save, repeat,
    reinforce or capture), from which session and episode, its text (None: a repeat without
    any), whether it was new for this memory (`independent`: only that raises confidence), and
    the stored confidence before and after it."""

    at: str
    origin: str
    session_id: str | None
    episode_id: str | None
    evidence: str | None
    independent: bool
    confidence_before: float | None
    confidence_after: float | None


class MemoryDetail(BrowsedMemory):
    """A memory's page: the memory, its versions, what it superseded (nearest first, in
    `supersedes`) and what superseded it (`superseded_by_chain`, nearest first), its
    relationships, its last uses by the principal's recalls (`recalls`, with their queries)
    and injections into its sessions (`injections`; `injection_count` counts them all), and
    the principal's evidence for it (`evidence`, newest first, EVIDENCE_SHOWN at most;
    `evidence_count` counts it all)."""

    versions: list[Version]
    supersedes: list[ChainLink]
    superseded_by_chain: list[ChainLink]
    relationships: list[Relationship]
    recalls: list[Recall]
    injections: list[Injected]  # the latest RECALLS_SHOWN, newest first
    injection_count: int  # every injection of it into the actor's sessions
    evidence: list[Evidence]


class Context(TypedDict):
    """One of the principal's contexts: `priority` 0 to 100 (injection offers the memories of
    higher ones first), `memory_count` its active memories."""

    id: str
    name: str
    priority: int
    memory_count: int


class UsedMemory(TypedDict):
    id: str
    content: str
    category: str
    use_count: int
    last_used: str | None


class DayCount(TypedDict):
    day: str
    created: int
    deleted: int


class Stats(TypedDict):
    """Counts of the memories the principal sees: `by_status` of all of them (archived
    included); `by_category`, `by_scope`, `by_importance` and `by_project` of the active ones;
    `archived_by_importance` of the archived ones; `growth` per UTC day over the last
    GROWTH_DAYS days (memories created, memories deleted); the ten most and least used active
    ones; the principal's embedding jobs and capture windows by status."""

    total: int
    by_status: dict[str, int]
    by_category: dict[str, int]
    by_scope: dict[str, int]
    by_importance: dict[str, int]
    archived_by_importance: dict[str, int]
    by_project: dict[str, int]
    growth: list[DayCount]
    most_used: list[UsedMemory]
    least_used: list[UsedMemory]
    embedding_queue: dict[str, int]
    capture_queue: dict[str, int]


class InjectedMemory(TypedDict):
    """An injected memory: `injected_text` is its line exactly as the session received it
    (None: not recorded, before this version), `content` its text now; `changed_since` when
    the two no longer agree (the memory was edited since)."""

    id: str
    content: str
    status: MemoryStatus
    injected_text: str | None
    estimated_tokens: int | None
    changed_since: bool


# What the log says of a prompt: its text, withheld (it held a secret: only its SHA-256 is
# kept), not recorded (answered before this version), or none (a session's start).
PromptState = Literal["recorded", "withheld", "not_recorded", "none"]


class Injection(TypedDict):
    """One answer of injection to a session: the event, its outcome (memories injected, or
    why none: memory/injection.py OUTCOMES), the prompt it answered (`prompt_state` says
    whether it is there; `prompt_length` the whole prompt's characters, of which the log
    keeps the first 2,000), and the memories the principal still sees (others, deleted for
    good or not visible here, are only counted in `hidden`)."""

    id: str
    event: str
    outcome: str
    project_id: str
    prompt: str | None
    prompt_state: PromptState
    prompt_length: int | None
    prompt_sha256: str | None
    memories: list[InjectedMemory]
    hidden: int
    estimated_tokens: int
    budget_tokens: int
    created_at: str


class InjectedSession(TypedDict):
    """A client session with its latest injections (INJECTIONS_PER_SESSION at most, newest
    first; `injection_count` counts them all)."""

    session_id: str
    client: str
    first_at: str
    last_at: str
    injection_count: int
    estimated_tokens: int
    injections: list[Injection]


class InjectionLog(TypedDict):
    sessions: list[InjectedSession]
    next_cursor: str | None


class ModelUsage(TypedDict):
    """One model's calls on one UTC day; `cost_usd` None when the model has no price in
    MODEL_PRICES (the result's `unpriced_models` names them)."""

    day: str
    model: str
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class UsageTotals(TypedDict):
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float  # of the priced models only


class LLMUsage(TypedDict):
    days: int
    usage: list[ModelUsage]
    totals: UsageTotals
    unpriced_models: list[str]


class DeadLetter(TypedDict):
    window_id: str
    session_id: str
    client: str
    turns: dict[str, int]
    attempts: int
    last_error: str | None
    failed_at: str


class CaptureQueue(TypedDict):
    """The principal's capture windows by status (pending, running, done, dead) and the dead
    ones, most recent first (DEAD_LETTERS_SHOWN at most), with why they failed."""

    counts: dict[str, int]
    dead_letters: list[DeadLetter]


# Prices in US dollars per million tokens (input, output): Anthropic's list prices when this
# was written; check https://www.anthropic.com/pricing when they change. A model is priced by
# the longest entry its name starts with ("claude-haiku-4-5-20251001" is "claude-haiku-4-5");
# a model that matches none has no cost (None), and llm_usage says which.
MODEL_PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-opus-4": (15.0, 75.0),
}


def model_price(model: str) -> tuple[float, float] | None:
    """(input, output) US dollars per million tokens of a model, or None when unknown."""
    matches = [prefix for prefix in MODEL_PRICES if model.startswith(prefix)]
    return MODEL_PRICES[max(matches, key=len)] if matches else None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = model_price(model)
    if price is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 6)


# The most projects BrowseService.projects lists (the dashboard's project selector)
MAX_PROJECTS = 200


class CapturedProposal(TypedDict):
    """A proposal of a capture window: its verdict (save, reinforce, supersede, drop, ...),
    and for a saved one its memory (`memory_id`, its `content` and `status` now when the
    principal still sees it, else None) and what the save did (`save_status`); for one not
    saved, why (`note`, or the kind of refusal in `refused`)."""

    verdict: str
    memory_id: str | None
    content: str | None
    status: str | None
    save_status: str | None
    note: str | None
    refused: str | None


class CaptureWindow(TypedDict):
    """One capture window of a session: turns first to end (exclusive), its queue status
    and attempts, when it was queued and last changed, its Episode, what was decided
    (`result`: captured, nothing worth remembering, already captured; None while waiting),
    its proposals, its last error (a dead window's), and its LLM calls' tokens and cost."""

    id: str
    first_turn: int
    end_turn: int
    status: str
    attempts: int
    created_at: str
    updated_at: str
    episode_id: str | None
    result: str | None
    proposals: list[CapturedProposal]
    last_error: str | None
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


# The most capture windows a session's page lists
SESSION_WINDOWS = 200


def _is_uuid(value: object) -> bool:
    try:
        UUID(str(value))
    except ValueError:
        return False
    return True


def _capture_window(
    row: browse_store.CaptureWindowRow, contents: Mapping[UUID, tuple[str, str, str]]
) -> CaptureWindow:
    outcome = row.outcome or {}
    proposals: list[CapturedProposal] = []
    for saved, key in ((True, "saved"), (False, "not_saved")):
        for entry in outcome.get(key, []):
            given = entry.get("memory_id")
            memory_id = str(given) if saved and _is_uuid(given) else None
            seen = None if memory_id is None else contents.get(UUID(memory_id))
            proposals.append(
                {
                    "verdict": str(entry.get("verdict", "")),
                    "memory_id": memory_id if seen is not None else None,
                    "content": None if seen is None else seen[0],
                    "status": None if seen is None else seen[1],
                    "save_status": entry.get("status") if saved else None,
                    "note": entry.get("note"),
                    "refused": entry.get("refused"),
                }
            )
    costs = [cost_usd(str(model), int(i), int(o)) for model, i, o in row.per_call]
    return {
        "id": str(row.id),
        "first_turn": row.first_turn,
        "end_turn": row.end_turn,
        "status": row.status,
        "attempts": row.attempts,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "episode_id": None if row.episode_id is None else str(row.episode_id),
        "result": outcome.get("result"),
        "proposals": proposals,
        "last_error": row.last_error,
        "llm_calls": len(row.per_call),
        "input_tokens": sum(int(call[1]) for call in row.per_call),
        "output_tokens": sum(int(call[2]) for call in row.per_call),
        # unknown when a call's model has no price in MODEL_PRICES
        "cost_usd": None if None in costs else round(sum(c for c in costs if c is not None), 6),
    }


class BrowseService:
    """Reads and small changes for the REST API and the dashboard, on the application pool.

    `read_pool` (EMERGENT_MEMORY_READ_DATABASE_URL's, a read replica): the reads (list, get,
    stats, contexts, injections, LLM usage, capture queue) run on it; the changes on `pool`.
    `decay`: how confidence decays (the memory service's settings; the defaults when None)."""

    def __init__(
        self,
        pool: DatabasePool,
        read_pool: DatabasePool | None = None,
        decay: store.Decay | None = None,
    ) -> None:
        self._pool = pool
        self._read_pool = read_pool or pool
        self._decay = decay
        self.names = ProjectNames(pool)  # the actor's names of its projects

    def projects(self, principal: Principal) -> builtins.list[tuple[str, str | None]]:
        """The projects the principal's actor has worked in (MAX_PROJECTS at most, the one it
        acts in always among them): where its memories were saved, where its sessions were
        injected into or captured. Project-scope memories of other projects are found only
        for a principal that may choose any project of its actor (read across all of them).
        Each with the actor's name of it (memory/project_names.py), or None: named ones
        first, by name."""
        require_read(principal)
        if principal.may_choose_project and not principal.all_projects:
            principal = replace(principal, all_projects=True)
        with self._read_transaction(principal) as conn:
            found = browse_store.actor_projects(conn, principal, MAX_PROJECTS)
        return [(str(project), name) for project, name in found]

    def export(self, principal: Principal) -> Iterator[dict[str, Any]]:
        """The principal's own records in `emergent-memory export`'s format (own_export),
        from the primary: one consistent snapshot, held until the iteration ends."""
        return own_export(self._pool, principal)

    # -- the list -------------------------------------------------------------------------

    def list(
        self,
        principal: Principal,
        *,
        status: str = "active",
        category: str | None = None,
        scope: str | None = None,
        importance: str | None = None,
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
        query = _list_query(
            status,
            sort,
            category=category,
            scope=scope,
            importance=importance,
            project_id=project_id,
            context=context,
            text=text,
            created_after=created_after,
            created_before=created_before,
            used_after=used_after,
            used_before=used_before,
        )
        limit_ = validation.limit(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
        status_, sort_, filters, digest = query.status, query.sort, query.filters, query.digest
        after = None
        if cursor is not None:
            position = _position(cursor, query)
            if position.backward:  # the dashboard's previous pages: not a next_cursor
                raise InvalidInput(BAD_CURSOR)
            after = position.key
        require_read(principal)
        with self._read_transaction(principal) as conn:
            _words_to_search(conn, query)
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
        memories = [browsed(rows[row[0]], self._decay) for row in shown if row[0] in rows]
        next_cursor = None
        if len(found) > limit_:
            next_cursor = encode_cursor(sort_, digest, shown[-1][1:])
        return {"memories": memories, "next_cursor": next_cursor}

    def numbered_page(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        page: int | None = None,
        limit: int | None = LIST_DEFAULT_LIMIT,
        status: str = "active",
        sort: str = "recent",
        **filters: Any,
    ) -> NumberedPage:
        """A page of the list (`list`'s filters and sort) with how many memories match and
        where the page is among `pages`: the dashboard's pages.

        `cursor`: one this method gave (next, previous or a nearby page's); `page`: a page
        number to jump to, read by skipping at most JUMP_ROWS rows from the nearer end of the
        list (InvalidInput further in: reach it with next or previous); past the last page,
        the last page. A page whose rows were deleted since its link was made gives way to
        the first page (going back) or the last one (going on)."""
        query = _list_query(status, sort, **filters)
        limit_ = validation.limit(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
        position = None if cursor is None else _position(cursor, query)
        if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
            raise InvalidInput(f"page must be a whole number from 1; got {page!r:.20}")
        require_read(principal)
        with self._read_transaction(principal) as conn:
            _words_to_search(conn, query)
            total = browse_store.count(conn, principal, status=query.status, filters=query.filters)
            pages = max(1, -(-total // limit_))

            def read(
                after: builtins.list[Any] | None, skip: int, take: int, reverse: bool
            ) -> tuple[builtins.list[tuple[Any, ...]], bool]:
                """`take` rows after `skip` ones, and whether more follow."""
                if total == 0:  # nothing matches: no index walked to find so
                    return [], False
                found = browse_store.page(
                    conn,
                    principal,
                    status=query.status,
                    sort=query.sort,
                    filters=query.filters,
                    after=after,
                    limit=skip + take + 1,
                    reverse=reverse,
                )[skip:]
                return found[:take], len(found) > take

            shown: builtins.list[tuple[Any, ...]] = []
            number, has_previous, has_next = 1, False, False
            if position is not None and position.backward:
                shown, has_previous = read(position.key, position.skip, limit_, True)
                shown.reverse()
                number, has_next = max(position.page, 2), True
                if not has_previous:  # no row before it: this is the first page
                    position = None
                    page = 1
            elif position is not None:
                shown, has_next = read(position.key, position.skip, limit_, False)
                number, has_previous = max(position.page, 2), True
                if not shown:  # past the last row: the last page
                    position = None
                    page = pages
            if position is None:
                number = min(page or 1, pages)
                before = (number - 1) * limit_
                after_it = total - number * limit_  # below 0: the last page, not full
                if before <= JUMP_ROWS:
                    shown, _ = read(None, before, limit_, False)
                elif after_it <= JUMP_ROWS:
                    shown, _ = read(None, max(0, after_it), limit_ + min(0, after_it), True)
                    shown.reverse()
                else:
                    raise InvalidInput(
                        f"page {number} of {pages} is more than {JUMP_ROWS:,} memories from "
                        f"both ends of the list; go to page {JUMP_ROWS // limit_ + 1} or "
                        f"{pages - JUMP_ROWS // limit_} and on with next or previous, or "
                        "narrow the filters"
                    )
                has_previous, has_next = number > 1, number < pages
            pages = max(pages, number)
            ids = [row[0] for row in shown]
            rows = browse_store.rows(conn, principal, ids)
            replaced_by = {
                rows[i].id: UUID(str(rows[i].superseded_by))
                for i in ids
                if i in rows and rows[i].superseded_by and rows[i].deleted_at is None
            }
            replacing = browse_store.rows(conn, principal, sorted(set(replaced_by.values())))
        memories = [browsed(rows[i], self._decay) for i in ids if i in rows]

        def link(row: tuple[Any, ...], page: int, skip: int, backward: bool) -> str:
            return encode_cursor(
                query.sort, query.digest, row[1:], page=page, skip=skip, backward=backward
            )

        nearby: builtins.list[PageLink] = []
        if shown:
            for step in range(NEARBY_PAGES, 0, -1):
                if number - step >= 1:
                    token = None
                    if number - step > 1:
                        token = link(shown[0], number - step, (step - 1) * limit_, True)
                    nearby.append({"page": number - step, "cursor": token})
            for step in range(1, NEARBY_PAGES + 1):
                if has_next and number + step <= pages:
                    token = link(shown[-1], number + step, (step - 1) * limit_, False)
                    nearby.append({"page": number + step, "cursor": token})
        return {
            "memories": memories,
            "total": total,
            "page": number,
            "pages": pages,
            "next_cursor": link(shown[-1], number + 1, 0, False) if has_next and shown else None,
            "previous_cursor": link(shown[0], number - 1, 0, True)
            if has_previous and shown and number > 2
            else None,
            "has_previous": has_previous,
            "nearby": nearby,
            "replacements": {
                str(old): _link(replacing[new])
                for old, new in replaced_by.items()
                if new in replacing
            },
        }

    def count(self, principal: Principal, *, status: str = "active", **filters: Any) -> int:
        """How many memories the list of these filters holds (every page)."""
        query = _list_query(status, "recent", **filters)
        require_read(principal)
        with self._read_transaction(principal) as conn:
            _words_to_search(conn, query)
            return browse_store.count(conn, principal, status=query.status, filters=query.filters)

    def matching_ids(
        self, principal: Principal, maximum: int, *, status: str = "active", **filters: Any
    ) -> builtins.list[str]:
        """The ids of every memory the list of these filters holds (newest first), for a
        change to all of them: InvalidInput when more than `maximum` match."""
        query = _list_query(status, "recent", **filters)
        require_read(principal)
        with self._read_transaction(principal) as conn:
            _words_to_search(conn, query)
            total = browse_store.count(conn, principal, status=query.status, filters=query.filters)
            if total > maximum:
                raise InvalidInput(
                    f"{total:,} memories match these filters; a change to every matching "
                    f"memory takes at most {maximum:,}: narrow the filters"
                )
            found = browse_store.page(
                conn,
                principal,
                status=query.status,
                sort=query.sort,
                filters=query.filters,
                after=None,
                limit=maximum,
            )
        return [str(row[0]) for row in found]

    def changed_together(
        self, principal: Principal, change: str, reason: str, maximum: int
    ) -> builtins.list[str]:
        """The memories (at most `maximum`) that are still deleted (`change` "delete") or
        archived ("archive") with exactly `reason`, among the principal's own (and global
        ones for an administrator): what one change of many wrote, to undo it."""
        if change not in browse_store.BULK_CHANGED:
            raise InvalidInput("the change must be delete or archive")
        require_read(principal)
        with self._read_transaction(principal) as conn:
            found = browse_store.changed_together(conn, principal, change, reason, maximum)
        return [str(id_) for id_ in found]

    # -- one memory -----------------------------------------------------------------------

    def get(self, principal: Principal, memory_id: UUID | str) -> MemoryDetail:
        """One memory the principal sees, in any status, with its history and neighbours."""
        id_ = _memory_id(memory_id)
        require_read(principal)
        with self._read_transaction(principal) as conn:
            found = browse_store.rows(conn, principal, [id_])
            if id_ not in found:
                raise MemoryNotFound(f"memory {id_} not found")
            memory = browsed(found[id_], self._decay)
            versions = browse_store.versions(conn, id_)
            replacements = browse_store.replacements(conn, id_)
            back = browse_store.superseded_chain(conn, id_, CHAIN_DEPTH)
            forward = browse_store.superseding_chain(conn, id_, CHAIN_DEPTH)
            linked = browse_store.rows(conn, principal, [*back, *forward])
            neighbours = browse_store.neighbours(conn, id_, NEIGHBOURS_LIMIT)
            recalls = browse_store.recent_recalls(conn, principal, id_, RECALLS_SHOWN)
            injected = browse_store.recent_injections_of(conn, principal, id_, RECALLS_SHOWN)
            evidence = browse_store.evidence(conn, principal, id_, EVIDENCE_SHOWN)
        return {
            **memory,
            "versions": _versions(versions, replacements),
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
                {
                    "recalled_at": r.recalled_at.isoformat(),
                    "project_id": str(r.project_id),
                    "query": r.query,
                    "query_withheld": r.withheld,
                }
                for r in recalls
            ],
            "injections": [
                {
                    "injected_at": i.created_at.isoformat(),
                    "session_id": i.session_id,
                    "client": i.client,
                    "event": i.event,
                }
                for i in injected
            ],
            "injection_count": injected[0].total if injected else 0,
            "evidence": [_evidence(row) for row in evidence],
        }

    # -- contexts -------------------------------------------------------------------------

    def contexts(self, principal: Principal) -> builtins.list[Context]:
        """The principal's contexts, by name, with how many active memories each holds."""
        require_read(principal)
        with self._read_transaction(principal) as conn:
            return [_context(row) for row in browse_store.contexts(conn, principal)]

    def rename_context(self, principal: Principal, context_id: UUID | str, name: str) -> Context:
        """Rename one of the principal's contexts (names are one line, unique per actor
        ignoring case: the memories filed under a name go on being found by it)."""
        id_ = as_uuid(context_id, "context_id")
        new_name = validation.context_name(name)
        if new_name is None:
            raise InvalidInput("name must be a non-empty name, e.g. 'frontend'")
        require_write(principal)
        with self._transaction(principal) as conn:
            self._own_context(conn, principal, id_)
            store.lock_context_name(conn, principal.actor_id, new_name)
            existing = store.find_context(conn, principal.actor_id, new_name)
            if existing is not None and existing != id_:
                raise InvalidInput(
                    f"another context is named {new_name!r} ({existing}); choose another name"
                )
            graph.update_object(conn, id_, properties={"name": new_name})
            renamed = _context(browse_store.contexts(conn, principal, id_)[0])
            return answers.deliverable(renamed, "rename_context")  # before the commit

    def set_context_priority(
        self, principal: Principal, context_id: UUID | str, priority: int
    ) -> Context:
        """Set a context's priority, a whole number from 0 to 100."""
        id_ = as_uuid(context_id, "context_id")
        if (
            isinstance(priority, bool)
            or not isinstance(priority, int)
            or not MIN_PRIORITY <= priority <= MAX_PRIORITY
        ):
            raise InvalidInput(
                f"priority must be a whole number from {MIN_PRIORITY} to {MAX_PRIORITY}; "
                f"got {priority!r:.40}"
            )
        require_write(principal)
        with self._transaction(principal) as conn:
            self._own_context(conn, principal, id_)
            graph.update_object(conn, id_, properties={"priority": priority})
            changed = _context(browse_store.contexts(conn, principal, id_)[0])
            return answers.deliverable(changed, "set_context_priority")  # before the commit

    @staticmethod
    def _own_context(conn: Connection[Any], principal: Principal, context_id: UUID) -> None:
        graph.lock_object(conn, context_id)
        head = graph.get_head(conn, context_id)
        if head is None or head.type != store.CONTEXT or head.actor_id != principal.actor_id:
            raise ObjectNotFound(f"context {context_id} not found")

    # -- statistics -----------------------------------------------------------------------

    def stats(self, principal: Principal) -> Stats:
        """What the principal's memories look like (see Stats)."""
        require_read(principal)
        today = datetime.now(UTC).date()
        first_day = today - timedelta(days=GROWTH_DAYS - 1)
        since = datetime(first_day.year, first_day.month, first_day.day, tzinfo=UTC)
        with self._read_transaction(principal) as conn:
            rows = browse_store.counts(conn, principal, since)
            used: dict[str, builtins.list[UsedMemory]] = {}
            for sort in ("most_used", "least_used"):
                found = browse_store.page(
                    conn,
                    principal,
                    status="active",
                    sort=sort,
                    filters={},
                    after=None,
                    limit=USED_SHOWN,
                )
                ids = [row[0] for row in found]
                memories = browse_store.rows(conn, principal, ids)
                used[sort] = [_used(memories[i]) for i in ids if i in memories]
            embedding = browse_store.status_counts(conn, principal, "embedding")
            capture = browse_store.status_counts(conn, principal, "capture")
        by_status: dict[str, int] = dict.fromkeys(MEMORY_STATUSES, 0)
        by_category: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
        by_scope: dict[str, int] = dict.fromkeys(SCOPES, 0)
        by_importance: dict[str, int] = dict.fromkeys(IMPORTANCES, 0)
        archived_by_importance: dict[str, int] = dict.fromkeys(IMPORTANCES, 0)
        by_project: dict[str, int] = {}
        created: dict[date, int] = {}
        deleted: dict[date, int] = {}
        for row in rows:
            if row.created_day is not None:
                created[row.created_day] = created.get(row.created_day, 0) + row.n
            if row.deleted_day is not None:
                deleted[row.deleted_day] = deleted.get(row.deleted_day, 0) + row.n
            by_status[row.status] += row.n
            if row.status == "archived":
                archived_by_importance[row.importance] = (
                    archived_by_importance.get(row.importance, 0) + row.n
                )
            if row.status != "active":
                continue
            by_importance[row.importance] = by_importance.get(row.importance, 0) + row.n
            by_category[row.category] = by_category.get(row.category, 0) + row.n
            by_scope[row.scope] = by_scope.get(row.scope, 0) + row.n
            project = str(row.project_id)
            by_project[project] = by_project.get(project, 0) + row.n
        growth: list[DayCount] = []
        for offset in range(GROWTH_DAYS):
            day = first_day + timedelta(days=offset)
            growth.append(
                {
                    "day": day.isoformat(),
                    "created": created.get(day, 0),
                    "deleted": deleted.get(day, 0),
                }
            )
        return {
            "total": sum(by_status.values()),
            "by_status": by_status,
            "by_category": by_category,
            "by_scope": by_scope,
            "by_importance": by_importance,
            "archived_by_importance": archived_by_importance,
            "by_project": by_project,
            "growth": growth,
            "most_used": used["most_used"],
            "least_used": used["least_used"],
            "embedding_queue": {s: embedding.get(s, 0) for s in ("pending", "running", "dead")},
            "capture_queue": {s: capture.get(s, 0) for s in CAPTURE_STATUSES},
        }

    # -- the injection log ------------------------------------------------------------------

    def injections(
        self,
        principal: Principal,
        session_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        this_project: bool = False,
    ) -> InjectionLog:
        """The principal's client sessions that injection answered, the most recent first
        (or only `session_id`), each with its latest answers: which event, the prompt, the
        outcome, which memories (those it still sees, with their text as injected and now),
        the tokens estimated and the budget. With `this_project`, only the answers given in
        the principal's project (the dashboard's view of one project); else in every one."""
        session = validation.session_id(session_id)
        limit_ = validation.limit(
            limit, default=INJECTIONS_DEFAULT_LIMIT, maximum=INJECTIONS_MAX_LIMIT
        )
        digest = _digest("injections", {"session_id": session, "this_project": this_project})
        after = None
        if cursor is not None:
            time, last = decode_cursor(cursor, INJECTIONS_CURSOR, digest, ("timestamptz", "text"))
            after = (time, last)
        require_read(principal)
        with self._read_transaction(principal) as conn:
            found = browse_store.injection_sessions(
                conn, principal, session, after, limit_ + 1, this_project
            )
            shown = found[:limit_]
            rows = browse_store.session_injections(
                conn, principal, [s.session_id for s in shown], INJECTIONS_PER_SESSION, this_project
            )
            ids = {memory_id for row in rows for memory_id in row.memory_ids}
            contents = browse_store.contents(conn, principal, list(ids))
        by_session: dict[str, list[Injection]] = {}
        for row in rows:
            memories = [
                _injected_memory(row, index, contents[i])
                for index, i in enumerate(row.memory_ids)
                if i in contents
            ]
            by_session.setdefault(row.session_id, []).append(
                {
                    "id": str(row.id),
                    "event": row.event,
                    "outcome": row.outcome,
                    "project_id": str(row.project_id),
                    "prompt": row.prompt,
                    "prompt_state": _prompt_state(row),
                    "prompt_length": row.prompt_length,
                    "prompt_sha256": row.prompt_sha256,
                    "memories": memories,
                    "hidden": len(row.memory_ids) - len(memories),
                    "estimated_tokens": row.estimated_tokens,
                    "budget_tokens": row.budget_tokens,
                    "created_at": row.created_at.isoformat(),
                }
            )
        sessions: list[InjectedSession] = [
            {
                "session_id": s.session_id,
                "client": s.client,
                "first_at": s.first_at.isoformat(),
                "last_at": s.last_at.isoformat(),
                "injection_count": s.injections,
                "estimated_tokens": s.estimated_tokens,
                "injections": by_session.get(s.session_id, []),
            }
            for s in shown
        ]
        next_cursor = None
        if len(found) > limit_:
            last_session = shown[-1]
            next_cursor = encode_cursor(
                INJECTIONS_CURSOR, digest, (last_session.last_at, last_session.session_id)
            )
        return {"sessions": sessions, "next_cursor": next_cursor}

    # -- automatic capture ------------------------------------------------------------------

    def session_capture(
        self, principal: Principal, session_id: str
    ) -> builtins.list[CaptureWindow]:
        """What automatic capture took from one of the principal's client sessions in its
        project: each window (turns, status, when), what the gate and the extraction
        decided (`result`; each proposal saved, with its memory when the principal still sees
        it, or not saved and why: never the conversation's text), and what its LLM calls
        cost (tokens and US dollars, when the model's price is known), oldest first;
        SESSION_WINDOWS at most."""
        session = validation.session_id(session_id)
        if session is None:
            raise InvalidInput("session_id must name a client session")
        require_read(principal)
        with self._read_transaction(principal) as conn:
            rows = browse_store.session_capture(conn, principal, session, SESSION_WINDOWS)
            saved_ids = {
                UUID(str(entry["memory_id"]))
                for row in rows
                for entry in (row.outcome or {}).get("saved", [])
                if _is_uuid(entry.get("memory_id"))
            }
            contents = browse_store.contents(conn, principal, list(saved_ids))
        return [_capture_window(row, contents) for row in rows]

    def llm_usage(self, principal: Principal, days: int | None = None) -> LLMUsage:
        """The principal's LLM calls (automatic capture's gate and extractor) per UTC day and
        model over the last `days` days (today included), with their cost from
        MODEL_PRICES."""
        if days is None:
            days = USAGE_DEFAULT_DAYS
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= USAGE_MAX_DAYS:
            raise InvalidInput(
                f"days must be a whole number from 1 to {USAGE_MAX_DAYS}; got {days!r:.40}"
            )
        require_read(principal)
        first_day = datetime.now(UTC).date() - timedelta(days=days - 1)
        since = datetime(first_day.year, first_day.month, first_day.day, tzinfo=UTC)
        with self._read_transaction(principal) as conn:
            rows = browse_store.llm_usage(conn, principal, since)
        usage: list[ModelUsage] = [
            {
                "day": row.day.isoformat(),
                "model": row.model,
                "calls": row.calls,
                "errors": row.errors,
                "input_tokens": row.input_tokens,
                "output_tokens": row.output_tokens,
                "cost_usd": cost_usd(row.model, row.input_tokens, row.output_tokens),
            }
            for row in rows
        ]
        return {
            "days": days,
            "usage": usage,
            "totals": {
                "calls": sum(u["calls"] for u in usage),
                "input_tokens": sum(u["input_tokens"] for u in usage),
                "output_tokens": sum(u["output_tokens"] for u in usage),
                "cost_usd": round(sum(u["cost_usd"] or 0.0 for u in usage), 6),
            },
            "unpriced_models": sorted({u["model"] for u in usage if u["cost_usd"] is None}),
        }

    def capture_queue(self, principal: Principal) -> CaptureQueue:
        """The principal's capture windows by status, and the dead ones with their reasons."""
        require_read(principal)
        with self._read_transaction(principal) as conn:
            found = browse_store.status_counts(conn, principal, "capture")
            dead = browse_store.dead_windows(conn, principal, DEAD_LETTERS_SHOWN)
        return {
            "counts": {s: found.get(s, 0) for s in CAPTURE_STATUSES},
            "dead_letters": [
                {
                    "window_id": str(w.id),
                    "session_id": w.session_id,
                    "client": w.client,
                    "turns": {"first": w.first_turn, "last": w.end_turn - 1},
                    "attempts": w.attempts,
                    "last_error": w.last_error,
                    "failed_at": w.updated_at.isoformat(),
                }
                for w in dead
            ],
        }

    # -- helpers ------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self, principal: Principal) -> Iterator[Connection[Any]]:
        with acting_for(self._pool, principal) as conn:
            yield conn

    @contextmanager
    def _read_transaction(self, principal: Principal) -> Iterator[Connection[Any]]:
        """A read-only transaction on the read pool (the replica, or the primary)."""
        with acting_for(self._read_pool, principal) as conn:
            yield conn


def require_read(principal: Principal) -> None:
    if not principal.can_read:
        raise PermissionDenied("this credential may not read memories (needs memory:read)")


def require_write(principal: Principal) -> None:
    if not principal.can_write:
        raise PermissionDenied("this credential may not change memories (needs memory:write)")


def _status(row: browse_store.BrowseRow) -> MemoryStatus:
    if row.deleted_at is not None:
        return "deleted"
    if row.superseded_by:
        return "superseded"
    return "archived" if row.archived_at is not None else "active"


def browsed(row: browse_store.BrowseRow, decay: store.Decay | None = None) -> BrowsedMemory:
    """A memory in any status as list, get and the duplicate pairs show it: the tools' record
    (MemoryService's, its confidence decayed with `decay`), with its status and the reason
    for it, whether its validity ended, and where it was saved."""
    record = memory_record(row, decay=decay)
    status = _status(row)
    return {
        **record,
        "status": status,
        "superseded_by": row.superseded_by,
        "deleted_at": None if row.deleted_at is None else row.deleted_at.isoformat(),
        "archived_at": None if row.archived_at is None else row.archived_at.isoformat(),
        "supersede_reason": row.supersede_reason if status == "superseded" else None,
        "superseded_because": superseded_because(row) if status == "superseded" else None,
        "delete_reason": row.delete_reason if status == "deleted" else None,
        "archive_reason": row.archive_reason if status == "archived" else None,
        "expired": expired(record["valid_until"]),
        "project_id": str(row.project_id),
    }


def expired(valid_until: str | None, now: datetime | None = None) -> bool:
    """Whether a validity that ends at `valid_until` (ISO 8601; None: never) has ended."""
    if valid_until is None:
        return False
    end = datetime.fromisoformat(valid_until)
    if end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    return end <= (now or datetime.now(UTC))


def _evidence(row: browse_store.EvidenceRow) -> Evidence:
    return {
        "at": row.created_at.isoformat(),
        "origin": row.origin,
        "session_id": row.session_id,
        "episode_id": None if row.episode_id is None else str(row.episode_id),
        "evidence": row.evidence,
        "independent": row.independent,
        "confidence_before": row.confidence_before,
        "confidence_after": row.confidence_after,
    }


def _context(row: browse_store.ContextRow) -> Context:
    return {
        "id": str(row.id),
        "name": row.name,
        "priority": row.priority,
        "memory_count": row.memory_count,
    }


def _used(row: browse_store.BrowseRow) -> UsedMemory:
    return {
        "id": str(row.id),
        "content": row.content,
        "category": row.category,
        "use_count": row.use_count,
        "last_used": None if row.last_used is None else row.last_used.isoformat(),
    }


def _memory_status(value: str) -> MemoryStatus:
    return validation.choice(value, MEMORY_STATUSES, "status")


def _injected_memory(
    row: browse_store.InjectionRow, index: int, now: tuple[str, str, str]
) -> InjectedMemory:
    """The memory at `index` of an injection, with its line as injected and its text now."""
    content, status, category = now
    memory_id = row.memory_ids[index]
    injected = None if row.memory_texts is None else row.memory_texts[index]
    return {
        "id": str(memory_id),
        "content": content,
        "status": _memory_status(status),
        "injected_text": injected,
        "estimated_tokens": None if row.memory_tokens is None else row.memory_tokens[index],
        "changed_since": injected is not None
        and injected != line_of(Candidate(memory_id, content, category)),
    }


def _prompt_state(row: browse_store.InjectionRow) -> PromptState:
    if row.event != "prompt":
        return "none"
    if row.prompt is not None:
        return "recorded"
    return "withheld" if row.prompt_sha256 is not None else "not_recorded"


def _link(row: browse_store.BrowseRow) -> ChainLink:
    return {"id": str(row.id), "content": row.content, "status": _status(row)}


TRACKED = (
    "content",
    "category",
    "confidence",
    "source",
    "importance",
    "valid_from",
    "valid_until",
    "rationale",
)


def _change(
    row: browse_store.VersionRow,
    before: browse_store.VersionRow,
    replaced: tuple[str, UUID] | None = None,
) -> str:
    """What `row` changed from the version `before` it, in words (reasons in brackets); a
    version written as the memory replaced another or gave that back (`replaced`) says so."""
    now, was = row.properties, before.properties
    if row.deleted_at is not None and before.deleted_at is None:
        return "deleted" + (f" ({row.delete_reason})" if row.delete_reason else "")
    if row.deleted_at is None and before.deleted_at is not None:
        return "restored"
    superseded, was_superseded = now.get("superseded_by"), was.get("superseded_by")
    if superseded and superseded != was_superseded:
        reason = now.get("supersede_reason")
        return f"superseded by {superseded}" + (f" ({reason})" if reason else "")
    if was_superseded and not superseded:
        return f"restored: no longer superseded by {was_superseded}"
    if now.get("archived_at") and not was.get("archived_at"):
        reason = now.get("archive_reason")
        return "archived" + (f" ({reason})" if reason else "")
    if was.get("archived_at") and not now.get("archived_at"):
        return "restored from the archive"
    changed = [f for f in TRACKED if now.get(f) != was.get(f)]
    if changed and replaced is not None:
        return _replacement_change(changed, *replaced)
    if changed:
        return "changed " + ", ".join(changed)
    return "no change to its text, category or confidence"


def _versions(
    versions: list[browse_store.VersionRow],
    replacements: Mapping[datetime, tuple[str, UUID]] | None = None,
) -> list[Version]:
    """Each version with what it changed from the one before, in words; a version written
    when the memory replaced another, or when that was undone (`replacements`, by moment),
    says what it took over from the other or gave back."""
    shown: list[Version] = []
    before: browse_store.VersionRow | None = None
    for row in versions:
        replaced = (replacements or {}).get(row.updated_at)
        change = "created" if before is None else _change(row, before, replaced)
        changed = (
            []
            if before is None
            else [f for f in TRACKED if row.properties.get(f) != before.properties.get(f)]
        )
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


def _replacement_change(changed: list[str], what: str, other: UUID) -> str:
    """A version written as the memory replaced `other` ("took") or as that was undone ("gave
    back"), in words: the properties it took over (authority.INHERITED) and any other change."""
    taken = [f for f in changed if f in authority.INHERITED]
    rest = [f for f in changed if f not in authority.INHERITED]
    if not taken:  # (a person's edit in the same moment: no replacement's doing)
        return "changed " + ", ".join(changed)
    if what == "took":
        said = f"took over {', '.join(taken)} from {other}, which it replaced"
    else:
        said = f"gave back the {', '.join(taken)} it took from {other} (the replacement was undone)"
    return said + (f"; changed {', '.join(rest)}" if rest else "")


def _memory_id(value: object) -> UUID:
    if isinstance(value, UUID):
        return value
    return validation.memory_id(value)


def as_uuid(value: object, field: str) -> UUID:
    """An id argument (a UUID or its text); `field` names it in the error."""
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


@dataclass(frozen=True)
class ListQuery:
    """A list's status, sort and filters, checked, and their fingerprint (`digest`)."""

    status: str
    sort: str
    filters: dict[str, Any]
    digest: str


def _list_query(
    status: str,
    sort: str,
    *,
    category: str | None = None,
    scope: str | None = None,
    importance: str | None = None,
    project_id: UUID | str | None = None,
    context: str | None = None,
    text: str | None = None,
    created_after: datetime | str | None = None,
    created_before: datetime | str | None = None,
    used_after: datetime | str | None = None,
    used_before: datetime | str | None = None,
) -> ListQuery:
    status_ = validation.choice(status, BROWSE_STATUSES, "status")
    sort_ = validation.choice(sort, BROWSE_SORTS, "sort")
    filters: dict[str, Any] = {
        "category": None if category is None else validation.category(category),
        "scope": None if scope is None else validation.scope(scope),
        "importance": None
        if importance is None
        else validation.choice(importance, IMPORTANCES, "importance"),
        "project_id": None if project_id is None else as_uuid(project_id, "project_id"),
        "context": None if context is None else validation.context_name(context),
        "text": _text(text),
        "created_after": _time(created_after, "created_after"),
        "created_before": _time(created_before, "created_before"),
        "used_after": _time(used_after, "used_after"),
        "used_before": _time(used_before, "used_before"),
    }
    for low, high in (("created_after", "created_before"), ("used_after", "used_before")):
        if filters[low] is not None and filters[high] is not None and filters[low] >= filters[high]:
            raise InvalidInput(f"{low} must be earlier than {high}")
    return ListQuery(status_, sort_, filters, _digest(status_, filters))


def _words_to_search(conn: Connection[Any], query: ListQuery) -> None:
    text = query.filters["text"]
    if text is not None and browse_store.query_words(conn, text) == 0:
        raise InvalidInput(
            "text has no word to search for (only common words such as 'the'); "
            "use more specific words"
        )


@dataclass(frozen=True)
class Position:
    """Where a cursor points: after (or, `backward`, before) the row with these key values,
    `skip` rows further on, at page number `page` (1 when the cursor does not say)."""

    key: builtins.list[Any]
    backward: bool
    page: int
    skip: int


def _position(cursor: object, query: ListQuery) -> Position:
    key = decode_cursor(cursor, query.sort, query.digest)
    decoded = _decoded(cursor)
    backward, page, skip = decoded.get("b", False), decoded.get("p", 1), decoded.get("n", 0)
    if (
        not isinstance(backward, bool)
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in (page, skip))
        or not 1 <= page <= 10**7
        or not 0 <= skip <= LIST_MAX_LIMIT * NEARBY_PAGES
    ):
        raise InvalidInput(BAD_CURSOR)
    return Position(key, backward, page, skip)


def _digest(status: str, filters: Mapping[str, Any]) -> str:
    """A short fingerprint of what the list shows: a cursor is valid for it only."""
    shown = {k: None if v is None else str(v) for k, v in filters.items()}
    text = json.dumps([status, shown], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def encode_cursor(
    sort: str,
    digest: str,
    key: tuple[Any, ...],
    *,
    page: int | None = None,
    skip: int = 0,
    backward: bool = False,
) -> str:
    """An opaque, url-safe cursor after the row with these key values, for the keyset `sort`
    of the list `digest` fingerprints; a numbered page's also says which `page` it opens,
    how many rows it skips, and whether it goes `backward` (before the row)."""
    values = [v.isoformat() if isinstance(v, datetime) else str(v) for v in key]
    fields: dict[str, Any] = {"v": CURSOR_VERSION, "s": sort, "f": digest, "k": values}
    if page is not None:
        fields.update(p=page, n=skip, b=backward)
    raw = json.dumps(fields)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


BAD_CURSOR = (
    "cursor is not one this list gave (pass next_cursor from the previous page unchanged, "
    "or no cursor for the first page)"
)


def _decoded(cursor: object) -> dict[str, Any]:
    if not isinstance(cursor, str) or not cursor or len(cursor) > 1000:
        raise InvalidInput(BAD_CURSOR)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        decoded = json.loads(raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput(BAD_CURSOR) from None
    if not isinstance(decoded, dict):
        raise InvalidInput(BAD_CURSOR)
    return decoded


def decode_cursor(
    cursor: object, sort: str, digest: str, types: tuple[str, ...] | None = None
) -> list[Any]:
    """The key values of a cursor that encode_cursor made for this sort (a list's, or
    another keyset such as the open duplicate pairs', with its `types`) and digest."""
    decoded = _decoded(cursor)
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
            elif type_ == "text":
                parsed.append(value)
            elif type_ == "bigint":
                parsed.append(int(value))
            else:
                parsed.append(float(value))
    except ValueError:
        raise InvalidInput(BAD_CURSOR) from None
    return parsed
