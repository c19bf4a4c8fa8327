"""The REST API under /api/v1: the context to inject into a session and the capture of its
conversation, served by the same HTTP app, tokens and row-level security as MCP.

Endpoints are thin: they read the principal from the request's verified bearer token (the
HTTP app's authentication middleware checked it), check the JSON body, call one service
method in a worker thread, and shape the answer. Errors are JSON, {"error": {"code",
"message"}}, with the status a client can act on.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from emergent_memory.auth.principal import Principal
from emergent_memory.errors import (
    DatabaseUnavailable,
    EmergentMemoryError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    ServiceBusy,
)
from emergent_memory.memory.capture_text import Role
from emergent_memory.memory.injection import ContextResult, Event, StartSource

logger = logging.getLogger(__name__)

API = "/api/v1"


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
    """What the API calls: injection and capture (which answers "off" without a key)."""

    injection: ContextService
    capture: Capture


class _Body(BaseModel):
    """The JSON shapes; what the values may be is the services' one rule (memory/validation)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    session_id: str
    client: str = "api"
    project_id: uuid.UUID | None = Field(default=None, strict=False)


B = TypeVar("B", bound=_Body)


class ContextRequest(_Body):
    event: Event
    source: StartSource | None = None
    prompt: str | None = None
    budget_tokens: int | None = None


class CapturedMessageBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Role
    content: str


class CaptureRequest(_Body):
    messages: list[CapturedMessageBody] = Field(max_length=10_000)
    first_index: int | None = Field(default=None, ge=0)
    final: bool = False


def api_routes(services: ApiServices) -> list[Route]:
    """The /api/v1 routes, to add to the HTTP app (behind its authentication middleware)."""

    async def context(request: Request) -> Response:
        async def run(principal: Principal, body: ContextRequest) -> Response:
            result = await anyio.to_thread.run_sync(
                lambda: services.injection.context(
                    principal,
                    session_id=body.session_id,
                    event=body.event,
                    client=body.client,
                    source=body.source,
                    prompt=body.prompt,
                    budget_tokens=body.budget_tokens,
                )
            )
            return JSONResponse(result)

        return await _handle(request, ContextRequest, run)

    async def capture(request: Request) -> Response:
        async def run(principal: Principal, body: CaptureRequest) -> Response:
            service = services.capture
            receipt = await anyio.to_thread.run_sync(
                lambda: service.enqueue(
                    principal,
                    session_id=body.session_id,
                    client=body.client,
                    messages=body.messages,
                    first_index=body.first_index,
                    final=body.final,
                )
            )
            return JSONResponse(dict(receipt), status_code=202)

        return await _handle(request, CaptureRequest, run)

    return [
        Route(f"{API}/context", context, methods=["POST"]),
        Route(f"{API}/capture", capture, methods=["POST"]),
    ]


class _Problem(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def _handle(
    request: Request,
    model: type[B],
    run: Callable[[Principal, B], Awaitable[Response]],
) -> Response:
    try:
        principal = _token_principal(request)
        body = _parse(model, await request.body())
        return await run(_in_project(principal, body.project_id), body)
    except _Problem as problem:
        return problem_response(problem.status, problem.code, problem.message)
    except EmergentMemoryError as error:
        status, code = _status_of(error)
        level = logging.WARNING if status >= 500 else logging.INFO
        logger.log(level, "%s %s: %s", request.method, request.url.path, error)
        headers = {"Retry-After": "1"} if status == 503 else None
        return problem_response(status, code, str(error), headers)
    except Exception:
        logger.exception("%s %s failed", request.method, request.url.path)
        return problem_response(500, "internal", "internal error; the server's log has details")


def problem_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The API's error body: {"error": {"code": ..., "message": ...}}."""
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def _status_of(error: EmergentMemoryError) -> tuple[int, str]:
    if isinstance(error, InvalidInput):
        return 400, "invalid_input"
    if isinstance(error, PermissionDenied):
        return 403, "forbidden"
    if isinstance(error, NotFound):
        return 404, "not_found"
    if isinstance(error, ServiceBusy | DatabaseUnavailable):
        return 503, "unavailable"
    return 500, "internal"


def _token_principal(request: Request) -> Principal:
    user = request.scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        raise _Problem(
            401,
            "unauthorized",
            "not authenticated: send Authorization: Bearer <token> with a live token "
            "(emergent-memory token create)",
        )
    return Principal.of_token(user.access_token.claims or {}, user.access_token.scopes)


def _in_project(principal: Principal, project_id: uuid.UUID | None) -> Principal:
    """The principal in the project the request names: its own, or any of its actor's with
    the scope memory:any-project. The actor always comes from the token."""
    if project_id is None or project_id == principal.project_id:
        return principal
    if not principal.may_choose_project:
        raise _Problem(
            403,
            "forbidden",
            f"this token acts only in project {principal.project_id}; leave project_id out, "
            "or use a token with the scope memory:any-project (emergent-memory hooks install "
            "creates one)",
        )
    return Principal(principal.actor_id, project_id, principal.scopes)


def _parse(model: type[B], raw: bytes) -> B:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise _Problem(400, "invalid_json", f"the body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise _Problem(400, "invalid_input", "the body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(_describe(detail) for detail in error.errors())
        raise _Problem(400, "invalid_input", problems) from None


def _describe(detail: Any) -> str:
    where = ".".join(str(part) for part in detail["loc"]) or "body"
    message = str(detail["msg"])
    if detail["type"] == "extra_forbidden":
        message = "is not a field of this request"
    return f"{where}: {message}"
