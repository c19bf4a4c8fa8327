"""Migration 0018_capture_waiting on a database with capture's history: error records written
before it lose what the API echoed (and an invented property's name), keeping the status and
the error type; records that quote nothing are left as they were."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import psycopg

from emergent_memory.db import migrate

BEFORE = "0017_pair_judgments"
ECHOED = {
    "gate: HTTP 400 invalid_request_error: could not read: my locker code is Zx9!qLmP": (
        "gate: HTTP 400 invalid_request_error"
    ),
    "extractor: HTTP 529 overloaded_error: Zx9!qLmP (after 3 attempts)": (
        "extractor: HTTP 529 overloaded_error"
    ),
    "extractor: the input of tool 'record_memories' does not match its schema at $: "
    "Additional properties are not allowed ('locker_Zx9!qLmP' was unexpected)": (
        "extractor: the input of tool 'record_memories' does not match its schema at $: "
        "an unexpected property"
    ),
    "waiting for the next UTC day: the daily token budget (1000) is spent": (
        "waiting for the next UTC day: the daily token budget (1000) is spent"
    ),
    "gate: no answer within 60 s (after 3 attempts)": (
        "gate: no answer within 60 s (after 3 attempts)"
    ),
}


def test_0018_removes_echoed_text_from_the_error_records_written_before_it(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url, BEFORE)
    actor = uuid.uuid4()
    with psycopg.connect(url, autocommit=True) as conn:
        for number, written in enumerate(ECHOED):
            conn.execute(
                "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
                "first_turn, end_turn, status, last_error) "
                "VALUES (%s, %s, %s, 'claude-code', 0, 4, 'dead', %s)",
                (actor, actor, f"s-{number}", written),
            )
            conn.execute(
                "INSERT INTO kb.llm_calls (actor_id, purpose, model, outcome, error) "
                "VALUES (%s, 'gate', 'claude-haiku-4-5', 'error', %s)",
                (actor, written.partition(": ")[2]),
            )
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        windows = conn.execute(
            "SELECT last_error FROM kb.capture_windows ORDER BY session_id"
        ).fetchall()
        calls = {row[0] for row in conn.execute("SELECT error FROM kb.llm_calls").fetchall()}
    assert [row[0] for row in windows] == list(ECHOED.values())
    assert calls == {kept.partition(": ")[2] for kept in ECHOED.values()}
    assert not any("Zx9" in text for text in [*(row[0] for row in windows), *calls])
