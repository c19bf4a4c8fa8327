"""The OpenAPI 3.1 description of /api/v1, built from the endpoints themselves: their paths,
methods, scopes, and the JSON schemas pydantic derives from their input models and from the
services' result types (memory/models.py). Served at /api/v1/openapi.json without a token: it
describes the API and holds no one's data."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from pydantic import TypeAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import emergent_memory
from emergent_memory.api.common import API, Endpoint, NoInput
from emergent_memory.auth.principal import WRITE

OPENAPI = f"{API}/openapi.json"
REF = "#/components/schemas/{model}"
ERRORS = {
    "400": "Bad input (the message names the field and what to fix); nothing was written",
    "401": "No live bearer token",
    "403": "The token lacks the scope this needs (the message names it)",
    "503": "The database is busy or unreachable; retry after Retry-After seconds",
}
NOT_FOUND = "No such id visible to this token (another actor's id answers exactly the same)"
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {
                    "type": "string",
                    "enum": [
                        "invalid_input",
                        "invalid_json",
                        "unauthorized",
                        "forbidden",
                        "not_found",
                        "method_not_allowed",
                        "too_large",
                        "unavailable",
                        "internal",
                    ],
                },
                "message": {"type": "string"},
            },
        }
    },
}
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")


def openapi_document(endpoints: Sequence[Endpoint[Any, Any]]) -> dict[str, Any]:
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, dict[str, Any]] = {
        OPENAPI: {
            "get": {
                "operationId": "get_openapi",
                "summary": "This description of the API (no token needed)",
                "tags": ["meta"],
                "security": [],
                "responses": {"200": {"description": "OpenAPI 3.1", **_json({"type": "object"})}},
            }
        }
    }
    for endpoint in endpoints:
        paths.setdefault(endpoint.url, {})[endpoint.method] = _operation(endpoint, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "emergent-memory REST API",
            "version": emergent_memory.__version__,
            "description": (
                "The memories agents saved, over HTTP: the same bearer tokens, scopes "
                "(memory:read, memory:write, memory:admin) and row-level security as the MCP "
                'tools. Errors are {"error": {"code", "message"}}. docs/api.md has examples.'
            ),
        },
        "servers": [{"url": "/"}],
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a token of `emergent-memory token create`",
                }
            },
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }


def openapi_route(endpoints: Sequence[Endpoint[Any, Any]]) -> Route:
    document = openapi_document(endpoints)

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    return Route(OPENAPI, openapi, methods=["get"], name="openapi")


def _operation(endpoint: Endpoint[Any, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    names = _PATH_PARAMETER.findall(endpoint.path)
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "string", "format": "uuid"},
        }
        for name in names
    ]
    query = _type_schema(endpoint.query, "validation")
    schemas.update(query.pop("$defs", {}))
    required = set(query.get("required", ()))
    for name, schema in query.get("properties", {}).items():
        schema = {key: value for key, value in schema.items() if key != "title"}
        parameters.append(
            {"name": name, "in": "query", "required": name in required, "schema": schema}
        )
    operation: dict[str, Any] = {
        "operationId": _operation_id(endpoint),
        "summary": endpoint.summary,
        "description": f"Needs the scope {endpoint.scope}"
        + (" (and memory:admin for a global memory)." if endpoint.scope == WRITE else "."),
        "tags": list(endpoint.tags),
        "parameters": parameters,
    }
    if endpoint.body is not NoInput:
        # said by the endpoint: a PATCH's fields are each optional, but its body is not
        operation["requestBody"] = {
            "required": not endpoint.body_optional,
            **_json(_schema(endpoint.body, "validation", schemas)),
        }
    responses = {
        str(endpoint.status): {
            "description": "OK",
            **_json(_schema(endpoint.answer, "serialization", schemas)),
        }
    }
    errors = ERRORS | ({"404": NOT_FOUND} if names else {})
    for status, description in sorted(errors.items()):
        responses[status] = {
            "description": description,
            **_json({"$ref": REF.format(model="Error")}),
        }
    operation["responses"] = responses
    return operation


def _schema(
    type_: Any, mode: Literal["validation", "serialization"], schemas: dict[str, Any]
) -> dict[str, Any]:
    """The type's JSON schema: named types (models, TypedDicts) go to the components and are
    referred to; others are inline."""
    schema = _type_schema(type_, mode)
    schemas.update(schema.pop("$defs", {}))
    title = schema.get("title")
    if schema.get("type") == "object" and isinstance(title, str) and title.isidentifier():
        schemas[title] = schema
        return {"$ref": REF.format(model=title)}
    return schema


def _type_schema(type_: Any, mode: Literal["validation", "serialization"]) -> dict[str, Any]:
    """pydantic's JSON schema of the type (references as REF), a copy of one computed once per
    process: the types are fixed, and deriving a schema is most of the time it takes to build
    the app (about 0.2 s), which a process building it more than once (the tests) would pay
    each time."""
    return copy.deepcopy(_derived_schema(type_, mode))


@cache
def _derived_schema(type_: Any, mode: Literal["validation", "serialization"]) -> dict[str, Any]:
    return TypeAdapter(type_).json_schema(ref_template=REF, mode=mode)


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _operation_id(endpoint: Endpoint[Any, Any]) -> str:
    words = re.findall(r"[a-z]+", _PATH_PARAMETER.sub(r"by_\1", endpoint.path))
    return "_".join([endpoint.method, *words])
