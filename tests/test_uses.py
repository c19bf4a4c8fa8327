"""What counts as a use of a memory, and what each use keeps (issue 29): a tool's recall
records the query it answered (only its SHA-256 when it held a secret), automatic memory's
injections are counted apart with their session, and a memory's page shows both."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import pytest
from click.testing import CliRunner

from emergent_memory.auth.principal import Principal
from emergent_memory.cli import cli
from emergent_memory.errors import MemoryNotFound
from emergent_memory.memory import MemoryService
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.store import RECALL_QUERY_CHARS
from tests.test_injection import make_injection


def queries(connect: Any, memory_id: str) -> list[tuple[str | None, str | None]]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT query, query_sha256 FROM kb.memory_recalls WHERE canonical_id = %s "
            "ORDER BY recalled_at",
            (memory_id,),
        )
        return [tuple(row) for row in rows.fetchall()]


def test_a_recall_keeps_its_query_and_a_secret_only_as_a_digest(
    service: MemoryService, principal: Principal, connect: Any
) -> None:
    memory_id = service.save(principal, "The staging database listens on port 5433", "fact")[
        "memory"
    ]["id"]
    service.recall(principal, "which port does the staging database use")
    secret = "AKIA" + "Q7RN4XW2ZB5TLM3P"
    asked = f"staging database port for key {secret}"
    service.recall(principal, asked)
    long = "staging database port " + "and more words " * 60
    service.recall(principal, long)
    service.recall(principal, "staging database port", record_use=False)  # a person looking
    kept = queries(connect, memory_id)
    assert kept == [
        ("which port does the staging database use", None),
        (None, hashlib.sha256(asked.encode()).hexdigest()),
        (long[:RECALL_QUERY_CHARS], None),
    ]
    assert all(secret not in (query or "") for query, _ in kept)
    detail = BrowseService(service.pool).get(principal, memory_id)
    assert [(r["query"], r["query_withheld"]) for r in detail["recalls"]] == [
        (long[:RECALL_QUERY_CHARS], False),
        (None, True),
        ("which port does the staging database use", False),
    ]


def test_injections_are_counted_apart_with_their_session(
    service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "Always run make lint before committing", "instruction")[
        "memory"
    ]["id"]
    injection = make_injection(service)
    sessions = [f"session-{uuid.uuid4()}" for _ in range(2)]
    for session in sessions:
        injection.context(principal, session_id=session, event="session_start")
    detail = BrowseService(service.pool).get(principal, memory_id)
    assert detail["use_count"] == 0  # an injection is not a tool's recall
    assert detail["injection_count"] == 2
    assert [i["session_id"] for i in detail["injections"]] == sessions[::-1]
    assert {i["event"] for i in detail["injections"]} == {"session_start"}
    other = Principal(uuid.uuid4(), principal.project_id)
    with pytest.raises(MemoryNotFound):  # another user learns nothing of its uses
        BrowseService(service.pool).get(other, memory_id)


def test_the_command_line_recall_counts_a_use_without_keeping_the_query(
    service: MemoryService, database_url: str, connect: Any
) -> None:
    local = Principal(uuid.uuid4(), uuid.uuid4())
    memory_id = service.save(local, "The deploy script is deploy.sh", "fact")["memory"]["id"]
    env = {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_ACTOR_ID": str(local.actor_id),
        "EMERGENT_MEMORY_PROJECT_ID": str(local.project_id),
    }
    result = CliRunner().invoke(cli, ["recall", "which deploy script", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["memories"][0]["id"] == memory_id
    assert queries(connect, memory_id) == [(None, None)]
