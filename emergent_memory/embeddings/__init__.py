"""Embedding providers (local model, OpenAI-compatible HTTP) and the embedding job queue."""

from emergent_memory.embeddings.base import EmbeddingProvider, EmbeddingUnavailable

__all__ = ["EmbeddingProvider", "EmbeddingUnavailable"]
