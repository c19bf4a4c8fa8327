"""API tokens: create (shown once), verify, list and revoke; only hashes are stored."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg import Connection
from psycopg.rows import class_row

from emergent_memory.auth.principal import SCOPES, Principal
from emergent_memory.errors import InvalidInput, NotFound, PermissionDenied

TOKEN_PREFIX = "emt_"  # noqa: S105 - the visible prefix of every token, not a secret
SHOWN_PREFIX_LENGTH = 12  # "emt_" and 8 characters: enough to tell tokens apart in a list


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token as listed: everything but the token itself, which is never stored."""

    id: UUID
    name: str
    token_prefix: str
    actor_id: UUID
    project_id: UUID
    scopes: list[str]
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewToken:
    token: str
    info: TokenInfo


CREATE = """
INSERT INTO kb.api_tokens (name, token_hash, token_prefix, actor_id, project_id, scopes,
                           expires_at)
VALUES (%(name)s, %(hash)s, %(prefix)s, %(actor_id)s, %(project_id)s, %(scopes)s,
        %(expires_at)s)
RETURNING id, name, token_prefix, actor_id, project_id, scopes, created_at, expires_at,
          revoked_at, last_used_at
"""

# The application role cannot read kb.api_tokens (migration 0009): this function returns the
# one live token with that hash, or nothing, and records its use (at most once a minute).
VERIFY = """
SELECT id, name, token_prefix, actor_id, project_id, scopes, created_at, expires_at,
       revoked_at, last_used_at
FROM kb.verify_api_token(%(hash)s)
"""

LIST = """
SELECT id, name, token_prefix, actor_id, project_id, scopes, created_at, expires_at,
       revoked_at, last_used_at
FROM kb.api_tokens
ORDER BY created_at, id
"""

REVOKE = """
UPDATE kb.api_tokens SET revoked_at = coalesce(revoked_at, now())
WHERE id = %(id)s
RETURNING id, name, token_prefix, actor_id, project_id, scopes, created_at, expires_at,
          revoked_at, last_used_at
"""


@contextmanager
def _managing_tokens(conn: Connection[Any]) -> Iterator[None]:
    """Token management is for the table's owner and emergent_memory_admin: the application
    role may only verify a token it was given (migration 0009)."""
    try:
        yield
    except psycopg.errors.InsufficientPrivilege as error:
        raise PermissionDenied(
            f"the database role {conn.info.user} may not manage API tokens: run `emergent-memory "
            "token` as the database owner or a member of emergent_memory_admin (the server's "
            "application role can only verify tokens; see docs/security.md)"
        ) from error


def _hash(token: str) -> bytes:
    # Tokens are 256 random bits: a plain hash cannot be brute-forced, no slow KDF needed.
    return hashlib.sha256(token.encode("utf-8")).digest()


def create_token(
    conn: Connection[Any],
    *,
    name: str,
    actor_id: UUID,
    project_id: UUID,
    scopes: list[str],
    expires_in: timedelta | None = None,
) -> NewToken:
    """A new random token; the returned `token` is the only copy there will ever be."""
    if not name.strip():
        raise InvalidInput("a token needs a name, e.g. 'laptop' or 'ci'")
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise InvalidInput(
            f"token scopes must be among {', '.join(SCOPES)}; got {', '.join(scopes) or 'none'}"
        )
    if expires_in is not None and expires_in <= timedelta(0):
        raise InvalidInput("a token's lifetime must be positive")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = None
    if expires_in is not None:
        row = conn.execute("SELECT now() + %s", (expires_in,)).fetchone()
        assert row is not None
        expires_at = row[0]
    with _managing_tokens(conn), conn.cursor(row_factory=class_row(TokenInfo)) as cur:
        cur.execute(
            CREATE,
            {
                "name": name.strip(),
                "hash": _hash(token),
                "prefix": token[:SHOWN_PREFIX_LENGTH],
                "actor_id": actor_id,
                "project_id": project_id,
                "scopes": sorted(set(scopes)),
                "expires_at": expires_at,
            },
        )
        info = cur.fetchone()
    assert info is not None
    return NewToken(token=token, info=info)


def verify_token(conn: Connection[Any], token: str) -> TokenInfo | None:
    """The live token (not revoked, not expired) with this value, or None. Works for the
    application role, which may not read the table itself; records the token's use."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    with conn.cursor(row_factory=class_row(TokenInfo)) as cur:
        cur.execute(VERIFY, {"hash": _hash(token)})
        return cur.fetchone()


def list_tokens(conn: Connection[Any]) -> list[TokenInfo]:
    with _managing_tokens(conn), conn.cursor(row_factory=class_row(TokenInfo)) as cur:
        cur.execute(LIST)
        return cur.fetchall()


def revoke_token(conn: Connection[Any], token_id: UUID) -> TokenInfo:
    """Revoke a token for good (revoking twice keeps the first time)."""
    with _managing_tokens(conn), conn.cursor(row_factory=class_row(TokenInfo)) as cur:
        cur.execute(REVOKE, {"id": token_id})
        info = cur.fetchone()
    if info is None:
        raise NotFound(f"no token {token_id}")
    return info


def principal_of(info: TokenInfo) -> Principal:
    return Principal(info.actor_id, info.project_id, frozenset(info.scopes))
