"""A stand-in for the emergent-memory HTTP server, for the Claude Code hooks' tests: it
answers GET /health, POST /api/v1/context and POST /api/v1/capture as scripted (an answer,
a status, garbage, a delay), accepts captures like the real server (indices it already has
are dropped, a gap is refused, capture "off" stores and acknowledges nothing, and the
context answer says whether capture is on), and records every request
with its headers and JSON body.

    with FakeMemoryServer() as server:
        server.context = "<emergent-memory>\\n- [m1] The user prefers pnpm\\n</emergent-memory>"
        ... run a hook with EMERGENT_MEMORY_HOOK_URL=server.url ...
        server.requests[0].body["event"] == "session_start"
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.serving import serving_thread


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeMemoryServer:
    context: str = ""
    # scripted failures: a status (with an API error body), b"raw bytes", or None for normal
    context_status: int | None = None
    capture_statuses: list[int] = field(default_factory=list)  # consumed one per capture
    garbage: bytes | None = None  # answered (200) instead of JSON to every API request
    delay: float = 0.0  # seconds before answering an API request
    capture: str = "queued"
    requests: list[Recorded] = field(default_factory=list)
    received: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # per session

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/health":
                    self._answer(200, {"status": "ok"})
                else:
                    self._answer(404, {"error": {"code": "not_found", "message": "no"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with fake._lock:
                    fake.requests.append(
                        Recorded("POST", self.path, dict(self.headers.items()), body)
                    )
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.garbage is not None:
                    self._raw(200, fake.garbage)
                elif self.path == "/api/v1/context":
                    self._context()
                elif self.path == "/api/v1/capture":
                    self._capture(body)
                else:
                    self._answer(404, {"error": {"code": "not_found", "message": "no"}})

            def _context(self) -> None:
                if fake.context_status is not None:
                    self._error(fake.context_status)
                    return
                self._answer(
                    200,
                    {
                        "context": fake.context,
                        "memories": [],
                        "estimated_tokens": len(fake.context) // 3,
                        "budget_tokens": 500,
                        "capture": "off" if fake.capture == "off" else "on",
                    },
                )

            def _capture(self, body: Any) -> None:
                with fake._lock:
                    status = fake.capture_statuses.pop(0) if fake.capture_statuses else 202
                if status != 202:
                    self._error(status)
                    return
                session = fake.received.setdefault(body["session_id"], [])
                first = body.get("first_index")
                first = len(session) if first is None else first
                if fake.capture == "off":  # stores nothing, as the real server
                    self._answer(
                        202,
                        {
                            "capture": "off",
                            "accepted": 0,
                            "already_received": 0,
                            "next_index": first,  # nothing received
                            "windows_queued": 0,
                        },
                    )
                    return
                if first > len(session):  # a gap: refused, as the real server does
                    self._answer(400, {"error": {"code": "invalid_input", "message": "gap"}})
                    return
                accepted = already = 0
                for offset, message in enumerate(body["messages"]):
                    index = first + offset
                    if index < len(session):
                        already += 1
                    elif index == len(session):
                        session.append(message)
                        accepted += 1
                self._answer(
                    202,
                    {
                        "capture": fake.capture,
                        "accepted": accepted,
                        "already_received": already,
                        "next_index": len(session),
                        "windows_queued": 1 if body.get("final") else 0,
                    },
                )

            def _error(self, status: int) -> None:
                self._answer(status, {"error": {"code": f"code{status}", "message": "scripted"}})

            def _answer(self, status: int, body: Any) -> None:
                self._raw(status, json.dumps(body).encode())

            def _raw(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the hook gave up and closed the connection
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeMemoryServer:
        self._thread = serving_thread(self._server)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def api_requests(self, path: str) -> list[Recorded]:
        return [request for request in self.requests if request.path == path]
