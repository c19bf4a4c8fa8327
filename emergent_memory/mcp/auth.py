"""Token authentication of the HTTP server: bearer tokens checked against kb.api_tokens."""

from __future__ import annotations

import uuid
from typing import Any

import anyio.to_thread
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.dependencies import get_access_token

from emergent_memory import tokens
from emergent_memory.mcp.server import ServiceHolder
from emergent_memory.memory import Principal


class DatabaseTokenVerifier(TokenVerifier):
    """Bearer tokens checked against kb.api_tokens (by hash): unknown, expired or revoked
    tokens are refused with 401 before any tool runs."""

    def __init__(self, holder: ServiceHolder) -> None:
        super().__init__()
        self._holder = holder

    async def verify_token(self, token: str) -> AccessToken | None:
        if not self._holder.ready:
            return None
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
        with self._holder.get().pool.connection() as conn:
            return tokens.verify_token(conn, token)


def token_principal() -> Principal:
    """The principal of the current HTTP request, from its verified token only."""
    access: Any = get_access_token()
    if access is None:
        raise ToolError("not authenticated: send Authorization: Bearer <token>")
    claims = access.claims
    return Principal(
        uuid.UUID(claims["actor_id"]), uuid.UUID(claims["project_id"]), frozenset(access.scopes)
    )
