"""The capture worker: turns queued windows of conversation into memories, with the embedding
worker's retries, backoff, dead letter and SKIP LOCKED, alone (`emergent-memory worker`) or in
a thread of the server.

A round (`run_once`) cuts the rest of sessions quiet for `idle_seconds` into windows, deletes
the turns of windows dead for longer than `dead_retention` (at most once a minute), and claims
up to `batch_size` due windows, round-robin across actors (SECURITY DEFINER functions of
migrations 0011 and 0018; a window held longer than `lock_timeout` is due again). Per
window, acting as its owner: read its turns and the `window_overlap` before it (context); if
its Episode exists (same session, turns and text digest), it is done without a model; if the
owner spent the daily token budget, it waits for the next UTC day (the attempt not counted);
else ask the gate, and if the gate says yes the extractor (with the owner's closest memories
labelled 1..10), apply the rule of memory/extraction.py, keep the window as an Episode, and
save what the rule keeps through `MemoryService.save` with `derived_from` the Episode
(memory/capture_apply.py).

Every LLM call, answered or not, is recorded in kb.llm_calls (never text). An unavailable
model (rate limit, overload, 5xx, timeout) makes the window wait `min(backoff_max,
backoff_base * 2 ** (attempts - 1))` seconds plus up to 10% jitter, never less than the API's
retry-after; after `max_attempts` it is dead with the reason. A retry-after longer than
`retry_after_cap` parks the window until then instead, the attempt given back. A rate limit
(429) also makes the actor's other pending windows wait as long, and the actor's windows
claimed in the same round are put back without a call: one actor's rate limit costs the
worker one call, never a wait, and never holds another actor's windows. A refused request or
an answer that is not a valid tool call dead-letters the window at once, and nothing of that
answer is saved.

What is stored or logged of a failure is the LLM client's reason (status, error type, request
id: llm/client.py) or an exception's class, never its message: an exception raised while
working on a window may quote the conversation.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from pgvector import Vector
from psycopg import Connection

from emergent_memory import telemetry
from emergent_memory.auth.principal import READ, WRITE, Principal
from emergent_memory.db import rounds
from emergent_memory.db.pool import transaction
from emergent_memory.errors import EmbeddingUnavailable
from emergent_memory.graph import Embedding
from emergent_memory.llm import LLMError, LLMUnavailable, Usage
from emergent_memory.memory import capture_store, store
from emergent_memory.memory.capture import CaptureService
from emergent_memory.memory.capture_apply import episode_summary, keep_episode, save_decisions
from emergent_memory.memory.capture_store import ClaimedWindow
from emergent_memory.memory.capture_text import digest, episode_text
from emergent_memory.memory.extraction import review
from emergent_memory.memory.service import acting_for

logger = logging.getLogger(__name__)

T = TypeVar("T")

EXPIRE_INTERVAL = 60.0  # seconds between two deletions of expired dead windows' turns


@dataclass(slots=True)
class CaptureCounts(rounds.Counts):
    """What rounds of the worker did: windows cut from idle sessions, claimed, captured (an
    Episode kept by this attempt), found already captured (not counted as captured), put back
    to wait (retried; parked until a long retry-after; postponed by the budget or because
    their actor's calls are rate limited), dead-lettered, dead windows whose turns were
    deleted after the retention period; memories saved or reinforced."""

    cut: int = 0
    claimed: int = 0
    captured: int = 0
    already_captured: int = 0
    retried: int = 0
    parked: int = 0
    postponed: int = 0
    dead: int = 0
    expired: int = 0
    memories_saved: int = 0


class _Stop(Exception):
    """The window was put back or dead-lettered: stop working on it."""


class CaptureWorker:
    """Works the capture queue of every actor; safe to run as many as you like."""

    def __init__(self, capture: CaptureService) -> None:
        if not capture.enabled:
            raise ValueError("the capture worker needs capture on (an Anthropic API key)")
        self._capture = capture
        self._memory = capture.memory
        self._pool = capture.memory.pool
        self._config = capture.config
        self._extractor = capture.extractor
        self.worker_id = rounds.default_worker_id()  # names its thread
        self._next_expiry = 0.0  # time.monotonic() of the next deletion of expired turns
        self._limited: dict[uuid.UUID, datetime] = {}  # actor -> due again, in this round

    # -- rounds ---------------------------------------------------------------------------

    def run_once(self) -> CaptureCounts:
        """Cut idle sessions, claim due windows and work them. Database errors propagate (the
        windows in hand are due again once their lock times out)."""
        counts = CaptureCounts()
        config = self._config
        with transaction(self._pool) as conn:
            counts.cut = capture_store.cut_idle(conn, config.idle_seconds)
            if time.monotonic() >= self._next_expiry:
                counts.expired = capture_store.expire_dead(
                    conn, config.dead_retention, config.window_overlap
                )
                self._next_expiry = time.monotonic() + EXPIRE_INTERVAL
            claimed = capture_store.claim(conn, config.batch_size, config.lock_timeout)
        counts.claimed = len(claimed)
        self._limited = {}
        for window in claimed:
            until = self._limited.get(window.actor_id)
            if until is not None:  # its actor was rate limited in this round: no call
                self._postpone(window, until, counts)
                continue
            with telemetry.operation("capture", "window") as measured:
                self._work_measured(window, counts, measured)
        return counts

    def _work_measured(
        self, window: ClaimedWindow, counts: CaptureCounts, measured: telemetry.Operation
    ) -> None:
        """One window; its outcome: ok (captured, nothing worth keeping, or waiting for the
        budget), unavailable (put back to retry), error (dead-lettered, or the worker
        raised)."""
        dead, waiting = counts.dead, counts.retried + counts.parked
        try:
            self._work(window, counts)
        except _Stop:
            pass
        except Exception as error:
            if rounds.database_trouble(error):
                raise
            # the class and where, not the message: it may quote the conversation
            logger.error(
                "capture window %s failed: the worker raised %s\n%s",
                window.id,
                type(error).__name__,
                "".join(traceback.format_tb(error.__traceback__)).rstrip(),
            )
            self._retry(window, f"the worker raised {type(error).__name__}", None, counts)
            measured.outcome = "error"
            return
        if counts.dead > dead:
            measured.outcome = "error"
        elif counts.retried + counts.parked > waiting:
            measured.outcome = "unavailable"

    def drain(self) -> CaptureCounts:
        """Rounds until no window is due (windows waiting for a retry stay waiting)."""
        total = CaptureCounts()
        while True:
            counts = self.run_once()
            total.add(counts)
            if counts.claimed == 0:
                return total

    def run_forever(self, stop: threading.Event, poll_interval: float = 2.0) -> None:
        """Rounds until `stop` is set; a database error is logged and retried later."""

        def report(counts: CaptureCounts) -> None:
            if counts.claimed or counts.cut or counts.expired:
                logger.info("capture windows: %s", counts.as_dict())

        rounds.run_rounds(
            self.run_once,
            stop,
            poll_interval,
            rest=lambda c: c.claimed < self._config.batch_size,
            report=report,
            what="capture worker",
            logger=logger,
        )

    def running_in_thread(self, poll_interval: float = 2.0) -> AbstractContextManager[Any]:
        """Run the worker in a background thread until the block ends, then stop it, waiting
        for the round in progress (abandoned after rounds.STOP_TIMEOUT seconds: its windows
        are due again once their lock times out)."""
        return rounds.running_in_thread(
            self.run_forever,
            poll_interval,
            name=f"capture-worker {self.worker_id}",
            what="capture worker",
            logger=logger,
        )

    # -- one window -----------------------------------------------------------------------

    def _work(self, window: ClaimedWindow, counts: CaptureCounts) -> None:
        config = self._config
        if window.attempts > config.max_attempts:  # its last worker stopped while holding it
            self._dead(window, "out of attempts (a worker stopped while holding it)", counts)
        owner = Principal(window.actor_id, window.project_id, frozenset({READ, WRITE}))
        first = window.first_turn
        with self._acting_as(owner) as conn:
            turns = capture_store.read_turns(
                conn,
                window.actor_id,
                window.session_id,
                max(0, first - config.window_overlap),
                window.end_turn,
            )
            spent = capture_store.spent_today(conn, window.actor_id)
            own = [turn for turn in turns if turn.index >= first]
            text = episode_text(own)
            key = {
                "session_id": window.session_id,
                "first_turn": first,
                "last_turn": own[-1].index if own else first,
                "digest": digest(text),
            }
            existing = capture_store.find_episode(conn, window.actor_id, key) if text else None
            if existing is not None and existing == capture_store.unfinished_episode(conn, window):
                # this window's own earlier attempt kept it and stopped before finishing:
                # ask again and save what it proposes (a repeat is recognised by save)
                existing = None
        if not text:
            self._finish(window, None, {"result": "nothing to read"})
            return
        if existing is not None:
            counts.already_captured += 1
            self._finish(window, existing, {"result": "already captured"})
            return

        self._within_budget(window, spent, counts)
        verdict, usage = self._ask(
            window, "gate", lambda: self._extractor.gate(turns, first), counts
        )
        if not verdict.worth_remembering:
            episode = self._episode(owner, window, key, text, None)
            outcome = {"result": "nothing worth remembering"}
            if self._finish(window, episode, outcome):
                counts.captured += 1
            return
        self._within_budget(window, spent + usage.input_tokens + usage.output_tokens, counts)
        close = self._capture.close_memories(owner, turns)
        extraction, _ = self._ask(
            window, "extractor", lambda: self._extractor.extract(turns, first, close), counts
        )
        decisions = review(
            extraction, turns, window_start=first, window_end=window.end_turn, close=close
        )
        episode = self._episode(owner, window, key, text, extraction.summary)
        outcome = save_decisions(self._memory, owner, decisions, episode)
        with self._acting_as_owner(window) as conn:
            capture_store.note_saved(conn, window, outcome)
        counts.memories_saved += len(outcome["saved"])
        if self._finish(window, episode, outcome):
            counts.captured += 1

    def _ask(
        self,
        window: ClaimedWindow,
        purpose: str,
        call: Callable[[], tuple[T, Usage]],
        counts: CaptureCounts,
    ) -> tuple[T, Usage]:
        """One model call, recorded; a failure puts the window back or dead-letters it."""
        model = self._extractor.gate_model if purpose == "gate" else self._extractor.extractor_model
        try:
            with capture_store.measured_call(purpose):
                answer, usage = call()
        except LLMError as error:
            self._record(window, purpose, model, error.usage, error.reason)
            reason = f"{purpose}: {error.reason}"
            if isinstance(error, LLMUnavailable):
                self._retry(window, reason, error.retry_after, counts, error.rate_limited)
                raise _Stop from None
            # refused, or an answer that is not a valid call of the tool
            self._dead(window, reason, counts)
        self._record(window, purpose, model, usage, None)
        return answer, usage

    # -- helpers --------------------------------------------------------------------------

    def _within_budget(self, window: ClaimedWindow, spent: int, counts: CaptureCounts) -> None:
        budget = self._config.daily_token_budget
        if spent < budget:
            return
        note = f"waiting for the next UTC day: the daily token budget ({budget}) is spent"
        with self._acting_as_owner(window) as conn:
            until = capture_store.postpone_to_next_day(conn, window, note)
        counts.postponed += 1
        logger.info("capture window %s waits until %s: budget spent", window.id, until)
        raise _Stop

    def _episode(
        self,
        owner: Principal,
        window: ClaimedWindow,
        key: dict[str, Any],
        text: str,
        summary: str | None,
    ) -> uuid.UUID:
        """Keep the window as an Episode, its summary embedded here if the embedder answers
        (else by the embedding worker), outside any transaction."""
        summary = episode_summary(summary)
        embedding = None
        if summary is not None and store.EPISODE in store.EMBEDDED_TEXT:
            embedder = self._memory.embedder
            try:
                vector = embedder.embed_documents([summary])[0]
                embedding = Embedding(Vector(vector), embedder.model_name)
            except EmbeddingUnavailable as error:
                logger.warning("keeping an Episode without its vector (a job is queued): %s", error)
        with self._acting_as(owner) as conn:
            episode = keep_episode(
                conn,
                self._memory,
                owner,
                client=window.client,
                key=key,
                text=text,
                summary=summary,
                embedding=embedding,
            )
            capture_store.note_episode(conn, window, episode)
            return episode

    def _record(
        self,
        window: ClaimedWindow,
        purpose: str,
        model: str,
        usage: Usage | None,
        error: str | None,
    ) -> None:
        with self._acting_as_owner(window) as conn:
            capture_store.record_call(
                conn,
                actor_id=window.actor_id,
                window_id=window.id,
                purpose=purpose,
                model=model if usage is None else usage.model,
                input_tokens=0 if usage is None else usage.input_tokens,
                output_tokens=0 if usage is None else usage.output_tokens,
                error=None if error is None else rounds.short_reason(error),
            )

    def _finish(
        self,
        window: ClaimedWindow,
        episode: uuid.UUID | None,
        outcome: dict[str, Any],
    ) -> bool:
        """Mark the window done (with its Episode); False when the claim was no longer this
        one."""
        with self._acting_as_owner(window) as conn:
            return capture_store.finish(
                conn,
                window,
                episode_id=episode,
                outcome=outcome,
                overlap=self._config.window_overlap,
            )

    def _retry(
        self,
        window: ClaimedWindow,
        reason: str,
        retry_after: float | None,
        counts: CaptureCounts,
        rate_limited: bool = False,
    ) -> None:
        """Put the window back after its backoff (never before `retry_after`), or park it
        until a `retry_after` beyond the cap; a rate limit makes the actor's other windows
        wait as long."""
        reason = rounds.short_reason(reason)
        until: datetime | None = None
        with self._acting_as_owner(window) as conn:
            if retry_after is not None and retry_after > self._config.retry_after_cap:
                note = rounds.short_reason(f"{reason}; parked until the API's retry-after")
                until = capture_store.park(conn, window, retry_after, note)
                status = None if until is None else "parked"
            else:
                delay = rounds.with_jitter(self._config.backoff(window.attempts))
                if retry_after is not None:
                    delay = max(delay, retry_after)
                failed = capture_store.fail(
                    conn,
                    window,
                    error=reason,
                    delay=delay,
                    max_attempts=self._config.max_attempts,
                )
                status, until = (None, None) if failed is None else failed
            if rate_limited and until is not None and status != "dead":
                capture_store.defer_actor(conn, window.actor_id, until)
                self._limited[window.actor_id] = until
        if status == "dead":
            logger.warning(
                "capture window %s is dead after %d attempts: %s",
                window.id,
                window.attempts,
                reason,
            )
            counts.dead += 1
        elif status == "parked":
            logger.info("capture window %s parked until %s: %s", window.id, until, reason)
            counts.parked += 1
        elif status == "pending":
            counts.retried += 1

    def _postpone(self, window: ClaimedWindow, until: datetime, counts: CaptureCounts) -> None:
        """Put back, without a call or an attempt, a window whose actor was rate limited."""
        note = "waiting: this actor's model calls are rate limited"
        with self._acting_as_owner(window) as conn:
            capture_store.postpone(conn, window, until, note)
        counts.postponed += 1

    def _dead(self, window: ClaimedWindow, reason: str, counts: CaptureCounts) -> NoReturn:
        with self._acting_as_owner(window) as conn:
            capture_store.fail(
                conn, window, error=rounds.short_reason(reason), delay=0, max_attempts=0
            )
        logger.warning("capture window %s is dead: %s", window.id, reason)
        counts.dead += 1
        raise _Stop

    @contextmanager
    def _acting_as(self, principal: Principal) -> Iterator[Connection[Any]]:
        with acting_for(self._pool, principal) as conn:
            yield conn

    def _acting_as_owner(self, window: ClaimedWindow) -> AbstractContextManager[Connection[Any]]:
        return self._acting_as(Principal(window.actor_id, window.project_id))
