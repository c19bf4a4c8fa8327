"""The embedding job queue (kb.graph_embedding_jobs): objects whose vector is still missing.

Connection first, never commits: the service queues a job in the transaction of its write,
and the worker (`emergent_memory.embeddings.worker`) claims, finishes and fails jobs in
transactions of its own. A job holds ids and the object's owner (whom the worker acts for
under row-level security), never the text: the worker reads that from the object, and
writes the vector through the graph (`emergent_memory.graph.set_embedding`).

States: `pending` (waiting for `run_after`), `running` (claimed by `locked_by` at
`locked_at`), `done`, `dead` (out of attempts; `emergent-memory worker --retry-dead` revives
it). At most one open (pending or running) job per object version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg import Connection
from psycopg.rows import class_row

from emergent_memory.graph.models import GraphObject

STATUSES = ("pending", "running", "done", "dead")

ENQUEUE = """
INSERT INTO kb.graph_embedding_jobs (object_id, canonical_id, project_id, actor_id, scope)
VALUES (%(object_id)s, %(canonical_id)s, %(project_id)s, %(actor_id)s, %(scope)s)
ON CONFLICT (object_id) WHERE status IN ('pending', 'running') DO NOTHING
"""


@dataclass(frozen=True, slots=True)
class EmbeddingJob:
    """A claimed job: which object to embed, for whom, and how many attempts it has had
    (this one included)."""

    id: UUID
    object_id: UUID
    canonical_id: UUID
    project_id: UUID
    actor_id: UUID | None
    scope: str
    attempts: int


def enqueue(conn: Connection[Any], obj: GraphObject) -> None:
    """Queue the object's embedding, in the caller's transaction (it commits with the write)."""
    conn.execute(
        ENQUEUE,
        {
            "object_id": obj.id,
            "canonical_id": obj.canonical_id,
            "project_id": obj.project_id,
            # whom a worker acts for when it reads and updates the object (row-level security)
            "actor_id": obj.actor_id,
            "scope": obj.scope,
        },
    )


# A worker that died (or hung) while holding jobs: after `lock_timeout` its running jobs are
# due again, or dead when that was their last attempt. The open-jobs partial index covers it.
RECLAIM_STALE = """
UPDATE kb.graph_embedding_jobs
SET status = CASE WHEN attempts >= %(max_attempts)s THEN 'dead' ELSE 'pending' END,
    run_after = now(),
    last_error = 'worker ' || coalesce(locked_by, '?') || ' held the job for more than '
                 || %(lock_timeout)s::text || ' s without finishing it',
    locked_at = NULL,
    locked_by = NULL,
    updated_at = now()
WHERE status = 'running'
  AND locked_at < now() - make_interval(secs => %(lock_timeout)s)
