"""Similarity is always a finite number: kb.cosine_similarity, 0 when a vector has no length.

Revision ID: 0014_finite_similarity
Revises: 0013_lifecycle
Create Date: 2026-11-28

pgvector's cosine distance between a vector and the zero vector is NaN (the angle of a vector
without length is undefined), and an embedding provider may give the zero vector: the tests'
bag-of-words embedder does for a text without words ("!!!", "<->"), any provider may. Recall
answered similarity NaN then, which clients refuse (a tool result holding NaN is not valid
JSON), and every comparison with NaN is false or, in PostgreSQL's ordering, above every
number.

- kb.cosine_similarity(a, b): 1 - (a <=> b), and 0 when that is NaN: a vector without length
  is similar to nothing (null when either vector is null). One SQL expression, IMMUTABLE, so
  the planner inlines it. emergent_memory/embeddings/vectors.py holds its Python mirror
  (cosine_similarity), which tests/test_finite_answers.py holds equal to it.
- kb.recall_memories_for is written out whole in 0014_finite_similarity/recall_memories_for.sql:
  0013's function with each vector branch's similarity from kb.cosine_similarity; its
  signature, ordering (by <=>, which the HNSW index serves), settings, grants and comment are
  unchanged. The application's own queries (the nearest memory of a save, capture's nearest
  memories, the episodes' search) use kb.cosine_similarity too.

The downgrade puts back 0013's recall function (its file) and drops kb.cosine_similarity.
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0014_finite_similarity"
down_revision: str | None = "0013_lifecycle"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERSIONS = Path(__file__).resolve().parent
RECALL_FOR = VERSIONS / "0014_finite_similarity" / "recall_memories_for.sql"
# what the downgrade writes back: kb.recall_memories_for as 0013 made it
RECALL_FOR_BEFORE = VERSIONS / "0013_lifecycle" / "recall_memories_for.sql"

# NaN = NaN holds in PostgreSQL, so the test catches it; a null vector gives null (the ELSE)
COSINE_SIMILARITY = """
CREATE FUNCTION kb.cosine_similarity(a vector, b vector)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN (a <=> b) = 'NaN'::double precision THEN 0 ELSE 1 - (a <=> b) END
"""

COSINE_SIMILARITY_COMMENT = (
    "COMMENT ON FUNCTION kb.cosine_similarity(vector, vector) IS 'Cosine similarity of two "
    "vectors, 1 - (a <=> b), and 0 when either has no length (where the distance is NaN): "
    "similar to nothing. Null when either is null. Inlined by the planner.'"
)


def upgrade() -> None:
    op.execute(COSINE_SIMILARITY)
    op.execute(COSINE_SIMILARITY_COMMENT)
    op.execute(RECALL_FOR.read_text())


def downgrade() -> None:
    op.execute(RECALL_FOR_BEFORE.read_text())
    op.execute("DROP FUNCTION kb.cosine_similarity(vector, vector)")
