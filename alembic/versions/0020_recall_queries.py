"""The recall log keeps the query each use answered.

Revision ID: 0020_recall_queries
Revises: 0019_injection_answers
Create Date: 2026-12-06

- kb.memory_recalls.query: the query of the recall that returned the memory (a tool's
  recall_memories, the REST API's recall for an agent), its first 500 characters, so that a
  memory's uses say what they were for; query_sha256 (hex) instead of the text when the
  secret scanner found a secret in the query. Both NULL: a use recorded before this revision.
  A recall returns several memories: each row of it holds the same query.

The row-level security of the table is unchanged (0006: an actor sees and writes its own
recalls). The downgrade drops both columns (the queries are lost).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0020_recall_queries"
down_revision: str | None = "0019_injection_answers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE kb.memory_recalls "
        "ADD COLUMN query text CHECK (query IS NULL OR char_length(query) <= 500), "
        "ADD COLUMN query_sha256 text CHECK (query_sha256 IS NULL OR query_sha256 ~ '^[0-9a-f]{64}$'), "
        "ADD CONSTRAINT memory_recalls_query_or_digest CHECK (query IS NULL OR query_sha256 IS NULL)"
    )
    op.execute(
        "COMMENT ON COLUMN kb.memory_recalls.query IS 'The query of the recall that returned "
        "the memory, its first 500 characters (NULL: recorded before 0020, or it held a "
        "secret: see query_sha256).'"
    )
    op.execute(
        "COMMENT ON COLUMN kb.memory_recalls.query_sha256 IS 'The SHA-256 (hex) of a query in "
        "which the secret scanner found a secret, kept instead of its text.'"
    )


def downgrade() -> None:
    op.execute(
        "ALTER TABLE kb.memory_recalls DROP CONSTRAINT memory_recalls_query_or_digest, "
        "DROP COLUMN query_sha256, DROP COLUMN query"
    )
