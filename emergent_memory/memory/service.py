"""MemoryService: save, recall and manage memories for a principal (the three tools' logic).

Inputs are the tools' arguments, outputs plain JSON-serializable dicts. Every write runs in
one transaction: the memory, its versions, edges and embedding job commit together or not at
all. Embedding happens before the transaction, so no lock is held while a model runs.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool, transaction
from emergent_memory.db.replica import ReplicaHealth, ReplicaPool
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.vectors import has_direction
from emergent_memory.errors import (
    EmbeddingUnavailable,
    InvalidInput,
    MemoryNotFound,
    NotFound,
    ObjectNotFound,
    PermissionDenied,
    SameContent,
)
from emergent_memory.graph import Embedding, GraphObject
from emergent_memory.memory import (
    answers,
    authority,
    browse_store,
    dedup,
    episodes,
    records,
    relevance,
    store,
    validation,
    validity,
)
from emergent_memory.memory.dedup import DedupPolicy, SecondReading, Verdict
from emergent_memory.memory.models import (
    CONFIDENCE_BY_SOURCE,
    REINFORCEMENT_STEP,
    Action,
    ArchiveResult,
    BulkItem,
    BulkResult,
    Category,
    DeleteResult,
    ForgetAllResult,
    Importance,
    InactiveMemory,
    KeepBothResult,
    ListResult,
    ListStatus,
    MemoryRecord,
    MemoryScope,
    PossibleDuplicate,
    RecalledMemory,
    RecallResult,
    ReinforceResult,
    RestoredFrom,
    RestoreResult,
    SaveResult,
    Source,
    StatsResult,
    SupersedeResult,
    UpdateResult,
)
from emergent_memory.memory.records import (
    current_first,
    episode_record,
    inactive_record,
    memory_record,
    outranks,
    project_stats,
    rounded,
)
from emergent_memory.memory.relevance import DEFAULT as DEFAULT_RELEVANCE
from emergent_memory.memory.relevance import Fusion, RelevanceModel

if TYPE_CHECKING:  # the judge (and the LLM client, capture's call log) only when configured
    from emergent_memory.memory import dedup_judge
    from emergent_memory.memory.dedup_judge import DedupJudge

logger = logging.getLogger(__name__)

UNREACHABLE = (
    "lost the database connection during this request (the database restarted or is "
    "unreachable); try again in a moment (saving the same memory again is safe: repeats are "
    "recognised)"
)

PACK = "agent-memory"
DEFAULT_CONTEXT_PRIORITY = store.DEFAULT_CONTEXT_PRIORITY
# the memories a save reads: the nearest one, which it may supersede, and the next ones, which
# it may only link as conflicts (DedupPolicy.beside)
NEARBY = 5
RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT = 10, 50
EPISODES_MAX_LIMIT = 10  # episodes a recall returns at most (each with a summary and excerpt)
LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT = 20, 100
BULK_MAX_IDS = 200  # memories one bulk delete or restore changes at most


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The service's tunables (from Settings, in the composition root).

    `dedup_threshold`, `dedup_text_rule_from`, `dedup_named_change_from`,
    `dedup_latin_only_model`, `dedup_labelled_from`, `dedup_change_from`,
    `dedup_reworded_from`, `dedup_role_from` and `dedup_learned` are a DedupPolicy
    (memory/dedup.py): when a new memory supersedes its nearest one (None bands: the plain
    threshold, for models it was not calibrated on; `dedup_learned`, the second reading of a
    pair the rules keep for want of evidence, memory/dedup_learned.py).
    """

    dedup_threshold: float
    dedup_text_rule_from: float | None = None
    dedup_named_change_from: float | None = None
    dedup_latin_only_model: bool = False
    dedup_labelled_from: float | None = None
    dedup_change_from: float | None = None
    dedup_reworded_from: float | None = None
    dedup_role_from: float | None = None
    dedup_learned: SecondReading | None = None
    max_content_length: int = 2000
    recall_candidates: int = 50
    recall_rrf_k: int = 10
    recall_lexical_weight: float = 1.0
    recall_vector_weight: float = 1.5
    recall_confidence_weight: float = 0.2
    recall_min_similarity: float = 0.15
    recall_recency_weight: float = 0.05
    recall_importance_weight: float = 0.0
    decay_floor: float = 0.3
    decay_grace_days: float = 30.0
    decay_half_life_days: float = 180.0
    # how relevance is judged (memory/relevance.py), and the least relevance recall returns
    # unless the caller asks for another (app.py gives the model's calibrated floor)
    relevance: RelevanceModel = DEFAULT_RELEVANCE
    recall_min_relevance: float = 0.0

    @property
    def fusion(self) -> Fusion:
        return Fusion(self.recall_rrf_k, self.recall_lexical_weight, self.recall_vector_weight)

    @property
    def dedup_policy(self) -> DedupPolicy:
        return DedupPolicy(
            threshold=self.dedup_threshold,
            text_rule_from=self.dedup_text_rule_from,
            named_change_from=self.dedup_named_change_from,
            latin_only_model=self.dedup_latin_only_model,
            labelled_from=self.dedup_labelled_from,
            change_from=self.dedup_change_from,
            reworded_from=self.dedup_reworded_from,
            role_from=self.dedup_role_from,
            learned=self.dedup_learned,
        )

    @staticmethod
    def dedup_fields(policy: DedupPolicy) -> dict[str, Any]:
        """The config's fields that are `policy` (the inverse of dedup_policy), so that every
        config built from a policy carries all of it."""
        return {
            "dedup_threshold": policy.threshold,
            "dedup_text_rule_from": policy.text_rule_from,
            "dedup_named_change_from": policy.named_change_from,
            "dedup_latin_only_model": policy.latin_only_model,
            "dedup_labelled_from": policy.labelled_from,
            "dedup_change_from": policy.change_from,
            "dedup_reworded_from": policy.reworded_from,
            "dedup_role_from": policy.role_from,
            "dedup_learned": policy.learned,
        }

    @property
    def decay(self) -> store.Decay:
        return store.Decay(self.decay_floor, self.decay_grace_days, self.decay_half_life_days)

    @property
    def recall_tuning(self) -> dict[str, Any]:
        """The fusion and ranking settings, as `store.recall` takes them."""
        return {
            "candidates": self.recall_candidates,
            "rrf_k": self.recall_rrf_k,
            "lexical_weight": self.recall_lexical_weight,
            "vector_weight": self.recall_vector_weight,
            "confidence_weight": self.recall_confidence_weight,
            "min_similarity": self.recall_min_similarity,
            "recency_weight": self.recall_recency_weight,
            "importance_weight": self.recall_importance_weight,
            "decay_floor": self.decay_floor,
            "decay_grace_days": self.decay_grace_days,
            "decay_half_life_days": self.decay_half_life_days,
        }

    @property
    def episode_tuning(self) -> dict[str, Any]:
        """The fusion settings, as `episodes.search` takes them (no confidence, recency,
        importance or decay: an episode has none)."""
        tuning = self.recall_tuning
        for memory_only in (
            "confidence_weight",
            "recency_weight",
            "importance_weight",
            "decay_floor",
            "decay_grace_days",
            "decay_half_life_days",
        ):
            del tuning[memory_only]
        return tuning


