"""Token authentication of the HTTP server: bearer tokens checked against kb.api_tokens."""

from __future__ import annotations

import uuid
from typing import Any

import anyio.to_thread
import psycopg
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.dependencies import get_access_token
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from psycopg_pool import PoolTimeout
from starlette.authentication import AuthenticationError
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from emergent_memory.auth import tokens
from emergent_memory.auth.principal import Principal
from emergent_memory.errors import DatabaseUnavailable
from emergent_memory.mcp.server import ServiceHolder


class TokenCheckUnavailable(AuthenticationError):
    """The token could not be checked: no free database connection (busy), the database is
    down or unreachable, or the connection was lost. Answered with 503."""


class DatabaseTokenVerifier(TokenVerifier):
    """Bearer tokens checked against kb.api_tokens (by hash): unknown, expired or revoked
    tokens are refused with 401 before any tool runs."""

    def __init__(self, holder: ServiceHolder) -> None:
        super().__init__()
        self._holder = holder

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

    def _lookup(self, token: str) -> tokens.TokenInfo | None:
        pool = self._holder.get().pool
        try:
            with pool.connection() as conn:
                return tokens.verify_token(conn, token)
        except DatabaseUnavailable as error:  # down or unreachable (the pool probed it)
            raise TokenCheckUnavailable(f"could not check the token: {error}") from error
        except PoolTimeout as error:
            raise TokenCheckUnavailable(
                f"the memory server is busy: no database connection became free within "
                f"{pool.timeout:g} s to check the token (all are in use); try again in a moment"
            ) from error
        except psycopg.OperationalError as error:
            raise TokenCheckUnavailable(
                "lost the database connection while checking the token (the database "
                "restarted or is unreachable); try again in a moment"
            ) from error

    def get_middleware(self) -> list[Any]:
        return [
            Middleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(self),
                on_error=_token_check_unavailable,
            ),
            Middleware(AuthContextMiddleware),
        ]


def _token_check_unavailable(conn: HTTPConnection, error: Exception) -> Response:
    """503 with a JSON-RPC error that MCP clients show as is."""
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": str(error)}},
        status_code=503,
        headers={"Retry-After": "1"},
    )


def token_principal() -> Principal:
    """The principal of the current HTTP request, from its verified token only."""
    access: Any = get_access_token()
    if access is None:
        raise ToolError("not authenticated: send Authorization: Bearer <token>")
    claims = access.claims
    return Principal(
        uuid.UUID(claims["actor_id"]), uuid.UUID(claims["project_id"]), frozenset(access.scopes)
    )
