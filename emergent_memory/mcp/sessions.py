"""Fair shares of the HTTP server's MCP sessions: no token, and no actor, can hold more than
its share, and none can keep another actor out.

A session of the session-based protocol (an `initialize` without Mcp-Session-Id) is admitted
here, under the MCP SDK's session lock, for the token that opens it and that token's actor:

- a token at `per_token` open sessions has its oldest idle session closed to make room; an
  actor at `per_actor` (over all its tokens) likewise;
- the whole server at `total` closes an idle session too, first one of the actor holding the
  most sessions, then the oldest idle one of anyone; only when none is idle does the actor
  holding the most lose its oldest session, unless that is the actor asking;
- when nothing may be closed (every session of the token, or of the actor, has a request in
  flight, such as an open event stream), the new session is refused: 429 (the token's or the
  actor's share) or 503 (the server's), with Retry-After and a JSON-RPC error that says which
  limit, its setting, and what to do.

A session is idle while no request of it is in flight; among idle sessions the oldest is the
one idle the longest. A closed session's id answers 404 from then on, and an MCP client opens
a new session on a 404, as the protocol says. The SDK keeps the sessions; this module reads
its table of them (the only way to close one), so `install` checks that the SDK has it.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from emergent_memory.settings import ENV_PREFIX

logger = logging.getLogger(__name__)

# What a refused client is told to wait: sessions free up when a request ends, or at the
# latest after the idle timeout.
RETRY_AFTER_SECONDS = 10
SERVER_ERROR = -32000  # JSON-RPC: an error of the server


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """At most `per_token` sessions per token, `per_actor` per actor, `total` in all."""

    per_token: int
    per_actor: int
    total: int

    def __post_init__(self) -> None:
        if min(self.per_token, self.per_actor, self.total) < 1:
            raise ValueError("session limits must be at least 1")


@dataclass(frozen=True, slots=True)
class Holder:
    """Who opened a session: the token's id and its actor (None, None without a token)."""

    token_id: str | None
    actor_id: str | None


@dataclass(frozen=True, slots=True)
class OpenSession:
    session_id: str
    holder: Holder
    idle_until: float  # when the idle timeout would end it; infinity while a request is in flight

    @property
    def idle(self) -> bool:
        return not math.isinf(self.idle_until)


Share = Literal["token", "actor", "server"]
SETTINGS: dict[Share, str] = {
    "token": f"{ENV_PREFIX}HTTP_MAX_SESSIONS_PER_TOKEN",
    "actor": f"{ENV_PREFIX}HTTP_MAX_SESSIONS_PER_ACTOR",
    "server": f"{ENV_PREFIX}HTTP_MAX_SESSIONS",
}


class SessionRefused(Exception):
    """No room for a new MCP session: answered by `refusal_response` (429 or 503)."""

    def __init__(self, share: Share, limit: int) -> None:
        self.share, self.limit = share, limit
        if share == "server":
            why = (
                f"the server has {limit} open, the limit set by {SETTINGS[share]}; none is "
                "idle, and this token's actor holds the most of them"
            )
        else:
            whose = "this token has" if share == "token" else "this token's actor has"
            why = (
                f"{whose} {limit} open, the limit set by {SETTINGS[share]}, and every one of "
                "them has a request in flight, so none can be closed to make room"
            )
        super().__init__(
            f"too many open MCP sessions: {why}; end a session you no longer use (an HTTP "
            "delete request to /mcp with its Mcp-Session-Id header), or retry in "
            f"{RETRY_AFTER_SECONDS} seconds"
        )

    @property
    def status(self) -> int:
        return 503 if self.share == "server" else 429


async def refusal_response(request: Request, error: Exception) -> Response:
    """The answer to a refused session: its status, Retry-After, and a JSON-RPC error."""
    assert isinstance(error, SessionRefused)
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": SERVER_ERROR, "message": str(error)}},
        status_code=error.status,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


