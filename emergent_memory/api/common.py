"""What every /api/v1 endpoint shares: the principal of the request's verified token, its
input checked with pydantic (the JSON body, the query string, the path's ids), one service
call in a worker thread, and errors as {"error": {"code", "message"}} with a status a client
can act on.

An endpoint is declared once, as an `Endpoint` (method, path, input models, the service call,
the answer's type): the route and its OpenAPI description (api/openapi.py) both come from it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from emergent_memory.auth.principal import READ, Principal
from emergent_memory.errors import (
    DatabaseUnavailable,
    EmergentMemoryError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    ServiceBusy,
)

logger = logging.getLogger(__name__)

API = "/api/v1"


class Problem(Exception):
    """An answer other than 200 decided at the edge (no token, a body that is not JSON)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Input(BaseModel):
    """A request's JSON body or query string: unknown fields are refused. Only the shapes are
    checked here; what the values may be is the services' one rule (memory/validation)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class QueryInput(Input):
    """A query string: every value arrives as text, so numbers, ids and dates are read from
    it (lax), and a field given twice is refused."""

    model_config = ConfigDict(extra="forbid", strict=False)


class NoInput(Input):
    """No body, or no query parameters."""


Q = TypeVar("Q", bound=Input)
B = TypeVar("B", bound=Input)


@dataclass(frozen=True)
class Call(Generic[Q, B]):
    """One request, checked: who asks, the path's parameters, the query, the body."""

    principal: Principal
    path: Mapping[str, str]
    query: Q
    body: B


@dataclass(frozen=True)
class Endpoint(Generic[Q, B]):
    """One endpoint: `run` is the service call (run in a worker thread), `answer` the type of
    what it returns (for the OpenAPI document), `scope` the scope it needs (the service
    checks it; the document says it). `method` is lowercase, as OpenAPI writes it."""

    method: str
    path: str
    summary: str
    run: Callable[[Call[Q, B]], object]
    answer: object
    query: type[Q]
    body: type[B]
    scope: str = READ
    status: int = 200
    tags: tuple[str, ...] = field(default=())
    # whether the body may be left out (OpenAPI requestBody.required false): only when an
    # empty object is a whole request, such as an archive without a reason
    body_optional: bool = False

    @property
    def url(self) -> str:
        return API + self.path

    def route(self) -> Route:
        async def endpoint(request: Request) -> Response:
            async def run(principal: Principal) -> Response:
                call = Call(
                    principal,
                    {name: str(value) for name, value in request.path_params.items()},
                    parse_query(self.query, request),
                    await self._body(request),
                )
                result = await anyio.to_thread.run_sync(lambda: self.run(call))
                return JSONResponse(result, status_code=self.status)

            return await answer(request, run)

        return Route(self.url, endpoint, methods=[self.method], name=f"{self.method} {self.url}")

    async def _body(self, request: Request) -> B:
        """The JSON body; no body at all is an empty object (enough for a body whose fields
        are all optional, such as an archive's reason; a required field is named)."""
        raw = await request.body()
        if not raw.strip():
            return _validated(self.body, {})
        return parse_body(self.body, raw)


async def answer(request: Request, run: Callable[[Principal], Awaitable[Response]]) -> Response:
    """The response of an endpoint: `run` with the token's principal, or the error's."""
    try:
        return await run(token_principal(request))
    except Problem as problem:
        return problem_response(problem.status, problem.code, problem.message)
    except EmergentMemoryError as error:
        status, code = status_of(error)
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


def status_of(error: EmergentMemoryError) -> tuple[int, str]:
    if isinstance(error, InvalidInput):
        return 400, "invalid_input"
    if isinstance(error, PermissionDenied):
        return 403, "forbidden"
    if isinstance(error, NotFound):
        return 404, "not_found"
    if isinstance(error, ServiceBusy | DatabaseUnavailable):
        return 503, "unavailable"
    return 500, "internal"


def token_principal(request: Request) -> Principal:
    user = request.scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        raise Problem(
            401,
            "unauthorized",
            "not authenticated: send Authorization: Bearer <token> with a live token "
            "(emergent-memory token create)",
        )
    return Principal.of_token(user.access_token.claims or {}, user.access_token.scopes)


def in_project(principal: Principal, project_id: uuid.UUID | None) -> Principal:
    """The principal in the project the request names: its own, or any of its actor's with
    the scope memory:any-project. The actor always comes from the token."""
    if project_id is None or project_id == principal.project_id:
        return principal
    if not principal.may_choose_project:
        raise Problem(
            403,
            "forbidden",
            f"this token acts only in project {principal.project_id}; leave project_id out, "
            "or use a token with the scope memory:any-project (emergent-memory hooks install "
            "creates one)",
        )
    return Principal(principal.actor_id, project_id, principal.scopes)


# No request of the API nests deeper than a few levels; a body nested deeper than this is
# refused before it is validated (JSON nested a few thousand levels deep is more than
# Python's parser can read at all: RecursionError).
MAX_JSON_DEPTH = 32


def parse_body(model: type[B], raw: bytes) -> B:
    """The JSON object of a request's body, validated by `model`. Every endpoint with a body
    reads it here: a body that is not JSON, or JSON nested deeper than MAX_JSON_DEPTH levels,
    is a 400 invalid_json."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise Problem(400, "invalid_json", f"the body is not JSON: {error}") from None
    except RecursionError:
        raise Problem(400, "invalid_json", _TOO_DEEP) from None
    if _depth_over(data, MAX_JSON_DEPTH):
        raise Problem(400, "invalid_json", _TOO_DEEP)
    if not isinstance(data, dict):
        raise Problem(400, "invalid_input", "the body must be a JSON object")
    return _validated(model, data)


_TOO_DEEP = (
    f"the body is JSON nested more than {MAX_JSON_DEPTH} levels deep; no request of this API "
    "needs more than a few levels: send the fields the endpoint takes"
)


def _depth_over(value: object, limit: int) -> bool:
    """Whether `value` (parsed JSON) nests arrays and objects more than `limit` levels deep
    (walked without recursion)."""
    level: list[object] = [value]  # the values at one nesting level, from the top
    for _ in range(limit):
        level = [
            item
            for container in level
            if isinstance(container, dict | list)
            for item in (container.values() if isinstance(container, dict) else container)
        ]
        if not level:
            return False
    return any(isinstance(item, dict | list) for item in level)


def parse_query(model: type[Q], request: Request) -> Q:
    params = request.query_params
    repeated = sorted({name for name in params if len(params.getlist(name)) > 1})
    if repeated:
        raise Problem(
            400, "invalid_input", f"{', '.join(repeated)}: give each query parameter once"
        )
    return _validated(model, dict(params))


def _validated(model: type[B], data: dict[str, Any]) -> B:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(_describe(detail) for detail in error.errors())
        raise Problem(400, "invalid_input", problems) from None


def _describe(detail: Any) -> str:
    where = ".".join(str(part) for part in detail["loc"]) or "body"
    message = str(detail["msg"])
    if detail["type"] == "extra_forbidden":
        message = "is not a field of this request"
    return f"{where}: {message}"
