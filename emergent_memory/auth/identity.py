"""Who the local user is: configured ids, or stable ones derived from the OS user and repo."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from emergent_memory.auth.local_ids import (
    derived_actor_id,
    derived_project_id,
    local_user,
    project_root,
)
from emergent_memory.auth.principal import READ, WRITE, Principal


@dataclass(frozen=True, slots=True)
class LocalIdentity:
    principal: Principal
    actor_source: str
    project_source: str
    folder: Path | None = None  # the repository (or directory) the project was derived from

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
        who = local_user()
        actor, actor_source = derived_actor_id(who), f"from {who}"
    folder = None
    if project_id is not None:
        project, project_source = project_id, "configured"
    else:
        folder = project_root(cwd or Path.cwd())
        project = derived_project_id(folder)
        project_source = f"from {folder}"
    principal = Principal(actor, project, frozenset({READ, WRITE}))
    return LocalIdentity(principal, actor_source, project_source, folder)
