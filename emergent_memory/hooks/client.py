"""The hooks' HTTP client: one JSON request to the server, within a hard time limit.

An http:// server is spoken to over a plain socket: HTTP/1.1, one request per connection
(Connection: close), the answer framed by its Content-Length, chunked, or ended by the
server closing. http.client would cost every hook about 20 ms to import (it imports email
and ssl), more than the request itself; it is imported only for an https:// server. Every
socket operation waits at most what is left of the request's time, so a server that accepts
and then stalls cannot hold a hook past its budget.
"""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from http.client import HTTPConnection
    from typing import Any

MAX_RESPONSE_BYTES = 1_000_000  # a longer body is not read (the answer has no JSON body)
MAX_HEAD_LINE_BYTES = 65_536  # as http.client
MAX_HEADERS = 100  # as http.client
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class Unreachable(Exception):
    """No answer: `refused` when nothing listens there (the server is not running),
    `timed_out` when it did not answer in time."""

    def __init__(self, reason: str, *, refused: bool = False, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.refused = refused
        self.timed_out = timed_out


class Answer:
    """The server's answer: its status and its body decoded from JSON (None when it was
    not JSON)."""

    __slots__ = ("body", "status")

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body

    def __repr__(self) -> str:
        return f"Answer(status={self.status!r}, body={self.body!r})"


class Server:
    """Where the server is: scheme, host, port and the path its API is under."""

    __slots__ = ("base_path", "host", "port", "scheme")

    def __init__(self, scheme: str, host: str, port: int, base_path: str) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.base_path = base_path

    def __repr__(self) -> str:
        return f"Server({self.scheme!r}, {self.host!r}, {self.port!r}, {self.base_path!r})"

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
        headers = {"Accept": "application/json", "Connection": "close"}
        body = None
        if payload is not None:
            # ASCII JSON: valid UTF-8 even for a text with a lone surrogate (sent as \udcff)
            body = json.dumps(payload).encode("ascii")
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        exchange = _exchange_https if self.scheme == "https" else _exchange_http
        try:
            status, raw = exchange(self, method, self.base_path + path, headers, body, deadline)
        except ConnectionRefusedError:
            raise Unreachable("connection refused", refused=True) from None
        except TimeoutError:
            raise Unreachable("timed out", timed_out=True) from None
        except OSError as error:
            raise Unreachable(type(error).__name__) from None
        except HTTPFault as error:
            raise Unreachable(str(error)) from None
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


class HTTPFault(Exception):
    """A fault of the exchange that is not the socket's: an answer that is not HTTP as
    expected, or a URL that cannot be sent. The message names it as http.client would
    (RemoteDisconnected, BadStatusLine, IncompleteRead, InvalidURL, ...)."""


# -- http:// over a socket ----------------------------------------------------------------------


def _exchange_http(
    server: Server,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes | None,
    deadline: float,
) -> tuple[int, bytes | None]:
    """The status and body of one request over a new connection (None: too long a body)."""
    request = _request_head(server, method, target, headers, body) + (body or b"")
    connection = _connect(server.host, server.port, deadline)
    try:
        connection.settimeout(_left(deadline))
        connection.sendall(request)
        return _read_answer(_Reader(connection, deadline))
    finally:
        connection.close()


def _request_head(
    server: Server, method: str, target: str, headers: dict[str, str], body: bytes | None
) -> bytes:
    """The request line and headers as http.client writes them (Host, Accept-Encoding,
    Content-Length when there is a body, then the given headers)."""
    if _has_control_characters(target) or _has_control_characters(server.host):
        raise HTTPFault("InvalidURL")  # http.client refuses these too, before connecting
    host = server.host if server.host.isascii() else server.host.encode("idna").decode()
    if ":" in host:
        host = f"[{host}]"
    if server.port != 80:
        host = f"{host}:{server.port}"
    lines = [f"Host: {host}", "Accept-Encoding: identity"]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    for name, value in headers.items():
        if "\r" in value or "\n" in value:
            raise ValueError(f"the {name} header's value holds a line break")
        lines.append(f"{name}: {value}")
    return (
        f"{method} {target} HTTP/1.1\r\n".encode("ascii")
        + "\r\n".join(lines).encode("latin-1")
        + b"\r\n\r\n"
    )


def _has_control_characters(text: str) -> bool:
    return any(ord(character) <= 0x20 or character == "\x7f" for character in text)


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A connection to the first of the host's addresses that takes one, as
    socket.create_connection makes it; an ASCII host is given as bytes, which spares loading
    the idna codec."""
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    failure: OSError | None = None
    for family, kind, protocol, _, address in socket.getaddrinfo(name, port, 0, socket.SOCK_STREAM):
        connection = socket.socket(family, kind, protocol)
        try:
            connection.settimeout(_left(deadline))
            connection.connect(address)
        except OSError as error:
            connection.close()
            failure = error
            continue
        return connection
    raise failure or OSError("getaddrinfo returned no address")


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class _Reader:
    """The answer's bytes as they arrive, each wait bounded by the deadline."""

    def __init__(self, connection: socket.socket, deadline: float) -> None:
        self.connection = connection
        self.deadline = deadline
        self.buffer = bytearray()
        self.ended = False  # the server closed the connection

    def _receive(self) -> bool:
        if self.ended:
            return False
        self.connection.settimeout(_left(self.deadline))
        chunk = self.connection.recv(65536)
        self.buffer += chunk
        self.ended = not chunk
        return bool(chunk)

    def line(self) -> bytes:
        """The next line with its line break; b"" at the end."""
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > MAX_HEAD_LINE_BYTES:
                raise HTTPFault("LineTooLong")
            if not self._receive():
                return self.take(len(self.buffer))
        if end > MAX_HEAD_LINE_BYTES:
            raise HTTPFault("LineTooLong")
        return self.take(end + 1)

    def take(self, count: int) -> bytes:
        """The next `count` bytes, fewer when the server closes first."""
        while len(self.buffer) < count and self._receive():
            pass
        taken = bytes(self.buffer[:count])
        del self.buffer[:count]
        return taken

    def until_closed(self, limit: int) -> bytes:
        """What arrives until the server closes, stopping once over `limit` bytes."""
        while len(self.buffer) <= limit and self._receive():
            pass
        return self.take(len(self.buffer))


def _read_answer(reader: _Reader) -> tuple[int, bytes | None]:
    while True:
        status, headers = _read_head(reader)
        if status != 100:  # as http.client, a "100 Continue" is skipped
            break
    if 100 <= status < 200 or status in (204, 304):
        return status, b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return status, _read_chunked(reader)
    try:
        length = int(headers.get("content-length", ""))
    except ValueError:
        length = -1  # none, or not a number: the body ends when the server closes
    if length > MAX_RESPONSE_BYTES:
        return status, None
    if length >= 0:
        body = reader.take(length)
        if len(body) < length:  # the server closed early: http.client raises IncompleteRead
            raise HTTPFault("IncompleteRead")
        return status, body
    body = reader.until_closed(MAX_RESPONSE_BYTES)
    return status, None if len(body) > MAX_RESPONSE_BYTES else body


def _read_head(reader: _Reader) -> tuple[int, dict[str, str]]:
    """The status and the headers (names in lower case, the first of each name)."""
    line = reader.line()
    if not line:
        raise HTTPFault("RemoteDisconnected")
    parts = line.decode("iso-8859-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise HTTPFault("BadStatusLine")
    try:
        status = int(parts[1])
    except ValueError:
        raise HTTPFault("BadStatusLine") from None
    if not 100 <= status <= 999:
        raise HTTPFault("BadStatusLine")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = reader.line()
        if line in (b"\r\n", b"\n", b""):
            return status, headers
        name, _, value = line.decode("iso-8859-1").partition(":")
        headers.setdefault(name.strip().lower(), value.strip())
    raise HTTPFault("HTTPException")  # http.client: "got more than 100 headers"


def _read_chunked(reader: _Reader) -> bytes | None:
    """A chunked body (None when longer than MAX_RESPONSE_BYTES); trailers are skipped."""
    body = bytearray()
    while True:
        size_line = reader.line().split(b";", 1)[0]
        try:
            size = int(size_line, 16)
        except ValueError:
            raise HTTPFault("IncompleteRead") from None
        if size == 0:
            break
        if len(body) + size > MAX_RESPONSE_BYTES:
            return None
        chunk = reader.take(size)
        if len(chunk) < size or reader.line() not in (b"\r\n", b"\n"):
            raise HTTPFault("IncompleteRead")
        body += chunk
    while reader.line() not in (b"\r\n", b"\n", b""):
        pass
    return bytes(body)


# -- https:// through http.client ----------------------------------------------------------------


def _exchange_https(
    server: Server,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes | None,
    deadline: float,
) -> tuple[int, bytes | None]:
    import http.client  # only here: with email and ssl it costs about 20 ms to import

    connection = http.client.HTTPSConnection(server.host, server.port, timeout=_left(deadline))
    try:
        connection.request(method, target, body=body, headers=headers)
        _limit(connection, deadline)
        response = connection.getresponse()
        raw = b""
        while len(raw) <= MAX_RESPONSE_BYTES:
            _limit(connection, deadline)
            chunk = response.read1(65536)
            if not chunk:
                break
            raw += chunk
        return response.status, raw
    except http.client.HTTPException as error:
        if isinstance(error, OSError):  # RemoteDisconnected is a ConnectionResetError too
            raise
        raise HTTPFault(type(error).__name__) from None
    finally:
        connection.close()


def _limit(connection: HTTPConnection, deadline: float) -> None:
    left = _left(deadline)
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
