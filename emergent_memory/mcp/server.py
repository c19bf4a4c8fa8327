"""The MCP server: the three memory tools, the memory_guidelines prompt, and a health check.

Tools are thin: they name the principal (from the server's configuration or the caller's
token, never from an argument), call the memory service in a worker thread, and turn domain
errors into tool errors. Internal errors are logged and masked. Arguments the tools cannot
take are refused with one clear error each, and the HTTP server refuses oversized bodies.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import Annotated, Any, Literal, TypeVar, cast

import anyio.to_thread
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp.types import CallToolRequestParams
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import ErrorDetails
from starlette.datastructures import Headers
from starlette.middleware import Middleware as ASGIMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from emergent_memory.auth.principal import Principal
from emergent_memory.errors import (
    DatabaseUnavailable,
    EmergentMemoryError,
    InvalidInput,
    NotFound,
    PermissionDenied,
)
from emergent_memory.mcp import guidelines
from emergent_memory.memory import MemoryService
from emergent_memory.memory.models import ManageResult, RecallResult, SaveResult
from emergent_memory.settings import ENV_PREFIX

logger = logging.getLogger(__name__)

R = TypeVar("R")

Identify = Callable[[], Principal]
OpenService = Callable[[], AbstractContextManager[MemoryService]]

CategoryArg = Literal["preference", "pattern", "correction", "fact", "instruction", "convention"]


class ServiceHolder:
    """The service the lifespan opened, for the tools (and the token verifier) to use. The
    server serves only once the lifespan has opened it: `serve` opens the service before
    either transport starts."""

    def __init__(self) -> None:
        self._service: MemoryService | None = None

    def get(self) -> MemoryService:
        if self._service is None:
            raise ToolError("the memory server is still starting; try again in a moment")
        return self._service

    def set(self, service: MemoryService | None) -> None:
        self._service = service


def log_level_of(error: EmergentMemoryError) -> int:
    """The level at which a tool's failure is logged. The caller's mistakes: INFO. A database
    that is down: INFO too, since the pool logs each outage itself, once, at WARNING
    (database.DatabasePool), however many requests meet it. The server's other trouble (busy,
    embedding provider unavailable): WARNING."""
    if isinstance(error, InvalidInput | NotFound | PermissionDenied | DatabaseUnavailable):
        return logging.INFO
    return logging.WARNING


def create_server(
    open_service: OpenService,
    identify: Identify,
    *,
    auth: AuthProvider | None = None,
    holder: ServiceHolder | None = None,
) -> FastMCP:
    """The FastMCP server. `open_service` is entered once by the lifespan and closed at exit;
    `identify` gives the principal of the current request."""
    holder = holder or ServiceHolder()

    @asynccontextmanager
    async def lifespan(server: FastMCP) -> AsyncIterator[dict[str, Any]]:
        stack = ExitStack()
        service = await anyio.to_thread.run_sync(stack.enter_context, open_service())
        holder.set(service)
        try:
            yield {}
        finally:
            holder.set(None)
            await anyio.to_thread.run_sync(stack.close)

    mcp: FastMCP = FastMCP(
        "emergent-memory",
        instructions=guidelines.INSTRUCTIONS,
        lifespan=lifespan,
        auth=auth,
        mask_error_details=True,
        # no coercion: confirm must be the boolean true, limit a number, not "5" or "yes"
        strict_input_validation=True,
        middleware=[ArgumentErrors()],
    )

    async def call(method: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        principal = identify()
        try:
            return await anyio.to_thread.run_sync(partial(method, principal, *args, **kwargs))
        except EmergentMemoryError as error:
            raise ToolError(str(error), log_level=log_level_of(error)) from error
        except Exception:
            # the client sees a masked error (mask_error_details); the details stay here
            logger.exception("internal error in %s", getattr(method, "__name__", method))
            raise

    @mcp.tool(
        description=guidelines.SAVE_MEMORY,
        annotations={
            "title": "Save a memory",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    )
    async def save_memory(
        content: Annotated[
            str, Field(description="The memory: one specific, self-contained sentence.")
        ],
        category: Annotated[CategoryArg, Field(description="What kind of memory this is.")],
        source: Annotated[
            Literal["explicit", "inferred", "corrected"],
            Field(
                description="explicit: the user said it; inferred: you concluded it; "
                "corrected: it corrects an earlier memory."
            ),
        ] = "inferred",
        scope: Annotated[
            Literal["user", "project", "global"],
            Field(
                description="user: true for the user in every project (default); project: "
                "only in this project; global: for everyone (administrators only)."
            ),
        ] = "user",
        context: Annotated[
            str | None,
            Field(description="Optional name of a group to file it under, e.g. 'frontend'."),
        ] = None,
        related_to: Annotated[
            list[str] | None,
            Field(description="Optional ids (at most 20) of objects this memory is about."),
        ] = None,
    ) -> SaveResult:
        return await call(
            holder.get().save,
            content,
            category,
            source=source,
            scope=scope,
            context=context,
            related_to=related_to,
        )

    @mcp.tool(
        description=guidelines.RECALL_MEMORIES,
        annotations={
            "title": "Recall memories",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    )
    async def recall_memories(
        query: Annotated[str, Field(description="What to look for, in a few words.")],
        category: Annotated[
            CategoryArg | None, Field(description="Only memories of this category.")
        ] = None,
        scope: Annotated[
            Literal["user", "project", "global"] | None,
            Field(description="Only memories of this scope."),
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=50, description="How many memories at most (1 to 50).")
        ] = 10,
    ) -> RecallResult:
        return await call(holder.get().recall, query, category=category, scope=scope, limit=limit)

    @mcp.tool(
        description=guidelines.MANAGE_MEMORY,
        annotations={
            "title": "Manage memories",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    )
    async def manage_memory(
        action: Annotated[
            Literal["list", "delete", "update", "restore", "forget_all"],
            Field(description="What to do."),
        ],
        memory_id: Annotated[
            str | None, Field(description="The memory's id (for delete, update and restore).")
        ] = None,
        updates: Annotated[
            dict[str, Any] | None,
            Field(
                description="For update: new values of content, category and/or confidence "
                "(0 to 1)."
            ),
        ] = None,
        category: Annotated[
            CategoryArg | None, Field(description="For list: only this category.")
        ] = None,
        limit: Annotated[
            int | None, Field(ge=1, le=100, description="For list: how many (default 20).")
        ] = None,
        confirm: Annotated[bool, Field(description="For forget_all: must be true.")] = False,
        status: Annotated[
            Literal["active", "superseded", "deleted"] | None,
            Field(
                description="For list: active memories (default), or the superseded or "
                "deleted ones that restore can bring back."
            ),
        ] = None,
    ) -> ManageResult:
        result = await call(
            holder.get().manage,
            action,
            memory_id=memory_id,
            updates=updates,
            category=category,
            limit=limit,
            confirm=confirm,
            status=status,
        )
        return cast(ManageResult, result)

    @mcp.prompt(
        name="memory_guidelines",
        description="When to recall and save memories, how to write good ones, and what "
        "never to save.",
    )
    def memory_guidelines() -> str:
        return guidelines.MEMORY_GUIDELINES

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> Response:
        """200 when its database answers, 503 while it is down (a probe of at most a few
        seconds, reused for a second; while one runs, the last answer at once)."""
        reachable = await anyio.to_thread.run_sync(holder.get().pool.database_reachable)
        if not reachable:
            return JSONResponse({"status": "database unavailable"}, status_code=503)
        return JSONResponse({"status": "ok"})

    return mcp


# -- arguments the tools cannot take --------------------------------------------------------

# Half of a UTF-16 surrogate pair: JSON can carry one ("\ud800"), but it is not Unicode text.
# The MCP SDK's message parsers refuse the whole message that holds one (over HTTP a 400
# "Parse error" before any tool runs; over stdio no answer at all), so the transports first
# rewrite each escaped one into a marker those parsers accept (mark_lone_surrogates), which is
# found here like the surrogate itself: U+FDD0 (a noncharacter, never in text) followed by
# U+F0000 plus the surrogate's offset from U+D800.
SURROGATE_MARK = "\ufdd0"
MARK_BASE = 0xF0000
UNPAIRED_SURROGATE = re.compile("[\ud800-\udfff]|\ufdd0[\U000f0000-\U000f07ff]")
MAX_REPORTED_PROBLEMS = 5


class ArgumentErrors(Middleware):
    """One clear tool error for arguments that do not fit the tool's schema.

    Pydantic's report (`1 validation error for call[...]`, with a URL) is reworded as
    `invalid arguments for <tool>: <field> should ..., got ...`. Text holding an unpaired
    surrogate is refused here: FastMCP's strict validation cannot even encode it, and would
    fail with an internal error.
    """

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        problem = unpaired_surrogate(context.message.arguments or {})
        if problem is not None:
            raise ToolError(problem, log_level=logging.INFO)
        try:
            return await call_next(context)
        except ValidationError as error:
            if not isinstance(error.__cause__, PydanticValidationError):
                raise
            raise ToolError(
                describe_invalid_arguments(context.message.name, error.__cause__),
                log_level=logging.INFO,
            ) from error


def unpaired_surrogate(arguments: Mapping[str, Any]) -> str | None:
    """What names the first string (argument, key or value, at any depth) that holds an
    unpaired surrogate, as an error message; None when there is none."""
    for name, value in arguments.items():
        if UNPAIRED_SURROGATE.search(name):
            return _surrogate_problem("an argument name", name)
        found = _surrogate_in(value, _cut(name))
        if found is not None:
            return found
    return None


def _surrogate_in(value: object, field: str) -> str | None:
    if isinstance(value, str):
        return _surrogate_problem(field, value) if UNPAIRED_SURROGATE.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and UNPAIRED_SURROGATE.search(key):
                return _surrogate_problem(f"a key of {field}", key)
            found = _surrogate_in(item, f"{field}.{_cut(str(key))}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _surrogate_in(item, f"{field}[{index}]")
            if found is not None:
                return found
    return None


def _surrogate_problem(field: str, text: str) -> str:
    match = UNPAIRED_SURROGATE.search(text)
    assert match is not None
    found = match.group()
    code = ord(found) if len(found) == 1 else 0xD800 + ord(found[1]) - MARK_BASE
    return (
        f"{field} contains U+{code:04X}, half of a UTF-16 surrogate pair, which "
        "is not valid Unicode text; remove it or send the whole character"
    )


# Scanned left to right in a JSON message: an escaped backslash (what follows it is text, not
# an escape), a whole escaped pair (high half then low half), or an escaped half alone (group 1).
_ESCAPED_SURROGATES = re.compile(
    rb"\\\\"
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u([dD][89a-fA-F][0-9a-fA-F]{2})"
)


def mark_lone_surrogates(message: bytes) -> bytes:
    """A JSON message (UTF-8) with each escaped half of a surrogate pair that is not part of
    a pair ("\\ud83d" alone) replaced by its marker (UTF-8); anything else is unchanged."""
    return _ESCAPED_SURROGATES.sub(_marker, message)


def _marker(match: re.Match[bytes]) -> bytes:
    half = match.group(1)
    if half is None:  # an escaped backslash or a whole pair: kept
        return match.group()
    return (SURROGATE_MARK + chr(MARK_BASE + int(half, 16) - 0xD800)).encode("utf-8")


def describe_invalid_arguments(tool: str, error: PydanticValidationError) -> str:
    """Pydantic's errors for a tool's arguments as one line naming each field and the fix."""
    details = error.errors(include_url=False, include_context=False)
    problems = [_describe_problem(tool, detail) for detail in details[:MAX_REPORTED_PROBLEMS]]
    if len(details) > MAX_REPORTED_PROBLEMS:
        problems.append(f"and {len(details) - MAX_REPORTED_PROBLEMS} more")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def _describe_problem(tool: str, detail: ErrorDetails) -> str:
    if not detail["loc"]:  # the arguments as a whole, e.g. a number JSON cannot hold
        if "number out of range" in detail["msg"]:
            return "a number in the arguments is too large"
        return detail["msg"]
    field = _field_path(detail["loc"])
    kind = detail["type"]
    if kind in ("missing_argument", "missing"):
        return f"{field} is required"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        return f"{field} is not a parameter of {tool}"
    message = detail["msg"]
    if message.startswith("Input should "):
        message = f"{field} should {message.removeprefix('Input should ')}"
    else:
        message = f"{field}: {message}"
    return f"{message}, got {_shown(detail.get('input'))}"


def _field_path(location: tuple[int | str, ...]) -> str:
    """`related_to[0]`, `updates.content`: names a client chose are cut short."""
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else (f".{_cut(part)}" if path else _cut(part))
    return path


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown(value: object) -> str:
    """The offending value, short, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(_cut(value))
    if isinstance(value, int):
        return str(value) if abs(value) < 10**30 else "a number too large to show"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "a list"
    return "an object"


