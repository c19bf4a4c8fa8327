"""The memories' endpoints of /api/v1: the list with filters and cursor pages and one memory's
page (BrowseService); search, update, deletion and restoration, one by one or in bulk
(MemoryService: the tools' own methods, with the same checks, scopes and row-level security);
possible duplicates and a person's decision on each (DuplicateService). Each is one service
call."""

from __future__ import annotations

from typing import Any

from emergent_memory.api.common import Call, Endpoint, Input, NoInput, QueryInput
from emergent_memory.auth.principal import WRITE
from emergent_memory.memory.browse import (
    BrowseResult,
    BrowseService,
    BrowseSort,
    BrowseStatus,
    MemoryDetail,
)
from emergent_memory.memory.duplicates import Decided, Decision, DuplicateService, OpenPairs
from emergent_memory.memory.models import (
    BulkResult,
    Category,
    DeleteResult,
    MemoryScope,
    RecallResult,
    RestoreResult,
    UpdateResult,
)
from emergent_memory.memory.service import MemoryService

TAGS = ("memories",)


class ListQuery(QueryInput):
    """The list's filters (dates ISO 8601; `text`: words, as recall's full text) and page."""

    status: BrowseStatus = "active"
    category: Category | None = None
    scope: MemoryScope | None = None
    project_id: str | None = None
    context: str | None = None
    text: str | None = None
    created_after: str | None = None
    created_before: str | None = None
    used_after: str | None = None
    used_before: str | None = None
    sort: BrowseSort = "recent"
    cursor: str | None = None
    limit: int | None = None


class SearchQuery(QueryInput):
    query: str
    category: Category | None = None
    scope: MemoryScope | None = None
    limit: int | None = None


class MemoryChanges(Input):
    """The fields to change; at least one. A change of content is a new version (same id)."""

    content: str | None = None
    category: Category | None = None
    confidence: float | None = None


class Ids(Input):
    """The memories a bulk change is for (each on its own; at most 200)."""

    ids: list[str]


class PageQuery(QueryInput):
    cursor: str | None = None
    limit: int | None = None


class DecisionInput(Input):
    """keep_both; or supersede / merge, naming in `keep` the memory of the pair that stays.
    merge: `content` is the merged text (by default `keep`'s own)."""

    decision: Decision
    keep: str | None = None
    content: str | None = None


def memory_endpoints(
    memory: MemoryService, browse: BrowseService, duplicates: DuplicateService
) -> list[Endpoint[Any, Any]]:
    def listed(call: Call[ListQuery, NoInput]) -> BrowseResult:
        return browse.list(call.principal, **call.query.model_dump())

    def detail(call: Call[NoInput, NoInput]) -> MemoryDetail:
        return browse.get(call.principal, call.path["memory_id"])

    def search(call: Call[SearchQuery, NoInput]) -> RecallResult:
        query = call.query
        # a person looking is not an agent using what it found: no use is recorded
        return memory.recall(
            call.principal, query.query, query.category, query.scope, query.limit, record_use=False
        )

    def update(call: Call[NoInput, MemoryChanges]) -> UpdateResult:
        changes = call.body.model_dump(exclude_unset=True)
        return memory.update(call.principal, call.path["memory_id"], changes)

    def delete(call: Call[NoInput, NoInput]) -> DeleteResult:
        return memory.delete(call.principal, call.path["memory_id"])

    def restore(call: Call[NoInput, NoInput]) -> RestoreResult:
        return memory.restore(call.principal, call.path["memory_id"])

    def bulk_delete(call: Call[NoInput, Ids]) -> BulkResult:
        return memory.bulk_delete(call.principal, call.body.ids)

    def bulk_restore(call: Call[NoInput, Ids]) -> BulkResult:
        return memory.bulk_restore(call.principal, call.body.ids)

    def open_pairs(call: Call[PageQuery, NoInput]) -> OpenPairs:
        return duplicates.open(call.principal, call.query.cursor, call.query.limit)

    def decide(call: Call[NoInput, DecisionInput]) -> Decided:
        body = call.body
        return duplicates.decide(
            call.principal, call.path["pair_id"], body.decision, body.keep, body.content
        )

    one = "/memories/{memory_id}"
    return [
        Endpoint(
            "get",
            "/memories",
            "List memories with filters and a sort, one page at a time (next_cursor)",
            listed,
            BrowseResult,
            ListQuery,
            NoInput,
            tags=TAGS,
        ),
        Endpoint(
            "get",
            "/memories/search",
            "Search memories by meaning and words (hybrid recall), with why each matched; "
            "a search is not a use",
            search,
            RecallResult,
            SearchQuery,
            NoInput,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            "/memories/bulk-delete",
            "Delete several memories, each on its own (each id's outcome in results)",
            bulk_delete,
            BulkResult,
            NoInput,
            Ids,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            "/memories/bulk-restore",
            "Restore several memories, each on its own (each id's outcome in results)",
            bulk_restore,
            BulkResult,
            NoInput,
            Ids,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "get",
            one,
            "A memory with its versions, supersession chain, relationships, provenance, uses",
            detail,
            MemoryDetail,
            NoInput,
            NoInput,
            tags=TAGS,
        ),
        Endpoint(
            "patch",
            one,
            "Change a memory's content, category or confidence (a new version, same id)",
            update,
            UpdateResult,
            NoInput,
            MemoryChanges,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "delete",
            one,
            "Delete a memory (kept as history; restore brings it back)",
            delete,
            DeleteResult,
            NoInput,
            NoInput,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            one + "/restore",
            "Make a deleted or superseded memory active again",
            restore,
            RestoreResult,
            NoInput,
            NoInput,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "get",
            "/duplicates",
            "Pairs of close memories waiting for a person's decision, newest first",
            open_pairs,
            OpenPairs,
            PageQuery,
            NoInput,
            tags=("duplicates",),
        ),
        Endpoint(
            "post",
            "/duplicates/{pair_id}/decision",
            "Decide a pair: keep both, supersede one by the other, or merge them",
            decide,
            Decided,
            NoInput,
            DecisionInput,
            scope=WRITE,
            tags=("duplicates",),
        ),
    ]
