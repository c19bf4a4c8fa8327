"""The REST API under /api/v1, served by the same HTTP app, tokens and row-level security as
MCP: the context to inject into a session and the capture of its conversation (the hooks'),
the memories, contexts, stats, duplicates and logs (api/memories.py; the dashboard's), and
its OpenAPI description (api/openapi.py).

Endpoints are thin (api/common.py): they read the principal from the request's verified
bearer token (the HTTP app's authentication middleware checked it), check the input, call
one service method in a worker thread, and shape the answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

from emergent_memory.api.browse import browse_endpoints
from emergent_memory.api.common import (
    API,
    Call,
    Endpoint,
    Input,
    NoInput,
    in_project,
    problem_response,
)
from emergent_memory.api.memories import memory_endpoints
from emergent_memory.api.openapi import OPENAPI, openapi_route
from emergent_memory.auth.principal import WRITE, Principal
from emergent_memory.memory.auto_memory_import import (
    MAX_FILES,
    AutoMemoryImport,
    FolderFile,
    FolderReport,
)
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.capture import CaptureReceipt
from emergent_memory.memory.capture_text import Role
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.injection import ContextResult, Event, StartSource
from emergent_memory.memory.service import MemoryService
from emergent_memory.memory.verify import VerifyService

# Every method a client may send (lowercase: Starlette uppercases them)
ANY_METHOD = ["get", "head", "post", "put", "patch", "delete", "options"]


class ContextService(Protocol):
    def context(
        self,
        principal: Principal,
        *,
        session_id: str,
        event: str,
        client: str = "api",
        source: str | None = None,
        prompt: str | None = None,
        budget_tokens: int | None = None,
    ) -> ContextResult: ...


class Capture(Protocol):
    @property
    def enabled(self) -> bool: ...

    def enqueue(
        self,
        principal: Principal,
        *,
        session_id: str,
        client: str,
        messages: Sequence[Any],
        first_index: int | None,
        final: bool,
    ) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ApiServices:
    """What the API calls: injection, capture (which answers "off" without a key), the memory
    service, the browsing one, the possible duplicates', verify, and the import of Claude
    Code's auto memory."""

    injection: ContextService
    capture: Capture
    memory: MemoryService
    browse: BrowseService
    duplicates: DuplicateService
    verify: VerifyService
    auto_memory: AutoMemoryImport


class SessionContext(ContextResult):
    """The context answer: what to inject, and whether automatic capture is on (a client
    says so in the session when it is off, and keeps what it would have sent)."""

    capture: Literal["on", "off"]


class _SessionInput(Input):
    session_id: str
    client: str = "api"
    project_id: uuid.UUID | None = Field(default=None, strict=False)


class ContextRequest(_SessionInput):
    event: Event
    source: StartSource | None = None
    prompt: str | None = None
    budget_tokens: int | None = None


class CapturedMessageBody(Input):
    role: Role
    content: str


class CaptureRequest(_SessionInput):
    messages: list[CapturedMessageBody] = Field(max_length=10_000)
    first_index: int | None = Field(default=None, ge=0)
    final: bool = False


class AutoMemoryFileBody(Input):
    name: str
    text: str


class AutoMemoryRequest(Input):
    """One memory folder's changed files and the ones deleted, as the PostToolUse hook and
    the SessionStart catch-up send them (AutoMemoryImport.import_folder)."""

    folder: str
    origin: str | None = None
    project_id: uuid.UUID | None = Field(default=None, strict=False)
    files: list[AutoMemoryFileBody] = Field(default_factory=list, max_length=MAX_FILES)
    deleted: list[str] = Field(default_factory=list, max_length=MAX_FILES)
    dry_run: bool = False


def session_endpoints(services: ApiServices) -> list[Endpoint[Any, Any]]:
    """The hooks' endpoints: what to inject into a session, its conversation to capture, and
    the files Claude Code writes in its auto memory folder."""

    def context(call: Call[NoInput, ContextRequest]) -> SessionContext:
        body = call.body
        result = services.injection.context(
            in_project(call.principal, body.project_id),
            session_id=body.session_id,
            event=body.event,
            client=body.client,
            source=body.source,
            prompt=body.prompt,
            budget_tokens=body.budget_tokens,
        )
        return {**result, "capture": "on" if services.capture.enabled else "off"}

    def capture(call: Call[NoInput, CaptureRequest]) -> dict[str, Any]:
        body = call.body
        receipt = services.capture.enqueue(
            in_project(call.principal, body.project_id),
            session_id=body.session_id,
            client=body.client,
            messages=body.messages,
            first_index=body.first_index,
            final=body.final,
        )
        return dict(receipt)

    def import_claude_code(call: Call[NoInput, AutoMemoryRequest]) -> FolderReport:
        body = call.body
        return services.auto_memory.import_folder(
            in_project(call.principal, body.project_id),
            body.folder,
            [FolderFile(file.name, file.text) for file in body.files],
            origin=body.origin,
            deleted=body.deleted,
            dry_run=body.dry_run,
            source="inferred",  # the hooks' sync: files the agent wrote in a session
        )

    return [
        Endpoint(
            "post",
            "/import/claude-code",
            "Claude Code auto memory files, saved, updated or forgotten as memories",
            import_claude_code,
            FolderReport,
            NoInput,
            AutoMemoryRequest,
            scope=WRITE,
            tags=("sessions",),
        ),
        Endpoint(
            "post",
            "/context",
            "The memories to inject into a session, at its start or with a prompt",
            context,
            SessionContext,
            NoInput,
            ContextRequest,
            tags=("sessions",),
        ),
        Endpoint(
            "post",
            "/capture",
            "A session's new messages, for automatic capture",
            capture,
            CaptureReceipt,
            NoInput,
            CaptureRequest,
            scope=WRITE,
            status=202,
            tags=("sessions",),
        ),
    ]


def api_endpoints(services: ApiServices) -> list[Endpoint[Any, Any]]:
    """Every endpoint of the API, in the order the router tries them (fixed paths before
    paths with parameters)."""
    memories = memory_endpoints(
        services.memory, services.browse, services.duplicates, services.verify
    )
    return session_endpoints(services) + memories + browse_endpoints(services.browse)


def api_routes(services: ApiServices) -> list[BaseRoute]:
    """The /api/v1 routes, to add to the HTTP app (behind its authentication middleware),
    and last a route that answers any other path under /api/v1 with the API's errors."""
    endpoints = api_endpoints(services)
    routes = [openapi_route(endpoints), *(endpoint.route() for endpoint in endpoints)]
    return [*routes, _elsewhere(routes)]


def _elsewhere(routes: list[Route]) -> Route:
    """404 for a path no endpoint has, 405 (with Allow) for a method its path does not take,
    as JSON errors (Starlette's own are plain text)."""

    async def elsewhere(request: Request) -> Response:
        allowed = sorted(
            {
                method
                for route in routes
                if route.matches(request.scope)[0] is not Match.NONE
                for method in route.methods or ()
            }
        )
        path = request.url.path
        if allowed:
            return problem_response(
                405,
                "method_not_allowed",
                f"{path} takes {', '.join(allowed)}, not {request.method}",
                {"Allow": ", ".join(allowed)},
            )
        return problem_response(
            404, "not_found", f"no endpoint at {path}; {OPENAPI} lists every endpoint"
        )

    return Route(f"{API}/{{path:path}}", elsewhere, methods=ANY_METHOD, include_in_schema=False)
