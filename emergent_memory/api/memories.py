"""The memories' endpoints of /api/v1: search, one memory's update, deletion and restoration,
each one call of MemoryService (the tools' own methods, with the same checks, scopes and
row-level security)."""

from __future__ import annotations

from typing import Any

from emergent_memory.api.common import Call, Endpoint, Input, NoInput, QueryInput
from emergent_memory.auth.principal import WRITE
from emergent_memory.memory.models import (
    Category,
    DeleteResult,
    MemoryScope,
    RecallResult,
    RestoreResult,
    UpdateResult,
)
from emergent_memory.memory.service import MemoryService

TAGS = ("memories",)


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


def memory_endpoints(memory: MemoryService) -> list[Endpoint[Any, Any]]:
    def search(call: Call[SearchQuery, NoInput]) -> RecallResult:
        query = call.query
        return memory.recall(call.principal, query.query, query.category, query.scope, query.limit)

    def update(call: Call[NoInput, MemoryChanges]) -> UpdateResult:
        changes = call.body.model_dump(exclude_unset=True)
        return memory.update(call.principal, call.path["memory_id"], changes)

    def delete(call: Call[NoInput, NoInput]) -> DeleteResult:
        return memory.delete(call.principal, call.path["memory_id"])

    def restore(call: Call[NoInput, NoInput]) -> RestoreResult:
        return memory.restore(call.principal, call.path["memory_id"])

    one = "/memories/{memory_id}"
    return [
        Endpoint(
            "get",
            "/memories/search",
            "Search memories by meaning and words (hybrid recall), with why each matched",
            search,
            RecallResult,
            SearchQuery,
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
    ]
