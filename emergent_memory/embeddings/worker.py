"""The embedding worker: computes the vectors of queued jobs, with retries, backoff and a
dead-letter state, alone (`emergent-memory worker`) or in a thread of the server.

One round (`run_once`):

1. claim up to `batch_size` due jobs in one short transaction (`FOR UPDATE SKIP LOCKED`, so
   several workers never take the same job), after freeing the jobs of workers that held
   theirs longer than `lock_timeout` (they crashed or hung);
2. read each job's object, acting for its owner (row-level security): the head version of
   its canonical id, since only live heads are searched. Which property of an object holds
   the text to embed is the caller's knowledge (`embedded_text`, per object type, given by
   the composition root). A head that is deleted, has no such text, or already has a vector
   of the current model needs nothing: its job is done;
3. embed the texts in one call, outside any transaction (no lock is held while the
   provider works);
4. per job, in a transaction acting for its owner: under the object's version lock (the
   graph's), set the vector in place on the head version through `graph.set_embedding`
   (derived data, not a new version) if its text is still the one embedded, and mark the
   job done.

When the provider fails, each job waits `min(backoff_max, backoff_base * 2 ** (attempts - 1))`
seconds (plus up to 10% jitter) before its next attempt, and is dead-lettered after
`max_attempts`. A failed batch is retried one text at a time, in random order (unless the
first two fail as well: the provider is down), so one text the provider refuses cannot keep
the others from their vectors.
"""

from __future__ import annotations

import logging
import random
import re
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection
from psycopg_pool import ConnectionPool

from emergent_memory import telemetry
from emergent_memory.db import rounds
from emergent_memory.db.pool import transaction
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.jobs import EmbeddingJob
from emergent_memory.errors import EmbeddingUnavailable
from emergent_memory.graph import GraphObject, act_as, get_head, lock_object, set_embedding

logger = logging.getLogger(__name__)

PROBES = 2  # after a failed batch, texts tried alone before the provider is deemed down

NOT_VISIBLE = (
    "the object is not visible to this worker's database role acting for the job's owner; "
    "run `emergent-memory reembed` as an administrator"
)


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """The worker's tunables (from Settings, in the composition root)."""

    batch_size: int = 32
    max_attempts: int = 8
    backoff_base: float = 2.0
    backoff_max: float = 600.0
    lock_timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.max_attempts < 1:
            raise ValueError("batch_size and max_attempts must be at least 1")
        if self.backoff_base < 0 or self.backoff_max < self.backoff_base:
            raise ValueError("backoff_base must not be negative nor exceed backoff_max")
        if self.lock_timeout <= 0:
            raise ValueError("lock_timeout must be positive")

    def backoff(self, attempts: int) -> float:
        """Seconds before the next attempt of a job that failed `attempts` times (no jitter)."""
        return rounds.backoff(attempts, self.backoff_base, self.backoff_max)


@dataclass(slots=True)
class RunCounts(rounds.Counts):
    """What rounds of the worker did: jobs claimed, vectors written, jobs done (embedded or
    with nothing to do), jobs put back to wait for a retry, jobs dead-lettered."""

    claimed: int = 0
    embedded: int = 0
    done: int = 0
    retried: int = 0
    dead: int = 0
    reclaimed: int = 0


@dataclass(slots=True)
class _Work:
    """A claimed job whose object needs a vector: the head version and its text."""

    job: EmbeddingJob
    row_id: UUID
    text: str
    vector: list[float] | None = None
    error: str | None = None


