"""Capture SQL: turns, the window queue, the LLM call log, and the reads capture needs from
the graph (close memories, an Episode already captured).

Connection first, never commits. Every function but `claim` and `cut_idle` (SECURITY DEFINER
functions of migration 0011, for workers serving every actor) runs in a transaction acting
for the rows' owner: row-level security keeps each actor to its own turns, windows and calls.
The operator's queries (every actor's rows) are memory/capture_admin.py's.

Window states: `pending` (due at `run_after`), `running` (claimed at `locked_at`; `attempts`
counts this claim), `done` (with its Episode and an outcome of counts and ids, never text),
`dead` (`last_error` says why; `emergent-memory capture retry` makes it pending again, until
the retention period deletes its turns: `turns_deleted_at`, kb.expire_dead_capture_windows of
migration 0018). `last_error` is never text of the conversation or of the model's answer.

`claim` takes due windows round-robin across actors (0018); a window whose actor is rate
limited is parked (`park`: due again when the API said, the attempt given back) and the
actor's other pending windows wait as long (`defer_actor`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pgvector import Vector
from psycopg import Connection, sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from emergent_memory import telemetry
from emergent_memory.auth.principal import Principal
from emergent_memory.llm import LLMUnavailable
from emergent_memory.memory import store
from emergent_memory.memory.capture_text import Turn


@dataclass(frozen=True, slots=True)
class ClaimedWindow:
    """A window a worker claimed: whose, which turns (`end_turn` exclusive), and how many
    attempts it has had, this one included."""

    id: UUID
    actor_id: UUID
    project_id: UUID
    session_id: str
    client: str
    first_turn: int
    end_turn: int
    attempts: int


@dataclass(frozen=True, slots=True)
class CloseMemory:
    """An active memory of the actor close to a conversation (offered to the extractor)."""

    id: UUID
    content: str
    category: str
    scope: str
    similarity: float


INSERT_TURNS = """
INSERT INTO kb.capture_turns (actor_id, session_id, turn_index, role, content)
VALUES (%(actor_id)s, %(session_id)s, %(turn_index)s, %(role)s, %(content)s)
ON CONFLICT (actor_id, session_id, turn_index) DO NOTHING
"""

ADVANCE_SESSION = """
UPDATE kb.agent_sessions SET turns_received = %(received)s, turns_windowed = %(windowed)s
WHERE actor_id = %(actor_id)s AND session_id = %(session_id)s
"""

INSERT_WINDOW = """
INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, first_turn, end_turn)
VALUES (%(actor_id)s, %(project_id)s, %(session_id)s, %(client)s, %(first_turn)s, %(end_turn)s)
ON CONFLICT (actor_id, session_id, first_turn, end_turn) DO NOTHING
RETURNING id
"""

READ_TURNS = """
SELECT turn_index AS index, role, content FROM kb.capture_turns
WHERE actor_id = %(actor_id)s AND session_id = %(session_id)s
  AND turn_index >= %(first)s AND turn_index < %(end)s
ORDER BY turn_index
"""

CLAIM = "SELECT * FROM kb.claim_capture_windows(%(limit)s, %(lock_timeout)s)"
CUT_IDLE = "SELECT kb.cut_idle_capture_windows(%(idle)s)"
# Dead windows older than the retention period lose their turns (SECURITY DEFINER, 0018)
EXPIRE_DEAD = "SELECT kb.expire_dead_capture_windows(%(age)s, %(overlap)s)"
# Windows not done of every actor, per status (/metrics; SECURITY DEFINER, migration 0013)
QUEUE_DEPTH = "SELECT status, windows FROM kb.capture_queue_depth()"

# Every statement that ends a claim checks that it is still this claim (WHERE id, running,
# attempts): a window whose lock expired may have been claimed again (its attempts moved on).
FINISH = """
UPDATE kb.capture_windows
SET status = 'done', episode_id = %(episode_id)s, outcome = %(outcome)s, last_error = NULL,
    locked_at = NULL, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
"""

# The Episode an attempt kept, noted on its window in the same transaction, then what it
# saved (NOTE_SAVED): a later attempt that finds its own Episode without what was saved knows
# the attempt stopped in between, and asks again rather than lose the proposals; an Episode
# with its saves, or of another window, means the turns were captured already.
NOTE_EPISODE = """
UPDATE kb.capture_windows SET episode_id = %(episode_id)s, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
"""

NOTE_SAVED = """
UPDATE kb.capture_windows SET outcome = %(outcome)s, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
"""

WINDOW_EPISODE = """
SELECT episode_id, coalesce(outcome ? 'saved', false) FROM kb.capture_windows
WHERE id = %(id)s
"""

FAIL = """
UPDATE kb.capture_windows
SET status = CASE WHEN attempts >= %(max_attempts)s THEN 'dead' ELSE 'pending' END,
    run_after = now() + make_interval(secs => %(delay)s), last_error = %(error)s,
    outcome = coalesce(%(outcome)s, outcome), locked_at = NULL, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
