"""Telemetry at the HTTP server's edges (docs/telemetry.md): every tool call (a FastMCP
middleware), every REST, hook and dashboard request (an ASGI middleware, named by the route's
template, never by a path that holds ids), and GET /metrics, the Prometheus exposition, for a
token with the scope memory:admin (or anyone, with EMERGENT_MEMORY_METRICS_PUBLIC=true).

Sizes are counted in bytes as the request and response pass; nothing of their content is
kept."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio.to_thread
from fastmcp.exceptions import NotFoundError, ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.types import CallToolRequestParams, TextContent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from emergent_memory import telemetry
from emergent_memory.auth.principal import ADMIN
from emergent_memory.errors import EmergentMemoryError
from emergent_memory.settings import ENV_PREFIX

METRICS_PATH = "/metrics"
API_PREFIX = "/api/v1"
HOOK_PATHS = frozenset({f"{API_PREFIX}/context", f"{API_PREFIX}/capture"})
UI_PREFIX = "/ui"
# The methods named in labels; any other is "OTHER" (a client chooses the method).
# (lowercase here: the edges' files hold no word of SQL, tests/test_architecture.py)
METHODS = frozenset(m.upper() for m in ("get", "head", "post", "put", "patch", "delete", "options"))


# -- tools -----------------------------------------------------------------------------------


class ToolMetrics(Middleware):
    """Each tool call as an operation of kind "tool" named by the tool: its outcome from the
    domain error behind a tool error, its arguments' and result's sizes."""

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        arguments = context.message.arguments or {}
        with telemetry.operation("tool", context.message.name) as op:
            op.request_bytes = json_size(arguments)
            try:
                result = await call_next(context)
            except NotFoundError:
                op.name, op.outcome = "unknown", "not_found"  # the name is the caller's
                raise
            except ToolError as error:
                op.outcome = tool_outcome(error)
                raise
            op.response_bytes = result_size(result)
            return result


def tool_outcome(error: ToolError) -> telemetry.Outcome:
    """How a tool call that ended in this tool error went: from the domain error it carries
    (mcp/server.py raises it from one), else the arguments' check (invalid_input)."""
    cause = error.__cause__
    if isinstance(cause, EmergentMemoryError):
        return telemetry.outcome_of(cause)
    if isinstance(cause, ValidationError) or cause is None:
        if str(error).startswith("not authenticated"):
            return "unauthorized"
        return "invalid_input"
    return "error"


def json_size(value: Mapping[str, Any]) -> int | None:
    """Bytes of `value` as compact JSON (UTF-8)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return len(text.encode("utf-8", "surrogatepass"))


def result_size(result: ToolResult) -> int:
    """Bytes of a tool result's text content (the structured result, as JSON)."""
    return sum(
        len(block.text.encode("utf-8", "surrogatepass"))
        for block in result.content
        if isinstance(block, TextContent)
    )


# -- REST, hooks, dashboard ------------------------------------------------------------------


def kind_of(path: str) -> telemetry.Kind | None:
    """The kind of operation a request path is, or None when it is not measured here (MCP:
    its tools are; /health and /metrics: probes and scrapes)."""
    if path in HOOK_PATHS:
        return "hook"
    if path.startswith("/api/"):
        return "rest"
    if path == UI_PREFIX or path.startswith(UI_PREFIX + "/"):
        return "dashboard"
    return None


def operation_name(scope: Scope) -> str:
    """ "METHOD template" of the route that answered (the REST API's without /api/v1, the
    dashboard's within /ui), or "METHOD unmatched"."""
    method = scope.get("method", "")
    method = method if method in METHODS else "OTHER"
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return f"{method} unmatched"
    return f"{method} {template.removeprefix(API_PREFIX) or '/'}"


class RequestMetrics:
    """ASGI middleware: each REST, hook and dashboard request as an operation, named once the
    router has matched it, its outcome from the response's status (a request that raised:
    error), its body's and response's sizes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = kind_of(scope.get("path", "")) if scope["type"] == "http" else None
        if kind is None:
            await self.app(scope, receive, send)
            return
        sizes = [0, 0]  # received, sent
        status: list[int] = []

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                sizes[0] += len(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            elif message["type"] == "http.response.body":
                sizes[1] += len(message.get("body", b""))
            await send(message)

        with telemetry.operation(kind, "request") as op:
            try:
                await self.app(scope, receiving, sending)
            finally:
                op.name = operation_name(scope)
                op.outcome = telemetry.outcome_of_status(status[0]) if status else "error"
                op.request_bytes, op.response_bytes = sizes


# -- /metrics --------------------------------------------------------------------------------


def metrics_route(*, public: bool) -> Route:
    """GET /metrics: the Prometheus exposition. Behind the HTTP app's bearer check: 401
    without a live token, 403 for a token without memory:admin; `public` serves anyone."""

    async def metrics(request: Request) -> Response:
        if not public:
            refused = _refusal(request)
            if refused is not None:
                return refused
        body, content_type = await anyio.to_thread.run_sync(telemetry.render)
        return Response(body, headers={"Content-Type": content_type})

    return Route(METRICS_PATH, metrics, methods=["GET"], name="metrics")


def _refusal(request: Request) -> Response | None:
    user = request.scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return JSONResponse(
            {
                "error": {
                    "code": "unauthorized",
                    "message": "not authenticated: send Authorization: Bearer <token> with a "
                    f"token that has the scope {ADMIN} (emergent-memory token create --scope "
                    f"{ADMIN}), or set {ENV_PREFIX}METRICS_PUBLIC=true for a scraper on a "
                    "private network",
                }
            },
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    if ADMIN not in user.scopes:
        return JSONResponse(
            {
                "error": {
                    "code": "forbidden",
                    "message": f"/metrics needs a token with the scope {ADMIN}",
                }
            },
            status_code=403,
        )
    return None
