"""Rows of the graph store, as frozen dataclasses (one per table the store reads).

pgvector and psycopg are imported where they are used: the memory models (and through them
the CLI's option lists and the MCP server's tool types) import this module without them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

if TYPE_CHECKING:
    from pgvector import Vector
    from psycopg import sql


class Unset(Enum):
    """Marks an argument that was not given (as opposed to one given as None)."""

    UNSET = "unset"


UNSET = Unset.UNSET


@dataclass(frozen=True, slots=True)
class Embedding:
    """A vector and the name of the model that produced it; they are always stored together."""

    vector: Vector
    model: str

    @classmethod
    def of(cls, values: list[float], model: str) -> Embedding:
        from pgvector import Vector

        return cls(Vector(values), model)


@dataclass(frozen=True, slots=True)
class GraphObject:
    """One version of a typed object. `canonical_id` is its identity across versions."""

    id: UUID
    canonical_id: UUID
    version: int
    is_head: bool
    project_id: UUID
    actor_id: UUID | None
    scope: str
    type: str
    key: str | None
    status: str | None
    properties: dict[str, Any]
    labels: list[str]
    content_hash: bytes
    embedding: Vector | None
    embedding_model: str | None
    deleted_at: datetime | None
    delete_reason: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


@dataclass(frozen=True, slots=True)
class GraphRelationship:
    """One version of a typed edge between two canonical object ids."""

    id: UUID
    canonical_id: UUID
    version: int
    is_head: bool
    project_id: UUID
    actor_id: UUID | None
    type: str
    src_id: UUID
    dst_id: UUID
    properties: dict[str, Any]
    deleted_at: datetime | None
    delete_reason: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


@dataclass(frozen=True, slots=True)
class TemplatePack:
    """A published pack: the object and relationship types it defines, as JSON schemas."""

    id: UUID
    name: str
    version: str
    description: str | None
    author: str | None
    license: str | None
    source: str
    object_type_schemas: dict[str, Any]
    relationship_type_schemas: dict[str, Any]
    extraction_prompts: dict[str, Any]
    checksum: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PackInstallation:
    """A pack version installed in a project."""

    project_id: UUID
    pack_name: str
    template_pack_id: UUID
    version: str
    installed_at: datetime
    updated_at: datetime


Scope = Literal["user", "project", "global"]


def select_list(row_type: type[Any]) -> sql.Composed:
    """The columns of a row dataclass, as a SELECT / RETURNING list."""
    from psycopg import sql

    return sql.SQL(", ").join(sql.Identifier(field.name) for field in fields(row_type))
