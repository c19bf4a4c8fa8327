"""The memory lifecycle's archive job: memories of low importance and low (decayed) confidence
that nobody used for long are archived, for every actor, by the worker or by an operator.

A candidate (ARCHIVE_CANDIDATES) is an active Memory head of a user or project scope (global
memories are curated by administrators and never archived automatically), of importance at most
`max_importance` (high and core never), unused for `after_days` days (no recall, no evidence,
no new version: the idle time of kb.memory_effective_confidence), whose effective confidence is
below `below_confidence`. Archiving writes a new version with `archived_at` and
`archive_reason` through graph.update_object (content, embedding and history kept; restore
brings it back); nothing is ever deleted.

The job runs as a role that sees every actor's memories (the owner, or a member of
emergent_memory_admin) and writes each archive acting for the memory's owner. It works in
batches, one short transaction each, along canonical ids (a keyset). Each candidate is taken
with the graph's version lock without waiting (graph.try_lock_object: SKIP LOCKED for that
advisory lock), so the job never waits for a writer (the memory is `busy`, left for the next
run) and a writer waits at most for one batch; under the lock the head is read again and
archived only if it is still the version found, so two runs at once archive a memory once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, TypedDict
from uuid import UUID

from psycopg import Connection
from psycopg.rows import class_row
from psycopg_pool import ConnectionPool

from emergent_memory import graph, telemetry
from emergent_memory.db import rounds
from emergent_memory.db.pool import transaction
from emergent_memory.errors import InvalidInput, PermissionDenied
from emergent_memory.memory import store, validation

logger = logging.getLogger(__name__)

ArchivableImportance = Literal["low", "normal"]
# The importances archived at each setting of max_importance (absent importance is normal).
ARCHIVABLE: dict[str, tuple[str, ...]] = {"low": ("low",), "normal": ("low", "normal")}

BATCH_SIZE = 100  # memories looked at (and locked) per transaction
FIRST_RUN_DELAY = 60.0  # seconds after the worker starts before the job's first run
NIL = UUID(int=0)  # the keyset's start: below every canonical id

NEEDS_ADMIN = (
    "the archive job needs a database role that sees every actor's memories (the database's "
    "owner, or a member of emergent_memory_admin; docs/security.md): run it with "
    "EMERGENT_MEMORY_DATABASE_URL naming such a role"
)

# Active memories of users and projects (never global ones), by canonical id after `after`,
# that are idle and unsure enough: the decay's idle time (greatest of the last use, the last
# evidence and the head version's time) and its effective confidence, at `now`.
ARCHIVE_CANDIDATES = """
SELECT c.canonical_id, c.version, c.actor_id, c.project_id, c.scope, c.category,
       c.importance, c.confidence, c.effective_confidence, c.last_active,
       extract(epoch FROM %(now)s - c.last_active)::float8 / 86400 AS idle_days
