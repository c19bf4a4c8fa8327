"""The composition root: settings -> database -> pool -> embedder -> MemoryService."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from emergent_memory import migrations
from emergent_memory.database import connect, create_pool, open_database
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.compatibility import check_compatible
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings
from emergent_memory.errors import EmbeddingUnavailable
from emergent_memory.memory.service import MemoryConfig, MemoryService
from emergent_memory.settings import Settings

logger = logging.getLogger(__name__)

# Cosine similarity at which a new memory supersedes an existing one, per embedding model.
# all-MiniLM-L6-v2: calibrated on 360 labelled pairs (benchmarks/results/dedup.md): 0.87 is the
# lowest threshold with precision >= 0.95 (5 of 170 distinct facts wrongly superseded), at
# recall 0.53 (about half the rewordings and corrections are saved as new memories instead).
# No single threshold does better on both; see benchmarks/README.md.
DEDUP_THRESHOLDS = {LOCAL_MODEL_NAME: 0.87}
# For a model nobody calibrated: only near-identical texts supersede.
UNCALIBRATED_DEDUP_THRESHOLD = 0.95


def build_embedder(settings: Settings) -> EmbeddingProvider:
    if settings.embedding_provider == "local":
        return LocalEmbeddings()
    # both are required with the openai provider (Settings checks it)
    assert settings.embedding_model is not None
    assert settings.embedding_dimensions is not None
    api_key = settings.embedding_api_key
    return OpenAICompatibleEmbeddings(
        base_url=settings.embedding_base_url,
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        api_key=None if api_key is None else api_key.get_secret_value(),
        query_prefix=settings.embedding_query_prefix,
        document_prefix=settings.embedding_document_prefix,
        timeout=settings.embedding_timeout,
        max_retries=settings.embedding_max_retries,
        send_dimensions=settings.embedding_send_dimensions,
    )


def dedup_threshold(settings: Settings, model_name: str) -> float:
    if settings.dedup_threshold is not None:
        return settings.dedup_threshold
    return DEDUP_THRESHOLDS.get(model_name, UNCALIBRATED_DEDUP_THRESHOLD)


def memory_config(settings: Settings, model_name: str) -> MemoryConfig:
    return MemoryConfig(
        dedup_threshold=dedup_threshold(settings, model_name),
        max_content_length=settings.max_content_length,
        recall_candidates=settings.recall_candidates,
        recall_rrf_k=settings.recall_rrf_k,
        recall_lexical_weight=settings.recall_lexical_weight,
        recall_vector_weight=settings.recall_vector_weight,
        recall_confidence_weight=settings.recall_confidence_weight,
        recall_min_similarity=settings.recall_min_similarity,
    )


@contextmanager
def open_memory_service(
    settings: Settings,
    *,
    migrate: bool = False,
    embedder: EmbeddingProvider | None = None,
    load_model: Literal["now", "background", "lazily"] = "now",
) -> Iterator[MemoryService]:
    """Everything a server or command needs, opened once and closed in reverse order.

    Refuses a database that is not at the schema head (unless `migrate`) and an embedding
    model whose vectors do not fit it. The local model is loaded off the request path: here
    ("now"), in a thread while the caller goes on ("background": the first request that
    needs it waits), or on first use ("lazily", for commands that may not embed at all).
    """
    embedder = embedder or build_embedder(settings)
    with open_database(settings.database_url, settings.data_dir) as db:
        migrations.require_current_schema(db.url, migrate=migrate)
        with connect(db.url) as conn:
            check_compatible(conn, embedder)
        if isinstance(embedder, LocalEmbeddings) and load_model == "now":
            embedder.load()
        elif isinstance(embedder, LocalEmbeddings) and load_model == "background":
            threading.Thread(target=_load_quietly, args=(embedder,), daemon=True).start()
        pool = create_pool(
            db.url,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            timeout=settings.pool_timeout,
        )
        try:
            yield MemoryService(pool, embedder, memory_config(settings, embedder.model_name))
        finally:
            pool.close()
            close = getattr(embedder, "close", None)
            if callable(close):
                close()


def _load_quietly(embedder: LocalEmbeddings) -> None:
    try:
        embedder.load()
    except EmbeddingUnavailable as error:  # requests degrade to full text and say so
        logger.error("%s", error)
