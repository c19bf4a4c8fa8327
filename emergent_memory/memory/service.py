"""MemoryService: save, recall and manage memories for a principal (the three tools' logic).

Inputs are the tools' arguments, outputs plain JSON-serializable dicts. Every write runs in
one transaction: the memory, its versions, edges and embedding job commit together or not at
all. Embedding happens before the transaction, so no lock is held while a model runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool, transaction
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.errors import (
    EmbeddingUnavailable,
    InvalidInput,
    MemoryNotFound,
    NotFound,
    ObjectNotFound,
    PermissionDenied,
)
from emergent_memory.graph import Embedding, GraphObject
from emergent_memory.memory import episodes, store, validation
from emergent_memory.memory.dedup import DedupPolicy, Verdict
from emergent_memory.memory.models import (
    CONFIDENCE_BY_SOURCE,
    Action,
    BulkItem,
    BulkResult,
    Category,
    DeleteResult,
    ForgetAllResult,
    InactiveMemory,
    ListResult,
    ListStatus,
    MemoryRecord,
    MemoryScope,
    PossibleDuplicate,
    ProjectStats,
    Provenance,
    RecalledEpisode,
    RecalledMemory,
    RecallResult,
    RestoredFrom,
    RestoreResult,
    SaveResult,
    Source,
    StatsResult,
    SupersedeResult,
    UpdateResult,
)

logger = logging.getLogger(__name__)

UNREACHABLE = (
    "lost the database connection during this request (the database restarted or is "
    "unreachable); try again in a moment (saving the same memory again is safe: repeats are "
    "recognised)"
)

PACK = "agent-memory"
DEFAULT_CONTEXT_PRIORITY = 50
RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT = 10, 50
EPISODES_MAX_LIMIT = 10  # episodes a recall returns at most (each with a summary and excerpt)
LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT = 20, 100
BULK_MAX_IDS = 200  # memories one bulk delete or restore changes at most


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The service's tunables (from Settings, in the composition root).

    `dedup_threshold`, `dedup_text_rule_from`, `dedup_named_change_from` and
    `dedup_latin_only_model` are a DedupPolicy (memory/dedup.py): when a new memory supersedes
    its nearest one (None bands: the plain threshold, for models it was not calibrated on).
    """

    dedup_threshold: float
    dedup_text_rule_from: float | None = None
    dedup_named_change_from: float | None = None
    dedup_latin_only_model: bool = False
    max_content_length: int = 2000
    recall_candidates: int = 50
    recall_rrf_k: int = 10
    recall_lexical_weight: float = 1.0
    recall_vector_weight: float = 1.5
    recall_confidence_weight: float = 0.2
    recall_min_similarity: float = 0.15

    @property
    def dedup_policy(self) -> DedupPolicy:
        return DedupPolicy(
            self.dedup_threshold,
            self.dedup_text_rule_from,
            self.dedup_named_change_from,
            self.dedup_latin_only_model,
        )

    @property
    def recall_tuning(self) -> dict[str, Any]:
        """The fusion settings, as `store.recall` takes them."""
        return {
            "candidates": self.recall_candidates,
            "rrf_k": self.recall_rrf_k,
            "lexical_weight": self.recall_lexical_weight,
            "vector_weight": self.recall_vector_weight,
            "confidence_weight": self.recall_confidence_weight,
            "min_similarity": self.recall_min_similarity,
        }

    @property
    def episode_tuning(self) -> dict[str, Any]:
        """The fusion settings, as `episodes.search` takes them (no confidence: an episode
        has none)."""
        tuning = self.recall_tuning
        del tuning["confidence_weight"]
        return tuning