FROM (
    SELECT o.canonical_id, o.version, o.actor_id, o.project_id, o.scope,
           o.properties ->> 'category' AS category,
           coalesce(o.properties ->> 'importance', 'normal') AS importance,
           coalesce((o.properties ->> 'confidence')::float8, 0.7) AS confidence,
           idle.last_active,
           kb.memory_effective_confidence(
               coalesce((o.properties ->> 'confidence')::float8, 0.7),
               coalesce(o.properties ->> 'importance', 'normal'), idle.last_active, %(now)s,
               %(floor)s, %(grace_days)s, %(half_life_days)s) AS effective_confidence
    FROM kb.graph_objects o
    CROSS JOIN LATERAL (
        SELECT greatest(
            o.updated_at,
            (SELECT max(r.recalled_at) FROM kb.memory_recalls r
             WHERE r.canonical_id = o.canonical_id),
            (SELECT max(e.created_at) FROM kb.memory_evidence e
             WHERE e.canonical_id = o.canonical_id)
        ) AS last_active
    ) idle
    WHERE kb.is_active_memory(o)
      AND o.scope IN ('user', 'project')
      AND o.actor_id IS NOT NULL
      AND o.canonical_id > %(after)s
      AND coalesce(o.properties ->> 'importance', 'normal') = ANY(%(importances)s)
      AND idle.last_active <= %(now)s - make_interval(secs => %(after_days)s * 86400)
) c
WHERE c.effective_confidence < %(below)s
ORDER BY c.canonical_id
LIMIT %(limit)s
"""

# Whether the memory was used or given evidence after `last_active` (the candidate query's
# view of it): a use or a reinforcement committed between that query and the job's lock.
ACTIVE_SINCE = """
SELECT EXISTS (
    SELECT 1 FROM kb.memory_recalls
    WHERE canonical_id = %(id)s AND recalled_at > %(last_active)s
) OR EXISTS (
    SELECT 1 FROM kb.memory_evidence
    WHERE canonical_id = %(id)s AND created_at > %(last_active)s
)
"""


@dataclass(frozen=True, slots=True)
class ArchiveConfig:
    """The archive job's criteria (from Settings, which checks them, in app.py)."""

    after_days: float = 180.0
    below_confidence: float = 0.5
    max_importance: ArchivableImportance = "normal"
    # the decay of confidence, as recall reads it (kb.memory_effective_confidence)
    decay_floor: float = 0.3
    decay_grace_days: float = 30.0
    decay_half_life_days: float = 180.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory the job archives (or would): ids, owner and what made it a candidate."""

    canonical_id: UUID
    version: int
    actor_id: UUID
    project_id: UUID
    scope: str
    category: str
    importance: str
    confidence: float
    effective_confidence: float
    last_active: datetime
    idle_days: float


class ArchivedMemory(TypedDict):
    """One memory of a report: never its content."""

    id: str
    actor_id: str
    project_id: str
    scope: str
    category: str
    importance: str
    confidence: float
    effective_confidence: float
    idle_days: int
    reason: str


class ArchiveCriteria(TypedDict):
    after_days: float
    below_confidence: float
    max_importance: str


class ArchiveReport(TypedDict):
    """What a run archived (or, with dry_run, would archive): how many, per actor, and each
    memory. Candidates skipped: `busy` (a writer or another run held it), `changed` (changed
    since it was found: used, updated, or archived by another run), `failed` (its new version
    was refused, e.g. by the pack's schema; logged with its id)."""

    dry_run: bool
    at: str
    criteria: ArchiveCriteria
    archived: int
    busy: int
    changed: int
    failed: int
    by_actor: dict[str, int]
    memories: list[ArchivedMemory]
    seconds: float


def archive_reason(candidate: Candidate, config: ArchiveConfig) -> str:
    """Why a memory was archived, as kept in its archive_reason."""
    return (
        f"unused for {int(candidate.idle_days)} days; confidence "
        f"{candidate.effective_confidence:.2f} below {config.below_confidence:.2f}"
    )


class LifecycleService:
    """The archive job on a pool of a role that sees every actor's memories."""

    def __init__(self, pool: ConnectionPool[Any], config: ArchiveConfig | None = None) -> None:
        self._pool = pool
        self.config = config or ArchiveConfig()

    def sees_every_actor(self) -> bool:
        """Whether the pool's role sees every actor's memories (the job needs it)."""
        with transaction(self._pool) as conn:
            return graph.bypasses_row_security(conn)

    def archive(
        self,
        *,
        dry_run: bool = False,
        now: datetime | None = None,
        after_days: float | None = None,
        limit: int | None = None,
        stop: threading.Event | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> ArchiveReport:
        """Archive every candidate (at most `limit`), or with `dry_run` list them and write
        nothing. `now` (default: the database's clock) is when idleness and decay are measured;
        `after_days` replaces the configured idle time for this run; `stop` ends the run
        between two batches."""
        config = self.config
        if after_days is not None:
            if after_days <= 0:
                raise InvalidInput("after_days must be positive")
            config = replace(config, after_days=after_days)
        if limit is not None and limit < 1:
            raise InvalidInput("limit must be at least 1")
        if batch_size < 1:
            raise InvalidInput("batch_size must be at least 1")
        with telemetry.operation("lifecycle", "archive_dry_run" if dry_run else "archive"):
            started = time.monotonic()
            with transaction(self._pool) as conn:
                if not graph.bypasses_row_security(conn):
                    raise PermissionDenied(NEEDS_ADMIN)
                if now is None:
                    now = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
            memories: list[ArchivedMemory] = []
            skipped: Counter[str] = Counter()
            after = NIL
            while stop is None or not stop.is_set():
                room = batch_size if limit is None else min(batch_size, limit - len(memories))
                if room <= 0:
                    break
                with transaction(self._pool) as conn:
                    # the scan goes on until `room` candidates are found: fewer means it is done
                    candidates = _candidates(conn, config, now, after, room)
                    for candidate in candidates:
                        outcome = (
                            "archived" if dry_run else _archive_one(conn, candidate, config, now)
                        )
                        if outcome == "archived":
                            memories.append(_reported(candidate, config))
                        else:
                            skipped[outcome] += 1
                if len(candidates) < room:
                    break
                after = candidates[-1].canonical_id
            by_actor = Counter(memory["actor_id"] for memory in memories)
            return {
                "dry_run": dry_run,
                "at": validation.iso_utc(now),
                "criteria": {
                    "after_days": config.after_days,
                    "below_confidence": config.below_confidence,
                    "max_importance": config.max_importance,
                },
                "archived": len(memories),
                "busy": skipped["busy"],
                "changed": skipped["changed"],
                "failed": skipped["failed"],
                "by_actor": dict(sorted(by_actor.items())),
                "memories": memories,
                "seconds": round(time.monotonic() - started, 3),
            }


Outcome = Literal["archived", "busy", "changed", "failed"]


def _archive_one(
    conn: Connection[Any], candidate: Candidate, config: ArchiveConfig, now: datetime
) -> Outcome:
    """Archive one candidate acting for its owner, if nobody holds it and it is still the
    version found."""
    id_ = candidate.canonical_id
    if not graph.try_lock_object(conn, id_):
        return "busy"
    # used or reinforced since the candidates were read (the version alone does not say:
    # a use writes no version); read before act_as, while the role sees every actor's rows
    row = conn.execute(ACTIVE_SINCE, {"id": id_, "last_active": candidate.last_active}).fetchone()
    if row is None or row[0]:
        return "changed"
    graph.act_as(conn, candidate.actor_id, candidate.project_id)
    head = graph.get_head(conn, id_)
    if (
        head is None
        or head.version != candidate.version
        or not store.is_active(head)
        or "archived_at" in head.properties
    ):
        return "changed"
    try:
        graph.update_object(
            conn,
            id_,
            properties={
                "archived_at": validation.iso_utc(now),
                "archive_reason": archive_reason(candidate, config),
            },
        )
    except InvalidInput as error:  # the write's savepoint left the head as it was
        logger.warning("archive job: memory %s was not archived: %s", id_, type(error).__name__)
        return "failed"
    return "archived"


def _candidates(
    conn: Connection[Any], config: ArchiveConfig, now: datetime, after: UUID, limit: int
) -> list[Candidate]:
    with conn.cursor(row_factory=class_row(Candidate)) as cur:
        cur.execute(
            ARCHIVE_CANDIDATES,
            {
                "now": now,
                "after": after,
                "importances": list(ARCHIVABLE[config.max_importance]),
                "after_days": config.after_days,
                "below": config.below_confidence,
                "floor": config.decay_floor,
                "grace_days": config.decay_grace_days,
                "half_life_days": config.decay_half_life_days,
                "limit": limit,
            },
        )
        return cur.fetchall()


def _reported(candidate: Candidate, config: ArchiveConfig) -> ArchivedMemory:
    return {
        "id": str(candidate.canonical_id),
        "actor_id": str(candidate.actor_id),
        "project_id": str(candidate.project_id),
        "scope": candidate.scope,
        "category": candidate.category,
        "importance": candidate.importance,
        "confidence": round(candidate.confidence, 4),
        "effective_confidence": round(candidate.effective_confidence, 4),
        "idle_days": int(candidate.idle_days),
        "reason": archive_reason(candidate, config),
    }


def summary(report: ArchiveReport) -> str:
    """One line about a run: counts only, never an id or content."""
    verb = "would archive" if report["dry_run"] else "archived"
    criteria = report["criteria"]
    skipped = report["busy"] + report["changed"] + report["failed"]
    busy = f", {skipped} skipped (busy or changed)" if skipped else ""
    return (
        f"{verb} {report['archived']} memories of {len(report['by_actor'])} actors "
        f"(unused for {criteria['after_days']:g} days, effective confidence below "
        f"{criteria['below_confidence']:g}, importance at most {criteria['max_importance']})"
        f"{busy} in {report['seconds']:.1f} s"
    )


class ArchiveJob:
    """Runs the archive job in a thread of the worker: first FIRST_RUN_DELAY seconds after it
    starts (sooner if the interval is shorter), then every `interval` seconds. A failed run is
    logged and tried again at the next interval; it never stops the worker."""

    def __init__(
        self,
        lifecycle: LifecycleService,
        interval: float,
        *,
        first_delay: float = FIRST_RUN_DELAY,
    ) -> None:
        if interval <= 0:
            raise ValueError("the archive job's interval must be positive")
        self._lifecycle = lifecycle
        self.interval = interval
        self.first_delay = min(first_delay, interval)
        self.runs = 0  # runs finished, failed or not (tests and the log read it)

    def run_once(self, stop: threading.Event | None = None) -> ArchiveReport | None:
        """One run; None when it failed (logged: database trouble in one line, anything else
        with its traceback)."""
        try:
            report = self._lifecycle.archive(stop=stop)
        except Exception as error:
            if rounds.database_trouble(error) or isinstance(error, PermissionDenied):
                logger.warning("archive job failed (%s); next run in %.0f s", error, self.interval)
            else:
                logger.exception("archive job failed; next run in %.0f s", self.interval)
            return None
        finally:
            self.runs += 1
        logger.info("archive job: %s", summary(report))
        return report

    def run_forever(self, stop: threading.Event, poll_interval: float = 0.0) -> None:
        """Runs until `stop` is set (a run in progress stops after its batch);
        `poll_interval` is unused (the signature of the workers' loops)."""
        wait = self.first_delay
        while not stop.wait(wait):
            self.run_once(stop)
            wait = self.interval

    def running_in_thread(self) -> AbstractContextManager[threading.Thread]:
        """Run the job in a background thread until the block ends, then stop it after the
        batch in progress."""
        return rounds.running_in_thread(
            self.run_forever, 0.0, name="archive-job", what="archive job", logger=logger
        )