RETURNING status, run_after
"""

# Not a failure (the budget is spent, the actor is rate limited): due again at `until`, the
# attempt given back.
POSTPONE = """
UPDATE kb.capture_windows
SET status = 'pending', attempts = greatest(attempts - 1, 0), run_after = %(until)s,
    last_error = %(note)s, locked_at = NULL, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
"""

# The API asked for a wait longer than the worker retries after: due again then, the attempt
# given back (a window does not die of waiting for the API).
PARK = """
UPDATE kb.capture_windows
SET status = 'pending', attempts = greatest(attempts - 1, 0),
    run_after = now() + make_interval(secs => %(delay)s), last_error = %(note)s,
    locked_at = NULL, updated_at = now()
WHERE id = %(id)s AND status = 'running' AND attempts = %(attempts)s
RETURNING run_after
"""

# The actor's calls are rate limited: its other pending windows are not due before `until`.
DEFER_ACTOR = """
UPDATE kb.capture_windows SET run_after = %(until)s, updated_at = now()
WHERE actor_id = %(actor_id)s AND status = 'pending' AND run_after < %(until)s
"""

# Turns no window needs any more: before every window of the session that is not done, and
# before the turns not yet in a window, less the overlap the next window reads; every turn
# once all are in windows and every window is done. A window is queued only once a turn after
# it has arrived (CaptureService._cut), so a session with no turn waiting was flushed (final,
# or its idle cut): no later window reads its turns, unless it goes on after all (a compaction,
# a resumed session), and then its next window has no context before it.
PRUNE_TURNS = """
WITH bound AS (
    SELECT CASE WHEN s.turns_windowed = s.turns_received AND w.waiting IS NULL
                THEN s.turns_windowed
                ELSE least(s.turns_windowed, w.waiting) - %(overlap)s
           END AS below
    FROM kb.agent_sessions s
    CROSS JOIN LATERAL (
        SELECT min(first_turn) AS waiting FROM kb.capture_windows
        WHERE actor_id = s.actor_id AND session_id = s.session_id AND status <> 'done'
          AND turns_deleted_at IS NULL
    ) w
    WHERE s.actor_id = %(actor_id)s AND s.session_id = %(session_id)s
)
DELETE FROM kb.capture_turns t
USING bound
WHERE t.actor_id = %(actor_id)s AND t.session_id = %(session_id)s AND t.turn_index < bound.below
"""

# Today (UTC) starts at midnight UTC, whatever the session's time zone.
SPENT_TODAY = """
SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM kb.llm_calls
WHERE actor_id = %(actor_id)s
  AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
