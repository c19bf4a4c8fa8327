"""Embeddings from any OpenAI-compatible `POST /embeddings` endpoint (OpenAI, Ollama, vLLM, TEI).

One `httpx.Client` per provider; batches of `batch_size` texts per request; connection errors,
timeouts, HTTP 429 and 5xx are retried with exponential backoff (honouring a short
`Retry-After`). Every failure, including a response of the wrong shape, raises
`EmbeddingUnavailable` naming the endpoint and the reason, never the API key.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import httpx

from emergent_memory.embeddings.base import EmbeddingUnavailable

MAX_WAIT = 5.0  # seconds: the cap on both the backoff and a server's Retry-After
EXCERPT_CHARS = 200  # how much of a failed response's body an error message quotes


class OpenAICompatibleEmbeddings:
    """An `EmbeddingProvider` backed by `POST {base_url}/embeddings`."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
        timeout: float = 10.0,
        max_retries: int = 2,
        send_dimensions: bool = False,
        batch_size: int = 64,
        backoff: float = 0.2,
    ) -> None:
        if dimensions < 1 or batch_size < 1 or max_retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError(
                "dimensions and batch_size must be positive, timeout positive, "
                "max_retries and backoff not negative"
            )
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._dimensions = dimensions
        self._api_key = api_key
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._timeout = timeout
        self._max_retries = max_retries
        self._send_dimensions = send_dimensions
        self._batch_size = batch_size
        self._backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        inputs = [self._document_prefix + text for text in texts]
        vectors: list[list[float]] = []
        for start in range(0, len(inputs), self._batch_size):
            vectors.extend(self._request(inputs[start : start + self._batch_size]))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._request([self._query_prefix + text])[0]

    def close(self) -> None:
        self._client.close()

    def _request(self, inputs: list[str]) -> list[list[float]]:
        """The vectors for one batch, retrying transient failures."""
        body: dict[str, Any] = {"model": self._model, "input": inputs}
        if self._send_dimensions:
            body["dimensions"] = self._dimensions
        attempts = self._max_retries + 1
        for attempt in range(attempts):
            wait = min(self._backoff * 2**attempt, MAX_WAIT)
            try:
                response = self._client.post(self._url, json=body)
            except httpx.TimeoutException:
                reason = f"timed out after {self._timeout:g} s"
            except httpx.HTTPError as exc:
                reason = f"connection error ({type(exc).__name__}: {exc})"
            else:
                status = response.status_code
                if response.is_success:
                    return self._vectors(response, len(inputs))
                reason = f"HTTP {status}: {excerpt(response.text)}"
                if status != 429 and status < 500:
                    raise self._error(f"failed: {reason}")
                hinted = retry_after(response)
                wait = wait if hinted is None else hinted
            if attempt < self._max_retries:
                time.sleep(wait)
        plural = "s" if attempts != 1 else ""
        raise self._error(f"failed after {attempts} attempt{plural}: {reason}")

    def _vectors(self, response: httpx.Response, count: int) -> list[list[float]]:
        """The response's vectors in input order, once its shape is checked."""
        try:
            payload = response.json()
        except ValueError:
            raise self._error(f"returned invalid JSON: {excerpt(response.text)}") from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise self._error("returned no 'data' list of embedding objects")
        if len(data) != count:
            raise self._error(f"returned {len(data)} vectors for {count} texts")
        if any("index" in item for item in data):
            data = self._by_index(data)
        vectors: list[list[float]] = []
        for item in data:
            embedding = item.get("embedding")
            if not isinstance(embedding, list) or not all(map(is_number, embedding)):
                raise self._error("returned an 'embedding' that is not a list of numbers")
            if len(embedding) != self._dimensions:
                raise self._error(
                    f"returned vectors of {len(embedding)} dimensions; the database stores "
                    f"{self._dimensions} (set EMERGENT_MEMORY_EMBEDDING_DIMENSIONS or use a "
                    "model of that size)"
                )
            vectors.append([float(value) for value in embedding])
        return vectors

    def _by_index(self, data: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items ordered by their `index`, which must number them 0..n-1 exactly once."""
        ordered: list[dict[str, Any] | None] = [None] * len(data)
        for item in data:
            index = item.get("index")
            if type(index) is not int or not 0 <= index < len(data) or ordered[index] is not None:
                raise self._error(f"returned an invalid or repeated index: {index!r}")
            ordered[index] = item
        return [item for item in ordered if item is not None]

    def _error(self, reason: str) -> EmbeddingUnavailable:
        message = f"embedding request to {self._url} {reason}"
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return EmbeddingUnavailable(message)


def excerpt(text: str) -> str:
    """The start of a response body on one line, for an error message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS] + "..."


def retry_after(response: httpx.Response) -> float | None:
    """The response's `Retry-After` in seconds, capped; None when absent or not in seconds."""
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:
        return None
    return min(max(seconds, 0.0), MAX_WAIT) if math.isfinite(seconds) else None


def is_number(value: object) -> bool:
    """Whether a JSON value is a finite number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
