"""Capture: claims fair across actors, dead windows' turns kept for a retention period, and
error records without echoed text.

Revision ID: 0018_capture_waiting
Revises: 0017_pair_judgments
Create Date: 2026-11-29

- kb.claim_capture_windows takes due windows round-robin across actors: each actor's oldest
  due window first (the actor whose oldest has waited longest first), then each actor's
  second, and so on, so that one actor's backlog or rate limit never holds another's windows
  back. Same signature, same SKIP LOCKED claim and lock timeout as 0011.
- kb.capture_windows.turns_deleted_at: when the turns of a dead window were deleted after the
  retention period (NULL: still kept, and `capture retry` can revive the window). Only the
  window's ids, ranges and reason stay.
- kb.expire_dead_capture_windows(p_age, p_overlap), a SECURITY DEFINER function like
  kb.cut_idle_capture_windows (workers serve every actor): the dead windows that died more
  than p_age seconds ago get turns_deleted_at, their own turns are deleted (less the turns a
  later window still waiting reads as context, p_overlap before it), and so are the turns
  their sessions kept only for them (the rule of capture_store.PRUNE_TURNS, reading such a
  window as done).
- Error records written before this revision may quote what the API echoed (the prompt):
  `last_error` of capture windows and `error` of kb.llm_calls keep the status and the error
  type, the API's message (and what followed it) removed; a malformed answer's invented property name
  becomes "an unexpected property". Not undone by the downgrade (the text is gone).

The downgrade drops the function and the column (the turns already deleted stay deleted) and
restores 0011's claim.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018_capture_waiting"
down_revision: str | None = "0017_pair_judgments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"

# Each actor's due windows ranked by age; the claim takes rank 1 of every actor (oldest
# first), then rank 2, ... The ranking is a CTE of a few candidates (FOR UPDATE cannot sit
# beside a window function), locked by their primary key: a join of every due window with its
# ranking was planned as a nested loop, quadratic in the queue's length. Candidates another
# claim holds are skipped; four times the limit leaves enough for concurrent claims.
FAIR_CLAIM = """
CREATE OR REPLACE FUNCTION kb.claim_capture_windows(p_limit integer,
                                                    p_lock_timeout double precision)
