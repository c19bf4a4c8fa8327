"""Who the server acts for: a configured local principal, or the caller's API token."""

from __future__ import annotations

import getpass
import logging
import socket
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.dependencies import get_access_token

from emergent_memory import tokens
from emergent_memory.mcp.server import ServiceHolder
from emergent_memory.memory import Principal
from emergent_memory.memory.models import READ, WRITE

logger = logging.getLogger(__name__)

# Namespace of the derived default ids: the same user, machine and repository always give
# the same ids, so memories follow them from session to session.
DEFAULT_ID_NAMESPACE = uuid.UUID("6f1c2d3e-9b8a-4c5d-8e7f-0a1b2c3d4e5f")


@dataclass(frozen=True, slots=True)
class LocalIdentity:
    principal: Principal
    actor_source: str
    project_source: str

    def describe(self) -> str:
        return (
            f"acting as actor {self.principal.actor_id} ({self.actor_source}) in project "
            f"{self.principal.project_id} ({self.project_source})"
        )


def local_identity(
    actor_id: uuid.UUID | None, project_id: uuid.UUID | None, cwd: Path | None = None
) -> LocalIdentity:
    """The principal of a single local user: given ids, or stable ones derived from the OS
    user and machine (actor) and the git repository or directory (project)."""
    if actor_id is not None:
        actor, actor_source = actor_id, "configured"
    else:
        who = f"{getpass.getuser()}@{socket.gethostname()}"
        actor, actor_source = uuid.uuid5(DEFAULT_ID_NAMESPACE, f"actor:{who}"), f"from {who}"
    if project_id is not None:
        project, project_source = project_id, "configured"
    else:
        where = _project_root(cwd or Path.cwd())
        project = uuid.uuid5(DEFAULT_ID_NAMESPACE, f"project:{where}")
        project_source = f"from {where}"
    principal = Principal(actor, project, frozenset({READ, WRITE}))
    return LocalIdentity(principal, actor_source, project_source)


def _project_root(cwd: Path) -> Path:
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],  # noqa: S607 - git from PATH, fixed args
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return cwd.resolve()
    return Path(top).resolve() if top else cwd.resolve()


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
