"""The hooks' HTTP client: one JSON request to the server, within a hard time limit.

Built on http.client (urllib.request costs a hook tens of milliseconds more to import). Every
socket operation waits at most what is left of the request's time, so a server that accepts
and then stalls cannot hold a hook past its budget.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_RESPONSE_BYTES = 1_000_000
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class Unreachable(Exception):
    """No answer: `refused` when nothing listens there (the server is not running),
    `timed_out` when it did not answer in time."""

    def __init__(self, reason: str, *, refused: bool = False, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.refused = refused
        self.timed_out = timed_out


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # the decoded JSON, or None when the body was not JSON


@dataclass(frozen=True)
class Server:
    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def from_url(cls, url: str) -> Server:
        """Raises ValueError for a URL that is not http(s)://host[:port][/path]."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http(s) URL")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def is_loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS or self.host.startswith("127.")

    def request(
        self,
        method: str,
        path: str,
        *,
        timeout: float,
        payload: Any = None,
        token: str | None = None,
    ) -> Answer:
        """Send one request and read the answer, in at most `timeout` seconds (connecting
        included). Raises Unreachable."""
        if timeout <= 0:
            raise Unreachable("timed out", timed_out=True)
        deadline = time.monotonic() + timeout
        connection_class = (
            http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        )
        connection = connection_class(self.host, self.port, timeout=timeout)
        headers = {"Accept": "application/json", "Connection": "close"}
        body = None
        if payload is not None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            connection.request(method, self.base_path + path, body=body, headers=headers)
            _limit(connection, deadline)
            response = connection.getresponse()
            raw = b""
            while len(raw) <= MAX_RESPONSE_BYTES:
                _limit(connection, deadline)
                chunk = response.read1(65536)
                if not chunk:
                    break
                raw += chunk
            status = response.status
        except ConnectionRefusedError:
            raise Unreachable("connection refused", refused=True) from None
        except TimeoutError:
            raise Unreachable("timed out", timed_out=True) from None
        except (OSError, http.client.HTTPException) as error:
            raise Unreachable(type(error).__name__) from None
        finally:
            connection.close()
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            decoded = None
        return Answer(status, decoded)

    def healthy(self, timeout: float) -> bool:
        try:
            return self.request("GET", "/health", timeout=timeout).status == 200
        except Unreachable:
            return False


def _limit(connection: http.client.HTTPConnection, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    sock: socket.socket | None = connection.sock
    if sock is not None:
        sock.settimeout(left)


def error_code(answer: Answer) -> str:
    """The API error's code ({"error": {"code": ...}}), never its message (which may quote
    the request)."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        if isinstance(code, str) and code.isidentifier() and len(code) <= 40:
            return code
    return "?"
