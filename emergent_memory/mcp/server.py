"""The MCP server: the four memory tools, the memory_guidelines prompt, and a health check.

Tools are thin: they name the principal (from the server's configuration or the caller's
token, never from an argument), call the memory service (verify_memory: the verify service)
in a worker thread, and turn domain errors into tool errors. Internal errors are logged and
masked. Arguments the tools cannot take are refused with one clear error each, the rarely
used ones come in an `options` object, and the input schemas are told to clients in few
tokens (mcp/arguments.py); each answer is a few lines of text, the full result beside it
only with `detail` (mcp/compact.py). The HTTP server (mcp/http.py) checks bearer tokens and
refuses oversized bodies.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio.to_thread
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import FunctionTool, Tool, ToolResult
from mcp.types import CallToolRequestParams, ListToolsRequest
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from emergent_memory import __version__
from emergent_memory.auth.principal import Principal
from emergent_memory.errors import (
    DatabaseUnavailable,
    EmergentMemoryError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    ServiceBusy,
)
from emergent_memory.mcp import compact, guidelines
from emergent_memory.mcp.arguments import (
    ArgumentErrors,
    RecallOptions,
    SaveOptions,
    lean_schema,
    log_invalid_arguments_at_info,
    parse_options,
)
from emergent_memory.mcp.compact import answer, answer_schema
from emergent_memory.mcp.metrics import ToolMetrics
from emergent_memory.memory.models import (
    Action,
    Category,
    ListStatus,
    ManageResult,
    MemoryScope,
    RecallResult,
    SaveResult,
    Source,
)
from emergent_memory.memory.verify_result import (
    VERIFY_DEFAULT_LIMIT,
    VERIFY_MAX_LIMIT,
    VerifyResult,
)

if TYPE_CHECKING:  # the service layers load in the background (ServiceHolder)
    from emergent_memory.memory import MemoryService
    from emergent_memory.memory.verify import VerifyService

logger = logging.getLogger(__name__)

R = TypeVar("R")

Identify = Callable[[], Principal]
OpenService = Callable[[], AbstractContextManager["MemoryService"]]
# verify_memory's service on the memory service the lifespan opened (app.verify_service)
OpenVerifier = Callable[["MemoryService"], AbstractContextManager["VerifyService"]]
# Seconds a tool call waits for the services the server opens in the background (the
# database, its schema checked, the pool): a fresh embedded database takes a few seconds, a
# busy machine more.
STARTUP_WAIT = 60.0
SETTLED_POLL = 0.05  # seconds between looks while waiting
# The stdio server imports the application and opens its services once the client has the
# tool list (which it asks for right after initialize), or after this many seconds at the
# latest: the first answers do not share the CPU with that work.
OPEN_WHEN_LISTED = 1.0
# Seconds the server, stopping, waits for services still opening before it leaves them (their
# thread ends with the process).
SHUTDOWN_WAIT = 10.0
STARTING = (
    f"the memory server is still starting after {STARTUP_WAIT:.0f} s (starting the database "
    "or checking its schema); try again in a moment, and see the server's log if it goes on"
)
STOPPING = "the memory server is stopping"
# readOnlyHint holds for memories; the one thing verify_memory may spend is said here
VERIFY_JUDGE_NOTE = " An unclear claim may cost one LLM call (counted in the daily token budget)."


class ServiceHolder:
    """The services the lifespan opens, for the tools to use.

    The lifespan opens them in a thread of their own (`open_in_background`), so that the
    server answers `initialize` and `tools/list` at once, while the database starts and the
    heavy modules load. A tool call waits for them (`wait`, in WaitForServices) at most
    STARTUP_WAIT seconds; then, or when opening them failed, it gets a tool error that says
    so (the failure's own message: a database behind the schema, one that cannot be reached).
    """

    def __init__(self) -> None:
        self._service: MemoryService | None = None
        self._verifier: VerifyService | None = None
        self._failure: str | None = None
        self._settled = threading.Event()  # opened, or failed
        self.listed = threading.Event()  # the client has been sent the tool list
        self.stopping = threading.Event()  # the server is stopping: open nothing more
        self.verifies = False  # whether the server was given a verify service

    def get(self) -> MemoryService:
        if self._service is None:
            message = self._unavailable()
            # from a domain error, so the metrics count it unavailable (mcp/metrics.py)
            raise ToolError(message) from ServiceBusy(message)
        return self._service

    def verifier(self) -> VerifyService:
        if not self.verifies:
            message = "verify_memory is not available on this server"
            raise ToolError(message) from ServiceBusy(message)  # counted unavailable
        if self._verifier is None:
            message = self._unavailable()
            raise ToolError(message) from ServiceBusy(message)
        return self._verifier

    def _unavailable(self) -> str:
        if self._failure is not None:
            return f"the memory server could not start: {self._failure}"
        if self._settled.is_set():  # opened, then closed: the server is stopping
            return STOPPING
        return STARTING

    def set(self, service: MemoryService | None, verifier: VerifyService | None = None) -> None:
        self._service = service
        self._verifier = verifier

    async def wait(self, timeout: float = STARTUP_WAIT) -> None:
        """Until the services are open (or failed to open), at most `timeout` seconds."""
        deadline = anyio.current_time() + timeout
        while not self._settled.is_set() and anyio.current_time() < deadline:
            await anyio.sleep(SETTLED_POLL)

    def open_in_background(
        self, stack: ExitStack, open_service: OpenService, open_verifier: OpenVerifier | None
    ) -> threading.Thread:
        """Start opening the services on `stack` in a thread; returns the thread."""

        def open_all() -> None:
            try:
                service = stack.enter_context(open_service())
                verifier = None
                if open_verifier is not None:
                    verifier = stack.enter_context(open_verifier(service))
                self.set(service, verifier)
            except Stopped:  # stopped before it opened anything: nothing to report
                self._failure = STOPPING
            except EmergentMemoryError as error:
                self._failure = str(error)
                logger.error("the memory server could not start: %s", error)
            except Exception as error:  # logged whole here; the caller sees its kind
                self._failure = f"internal error ({type(error).__name__}); see the server's log"
                logger.exception("the memory server could not start")
            finally:
                self._settled.set()

        opener = threading.Thread(target=open_all, name="emergent-memory-start", daemon=True)
        opener.start()
        return opener


class Stopped(Exception):
    """Raised by an `open_service` that finds the server stopping before its heavy work (the
    client left before it asked for the tool list): nothing is opened."""


class WaitForServices(Middleware):
    """A tool call waits (bounded) for the services the server is still opening; a tool list
    sent is what `listed` says (create_server)."""

    def __init__(self, holder: ServiceHolder) -> None:
        self._holder = holder

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._holder.listed.set()
        return tools

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        self._holder.listed.set()
        await self._holder.wait()
        return await call_next(context)


def log_level_of(error: EmergentMemoryError) -> int:
    """The level at which a tool's failure is logged. The caller's mistakes: INFO. A database
    that is down: INFO too, since the pool (db/pool.py) logs each outage itself, once, at
    WARNING, however many requests meet it. The server's other trouble (busy, embedding
    provider unavailable): WARNING."""
    if isinstance(error, InvalidInput | NotFound | PermissionDenied | DatabaseUnavailable):
        return logging.INFO
    return logging.WARNING


def create_server(
    open_service: OpenService,
    identify: Identify,
    *,
    auth: AuthProvider | None = None,
    open_verifier: OpenVerifier | None = None,
    listed: threading.Event | None = None,
    stopping: threading.Event | None = None,
) -> FastMCP:
    """The FastMCP server. `open_service` is entered once by the lifespan, in the background
    (ServiceHolder), and closed at exit, and `open_verifier` (verify_memory's service) on the
    service it opened; without it,
    verify_memory answers that it is not available. `identify` gives the principal of the
    current request. `listed`, when given, is set once the client has been sent the tool
    list (or calls a tool): `open_service` may wait for it before its heavy work, so that
    the first answers do not share the CPU with it (stdio: OPEN_WHEN_LISTED). `stopping`,
    when given, is set (and `listed` with it, to wake a wait) when the server stops: an
    `open_service` still waiting then raises Stopped instead of opening anything."""
    holder = ServiceHolder()
    holder.verifies = open_verifier is not None
    if listed is not None:
        holder.listed = listed
    if stopping is not None:
        holder.stopping = stopping
    log_invalid_arguments_at_info()

    @asynccontextmanager
    async def lifespan(server: FastMCP) -> AsyncIterator[dict[str, Any]]:
        stack = ExitStack()
        opener = holder.open_in_background(stack, open_service, open_verifier)
        try:
            yield {}
        finally:
            holder.stopping.set()
            holder.listed.set()  # wakes an opener still waiting for the tool list
            await anyio.to_thread.run_sync(opener.join, SHUTDOWN_WAIT)
            if opener.is_alive():  # a database that does not answer: the process ends anyway
                logger.warning("stopping while the services are still opening")
            else:
                holder.set(None)
                await anyio.to_thread.run_sync(stack.close)

    mcp: FastMCP = FastMCP(
        "emergent-memory",
        version=__version__,  # else clients are told FastMCP's own version
        instructions=guidelines.INSTRUCTIONS,
        lifespan=lifespan,
        auth=auth,
        mask_error_details=True,
        # no coercion: confirm must be the boolean true, limit a number, not "5" or "yes"
        strict_input_validation=True,
        # each tool call measured (mcp/metrics.py), then its arguments checked
        middleware=[ToolMetrics(), WaitForServices(holder), ArgumentErrors()],
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

    def tool(**settings: Any) -> Callable[[Callable[..., Any]], None]:
        """Register a tool, its input schema told to clients in few tokens (lean_schema)."""

        def register(function: Callable[..., Any]) -> None:
            made = FunctionTool.from_function(function, **settings)
            mcp.add_tool(made.model_copy(update={"parameters": lean_schema(made.parameters)}))

        return register

    @tool(
        description=guidelines.SAVE_MEMORY,
        annotations={
            "title": "Save a memory",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        output_schema=answer_schema(SaveResult),
    )
    async def save_memory(
        content: Annotated[str, Field(description="One specific, self-contained fact.")],
        category: Category,
        source: Annotated[Source, Field(description=guidelines.SOURCE)] = "inferred",
        scope: Annotated[MemoryScope, Field(description=guidelines.SCOPE)] = "user",
        options: Annotated[
            dict[str, Any] | None, Field(description=guidelines.SAVE_OPTIONS)
        ] = None,
        detail: Annotated[bool, Field(description=guidelines.DETAIL)] = False,
    ) -> ToolResult:
        more = parse_options(SaveOptions, "save_memory", options)
        result = await call(
            holder.get().save,
            content,
            category,
            source=source,
            scope=scope,
            **more.model_dump(),
        )
        return answer(compact.save_text(result), result, detail)

    @tool(
        description=guidelines.RECALL_MEMORIES,
        annotations={
            "title": "Recall memories",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        output_schema=answer_schema(RecallResult),
    )
    async def recall_memories(
        query: Annotated[str, Field(description="What to look for, in a few words.")],
        category: Annotated[Category | None, Field(description="Only this category.")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        options: Annotated[
            dict[str, Any] | None, Field(description=guidelines.RECALL_OPTIONS)
        ] = None,
        detail: Annotated[bool, Field(description=guidelines.DETAIL)] = False,
    ) -> ToolResult:
        more = parse_options(RecallOptions, "recall_memories", options)
        result = await call(
            holder.get().recall,
            query,
            category=category,
            limit=limit,
            **more.model_dump(),
        )
        return answer(compact.recall_text(result), result, detail)

    @tool(
        description=guidelines.MANAGE_MEMORY,
        annotations={
            "title": "Manage memories",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": False,
        },
        output_schema=answer_schema(ManageResult),
    )
    async def manage_memory(
        action: Action,
        memory_id: Annotated[str | None, Field(description=guidelines.MEMORY_ID)] = None,
        updates: Annotated[dict[str, Any] | None, Field(description=guidelines.UPDATES)] = None,
        category: Annotated[Category | None, Field(description="For list.")] = None,
        limit: Annotated[int | None, Field(ge=1, le=100, description="For list.")] = None,
        status: Annotated[ListStatus | None, Field(description=guidelines.STATUS)] = None,
        confirm: Annotated[bool, Field(description="For forget_all: must be true.")] = False,
        evidence: Annotated[str | None, Field(description=guidelines.EVIDENCE)] = None,
        reason: Annotated[str | None, Field(description=guidelines.REASON)] = None,
        replaces: Annotated[str | None, Field(description=guidelines.REPLACES)] = None,
        other: Annotated[str | None, Field(description=guidelines.OTHER)] = None,
        detail: Annotated[bool, Field(description=guidelines.DETAIL)] = False,
    ) -> ToolResult:
        result = await call(
            holder.get().manage,
            action,
            memory_id=memory_id,
            updates=updates,
            category=category,
            limit=limit,
            confirm=confirm,
            status=status,
            evidence=evidence,
            reason=reason,
            replaces=replaces,
            other=other,
        )
        return answer(compact.manage_text(action, result), result, detail)

    @tool(
        description=guidelines.VERIFY_MEMORY + VERIFY_JUDGE_NOTE,
        annotations={
            "title": "Verify a claim against memory",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        output_schema=answer_schema(VerifyResult),
    )
    async def verify_memory(
        claim: Annotated[str, Field(description="One self-contained sentence.")],
        category: Annotated[Category | None, Field(description="Only this category.")] = None,
        scope: Annotated[MemoryScope | None, Field(description="Only this scope.")] = None,
        limit: Annotated[int, Field(ge=1, le=VERIFY_MAX_LIMIT)] = VERIFY_DEFAULT_LIMIT,
        detail: Annotated[bool, Field(description=guidelines.DETAIL)] = False,
    ) -> ToolResult:
        result = await call(
            holder.verifier().verify, claim, category=category, scope=scope, limit=limit
        )
        return answer(compact.verify_text(result), result, detail)

    @mcp.prompt(
        name="memory_guidelines",
        description="When to recall, save, verify and reinforce memories, when to give "
        "importance and validity, how to write good ones, and what never to save.",
    )
    def memory_guidelines() -> str:
        return guidelines.MEMORY_GUIDELINES

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> Response:
        """200 when its database answers, 503 while it is down (a probe of at most a few
        seconds, reused for a second; while one runs, the last answer at once). With a read
        replica, its state too (`read_replica`); still 200 while it is down or lags, since
        reads then go to the database."""
        service = holder.get()
        reachable = await anyio.to_thread.run_sync(service.database_reachable)
        if not reachable:
            return JSONResponse({"status": "database unavailable"}, status_code=503)
        body: dict[str, Any] = {"status": "ok"}
        replica = await anyio.to_thread.run_sync(service.read_replica_health)
        if replica is not None:
            body["read_replica"] = replica
        return JSONResponse(body)

    return mcp