class MemoryService:
    def __init__(
        self, pool: DatabasePool, embedder: EmbeddingProvider, config: MemoryConfig
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._config = config
        self._dedup = config.dedup_policy
        self._projects_with_pack: set[UUID] = set()

    @property
    def embedder(self) -> EmbeddingProvider:
        """The embedding provider: automatic capture embeds a conversation with it to find
        the memories closest to it."""
        return self._embedder

    @property
    def pool(self) -> DatabasePool:
        """The connection pool: the composition root builds the services that share it (API
        tokens, the embedding worker) on it, and tests read through it. The edges (MCP, CLI)
        never use it: they call services."""
        return self._pool

    def database_reachable(self) -> bool:
        """Whether the database answers, for the health check (DatabasePool.database_reachable:
        a probe of a few seconds at most, its answer reused for a second)."""
        return self._pool.database_reachable()

    # -- save_memory ------------------------------------------------------------------------

    def save(
        self,
        principal: Principal,
        content: str,
        category: Category,
        source: Source = "inferred",
        scope: MemoryScope = "user",
        context: str | None = None,
        related_to: Sequence[str] | None = None,
        *,
        derived_from: UUID | None = None,
    ) -> SaveResult:
        """Store a memory, or reinforce or supersede the one it repeats.

        `derived_from` (automatic capture's, never a tool argument): the Episode the memory
        was extracted from; the stored (or reinforced) memory is linked to it with
        DERIVED_FROM in the same transaction.
        """
        text = validation.content(content, max_length=self._config.max_content_length)
        category_ = validation.category(category)
        source_ = validation.source(source)
        scope_ = validation.scope(scope)
        context_ = validation.context_name(context)
        related = validation.related_ids(related_to)
        self._require_write(principal)
        if scope_ == "global" and not principal.is_admin:
            raise PermissionDenied("only an administrator credential can save global memories")
        validation.no_secrets(text)

        embedding = self._embed_document(text)
        with self._transaction(principal) as conn:
            store.lock_saves(conn, principal, scope_)
            targets = self._related_targets(conn, principal, related)
            # in the save's transaction: a refused save leaves no installation behind
            self.ensure_pack(conn, principal.project_id)

            exact = store.find_exact(conn, principal, scope_, text)
            if exact is not None:
                result = self._reinforce(conn, principal, exact, source_, context_, targets)
                self._link_source(conn, principal, exact, derived_from)
                return result

            nearest = None
            if embedding is not None:
                nearest = store.find_nearest(
                    conn, principal, scope_, embedding.vector, embedding.model
                )
            verdict: Verdict = (
                "distinct"
                if nearest is None
                else self._dedup.decide(nearest.similarity, nearest.content, text)
            )
            if nearest is not None and verdict == "supersede":
                # hold it: a delete or another supersession of it waits until this commits
                graph.lock_object(conn, nearest.id)
                if not store.is_active(graph.get_head(conn, nearest.id)):
                    nearest, verdict = None, "distinct"  # gone since it was found

            memory = graph.create_object(
                conn,
                project_id=principal.project_id,
                type=store.MEMORY,
                actor_id=principal.actor_id,
                scope=scope_,
                properties={
                    "content": text,
                    "category": category_,
                    "source": source_,
                    "scope": scope_,
                    "confidence": CONFIDENCE_BY_SOURCE[source_],
                },
                labels=["memory", category_, scope_],
                embedding=embedding,
            )
            if embedding is None:
                jobs.enqueue(conn, memory)
            context_ids = self._context_ids(conn, principal, context_)
            superseded_ids: list[str] = []
            possible_duplicates: list[PossibleDuplicate] = []
            if nearest is not None and verdict == "possible_duplicate":
                possible_duplicates.append(
                    {
                        "id": str(nearest.id),
                        "content": nearest.content,
                        "similarity": round(nearest.similarity, 4),
                    }
                )
                store.record_possible_duplicate(
                    conn, principal, memory.canonical_id, nearest.id, nearest.similarity
                )
            if nearest is not None and verdict == "supersede":
                old_id = nearest.id
                if context_ is None:  # the replacement stays where the old fact was filed
                    context_ids = store.contexts_of(conn, old_id)
                self._supersede(conn, principal, memory.canonical_id, old_id)
                superseded_ids.append(str(old_id))
            for context_id in context_ids:
                self._link(
                    conn, principal, store.BELONGS_TO_CONTEXT, memory.canonical_id, context_id
                )
            self._link_related(conn, principal, memory.canonical_id, targets)
            self._link_source(conn, principal, memory.canonical_id, derived_from)
            record = self._records(conn, [memory.canonical_id])[0]
        self._projects_with_pack.add(principal.project_id)  # committed: no need to look again
        return {
            "status": "updated" if superseded_ids else "created",
            "memory": record,
            "superseded_ids": superseded_ids,
            "similarity": None if nearest is None else round(nearest.similarity, 4),
            "possible_duplicates": possible_duplicates,
            "degraded": embedding is None,
        }

    def _reinforce(
        self,
        conn: Connection[Any],
        principal: Principal,
        memory_id: UUID,
        source: Source,
        context: str | None,
        targets: list[UUID],
    ) -> SaveResult:
        graph.lock_object(conn, memory_id)
        head = graph.get_head(conn, memory_id)
        if head is None:  # deleted since it was found; the caller's lock keeps saves apart
            raise MemoryNotFound(f"memory {memory_id} was deleted meanwhile; save it again")
        wanted = CONFIDENCE_BY_SOURCE[source]
        if float(head.properties.get("confidence", 0.0)) < wanted:
            graph.update_object(conn, memory_id, properties={"confidence": wanted})
        for context_id in self._context_ids(conn, principal, context):
            self._link(conn, principal, store.BELONGS_TO_CONTEXT, memory_id, context_id)
        self._link_related(conn, principal, memory_id, targets)
        return {
            "status": "unchanged",
            "memory": self._records(conn, [memory_id])[0],
            "superseded_ids": [],
            "similarity": 1.0,
            "possible_duplicates": [],
            "degraded": False,
        }

    # -- recall_memories --------------------------------------------------------------------

    def recall(
        self,
        principal: Principal,
        query: str,
        category: Category | None = None,
        scope: MemoryScope | None = None,
        limit: int | None = None,
        include_episodes: bool = False,
        session_id: str | None = None,
        *,
        record_use: bool = True,
    ) -> RecallResult:
        """The visible active memories that best match the query, by meaning and by words.

        With `include_episodes`, also the caller's captured conversation windows (Episodes)
        that match, in `episodes` (at most `limit`, and EPISODES_MAX_LIMIT), never among the
        memories and never counted as a use; `session_id` keeps those of one client session
        (`category` is a memory's and does not filter them; `scope` does).

        Each memory found counts as used (an agent recalled it), unless `record_use` is False
        (a person searching from the REST API or the dashboard): then nothing is written and
        the use counts and last uses are as stored.
        """
        text = validation.content(query, max_length=self._config.max_content_length, field="query")
        category_ = None if category is None else validation.category(category)
        scope_ = None if scope is None else validation.scope(scope)
        limit_ = validation.limit(limit, default=RECALL_DEFAULT_LIMIT, maximum=RECALL_MAX_LIMIT)
        with_episodes = validation.flag(include_episodes, "include_episodes")
        session = validation.session_id(session_id)
        if session is not None and not with_episodes:
            raise InvalidInput(
                "session_id chooses the conversation whose episodes are searched; "
                "pass include_episodes too"
            )
        self._require_read(principal)

        vector: Vector | None = None
        try:
            vector = Vector(self._embedder.embed_query(text))
        except EmbeddingUnavailable as error:
            logger.warning("recall degraded to full-text search: %s", error)
        with self._transaction(principal) as conn:
            rows = store.recall(
                conn,
                principal,
                query=text,
                embedding=vector,
                model=self._embedder.model_name,
                category=category_,
                scope=scope_,
                limit=limit_,
                **self._config.recall_tuning,
            )
            found: list[episodes.EpisodeRow] = []
            if with_episodes:  # read only: an episode has no use count
                found = episodes.search(
                    conn,
                    principal,
                    query=text,
                    embedding=vector,
                    model=self._embedder.model_name,
                    scope=scope_,
                    session_id=session,
                    limit=min(limit_, EPISODES_MAX_LIMIT),
                    **self._config.episode_tuning,
                )
            recalled_at = None
            if record_use:
                recalled_at = store.record_recalls(conn, principal, [row.id for row in rows])
        memories: list[RecalledMemory] = []
        for row in rows:
            used = 0 if recalled_at is None else 1
            memories.append(
                {
                    **memory_record(row, use_count=row.use_count + used, last_used=recalled_at),
                    "score": round(row.score, 6),
                    "scores": {
                        "lexical_rank": row.lexical_rank,
                        "lexical_score": _rounded(row.lexical_score),
                        "vector_rank": row.vector_rank,
                        "similarity": _rounded(row.similarity),
                        "fused": round(row.fused, 6),
                        "score": round(row.score, 6),
                    },
                }
            )
        result: RecallResult = {"memories": memories, "degraded": vector is None}
        if with_episodes:
            result["episodes"] = [_episode(row) for row in found]
        return result

    # -- manage_memory ----------------------------------------------------------------------

    def manage(
        self,
        principal: Principal,
        action: Action,
        memory_id: str | None = None,
        updates: Mapping[str, Any] | None = None,
        category: Category | None = None,
        limit: int | None = None,
        confirm: bool = False,
        status: ListStatus | None = None,
    ) -> ListResult | DeleteResult | UpdateResult | RestoreResult | ForgetAllResult:
        """The manage_memory tool: one of list, delete, update, restore, forget_all."""
        action_ = validation.action(action)
        if status is not None and action_ != "list":
            raise InvalidInput(f"status is a filter of list; {action_} does not take it")
        if action_ == "list":
            return self.list_memories(principal, category=category, limit=limit, status=status)
        if action_ == "forget_all":
            return self.forget_all(principal, confirm=confirm)
        id_ = str(validation.memory_id(memory_id))
        if action_ == "delete":
            return self.delete(principal, id_)
        if action_ == "update":
            return self.update(principal, id_, updates or {})  # {}: "updates must be an object"
        return self.restore(principal, id_)

    def list_memories(
        self,
        principal: Principal,
        category: Category | None = None,
        limit: int | None = None,
        status: ListStatus | None = None,
    ) -> ListResult:
        """Visible active memories, most used first, then newest; or, with `status`
        superseded or deleted, the visible memories in that state, most recently changed
        first (what `restore` can bring back)."""
        category_ = None if category is None else validation.category(category)
        limit_ = validation.limit(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
        status_ = "active" if status is None else validation.list_status(status)
        self._require_read(principal)
        with self._transaction(principal) as conn:
            if status_ == "active":
                memories = [
                    memory_record(row)
                    for row in store.list_visible(conn, principal, category_, limit_)
                ]
            else:
                rows = store.list_inactive(conn, principal, status_, category_, limit_)
                memories = [_inactive_record(row) for row in rows]
        return {"memories": memories, "count": len(memories)}

    def delete(self, principal: Principal, memory_id: str) -> DeleteResult:
        """Soft-delete one memory (kept as history, never recalled again)."""
        id_ = validation.memory_id(memory_id)
        self._require_write(principal)
        with self._transaction(principal) as conn:
            self._writable_memory(conn, principal, id_)
            graph.delete_object(conn, id_, reason="deleted by its owner")
        return {"deleted": str(id_)}

    def update(
        self, principal: Principal, memory_id: str, updates: Mapping[str, Any]
    ) -> UpdateResult:
        """A new version of the memory with the same id; new content is re-embedded.

        New content goes through save's checks: secrets are refused, and so is the exact text
        of another active memory the caller sees in the same scope (two identical memories
        would both be recalled; the error names the one to keep). A close memory is reported
        in `possible_duplicates`, never superseded: an update names the memory it changes and
        hides no other."""
        id_ = validation.memory_id(memory_id)
        changes = validation.updates(updates)
        patch: dict[str, Any] = {}
        if "content" in changes:
            patch["content"] = validation.content(
                changes["content"], max_length=self._config.max_content_length
            )
            validation.no_secrets(patch["content"])
        if "category" in changes:
            patch["category"] = validation.category(changes["category"])
        if "confidence" in changes:
            patch["confidence"] = validation.confidence(changes["confidence"])
        self._require_write(principal)

        embedding = self._embed_document(patch["content"]) if "content" in patch else None
        possible_duplicates: list[PossibleDuplicate] = []
        with self._transaction(principal) as conn:
            head = self._writable_memory(conn, principal, id_)
            if head.properties.get("superseded_by"):
                raise InvalidInput(
                    f"memory {id_} was superseded by {head.properties['superseded_by']}; "
                    "update that one instead"
                )
            if patch.get("content", head.properties["content"]) != head.properties["content"]:
                # the same lock as saves of this scope: a racing save cannot slip in a twin
                store.lock_saves(conn, principal, head.scope)
                self._refuse_a_twin(conn, principal, head.scope, patch["content"], id_)
                possible_duplicates = self._close_memories(
                    conn, principal, head.scope, patch["content"], embedding, id_
                )
                for close in possible_duplicates:
                    store.record_possible_duplicate(
                        conn, principal, id_, UUID(close["id"]), close["similarity"]
                    )
            self._write_update(conn, head, patch, embedding)
            record = self._records(conn, [id_])[0]
        return {"memory": record, "possible_duplicates": possible_duplicates}

    def _write_update(
        self,
        conn: Connection[Any],
        head: GraphObject,
        patch: Mapping[str, Any],
        embedding: Embedding | None,
    ) -> None:
        """Write the new version of a memory whose checks passed; new content gets its
        vector, or none (and an embedding job) when the embedder is down."""
        labels = None
        if "category" in patch:
            labels = ["memory", patch["category"], head.scope]
        content_changed = (
            patch.get("content", head.properties["content"]) != head.properties["content"]
        )
        updated = graph.update_object(
            conn,
            head.canonical_id,
            properties=dict(patch),
            labels=labels,
            embedding=embedding if content_changed else graph.UNSET,
        )
        if content_changed and embedding is None:
            jobs.enqueue(conn, updated)

    # -- a person's decisions (the dashboard, the REST API) ----------------------------------

    def supersede(
        self,
        principal: Principal,
        keep_id: str,
        other_id: str,
        *,
        content: str | None = None,
        within: Callable[[Connection[Any]], None] | None = None,
    ) -> SupersedeResult:
        """Make `other_id` superseded by `keep_id`, as save does when a new memory replaces
        an old one (a SUPERSEDES edge, the old one's superseded_by); `keep_id` also files
        itself where the other was (its contexts). With `content`, `keep_id` first gets a
        new version with that text, through update's checks (secrets, another memory with
        exactly that text). Both must be active memories of one scope that the principal may
        change. `within`, if given, runs in the same transaction before it commits (the
        caller's own record of the decision)."""
        keep = validation.memory_id(keep_id, "keep")
        other = validation.memory_id(other_id, "memory_id")
        if keep == other:
            raise InvalidInput("a memory cannot supersede itself; name the other memory")
        text = None
        if content is not None:
            text = validation.content(content, max_length=self._config.max_content_length)
            validation.no_secrets(text)
        self._require_write(principal)
        embedding = None if text is None else self._embed_document(text)
        with self._transaction(principal) as conn:
            heads = {}
            for id_ in sorted((keep, other)):  # one order: two decisions cannot deadlock
                heads[id_] = self._writable_memory(conn, principal, id_)
            for id_, head in heads.items():
                if head.properties.get("superseded_by"):
                    raise InvalidInput(
                        f"memory {id_} was already superseded by "
                        f"{head.properties['superseded_by']}; decide with that one"
                    )
            if heads[keep].scope != heads[other].scope:
                raise InvalidInput(
                    f"memory {keep} is a {heads[keep].scope} memory and {other} a "
                    f"{heads[other].scope} one; only memories of one scope supersede each other"
                )
            self.ensure_pack(conn, principal.project_id)
            if text is not None and text != heads[keep].properties["content"]:
                store.lock_saves(conn, principal, heads[keep].scope)
                self._refuse_a_twin(conn, principal, heads[keep].scope, text, keep, allow=other)
                self._write_update(conn, heads[keep], {"content": text}, embedding)
            self._supersede(conn, principal, keep, other)
            for context_id in store.contexts_of(conn, other):
                self._link(conn, principal, store.BELONGS_TO_CONTEXT, keep, context_id)
            if within is not None:
                within(conn)
            record = self._records(conn, [keep])[0]
        return {"memory": record, "superseded_ids": [str(other)]}

    def _supersede(
        self, conn: Connection[Any], principal: Principal, new_id: UUID, old_id: UUID
    ) -> None:
        """`old_id` is superseded by `new_id`: the edge, and the old one's new version that
        says by what (both locked by the caller)."""
        self._link(conn, principal, store.SUPERSEDES, new_id, old_id)
        graph.update_object(conn, old_id, properties={"superseded_by": str(new_id)})

    def restore(self, principal: Principal, memory_id: str) -> RestoreResult:
        """Make a superseded or deleted memory active again, as a new version (same id).

        A supersession it breaks is kept as history: the SUPERSEDES edge from the memory that
        replaced it gets a tombstone version (delete_reason says it was restored), and that
        memory stays active. Refused when another active memory already says exactly the
        same (the error names it), as for save and update.
        """
        id_ = validation.memory_id(memory_id)
        self._require_write(principal)
        with self._transaction(principal) as conn:
            graph.lock_object(conn, id_)
            head = graph.get_head(conn, id_, include_deleted=True)
            if head is None or head.type != store.MEMORY or not store.visible_to(head, principal):
                raise MemoryNotFound(f"memory {id_} not found")
            if head.scope == "global" and not principal.is_admin:
                raise PermissionDenied(
                    "only an administrator credential can change global memories"
                )
            superseded_by = head.properties.get("superseded_by")
            if not head.deleted and not superseded_by:
                raise InvalidInput(f"memory {id_} is active; there is nothing to restore")
            store.lock_saves(conn, principal, head.scope)
            self._refuse_a_twin(conn, principal, head.scope, head.properties["content"], id_)
            broken: str | None = None
            if superseded_by:
                newer = UUID(str(superseded_by))
                edge = store.live_supersession(conn, newer, id_)
                if edge is None and head.scope == "global":
                    # another administrator's save superseded it: its edge is that actor's,
                    # which row-level security keeps this one from seeing or changing
                    raise PermissionDenied(
                        f"memory {id_} was superseded by {newer}, which another administrator "
                        "saved; only that administrator's credential can undo the supersession"
                    )
                if edge is not None:
                    graph.delete_relationship(
                        conn, edge, reason=f"restored: {id_} is no longer superseded by {newer}"
                    )
                broken = str(newer)
            unsupersede = {"superseded_by": None} if superseded_by else None
            if head.deleted:
                restored = graph.restore_object(conn, id_, properties=unsupersede)
            else:
                restored = graph.update_object(conn, id_, properties=unsupersede)
            if restored.embedding is None:  # never embedded (the provider was down): queue it
                jobs.enqueue(conn, restored)
            record = self._records(conn, [id_])[0]
        was: RestoredFrom = "superseded"
        if head.deleted:
            was = "superseded and deleted" if superseded_by else "deleted"
        return {"memory": record, "restored_from": was, "broken_supersession": broken}

    def bulk_delete(self, principal: Principal, memory_ids: object) -> BulkResult:
        """Delete each memory of `memory_ids` (at most BULK_MAX_IDS) as `delete` does, each on
        its own: one that cannot be deleted (not found, another actor's, a global one without
        the admin scope) is said so in its result and the others go ahead."""
        return self._bulk(principal, memory_ids, lambda id_: self.delete(principal, id_))

    def bulk_restore(self, principal: Principal, memory_ids: object) -> BulkResult:
        """Restore each memory of `memory_ids` (at most BULK_MAX_IDS) as `restore` does, each
        on its own (an active one is an invalid_input result, the others go ahead)."""
        return self._bulk(principal, memory_ids, lambda id_: self.restore(principal, id_))

    def _bulk(
        self, principal: Principal, memory_ids: object, change: Callable[[str], object]
    ) -> BulkResult:
        ids = validation.bulk_ids(memory_ids, maximum=BULK_MAX_IDS)
        self._require_write(principal)
        results: list[BulkItem] = []
        for id_ in ids:
            try:
                change(id_)
            except (NotFound, PermissionDenied, InvalidInput) as error:
                code = (
                    "not_found"
                    if isinstance(error, NotFound)
                    else "forbidden"
                    if isinstance(error, PermissionDenied)
                    else "invalid_input"
                )
                results.append(
                    {"id": id_, "ok": False, "error": {"code": code, "message": str(error)}}
                )
            else:
                results.append({"id": id_, "ok": True})
        return {"results": results, "changed": sum(1 for r in results if r["ok"])}

    def forget_all(self, principal: Principal, confirm: bool = False) -> ForgetAllResult:
        """Soft-delete all the caller's memories saved in the current project."""
        if confirm is not True:
            raise InvalidInput(
                "forget_all deletes every memory you saved in this project; "
                "call it again with confirm: true to go ahead"
            )
        self._require_write(principal)
        with self._transaction(principal) as conn:
            memories = store.own_memories_in_project(conn, principal)
            for memory in memories:
                graph.delete_object(conn, memory.canonical_id, reason="forget_all")
        return {"deleted_count": len(memories)}

    def stats(self, principal: Principal) -> StatsResult:
        """How many memories the caller saved, per project where they were saved."""
        self._require_read(principal)
        with self._transaction(principal) as conn:
            rows = store.stats_rows(conn, principal)
        projects = [_project_stats(row) for row in rows]
        return {
            "actor_id": str(principal.actor_id),
            "project_id": str(principal.project_id),
            "projects": projects,
            "active": sum(p["active"] for p in projects),
            "superseded": sum(p["superseded"] for p in projects),
            "deleted": sum(p["deleted"] for p in projects),
            "archived": sum(p["archived"] for p in projects),
        }

    # -- helpers ------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self, principal: Principal | None = None) -> Iterator[Connection[Any]]:
        """A pooled connection in one transaction: committed on success, else rolled back.

        With a principal, the transaction acts for it (transaction-local settings that the
        row-level security policies read); without one, an application role sees nothing
        (maintenance over every row is MaintenanceService's, on an administrator's pool).
        """
        if principal is not None:
            with acting_for(self._pool, principal) as conn:
                yield conn
            return
        with transaction(self._pool, lost=UNREACHABLE) as conn:
            yield conn

    def ensure_pack(self, conn: Connection[Any], project_id: UUID) -> None:
        """Install the agent-memory pack in the project, in the caller's transaction, unless
        it is known to be there (save remembers it once its transaction committed; installing
        is idempotent). Every installation has 1.1.0 (migration 0011): its types include
        Episode."""
        if project_id in self._projects_with_pack:
            return
        if not any(pack.name == PACK for pack in graph.installed_packs(conn, project_id)):
            graph.install_pack(conn, project_id, PACK)

    def _embed_document(self, text: str) -> Embedding | None:
        try:
            vector = self._embedder.embed_documents([text])[0]
        except EmbeddingUnavailable as error:
            logger.warning("storing without an embedding (a job is queued): %s", error)
            return None
        return Embedding(Vector(vector), self._embedder.model_name)

    def _related_targets(
        self, conn: Connection[Any], principal: Principal, ids: Sequence[UUID]
    ) -> list[UUID]:
        missing = []
        for id_ in ids:
            head = graph.get_head(conn, id_)
            if (
                head is None
                or head.project_id != principal.project_id
                or (head.type == store.MEMORY and not store.visible_to(head, principal))
            ):
                missing.append(str(id_))
        if missing:
            raise InvalidInput(
                "related_to: no object with id " + ", ".join(missing) + " in this project"
            )
        return list(ids)

    def _context_ids(
        self, conn: Connection[Any], principal: Principal, name: str | None
    ) -> list[UUID]:
        if name is None:
            return []
        store.lock_context_name(conn, principal.actor_id, name)
        existing = store.find_context(conn, principal.actor_id, name)
        if existing is not None:
            return [existing]
        context = graph.create_object(
            conn,
            project_id=principal.project_id,
            type=store.CONTEXT,
            actor_id=principal.actor_id,
            scope="user",
            properties={"name": name, "priority": DEFAULT_CONTEXT_PRIORITY},
            labels=["memory-context"],
        )
        return [context.canonical_id]

    def _link(
        self, conn: Connection[Any], principal: Principal, type_: str, src: UUID, dst: UUID
    ) -> None:
        graph.create_relationship(
            conn,
            project_id=principal.project_id,
            type=type_,
            src_id=src,
            dst_id=dst,
            actor_id=principal.actor_id,
        )

    def _link_related(
        self, conn: Connection[Any], principal: Principal, memory_id: UUID, targets: list[UUID]
    ) -> None:
        for target in targets:
            try:
                self._link(conn, principal, store.RELEVANT_TO, memory_id, target)
            except ObjectNotFound as error:  # deleted since _related_targets checked it
                raise InvalidInput(
                    f"related_to: no object with id {target} in this project"
                ) from error

    def _link_source(
        self, conn: Connection[Any], principal: Principal, memory_id: UUID, source: UUID | None
    ) -> None:
        """Link the memory to what it was derived from (an Episode), if anything."""
        if source is None:
            return
        try:
            self._link(conn, principal, store.DERIVED_FROM, memory_id, source)
        except ObjectNotFound as error:
            raise InvalidInput(
                f"derived_from: no object with id {source} in this project"
            ) from error

    def _writable_memory(
        self, conn: Connection[Any], principal: Principal, memory_id: UUID
    ) -> GraphObject:
        # locked before it is read: a concurrent delete or supersession cannot slip in
        # between the checks below and this transaction's write
        graph.lock_object(conn, memory_id)
        head = graph.get_head(conn, memory_id)
        if head is None or head.type != store.MEMORY or not store.visible_to(head, principal):
            raise MemoryNotFound(f"memory {memory_id} not found")
        if head.scope == "global" and not principal.is_admin:
            raise PermissionDenied("only an administrator credential can change global memories")
        return head

    def _refuse_a_twin(
        self,
        conn: Connection[Any],
        principal: Principal,
        scope: str,
        text: str,
        memory_id: UUID,
        *,
        allow: UUID | None = None,
    ) -> None:
        """Refuse to give `memory_id` the exact text of another active memory of its scope
        (but `allow`, one that this transaction supersedes)."""
        twin = store.find_exact(conn, principal, scope, text, exclude=memory_id)
        if twin is not None and twin != allow:
            raise InvalidInput(
                f"memory {twin} already says exactly this; keep that one (and delete {memory_id} "
                "if it is no longer needed) rather than having two identical memories"
            )

    def _close_memories(
        self,
        conn: Connection[Any],
        principal: Principal,
        scope: str,
        text: str,
        embedding: Embedding | None,
        memory_id: UUID,
    ) -> list[PossibleDuplicate]:
        """The memory of this scope closest to `text` (other than `memory_id`), if it is close
        enough for save's dedup rule to look at it."""
        if embedding is None:
            return []
        nearest = store.find_nearest(
            conn, principal, scope, embedding.vector, embedding.model, exclude=memory_id
        )
        if nearest is None or nearest.similarity < self._dedup.duplicates_from:
            return []
        return [
            {
                "id": str(nearest.id),
                "content": nearest.content,
                "similarity": round(nearest.similarity, 4),
            }
        ]

    def _records(self, conn: Connection[Any], ids: list[UUID]) -> list[MemoryRecord]:
        rows = store.memory_rows(conn, ids)
        return [memory_record(rows[id_]) for id_ in ids]

    @staticmethod
    def _require_read(principal: Principal) -> None:
        if not principal.can_read:
            raise PermissionDenied("this credential may not read memories (needs memory:read)")

    @staticmethod
    def _require_write(principal: Principal) -> None:
        if not principal.can_write:
            raise PermissionDenied("this credential may not change memories (needs memory:write)")


@contextmanager
def acting_for(
    pool: DatabasePool, principal: Principal, *, lost: str = UNREACHABLE
) -> Iterator[Connection[Any]]:
    """A pooled transaction acting for the principal (the transaction-local settings that the
    row-level security policies read): committed on success, else rolled back; `lost` is
    what the caller is told when the connection is lost meanwhile."""
    with transaction(pool, lost=lost) as conn:
        graph.act_as(conn, principal.actor_id, principal.project_id, admin=principal.is_admin)
        yield conn


def memory_record(
    row: store.MemoryRow | store.RecallRow,
    *,
    use_count: int | None = None,
    last_used: datetime | None = None,
) -> MemoryRecord:
    used = row.last_used if last_used is None else last_used
    return {
        "id": str(row.id),
        "content": row.content,
        "category": row.category,
        "scope": row.scope,
        "source": row.source or "inferred",
        "confidence": float(row.confidence if row.confidence is not None else 0.7),
        "contexts": list(row.contexts),
        "use_count": row.use_count if use_count is None else use_count,
        "last_used": None if used is None else used.isoformat(),
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "derived_from": provenance_record(row.derived_from),
    }


def provenance_record(found: Mapping[str, Any] | None) -> Provenance | None:
    """store.PROVENANCE's JSON as the tools return it."""
    if found is None:
        return None
    turns = found["turns"]
    return {
        "episode_id": str(found["episode_id"]),
        "session_id": str(found["session_id"]),
        "client": str(found["client"]),
        "turns": {"first": int(turns["first"]), "last": int(turns["last"])},
        "captured_at": str(found["captured_at"]),
    }


def _episode(row: episodes.EpisodeRow) -> RecalledEpisode:
    """A found episode as recall returns it: the excerpt marked with an ellipsis where the
    text goes on before or after it."""
    before = "\u2026" if row.excerpt_start > 1 else ""
    after = "\u2026" if row.excerpt_start - 1 + len(row.excerpt) < row.text_length else ""
    return {
        "id": str(row.id),
        "session_id": row.session_id,
        "client": row.client,
        "turns": {"first": row.first_turn, "last": row.last_turn},
        "captured_at": row.captured_at,
        "summary": row.summary,
        "excerpt": before + row.excerpt + after,
        "score": round(row.score, 6),
    }


def _project_stats(row: store.StatsRow) -> ProjectStats:
    return {
        "project_id": str(row.project_id),
        "active": row.active,
        "superseded": row.superseded,
        "deleted": row.deleted,
        "archived": row.archived,
        "by_category": {  # in the order of CATEGORIES
            "preference": row.preferences,
            "pattern": row.patterns,
            "correction": row.corrections,
            "fact": row.facts,
            "instruction": row.instructions,
            "convention": row.conventions,
            "decision": row.decisions,
            "lesson": row.lessons,
            "risk": row.risks,
        },
    }


def _inactive_record(row: store.InactiveRow) -> InactiveMemory:
    return {
        **memory_record(row),
        "status": "deleted" if row.deleted_at is not None else "superseded",
        "superseded_by": row.superseded_by,
        "deleted_at": None if row.deleted_at is None else row.deleted_at.isoformat(),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
