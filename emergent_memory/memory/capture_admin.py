"""The capture queue of every actor, for an operator: `emergent-memory capture status` and
`emergent-memory capture retry`.

It runs on a pool of a role that sees every row (the database's owner, or a member of
emergent_memory_admin) and refuses a role under row-level security, which would see nothing.
A dead window's reason names the failure (status, error type, request id), never text of the
conversation; a dead window whose turns the retention period deleted cannot be retried.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict

from emergent_memory import graph
from emergent_memory.db.pool import transaction
from emergent_memory.errors import PermissionDenied

DEAD_SHOWN = 50  # dead letters listed by status, newest first
STATUSES = ("pending", "running", "done", "dead")


@dataclass(frozen=True, slots=True)
class DeadWindow:
    id: UUID
    actor_id: UUID
    session_id: str
    first_turn: int
    end_turn: int
    attempts: int
    last_error: str | None
    updated_at: datetime
    turns_deleted_at: datetime | None


@dataclass(frozen=True, slots=True)
class ModelTokens:
    model: str
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int


COUNTS = "SELECT status, count(*) FROM kb.capture_windows GROUP BY status"

DEAD_WINDOWS = """
SELECT id, actor_id, session_id, first_turn, end_turn, attempts, last_error, updated_at,
       turns_deleted_at
FROM kb.capture_windows WHERE status = 'dead'
ORDER BY updated_at DESC
LIMIT %(limit)s
"""

TOKENS_TODAY = """
SELECT model, count(*) AS calls, count(*) FILTER (WHERE outcome = 'error') AS errors,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens
FROM kb.llm_calls
WHERE created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
GROUP BY model
ORDER BY model
"""

RETRY_DEAD = """
UPDATE kb.capture_windows
SET status = 'pending', attempts = 0, run_after = now(), last_error = NULL, locked_at = NULL,
    updated_at = now()
WHERE status = 'dead' AND turns_deleted_at IS NULL
"""


class CaptureStatus(TypedDict):
    windows: dict[str, int]
    dead: list[dict[str, Any]]
    tokens_today: list[dict[str, Any]]


class CaptureAdmin:
    """The capture queue of every actor, for an operator: on a pool of a role that sees every
    row (the database's owner, or a member of emergent_memory_admin)."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]]) -> None:
        self._pool = pool

    def status(self) -> CaptureStatus:
        """Windows per status, the latest dead letters with their reasons, and today's (UTC)
        calls and tokens per model."""
        with transaction(self._pool) as conn:
            _require_every_row(conn)
            counts = _counts(conn)
            dead = _dead(conn, DEAD_SHOWN)
            tokens = _tokens_today(conn)
        return {
            "windows": counts,
            "dead": [
                {
                    "id": str(w.id),
                    "actor_id": str(w.actor_id),
                    "session_id": w.session_id,
                    "first_turn": w.first_turn,
                    "end_turn": w.end_turn,
                    "attempts": w.attempts,
                    "last_error": w.last_error,
                    "updated_at": w.updated_at.isoformat(),
                    "turns_deleted_at": (
                        None if w.turns_deleted_at is None else w.turns_deleted_at.isoformat()
                    ),
                }
                for w in dead
            ],
            "tokens_today": [
                {
                    "model": t.model,
                    "calls": t.calls,
                    "errors": t.errors,
                    "input_tokens": t.input_tokens,
                    "output_tokens": t.output_tokens,
                }
                for t in tokens
            ],
        }

    def retry_dead(self) -> int:
        """Move dead windows back to pending with fresh attempts (not those whose turns were
        deleted after the retention period); returns how many."""
        with transaction(self._pool) as conn:
            _require_every_row(conn)
            return _retry_dead(conn)


def _require_every_row(conn: psycopg.Connection[Any]) -> None:
    if not graph.bypasses_row_security(conn):
        raise PermissionDenied(
            "the capture queue of every actor needs a database role that sees all rows (a "
            "superuser, BYPASSRLS, or a member of emergent_memory_admin); this one is subject "
            "to row-level security: see docs/security.md"
        )


def _counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Windows per status (every status present, zero when none)."""
    found = {str(status): int(count) for status, count in conn.execute(COUNTS).fetchall()}
    return {status: found.get(status, 0) for status in STATUSES}


def _dead(conn: psycopg.Connection[Any], limit: int) -> list[DeadWindow]:
    with conn.cursor(row_factory=class_row(DeadWindow)) as cur:
        cur.execute(DEAD_WINDOWS, {"limit": limit})
        return cur.fetchall()


def _tokens_today(conn: psycopg.Connection[Any]) -> list[ModelTokens]:
    with conn.cursor(row_factory=class_row(ModelTokens)) as cur:
        cur.execute(TOKENS_TODAY)
        return cur.fetchall()


def _retry_dead(conn: psycopg.Connection[Any]) -> int:
    return conn.execute(RETRY_DEAD).rowcount
