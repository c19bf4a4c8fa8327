"""API tokens for the HTTP server: stored only as hashes, scoped, expiring, revocable.

Revision ID: 0005_api_tokens
Revises: 0004_memory_sql
Create Date: 2026-11-22

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005_api_tokens"
down_revision: str | None = "0004_memory_sql"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE kb.api_tokens (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            name text NOT NULL CHECK (name <> ''),
            token_hash bytea NOT NULL UNIQUE,
            token_prefix text NOT NULL,
            actor_id uuid NOT NULL,
            project_id uuid NOT NULL,
            scopes text[] NOT NULL
                CHECK (cardinality(scopes) > 0
                       AND scopes <@ ARRAY['memory:read', 'memory:write', 'memory:admin']),
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz,
            revoked_at timestamptz,
            last_used_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX api_tokens_actor_idx ON kb.api_tokens (actor_id, project_id)")
    op.execute(
        "COMMENT ON TABLE kb.api_tokens IS "
        "'Bearer tokens of the HTTP server. Only the sha256 of a token is stored; the token "
        "itself is shown once, when created.'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE kb.api_tokens")
