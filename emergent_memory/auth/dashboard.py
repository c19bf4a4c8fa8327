"""Dashboard sign-in: sessions opened with an API token or a one-time link, and those links.

The browser holds a random secret in a cookie; the database holds only its sha256 (migration
0012). The application role reaches the session table only through the SECURITY DEFINER
functions kb.start_dashboard_session, kb.redeem_dashboard_link, kb.dashboard_session and
kb.end_dashboard_session; links are written by the database's owner (`emergent-memory ui`,
on the administrator's pool).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import SCOPES, Principal
from emergent_memory.auth.tokens import TOKEN_PREFIX
from emergent_memory.db.pool import transaction
from emergent_memory.errors import InvalidInput

# 256 random bits, url-safe: the cookie's value and a link's last path segment.
SECRET_BYTES = 32
MAX_SECRET_LENGTH = 100

START = """
SELECT session_id, actor_id, project_id, scopes, label, expires_at
FROM kb.start_dashboard_session(%(token_hash)s, %(session_hash)s, %(lifetime)s)
"""

REDEEM = """
SELECT session_id, actor_id, project_id, scopes, label, expires_at
FROM kb.redeem_dashboard_link(%(link_hash)s, %(session_hash)s, %(lifetime)s)
"""

LIVE = """
SELECT session_id, actor_id, project_id, scopes, label, expires_at
FROM kb.dashboard_session(%(session_hash)s)
"""

END = "SELECT kb.end_dashboard_session(%(session_hash)s)"

CREATE_LINK = """
INSERT INTO kb.dashboard_links (link_hash, actor_id, project_id, scopes, label, expires_at)
VALUES (%(link_hash)s, %(actor_id)s, %(project_id)s, %(scopes)s, %(label)s,
        now() + make_interval(secs => %(lifetime)s))
RETURNING expires_at
"""


@dataclass(frozen=True, slots=True)
class DashboardSession:
    """A live dashboard session: whom it acts for, how it was opened, when it ends."""

    session_id: UUID
    actor_id: UUID
    project_id: UUID
    scopes: list[str]
    label: str
    expires_at: datetime

    @property
    def principal(self) -> Principal:
        return Principal(self.actor_id, self.project_id, frozenset(self.scopes))


@dataclass(frozen=True, slots=True)
class StartedSession:
    """A new session and its secret, which goes in the browser's cookie and nowhere else."""

    secret: str
    session: DashboardSession


def digest(secret: str) -> bytes:
    """The sha256 of a secret (a token, a session's, a link's): 256 random bits need no
    slow KDF."""
    return hashlib.sha256(secret.encode("utf-8")).digest()


def derived(secret: str, label: str) -> str:
    """A value derived from a session's secret for one purpose (the CSRF token): knowing it
    tells nothing of the secret."""
    return hmac.new(secret.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).hexdigest()


def _plausible(secret: str) -> bool:
    return 0 < len(secret) <= MAX_SECRET_LENGTH and secret.isascii()


class DashboardSessions:
    """Sessions on the application's pool (through the SQL functions only)."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]], lifetime_seconds: int):
        if lifetime_seconds <= 0:
            raise InvalidInput("a dashboard session's lifetime must be positive")
        self._pool = pool
        self._lifetime = lifetime_seconds

    @property
    def lifetime_seconds(self) -> int:
        return self._lifetime

    def start(self, token: str) -> StartedSession | None:
        """A session for the live API token `token`, or None (unknown, revoked, expired)."""
        token = token.strip()
        if not token.startswith(TOKEN_PREFIX) or not _plausible(token):
            return None
        secret = secrets.token_urlsafe(SECRET_BYTES)
        params = {"token_hash": digest(token), "session_hash": digest(secret)}
        return self._open(START, params, secret)

    def redeem(self, link_secret: str) -> StartedSession | None:
        """A session for a one-time link not used yet and not expired, or None."""
        if not _plausible(link_secret):
            return None
        secret = secrets.token_urlsafe(SECRET_BYTES)
        params = {"link_hash": digest(link_secret), "session_hash": digest(secret)}
        return self._open(REDEEM, params, secret)

    def _open(self, statement: str, params: dict[str, Any], secret: str) -> StartedSession | None:
        with (
            transaction(self._pool) as conn,
            conn.cursor(row_factory=class_row(DashboardSession)) as cur,
        ):
            cur.execute(statement, params | {"lifetime": self._lifetime})
            session = cur.fetchone()
        return None if session is None else StartedSession(secret, session)

    def live(self, secret: str) -> DashboardSession | None:
        """The live session whose secret this is: not ended, not expired, and its token (if it
        was opened with one) neither revoked nor expired."""
        if not _plausible(secret):
            return None
        with (
            transaction(self._pool) as conn,
            conn.cursor(row_factory=class_row(DashboardSession)) as cur,
        ):
            cur.execute(LIVE, {"session_hash": digest(secret)})
            return cur.fetchone()

    def end(self, secret: str) -> bool:
        """Sign out: whether a session was ended."""
        if not _plausible(secret):
            return False
        with transaction(self._pool) as conn:
            row = conn.execute(END, {"session_hash": digest(secret)}).fetchone()
        return bool(row and row[0])


@dataclass(frozen=True, slots=True)
class SignInLink:
    secret: str
    expires_at: datetime


class DashboardLinks:
    """One-time sign-in links, written as the database's owner (`emergent-memory ui`)."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]]) -> None:
        self._pool = pool

    def create(
        self,
        principal: Principal,
        *,
        label: str = "sign-in link",
        lifetime_seconds: int = 120,
    ) -> SignInLink:
        if lifetime_seconds <= 0:
            raise InvalidInput("a sign-in link's lifetime must be positive")
        scopes = sorted(set(principal.scopes) & set(SCOPES))
        if not scopes:
            raise InvalidInput("a sign-in link needs at least one scope")
        secret = secrets.token_urlsafe(SECRET_BYTES)
        with transaction(self._pool) as conn:
            row = conn.execute(
                CREATE_LINK,
                {
                    "link_hash": digest(secret),
                    "actor_id": principal.actor_id,
                    "project_id": principal.project_id,
                    "scopes": scopes,
                    "label": label[:200] or "sign-in link",
                    "lifetime": lifetime_seconds,
                },
            ).fetchone()
        assert row is not None
        return SignInLink(secret, row[0])
