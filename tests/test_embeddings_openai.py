"""The OpenAI-compatible embedding provider, against a real HTTP server on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from emergent_memory.embeddings import openai as openai_module
from emergent_memory.embeddings.base import EmbeddingProvider, EmbeddingUnavailable
from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings

DIMS = 4
API_KEY = "sk-test-secret-0123456789"
# Seconds a hung server keeps a request waiting (the fake ends the wait when it stops): far
# beyond the providers' timeouts here, so that a provider that waited for the answer instead of
# giving up fails the test even on a machine many times slower than usual.
HUNG = 60.0


def vector_for(text: str, dims: int = DIMS) -> list[float]:
    """The vector the test server returns for a text: distinct per text, so order is checkable."""
    return [zlib.crc32(text.encode()) / 2**32] + [float(i) for i in range(1, dims)]


@dataclass
class Reply:
    """How the server answers one request; the default is a correct answer."""

    status: int = 200
    body: bytes | None = None  # None: vectors for the request's inputs
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    dims: int = DIMS
    reverse: bool = False  # list `data` in reverse index order
    drop: int = 0  # leave this many vectors out


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeServer:
    """Answers POSTs with the queued replies in order (then correct answers); records requests."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.replies: list[Reply] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, request: Request) -> tuple[Reply, bytes]:
        with self.lock:
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else Reply()
        if reply.body is not None:
            return reply, reply.body
        inputs = request.body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": vector_for(text, reply.dims)}
            for i, text in enumerate(inputs)
        ]
        data = data[reply.drop :]
        if reply.reverse:
            data.reverse()
        return reply, json.dumps({"object": "list", "data": data, "model": "m"}).encode()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = Request(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(self.rfile.read(length)),
                )
                reply, body = server.answer(request)
                if reply.delay and server.stopping.wait(reply.delay):
                    return
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        fake.httpd.shutdown()
        fake.httpd.server_close()
        fake.thread.join(timeout=5)


@pytest.fixture
def make_provider(
    server: FakeServer,
) -> Iterator[Callable[..., OpenAICompatibleEmbeddings]]:
    """Providers for the fake server (tiny backoff, no retries unless asked); closed at the end."""
    made: list[OpenAICompatibleEmbeddings] = []

    def make(**options: Any) -> OpenAICompatibleEmbeddings:
        settings: dict[str, Any] = {
            "base_url": server.base_url,
            "model": "test-model",
            "dimensions": DIMS,
            "backoff": 0.001,
            "max_retries": 0,
        }
        provider = OpenAICompatibleEmbeddings(**{**settings, **options})
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.close()


def test_is_an_embedding_provider(make_provider: Callable[..., OpenAICompatibleEmbeddings]) -> None:
    provider = make_provider(model="nomic-embed-text")
    assert isinstance(provider, EmbeddingProvider)
    assert provider.model_name == "nomic-embed-text"
    assert provider.dimensions == DIMS


def test_request_shape_without_key_or_dimensions(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    provider = make_provider(base_url=server.base_url + "/")
    assert provider.embed_documents(["a", "b"]) == [vector_for("a"), vector_for("b")]
    [request] = server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "test-model", "input": ["a", "b"]}
    assert "authorization" not in request.headers
    assert request.headers["content-type"] == "application/json"