@contextmanager
def stdin_with_marked_surrogates() -> Iterator[None]:
    """For the stdio transport: file descriptor 0 becomes a pipe fed, line by line (one
    message a line), from the real standard input through mark_lone_surrogates, so that a
    message holding half a surrogate pair gets a tool error instead of no answer at all. End
    of input is passed on; the copying thread is a daemon and never delays exit. At the end
    of the block, file descriptor 0 is the real standard input again."""
    saved = os.dup(0)
    source = os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)

    def pump() -> None:
        # the pipe's reader is gone once the block has ended (BrokenPipeError)
        with (
            contextlib.suppress(BrokenPipeError),
            open(source, "rb") as lines,
            open(write_end, "wb") as sink,
        ):
            for line in iter(lines.readline, b""):
                sink.write(mark_lone_surrogates(line))
                sink.flush()

    threading.Thread(target=pump, name="stdin-surrogates", daemon=True).start()
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


# -- HTTP request bodies -------------------------------------------------------------------

PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC error codes


class RequestBodyGuard:
    """ASGI middleware of the HTTP server: refuses, with a JSON-RPC error naming the problem,
    a request body over `max_bytes` (413) and a JSON body that is not UTF-8 (400).

    A declared Content-Length over the limit is refused before any of the body is read; a
    body without one (chunked) is read only up to the limit. A JSON body within the limit is
    handed on as received, except that escaped halves of surrogate pairs are marked
    (mark_lone_surrogates), so that the tool reports them instead of the MCP SDK refusing the
    whole message: a marked body is handed on in one piece, its Content-Length corrected.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
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

        if utf8 is not None and received and received[-1]["type"] == "http.request":
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
        await _json_rpc_error(413, INVALID_REQUEST, message)(scope, receive, send)

    async def _not_utf8(
        self, error: UnicodeDecodeError, scope: Scope, receive: Receive, send: Send
    ) -> None:
        byte = error.object[error.start]
        message = (
            f"Parse error: the request body is not valid UTF-8 (it holds the byte 0x{byte:02X}); "
            "send JSON encoded as UTF-8"
        )
        await _json_rpc_error(400, PARSE_ERROR, message)(scope, receive, send)


def _json_rpc_error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}},
        status_code=status,
    )


def http_middleware(max_request_bytes: int) -> list[ASGIMiddleware]:
    """The ASGI middleware of the streamable HTTP server (mcp/http_server.py's http_app)."""
    return [ASGIMiddleware(RequestBodyGuard, max_bytes=max_request_bytes)]
