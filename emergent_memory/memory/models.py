"""The memory service's vocabulary: who is asking (Principal) and the plain-data results."""

from __future__ import annotations

from typing import Literal, NotRequired, get_args

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from emergent_memory.graph.models import Scope

# The vocabularies, each named once. The category, source and scope of a memory are the enums
# of the agent-memory pack's Memory type (packs/agent-memory.json); tests/test_packs.py holds
# them equal. The tools' argument types, the CLI's choices and the checks of validation.py all
# come from here.
Category = Literal[
    "preference",
    "pattern",
    "correction",
    "fact",
    "instruction",
    "convention",
    "decision",
    "lesson",
    "risk",
]
Source = Literal["explicit", "inferred", "corrected"]
MemoryScope = Scope  # a memory's scope is its graph object's
Action = Literal["list", "delete", "update", "restore", "forget_all"]
# What manage_memory list shows: active memories (the default), or the history restore can
# bring back.
ListStatus = Literal["active", "superseded", "deleted"]
# What restore brought a memory back from.
RestoredFrom = Literal["superseded", "deleted", "superseded and deleted"]

CATEGORIES: tuple[Category, ...] = get_args(Category)
SOURCES: tuple[Source, ...] = get_args(Source)
SCOPES: tuple[MemoryScope, ...] = get_args(MemoryScope)
ACTIONS: tuple[Action, ...] = get_args(Action)
LIST_STATUSES: tuple[ListStatus, ...] = get_args(ListStatus)

# Starting confidence of a memory by how it was learned (DESIGN.md 4).
CONFIDENCE_BY_SOURCE: dict[Source, float] = {"explicit": 1.0, "corrected": 0.9, "inferred": 0.7}


class TurnRange(TypedDict):
    """Turns of a client session, both included (0 = the session's first message)."""

    first: int
    last: int


class Provenance(TypedDict):
    """Where a memory came from: the conversation window (Episode) automatic capture derived
    it from (`episode_id`), in which client session, which turns, and when it was read."""

    episode_id: str
    session_id: str
    client: str
    turns: TurnRange
    captured_at: str


class MemoryRecord(TypedDict):
    """A memory as the tools return it. `id` is the canonical id, stable across updates.
    `derived_from`: the conversation it was captured from, or None (saved by a tool, or its
    episode is not visible to the caller here)."""

    id: str
    content: str
    category: str
    scope: str
    source: str
    confidence: float
    contexts: list[str]
    use_count: int
    last_used: str | None
    created_at: str
    updated_at: str
    derived_from: Provenance | None


class ScoreBreakdown(TypedDict):
    """Why a memory ranked where it did: each branch's rank (1 = best; None = not a candidate
    of that branch), the full-text score, the cosine similarity, the fused and final scores."""

    lexical_rank: int | None
    lexical_score: float | None
    vector_rank: int | None
    similarity: float | None
    fused: float
    score: float


class RecalledMemory(MemoryRecord):
    score: float
    scores: ScoreBreakdown


class PossibleDuplicate(TypedDict):
    """A visible memory close to a new one that the dedup rule did not supersede: the agent
    decides whether it is the same fact (then updates or deletes the older one)."""

    id: str
    content: str
    similarity: float


class SaveResult(TypedDict):
    status: Literal["created", "updated", "unchanged"]
    memory: MemoryRecord
    superseded_ids: list[str]
    similarity: float | None
    possible_duplicates: list[PossibleDuplicate]
    degraded: bool


class RecalledEpisode(TypedDict):
    """A captured conversation window that matched a recall with include_episodes: which
    session, client and turns, when it was read, its summary (None when capture gave none), a
    bounded excerpt of its text around the first match of the query's rarest word found (else
    its beginning), and its fused score (words and meaning, as for memories)."""

    id: str
    session_id: str
    client: str
    turns: TurnRange
    captured_at: str
    summary: str | None
    excerpt: str
    score: float


class RecallResult(TypedDict):
    """`episodes` only when the recall asked for them (include_episodes), never mixed with
    the memories."""

    memories: list[RecalledMemory]
    degraded: bool
    episodes: NotRequired[list[RecalledEpisode]]


class InactiveMemory(MemoryRecord):
    """A memory that list shows with status superseded or deleted: `superseded_by` is the id
    of the memory that replaced it, `deleted_at` when it was deleted."""

    status: Literal["superseded", "deleted"]
    superseded_by: str | None
    deleted_at: str | None


class ListResult(TypedDict):
    memories: list[InactiveMemory | MemoryRecord]  # InactiveMemory for status superseded/deleted
    count: int


class DeleteResult(TypedDict):
    deleted: str


class UpdateResult(TypedDict):
    """`possible_duplicates`: other visible memories close to the new content. An update
    never supersedes another memory; the agent decides (delete one, or keep both)."""

    memory: MemoryRecord
    possible_duplicates: list[PossibleDuplicate]


class RestoreResult(TypedDict):
    """`restored_from`: what the memory was; `broken_supersession`: the id of the memory that
    had superseded it (that one stays active; the link is kept as history, deleted)."""

    memory: MemoryRecord
    restored_from: RestoredFrom
    broken_supersession: str | None


class SupersedeResult(TypedDict):
    """The memory that stays (after its new version, if it got one) and the one it
    superseded."""

    memory: MemoryRecord
    superseded_ids: list[str]


class BulkError(TypedDict):
    code: str
    message: str


class BulkItem(TypedDict):
    """One id of a bulk change: `ok`, or the error that change of it met (`code` as the
    REST API's: not_found, forbidden, invalid_input)."""

    id: str
    ok: bool
    error: NotRequired[BulkError]


class BulkResult(TypedDict):
    """Each id's outcome, in the order given, and how many memories changed."""

    results: list[BulkItem]
    changed: int


class ForgetAllResult(TypedDict):
    deleted_count: int


class ManageResult(TypedDict, total=False):
    """What manage_memory returns: the keys of the action's own result (ListResult for list,
    DeleteResult for delete, UpdateResult for update, RestoreResult for restore,
    ForgetAllResult for forget_all)."""

    memories: list[InactiveMemory | MemoryRecord]
    count: int
    deleted: str
    memory: MemoryRecord
    possible_duplicates: list[PossibleDuplicate]
    restored_from: RestoredFrom
    broken_supersession: str | None
    deleted_count: int


class ProjectStats(TypedDict):
    project_id: str
    active: int
    superseded: int
    deleted: int
    archived: int
    by_category: dict[str, int]


class StatsResult(TypedDict):
    actor_id: str
    project_id: str
    projects: list[ProjectStats]
    active: int
    superseded: int
    deleted: int
    archived: int


class ReembedResult(TypedDict):
    model: str
    reembedded: int
    remaining: int
