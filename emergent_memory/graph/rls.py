"""Whom the current transaction acts for: the settings row-level security reads.

Every query of the graph tables runs for a principal (an actor in a project, possibly with
the right to write global objects). The principal lives in transaction-local settings
(`set_config(..., true)`, the function form of `SET LOCAL`), so it ends with the transaction:
a pooled connection never carries one request's identity into the next. With no principal
set, an application role sees no row (the policies of migration 0006).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg import Connection
from psycopg.pq import TransactionStatus

ACT_AS = """
SELECT set_config('emergent_memory.actor_id', %(actor_id)s, true),
       set_config('emergent_memory.project_id', %(project_id)s, true),
       set_config('emergent_memory.admin', %(admin)s, true),
       set_config('emergent_memory.all_projects', %(all_projects)s, true)
"""


def act_as(
    conn: Connection[Any],
    actor_id: UUID,
    project_id: UUID,
    *,
    admin: bool = False,
    all_projects: bool = False,
) -> None:
    """Set the principal for the rest of the caller's transaction (call it inside one).
    `all_projects`: the actor's own project-scope objects of every project are readable too
    (migration 0022; writes still need the object's project)."""
    if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
        # outside a transaction the setting would end with this very statement
        raise RuntimeError("act_as needs a transaction: call it inside conn.transaction()")
    conn.execute(
        ACT_AS,
        {
            "actor_id": str(actor_id),
            "project_id": str(project_id),
            "admin": "on" if admin else "off",
            "all_projects": "on" if all_projects else "off",
        },
    )


# Exempt from the policies: superusers, BYPASSRLS roles, and members of the admin role.
BYPASSES = """
SELECT rolsuper OR rolbypassrls OR pg_has_role(current_user, 'emergent_memory_admin', 'USAGE')
FROM pg_roles WHERE rolname = current_user
"""


def bypasses_row_security(conn: Connection[Any]) -> bool:
    """Whether the connection's role sees every row whatever the principal (maintenance)."""
    row = conn.execute(BYPASSES).fetchone()
    return bool(row and row[0])