"""

NEXT_UTC_DAY = """
SELECT (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC'
"""

RECORD_CALL = """
INSERT INTO kb.llm_calls (actor_id, window_id, purpose, model, input_tokens, output_tokens,
                          outcome, error)
VALUES (%(actor_id)s, %(window_id)s, %(purpose)s, %(model)s, %(input_tokens)s,
        %(output_tokens)s, %(outcome)s, %(error)s)
"""

# An Episode of this actor for the same turns of the session with the same text, deleted or
# not (an Episode the user deleted is not captured again).
FIND_EPISODE = """
SELECT canonical_id FROM kb.graph_objects
WHERE type = 'Episode' AND actor_id = %(actor_id)s AND is_head AND properties @> %(key)s
ORDER BY created_at
LIMIT 1
"""

# The actor's own active memories (user ones, and project ones of this project) nearest a
# vector; never global ones, which capture can neither write nor reinforce.
NEAREST_OWN = """
SELECT o.canonical_id AS id, o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category, o.scope,
       kb.cosine_similarity(o.embedding, %(embedding)s) AS similarity
FROM kb.graph_objects o
WHERE {active} AND {own} AND o.embedding_model = %(model)s
ORDER BY o.embedding <=> %(embedding)s
LIMIT %(limit)s
"""

ACTIVE_OWN = """
SELECT true FROM kb.graph_objects o WHERE o.canonical_id = %(id)s AND {active} AND {own}
"""


# -- receiving turns --------------------------------------------------------------------------


def insert_turns(
    conn: Connection[Any], principal: Principal, session_id: str, turns: Sequence[Turn]
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            INSERT_TURNS,
            [
                {
                    "actor_id": principal.actor_id,
                    "session_id": session_id,
                    "turn_index": turn.index,
                    "role": turn.role,
                    "content": turn.content,
                }
                for turn in turns
            ],
        )


def advance_session(
    conn: Connection[Any], principal: Principal, session_id: str, *, received: int, windowed: int
) -> None:
    conn.execute(
        ADVANCE_SESSION,
        {
            "actor_id": principal.actor_id,
            "session_id": session_id,
            "received": received,
            "windowed": windowed,
        },
    )


def insert_window(
    conn: Connection[Any],
    principal: Principal,
    *,
    session_id: str,
    client: str,
    first_turn: int,
    end_turn: int,
) -> bool:
    """Queue a window of the principal's session; False when that window is already queued."""
    row = conn.execute(
        INSERT_WINDOW,
        {
            "actor_id": principal.actor_id,
            "project_id": principal.project_id,
            "session_id": session_id,
            "client": client,
            "first_turn": first_turn,
            "end_turn": end_turn,
        },
    ).fetchone()
    return row is not None


# -- working on windows -----------------------------------------------------------------------


def claim(conn: Connection[Any], limit: int, lock_timeout: float) -> list[ClaimedWindow]:
    """Up to `limit` due windows, claimed fairly across actors (migration 0018), in the order
    to run them: every actor's oldest first, then every actor's second, ..."""
    with conn.cursor(row_factory=class_row(ClaimedWindow)) as cur:
        cur.execute(CLAIM, {"limit": limit, "lock_timeout": float(lock_timeout)})
        return cur.fetchall()


def cut_idle(conn: Connection[Any], idle_seconds: float) -> int:
    row = conn.execute(CUT_IDLE, {"idle": float(idle_seconds)}).fetchone()
    return 0 if row is None else int(row[0])


def expire_dead(conn: Connection[Any], age: float, overlap: int) -> int:
    """Delete the turns of windows dead for more than `age` seconds (and those their sessions
    kept only for them); how many windows lost their turns."""
    row = conn.execute(EXPIRE_DEAD, {"age": float(age), "overlap": overlap}).fetchone()
    return 0 if row is None else int(row[0])


def read_turns(
    conn: Connection[Any], actor_id: UUID, session_id: str, first: int, end: int
) -> list[Turn]:
    with conn.cursor(row_factory=class_row(Turn)) as cur:
        cur.execute(
            READ_TURNS,
            {"actor_id": actor_id, "session_id": session_id, "first": first, "end": end},
        )
        return cur.fetchall()


def finish(
    conn: Connection[Any],
    window: ClaimedWindow,
    *,
    episode_id: UUID | None,
    outcome: dict[str, Any],
    overlap: int,
) -> bool:
    """Mark the window done and delete the session's turns no window needs any more."""
    done = conn.execute(
        FINISH,
        {
            "id": window.id,
            "attempts": window.attempts,
            "episode_id": episode_id,
            "outcome": Jsonb(outcome),
        },
    ).rowcount
    conn.execute(
        PRUNE_TURNS,
        {"actor_id": window.actor_id, "session_id": window.session_id, "overlap": overlap},
    )
    return done == 1


def note_episode(conn: Connection[Any], window: ClaimedWindow, episode_id: UUID) -> None:
    """Note on the window (still this claim) the Episode its attempt kept (NOTE_EPISODE)."""
    conn.execute(
        NOTE_EPISODE, {"id": window.id, "attempts": window.attempts, "episode_id": episode_id}
    )


def note_saved(conn: Connection[Any], window: ClaimedWindow, outcome: dict[str, Any]) -> None:
    """Note on the window (still this claim) what its attempt saved (NOTE_SAVED)."""
    conn.execute(
        NOTE_SAVED, {"id": window.id, "attempts": window.attempts, "outcome": Jsonb(outcome)}
    )


def unfinished_episode(conn: Connection[Any], window: ClaimedWindow) -> UUID | None:
    """The Episode an earlier attempt of this window kept before it stopped, its proposals
    perhaps not all saved; None when there is none, or its saves were noted."""
    row = conn.execute(WINDOW_EPISODE, {"id": window.id}).fetchone()
    if row is None or row[0] is None or row[1]:
        return None
    return UUID(str(row[0]))


def fail(
    conn: Connection[Any],
    window: ClaimedWindow,
    *,
    error: str,
    delay: float,
    max_attempts: int,
    outcome: dict[str, Any] | None = None,
) -> tuple[str, datetime] | None:
    """Put the window back to wait `delay` seconds, or dead-letter it after its last attempt
    (max_attempts 0: at once); the new status and due time, or None when the claim is no
    longer this one."""
    row = conn.execute(
        FAIL,
        {
            "id": window.id,
            "attempts": window.attempts,
            "error": error,
            "delay": float(delay),
            "max_attempts": max_attempts,
            "outcome": None if outcome is None else Jsonb(outcome),
        },
    ).fetchone()
    return None if row is None else (str(row[0]), row[1])


def park(conn: Connection[Any], window: ClaimedWindow, delay: float, note: str) -> datetime | None:
    """Make the window due again in `delay` seconds without counting the attempt; its new due
    time, or None when the claim is no longer this one."""
    row = conn.execute(
        PARK, {"id": window.id, "attempts": window.attempts, "delay": float(delay), "note": note}
    ).fetchone()
    return None if row is None else row[0]


def postpone(conn: Connection[Any], window: ClaimedWindow, until: datetime, note: str) -> None:
    """Make the window due again at `until`, without counting the attempt."""
    conn.execute(
        POSTPONE, {"id": window.id, "attempts": window.attempts, "until": until, "note": note}
    )


def defer_actor(conn: Connection[Any], actor_id: UUID, until: datetime) -> int:
    """Make the actor's pending windows due no earlier than `until`; how many moved."""
    return conn.execute(DEFER_ACTOR, {"actor_id": actor_id, "until": until}).rowcount


def postpone_to_next_day(conn: Connection[Any], window: ClaimedWindow, note: str) -> datetime:
    """Make the window due again at the next midnight UTC, without counting the attempt."""
    row = conn.execute(NEXT_UTC_DAY).fetchone()
    assert row is not None
    until: datetime = row[0]
    postpone(conn, window, until, note)
    return until


def queue_depth(conn: Connection[Any]) -> dict[str, int]:
    """Windows of every actor not done, per status (pending, running, dead); counts only."""
    found = {str(status): int(n) for status, n in conn.execute(QUEUE_DEPTH).fetchall()}
    return {status: found.get(status, 0) for status in ("pending", "running", "dead")}


def spent_today(conn: Connection[Any], actor_id: UUID) -> int:
    """The tokens (input and output) the actor's LLM calls spent since midnight UTC."""
    row = conn.execute(SPENT_TODAY, {"actor_id": actor_id}).fetchone()
    return 0 if row is None else int(row[0])


@contextmanager
def measured_call(name: str) -> Iterator[None]:
    """One model call (with the SDK's retries) measured as the telemetry operation
    ("llm", `name`): LLMUnavailable counts as outcome "unavailable", any other error as
    "error", no error as "ok". `name` is one of a fixed few ("gate", "verify_judge", ...)."""
    with telemetry.operation("llm", name) as operation:
        try:
            yield
        except LLMUnavailable:
            operation.outcome = "unavailable"
            raise


def record_call(
    conn: Connection[Any],
    *,
    actor_id: UUID,
    window_id: UUID | None,
    purpose: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    error: str | None,
) -> None:
    conn.execute(
        RECORD_CALL,
        {
            "actor_id": actor_id,
            "window_id": window_id,
            "purpose": purpose,
            "model": model,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "outcome": "ok" if error is None else "error",
            "error": error,
        },
    )
    telemetry.count_llm_tokens(model, input_tokens, output_tokens)  # /metrics' LLM tokens


def find_episode(conn: Connection[Any], actor_id: UUID, key: dict[str, Any]) -> UUID | None:
    """The actor's Episode whose properties include `key` (session, turns, digest), if any."""
    row = conn.execute(FIND_EPISODE, {"actor_id": actor_id, "key": Jsonb(key)}).fetchone()
    return None if row is None else UUID(str(row[0]))


def lock_episode_key(conn: Connection[Any], actor_id: UUID, key: dict[str, Any]) -> None:
    """Hold the Episode key (actor, session, turns, digest) until the transaction ends: two
    workers on the same window (one whose lock timed out) keep one Episode, the second waiting
    for the first's transaction, then finding its Episode."""
    name = f"episode:{actor_id}:{key['session_id']}:{key['first_turn']}:{key['digest']}"
    conn.execute(store.ADVISORY_LOCK, {"key": name})


def nearest_own(
    conn: Connection[Any], principal: Principal, embedding: Vector, model: str, limit: int
) -> list[CloseMemory]:
    query = sql.SQL(NEAREST_OWN).format(active=sql.SQL(store.ACTIVE), own=sql.SQL(store.OWN))
    conn.execute(store.ITERATIVE_SCAN)
    with conn.cursor(row_factory=class_row(CloseMemory)) as cur:
        cur.execute(
            query,
            {
                "actor_id": principal.actor_id,
                "project_id": principal.project_id,
                "embedding": embedding,
                "model": model,
                "limit": limit,
            },
        )
        return cur.fetchall()


def is_active_own(conn: Connection[Any], principal: Principal, memory_id: UUID) -> bool:
    """Whether the memory is still active and the principal's own (user, or project here)."""
    query = sql.SQL(ACTIVE_OWN).format(active=sql.SQL(store.ACTIVE), own=sql.SQL(store.OWN))
    params = {
        "id": memory_id,
        "actor_id": principal.actor_id,
        "project_id": principal.project_id,
    }
    return conn.execute(query, params).fetchone() is not None
