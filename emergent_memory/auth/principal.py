"""Who an operation runs for: the principal and the scopes a credential grants."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

READ = "memory:read"
WRITE = "memory:write"
ADMIN = "memory:admin"
# The credential acts for its own actor in whichever project a request names (hooks installed
# for a whole user account); without it, only in the credential's own project.
ANY_PROJECT = "memory:any-project"
# Every scope a credential can grant.
SCOPES = (READ, WRITE, ADMIN, ANY_PROJECT)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who an operation runs for: from a credential or the server's configuration, never from
    a tool argument."""

    actor_id: UUID
    project_id: UUID
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({READ, WRITE}))
    # reads the actor's memories of every project at once (the dashboard's All projects
    # view, for a credential with ANY_PROJECT): a view for reading, which changes nothing
    all_projects: bool = False

    def __post_init__(self) -> None:
        if self.all_projects and ANY_PROJECT not in self.scopes:
            raise ValueError("reading all projects needs the scope " + ANY_PROJECT)

    @classmethod
    def of_token(cls, claims: Mapping[str, Any], scopes: Iterable[str]) -> Principal:
        """The principal a verified bearer token names: its claims `actor_id` and
        `project_id` (as the HTTP server's token check writes them) and its scopes."""
        return cls(UUID(claims["actor_id"]), UUID(claims["project_id"]), frozenset(scopes))

    @property
    def can_read(self) -> bool:
        return bool({READ, WRITE, ADMIN} & self.scopes)

    @property
    def can_write(self) -> bool:
        return not self.all_projects and bool({WRITE, ADMIN} & self.scopes)

    @property
    def is_admin(self) -> bool:
        return ADMIN in self.scopes

    @property
    def may_choose_project(self) -> bool:
        return ANY_PROJECT in self.scopes
