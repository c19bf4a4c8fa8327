"""An actor may read its own memories of every project at once, when the application asks.

Revision ID: 0022_all_projects_view
Revises: 0021_memory_count
Create Date: 2026-12-06

The dashboard's "All projects" view (a token with the scope memory:any-project) lists an
actor's memories of all its projects together. Until now the read policy of kb.graph_objects
let a principal see its project-scope objects of the current project only, so such a list
needed one transaction per project.

- kb.current_all_projects(): whether the transaction reads across the actor's projects (SET
  LOCAL emergent_memory.all_projects = 'on', set by graph.act_as with all_projects, which the
  application sets only for a principal whose credential may act in any project of its actor:
  that credential could already read each of those projects one by one).
- The read policy graph_objects_read allows, besides what it allowed, the actor's own
  project-scope objects of every project when that setting is on. Another actor's rows stay
  invisible whatever the setting; the write policies are unchanged, so a write still needs
  the object's own project (the view is for reading: the dashboard refuses changes in it).

Changing the policy takes an ACCESS EXCLUSIVE lock on kb.graph_objects for a moment (and so
does the downgrade), as in 0010. The downgrade puts back 0010's policy and drops the
function.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022_all_projects_view"
down_revision: str | None = "0021_memory_count"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ALL_PROJECTS = """
CREATE FUNCTION kb.current_all_projects() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce(current_setting('emergent_memory.all_projects', true), '') = 'on'
"""

ALL_PROJECTS_COMMENT = """
COMMENT ON FUNCTION kb.current_all_projects() IS
'Whether the current transaction reads the actor''s objects of every project (SET LOCAL
emergent_memory.all_projects = ''on''): the read policy of kb.graph_objects then lets the
actor see its own project-scope objects of all its projects.'
"""

READ_POLICY = """
ALTER POLICY graph_objects_read ON kb.graph_objects USING (
    (SELECT kb.current_actor_id()) IS NOT NULL AND (
        kb.visible_to(graph_objects, (SELECT kb.current_actor_id()),
                      (SELECT kb.current_project_id()))
        OR (actor_id IS NULL AND scope = 'project'
            AND project_id = (SELECT kb.current_project_id()))
        OR (actor_id = (SELECT kb.current_actor_id()) AND scope = 'project'
            AND (SELECT kb.current_all_projects()))
    )
)
"""

# The policy as 0010 made it.
READ_POLICY_BEFORE = """
ALTER POLICY graph_objects_read ON kb.graph_objects USING (
    (SELECT kb.current_actor_id()) IS NOT NULL AND (
        kb.visible_to(graph_objects, (SELECT kb.current_actor_id()),
                      (SELECT kb.current_project_id()))
        OR (actor_id IS NULL AND scope = 'project'
            AND project_id = (SELECT kb.current_project_id()))
    )
)
"""


def upgrade() -> None:
    op.execute(ALL_PROJECTS)
    op.execute(ALL_PROJECTS_COMMENT)
    op.execute(READ_POLICY)


def downgrade() -> None:
    op.execute(READ_POLICY_BEFORE)
    op.execute("DROP FUNCTION kb.current_all_projects()")
