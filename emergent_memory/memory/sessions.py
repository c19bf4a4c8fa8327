"""Store of client sessions and the injection log: kb.agent_sessions and kb.injections.

The log has a row for every answer of injection, including those that injected nothing (and
why), with the prompt (or only its digest when it held a secret) and each memory's line as
injected; rows older than the retention period go (kb.expire_injections, migration 0019).

A session is keyed by its actor and the client's session id: another actor presenting the same
session id has a session of its own, and row-level security (migration 0011) keeps each actor
to its own rows. Functions take a connection inside a transaction that acts for the principal;
they never commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from psycopg import Connection
from psycopg.rows import class_row

from emergent_memory.auth.principal import Principal
from emergent_memory.memory.capture_text import SCAN_MARGIN
from emergent_memory.memory.validation import storable


@dataclass(frozen=True, slots=True)
class SessionRow:
    actor_id: UUID
    session_id: str
    project_id: UUID
    client: str
    created_at: datetime
    last_seen_at: datetime
    shown_since: datetime
    turns_received: int
    turns_windowed: int


# The session, created on first sight and locked for the caller's transaction (two hooks of
# one session run one after the other); its project and client follow the latest request.
TOUCH = """
INSERT INTO kb.agent_sessions AS s (actor_id, session_id, project_id, client)
VALUES (%(actor_id)s, %(session_id)s, %(project_id)s, %(client)s)
ON CONFLICT (actor_id, session_id) DO UPDATE
SET project_id = excluded.project_id, client = excluded.client, last_seen_at = now()
RETURNING s.actor_id, s.session_id, s.project_id, s.client, s.created_at, s.last_seen_at,
          s.shown_since, s.turns_received, s.turns_windowed
"""

RESET_SHOWN = """
UPDATE kb.agent_sessions SET shown_since = clock_timestamp()
WHERE actor_id = %(actor_id)s AND session_id = %(session_id)s
"""

# Memories injected into the session since its last reset (/clear, compaction).
SHOWN = """
SELECT DISTINCT unnest(i.memory_ids)
FROM kb.injections i JOIN kb.agent_sessions s USING (actor_id, session_id)
WHERE i.actor_id = %(actor_id)s AND i.session_id = %(session_id)s
  AND i.created_at >= s.shown_since
"""

LOG_INJECTION = """
INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, outcome, prompt,
                           prompt_length, prompt_sha256, memory_ids, memory_texts,
                           memory_tokens, estimated_tokens, budget_tokens, created_at)
VALUES (%(actor_id)s, %(project_id)s, %(session_id)s, %(client)s, %(event)s, %(outcome)s,
        %(prompt)s, %(prompt_length)s, %(prompt_sha256)s, %(memory_ids)s, %(memory_texts)s,
        %(memory_tokens)s, %(estimated_tokens)s, %(budget_tokens)s, clock_timestamp())
"""

# Rows older than the retention period, but those a live session's shown set still needs, of
# every actor (SECURITY DEFINER, migration 0019).
EXPIRE_INJECTIONS = "SELECT kb.expire_injections(%(age)s)"


# What an answer was (kb.injections.outcome, migration 0019): memories injected, or why none.
Outcome = Literal[
    "injected",
    "nothing_relevant",  # no memory reached the relevance floor (at a start: none to offer)
    "already_shown",  # those that did were shown in the session since its last reset
    "over_budget",  # none of those not shown fitted the token budget
    "too_short",  # a prompt of fewer words than min_prompt_words: not searched
    "no_embedding",  # the embedding model was unavailable, or the prompt's vector degenerate
    "resumed",  # a resumed session's start: nothing injected by design
]

# The characters of a prompt the injection log keeps (kb.injections.prompt's check).
PROMPT_LOG_CHARS = 2000


@dataclass(frozen=True, slots=True)
class LoggedPrompt:
    """A prompt as the injection log keeps it: its first characters (None when it held a
    secret), its whole length, and its SHA-256 (hex) only when the text is withheld."""

    text: str | None
    length: int
    sha256: str | None = None


@dataclass(frozen=True, slots=True)
class LoggedMemory:
    """An injected memory as the injection log keeps it: its line as injected, its tokens."""

    id: UUID
    text: str
    tokens: int


def logged_prompt(prompt: str) -> LoggedPrompt:
    """The prompt as the injection log keeps it: its first PROMPT_LOG_CHARS characters, or,
    when the secret scanner finds a secret in them (read with capture's SCAN_MARGIN characters
    more, so that a secret across the cut is seen whole), only the SHA-256 of the whole
    prompt."""
    from emergent_memory.memory.secrets import find_secrets  # its rules compile on first use

    text = storable(prompt)
    if find_secrets(text[: PROMPT_LOG_CHARS + SCAN_MARGIN]):
        return LoggedPrompt(None, len(text), hashlib.sha256(text.encode("utf-8")).hexdigest())
    return LoggedPrompt(text[:PROMPT_LOG_CHARS], len(text))


def touch(conn: Connection[Any], principal: Principal, session_id: str, client: str) -> SessionRow:
    """The principal's session `session_id`, created if new, seen now, locked until the
    caller's transaction ends."""
    with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        cur.execute(
            TOUCH,
            {
                "actor_id": principal.actor_id,
                "session_id": session_id,
                "project_id": principal.project_id,
                "client": client,
            },
        )
        row = cur.fetchone()
    assert row is not None
    return row


def reset_shown(conn: Connection[Any], principal: Principal, session_id: str) -> None:
    """From now on, no memory counts as already shown in the session (/clear, compaction)."""
    conn.execute(RESET_SHOWN, {"actor_id": principal.actor_id, "session_id": session_id})


def shown(conn: Connection[Any], principal: Principal, session_id: str) -> set[UUID]:
    """The memories injected into the session since its last reset."""
    rows = conn.execute(SHOWN, {"actor_id": principal.actor_id, "session_id": session_id})
    return {row[0] for row in rows}


def log_injection(
    conn: Connection[Any],
    principal: Principal,
    *,
    session_id: str,
    client: str,
    event: str,
    outcome: str,
    prompt: LoggedPrompt | None,
    memories: list[LoggedMemory],
    estimated_tokens: int,
    budget_tokens: int,
) -> None:
    """One answer of injection: `outcome` "injected" with its memories, or why none."""
    conn.execute(
        LOG_INJECTION,
        {
            "actor_id": principal.actor_id,
            "project_id": principal.project_id,
            "session_id": session_id,
            "client": client,
            "event": event,
            "outcome": outcome,
            "prompt": None if prompt is None else prompt.text,
            "prompt_length": None if prompt is None else prompt.length,
            "prompt_sha256": None if prompt is None else prompt.sha256,
            "memory_ids": [memory.id for memory in memories],
            "memory_texts": [memory.text for memory in memories],
            "memory_tokens": [memory.tokens for memory in memories],
            "estimated_tokens": estimated_tokens,
            "budget_tokens": budget_tokens,
        },
    )


def expire_injections(conn: Connection[Any], age_seconds: float) -> int:
    """Deletes the injection log's rows older than `age_seconds`, of every actor, except
    those that say which memories a session was shown since its last reset; how many."""
    row = conn.execute(EXPIRE_INJECTIONS, {"age": age_seconds}).fetchone()
    return 0 if row is None else int(row[0])
