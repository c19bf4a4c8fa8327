"""API tokens as a service: verified on each HTTP request, managed by an administrator.

The token store (`auth.tokens`) takes a connection and never commits; this service owns the
transactions, on the pool that the composition root (`app.py`) gives it: the application's
pool for verification (the application role may only verify a token it was given), an
administrator's for creating, listing and revoking tokens.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg_pool import ConnectionPool

from emergent_memory.auth import tokens
from emergent_memory.auth.tokens import NewToken, TokenInfo

__all__ = ["NewToken", "TokenInfo", "TokenService"]
from emergent_memory.db.pool import transaction


class TokenService:
    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]]) -> None:
        self._pool = pool

    def verify(self, token: str) -> TokenInfo | None:
        """The live token with this value, or None; records its use. Raises ServiceBusy or
        DatabaseUnavailable when it cannot be checked."""
        with transaction(self._pool) as conn:
            return tokens.verify_token(conn, token)

    def create(
        self,
        *,
        name: str,
        actor_id: UUID,
        project_id: UUID,
        scopes: list[str],
        expires_in: timedelta | None = None,
    ) -> NewToken:
        with transaction(self._pool) as conn:
            return tokens.create_token(
                conn,
                name=name,
                actor_id=actor_id,
                project_id=project_id,
                scopes=scopes,
                expires_in=expires_in,
            )

    def list(self) -> list[TokenInfo]:
        with transaction(self._pool) as conn:
            return tokens.list_tokens(conn)

    def revoke(self, token_id: UUID) -> TokenInfo:
        with transaction(self._pool) as conn:
            return tokens.revoke_token(conn, token_id)
