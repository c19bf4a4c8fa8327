"""The memories' endpoints of /api/v1: the list with filters and cursor pages and one memory's
page (BrowseService); search, update, evidence (reinforce), archiving, deletion and
restoration, one by one or in bulk (MemoryService: the tools' own methods, with the same
checks, scopes and row-level security); verify, a claim against the memories
(VerifyService); possible duplicates and a person's decision on each (DuplicateService). Each
is one service call."""

from __future__ import annotations

from typing import Any

from emergent_memory.api.common import Call, Endpoint, Input, NoInput, QueryInput
from emergent_memory.auth.principal import WRITE
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.browse import (
    BrowseResult,
    BrowseService,
    BrowseSort,
    BrowseStatus,
    MemoryDetail,
)
from emergent_memory.memory.duplicates import (
    Decided,
    Decision,
    DuplicateService,
    OpenPairs,
    Undone,
)
from emergent_memory.memory.models import (
    ArchiveResult,
    BulkResult,
    Category,
    DeleteResult,
    Importance,
    MemoryScope,
    RecallResult,
    ReinforceResult,
    RestoreResult,
    UpdateResult,
)
from emergent_memory.memory.service import MemoryService
from emergent_memory.memory.verify import VerifyResult, VerifyService

TAGS = ("memories",)


class ListQuery(QueryInput):
    """The list's filters (dates ISO 8601; `text`: words, as recall's full text) and page."""

    status: BrowseStatus = "active"
    category: Category | None = None
    scope: MemoryScope | None = None
    importance: Importance | None = None
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
    count: bool = False  # also count every memory the filters match (`total`)


class SearchQuery(QueryInput):
    """`include_archived`: archived memories too; `as_of` (ISO 8601 date or time): what was
    believed true then (memories since superseded or archived included); `min_relevance`
    (0 to 1): the least relevance of what comes back (default: the calibrated floor)."""

    query: str
    category: Category | None = None
    scope: MemoryScope | None = None
    limit: int | None = None
    include_archived: bool = False
    as_of: str | None = None
    min_relevance: float | None = None


class MemoryChanges(Input):
    """The fields to change; at least one. A change of content is a new version (same id);
    null removes importance (back to normal), a validity bound or the rationale."""

    content: str | None = None
    category: Category | None = None
    confidence: float | None = None
    importance: Importance | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    rationale: str | None = None


class DeleteQuery(QueryInput):
    """Why it is deleted (optional, kept with the deletion)."""

    reason: str | None = None


class EvidenceInput(Input):
    """The evidence that backs the memory: a short quote or where it was seen (1 to 500
    characters); `session_id` the client session it came from, if any."""

    evidence: str
    session_id: str | None = None


class ArchiveInput(Input):
    """Why it is archived (optional, kept with the archived version)."""

    reason: str | None = None


class VerifyInput(Input):
    """A claim to check against the memories the token sees, optionally in one category or
    scope; `limit` the matches to show (1 to 20, 5 by default)."""

    claim: str
    category: Category | None = None
    scope: MemoryScope | None = None
    limit: int | None = None


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
    memory: MemoryService,
    browse: BrowseService,
    duplicates: DuplicateService,
    verifier: VerifyService,
) -> list[Endpoint[Any, Any]]:
    def listed(call: Call[ListQuery, NoInput]) -> BrowseResult:
        asked = call.query.model_dump()
        counted = asked.pop("count")
        found = browse.list(call.principal, **asked)
        if counted:  # the same filters, every page
            paging = ("cursor", "limit", "sort")
            filters = {name: value for name, value in asked.items() if name not in paging}
            found["total"] = browse.count(call.principal, **filters)
        return found

    def detail(call: Call[NoInput, NoInput]) -> MemoryDetail:
        return browse.get(call.principal, call.path["memory_id"])

    def search(call: Call[SearchQuery, NoInput]) -> RecallResult:
        query = call.query
        # a person looking is not an agent using what it found: no use is recorded
        return memory.recall(
            call.principal,
            query.query,
            query.category,
            query.scope,
            query.limit,
            record_use=False,
            include_archived=query.include_archived,
            as_of=query.as_of,
            min_relevance=query.min_relevance,
        )

    def update(call: Call[NoInput, MemoryChanges]) -> UpdateResult:
        changes = call.body.model_dump(exclude_unset=True)
        if not changes:  # the service's message names the tool's argument, not the body
            raise InvalidInput(
                "the body must set at least one of: " + ", ".join(MemoryChanges.model_fields)
            )
        return memory.update(call.principal, call.path["memory_id"], changes)

    def delete(call: Call[DeleteQuery, NoInput]) -> DeleteResult:
        return memory.delete(call.principal, call.path["memory_id"], reason=call.query.reason)

    def reinforce(call: Call[NoInput, EvidenceInput]) -> ReinforceResult:
        body = call.body
        return memory.reinforce(
            call.principal, call.path["memory_id"], body.evidence, session_id=body.session_id
        )

    def archive(call: Call[NoInput, ArchiveInput]) -> ArchiveResult:
        return memory.archive(call.principal, call.path["memory_id"], reason=call.body.reason)

    def verify(call: Call[NoInput, VerifyInput]) -> VerifyResult:
        body = call.body
        return verifier.verify(call.principal, body.claim, body.category, body.scope, body.limit)

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

    def undo(call: Call[NoInput, NoInput]) -> Undone:
        return duplicates.undo(call.principal, call.path["pair_id"])

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
            "/verify",
            "Check a claim against the memories: confirmed, related, conflict or new, with "
            "the matching memories and why (reads only; no use is counted)",
            verify,
            VerifyResult,
            NoInput,
            VerifyInput,
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
            "Change a memory's content, category, confidence, importance, validity or "
            "rationale (a new version, same id)",
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
            "Delete a memory, with an optional reason (kept as history; restore brings it back)",
            delete,
            DeleteResult,
            DeleteQuery,
            NoInput,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            one + "/restore",
            "Make a deleted, superseded or archived memory active again",
            restore,
            RestoreResult,
            NoInput,
            NoInput,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            one + "/reinforce",
            "Record evidence for a memory (new evidence raises its confidence, never above 1)",
            reinforce,
            ReinforceResult,
            NoInput,
            EvidenceInput,
            scope=WRITE,
            tags=TAGS,
        ),
        Endpoint(
            "post",
            one + "/archive",
            "Archive a memory, with an optional reason (recall and injection leave it out; "
            "restore brings it back)",
            archive,
            ArchiveResult,
            NoInput,
            ArchiveInput,
            scope=WRITE,
            tags=TAGS,
            body_optional=True,
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
        Endpoint(
            "post",
            "/duplicates/{pair_id}/undo",
            "Take back a keep-both or supersede decision: the pair waits again (a removed "
            "conflict link is made again, a superseded memory restored)",
            undo,
            Undone,
            NoInput,
            NoInput,
            scope=WRITE,
            tags=("duplicates",),
        ),
    ]
