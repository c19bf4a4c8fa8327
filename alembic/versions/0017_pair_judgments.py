"""Why a pair of memories is waiting for a decision, and the LLM judge's verdicts on pairs.

Revision ID: 0017_pair_judgments
Revises: 0016_conflicts
Create Date: 2026-11-29

- kb.pair_judgments: one row per actor, judge model and pair of texts (an existing memory's
  and a new save's) that the save's LLM judge decided: same, corrects, conflicts or distinct.
  The pair is a SHA-256 of the model and the two texts, never the texts; the verdict is read
  back instead of asking the model again for the same pair.
- kb.possible_duplicates.reason: why the save kept the pair and reported it (the rule's
  reason, the authority that kept a weaker source's memory beside a stronger one, the
  judge's verdict, or an edit), for the review queue to say; NULL for pairs recorded before.

The table has row-level security like kb.llm_calls: a row is visible to, and writable by, the
actor it belongs to (and emergent_memory_admin). The downgrade drops the table (the verdicts
are a cache: the rules decide without them) and the column (the pairs stay).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017_pair_judgments"
down_revision: str | None = "0016_conflicts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
OWN_ROWS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

TABLE = """
CREATE TABLE kb.pair_judgments (
    actor_id uuid NOT NULL,
    pair_key text NOT NULL CHECK (pair_key ~ '^[0-9a-f]{64}$'),
    model text NOT NULL,
    verdict text NOT NULL CHECK (verdict IN ('same', 'corrects', 'conflicts', 'distinct')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (actor_id, pair_key)
)
"""

COMMENT = (
    "COMMENT ON TABLE kb.pair_judgments IS 'The save''s LLM judge''s verdict on a pair of "
    "memories the rules could not decide, per actor: a SHA-256 of the model and the two texts "
    "(never the texts) and the verdict, read back instead of asking again.'"
)


def upgrade() -> None:
    op.execute(
        "ALTER TABLE kb.possible_duplicates ADD COLUMN reason text "
        "CHECK (reason IS NULL OR char_length(reason) <= 300)"
    )
    op.execute(
        "COMMENT ON COLUMN kb.possible_duplicates.reason IS 'Why the save kept both and "
        "reported the pair: the rule''s reason, authority''s, the LLM judge''s verdict, or an "
        "edit.'"
    )
    op.execute(TABLE)
    op.execute(COMMENT)
    op.execute("ALTER TABLE kb.pair_judgments ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE kb.pair_judgments FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY pair_judgments_admin ON kb.pair_judgments FOR ALL TO {ADMIN} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(
        f"CREATE POLICY pair_judgments_own ON kb.pair_judgments FOR ALL TO {APP} "
        f"USING ({OWN_ROWS}) WITH CHECK ({OWN_ROWS})"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.pair_judgments TO {APP}, {ADMIN}")


def downgrade() -> None:
    op.execute("DROP TABLE kb.pair_judgments")
    op.execute("ALTER TABLE kb.possible_duplicates DROP COLUMN reason")
