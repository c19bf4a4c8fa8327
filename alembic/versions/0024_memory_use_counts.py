"""How often each actor used each memory, kept as the recall log grows.

Revision ID: 0024_memory_use_counts
Revises: 0023_project_names
Create Date: 2026-12-06

The Browse page's "most used" and "least used" sorts, its "used from / before" filters and a
session start's ranking read how often the actor used each memory (the tools' recalls,
kb.memory_recalls). They counted it from the log on every request: at 100,000 memories and
132,144 log rows, about 200 ms before the page's first row.

- kb.memory_use_counts: one row per actor and memory it recalled: `uses` (its rows in
  kb.memory_recalls) and `last_used` (the latest). Filled from the log here, then kept by
  the trigger below: the same numbers the log's GROUP BY gives, read from an index.
- kb.count_memory_use(): the trigger on kb.memory_recalls (after INSERT or DELETE, for each
  row with an actor) that adds or takes away the row's use. SECURITY DEFINER (search_path
  pinned) so that it needs no grant on the table: it only mirrors the row the caller wrote,
  which row-level security already let it write.
- The table has row-level security like kb.memory_recalls: each actor reads its own rows
  (and emergent_memory_admin all); only the trigger writes.

The downgrade drops the trigger, the function and the table (the log keeps every use).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024_memory_use_counts"
down_revision: str | None = "0023_project_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
OWN_ROWS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

TABLE = """
CREATE TABLE kb.memory_use_counts (
    actor_id uuid NOT NULL,
    canonical_id uuid NOT NULL,
    uses bigint NOT NULL CHECK (uses > 0),
    last_used timestamptz NOT NULL,
    PRIMARY KEY (actor_id, canonical_id)
)
"""

COMMENT = (
    "COMMENT ON TABLE kb.memory_use_counts IS 'How often each actor used (recalled) each "
    "memory and when last: kb.memory_recalls counted, kept by the trigger "
    "kb.count_memory_use.'"
)

BACKFILL = """
INSERT INTO kb.memory_use_counts (actor_id, canonical_id, uses, last_used)
SELECT actor_id, canonical_id, count(*), max(recalled_at)
FROM kb.memory_recalls WHERE actor_id IS NOT NULL
GROUP BY actor_id, canonical_id
"""

COUNT_USE = """
CREATE FUNCTION kb.count_memory_use() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.actor_id IS NOT NULL THEN
            INSERT INTO kb.memory_use_counts AS c (actor_id, canonical_id, uses, last_used)
            VALUES (NEW.actor_id, NEW.canonical_id, 1, NEW.recalled_at)
            ON CONFLICT (actor_id, canonical_id) DO UPDATE
            SET uses = c.uses + 1, last_used = greatest(c.last_used, EXCLUDED.last_used);
        END IF;
        RETURN NEW;
    END IF;
    IF OLD.actor_id IS NOT NULL THEN
        -- the last use taken away: the memory was never used; else one use fewer, and the
        -- latest of those left (the row deleted is no longer in the log)
        DELETE FROM kb.memory_use_counts c
        WHERE c.actor_id = OLD.actor_id AND c.canonical_id = OLD.canonical_id AND c.uses <= 1;
        IF NOT FOUND THEN
            UPDATE kb.memory_use_counts c
            SET uses = c.uses - 1,
                last_used = coalesce(
                    (SELECT max(r.recalled_at) FROM kb.memory_recalls r
                     WHERE r.canonical_id = OLD.canonical_id AND r.actor_id = OLD.actor_id),
                    c.last_used)
            WHERE c.actor_id = OLD.actor_id AND c.canonical_id = OLD.canonical_id;
        END IF;
    END IF;
    RETURN OLD;
END
$$
"""


def upgrade() -> None:
    op.execute(TABLE)
    op.execute(COMMENT)
    op.execute(BACKFILL)
    # the most used first (or least), and the last used first: read in the sort's order
    op.execute(
        "CREATE INDEX memory_use_counts_uses_idx ON kb.memory_use_counts "
        "(actor_id, uses, canonical_id)"
    )
    op.execute(
        "CREATE INDEX memory_use_counts_last_used_idx ON kb.memory_use_counts (actor_id, last_used)"
    )
    op.execute(COUNT_USE)
    op.execute("REVOKE ALL ON FUNCTION kb.count_memory_use() FROM PUBLIC")
    op.execute(
        "CREATE TRIGGER memory_recalls_count_use AFTER INSERT OR DELETE ON kb.memory_recalls "
        "FOR EACH ROW EXECUTE FUNCTION kb.count_memory_use()"
    )
    op.execute("ALTER TABLE kb.memory_use_counts ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE kb.memory_use_counts FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY memory_use_counts_admin ON kb.memory_use_counts FOR ALL TO {ADMIN} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(
        f"CREATE POLICY memory_use_counts_read ON kb.memory_use_counts FOR SELECT TO {APP} "
        f"USING ({OWN_ROWS})"
    )
    op.execute(f"GRANT SELECT ON kb.memory_use_counts TO {APP}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.memory_use_counts TO {ADMIN}")


def downgrade() -> None:
    op.execute("DROP TRIGGER memory_recalls_count_use ON kb.memory_recalls")
    op.execute("DROP FUNCTION kb.count_memory_use()")
    op.execute("DROP TABLE kb.memory_use_counts")
