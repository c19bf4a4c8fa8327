"""The dashboard's count of active memories read from an index alone.

Revision ID: 0021_memory_count
Revises: 0020_recall_queries
Create Date: 2026-12-06

- graph_objects_memory_active_count_idx: the head versions of active memories (not deleted,
  superseded or archived: browse_store.STATUSES["active"], as the partial index's predicate)
  by (actor_id, scope, project_id), with their labels (the category among them). The Browse
  page's count of "N memories match" (browse_store.count) of an actor's active memories, by
  category or not, is an index-only scan of it: at 100,000 memories a count no longer reads
  every row (about 130 ms), only the index entries the actor owns.

The downgrade drops the index.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021_memory_count"
down_revision: str | None = "0020_recall_queries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX graph_objects_memory_active_count_idx ON kb.graph_objects "
        "(actor_id, scope, project_id) INCLUDE (labels) "
        "WHERE type = 'Memory' AND is_head AND deleted_at IS NULL "
        "AND NOT (properties ? 'superseded_by') AND NOT (properties ? 'archived_at')"
    )


def downgrade() -> None:
    op.execute("DROP INDEX kb.graph_objects_memory_active_count_idx")
