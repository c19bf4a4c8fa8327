"""The streamable HTTP server: its listening socket, its ASGI app (request body guard, session
limits, bearer tokens checked against kb.api_tokens) and uvicorn, logging through the
application's log."""

from __future__ import annotations

import asyncio
import codecs
import errno
import logging
import socket
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
import uvicorn
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.http import StreamableHTTPASGIApp
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from starlette.applications import Starlette
from starlette.authentication import AuthenticationError
from starlette.datastructures import Headers
from starlette.middleware import Middleware as ASGIMiddleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from emergent_memory.auth.principal import Principal
from emergent_memory.auth.service import TokenInfo
from emergent_memory.errors import AddressUnavailable, DatabaseUnavailable, ServiceBusy
from emergent_memory.mcp.arguments import mark_lone_surrogates
from emergent_memory.mcp.metrics import RequestMetrics, metrics_route
from emergent_memory.mcp.refusals import TokenRefusals
from emergent_memory.mcp.sessions import (
    FairSessions,
    SessionLimits,
    SessionRefused,
    refusal_response,
)
from emergent_memory.settings import ENV_PREFIX

MCP_PATH = "/mcp"
# Connections the kernel queues while the server starts or is busy (uvicorn's default).
BACKLOG = 2048


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port and listening, before anything else starts; one clear
    AddressUnavailable if it cannot be had (port in use, foreign address, privileged port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted sockets whose proto says
    # TCP; without it every response after the first on a keep-alive connection waited ~40 ms
    # (Nagle against the client's delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        # like uvicorn: a port whose last connections linger in TIME_WAIT can be reused at once
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise AddressUnavailable(_why_not(host, port, error)) from error
    return sock


def _why_not(host: str, port: int, error: OSError) -> str:
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {where}: port {port} is in use by another program (another "
            "emergent-memory server?); stop it, or choose another port with --port"
        )
    if error.errno == errno.EACCES:
        return (
            f"cannot listen on {where}: port {port} needs privileges; choose a port above "
            "1023 with --port"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {where}: {host} is not an address of this machine; use "
            "--host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"
        )
    if isinstance(error, socket.gaierror):
        return f"cannot listen on {where}: unknown host {host!r}; give an IP address with --host"
    return f"cannot listen on {where}: {error.strerror or error}"


def http_app(
    server: FastMCP,
    *,
    max_request_bytes: int,
    max_sessions: int,
    session_idle_timeout: float,
    max_sessions_per_token: int = 20,
    max_sessions_per_actor: int = 50,
    routes: Sequence[BaseRoute] = (),
    metrics_public: bool = False,
    uploads: Mapping[str, int] | None = None,
) -> Starlette:
    """The ASGI app: MCP at /mcp (each MCP session ends after `session_idle_timeout` seconds
    without a request; sessions are shared fairly, mcp/sessions.py: at most
    `max_sessions_per_token` per token, `max_sessions_per_actor` per actor, `max_sessions` in
    all), the custom routes (/health), `routes` (the REST API) behind the same bearer check,
    the body guard, the answers to a missing or invalid token, /metrics (for a token with
    memory:admin, or anyone when `metrics_public`), and the measure of every REST, hook and
    dashboard request (mcp/metrics.py). `uploads`: the paths whose POST may carry a larger
    body than `max_request_bytes` (a file upload), each with its own limit."""
    app = server.http_app(
        path=MCP_PATH,
        middleware=http_middleware(max_request_bytes, uploads),
        session_idle_timeout=session_idle_timeout,
    )
    app.router.routes.extend([metrics_route(public=metrics_public), *routes])
    limits = SessionLimits(max_sessions_per_token, max_sessions_per_actor, max_sessions)
    _share_sessions(app, FairSessions(limits))
    return app


def _share_sessions(app: Starlette, sessions: FairSessions) -> None:
    """FastMCP builds the MCP SDK's session manager in the app's lifespan: `sessions` admits
    its new sessions from then on, before the first request; a refusal is its own answer."""
    endpoint = _mcp_endpoint(app)
    lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def shared(app: Starlette) -> AsyncIterator[Any]:
        async with lifespan(app) as state:
            manager = endpoint.session_manager
            assert manager is not None
            sessions.install(manager)
            yield state

    app.router.lifespan_context = shared
    app.add_exception_handler(SessionRefused, refusal_response)


def _mcp_endpoint(app: Starlette) -> StreamableHTTPASGIApp:
    for route in app.routes:
        if isinstance(route, Route) and route.path == MCP_PATH:
            endpoint = route.endpoint
            inner = getattr(endpoint, "app", endpoint)  # behind the authentication check
            if isinstance(inner, StreamableHTTPASGIApp):
                return inner
    raise RuntimeError(f"FastMCP's app has no streamable HTTP endpoint at {MCP_PATH}")


def serve_http(app: Starlette, sock: socket.socket) -> None:
    """Serve `app` on the listening socket until SIGINT or SIGTERM. uvicorn logs through the
    root logger (the application's format and level): its request lines are INFO."""
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level=None,
        access_log=logging.getLogger("uvicorn.access").isEnabledFor(logging.INFO),
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


# -- bearer tokens --------------------------------------------------------------------------


class TokenCheckUnavailable(AuthenticationError):
    """The token could not be checked: no free database connection (busy), the database is
    down or unreachable, or the connection was lost. Answered with 503."""


class DatabaseTokenVerifier(TokenVerifier):
    """Bearer tokens checked against kb.api_tokens (by hash): unknown, expired or revoked
    tokens are refused with 401 before any tool runs."""

    def __init__(self, verify: Callable[[str], TokenInfo | None]) -> None:
        super().__init__()
        self._verify = verify

    async def verify_token(self, token: str) -> AccessToken | None:
        info = await anyio.to_thread.run_sync(self._lookup, token)
        if info is None:
            return None
        return AccessToken(
            token=token,
            client_id=str(info.id),
            scopes=list(info.scopes),
            expires_at=None if info.expires_at is None else int(info.expires_at.timestamp()),
            claims={
                "actor_id": str(info.actor_id),
                "project_id": str(info.project_id),
                "token_name": info.name,
            },
        )

    def _lookup(self, token: str) -> TokenInfo | None:
        try:
            return self._verify(token)
        except (DatabaseUnavailable, ServiceBusy) as error:  # down, unreachable, lost or busy
            raise TokenCheckUnavailable(f"could not check the token: {error}") from error

    def get_middleware(self) -> list[Any]:
        return [
            ASGIMiddleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(self),
                on_error=_token_check_unavailable,
            ),
            ASGIMiddleware(AuthContextMiddleware),
        ]


