"""Migration 0019_injection_answers on a database with an injection log: rows written before
it keep what they said (every one injected something) and say that their prompt and text were
not recorded; the downgrade deletes only the answers that injected nothing, which 0018 never
wrote."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import psycopg

from emergent_memory.db import migrate

BEFORE = "0018_capture_waiting"
INSERT_BEFORE = """
INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, memory_ids,
                           estimated_tokens, budget_tokens)
VALUES (%(actor)s, %(actor)s, %(session)s, 'claude-code', %(event)s, %(ids)s, 90, 500)
"""
INSERT_AFTER = """
INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, outcome, prompt,
                           prompt_length, memory_ids, memory_texts, memory_tokens,
                           estimated_tokens, budget_tokens)
VALUES (%(actor)s, %(actor)s, 's-new', 'claude-code', 'prompt', %(outcome)s, 'a prompt', 8,
        %(ids)s, %(texts)s, %(tokens)s, %(total)s, 500)
"""


def test_0019_keeps_the_log_of_before_and_its_downgrade_only_what_0018_could_say(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url, BEFORE)
    actor, memory = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(url, autocommit=True) as conn:
        for session, event in (("s-start", "session_start"), ("s-prompt", "prompt")):
            conn.execute(
                INSERT_BEFORE, {"actor": actor, "session": session, "event": event, "ids": [memory]}
            )
    migrate.upgrade(url)
    with psycopg.connect(url, autocommit=True) as conn:
        before = conn.execute(
            "SELECT session_id, outcome, prompt, prompt_length, prompt_sha256, memory_texts, "
            "memory_tokens FROM kb.injections ORDER BY session_id"
        ).fetchall()
        assert before == [
            ("s-prompt", "injected", None, None, None, None, None),  # not recorded, before
            ("s-start", "injected", None, None, None, None, None),
        ]
        for outcome, ids, texts, tokens in (
            ("injected", [memory], ["- [fact] a memory (id 0a1b2c3d)"], [9]),
            ("nothing_relevant", [], [], []),
        ):
            conn.execute(
                INSERT_AFTER,
                {
                    "actor": actor,
                    "outcome": outcome,
                    "ids": ids,
                    "texts": texts,
                    "tokens": tokens,
                    "total": sum(tokens),
                },
            )
        # what the table refuses: an outcome that contradicts the memories, text and digest
        # together, a prompt at a session's start, texts that do not match the memories
        for statement in (
            "UPDATE kb.injections SET outcome = 'too_short' WHERE memory_ids <> '{}'",
            "UPDATE kb.injections SET prompt_sha256 = repeat('a', 64) WHERE prompt IS NOT NULL",
            "UPDATE kb.injections SET prompt = 'x' WHERE event = 'session_start'",
            "UPDATE kb.injections SET memory_texts = '{}' WHERE memory_ids <> '{}'",
            "UPDATE kb.injections SET prompt = repeat('x', 2001) WHERE event = 'prompt'",
        ):
            try:
                conn.execute(statement)
            except psycopg.errors.CheckViolation:
                continue
            raise AssertionError(f"accepted: {statement}")
    migrate.downgrade(url, BEFORE)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT session_id, memory_ids FROM kb.injections ORDER BY session_id"
        ).fetchall()
    assert rows == [("s-new", [memory]), ("s-prompt", [memory]), ("s-start", [memory])]
