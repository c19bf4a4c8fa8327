"""The application role can no longer read or write API tokens: it verifies the one token
presented through a function.

Revision ID: 0009_token_verification
Revises: 0008_recall_rare_words
Create Date: 2026-11-23

Until now emergent_memory_app had SELECT, INSERT and UPDATE on every table of the kb schema
(0006), kb.api_tokens included: a server role (or anyone holding its password) could escalate a
token's scopes to memory:admin, revoke another user's token, or insert a working admin token for
any actor. Now:

- emergent_memory_app has no privilege on kb.api_tokens at all (SELECT, INSERT, UPDATE, DELETE
  all fail with insufficient_privilege);
- it verifies a bearer token with kb.verify_api_token(token_hash), a SECURITY DEFINER function
  that returns the one live token (not revoked, not expired) whose sha256 is given, and nothing
  when there is none, and records its use (last_used_at, at most once a minute). Knowing a
  token is the only way to learn anything about it;
- token management (create, list, revoke) stays with the table's owner and
  emergent_memory_admin, that is the `emergent-memory token` commands and administrators.

The function runs with a fixed search_path, takes the hash as bytea of exactly 32 bytes (a
sha256), and is executable only by emergent_memory_app and emergent_memory_admin, not PUBLIC.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009_token_verification"
down_revision: str | None = "0008_recall_rare_words"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"


def upgrade() -> None:
    op.execute(f"REVOKE ALL ON kb.api_tokens FROM {APP}")
    op.execute(
        """
        CREATE FUNCTION kb.verify_api_token(p_token_hash bytea)
        RETURNS TABLE (
            id uuid,
            name text,
            token_prefix text,
            actor_id uuid,
            project_id uuid,
            scopes text[],
            created_at timestamptz,
            expires_at timestamptz,
            revoked_at timestamptz,
            last_used_at timestamptz
        )
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog, public
        AS $$
        DECLARE
            presented kb.api_tokens%ROWTYPE;
        BEGIN
            IF p_token_hash IS NULL OR octet_length(p_token_hash) <> 32 THEN
                RETURN;  -- not a sha256: no token has it
            END IF;
            SELECT * INTO presented FROM kb.api_tokens t
            WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL
              AND (t.expires_at IS NULL OR t.expires_at > now());
            IF NOT FOUND THEN
                RETURN;
            END IF;
            -- at most one write a minute per token, so busy clients do not queue on its row
            UPDATE kb.api_tokens t SET last_used_at = now()
            WHERE t.id = presented.id
              AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute');
            RETURN QUERY SELECT presented.id, presented.name, presented.token_prefix, presented.actor_id,
                                presented.project_id, presented.scopes, presented.created_at,
                                presented.expires_at, presented.revoked_at,
                                presented.last_used_at;
        END
        $$
        """
    )
    op.execute("REVOKE EXECUTE ON FUNCTION kb.verify_api_token(bytea) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION kb.verify_api_token(bytea) TO {APP}, {ADMIN}")
    op.execute(
        "COMMENT ON FUNCTION kb.verify_api_token(bytea) IS "
        "'The live API token (not revoked, not expired) whose sha256 is p_token_hash, or no "
        "row; records its use. The only access the application role has to kb.api_tokens.'"
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION kb.verify_api_token(bytea)")
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON kb.api_tokens TO {APP}")
