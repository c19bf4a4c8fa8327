"""The embedding provider protocol; providers raise `EmbeddingUnavailable` when they fail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from emergent_memory.errors import EmbeddingUnavailable

__all__ = ["EmbeddingProvider", "EmbeddingUnavailable"]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors. Vectors are lists of floats of length `dimensions`."""

    @property
    def model_name(self) -> str:
        """The name stored with every vector; vectors of different names are never compared."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts to store, one per text in order. Raises EmbeddingUnavailable."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector for a search query. Raises EmbeddingUnavailable."""
        ...
