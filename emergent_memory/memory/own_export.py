"""A principal's own export: the records of `emergent-memory export` (transfer.export_records,
the same JSON Lines format and header) limited to what the principal may see and wrote, for
the dashboard's download.

It reads as the principal (row-level security applies, as for every read of theirs) and
keeps the principal's actor's rows only: their memories of this project and their user-scope
memories of every project, with every version, relationship, context, embedding, recall and
piece of evidence of those; global memories of other actors and another user's rows are
never in it, even for an admin token. One consistent, read-only snapshot; the connection is
held until the iteration ends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from emergent_memory import graph, transfer
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool, transaction
from emergent_memory.errors import PermissionDenied


def own_export(pool: DatabasePool, principal: Principal) -> Iterator[dict[str, Any]]:
    """The principal's export records, header first (see the module docstring)."""
    if not principal.can_read:
        raise PermissionDenied("this credential may not read memories (needs memory:read)")
    return _records(pool, principal)


def _records(pool: DatabasePool, principal: Principal) -> Iterator[dict[str, Any]]:
    with transaction(pool) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        # as the principal, never as an admin: an admin token's export is still its own
        graph.act_as(conn, principal.actor_id, principal.project_id, admin=False)
        yield from transfer.export_records(conn, actor_id=principal.actor_id)
