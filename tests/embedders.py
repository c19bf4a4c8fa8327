"""Embedders for tests: a fast deterministic one for mechanics, and one that is down.

Meaning (paraphrases, "WiFi issue" vs "network configuration") is tested with the real
local model, never with these.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from emergent_memory.errors import EmbeddingUnavailable


class BagOfWordsEmbedder:
    """Each word adds to one of 384 dimensions: texts sharing most words are similar."""

    def __init__(self, model_name: str = "test/bag-of-words", dimensions: int = 384) -> None:
        self._model_name = model_name
        self._dimensions = dimensions
        self.calls = 0

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self._embed(text)

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self._dimensions
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.md5(word.encode(), usedforsecurity=False).digest()
            vector[int.from_bytes(digest[:4], "big") % self._dimensions] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]


class DownEmbedder(BagOfWordsEmbedder):
    """A provider that is unreachable: every call fails the way a real outage does."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingUnavailable("embedding request to http://127.0.0.1:9/v1/embeddings failed")

    def embed_query(self, text: str) -> list[float]:
        raise EmbeddingUnavailable("embedding request to http://127.0.0.1:9/v1/embeddings failed")
