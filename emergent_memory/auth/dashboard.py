"""Dashboard sign-in: sessions opened with an API token or a one-time link, and those links.

The browser holds a random secret in a cookie; the database holds only its sha256 (migration
0012). The application role reaches the session table only through the SECURITY DEFINER
functions kb.start_dashboard_session, kb.redeem_dashboard_link, kb.dashboard_session and
kb.end_dashboard_session; links are written by the database's owner (`emergent-memory ui`,
on the administrator's pool).

Sign-ins are shared out: a token holds at most `per_token` live sessions and an actor
`per_actor` (SignInLimits); one more signs out the session unused the longest. The SQL
functions give the application role no count of sessions, so the server counts those it
opened itself (SignIns, in memory): sessions opened before it started, or by another server
process, are not counted, and end when they expire.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import SCOPES, Principal
from emergent_memory.auth.tokens import TOKEN_PREFIX
from emergent_memory.db.pool import transaction
from emergent_memory.errors import InvalidInput

logger = logging.getLogger(__name__)

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


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """Most live dashboard sessions per token and per actor (settings
    dashboard_sessions_per_token, dashboard_sessions_per_actor)."""

    per_token: int = 10
    per_actor: int = 20

    def __post_init__(self) -> None:
        if min(self.per_token, self.per_actor) < 1:
            raise InvalidInput("dashboard session limits must be at least 1")


@dataclass(slots=True)
class _SignIn:
    token_hash: bytes | None  # None: opened with a one-time link
    actor_id: UUID
    expires_at: datetime
    last_used: float = field(default_factory=time.monotonic)


class SignIns:
    """The sessions this server opened, by the sha256 of their secret, and which of them to
    sign out when a token or an actor holds more than its limits allow (thread-safe: the
    dashboard calls the sessions from worker threads)."""

    def __init__(self, limits: SignInLimits) -> None:
        self.limits = limits
        self._held: dict[bytes, _SignIn] = {}
        self._lock = threading.Lock()

    def opened(
        self, session_hash: bytes, token_hash: bytes | None, session: DashboardSession
    ) -> list[bytes]:
        """Count a new session; the sessions to sign out to stay within the limits, each
        the one of its token (then its actor) unused the longest."""
        with self._lock:
            now = datetime.now(UTC)
            for expired in [h for h, s in self._held.items() if s.expires_at <= now]:
                del self._held[expired]
            self._held[session_hash] = _SignIn(token_hash, session.actor_id, session.expires_at)
            ended = []
            if token_hash is not None:
                ended += self._beyond(
                    lambda s: s.token_hash == token_hash, self.limits.per_token, session_hash
                )
            ended += self._beyond(
                lambda s: s.actor_id == session.actor_id, self.limits.per_actor, session_hash
            )
            return ended

    def _beyond(self, theirs: Callable[[_SignIn], bool], limit: int, new: bytes) -> list[bytes]:
        held = sorted(
            (h for h, s in self._held.items() if theirs(s) and h != new),
            key=lambda h: self._held[h].last_used,
        )
        over = held[: max(0, len(held) + 1 - limit)]
        for session_hash in over:
            del self._held[session_hash]
        return over

    def used(self, session_hash: bytes) -> None:
        with self._lock:
            held = self._held.get(session_hash)
            if held is not None:
                held.last_used = time.monotonic()

    def ended(self, session_hash: bytes) -> None:
        with self._lock:
            self._held.pop(session_hash, None)


class DashboardSessions:
    """Sessions on the application's pool (through the SQL functions only), shared out by
    token and actor (SignIns)."""

    def __init__(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        lifetime_seconds: int,
        limits: SignInLimits | None = None,
    ):
        if lifetime_seconds <= 0:
            raise InvalidInput("a dashboard session's lifetime must be positive")
        self._pool = pool
        self._lifetime = lifetime_seconds
        self._sign_ins = SignIns(limits or SignInLimits())

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
        return self._open(START, params, secret, token_hash=params["token_hash"])

    def redeem(self, link_secret: str) -> StartedSession | None:
        """A session for a one-time link not used yet and not expired, or None."""
        if not _plausible(link_secret):
            return None
        secret = secrets.token_urlsafe(SECRET_BYTES)
        params = {"link_hash": digest(link_secret), "session_hash": digest(secret)}
        return self._open(REDEEM, params, secret)

    def _open(
        self,
        statement: str,
        params: dict[str, Any],
        secret: str,
        *,
        token_hash: bytes | None = None,
    ) -> StartedSession | None:
        with (
            transaction(self._pool) as conn,
            conn.cursor(row_factory=class_row(DashboardSession)) as cur,
        ):
            cur.execute(statement, params | {"lifetime": self._lifetime})
            session = cur.fetchone()
        if session is None:
            return None
        beyond = self._sign_ins.opened(params["session_hash"], token_hash, session)
        if beyond:
            with transaction(self._pool) as conn:
                for session_hash in beyond:
                    conn.execute(END, {"session_hash": session_hash})
            logger.info(
                "signed out %d dashboard session(s) unused the longest: a token holds at "
                "most %d, an actor %d",
                len(beyond),
                self._sign_ins.limits.per_token,
                self._sign_ins.limits.per_actor,
            )
        return StartedSession(secret, session)

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
            session = cur.fetchone()
        if session is not None:
            self._sign_ins.used(digest(secret))
        return session

    def end(self, secret: str) -> bool:
        """Sign out: whether a session was ended."""
        if not _plausible(secret):
            return False
        with transaction(self._pool) as conn:
            row = conn.execute(END, {"session_hash": digest(secret)}).fetchone()
        self._sign_ins.ended(digest(secret))
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
