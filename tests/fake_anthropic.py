"""A local HTTP server that speaks enough of Anthropic's Messages API for the real `anthropic`
SDK and the real Claude Code CLI to run against it, with scripted answers.

It serves `POST /v1/messages` (any query, e.g. Claude Code's `?beta=true`) both ways: a JSON
`Message` when the body has no `"stream": true`, else server-sent events in the API's order
(message_start, then per content block content_block_start, a ping after the first,
content_block_delta with `text_delta` or `input_json_delta` pieces, content_block_stop; then
message_delta with the stop reason and the cumulative output tokens, and message_stop). Errors
are sent as the API sends them before a stream starts: the status and
`{"type": "error", "error": {"type": ..., "message": ...}}`. `POST /v1/messages/count_tokens`
answers an estimate; any other path gets a 404 `not_found_error` (no body for `HEAD`). Every
request is recorded, whatever its path.

Which reply a `POST /v1/messages` gets: `handler(request)` when set and it returns a `Reply`;
else the next reply of the queue (`enqueue`); else `default` (a short text answer, so that a
whole Claude Code session can run on it). With `api_key` set, a request without that key in
`x-api-key` (or `Authorization: Bearer`) gets 401 `authentication_error` first, like the API.

    from tests.fake_anthropic import FakeAnthropic, error, slow, text, tool_use

    with FakeAnthropic() as fake:
        fake.enqueue(error(429, "rate_limit_error", "slow down", retry_after=0.01))
        fake.enqueue(tool_use("gate", {"worth_remembering": True, "reason": "a preference"}))
        client = AnthropicClient(api_key="test-key", base_url=fake.url, timeout=10, max_retries=1)
        ...
        assert fake.requests[-1].forced_tool == "gate"

    def answer(request: RecordedRequest) -> Reply | None:   # decide by content
        if request.forced_tool == "gate":
            return tool_use("gate", {"worth_remembering": "prefer" in request.text, "reason": "."})
        return None                                          # the queue, then the default

    with FakeAnthropic(handler=answer, default=text("Done.")) as fake:
        subprocess.run(["claude", "-p", "hello"], env={..., "ANTHROPIC_BASE_URL": fake.url,
                                                       "ANTHROPIC_API_KEY": "any"})

Checked by hand with Claude Code 2.1.197 (`claude -p`, a Bash tool call streamed to it and run,
its result sent back): it probes `HEAD /` first, then streams `POST /v1/messages?beta=true`.

Reply builders: `text`, `tool_use` (the input may be anything, e.g. a list or a value that
breaks the tool's schema, to test malformed output), `message` (several content blocks),
`error`, `raw` (a body sent verbatim), `slow` (the same reply after a delay) and `dripped`
(the same reply's JSON body one byte at a time, a pause before each: a server that never
goes quiet long enough for a read timeout); delays and drips end at once when the server
stops. `requests` (and `message_requests`, only those to
`/v1/messages`) hold `RecordedRequest`s: method, path, query, headers, the decoded `json` body,
and the shortcuts `model`, `stream`, `forced_tool`, `tool_names` and `text` (every text of the
system prompt and messages, to match on). `pending` counts unused queued replies;
`handler_errors` lists the exceptions a handler raised (the
request got a 500 `api_error`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.serving import serving_thread

CHUNK = 24  # characters of text or of tool input JSON per content_block_delta


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it; `headers` have lower-case names."""

    method: str
    path: str  # without the query
    query: dict[str, str]
    headers: dict[str, str]
    json: Any  # the decoded body; None when there was none or it was not JSON

    def _field(self, name: str) -> Any:
        return self.json.get(name) if isinstance(self.json, dict) else None

    @property
    def model(self) -> str | None:
        model = self._field("model")
        return model if isinstance(model, str) else None

    @property
    def stream(self) -> bool:
        return self._field("stream") is True

    @property
    def forced_tool(self) -> str | None:
        """The tool `tool_choice` forces, if it forces one."""
        choice = self._field("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "tool":
            name = choice.get("name")
            return name if isinstance(name, str) else None
        return None

    @property
    def tool_names(self) -> list[str]:
        tools = self._field("tools")
        if not isinstance(tools, list):
            return []
        return [tool["name"] for tool in tools if isinstance(tool, dict) and "name" in tool]

    @property
    def text(self) -> str:
        """Every text of the system prompt and the messages, one per line, to match on."""
        texts = list(_texts(self._field("system")))
        for message in self._field("messages") or []:
            if isinstance(message, dict):
                texts.extend(_texts(message.get("content")))
        return "\n".join(texts)


def _texts(content: Any) -> Iterator[str]:
    """The texts in a content value: a string, or blocks holding `text` or nested `content`."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    yield block["text"]
                yield from _texts(block.get("content"))


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Status 200 with no `body` is a Message of `content` blocks (JSON or
    streamed as the request asks); otherwise `body` is sent as it is with `status`."""

    status: int = 200
    content: tuple[dict[str, Any], ...] = ()
    stop_reason: str | None = "end_turn"
    input_tokens: int = 10
    output_tokens: int = 5
    model: str | None = None  # None: the model the request named
    body: bytes | None = None
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds before anything is sent
    drip: float = 0.0  # seconds before each byte of a JSON body (0: the body at once)


def text(answer: str, *, input_tokens: int = 10, output_tokens: int = 5) -> Reply:
    """A plain text answer (which is malformed output where a tool call was forced)."""
    return message(
        {"type": "text", "text": answer}, input_tokens=input_tokens, output_tokens=output_tokens
    )


def tool_use(
    name: str,
    input: Any,
    *,
    input_tokens: int = 20,
    output_tokens: int = 10,
    preamble: str | None = None,
) -> Reply:
    """A call of tool `name` with `input` (sent as it is, object or not), after an optional
    text block."""
    block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name}
    blocks = [{"type": "text", "text": preamble}] if preamble is not None else []
    return message(
        *blocks,
        {**block, "input": input},
        stop_reason="tool_use",
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def message(
    *content: dict[str, Any],
    stop_reason: str = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    model: str | None = None,
) -> Reply:
    """A Message of these content blocks (`text` or `tool_use` dicts as the API writes them)."""
    return Reply(
        content=content,
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model=model,
    )


def error(
    status: int,
    error_type: str,
    text: str,
    retry_after: float | str | None = None,
    *,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An API error: e.g. 429 rate_limit_error, 529 overloaded_error, 500 api_error, 401
    authentication_error, 400 invalid_request_error. `retry_after` in seconds (or a string sent
    as it is, e.g. an HTTP date) becomes the `retry-after` header."""
    sent = dict(headers or {})
    if retry_after is not None:
        sent["retry-after"] = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
    body = {"type": "error", "error": {"type": error_type, "message": text}}
    return Reply(status=status, body=json.dumps(body).encode(), headers=tuple(sent.items()))


def raw(status: int, body: bytes | str, content_type: str = "application/json") -> Reply:
    """A body sent verbatim, e.g. a 200 that is not JSON."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(status=status, body=data, content_type=content_type)


def slow(seconds: float, reply: Reply) -> Reply:
    """`reply`, sent after `seconds` of silence."""
    return dataclasses.replace(reply, delay=seconds)


def dripped(seconds: float, reply: Reply) -> Reply:
    """`reply` as JSON, its headers at once and then its body one byte every `seconds`."""
    return dataclasses.replace(reply, drip=seconds)


class FakeAnthropic:
    """The fake Messages API on 127.0.0.1 at a free port, running while the `with` block runs."""

    def __init__(
        self,
        *,
        handler: Callable[[RecordedRequest], Reply | None] | None = None,
        default: Reply | None = None,
        api_key: str | None = None,
    ) -> None:
        self.handler = handler
        self.default = default if default is not None else text("OK.")
        self.api_key = api_key
        self.handler_errors: list[BaseException] = []
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = serving_thread(self._server)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in the order they arrived (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The `POST /v1/messages` requests so far."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many queued replies are still unused."""
        with self._lock:
            return len(self._queue)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _reply_to(self, request: RecordedRequest) -> Reply:
        """The scripted reply to a `POST /v1/messages`."""
        if self.api_key is not None:
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
            if self.api_key not in (request.headers.get("x-api-key"), bearer):
                return error(401, "authentication_error", "invalid x-api-key")
        if self.handler is not None:
            try:
                reply = self.handler(request)
            except Exception as exc:
                self.handler_errors.append(exc)
                return error(500, "api_error", f"fake handler failed: {exc!r}")
            if reply is not None:
                return reply
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: without TCP_NODELAY the client's
            # delayed acknowledgement held every reply about 40 ms
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

            def do_HEAD(self) -> None:
                self._serve()

            def do_PUT(self) -> None:
                self._serve()

            def do_DELETE(self) -> None:
                self._serve()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the requests are recorded instead

            def _serve(self) -> None:
                url = urlsplit(self.path)
                body = self._body()
                try:
                    decoded = json.loads(body) if body else None
                except ValueError:
                    decoded = None
                request = RecordedRequest(
                    method=self.command,
                    path=url.path,
                    query=dict(parse_qsl(url.query)),
                    headers={name.lower(): value for name, value in self.headers.items()},
                    json=decoded,
                )
                fake._record(request)
                if self.command == "POST" and url.path == "/v1/messages":
                    self._send(fake._reply_to(request), request)
                elif self.command == "POST" and url.path == "/v1/messages/count_tokens":
                    estimate = {"input_tokens": max(1, len(body) // 4)}
                    self._send(Reply(body=json.dumps(estimate).encode()), request)
                else:
                    what = f"{self.command} {url.path}"
                    self._send(error(404, "not_found_error", f"Not found: {what}"), request)

            def _body(self) -> bytes:
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    parts = []
                    while size := int(self.rfile.readline().split(b";")[0], 16):
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            def _send(self, reply: Reply, request: RecordedRequest) -> None:
                if reply.delay and fake._stopping.wait(reply.delay):
                    self.close_connection = True
                    return
                if reply.body is None and request.stream:
                    self._stream(reply, request)
                    return
                if reply.body is not None:
                    body = reply.body
                else:
                    body = json.dumps(fake._message(reply, request)).encode()
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(body)))
                self._common_headers(reply)
                if self.command == "HEAD":
                    return
                if not reply.drip:
                    self.wfile.write(body)
                    return
                for index in range(len(body)):
                    if fake._stopping.wait(reply.drip):
                        self.close_connection = True
                        return
                    self.wfile.write(body[index : index + 1])
                    self.wfile.flush()

            def _stream(self, reply: Reply, request: RecordedRequest) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self._common_headers(reply)
                for event in fake._events(reply, request):
                    data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            def _common_headers(self, reply: Reply) -> None:
                self.send_header("request-id", f"req_fake{next(fake._ids):06d}")
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()

        return Handler

    def _message(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        """The Message a non-streaming request gets."""
        return {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": reply.model or request.model or "claude-fake",
            "content": [dict(block) for block in reply.content],
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def _events(self, reply: Reply, request: RecordedRequest) -> Iterator[dict[str, Any]]:
        """The server-sent events that stream the same Message."""
        start = self._message(reply, request)
        start.update(content=[], stop_reason=None)
        start["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
        yield {"type": "message_start", "message": start}
        for index, block in enumerate(reply.content):
            if block.get("type") == "tool_use":
                opening = {**block, "input": {}}
                pieces = _pieces(json.dumps(block.get("input")))
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            elif block.get("type") == "text":
                opening = {**block, "text": ""}
                pieces = _pieces(block.get("text", ""))
                deltas = [{"type": "text_delta", "text": piece} for piece in pieces]
            else:  # any other block arrives whole
                opening, deltas = dict(block), []
            yield {"type": "content_block_start", "index": index, "content_block": opening}
            if index == 0:
                yield {"type": "ping"}
            for delta in deltas:
                yield {"type": "content_block_delta", "index": index, "delta": delta}
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        }
        yield {"type": "message_stop"}


def _pieces(value: str) -> list[str]:
    return [value[i : i + CHUNK] for i in range(0, len(value), CHUNK)] or [""]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that gave up (a timeout test): nothing to report
        super().handle_error(request, client_address)