class MemoryService:
    def __init__(
        self,
        pool: DatabasePool,
        embedder: EmbeddingProvider,
        config: MemoryConfig,
        read_pool: DatabasePool | None = None,
        *,
        judge: DedupJudge | None = None,
    ) -> None:
        self._pool = pool
        self._read_pool = read_pool
        self._embedder = embedder
        self._config = config
        self._dedup = config.dedup_policy
        self._judge = judge
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

    @property
    def read_pool(self) -> DatabasePool | None:
        """The pool reads go to (a read replica's), or None when reads use `pool`: recall's
        search and list run there; every write, and recall's record of its uses, on `pool`."""
        return self._read_pool

    @property
    def config(self) -> MemoryConfig:
        return self._config

    @property
    def decay(self) -> store.Decay:
        """How confidence decays (the settings'): what BrowseService shows with."""
        return self._config.decay

    def database_reachable(self) -> bool:
        """Whether the database answers, for the health check (DatabasePool.database_reachable:
        a probe of a few seconds at most, its answer reused for a second)."""
        return self._pool.database_reachable()

    def read_replica_health(self) -> ReplicaHealth | None:
        """The read replica's state for the health check (ReplicaPool.health: a probe of a few
        seconds at most); None without a replica."""
        pool = self._read_pool
        return pool.health() if isinstance(pool, ReplicaPool) else None

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
        importance: Importance | None = None,
        evidence: str | None = None,
        valid_from: str | None = None,
        valid_until: str | None = None,
        rationale: str | None = None,
        derived_from: UUID | None = None,
        supersede_reason: str | None = None,
        session_id: str | None = None,
    ) -> SaveResult:
        """Store a memory, or reinforce or supersede the one it repeats.

        `importance`, `valid_from` / `valid_until` (ISO 8601; a date alone is midnight UTC;
        until after from) and `rationale` are stored with the memory (on an exact repeat, they
        change the memory it repeats). `evidence` (a short quote or source) is recorded in
        kb.memory_evidence: with a new memory, or as a reinforcement of the one an exact
        repeat names (new evidence raises its confidence). An exact repeat of an archived
        memory brings it back (`restored`). `supersede_reason` is kept on the memory this one
        supersedes, if it supersedes one; the superseded memory's validity ends where this
        one's begins (valid_from, else now) unless it ended earlier.

        `derived_from` (automatic capture's, never a tool argument): the Episode the memory
        was extracted from; the stored (or reinforced) memory is linked to it with
        DERIVED_FROM in the same transaction, and its evidence is the capture's (`session_id`:
        the client session it came from).
        """
        text = validation.content(content, max_length=self._config.max_content_length)
        category_ = validation.category(category)
        source_ = validation.source(source)
        scope_ = validation.scope(scope)
        context_ = validation.context_name(context)
        related = validation.related_ids(self._whole_ids(principal, related_to))
        lifecycle = validity.lifecycle_properties(
            {
                "importance": importance,
                "valid_from": valid_from,
                "valid_until": valid_until,
                "rationale": rationale,
            },
            removable=False,
        )
        evidence_ = validation.optional_note(evidence, "evidence", validation.MAX_EVIDENCE)
        reason = validation.optional_note(
            supersede_reason, "supersede_reason", validation.MAX_REASON
        )
        session = validation.session_id(session_id)
        self._require_write(principal)
        if scope_ == "global" and not principal.is_admin:
            raise PermissionDenied("only an administrator credential can save global memories")
        validation.no_secrets(text)
        origin = "capture" if derived_from is not None else "save"
        proof = store.Evidence(origin, evidence_, session, derived_from)

        embedding = self._embed_document(text)
        # a corrected memory, or a correction, says by itself that it changes what it
        # corrects, as a change word would
        corrects = source_ == "corrected" or category_ == "correction"
        # a pair the rules cannot decide may be judged by an LLM, before the save's lock
        second_opinion = self._second_opinion(principal, scope_, text, embedding, corrects)
        with self._transaction(principal) as conn:
            store.lock_saves(conn, principal, scope_)
            targets = self._related_targets(conn, principal, related)
            # in the save's transaction: a refused save leaves no installation behind
            self.ensure_pack(conn, principal.project_id)

            repeated = store.find_repeat(conn, principal, scope_, text)
            if repeated is not None:  # an exact repeat (of an archived one: it comes back)
                # whether it is archived is read again under its lock: an archive committed
                # meanwhile is undone too
                exact, _ = repeated
                repeat = (
                    proof if origin == "capture" else store.Evidence("repeat", evidence_, session)
                )
                result = self._reinforce(
                    conn,
                    principal,
                    exact,
                    source_,
                    context_,
                    targets,
                    lifecycle,
                    repeat,
                )
                self._link_source(conn, principal, exact, derived_from)
                return answers.deliverable(result, "save")

            nearby: list[store.Nearest] = []
            if embedding is not None:
                nearby = store.find_near(
                    conn, principal, scope_, embedding.vector, embedding.model, limit=NEARBY
                )
            nearest = nearby[0] if nearby else None
            decision = (
                None
                if nearest is None
                else self._dedup.explain(
                    nearest.similarity, nearest.content, text, corrects=corrects
                )
            )
            verdict: Verdict = "distinct" if decision is None else decision.verdict
            old_head = None
            kept_because = None
            # another value of the same subject, kept beside it: the two are linked as a
            # conflict (a weaker source's correction is one too: memory/authority.py)
            conflict = decision is not None and decision.reason in dedup.CONFLICT_REASONS
            rule: str | None = None if decision is None else decision.reason
            judged = None
            if (
                second_opinion is not None
                and nearest is not None
                and decision is not None
                and self._judgeable(decision, nearest.content, text)
                and second_opinion.old_id == nearest.id
                and second_opinion.old_content == nearest.content
            ):  # the memory judged is still the nearest, as the judge read it
                judged = second_opinion.verdict
                rule = records.RULE_PREFIX + judged
                conflict = judged in ("corrects", "conflicts")
                if judged in ("same", "corrects"):
                    verdict = "supersede"
                elif judged == "distinct":
                    verdict = "distinct"
            if (
                nearest is not None
                and verdict == "supersede"
                and not corrects
                and judged != "corrects"
            ):
                kept_because = authority.other_kind(nearest.category, category_)
                if kept_because is not None:
                    verdict = "possible_duplicate"
            if nearest is not None and verdict == "supersede":
                # hold it: a delete or another supersession of it waits until this commits
                graph.lock_object(conn, nearest.id)
                old_head = graph.get_head(conn, nearest.id)
                if old_head is None or not store.is_active(old_head):
                    nearest, verdict = None, "distinct"  # gone since it was found
                elif (kept_because := authority.refusal(old_head.properties, source_)) is not None:
                    old_head, verdict = None, "possible_duplicate"  # a stronger source holds
                    # a correction (another value), not a rewording, from the weaker source
                    if judged is None:
                        compared = dedup.compare(nearest.content, text)
                        conflict = bool(compared.changes or compared.opposite)

            properties: dict[str, Any] = {
                "content": text,
                "category": category_,
                "source": source_,
                "scope": scope_,
                "confidence": CONFIDENCE_BY_SOURCE[source_],
                **lifecycle,
            }
            if old_head is not None:  # it supersedes: nothing of the old memory is lost
                properties = authority.inherited(old_head.properties, properties)
            memory = graph.create_object(
                conn,
                project_id=principal.project_id,
                type=store.MEMORY,
                actor_id=principal.actor_id,
                scope=scope_,
                properties=properties,
                labels=["memory", category_, scope_],
                embedding=embedding,
            )
            if embedding is None:
                jobs.enqueue(conn, memory)
            start = properties["confidence"]
            store.record_evidence(
                conn,
                principal,
                memory.canonical_id,
                proof,
                independent=evidence_ is not None,
                confidence_before=start,
                confidence_after=start,
            )
            context_ids = self._context_ids(conn, principal, context_)
            superseded_ids: list[str] = []
            possible_duplicates: list[PossibleDuplicate] = []
            if nearest is not None and verdict == "possible_duplicate":
                kept_for = kept_because or rule  # the pair's reason, as recorded below
                close: PossibleDuplicate = {
                    "id": str(nearest.id),
                    "content": nearest.content,
                    "similarity": round(nearest.similarity, 4),
                    "why": records.pair_why(kept_for),
                }
                if kept_because is not None:
                    close["kept_because"] = kept_because
                if conflict and self._still_active(conn, nearest.id):
                    close["conflict"] = True
                    self._link(
                        conn, principal, store.CONFLICTS_WITH, memory.canonical_id, nearest.id
                    )
                possible_duplicates.append(close)
                store.record_possible_duplicate(
                    conn,
                    principal,
                    memory.canonical_id,
                    nearest.id,
                    nearest.similarity,
                    kept_for,
                )
            for other in nearby[1:]:  # the next nearest: a conflict or nothing
                beside = self._dedup.beside(
                    other.similarity, other.content, text, corrects=corrects
                )
                if beside is None or not self._still_active(conn, other.id):
                    continue
                self._link(conn, principal, store.CONFLICTS_WITH, memory.canonical_id, other.id)
                possible_duplicates.append(
                    {
                        "id": str(other.id),
                        "content": other.content,
                        "similarity": round(other.similarity, 4),
                        "why": records.pair_why(beside.reason),
                        "conflict": True,
                    }
                )
                store.record_possible_duplicate(
                    conn, principal, memory.canonical_id, other.id, other.similarity, beside.reason
                )
            if nearest is not None and verdict == "supersede" and old_head is not None:
                old_id = nearest.id
                # the replacement is filed where the old fact was too, and holds its evidence
                for context_id in store.inherit(conn, principal, old_id, memory.canonical_id):
                    if context_id not in context_ids:
                        context_ids.append(context_id)
                self._supersede(
                    conn,
                    principal,
                    memory.canonical_id,
                    old_head,
                    reason=reason,
                    new_start=lifecycle.get("valid_from"),
                    rule=rule,
                    similarity=nearest.similarity,
                )
                superseded_ids.append(str(old_id))
            for context_id in context_ids:
                self._link(
                    conn, principal, store.BELONGS_TO_CONTEXT, memory.canonical_id, context_id
                )
            self._link_related(conn, principal, memory.canonical_id, targets)
            self._link_source(conn, principal, memory.canonical_id, derived_from)
            saved: SaveResult = {
                "status": "updated" if superseded_ids else "created",
                "memory": self._records(conn, [memory.canonical_id])[0],
                "superseded_ids": superseded_ids,
                "similarity": None if nearest is None else round(nearest.similarity, 4),
                "possible_duplicates": possible_duplicates,
                "degraded": embedding is None,
            }
            # the answer is checked before the transaction commits (memory/answers.py)
            answers.deliverable(saved, "save")
        self._projects_with_pack.add(principal.project_id)  # committed: no need to look again
        return saved

    def _second_opinion(
        self,
        principal: Principal,
        scope: MemoryScope,
        text: str,
        embedding: Embedding | None,
        corrects: bool,
    ) -> dedup_judge.JudgedPair | None:
        """The LLM judge's verdict on the new text and its nearest memory, when there is a
        judge and the rules alone would keep both and report them (memory/dedup_judge.py).
        Read before the save's transaction, which applies it only if the nearest memory is
        still the one judged."""
        if self._judge is None or embedding is None:
            return None
        with self._transaction(principal) as conn:
            if store.find_repeat(conn, principal, scope, text) is not None:
                return None
            nearest = store.find_nearest(conn, principal, scope, embedding.vector, embedding.model)
        if nearest is None:
            return None
        decision = self._dedup.explain(nearest.similarity, nearest.content, text, corrects=corrects)
        if not self._judgeable(decision, nearest.content, text):
            return None
        return self._judge.judge(
            lambda: acting_for(self._pool, principal),
            principal.actor_id,
            nearest.id,
            nearest.content,
            text,
        )

    @staticmethod
    def _judgeable(decision: dedup.Decision, existing: str, new: str) -> bool:
        """Whether the rules left the pair undecided (kept both, reported) and it is not
        said of two holders (chat speakers, relations), which are never the same fact."""
        return decision.verdict == "possible_duplicate" and not dedup.holders_differ(existing, new)

    def _reinforce(
        self,
        conn: Connection[Any],
        principal: Principal,
        memory_id: UUID,
        source: Source,
        context: str | None,
        targets: list[UUID],
        lifecycle: Mapping[str, Any],
        evidence: store.Evidence,
    ) -> SaveResult:
        """An exact repeat: the memory's confidence rises to the new source's if that is
        higher, and by new evidence; the repeat's importance, validity and rationale, if any,
        replace the memory's; an archived memory comes back (`restored`, decided from the
        head read under the memory's lock); an expired one (valid_until passed) holds again
        when the repeat gives no valid_until (the agent asserts it once more: valid_until is
        removed)."""
        graph.lock_object(conn, memory_id)
        head = graph.get_head(conn, memory_id)
        if head is None:  # deleted since it was found; the caller's lock keeps saves apart
            raise MemoryNotFound(f"memory {memory_id} was deleted meanwhile; save it again")
        restoring = "archived_at" in head.properties
        # a repeat from a weaker source (or a core memory's from a source that is not
        # explicit) is evidence, but changes nothing the stronger source gave
        weaker = authority.refusal(head.properties, source) is not None
        patch = {} if weaker else dict(lifecycle)
        if not weaker and "valid_until" not in patch and _expired(head.properties):
            patch["valid_until"] = None
        validity.check_validity(head.properties, patch)
        if restoring:
            patch.update(archived_at=None, archive_reason=None)
        self._add_evidence(
            conn, principal, head, evidence, at_least=CONFIDENCE_BY_SOURCE[source], patch=patch
        )
        for context_id in self._context_ids(conn, principal, context):
            self._link(conn, principal, store.BELONGS_TO_CONTEXT, memory_id, context_id)
        self._link_related(conn, principal, memory_id, targets)
        result: SaveResult = {
            "status": "unchanged",
            "memory": self._records(conn, [memory_id])[0],
            "superseded_ids": [],
            "similarity": 1.0,
            "possible_duplicates": [],
            "degraded": False,
        }
        if restoring:
            result["restored"] = True
        return result

    def _add_evidence(
        self,
        conn: Connection[Any],
        principal: Principal,
        head: GraphObject,
        evidence: store.Evidence,
        *,
        at_least: float | None = None,
        patch: Mapping[str, Any] | None = None,
    ) -> tuple[bool, float, float]:
        """Record a piece of evidence for a memory (locked by the caller) and raise its stored
        confidence: to `at_least` if that is higher, then, if the evidence is independent
        (its text new for this memory), REINFORCEMENT_STEP of the way to 1. Writes one new
        version, with `patch`, if anything changed. Returns (independent, before, after)."""
        before = _stored_confidence(head.properties)
        after = before if at_least is None else max(before, at_least)
        independent = evidence.evidence is not None and not store.evidence_seen(
            conn, head.canonical_id, evidence.evidence
        )
        if independent:
            after = store.reinforced(after, REINFORCEMENT_STEP)
        changes = dict(patch or {})
        if after != before:
            changes["confidence"] = after
        if changes:
            graph.update_object(conn, head.canonical_id, properties=changes)
        store.record_evidence(
            conn,
            principal,
            head.canonical_id,
            evidence,
            independent=independent,
            confidence_before=before,
            confidence_after=after,
        )
        return independent, before, after

    def reinforce(
        self,
        principal: Principal,
        memory_id: str,
        evidence: str,
        *,
        session_id: str | None = None,
        episode_id: str | UUID | None = None,
    ) -> ReinforceResult:
        """Record evidence that a memory holds (a short quote or source, 1 to 500 characters),
        kept in kb.memory_evidence with when, the session or episode, and whether it was
        independent (its text new for this memory). Independent evidence raises the stored
        confidence REINFORCEMENT_STEP of the way to 1 (a new version says so); a repeat of
        evidence already recorded is kept but raises nothing. An archived memory comes back.
        """
        id_ = validation.memory_id(memory_id)
        if evidence is None:
            raise InvalidInput(
                "evidence is required: a short quote or source that shows the memory holds"
            )
        text = validation.note(evidence, "evidence", validation.MAX_EVIDENCE)
        session = validation.session_id(session_id)
        episode = None
        if episode_id is not None:
            episode = (
                episode_id
                if isinstance(episode_id, UUID)
                else validation.memory_id(episode_id, "episode_id")
            )
        self._require_write(principal)
        with self._transaction(principal) as conn:
            # the save lock too: whether it is archived (and a restore needs the lock) is
            # known only under the memory's lock, taken after the save lock
            head = self._writable_memory(conn, principal, id_, saves_lock=True)
            _refuse_superseded(head, "reinforce")
            restoring = "archived_at" in head.properties
            if restoring:  # as restore: never two active memories with the same text
                self._refuse_a_twin(conn, principal, head.scope, head.properties["content"], id_)
            patch = {"archived_at": None, "archive_reason": None} if restoring else None
            independent, before, after = self._add_evidence(
                conn,
                principal,
                head,
                store.Evidence("reinforce", text, session, episode),
                patch=patch,
            )
            record = self._records(conn, [id_])[0]
            reinforced: ReinforceResult = {
                "memory": record,
                "independent": independent,
                "confidence_before": before,
                "confidence_after": after,
                "evidence_count": record["evidence_count"],
                "restored": restoring,
            }
            return answers.deliverable(reinforced, "reinforce")

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
        include_archived: bool = False,
        as_of: str | None = None,
        record_use: bool = True,
        min_relevance: float | None = None,
        query_embedding: Sequence[float] | EmbeddingUnavailable | None = None,
        keep_query: bool = True,
    ) -> RecallResult:
        """The visible active memories that best match the query, by meaning and by words,
        of relevance `min_relevance` or more (memory/relevance.py; None: the calibrated
        floor, MemoryConfig.recall_min_relevance): none when nothing is relevant.

        With `include_episodes`, also the caller's captured conversation windows (Episodes)
        that match, in `episodes` (at most `limit`, and EPISODES_MAX_LIMIT), never among the
        memories and never counted as a use; `session_id` keeps those of one client session
        (`category` is a memory's and does not filter them; `scope` does).

        Expired memories (valid_until passed) and archived ones are left out, unless
        `include_archived`; with `as_of` (ISO 8601 date-time, or a date: the end of that day
        in UTC), the memories believed true then, each as its version at that time: recorded
        by then, valid then, not superseded or archived by then (later superseded or changed
        ones included, with their content then; deleted ones never). Ranking multiplies the
        fused relevance by effective confidence, recency and importance (MemoryConfig's
        weights).

        The search runs on the read pool (a replica's, if any). Each memory found counts as
        used (an agent recalled it), recorded on the primary in a short transaction of its own,
        unless `record_use` is False (a person searching from the REST API or the dashboard,
        verify_memory): then nothing is written and the use counts and last uses are as stored.
        `query_embedding`: the query's embedding, when the caller already has it (verify_memory
        reads the claim's clauses with it too), or the error its embedding raised (recall then
        searches by words without trying again); None: embedded here. Each use recorded keeps
        the query (store.logged_query: its SHA-256 only when it holds a secret), unless
        `keep_query` is False (the CLI's one-shot recall, which would load the secret scanner's
        patterns for it, about 0.1 s of CPU: its uses are recorded without their query).
        """
        text = validation.content(query, max_length=self._config.max_content_length, field="query")
        category_ = None if category is None else validation.category(category)
        scope_ = None if scope is None else validation.scope(scope)
        limit_ = validation.limit(limit, default=RECALL_DEFAULT_LIMIT, maximum=RECALL_MAX_LIMIT)
        with_episodes = validation.flag(include_episodes, "include_episodes")
        with_archived = validation.flag(include_archived, "include_archived")
        at = None if as_of is None else validity.as_of(as_of)
        session = validation.session_id(session_id)
        floor = relevance.caller_floor(min_relevance)
        if floor is None:
            floor = self._config.recall_min_relevance
        if session is not None and not with_episodes:
            raise InvalidInput(
                "session_id chooses the conversation whose episodes are searched; "
                "pass include_episodes too"
            )
        self._require_read(principal)

        vector: Vector | None = None
        degraded = False
        try:
            if isinstance(query_embedding, EmbeddingUnavailable):
                raise query_embedding
            embedded = (
                self._embedder.embed_query(text)
                if query_embedding is None
                else list(query_embedding)
            )
        except EmbeddingUnavailable as error:
            logger.warning("recall degraded to full-text search: %s", error)
            degraded = True
        else:
            # a query without direction (the zero vector: "!!!") is similar to nothing
            # (embeddings/vectors.py): its words alone are searched, and that is no outage
            vector = Vector(embedded) if has_direction(embedded) else None
        recalled_at = None
        # with a read pool, the search runs there and the uses are recorded on the primary in
        # a transaction of their own; without one, both in one transaction (one round trip
        # for BEGIN and COMMIT fewer)
        with self._read_transaction(principal) as conn:
            rows = store.recall(
                conn,
                principal,
                query=text,
                embedding=vector,
                model=self._embedder.model_name,
                category=category_,
                scope=scope_,
                # enough rows to hold the query's closest memory, which relevance measures
                # from; the ranking of the first `limit` is the same
                limit=max(limit_, relevance.RELEVANCE_WINDOW),
                include_archived=with_archived,
                as_of=at,
                **self._config.recall_tuning,
            )
            judged = relevance.relevances(rows, self._config.fusion, self._config.relevance)
            rows, scored = _relevant(rows, judged, floor, limit_)
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
            # the answer is checked before a use is recorded (memory/answers.py): an answer
            # that cannot be delivered counts no use
            answers.deliverable(
                self._recalled(rows, scored, floor, found, degraded, with_episodes), "recall"
            )
            kept = text if keep_query else None
            if record_use and rows and self._read_pool is None:
                recalled_at = store.record_recalls(conn, principal, [r.id for r in rows], kept)
        if record_use and rows and self._read_pool is not None:
            with self._transaction(principal) as conn:
                recalled_at = store.record_recalls(
                    conn, principal, [r.id for r in rows], text if keep_query else None
                )
        return self._recalled(rows, scored, floor, found, degraded, with_episodes, recalled_at)

    @staticmethod
    def _recalled(
        rows: list[store.RecallRow],
        scored: list[float],
        floor: float,
        found: list[episodes.EpisodeRow],
        degraded: bool,
        with_episodes: bool,
        recalled_at: datetime | None = None,
    ) -> RecallResult:
        """Recall's answer; each memory's use counted when it was recorded at `recalled_at`."""
        memories: list[RecalledMemory] = []
        for row, relevant in zip(rows, scored, strict=True):
            used = 0 if recalled_at is None else 1
            record = memory_record(row, use_count=row.use_count + used, last_used=recalled_at)
            # as ranked: the confidence the search weighed, before this use restored it
            record["effective_confidence"] = round(row.effective_confidence, 4)
            memories.append(
                {
                    **record,
                    "score": round(row.score, 6),
                    "scores": {
                        "lexical_rank": row.lexical_rank,
                        "lexical_score": rounded(row.lexical_score),
                        "vector_rank": row.vector_rank,
                        "similarity": rounded(row.similarity),
                        "fused": round(row.fused, 6),
                        "effective_confidence": round(row.effective_confidence, 4),
                        "recency": round(row.recency, 4),
                        "importance_factor": round(row.importance_factor, 4),
                        "score": round(row.score, 6),
                    },
                    "archived_at": None if row.archived_at is None else row.archived_at.isoformat(),
                    "relevance": round(relevant, 4),
                }
            )
        # the current side of a conflict before the outranked one (memory/authority.py)
        result: RecallResult = {
            "memories": current_first(memories),
            "degraded": degraded,
            "min_relevance": floor,
            "nothing_relevant": not memories,
        }
        if with_episodes:
            result["episodes"] = [episode_record(row) for row in found]
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
        evidence: str | None = None,
        reason: str | None = None,
        replaces: str | None = None,
        other: str | None = None,
    ) -> (
        ListResult
        | DeleteResult
        | UpdateResult
        | RestoreResult
        | ForgetAllResult
        | ReinforceResult
        | ArchiveResult
        | SupersedeResult
        | KeepBothResult
    ):
        """The manage_memory tool: one of list, delete, update, restore, forget_all,
        reinforce (with `evidence`), archive (`reason` optional, as for delete), supersede
        (memory_id stays, `replaces` is superseded by it; `reason` kept on that one),
        keep_both (memory_id and `other`, linked as a conflict, are both true).
        Memory ids may be short (resolve_memory_id)."""
        action_ = validation.action(action)
        if status is not None and action_ != "list":
            raise InvalidInput(f"status is a filter of list; {action_} does not take it")
        if evidence is not None and action_ != "reinforce":
            raise InvalidInput(f"evidence goes with reinforce; {action_} does not take it")
        if reason is not None and action_ not in ("delete", "archive", "supersede"):
            raise InvalidInput(
                f"reason goes with delete, archive and supersede; {action_} does not take it"
            )
        if (replaces is not None) != (action_ == "supersede"):
            raise InvalidInput(
                "supersede needs replaces: the id of the memory that memory_id replaces"
                if replaces is None
                else f"replaces goes with supersede; {action_} does not take it"
            )
        if (other is not None) != (action_ == "keep_both"):
            raise InvalidInput(
                "keep_both needs other: the id of the memory memory_id conflicts with"
                if other is None
                else f"other goes with keep_both; {action_} does not take it"
            )
        if action_ == "list":
            return self.list_memories(principal, category=category, limit=limit, status=status)
        if action_ == "forget_all":
            return self.forget_all(principal, confirm=confirm)
        id_ = self.resolve_memory_id(principal, memory_id)
        if action_ == "delete":
            return self.delete(principal, id_, reason=reason)
        if action_ == "update":
            return self.update(principal, id_, updates or {})  # {}: "updates must be an object"
        if action_ == "reinforce":
            return self.reinforce(principal, id_, evidence)  # type: ignore[arg-type]
        if action_ == "archive":
            return self.archive(principal, id_, reason=reason)
        if action_ == "supersede":
            replaced = self.resolve_memory_id(principal, replaces, "replaces")
            return self.supersede(principal, id_, replaced, reason=reason)
        if action_ == "keep_both":
            both = self.resolve_memory_id(principal, other, "other")
            return self.keep_both(principal, id_, both)
        return self.restore(principal, id_)

    def _whole_ids(self, principal: Principal, related_to: object) -> object:
        """related_to with each short id (as the tools show it) made whole; anything else as
        given, for validation.related_ids to judge."""
        if (
            isinstance(related_to, str)
            or not isinstance(related_to, Sequence)
            or len(related_to) > validation.MAX_RELATED
        ):
            return related_to
        return [
            self.resolve_memory_id(principal, item, "related_to id")
            if store.id_prefix(item) is not None
            else item
            for item in related_to
        ]

    def resolve_memory_id(
        self,
        principal: Principal,
        memory_id: object,
        field: str = "memory_id",
        whole_ids: str = "detail: true shows whole ids",
    ) -> str:
        """A memory id as manage takes it: a whole id, or the beginning of one as the tools show
        it (at least 8 hex digits) that names exactly one memory the principal sees, in any
        status. A prefix no visible memory has (another user's only) answers like an unknown
        id; one that begins several of them is refused, saying where the edge shows whole ids
        (`whole_ids`)."""
        prefix = store.id_prefix(memory_id)
        if prefix is None:
            return str(validation.memory_id(memory_id, field))
        self._require_read(principal)
        with self._transaction(principal) as conn:  # the primary: a memory just saved counts
            found = store.ids_with_prefix(conn, principal, prefix)
        missing = MemoryNotFound(f"memory {prefix} not found")
        return str(store.the_one(found, missing, prefix, field, "memories", whole_ids))

    def list_memories(
        self,
        principal: Principal,
        category: Category | None = None,
        limit: int | None = None,
        status: ListStatus | None = None,
    ) -> ListResult:
        """Visible active memories, most used first, then newest; or, with `status`
        superseded, deleted or archived, the visible memories in that state, most recently
        changed first (what `restore` can bring back). Read on the read pool."""
        category_ = None if category is None else validation.category(category)
        limit_ = validation.limit(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
        status_ = "active" if status is None else validation.list_status(status)
        self._require_read(principal)
        decay = self._config.decay
        with self._read_transaction(principal) as conn:
            if status_ == "active":
                # the Browse page's "most used" page (each visibility branch on its index, the
                # use counts' index walked), then those memories in full; a category with no
                # memory is known from the count's index without walking the whole page's
                filters = {"category": category_}
                none = category_ is not None and not browse_store.count(
                    conn, principal, status="active", filters=filters
                )
                page = (
                    []
                    if none
                    else browse_store.page(
                        conn,
                        principal,
                        status="active",
                        sort="most_used",
                        filters=filters,
                        after=None,
                        limit=limit_,
                    )
                )
                found = store.memory_rows(conn, [row[0] for row in page])
                memories: list[InactiveMemory | MemoryRecord] = [
                    memory_record(found[row[0]], decay=decay) for row in page if row[0] in found
                ]
            else:
                rows = store.list_inactive(conn, principal, status_, category_, limit_)
                memories = [inactive_record(row, decay) for row in rows]
        return {"memories": memories, "count": len(memories)}

    def delete(
        self, principal: Principal, memory_id: str, reason: str | None = None
    ) -> DeleteResult:
        """Soft-delete one memory (kept as history, never recalled again); `reason` (at most
        500 characters) is kept as its delete_reason."""
        id_ = validation.memory_id(memory_id)
        reason_ = validation.optional_note(reason, "reason", validation.MAX_REASON)
        self._require_write(principal)
        with self._transaction(principal) as conn:
            self._writable_memory(conn, principal, id_, deleting=True)
            graph.delete_object(conn, id_, reason=reason_ or "deleted by its owner")
            deleted: DeleteResult = {"deleted": str(id_)}
            return answers.deliverable(deleted, "delete")

    def archive(
        self, principal: Principal, memory_id: str, reason: str | None = None
    ) -> ArchiveResult:
        """Archive an active memory: a new version with archived_at (now) and, if given,
        archive_reason. It leaves recall (unless asked for), lists and injection until
        `restore` (or an exact repeat, or evidence) brings it back. Core memories are never
        archived."""
        id_ = validation.memory_id(memory_id)
        reason_ = validation.optional_note(reason, "reason", validation.MAX_REASON)
        self._require_write(principal)
        with self._transaction(principal) as conn:
            head = self._writable_memory(conn, principal, id_)
            _refuse_superseded(head, "archive")
            if "archived_at" in head.properties:
                raise InvalidInput(
                    f"memory {id_} is already archived (since {head.properties['archived_at']})"
                )
            if head.properties.get("importance") == "core":
                raise InvalidInput(
                    f"memory {id_} is a core memory, and core memories are never archived; "
                    "lower its importance first (update importance) if it no longer matters"
                )
            patch: dict[str, Any] = {"archived_at": validation.iso_utc(store.now(conn))}
            if reason_ is not None:
                patch["archive_reason"] = reason_
            graph.update_object(conn, id_, properties=patch)
            row = store.memory_rows(conn, [id_])[id_]
            archived: ArchiveResult = {
                "archived": str(id_),
                "memory": inactive_record(row, self._config.decay),
                "archive_reason": reason_,
            }
            return answers.deliverable(archived, "archive")

    def update(
        self, principal: Principal, memory_id: str, updates: Mapping[str, Any]
    ) -> UpdateResult:
        """A new version of the memory with the same id; new content is re-embedded.

        New content goes through save's checks: secrets are refused, and so is the exact text
        of another active memory the caller sees in the same scope (two identical memories
        would both be recalled; the error names the one to keep). A close memory is reported
        in `possible_duplicates`, never superseded: an update names the memory it changes and
        hides no other. `importance`, `valid_from`, `valid_until` and `rationale` are checked
        as save's (null removes them: normal importance, unbounded validity, no rationale)."""
        id_ = validation.memory_id(memory_id)
        changes = validation.updates(updates)
        patch: dict[str, Any] = validity.lifecycle_properties(
            {name: changes[name] for name in validation.REMOVABLE_FIELDS if name in changes},
            removable=True,
        )
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
            # new content is checked for a twin under the save lock, taken first
            head = self._writable_memory(conn, principal, id_, saves_lock="content" in patch)
            if head.properties.get("superseded_by"):
                raise InvalidInput(
                    f"memory {id_} was superseded by {head.properties['superseded_by']}; "
                    "update that one instead"
                )
            if patch.get("importance") == "core" and "archived_at" in head.properties:
                raise InvalidInput(
                    f"importance: memory {id_} is archived and core memories are never "
                    "archived; restore it first, then make it core"
                )
            validity.check_validity(head.properties, patch)
            if patch.get("content", head.properties["content"]) != head.properties["content"]:
                # under the save lock (taken above): a racing save cannot slip in a twin
                self._refuse_a_twin(conn, principal, head.scope, patch["content"], id_)
                possible_duplicates = self._close_memories(
                    conn, principal, head.scope, patch["content"], embedding, id_
                )
                for close in possible_duplicates:
                    store.record_possible_duplicate(
                        conn, principal, id_, UUID(close["id"]), close["similarity"], records.EDITED
                    )
            self._write_update(conn, head, patch, embedding)
            updated: UpdateResult = {
                "memory": self._records(conn, [id_])[0],
                "possible_duplicates": possible_duplicates,
            }
            return answers.deliverable(updated, "update")

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
        reason: str | None = None,
    ) -> SupersedeResult:
        """Make `other_id` superseded by `keep_id`, as save does when a new memory replaces
        an old one (a SUPERSEDES edge, the old one's superseded_by); `keep_id` also files
        itself where the other was (its contexts). With `content`, `keep_id` first gets a
        new version with that text, through update's checks (secrets, another memory with
        exactly that text). Both must be active memories of one scope that the principal may
        change. `within`, if given, runs in the same transaction before it commits (the
        caller's own record of the decision). `reason` is kept on the superseded memory
        (supersede_reason)."""
        keep = validation.memory_id(keep_id, "keep")
        reason_ = validation.optional_note(reason, "reason", validation.MAX_REASON)
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
            if text is not None:  # new text is checked for a twin under the save lock
                self._lock_saves_first(conn, principal, keep)
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
            patch: dict[str, Any] = {}
            if text is not None and text != heads[keep].properties["content"]:
                self._refuse_a_twin(conn, principal, heads[keep].scope, text, keep, allow=other)
                patch["content"] = text
            # the kept memory loses nothing the other had (importance, source, confidence,
            # rationale; its contexts and evidence below)
            merged = authority.inherited(heads[other].properties, heads[keep].properties)
            patch.update({k: v for k, v in merged.items() if heads[keep].properties.get(k) != v})
            if patch:
                self._write_update(conn, heads[keep], patch, embedding)
            self._supersede(
                conn,
                principal,
                keep,
                heads[other],
                reason=reason_,
                new_start=heads[keep].properties.get("valid_from"),
                rule="decided",
            )
            already = store.contexts_of(conn, keep)
            for context_id in store.inherit(conn, principal, other, keep):
                if context_id not in already:
                    self._link(conn, principal, store.BELONGS_TO_CONTEXT, keep, context_id)
            if within is not None:
                within(conn)
            superseded: SupersedeResult = {
                "memory": self._records(conn, [keep])[0],
                "superseded_ids": [str(other)],
            }
            return answers.deliverable(superseded, "supersede")

    @staticmethod
    def give_back(conn: Connection[Any], keep: UUID, other: UUID, decided_at: datetime) -> None:
        """In the undo of a person's supersede decision (DuplicateService.undo, inside its
        transaction): the kept memory gives back what the decision, made at `decided_at`,
        had it take from `other`: each inherited property (authority.INHERITED) that nothing
        changed since, as a new version, and the contexts it was filed in then. The evidence
        it copied stays (the evidence log is append-only)."""
        versions = graph.list_versions(conn, keep)
        if not versions or versions[-1].deleted:
            return
        for before, decided in itertools.pairwise(versions):
            if decided.updated_at == decided_at:
                patch = authority.given_back(
                    before.properties, decided.properties, versions[-1].properties
                )
                if patch:
                    graph.update_object(conn, keep, properties=patch)
                break
        for link in store.context_links_at(conn, keep, decided_at):
            graph.delete_relationship(conn, link, reason=f"undone: filed here for {other}")

    def keep_both(self, principal: Principal, memory_id: str, other_id: str) -> KeepBothResult:
        """Settle a conflict as "both are true": the CONFLICTS_WITH link between the two
        memories is removed (neither is outranked by the other any more) and the review
        queue's open pairs of the two are decided keep_both, as the queue's own keep_both
        does. Both must be active memories the principal may change, linked as a conflict."""
        first = validation.memory_id(memory_id, "memory_id")
        second = validation.memory_id(other_id, "other")
        if first == second:
            raise InvalidInput("keep_both needs two memories; other names memory_id again")
        self._require_write(principal)
        with self._transaction(principal) as conn:
            for id_ in sorted((first, second)):  # one order, as supersede locks them
                head = self._writable_memory(conn, principal, id_)
                if head.properties.get("superseded_by") or head.properties.get("archived_at"):
                    raise InvalidInput(
                        f"memory {id_} is not active; restore it first, or keep the one that "
                        "replaced it"
                    )
            if not store.settle_as_both_true(conn, first, second):
                raise InvalidInput(
                    f"memories {first} and {second} are not marked as conflicting; there is "
                    "nothing to settle (recall flags conflicts; detail shows conflicts_with)"
                )
            store.keep_both_pairs(conn, principal.actor_id, first, second)
            kept: KeepBothResult = {
                "memories": self._records(conn, [first, second]),
                "kept_both": [str(first), str(second)],
            }
            return answers.deliverable(kept, "keep_both")

    def _supersede(
        self,
        conn: Connection[Any],
        principal: Principal,
        new_id: UUID,
        old: GraphObject,
        *,
        reason: str | None = None,
        new_start: str | None = None,
        rule: str | None = None,
        similarity: float | None = None,
    ) -> None:
        """`old` (its head, as read under its lock) is superseded by `new_id`: the edge, and
        the old one's new version that says by what, why (`reason`, if given; `rule`, the save
        rule's reason or "decided", with the two memories' `similarity`), and that its
        validity ends where the new one's begins (`new_start`, else now) unless it ended
        earlier (both locked by the caller)."""
        self._link(conn, principal, store.SUPERSEDES, new_id, old.canonical_id)
        patch: dict[str, Any] = {"superseded_by": str(new_id)}
        if reason is not None:
            patch["supersede_reason"] = reason
        if rule is not None:
            patch["supersede_rule"] = rule
        if similarity is not None:
            patch["supersede_similarity"] = round(similarity, 4)
        end = validity.validity_end(
            old.properties, new_start or validation.iso_utc(datetime.now(UTC))
        )
        if end is not None:
            patch["valid_until"] = end
        graph.update_object(conn, old.canonical_id, properties=patch)

    def restore(
        self,
        principal: Principal,
        memory_id: str,
        *,
        within: Callable[[Connection[Any]], None] | None = None,
    ) -> RestoreResult:
        """Make a superseded, deleted or archived memory active again, as a new version (same
        id), without archived_at and archive_reason.

        A supersession it breaks is kept as history: the SUPERSEDES edge from the memory that
        replaced it gets a tombstone version (delete_reason says it was restored), and that
        memory stays active; the restored memory's validity ends where it did before the
        supersession ended it. Refused when another active memory already says exactly the
        same (the error names it), as for save and update. `within`, if given, runs in the
        same transaction before it commits (the undo of a duplicates decision).
        """
        id_ = validation.memory_id(memory_id)
        self._require_write(principal)
        with self._transaction(principal) as conn:
            self._lock_saves_first(conn, principal, id_)  # the twin check below needs it
            graph.lock_object(conn, id_)
            head = graph.get_head(conn, id_, include_deleted=True)
            if head is None or head.type != store.MEMORY or not store.visible_to(head, principal):
                raise MemoryNotFound(f"memory {id_} not found")
            if head.scope == "global" and not principal.is_admin:
                raise PermissionDenied(
                    "only an administrator credential can change global memories"
                )
            superseded_by = head.properties.get("superseded_by")
            archived = "archived_at" in head.properties
            if not head.deleted and not superseded_by and not archived:
                raise InvalidInput(f"memory {id_} is active; there is nothing to restore")
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
            back: dict[str, Any] = {}
            if superseded_by:
                back.update(
                    superseded_by=None,
                    supersede_reason=None,
                    supersede_rule=None,
                    supersede_similarity=None,
                    valid_until=validity.validity_before_supersession(
                        graph.list_versions(conn, id_)
                    ),
                )
            if archived:
                back.update(archived_at=None, archive_reason=None)
            if head.deleted:
                restored = graph.restore_object(conn, id_, properties=back or None)
            else:
                restored = graph.update_object(conn, id_, properties=back)
            if restored.embedding is None:  # never embedded (the provider was down): queue it
                jobs.enqueue(conn, restored)
            was: RestoredFrom = "superseded" if superseded_by else "archived"
            if head.deleted:
                was = "superseded and deleted" if superseded_by else "deleted"
            if within is not None:
                within(conn)
            answer: RestoreResult = {
                "memory": self._records(conn, [id_])[0],
                "restored_from": was,
                "broken_supersession": broken,
            }
            return answers.deliverable(answer, "restore")

    def bulk_delete(
        self, principal: Principal, memory_ids: object, reason: str | None = None
    ) -> BulkResult:
        """Delete each memory of `memory_ids` (at most BULK_MAX_IDS) as `delete` does, each on
        its own: one that cannot be deleted (not found, another actor's, a global one without
        the admin scope) is said so in its result and the others go ahead. `reason`: each
        one's delete_reason."""
        return self._bulk(
            principal, memory_ids, lambda id_: self.delete(principal, id_, reason=reason)
        )

    def bulk_archive(
        self, principal: Principal, memory_ids: object, reason: str | None = None
    ) -> BulkResult:
        """Archive each memory of `memory_ids` (at most BULK_MAX_IDS) as `archive` does, each
        on its own (a core, superseded or already archived one is an invalid_input result, the
        others go ahead). `reason`: each one's archive_reason."""
        return self._bulk(
            principal, memory_ids, lambda id_: self.archive(principal, id_, reason=reason)
        )

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
        """Soft-delete all the caller's memories saved in the current project, active and
        archived (superseded ones stay history)."""
        if confirm is not True:
            raise InvalidInput(
                "forget_all deletes every memory you saved in this project; "
                "call it again with confirm: true to go ahead"
            )
        self._require_write(principal)
        with self._transaction(principal) as conn:
            memories = store.own_memories_in_project(conn, principal)  # active and archived
            for memory in memories:
                graph.delete_object(conn, memory.canonical_id, reason="forget_all")
            forgotten: ForgetAllResult = {"deleted_count": len(memories)}
            return answers.deliverable(forgotten, "forget_all")

    def stats(self, principal: Principal) -> StatsResult:
        """How many memories the caller saved, per project where they were saved."""
        self._require_read(principal)
        with self._transaction(principal) as conn:
            rows = store.stats_rows(conn, principal)
        projects = [project_stats(row) for row in rows]
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

    @contextmanager
    def _read_transaction(self, principal: Principal) -> Iterator[Connection[Any]]:
        """A transaction for reads only, acting for the principal, on the read pool (a read
        replica's, which falls back to the primary by itself) or else the primary's."""
        with acting_for(self._read_pool or self._pool, principal) as conn:
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

    @staticmethod
    def _still_active(conn: Connection[Any], memory_id: UUID) -> bool:
        """Lock a memory found earlier in the transaction and say whether it is still active (a
        delete or supersession of it meanwhile waits for this transaction, or came first)."""
        graph.lock_object(conn, memory_id)
        head = graph.get_head(conn, memory_id)
        return head is not None and store.is_active(head)

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

    def _lock_saves_first(
        self, conn: Connection[Any], principal: Principal, memory_id: UUID
    ) -> None:
        """Take the save lock of the memory's scope (store.lock_saves) before its own lock.

        A save holds its scope's lock and then locks the memory it repeats or supersedes;
        a writer that may need both must take them in that order too, or each of the two
        waits for the other's (PostgreSQL ends that as a deadlock, failing one of them).
        The scope is read without the memory's lock: it never changes; a memory that is
        not there or not visible is refused by the locked read that follows."""
        peek = graph.get_head(conn, memory_id, include_deleted=True)
        if peek is not None and peek.type == store.MEMORY and store.visible_to(peek, principal):
            store.lock_saves(conn, principal, peek.scope)

    def _writable_memory(
        self,
        conn: Connection[Any],
        principal: Principal,
        memory_id: UUID,
        *,
        saves_lock: bool = False,
        deleting: bool = False,
    ) -> GraphObject:
        """The memory's head, under its lock, if the principal may change it. `saves_lock`:
        also the save lock of its scope, taken first (see _lock_saves_first). A deleted memory
        the principal sees is refused as deleted (restore first); one it does not see answers
        exactly like a missing one. `deleting`: the change is a delete (already done)."""
        if saves_lock:
            self._lock_saves_first(conn, principal, memory_id)
        # locked before it is read: a concurrent delete or supersession cannot slip in
        # between the checks below and this transaction's write
        graph.lock_object(conn, memory_id)
        head = graph.get_head(conn, memory_id, include_deleted=True)
        if head is None or head.type != store.MEMORY or not store.visible_to(head, principal):
            raise MemoryNotFound(f"memory {memory_id} not found")
        if head.scope == "global" and not principal.is_admin:
            raise PermissionDenied("only an administrator credential can change global memories")
        if head.deleted:  # the caller's own (or a global one): it may know it was deleted
            restore = (
                f"manage_memory action 'restore', or POST /api/v1/memories/{memory_id}/restore"
            )
            raise InvalidInput(
                f"memory {memory_id} is already deleted; {restore} brings it back"
                if deleting
                else f"memory {memory_id} is deleted; restore it first ({restore}), then change it"
            )
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
            raise SameContent(
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
                "why": records.pair_why(records.EDITED),
            }
        ]

    def _records(self, conn: Connection[Any], ids: list[UUID]) -> list[MemoryRecord]:
        rows = store.memory_rows(conn, ids)
        return [memory_record(rows[id_], decay=self._config.decay) for id_ in ids]

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
        graph.act_as(
            conn,
            principal.actor_id,
            principal.project_id,
            admin=principal.is_admin,
            all_projects=principal.all_projects,
        )
        yield conn


