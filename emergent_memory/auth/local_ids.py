"""The ids of a single-user install derived from the OS user, the machine and the repository.

Standard library only: `auth.identity` (the CLI, the stdio server) and the Claude Code hooks
(`emergent_memory.hooks`, which must start fast) both call these functions, so a repository
gets the same project id whichever of them asks.
"""

from __future__ import annotations

import getpass
import socket
import subprocess
import uuid
from pathlib import Path

# Namespace of the derived default ids: the same user, machine and repository always give
# the same ids, so memories follow them from session to session.
DEFAULT_ID_NAMESPACE = uuid.UUID("6f1c2d3e-9b8a-4c5d-8e7f-0a1b2c3d4e5f")


def local_user() -> str:
    """The OS user and machine the actor id is derived from: `user@host`."""
    return f"{getpass.getuser()}@{socket.gethostname()}"


def derived_actor_id(who: str) -> uuid.UUID:
    return uuid.uuid5(DEFAULT_ID_NAMESPACE, f"actor:{who}")


def project_root(cwd: Path, timeout: float = 5) -> Path:
    """The top of the git repository holding `cwd`, else `cwd` itself; resolved."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],  # noqa: S607 - git from PATH, fixed args
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return cwd.resolve()
    return Path(top).resolve() if top else cwd.resolve()


def derived_project_id(root: Path) -> uuid.UUID:
    """The project id of a repository (or directory) given by its `project_root`."""
    return uuid.uuid5(DEFAULT_ID_NAMESPACE, f"project:{root}")
