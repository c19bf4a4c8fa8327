"""The PostgreSQL roles of the application: the group roles of migration 0006 and login roles."""

from __future__ import annotations

import contextlib

import psycopg
from psycopg import sql

# Group roles created by migration 0006: the server's role is a member of APP_ROLE (subject to
# row-level security), administrators and maintenance tools of ADMIN_ROLE.
APP_ROLE = "emergent_memory_app"
ADMIN_ROLE = "emergent_memory_admin"
# The embedded server's login role for the application (the superuser `postgres` would bypass
# row-level security).
EMBEDDED_SERVER_ROLE = "emergent_memory_server"


def ensure_login_role(
    owner_url: str, role: str, *, group: str = APP_ROLE, password: str | None = None
) -> None:
    """Create (or update) a login role that is a member of `group` (APP_ROLE or ADMIN_ROLE),
    connected as a role that may create roles. Run it after migrating (migration 0006 creates
    the group roles). A given password replaces the role's password."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if not exists:
            created_meanwhile = (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation)
            with contextlib.suppress(*created_meanwhile):
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        if password is not None:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role)))