"""

# The due jobs, oldest due first; a job another worker is claiming right now is skipped,
# never waited for, so any number of workers share the queue without taking a job twice.
CLAIM = """
WITH due AS (
    SELECT id FROM kb.graph_embedding_jobs
    WHERE status = 'pending' AND run_after <= now()
    ORDER BY run_after
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE kb.graph_embedding_jobs j
SET status = 'running',
    attempts = j.attempts + 1,
    locked_at = now(),
    locked_by = %(worker_id)s,
    updated_at = now()
FROM due
WHERE j.id = due.id
RETURNING j.id, j.object_id, j.canonical_id, j.project_id, j.actor_id, j.scope, j.attempts
"""

# Every statement that ends a claim checks the claim is still this worker's: a job whose lock
# expired may have been reclaimed by another worker, which now owns it.
FINISH = """
UPDATE kb.graph_embedding_jobs
SET status = 'done', last_error = %(note)s, locked_at = NULL, locked_by = NULL,
    updated_at = now()
WHERE id = %(id)s AND status = 'running' AND locked_by = %(worker_id)s
"""

# The object now has a vector of the current model: its waiting jobs have nothing to do.
FINISH_PENDING = """
UPDATE kb.graph_embedding_jobs
SET status = 'done', last_error = NULL, updated_at = now()
WHERE canonical_id = %(canonical_id)s AND status = 'pending'
"""

FAIL = """
UPDATE kb.graph_embedding_jobs
SET status = CASE WHEN attempts >= %(max_attempts)s THEN 'dead' ELSE 'pending' END,
    run_after = now() + make_interval(secs => %(delay)s),
    last_error = %(error)s,
    locked_at = NULL,
    locked_by = NULL,
    updated_at = now()
WHERE id = %(id)s AND status = 'running' AND locked_by = %(worker_id)s
RETURNING status
"""

# Not a failure (the object changed while it was being embedded): due again at once, and the
# attempt is given back.
REQUEUE = """
UPDATE kb.graph_embedding_jobs
SET status = 'pending', attempts = greatest(attempts - 1, 0), run_after = now(),
    locked_at = NULL, locked_by = NULL, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND locked_by = %(worker_id)s
"""

# Dead jobs back to pending with their attempts reset; one per object version, and none for
# a version that already has an open job (the open-jobs unique index allows one).
RETRY_DEAD = """
UPDATE kb.graph_embedding_jobs
SET status = 'pending', attempts = 0, run_after = now(), locked_at = NULL, locked_by = NULL,
    updated_at = now()
WHERE id IN (
    SELECT DISTINCT ON (d.object_id) d.id
    FROM kb.graph_embedding_jobs d
    WHERE d.status = 'dead'
      AND NOT EXISTS (
          SELECT FROM kb.graph_embedding_jobs o
          WHERE o.object_id = d.object_id AND o.status IN ('pending', 'running')
      )
    ORDER BY d.object_id, d.updated_at DESC
)
"""

COUNTS = "SELECT status, count(*) FROM kb.graph_embedding_jobs GROUP BY status"
# The queue's depth (/metrics): the jobs not done, per status.
OPEN_COUNTS = """
SELECT status, count(*) FROM kb.graph_embedding_jobs
WHERE status IN ('pending', 'running', 'dead')
GROUP BY status
"""


def reclaim_stale(conn: Connection[Any], *, lock_timeout: float, max_attempts: int) -> int:
    """Free the jobs of workers that stopped responding; returns how many."""
    cursor = conn.execute(
        RECLAIM_STALE, {"lock_timeout": float(lock_timeout), "max_attempts": max_attempts}
    )
    return cursor.rowcount


def claim(conn: Connection[Any], worker_id: str, limit: int) -> list[EmbeddingJob]:
    """Mark up to `limit` due jobs running for this worker (one more attempt each)."""
    with conn.cursor(row_factory=class_row(EmbeddingJob)) as cur:
        cur.execute(CLAIM, {"worker_id": worker_id, "limit": limit})
        return cur.fetchall()


def finish(conn: Connection[Any], job: EmbeddingJob, worker_id: str, note: str | None) -> bool:
    """Mark a claimed job done (`note` says why when nothing was embedded)."""
    cursor = conn.execute(FINISH, {"id": job.id, "worker_id": worker_id, "note": note})
    return cursor.rowcount == 1


def finish_pending(conn: Connection[Any], canonical_id: UUID) -> None:
    """Close the object's pending jobs: its head has a vector of the current model (a claimed,
    running job is finished by its worker)."""
    conn.execute(FINISH_PENDING, {"canonical_id": canonical_id})


def fail(
    conn: Connection[Any],
    job: EmbeddingJob,
    worker_id: str,
    *,
    error: str,
    delay: float,
    max_attempts: int,
) -> str | None:
    """Put a claimed job back to wait `delay` seconds, or dead-letter it after its last
    attempt; returns the new status (None when the job is no longer this worker's)."""
    row = conn.execute(
        FAIL,
        {
            "id": job.id,
            "worker_id": worker_id,
            "error": error,
            "delay": float(delay),
            "max_attempts": max_attempts,
        },
    ).fetchone()
    return None if row is None else str(row[0])


def requeue(conn: Connection[Any], job: EmbeddingJob, worker_id: str) -> None:
    """Make a claimed job due again without counting the attempt."""
    conn.execute(REQUEUE, {"id": job.id, "worker_id": worker_id})


def retry_dead(conn: Connection[Any]) -> int:
    """Move dead jobs back to pending with fresh attempts; returns how many."""
    return conn.execute(RETRY_DEAD).rowcount


def counts(conn: Connection[Any]) -> dict[str, int]:
    """Jobs per status (every status present, zero when none)."""
    found = {str(status): int(count) for status, count in conn.execute(COUNTS).fetchall()}
    return {status: found.get(status, 0) for status in STATUSES}


def open_counts(conn: Connection[Any]) -> dict[str, int]:
    """Jobs not done per status (pending, running, dead; zero when none)."""
    found = {str(status): int(count) for status, count in conn.execute(OPEN_COUNTS).fetchall()}
    return {status: found.get(status, 0) for status in ("pending", "running", "dead")}
