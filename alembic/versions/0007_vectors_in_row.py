"""Faster, more exact vector search: vectors stored in the row, a better HNSW graph, and a
wider HNSW search in recall (benchmarks/README.md, section 1).

Revision ID: 0007_vectors_in_row
Revises: 0006_row_level_security
Create Date: 2026-11-23

- A memory's row (about 2.2 KB with its 1.5 KB vector) is over PostgreSQL's 2 KB TOAST
  threshold, and pgvector's type is stored out of line by default, so every vector read for
  an exact sort or a recheck was two more index lookups in the TOAST table: 7 of the 10 ms
  of a recall at 100,000 memories spread over 100 actors. The embedding column becomes
  STORAGE MAIN (kept in the row, moved out only as a last resort) and the table's
  toast_tuple_target 4000 bytes (a typical memory stays whole; a long one has its
  properties and text index compressed or moved out first). The vectors of existing live
  memories are rewritten into their rows once.
- The HNSW index is rebuilt with ef_construction = 400 (was pgvector's default, 64), and
  kb.recall_memories_for searches it with hnsw.ef_search = 200 (was 100). On the benchmark's
  100,000 memories of one actor (a templated corpus, dense with near-identical sentences),
  the vector branch's recall@10 against exact search was 0.63 before; after, 0.97 to 0.99
  over three builds (HNSW builds are randomised), for about 1.5 ms more per recall. With
  ef_construction 200 it was 0.90 to 0.99 over five builds; m = 24 or 32 did no better.

Upgrading a large database takes a while (the rewrite and the index build; one to two minutes
for 100,000 memories on two cores) and holds an exclusive lock on kb.graph_objects
meanwhile: run it at a quiet time. Afterwards, VACUUM kb.graph_objects (autovacuum will do it
too) to reclaim the space of the rewritten rows.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007_vectors_in_row"
down_revision: str | None = "0006_row_level_security"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RECALL_FOR = (
    "kb.recall_memories_for(uuid, uuid, text, vector, text, text, text, integer, integer, "
    "integer, double precision, double precision, double precision, double precision)"
)
HNSW = "kb.graph_objects_embedding_hnsw_idx"


def _create_hnsw(options: str) -> None:
    # the build is much faster when the graph fits in memory (pgvector says when it does not)
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(
        "CREATE INDEX graph_objects_embedding_hnsw_idx "
        f"ON kb.graph_objects USING hnsw (embedding vector_cosine_ops) {options} "
        "WHERE is_head AND deleted_at IS NULL"
    )


# 0006 makes the migrating role a member of the admin role unless it already is one. On
# PostgreSQL 16+, a role with CREATEROLE that created the group roles itself is a member
# "with ADMIN OPTION" but does not inherit the role's rights, so the policies still applied
# to it: it saw no row (and the rewrite below would have updated none). Give it the rights.
INHERIT_ADMIN = """
DO $$
BEGIN
    IF NOT (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'emergent_memory_admin', 'USAGE') THEN
        BEGIN
            EXECUTE format('GRANT emergent_memory_admin TO %I WITH INHERIT TRUE', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION '% is subject to row-level security and may not grant itself '
                'the emergent_memory_admin role', current_user
            USING HINT = format('Ask a superuser to run: GRANT emergent_memory_admin TO %I; '
                                'then migrate again.', current_user);
        END;
    END IF;
END
$$
"""


def upgrade() -> None:
    op.execute(INHERIT_ADMIN)
    op.execute("ALTER TABLE kb.graph_objects SET (toast_tuple_target = 4000)")
    op.execute("ALTER TABLE kb.graph_objects ALTER COLUMN embedding SET STORAGE MAIN")
    # Without the index first, the rewrite does not insert every vector into it again.
    op.execute(f"DROP INDEX {HNSW}")
    # A new value (not the stored pointer) is what makes PostgreSQL store it anew, in the row.
    op.execute(
        "UPDATE kb.graph_objects SET embedding = embedding::real[]::vector "
        "WHERE embedding IS NOT NULL AND is_head AND deleted_at IS NULL"
    )
    _create_hnsw("WITH (m = 16, ef_construction = 400)")
    op.execute(f"ALTER FUNCTION {RECALL_FOR} SET hnsw.ef_search = 200")


def downgrade() -> None:
    op.execute(f"ALTER FUNCTION {RECALL_FOR} SET hnsw.ef_search = 100")
    op.execute(f"DROP INDEX {HNSW}")
    _create_hnsw("")  # pgvector's defaults, as 0002 made it
    op.execute("ALTER TABLE kb.graph_objects ALTER COLUMN embedding SET STORAGE EXTERNAL")
    op.execute("ALTER TABLE kb.graph_objects RESET (toast_tuple_target)")
