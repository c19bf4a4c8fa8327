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
This one was rewritten since, for reading only (SQL written out instead of assembled from
templates): what it creates and drops is byte for byte the same (tests/test_schema_definitions.py).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007_vectors_in_row"
down_revision: str | None = "0006_row_level_security"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The HNSW index as this revision builds it, and as 0002 built it (pgvector's defaults).
HNSW_TUNED = """
CREATE INDEX graph_objects_embedding_hnsw_idx
ON kb.graph_objects USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 400)
WHERE is_head AND deleted_at IS NULL
"""
HNSW_DEFAULT = """
CREATE INDEX graph_objects_embedding_hnsw_idx
ON kb.graph_objects USING hnsw (embedding vector_cosine_ops)
WHERE is_head AND deleted_at IS NULL
"""
# the build is much faster when the graph fits in memory (pgvector says when it does not)
BUILD_MEMORY = "SET LOCAL maintenance_work_mem = '256MB'"

RECALL_SEARCHES_WIDER = """
ALTER FUNCTION kb.recall_memories_for(
    uuid, uuid, text, vector, text, text, text, integer, integer, integer,
    double precision, double precision, double precision, double precision
) SET hnsw.ef_search = 200
"""
RECALL_SEARCHES_AS_BEFORE = """
ALTER FUNCTION kb.recall_memories_for(
    uuid, uuid, text, vector, text, text, text, integer, integer, integer,
    double precision, double precision, double precision, double precision
) SET hnsw.ef_search = 100
"""


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
    op.execute("DROP INDEX kb.graph_objects_embedding_hnsw_idx")
    # A new value (not the stored pointer) is what makes PostgreSQL store it anew, in the row.
    op.execute(
        "UPDATE kb.graph_objects SET embedding = embedding::real[]::vector "
        "WHERE embedding IS NOT NULL AND is_head AND deleted_at IS NULL"
    )
    op.execute(BUILD_MEMORY)
    op.execute(HNSW_TUNED)
    op.execute(RECALL_SEARCHES_WIDER)


def downgrade() -> None:
    op.execute(RECALL_SEARCHES_AS_BEFORE)
    op.execute("DROP INDEX kb.graph_objects_embedding_hnsw_idx")
    op.execute(BUILD_MEMORY)
    op.execute(HNSW_DEFAULT)
    op.execute("ALTER TABLE kb.graph_objects ALTER COLUMN embedding SET STORAGE EXTERNAL")
    op.execute("ALTER TABLE kb.graph_objects RESET (toast_tuple_target)")