def test_request_shape_with_key_and_dimensions(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    provider = make_provider(api_key=API_KEY, send_dimensions=True)
    provider.embed_query("q")
    [request] = server.requests
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.body == {"model": "test-model", "input": ["q"], "dimensions": DIMS}


def test_prefixes_for_queries_and_documents(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    provider = make_provider(query_prefix="search_query: ", document_prefix="search_document: ")
    assert provider.embed_query("where?") == vector_for("search_query: where?")
    assert provider.embed_documents(["here"]) == [vector_for("search_document: here")]
    assert [r.body["input"] for r in server.requests] == [
        ["search_query: where?"],
        ["search_document: here"],
    ]


def test_empty_input_sends_nothing(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    assert make_provider().embed_documents([]) == []
    assert server.requests == []


def test_batches_keep_input_order_even_when_data_is_out_of_order(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(reverse=True), Reply(reverse=True), Reply(reverse=True)]
    texts = [f"text {i}" for i in range(5)]
    assert make_provider(batch_size=2).embed_documents(texts) == [vector_for(t) for t in texts]
    assert [r.body["input"] for r in server.requests] == [texts[0:2], texts[2:4], texts[4:5]]


def test_retries_503_then_succeeds(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(status=503, body=b"busy"), Reply(status=502, body=b"bad gateway")]
    assert make_provider(max_retries=2).embed_query("q") == vector_for("q")
    assert len(server.requests) == 3


def test_gives_up_after_max_retries(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(status=503, body=b"model loading\n  please wait")] * 3
    with pytest.raises(EmbeddingUnavailable) as caught:
        make_provider(max_retries=2).embed_query("q")
    assert str(caught.value) == (
        f"embedding request to {server.base_url}/embeddings failed after 3 attempts: "
        "HTTP 503: model loading please wait"
    )
    assert len(server.requests) == 3


def test_429_honours_retry_after(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(status=429, body=b"slow down", headers={"Retry-After": "0.3"})]
    started = time.monotonic()
    assert make_provider(max_retries=1).embed_query("q") == vector_for("q")
    assert time.monotonic() - started >= 0.3
    assert len(server.requests) == 2


def test_retry_after_that_is_not_seconds_falls_back_to_backoff(
    server: FakeServer,
    make_provider: Callable[..., OpenAICompatibleEmbeddings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    when = "Wed, 21 Oct 2015 07:28:00 GMT"
    server.replies = [Reply(status=429, body=b"", headers={"Retry-After": when})]
    waits: list[float] = []

    class RecordedTime:
        """The provider module's `time`, each of its waits recorded (and waited)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

        def sleep(self, seconds: float) -> None:
            waits.append(seconds)
            time.sleep(seconds)

    monkeypatch.setattr(openai_module, "time", RecordedTime())
    assert make_provider(max_retries=1).embed_query("q") == vector_for("q")
    assert waits == [0.001]  # the backoff (make_provider's), not a wait read from the date


def test_no_retry_on_400(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(status=400, body=b'{"error": "input too long"}')]
    with pytest.raises(EmbeddingUnavailable, match=r"failed: HTTP 400: .*input too long"):
        make_provider(max_retries=2).embed_query("q")
    assert len(server.requests) == 1


def test_timeout(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(delay=HUNG)] * 2
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable) as caught:
        make_provider(timeout=0.3, max_retries=1).embed_query("q")
    # two attempts of 0.3 s, not an answer after the server's HUNG seconds (half of that
    # separates the two however loaded the machine)
    assert time.monotonic() - started < HUNG / 2
    assert str(caught.value) == (
        f"embedding request to {server.base_url}/embeddings failed after 2 attempts: "
        "timed out after 0.3 s"
    )
    assert len(server.requests) == 2


def test_connection_refused() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound but not listening: connections are refused
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"
        provider = OpenAICompatibleEmbeddings(
            base_url=url, model="m", dimensions=DIMS, api_key=API_KEY, backoff=0.001
        )
        try:
            with pytest.raises(EmbeddingUnavailable) as caught:
                provider.embed_query("q")
        finally:
            provider.close()
    message = str(caught.value)
    assert message.startswith(f"embedding request to {url}/embeddings failed after 3 attempts: ")
    assert "connection error (ConnectError: " in message
    assert API_KEY not in message


def test_wrong_dimensions(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(dims=768)]
    with pytest.raises(EmbeddingUnavailable) as caught:
        make_provider().embed_query("q")
    assert str(caught.value) == (
        f"embedding request to {server.base_url}/embeddings returned vectors of 768 dimensions; "
        f"the database stores {DIMS} (set EMERGENT_MEMORY_EMBEDDING_DIMENSIONS or use a model "
        "of that size)"
    )


def test_wrong_number_of_vectors(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(drop=1)]
    with pytest.raises(EmbeddingUnavailable, match=r"/embeddings returned 2 vectors for 3 texts$"):
        make_provider().embed_documents(["a", "b", "c"])


def test_invalid_json(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    server.replies = [Reply(body=b"<html>proxy error</html>")]
    with pytest.raises(EmbeddingUnavailable, match=r"returned invalid JSON: <html>proxy error"):
        make_provider().embed_query("q")


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ([1, 2], "no 'data' list"),
        ({"error": "nope"}, "no 'data' list"),
        ({"data": [[0.1, 0.2]]}, "no 'data' list"),
        ({"data": [{"index": 0, "embedding": "0.1,0.2"}]}, "not a list of numbers"),
        ({"data": [{"index": 0, "embedding": [0.1, None, 0.3, 0.4]}]}, "not a list of numbers"),
        ({"data": [{"index": 1, "embedding": [0.1, 0.2, 0.3, 0.4]}]}, "invalid or repeated index"),
    ],
)
def test_malformed_responses(
    server: FakeServer,
    make_provider: Callable[..., OpenAICompatibleEmbeddings],
    payload: object,
    reason: str,
) -> None:
    server.replies = [Reply(body=json.dumps(payload).encode())]
    with pytest.raises(EmbeddingUnavailable, match=reason):
        make_provider().embed_query("q")


def test_data_without_index_keeps_response_order(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    data = [{"embedding": vector_for("a")}, {"embedding": [1, 2, 3, 4]}]
    server.replies = [Reply(body=json.dumps({"data": data}).encode())]
    assert make_provider().embed_documents(["a", "b"]) == [vector_for("a"), [1.0, 2.0, 3.0, 4.0]]


def test_api_key_never_in_error_messages(
    server: FakeServer, make_provider: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    echo = json.dumps({"error": f"Incorrect API key provided: {API_KEY}"}).encode()
    failures = [
        [Reply(status=401, body=echo)],
        [Reply(status=500, body=echo)],
        [Reply(status=200, body=echo)],
        [Reply(body=b"not json " + API_KEY.encode())],
        [Reply(dims=DIMS + 1)],
        [Reply(delay=HUNG)],
    ]
    provider = make_provider(api_key=API_KEY, timeout=0.3)
    for replies in failures:
        server.replies = replies
        with pytest.raises(EmbeddingUnavailable) as caught:
            provider.embed_query("q")
        assert API_KEY not in str(caught.value)
        assert f"{server.base_url}/embeddings" in str(caught.value)
