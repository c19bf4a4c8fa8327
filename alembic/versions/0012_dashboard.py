"""The dashboard: its sign-in sessions and one-time sign-in links, and the possible duplicates
that wait for a person's decision.

Revision ID: 0012_dashboard
Revises: 0011_automatic_memory
Create Date: 2026-11-24

- kb.dashboard_sessions: one row per signed-in browser. The browser holds a random secret in an
  HttpOnly cookie; the table holds only its sha256, the principal it acts for (actor, project,
  scopes) and, for a session opened with an API token, that token's id: revoking or expiring
  the token ends its sessions at their next request. A session ends at sign-out or at
  expires_at (never later than its token's expiry).
- kb.dashboard_links: one-time sign-in links that `emergent-memory ui` makes for the local user
  (the sha256 of the link's secret, the principal, a short expiry, when it was used).
- The application role has no privilege on either table. It works them through SECURITY
  DEFINER functions, like kb.verify_api_token (0009): kb.start_dashboard_session (with an API
  token's hash), kb.redeem_dashboard_link (with a link's hash), kb.dashboard_session (the live
  session with this hash, its principal, or nothing) and kb.end_dashboard_session. Knowing a
  secret is the only way to learn anything about a row.
- kb.possible_duplicates: a pair of memories that save's (or update's) duplicate check found
  close but not the same fact, recorded when it answered possible_duplicates, with the
  decision a person took (keep both, supersede, merge) and when. Row-level security as
  kb.injections (0011): a row is visible to, and writable by, the actor it belongs to (and
  emergent_memory_admin).
- Indexes for browsing memories a page at a time (the dashboard's list, the REST API's): an
  actor's memories (head versions) by creation time and by confidence, global memories by
  creation time, and the recall log by actor (how often and when an actor used each memory).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_dashboard"
down_revision: str | None = "0011_automatic_memory"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"

OWN_ROWS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

TABLES = """
CREATE TABLE kb.dashboard_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_hash bytea NOT NULL UNIQUE CHECK (octet_length(session_hash) = 32),
    token_id uuid REFERENCES kb.api_tokens (id) ON DELETE CASCADE,
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
    label text NOT NULL CHECK (label <> '' AND length(label) <= 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at timestamptz
);
CREATE INDEX dashboard_sessions_expiry_idx ON kb.dashboard_sessions (expires_at);