RETURNS TABLE (
    id uuid, actor_id uuid, project_id uuid, session_id text, client text,
    first_turn integer, end_turn integer, attempts integer
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
BEGIN
    UPDATE kb.capture_windows w
    SET status = 'pending', locked_at = NULL, updated_at = now()
    WHERE w.status = 'running'
      AND w.locked_at < now() - make_interval(secs => p_lock_timeout);
    RETURN QUERY
    WITH ranked AS MATERIALIZED (
        SELECT r.id, r.run_after, r.first_turn,
               row_number() OVER (PARTITION BY r.actor_id
                                  ORDER BY r.run_after, r.first_turn, r.id) AS turn
        FROM kb.capture_windows r
        WHERE r.status = 'pending' AND r.run_after <= now()
        ORDER BY turn, r.run_after, r.first_turn, r.id
        LIMIT 4 * p_limit
    ), due AS (
        SELECT w.id, ranked.turn, ranked.run_after, ranked.first_turn FROM ranked
        JOIN kb.capture_windows w ON w.id = ranked.id
        WHERE w.status = 'pending' AND w.run_after <= now()
        ORDER BY ranked.turn, ranked.run_after, ranked.first_turn, ranked.id
        LIMIT p_limit
        FOR UPDATE OF w SKIP LOCKED
    ), claimed AS (
        UPDATE kb.capture_windows w
        SET status = 'running', locked_at = now(), attempts = w.attempts + 1, updated_at = now()
        FROM due WHERE w.id = due.id
        RETURNING w.id, w.actor_id, w.project_id, w.session_id, w.client, w.first_turn,
                  w.end_turn, w.attempts, due.turn, due.run_after
    )
    -- in the order to run them (an UPDATE returns its rows in no set order)
    SELECT c.id, c.actor_id, c.project_id, c.session_id, c.client, c.first_turn, c.end_turn,
           c.attempts
    FROM claimed c
    ORDER BY c.turn, c.run_after, c.first_turn, c.id;
END
$$
"""

# 0011's claim, as it was (the downgrade).
OLDEST_FIRST_CLAIM = """
CREATE OR REPLACE FUNCTION kb.claim_capture_windows(p_limit integer, p_lock_timeout double precision)
RETURNS TABLE (
    id uuid, actor_id uuid, project_id uuid, session_id text, client text,
    first_turn integer, end_turn integer, attempts integer
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
BEGIN
    UPDATE kb.capture_windows w
    SET status = 'pending', locked_at = NULL, updated_at = now()
    WHERE w.status = 'running'
      AND w.locked_at < now() - make_interval(secs => p_lock_timeout);
    RETURN QUERY
    WITH due AS (
        SELECT w.id FROM kb.capture_windows w
        WHERE w.status = 'pending' AND w.run_after <= now()
        ORDER BY w.run_after
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    )
    UPDATE kb.capture_windows w
    SET status = 'running', locked_at = now(), attempts = w.attempts + 1, updated_at = now()
    FROM due WHERE w.id = due.id
    RETURNING w.id, w.actor_id, w.project_id, w.session_id, w.client, w.first_turn,
              w.end_turn, w.attempts;
END
$$
"""

# The windows expired by this call are those with turns_deleted_at = now() (the transaction's
# time). A turn of an expired window is kept only while a later window of its session, not
# done and not expired, reads it as context; then the sessions' turns no window needs any more
# go, as capture_store.PRUNE_TURNS deletes them when a window is done.
EXPIRE_DEAD = """
CREATE FUNCTION kb.expire_dead_capture_windows(p_age double precision, p_overlap integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    expired integer;
BEGIN
    UPDATE kb.capture_windows w
    SET turns_deleted_at = now()
    WHERE w.status = 'dead' AND w.turns_deleted_at IS NULL
      AND w.updated_at < now() - make_interval(secs => p_age);
    GET DIAGNOSTICS expired = ROW_COUNT;
    IF expired = 0 THEN
        RETURN 0;
    END IF;
    DELETE FROM kb.capture_turns t
    USING kb.capture_windows w
    WHERE w.turns_deleted_at = now() AND w.status = 'dead'
      AND t.actor_id = w.actor_id AND t.session_id = w.session_id
      AND t.turn_index >= w.first_turn AND t.turn_index < w.end_turn
      AND NOT EXISTS (
          SELECT 1 FROM kb.capture_windows n
          WHERE n.actor_id = w.actor_id AND n.session_id = w.session_id
            AND n.status <> 'done' AND n.turns_deleted_at IS NULL
            AND n.first_turn > t.turn_index AND n.first_turn - p_overlap <= t.turn_index
      );
    WITH touched AS (
        SELECT DISTINCT w.actor_id, w.session_id FROM kb.capture_windows w
        WHERE w.turns_deleted_at = now() AND w.status = 'dead'
    ), bound AS (
        SELECT s.actor_id, s.session_id,
               CASE WHEN s.turns_windowed = s.turns_received AND waiting.first IS NULL
                    THEN s.turns_windowed
                    ELSE least(s.turns_windowed, waiting.first) - p_overlap
               END AS below
        FROM touched
        JOIN kb.agent_sessions s
          ON s.actor_id = touched.actor_id AND s.session_id = touched.session_id
        CROSS JOIN LATERAL (
            SELECT min(n.first_turn) AS first FROM kb.capture_windows n
            WHERE n.actor_id = s.actor_id AND n.session_id = s.session_id
              AND n.status <> 'done' AND n.turns_deleted_at IS NULL
        ) waiting
    )
    DELETE FROM kb.capture_turns t
    USING bound
    WHERE t.actor_id = bound.actor_id AND t.session_id = bound.session_id
      AND t.turn_index < bound.below;
    RETURN expired;
END
$$
"""

EXPIRE_SIGNATURE = "kb.expire_dead_capture_windows(double precision, integer)"

# Error records of before: the API's message after "HTTP <status> <type>" goes (it may echo
# the prompt), and so does the name of a property the model invented.
SCRUB = r"""
UPDATE kb.{table}
SET {column} = regexp_replace(
        regexp_replace({column}, '(HTTP [0-9]{{3}} [a-z_]+): .*$', '\1'),
        'Additional properties are not allowed .*$', 'an unexpected property')
WHERE {column} ~ 'HTTP [0-9]{{3}} [a-z_]+: ' OR {column} ~ 'Additional properties are not allowed'
"""


def upgrade() -> None:
    op.execute(
        "ALTER TABLE kb.capture_windows ADD COLUMN turns_deleted_at timestamptz "
        "CHECK (turns_deleted_at IS NULL OR status = 'dead')"
    )
    op.execute(
        "COMMENT ON COLUMN kb.capture_windows.turns_deleted_at IS 'When the turns of this dead "
        "window were deleted after the retention period; NULL: kept (capture retry revives "
        "it).'"
    )
    op.execute(
        "CREATE INDEX capture_windows_dead_idx ON kb.capture_windows (updated_at) "
        "WHERE status = 'dead' AND turns_deleted_at IS NULL"
    )
    op.execute(FAIR_CLAIM)
    op.execute(EXPIRE_DEAD)
    op.execute(f"REVOKE ALL ON FUNCTION {EXPIRE_SIGNATURE} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {EXPIRE_SIGNATURE} TO {APP}, {ADMIN}")
    op.execute(SCRUB.format(table="capture_windows", column="last_error"))
    op.execute(SCRUB.format(table="llm_calls", column="error"))


def downgrade() -> None:
    op.execute(f"DROP FUNCTION {EXPIRE_SIGNATURE}")
    op.execute(OLDEST_FIRST_CLAIM)
    op.execute("DROP INDEX kb.capture_windows_dead_idx")
    op.execute("ALTER TABLE kb.capture_windows DROP COLUMN turns_deleted_at")
