"""A name for each of an actor's projects, for the dashboard to show instead of an id.

Revision ID: 0023_project_names
Revises: 0022_all_projects_view
Create Date: 2026-12-06

A project id is derived from the repository's path (a UUID), which the server cannot read
back. kb.project_names keeps, per actor and project, a name: the repository folder's name
that `emergent-memory ui` records for the project it is run in (`named_by` 'folder': updated
when the folder's name changes), or one the user gave on the dashboard ('user': a folder's
name never replaces it). Names are the actor's own: another actor's name for the same
project is never shown.

The table has row-level security like kb.pair_judgments: a row is visible to, and writable
by, the actor it belongs to (and emergent_memory_admin). The downgrade drops the table.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023_project_names"
down_revision: str | None = "0022_all_projects_view"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
OWN_ROWS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

TABLE = """
CREATE TABLE kb.project_names (
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
    named_by text NOT NULL CHECK (named_by IN ('folder', 'user')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (actor_id, project_id)
)
"""

COMMENT = (
    "COMMENT ON TABLE kb.project_names IS 'The name an actor''s project is shown by on the "
    "dashboard: its repository folder''s (named_by folder, recorded by emergent-memory ui) or "
    "one the user gave (named_by user, never replaced by a folder''s).'"
)


def upgrade() -> None:
    op.execute(TABLE)
    op.execute(COMMENT)
    op.execute("ALTER TABLE kb.project_names ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE kb.project_names FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY project_names_admin ON kb.project_names FOR ALL TO {ADMIN} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(
        f"CREATE POLICY project_names_own ON kb.project_names FOR ALL TO {APP} "
        f"USING ({OWN_ROWS}) WITH CHECK ({OWN_ROWS})"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.project_names TO {APP}, {ADMIN}")


def downgrade() -> None:
    op.execute("DROP TABLE kb.project_names")
