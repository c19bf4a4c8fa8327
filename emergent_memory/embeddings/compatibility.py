"""Does the configured embedding model fit the database? Checked once, at start-up."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from psycopg import Connection, sql
from psycopg.types.json import Jsonb

from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.errors import EmbeddingMismatch

logger = logging.getLogger(__name__)

# pgvector keeps a vector column's dimension in atttypmod.
COLUMN_DIMENSIONS = """
SELECT atttypmod FROM pg_attribute
WHERE attrelid = 'kb.graph_objects'::regclass AND attname = 'embedding'
"""

# What has text to embed but no vector of a model (`FROM {lacking_vector}`, also in
# memory/store.py's re-embedding queries): live objects `o` of the embedded types
# (%(embedded_text)s, as JSON: per type, the property that holds its text, `t.property`)
# whose text property holds some text (the ones the embedding worker would embed) and whose
# vector, if any, is not from %(model)s.
LACKING_VECTOR = """
kb.graph_objects o
JOIN jsonb_each_text(%(embedded_text)s) AS t(type, property) ON t.type = o.type
WHERE o.is_head AND o.deleted_at IS NULL AND o.embedding_model IS DISTINCT FROM %(model)s
  AND o.properties ->> t.property ~ '[^[:space:]]'
"""

# Those objects, by the model of their vector.
OTHER_MODELS = """
SELECT o.embedding_model, count(*)
FROM {lacking_vector}
GROUP BY o.embedding_model
ORDER BY o.embedding_model NULLS FIRST
"""


def database_dimensions(conn: Connection[Any]) -> int:
    row = conn.execute(COLUMN_DIMENSIONS).fetchone()
    assert row is not None, "kb.graph_objects.embedding is missing: is the database migrated?"
    return int(row[0])


def check_compatible(
    conn: Connection[Any], provider: EmbeddingProvider, embedded_text: Mapping[str, str]
) -> dict[str | None, int]:
    """Refuse a model whose vectors do not fit the column; report the live objects of the
    embedded types (`embedded_text`, the caller's: per type, the property that holds the text
    to embed; the graph's types mean nothing here) that have text but no vector of this
    model.

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
            sql.SQL(OTHER_MODELS).format(lacking_vector=sql.SQL(LACKING_VECTOR)),
            {"model": provider.model_name, "embedded_text": Jsonb(embedded_text)},
        )
    }
    for model, count in others.items():
        logger.warning(
            "%d %s objects have %s: recall finds them by full text only until they are "
            "re-embedded with %s",
            count,
            "/".join(sorted(embedded_text)),
            "no embedding yet" if model is None else f"embeddings from {model}",
            provider.model_name,
        )
    return others
