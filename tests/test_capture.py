"""Automatic capture's server side, before any model is asked: what `CaptureService.enqueue`
stores (turns without secrets, injected markers or the middle of long tool output), its
idempotent indices, windows and final flush; capture off; provenance (`derived_from`).

The worker (gate, extractor, proposals) is tested in test_capture_worker.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.errors import InvalidInput
from emergent_memory.memory import MemoryService, store


def episode(pool: ConnectionPool, principal: Principal, session_id: str = "s-1") -> uuid.UUID:
    """An Episode of the principal, as capture writes one."""
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        graph.install_pack(conn, principal.project_id, "agent-memory")
        made = graph.create_object(
            conn,
            project_id=principal.project_id,
            type=store.EPISODE,
            actor_id=principal.actor_id,
            scope="project",
            properties={
                "session_id": session_id,
                "client": "api",
                "first_turn": 0,
                "last_turn": 1,
                "digest": "0" * 64,
                "text": "user: I use tabs.",
            },
        )
    return made.canonical_id


def derived_from(pool: ConnectionPool, memory_id: str) -> list[uuid.UUID]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT dst_id FROM kb.graph_relationships WHERE src_id = %s "
            "AND type = 'DERIVED_FROM' AND is_head AND deleted_at IS NULL",
            (memory_id,),
        ).fetchall()
    return [row[0] for row in rows]


# -- provenance -------------------------------------------------------------------------------


def test_a_save_derived_from_an_episode_links_the_memory_to_it(
    service: MemoryService, principal: Principal, pool: ConnectionPool, owner_pool: ConnectionPool
) -> None:
    source = episode(pool, principal)
    saved = service.save(principal, "The user indents with tabs", "preference", derived_from=source)
    assert derived_from(owner_pool, saved["memory"]["id"]) == [source]
    # a repeat reinforces the same memory, and links it to the second episode too
    second = episode(pool, principal, "s-2")
    again = service.save(principal, "The user indents with tabs", "preference", derived_from=second)
    assert again["status"] == "unchanged"
    assert sorted(derived_from(owner_pool, saved["memory"]["id"])) == sorted([source, second])


def test_derived_from_must_name_a_visible_object_and_nothing_is_saved_otherwise(
    service: MemoryService, principal: Principal, pool: ConnectionPool, owner_pool: ConnectionPool
) -> None:
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    hidden = episode(pool, other)  # another actor's: row-level security hides it
    for source in (hidden, uuid.uuid4()):
        with pytest.raises(InvalidInput, match="derived_from: no object with id"):
            service.save(principal, "The user indents with tabs", "preference", derived_from=source)
    listed: Any = service.manage(principal, "list")
    assert listed["count"] == 0