class EmbeddingWorker:
    """Backfills the vectors of queued embedding jobs; safe to run as many as you like.

    `embedded_text` names, for each object type the worker embeds, the property that holds
    the text (the layer that defines the types knows it); an object of another type has
    nothing to embed.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        embedder: EmbeddingProvider,
        config: WorkerConfig | None = None,
        *,
        embedded_text: Mapping[str, str],
        worker_id: str | None = None,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._config = config or WorkerConfig()
        self._embedded_text = dict(embedded_text)
        self.worker_id = worker_id or rounds.default_worker_id()

    @property
    def config(self) -> WorkerConfig:
        return self._config

    # -- one round ------------------------------------------------------------------------

    def run_once(self) -> RunCounts:
        """Claim, embed and finish one batch of due jobs. Database errors propagate."""
        counts = RunCounts()
        config = self._config
        with transaction(self._pool) as conn:
            counts.reclaimed = jobs.reclaim_stale(
                conn, lock_timeout=config.lock_timeout, max_attempts=config.max_attempts
            )
            claimed = jobs.claim(conn, self.worker_id, config.batch_size)
        counts.claimed = len(claimed)
        if counts.reclaimed:
            logger.warning("reclaimed %d embedding jobs of stopped workers", counts.reclaimed)
        if not claimed:
            return counts

        # one batch (rounds that find nothing are not measured); its texts' bytes in, and
        # ok, or unavailable when the provider embedded none of them
        with telemetry.operation("embedding", "batch") as batch:
            work = self._read(claimed, counts)
            if work:
                batch.request_bytes = sum(len(item.text.encode()) for item in work)
                self._embed(work)
                if all(item.vector is None for item in work):
                    batch.outcome = "unavailable"
                for item in work:
                    try:
                        self._write(item, counts)
                    except Exception as error:  # e.g. a vector the column refuses
                        logger.exception(
                            "could not store the vector of embedding job %s", item.job.id
                        )
                        item.vector, item.error = None, _describe(error, "storing the vector")
                        self._write(item, counts)  # a failed attempt (database errors propagate)
        return counts

    def drain(self) -> RunCounts:
        """Rounds until no job is due, or the provider fails a whole round (the jobs then wait
        for their backoff)."""
        total = RunCounts()
        while True:
            counts = self.run_once()
            total.add(counts)
            if counts.claimed == 0 or (counts.done == 0 and counts.retried > 0):
                return total

    def retry_dead(self) -> int:
        """Move dead jobs back to pending with their attempts reset; returns how many."""
        with transaction(self._pool) as conn:
            return jobs.retry_dead(conn)

    def queue_counts(self) -> dict[str, int]:
        with transaction(self._pool) as conn:
            return jobs.counts(conn)

    # -- running --------------------------------------------------------------------------

    def run_forever(self, stop: threading.Event, poll_interval: float = 2.0) -> None:
        """Rounds until `stop` is set: at once while full batches succeed, else every
        `poll_interval` seconds. A database error is logged and retried later, never fatal."""

        def report(counts: RunCounts) -> None:
            if counts.claimed:
                logger.info("embedding jobs: %s", counts.as_dict())

        rounds.run_rounds(
            self.run_once,
            stop,
            poll_interval,
            rest=lambda c: c.claimed < self._config.batch_size or c.done == 0,
            report=report,
            what="embedding worker",
            logger=logger,
        )

    def running_in_thread(self, poll_interval: float = 2.0) -> AbstractContextManager[Any]:
        """Run the worker in a background thread until the block ends; then stop it, waiting
        for the round in progress (a hung provider is abandoned after rounds.STOP_TIMEOUT
        seconds: its jobs are reclaimed once their lock times out)."""
        return rounds.running_in_thread(
            self.run_forever,
            poll_interval,
            name=f"embedding-worker {self.worker_id}",
            what="embedding worker",
            logger=logger,
        )

    # -- steps ----------------------------------------------------------------------------

    def _read(self, claimed: Sequence[EmbeddingJob], counts: RunCounts) -> list[_Work]:
        """The heads to embed; jobs with nothing to do are finished in the same transaction."""
        model = self._embedder.model_name
        work: list[_Work] = []
        with transaction(self._pool) as conn:
            for job in claimed:
                self._act_for(conn, job)
                head = get_head(conn, job.canonical_id, include_deleted=True)
                reason = self._nothing_to_do(head, model)
                text = None if head is None else self._text_of(head)
                if head is None:
                    self._fail_for_good(conn, job, NOT_VISIBLE, counts)
                elif reason is not None or text is None:
                    jobs.finish(conn, job, self.worker_id, reason)
                    counts.done += 1
                else:
                    work.append(_Work(job, head.id, text))
        return work

    def _embed(self, work: list[_Work]) -> None:
        """Vectors for the work items (each text once); a failed item gets `error` instead."""
        vectors, errors = self._vectors(list(dict.fromkeys(item.text for item in work)))
        for item in work:
            item.vector = vectors.get(item.text)
            item.error = errors.get(item.text)

    def _vectors(self, texts: list[str]) -> tuple[dict[str, list[float]], dict[str, str]]:
        """One call for all the texts; after a failure, each text alone, in random order, unless
        the first PROBES texts fail too (then the provider is down: the rest fail alike)."""
        try:
            return dict(zip(texts, self._embedder.embed_documents(texts), strict=True)), {}
        except Exception as error:
            failure = _provider_failure(error)
        if len(texts) == 1:
            return {}, {texts[0]: failure}
        vectors: dict[str, list[float]] = {}
        errors: dict[str, str] = {}
        order = random.sample(texts, len(texts))
        for position, text in enumerate(order):
            try:
                vectors[text] = self._embedder.embed_documents([text])[0]
            except Exception as error:
                errors[text] = _provider_failure(error)
                if not vectors and len(errors) >= PROBES:
                    errors.update(dict.fromkeys(order[position + 1 :], errors[text]))
                    break
        return vectors, errors

    def _write(self, item: _Work, counts: RunCounts) -> None:
        job = item.job
        model = self._embedder.model_name
        with transaction(self._pool) as conn:
            if item.vector is None:
                status = jobs.fail(
                    conn,
                    job,
                    self.worker_id,
                    error=item.error or "embedding failed",
                    delay=self._delay(job.attempts),
                    max_attempts=self._config.max_attempts,
                )
                if status == "dead":
                    counts.dead += 1
                    logger.warning(
                        "embedding job %s is dead after %d attempts: %s",
                        job.id,
                        job.attempts,
                        item.error,
                    )
                elif status == "pending":
                    counts.retried += 1
                return
            self._act_for(conn, job)
            # under the graph's version lock, the head cannot change between this check and
            # commit (set_embedding takes the same lock again)
            lock_object(conn, job.canonical_id)
            head = get_head(conn, job.canonical_id, include_deleted=True)
            reason = self._nothing_to_do(head, model)
            if head is None:
                self._fail_for_good(conn, job, NOT_VISIBLE, counts)
            elif reason is not None:
                jobs.finish(conn, job, self.worker_id, reason)
                counts.done += 1
            elif head.id != item.row_id or self._text_of(head) != item.text:
                jobs.requeue(conn, job, self.worker_id)  # changed meanwhile: embed it again
                counts.retried += 1
            elif set_embedding(
                conn,
                job.canonical_id,
                item.text,
                Vector(item.vector),
                model,
                text_property=self._embedded_text[head.type],
            ):
                jobs.finish(conn, job, self.worker_id, None)
                jobs.finish_pending(conn, job.canonical_id)
                counts.embedded += 1
                counts.done += 1
            else:  # the head is there but the update saw no row: not writable for the owner
                self._fail_for_good(conn, job, NOT_VISIBLE, counts)

    def _fail_for_good(
        self, conn: Connection[Any], job: EmbeddingJob, error: str, counts: RunCounts
    ) -> None:
        """Dead-letter a job that no retry can help."""
        jobs.fail(conn, job, self.worker_id, error=error, delay=0, max_attempts=0)
        counts.dead += 1
        logger.warning("embedding job %s is dead: %s", job.id, error)

    def _text_of(self, head: GraphObject) -> str | None:
        """The text to embed of an object: its type's embedded property, if a non-blank
        string (None for a type the worker does not embed)."""
        name = self._embedded_text.get(head.type)
        text = None if name is None else head.properties.get(name)
        return text if isinstance(text, str) and text.strip() else None

    def _nothing_to_do(self, head: GraphObject | None, model: str) -> str | None:
        """Why a head needs no vector, or None when it does (or cannot be read)."""
        if head is None:
            return None
        if head.deleted:
            return "nothing to embed: the object was deleted"
        if self._text_of(head) is None:
            return "nothing to embed: the object has no content"
        if head.embedding_model == model:  # a vector and its model are always set together
            return "already embedded"
        return None

    def _act_for(self, conn: Connection[Any], job: EmbeddingJob) -> None:
        """Row-level security: act for the object's owner (global objects need the admin
        right). A job without an owner is left to a role that bypasses the policies."""
        if job.actor_id is not None:
            act_as(conn, job.actor_id, job.project_id, admin=job.scope == "global")

    def _delay(self, attempts: int) -> float:
        return rounds.with_jitter(self._config.backoff(attempts))


_URL_CREDENTIALS = re.compile(r"(://)[^/@\s]*@")


def _provider_failure(error: Exception) -> str:
    if not isinstance(error, EmbeddingUnavailable):  # a provider's bug: keep the traceback
        logger.error("the embedding provider raised an unexpected error", exc_info=error)
    return _describe(error, "the embedding provider")


def _describe(error: Exception, what: str) -> str:
    """A short error for last_error: provider messages (which never include the API key)
    without URL credentials; for anything else only its type, since its message might quote
    the content (the queue is readable by every application role)."""
    if isinstance(error, EmbeddingUnavailable):
        message = _URL_CREDENTIALS.sub(r"\1***@", str(error))
    else:
        message = f"{what} raised {type(error).__name__} (see the worker's log)"
    return rounds.short_reason(message)
