"""Does the configured embedding model fit the database? Checked once, at start-up."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from psycopg import Connection

from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.errors import EmbeddingMismatch

logger = logging.getLogger(__name__)

# pgvector keeps a vector column's dimension in atttypmod.
COLUMN_DIMENSIONS = """
SELECT atttypmod FROM pg_attribute
WHERE attrelid = 'kb.graph_objects'::regclass AND attname = 'embedding'
"""

OTHER_MODELS = """
SELECT embedding_model, count(*) FROM kb.graph_objects
WHERE is_head AND deleted_at IS NULL AND embedding_model IS DISTINCT FROM %(model)s
  AND type = ANY(%(types)s)
GROUP BY embedding_model
ORDER BY embedding_model NULLS FIRST
"""


def database_dimensions(conn: Connection[Any]) -> int:
    row = conn.execute(COLUMN_DIMENSIONS).fetchone()
    assert row is not None, "kb.graph_objects.embedding is missing: is the database migrated?"
    return int(row[0])


def check_compatible(
    conn: Connection[Any], provider: EmbeddingProvider, types: Collection[str]
) -> dict[str | None, int]:
    """Refuse a model whose vectors do not fit the column; report the live objects of the
    embedded `types` (the caller's: the graph's types mean nothing here) that have no vector
    of this model.

    Returns how many of them have no vector (key None) or one from another model: recall
    finds those by full text only until they are re-embedded.
    """
    stored = database_dimensions(conn)
    if provider.dimensions != stored:
        raise EmbeddingMismatch(
            f"the embedding model {provider.model_name} makes {provider.dimensions}-dimension "
            f"vectors but the database stores {stored}-dimension vectors. Use a model with "
            f"{stored} dimensions (OpenAI text-embedding-3 models can: set "
            f"EMERGENT_MEMORY_EMBEDDING_DIMENSIONS={stored} and "
            "EMERGENT_MEMORY_EMBEDDING_SEND_DIMENSIONS=true), then re-embed the memories "
            "with the new model (`emergent-memory reembed`)"
        )
    others = {
        model: count
        for model, count in conn.execute(
            OTHER_MODELS, {"model": provider.model_name, "types": sorted(types)}
        )
    }
    for model, count in others.items():
        logger.warning(
            "%d %s objects have %s: recall finds them by full text only until they are "
            "re-embedded with %s",
            count,
            "/".join(sorted(types)),
            "no embedding yet" if model is None else f"embeddings from {model}",
            provider.model_name,
        )
    return others