CREATE TABLE kb.dashboard_links (
    link_hash bytea PRIMARY KEY CHECK (octet_length(link_hash) = 32),
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
    label text NOT NULL CHECK (label <> '' AND length(label) <= 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
);

CREATE TABLE kb.possible_duplicates (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    memory_id uuid NOT NULL,
    duplicate_of uuid NOT NULL,
    similarity double precision NOT NULL CHECK (similarity >= -1 AND similarity <= 1),
    decision text CHECK (decision IN ('keep_both', 'supersede', 'merge')),
    kept_id uuid,
    decided_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (memory_id <> duplicate_of),
    CHECK ((decision IS NULL) = (decided_at IS NULL)),
    UNIQUE (actor_id, memory_id, duplicate_of)
);
CREATE INDEX possible_duplicates_open_idx ON kb.possible_duplicates (actor_id, created_at)
    WHERE decision IS NULL;
"""

# Each reads its part of a page of memories in the page's order (memory/browse_store.py).
BROWSE_INDEXES = {
    "graph_objects_memory_created_idx": "kb.graph_objects (actor_id, created_at, canonical_id) "
    "WHERE type = 'Memory' AND is_head",
    "graph_objects_global_memory_created_idx": "kb.graph_objects (created_at, canonical_id) "
    "WHERE type = 'Memory' AND is_head AND scope = 'global'",
    "graph_objects_memory_confidence_idx": "kb.graph_objects "
    "(actor_id, (coalesce((properties ->> 'confidence')::float8, 0.7)), created_at, canonical_id) "
    "WHERE type = 'Memory' AND is_head",
    "memory_recalls_actor_idx": "kb.memory_recalls (actor_id, canonical_id, recalled_at)",
}

COMMENTS = {
    "dashboard_sessions": "Signed-in dashboard browsers: the sha256 of the secret in its cookie, the "
    "principal, the API token it was opened with (if any), expiry and sign-out. Only through "
    "the kb.*dashboard_session* functions for the application role.",
    "dashboard_links": "One-time dashboard sign-in links (emergent-memory ui): the sha256 of "
    "the secret, the principal, expiry and use.",
    "possible_duplicates": "Pairs of memories that the duplicate check found close but not the "
    "same fact, and the decision a person took: keep_both, supersede or merge.",
}

# Each returns the session and the principal it acts for. A session opened with an API token
# lives while that token does (not revoked, not expired).
FUNCTIONS = (
    """
CREATE FUNCTION kb.start_dashboard_session(
    p_token_hash bytea, p_session_hash bytea, p_lifetime_seconds integer)
RETURNS TABLE (
    session_id uuid,
    actor_id uuid,
    project_id uuid,
    scopes text[],
    label text,
    expires_at timestamptz
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    presented kb.api_tokens%ROWTYPE;
    started kb.dashboard_sessions%ROWTYPE;
BEGIN
    IF p_token_hash IS NULL OR octet_length(p_token_hash) <> 32
       OR p_session_hash IS NULL OR octet_length(p_session_hash) <> 32
       OR p_lifetime_seconds IS NULL OR p_lifetime_seconds <= 0 THEN
        RETURN;
    END IF;
    SELECT * INTO presented FROM kb.api_tokens t
    WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL
      AND (t.expires_at IS NULL OR t.expires_at > now());
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- sessions that ended more than a day ago are of no use to anyone
    DELETE FROM kb.dashboard_sessions s
    WHERE coalesce(s.ended_at, s.expires_at) < now() - interval '1 day';
    INSERT INTO kb.dashboard_sessions (session_hash, token_id, actor_id, project_id, scopes,
                                       label, expires_at)
    VALUES (p_session_hash, presented.id, presented.actor_id, presented.project_id,
            presented.scopes, 'token ' || presented.name,
            least(now() + make_interval(secs => p_lifetime_seconds),
                  coalesce(presented.expires_at, 'infinity')))
    RETURNING * INTO started;
    UPDATE kb.api_tokens t SET last_used_at = now() WHERE t.id = presented.id;
    RETURN QUERY SELECT started.id, started.actor_id, started.project_id, started.scopes,
                        started.label, started.expires_at;
END
$$
""",
    """
CREATE FUNCTION kb.redeem_dashboard_link(
    p_link_hash bytea, p_session_hash bytea, p_lifetime_seconds integer)
RETURNS TABLE (
    session_id uuid,
    actor_id uuid,
    project_id uuid,
    scopes text[],
    label text,
    expires_at timestamptz
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    link kb.dashboard_links%ROWTYPE;
    started kb.dashboard_sessions%ROWTYPE;
BEGIN
    IF p_link_hash IS NULL OR octet_length(p_link_hash) <> 32
       OR p_session_hash IS NULL OR octet_length(p_session_hash) <> 32
       OR p_lifetime_seconds IS NULL OR p_lifetime_seconds <= 0 THEN
        RETURN;
    END IF;
    -- used once: a second request with the same link finds nothing
    UPDATE kb.dashboard_links l SET used_at = now()
    WHERE l.link_hash = p_link_hash AND l.used_at IS NULL AND l.expires_at > now()
    RETURNING * INTO link;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    DELETE FROM kb.dashboard_links l WHERE l.expires_at < now() - interval '1 day';
    INSERT INTO kb.dashboard_sessions (session_hash, token_id, actor_id, project_id, scopes,
                                       label, expires_at)
    VALUES (p_session_hash, NULL, link.actor_id, link.project_id, link.scopes, link.label,
            now() + make_interval(secs => p_lifetime_seconds))
    RETURNING * INTO started;
    RETURN QUERY SELECT started.id, started.actor_id, started.project_id, started.scopes,
                        started.label, started.expires_at;
END
$$
""",
    """
CREATE FUNCTION kb.dashboard_session(p_session_hash bytea)
RETURNS TABLE (
    session_id uuid,
    actor_id uuid,
    project_id uuid,
    scopes text[],
    label text,
    expires_at timestamptz
)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    SELECT s.id, s.actor_id, s.project_id, s.scopes, s.label, s.expires_at
    FROM kb.dashboard_sessions s
    LEFT JOIN kb.api_tokens t ON t.id = s.token_id
    WHERE p_session_hash IS NOT NULL AND octet_length(p_session_hash) = 32
      AND s.session_hash = p_session_hash AND s.ended_at IS NULL AND s.expires_at > now()
      AND (s.token_id IS NULL
           OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())))
$$
""",
    """
CREATE FUNCTION kb.end_dashboard_session(p_session_hash bytea)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    WITH ended AS (
        UPDATE kb.dashboard_sessions s SET ended_at = now()
        WHERE s.session_hash = p_session_hash AND s.ended_at IS NULL
        RETURNING 1
    )
    SELECT count(*) > 0 FROM ended
$$
""",
)
SIGNATURES = (
    "kb.start_dashboard_session(bytea, bytea, integer)",
    "kb.redeem_dashboard_link(bytea, bytea, integer)",
    "kb.dashboard_session(bytea)",
    "kb.end_dashboard_session(bytea)",
)


def upgrade() -> None:
    op.execute(TABLES)
    for table, comment in COMMENTS.items():
        assert "'" not in comment
        op.execute(f"COMMENT ON TABLE kb.{table} IS '{comment}'")
    # sessions and links: the owner and administrators only; the application role goes
    # through the functions below
    for table in ("dashboard_sessions", "dashboard_links"):
        op.execute(f"REVOKE ALL ON kb.{table} FROM PUBLIC, {APP}")
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.{table} TO {ADMIN}")

    op.execute("ALTER TABLE kb.possible_duplicates ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE kb.possible_duplicates FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY possible_duplicates_admin ON kb.possible_duplicates FOR ALL TO {ADMIN} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(
        f"CREATE POLICY possible_duplicates_own ON kb.possible_duplicates FOR ALL TO {APP} "
        f"USING ({OWN_ROWS}) WITH CHECK ({OWN_ROWS})"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.possible_duplicates TO {APP}, {ADMIN}")

    for name, definition in BROWSE_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON {definition}")

    for function in FUNCTIONS:
        op.execute(function)
    for signature in SIGNATURES:
        op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
        op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO {APP}, {ADMIN}")


def downgrade() -> None:
    for signature in reversed(SIGNATURES):
        op.execute(f"DROP FUNCTION {signature}")
    for table in reversed(tuple(COMMENTS)):
        op.execute(f"DROP TABLE kb.{table}")
    for name in reversed(tuple(BROWSE_INDEXES)):
        op.execute(f"DROP INDEX kb.{name}")
