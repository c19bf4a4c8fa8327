"""Embedders for tests: a fast deterministic one for mechanics, and one that is down.

Meaning (paraphrases, "WiFi issue" vs "network configuration") is tested with the real
local model, never with these.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from emergent_memory.errors import EmbeddingUnavailable
from tests.serving import serving_thread


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
        words = re.findall(r"\w+", text.lower())
        for word in words:
            digest = hashlib.md5(word.encode(), usedforsecurity=False).digest()
            vector[int.from_bytes(digest[:4], "big") % self._dimensions] += 1.0
        if words:
            # A tiny perturbation, the same for the same bag of words: without it, texts that
            # share the same few words with a third are at exactly the same distance from it,
            # and pgvector's HNSW (whose neighbour selection breaks ties against the newcomer)
            # leaves a vector inserted after 2*m such texts with no incoming edge: no index
            # scan reaches it. Identical bags still embed identically (similarity 1).
            jitter = random.Random("\0".join(sorted(words)))
            vector = [x + jitter.uniform(-1e-4, 1e-4) for x in vector]
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]


class DownEmbedder(BagOfWordsEmbedder):
    """A provider that is unreachable: every call fails the way a real outage does."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingUnavailable("embedding request to http://127.0.0.1:9/v1/embeddings failed")

    def embed_query(self, text: str) -> list[float]:
        raise EmbeddingUnavailable("embedding request to http://127.0.0.1:9/v1/embeddings failed")


class EmbeddingServer:
    """An OpenAI-compatible /v1/embeddings on loopback, answering with bag-of-words vectors.

    Failure modes, switchable while it runs: `down` answers every request with HTTP `status`
    (503 by default); `delay` seconds of silence before answering (longer than a client's
    timeout: a hung provider); `poison`: a request with an input containing that text gets
    HTTP 400 (a text the provider refuses). `inputs` records every text it was asked to embed
    and answered with a vector.
    """

    def __init__(self) -> None:
        self.down = False
        self.status = 503
        self.delay = 0.0
        self.poison: str | None = None
        self.inputs: list[str] = []
        self.requests = 0
        self.lock = threading.Lock()
        embedder = BagOfWordsEmbedder()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests += 1
                if server.delay:
                    time.sleep(server.delay)
                inputs = list(body["input"])
                if server.down:
                    self.reply(server.status, b'{"error": "the model is not loaded"}')
                    return
                if server.poison is not None and any(server.poison in text for text in inputs):
                    self.reply(400, b'{"error": "input rejected"}')
                    return
                vectors = embedder.embed_documents(inputs)
                with server.lock:
                    server.inputs.extend(inputs)
                data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
                self.reply(200, json.dumps({"data": data}).encode())

            def reply(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up waiting (timeout)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = serving_thread(self.httpd)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
