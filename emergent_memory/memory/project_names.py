"""The names an actor's projects are shown by on the dashboard (kb.project_names, migration
0023): a project id is derived from its repository's path and cannot be read back, so a name
is recorded for it, by the actor, for the actor alone.

Two sources: the repository folder's name, which `emergent-memory ui` records for the project
it runs in (`folder`: replaced when the folder's name changes), and a name the user gives on
the dashboard (`user`: a folder's name never replaces it; clearing it lets the folder's come
back). The statements take a connection and never commit; ProjectNames runs them in a
transaction acting for the principal (row-level security: its own rows only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from uuid import UUID

from psycopg import Connection

from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.errors import InvalidInput, PermissionDenied, SecretRejected
from emergent_memory.memory import validation
from emergent_memory.memory.service import acting_for

NamedBy = Literal["folder", "user"]
MAX_NAME = 80

NAMES = """
SELECT project_id, name FROM kb.project_names
WHERE actor_id = %(actor_id)s AND project_id = ANY(%(ids)s)
"""

# A user's name replaces any; a folder's only another folder's.
SET_NAME = """
INSERT INTO kb.project_names (actor_id, project_id, name, named_by)
VALUES (%(actor_id)s, %(project_id)s, %(name)s, %(named_by)s)
ON CONFLICT (actor_id, project_id) DO UPDATE
SET name = EXCLUDED.name, named_by = EXCLUDED.named_by, updated_at = now()
WHERE kb.project_names.named_by = 'folder' OR EXCLUDED.named_by = 'user'
"""

FORGET_NAME = """
DELETE FROM kb.project_names WHERE actor_id = %(actor_id)s AND project_id = %(project_id)s
"""


def project_name(value: object) -> str:
    """A project's name as given: one line of at most MAX_NAME characters (runs of spaces
    become one), no credential; InvalidInput says what to change."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("a project's name must be a non-empty name, e.g. 'billing-service'")
    if any(char in validation.LINE_BREAKS for char in value.strip()):
        raise InvalidInput("a project's name is one line: remove the line break")
    name = validation.content(" ".join(value.split()), max_length=MAX_NAME, field="name")
    from emergent_memory.memory.secrets import describe_secret, find_secrets

    findings = find_secrets(name)
    if findings:
        raise SecretRejected(
            f"name: the name {describe_secret(findings[0]).removeprefix('it ')}; a project's "
            "name is a short label such as 'billing-service', never a credential"
        )
    return name


def names(conn: Connection[Any], actor_id: UUID, ids: Sequence[UUID]) -> dict[UUID, str]:
    """The actor's names of these projects (those it named)."""
    rows = conn.execute(NAMES, {"actor_id": actor_id, "ids": list(ids)}).fetchall()
    return {row[0]: row[1] for row in rows}


def set_name(
    conn: Connection[Any], actor_id: UUID, project_id: UUID, name: str, named_by: NamedBy
) -> None:
    """Record the actor's name of a project (checked with project_name first)."""
    conn.execute(
        SET_NAME,
        {"actor_id": actor_id, "project_id": project_id, "name": name, "named_by": named_by},
    )


def forget_name(conn: Connection[Any], actor_id: UUID, project_id: UUID) -> None:
    conn.execute(FORGET_NAME, {"actor_id": actor_id, "project_id": project_id})


class ProjectNames:
    """The principal's names of its actor's projects, read and given."""

    def __init__(self, pool: DatabasePool) -> None:
        self._pool = pool

    def name_of(self, principal: Principal) -> str | None:
        """The actor's name of the project the principal acts in, if it gave one."""
        with acting_for(self._pool, principal) as conn:
            found = names(conn, principal.actor_id, [principal.project_id])
        return found.get(principal.project_id)

    def rename(self, principal: Principal, name: object, named_by: NamedBy = "user") -> str | None:
        """Name the project the principal acts in (`name` empty or None for a user: forget
        the name given, so that the folder's may be recorded again); the name kept, checked
        by project_name. A folder's name does not replace a user's."""
        if not principal.can_write:
            raise PermissionDenied("this credential may not name projects (needs memory:write)")
        from emergent_memory.memory.service import acting_for

        clear = named_by == "user" and (
            name is None or (isinstance(name, str) and not name.strip())
        )
        checked = None if clear else project_name(name)
        with acting_for(self._pool, principal) as conn:
            if checked is None:
                forget_name(conn, principal.actor_id, principal.project_id)
            else:
                set_name(conn, principal.actor_id, principal.project_id, checked, named_by)
            return names(conn, principal.actor_id, [principal.project_id]).get(principal.project_id)