class FairSessions:
    """The admission of new MCP sessions by the SDK's session manager, under its lock."""

    def __init__(self, limits: SessionLimits) -> None:
        self.limits = limits
        self._holders: dict[str, Holder] = {}

    def install(self, manager: StreamableHTTPSessionManager) -> None:
        """Admit the manager's new sessions here (it keeps no limit of its own)."""
        for needed in ("_admit_session", "_server_instances", "_session_owners"):
            if not hasattr(manager, needed):
                raise RuntimeError(
                    "the installed MCP SDK (package mcp) manages sessions in a way this server "
                    f"does not know (StreamableHTTPSessionManager has no {needed}); install the "
                    "version in the lock file"
                )
        admit = manager._admit_session
        manager.max_sessions = None

        def fair_admit(requestor: Any) -> StreamableHTTPServerTransport | None:
            access = get_access_token()
            claims = (access.claims or {}) if access is not None else {}
            holder = Holder(None if access is None else access.client_id, claims.get("actor_id"))
            self.make_room(manager, holder)
            transport = admit(requestor)
            if transport is not None and transport.mcp_session_id is not None:
                self._holders[transport.mcp_session_id] = holder
            return transport

        manager._admit_session = fair_admit  # type: ignore[method-assign]

    def make_room(self, manager: StreamableHTTPSessionManager, holder: Holder) -> None:
        """Close what must be closed for `holder` to open one more session, or raise
        SessionRefused."""
        sessions = self._open_sessions(manager)
        shares: tuple[tuple[Share, int, Callable[[Holder], str | None]], ...] = (
            ("token", self.limits.per_token, attrgetter("token_id")),
            ("actor", self.limits.per_actor, attrgetter("actor_id")),
        )
        for share, limit, key in shares:
            if holder.token_id is None:
                break  # no token (a server without authentication): only the total counts
            theirs = [s for s in sessions if key(s.holder) == key(holder)]
            if len(theirs) >= limit:
                victim = _oldest_idle(theirs)
                if victim is None:
                    raise SessionRefused(share, limit)
                self._close(manager, victim, f"its {share}'s limit of {limit}")
                sessions.remove(victim)
        if len(sessions) >= self.limits.total:
            victim = _server_victim(sessions, holder)
            if victim is None:
                raise SessionRefused("server", self.limits.total)
            self._close(manager, victim, f"the server's limit of {self.limits.total}")

    def _open_sessions(self, manager: StreamableHTTPSessionManager) -> list[OpenSession]:
        """The manager's open sessions, with their holders (forgetting those that ended)."""
        transports: dict[str, StreamableHTTPServerTransport] = manager._server_instances
        for ended in self._holders.keys() - transports.keys():
            del self._holders[ended]
        unknown = Holder(None, None)
        return [
            OpenSession(session_id, self._holders.get(session_id, unknown), _idle_until(t))
            for session_id, t in transports.items()
        ]

    def _close(self, manager: StreamableHTTPSessionManager, session: OpenSession, why: str) -> None:
        """End a session now: forgotten (its id answers 404), its server task stopped."""
        transport = manager._server_instances.pop(session.session_id, None)
        manager._session_owners.pop(session.session_id, None)
        self._holders.pop(session.session_id, None)
        if transport is not None and transport.idle_scope is not None:
            transport.idle_scope.cancel()  # ends its server task, which terminates it
        logger.info(
            "closed MCP session %s (%s) to open another within %s",
            session.session_id[:8],
            "idle" if session.idle else "busy",
            why,
        )


def _idle_until(transport: StreamableHTTPServerTransport) -> float:
    scope = transport.idle_scope
    return math.inf if scope is None else float(scope.deadline)


def _oldest_idle(sessions: list[OpenSession]) -> OpenSession | None:
    idle = [s for s in sessions if s.idle]
    return min(idle, key=lambda s: s.idle_until) if idle else None


def _server_victim(sessions: list[OpenSession], holder: Holder) -> OpenSession | None:
    """Which session the server closes at its total: an idle one of the actor holding the most
    (the one asking counted with its new session), else the oldest idle one, else the oldest
    of the actor holding the most, unless that is the actor asking."""
    held = Counter(s.holder.actor_id for s in sessions)
    held[holder.actor_id] += 1
    most = max(held.values())
    biggest = [s for s in sessions if held[s.holder.actor_id] == most]
    victim = _oldest_idle(biggest) or _oldest_idle(sessions)
    if victim is not None:
        return victim
    others = [s for s in biggest if s.holder.actor_id != holder.actor_id]
    return min(others, key=lambda s: s.idle_until, default=None)