def _token_check_unavailable(conn: HTTPConnection, error: Exception) -> Response:
    """503 with a JSON-RPC error that MCP clients show as is (the REST API's error shape on
    its paths)."""
    if _is_rest(conn.scope):
        return _rest_error(503, "unavailable", str(error), headers={"Retry-After": "1"})
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": str(error)}},
        status_code=503,
        headers={"Retry-After": "1"},
    )


REST_PREFIX = "/api/"


def _is_rest(scope: Scope) -> bool:
    return str(scope.get("path", "")).startswith(REST_PREFIX)


def _rest_error(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The REST API's error body (emergent_memory/api), for what is refused before it."""
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def token_principal() -> Principal:
    """The principal of the current HTTP request, from its verified token only."""
    access: Any = get_access_token()
    if access is None:
        raise ToolError("not authenticated: send Authorization: Bearer <token>")
    return Principal.of_token(access.claims, access.scopes)


# -- HTTP request bodies -------------------------------------------------------------------


PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC error codes


class RequestBodyGuard:
    """ASGI middleware of the HTTP server: refuses, with a JSON-RPC error naming the problem,
    a request body over `max_bytes` (413) and a JSON body that is not UTF-8 (400).

    A declared Content-Length over the limit is refused before any of the body is read; a
    body without one (chunked) is read only up to the limit. A JSON body within the limit is
    handed on as received, except that escaped halves of surrogate pairs in MCP's messages are
    marked (mark_lone_surrogates), so that the tool reports them instead of the MCP SDK
    refusing the whole message: a marked body is handed on in one piece, its Content-Length
    corrected.

    A POST to one of `uploads`' paths (a file upload: the dashboard's import) may be larger,
    up to that path's own limit: it must declare its Content-Length (HTTP framing then holds
    the body to it), and it is handed on unread, for the page to refuse before reading when
    no one is signed in.
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, uploads: Mapping[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.uploads = dict(uploads or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        upload = self.uploads.get(scope["path"]) if scope["method"] == "POST" else None
        if upload is not None:
            if not (declared.isascii() and declared.isdigit()):
                await PlainTextResponse(
                    "an upload must declare its Content-Length", status_code=411
                )(scope, receive, send)
            elif int(declared) > max(upload, self.max_bytes):
                await PlainTextResponse(
                    f"the upload is larger than {max(upload, self.max_bytes)} bytes, the most "
                    "this page takes: split the file",
                    status_code=413,
                )(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        utf8 = None
        if "json" in headers.get("content-type", "").lower():
            utf8 = codecs.getincrementaldecoder("utf-8")()
        received: list[Message] = []
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":  # the client went away
                break
            body = message.get("body", b"")
            more = message.get("more_body", False)
            size += len(body)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            if utf8 is not None:
                try:
                    utf8.decode(body, final=not more)
                except UnicodeDecodeError as error:
                    await self._not_utf8(error, scope, receive, send)
                    return
            if not more:
                break

        # the REST API's JSON parser reads a lone surrogate as it is (and its checks refuse
        # it): only MCP's parsers need the markers
        mark = utf8 is not None and not _is_rest(scope)
        if mark and received and received[-1]["type"] == "http.request":
            body = b"".join(m.get("body", b"") for m in received)
            marked = mark_lone_surrogates(body)
            if marked != body:
                received = [{"type": "http.request", "body": marked, "more_body": False}]
                scope = dict(scope)
                scope["headers"] = [
                    (name, str(len(marked)).encode() if name == b"content-length" else value)
                    for name, value in scope["headers"]
                ]

        async def replay() -> Message:
            # the body as received, then whatever comes next (a disconnect)
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = (
            f"the request body is larger than {self.max_bytes} bytes, the limit set by "
            f"{ENV_PREFIX}MAX_REQUEST_BYTES; memories and queries are short, send less"
        )
        if _is_rest(scope):
            await _rest_error(413, "too_large", message)(scope, receive, send)
            return
        await _json_rpc_error(413, INVALID_REQUEST, message)(scope, receive, send)

    async def _not_utf8(
        self, error: UnicodeDecodeError, scope: Scope, receive: Receive, send: Send
    ) -> None:
        byte = error.object[error.start]
        message = (
            f"Parse error: the request body is not valid UTF-8 (it holds the byte 0x{byte:02X}); "
            "send JSON encoded as UTF-8"
        )
        if _is_rest(scope):
            await _rest_error(400, "invalid_json", message)(scope, receive, send)
            return
        await _json_rpc_error(400, PARSE_ERROR, message)(scope, receive, send)


def _json_rpc_error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}},
        status_code=status,
    )


def http_middleware(
    max_request_bytes: int, uploads: Mapping[str, int] | None = None
) -> list[ASGIMiddleware]:
    """The ASGI middleware of the streamable HTTP server (http_app, above)."""
    return [
        ASGIMiddleware(RequestMetrics),  # outermost: counts the guard's refusals too
        ASGIMiddleware(TokenRefusals, path=MCP_PATH),
        ASGIMiddleware(RequestBodyGuard, max_bytes=max_request_bytes, uploads=uploads),
    ]