def _stored_confidence(properties: Mapping[str, Any]) -> float:
    value = properties.get("confidence")
    return 0.7 if value is None else float(value)


def _refuse_superseded(head: GraphObject, action: str) -> None:
    newer = head.properties.get("superseded_by")
    if newer:
        raise InvalidInput(
            f"memory {head.canonical_id} was superseded by {newer}; {action} that one"
        )


def _expired(properties: Mapping[str, Any]) -> bool:
    """Whether a memory's validity has ended (valid_until passed)."""
    end = properties.get("valid_until")
    return end is not None and validation.moment(end, "valid_until") <= datetime.now(UTC)


def _relevant(
    rows: list[store.RecallRow], judged: list[float], floor: float, limit: int
) -> tuple[list[store.RecallRow], list[float]]:
    """The recall's rows (its window of candidates) whose relevance reaches `floor`, at most
    `limit`, most relevant first, and their relevances. Relevance is weighed as the search
    weighs its fused score, by the memory's confidence, recency and importance
    (relevance.weighed); equals keep the search's order. But a memory kept that is the
    outranked side of a conflict brings the sides that outrank it along when they are among
    the recall's rows, whatever their own relevance: the current value of a subject the query
    found is returned with the stale one (and records.current_first then puts the current one
    first). Over `limit`, the last kept memories in no conflict make room, then the outranked
    sides (the current value is never dropped for a stale one)."""
    return _kept(relevance.most_relevant_first(rows, judged), floor, limit)


def _kept(
    pairs: list[tuple[store.RecallRow, float]], floor: float, limit: int
) -> tuple[list[store.RecallRow], list[float]]:
    """Of (row, relevance) pairs in the order recall answers in, the first `limit` that reach
    `floor`, with the sides that outrank a stale one kept brought along (_relevant)."""
    kept = [(row, value) for row, value in pairs[:limit] if value >= floor]
    added = True
    while added:  # a value changed twice: the newest outranks the one just brought along
        added = False
        for pair in pairs:
            if any(pair[0].id == row.id for row, _ in kept):
                continue
            stale = [i for i, (row, _) in enumerate(kept) if outranks(pair[0], row)]
            if stale:
                kept.insert(stale[0] + 1, pair)
                added = True
    while len(kept) > limit:
        spare = [i for i, (row, _) in enumerate(kept) if not row.conflicts_with]
        if not spare:  # the outranked sides
            spare = [i for i, (row, _) in enumerate(kept) if any(outranks(o, row) for o, _ in kept)]
        del kept[spare[-1] if spare else -1]
    return [row for row, _ in kept], [value for _, value in kept]
