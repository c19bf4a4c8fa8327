"""Who the local user is: configured ids, or stable ones derived from the OS user and repo."""

from __future__ import annotations

import getpass
import socket
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from emergent_memory.auth.principal import READ, WRITE, Principal

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
