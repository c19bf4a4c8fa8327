"""Template packs: publish, look up and install them, and validate objects against them."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any
from uuid import UUID

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError
from psycopg import Connection, sql
from psycopg.rows import class_row, kwargs_row
from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from emergent_memory.errors import InvalidInput, PackNotFound, PropertyValidationError, UnknownType
from emergent_memory.graph.models import PackInstallation, TemplatePack, select_list

ANY_TYPE = "*"


class RelationshipTypeDefinition(BaseModel):
    model_config = ConfigDict(extra="allow")

    description: str = ""
    source_types: list[str] = Field(alias="sourceTypes", min_length=1)
    target_types: list[str] = Field(alias="targetTypes", min_length=1)


class PackDefinition(BaseModel):
    """A pack as published in packs/*.json."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    version: str = Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")
    description: str | None = None
    author: str | None = None
    license: str | None = None
    source: str = "builtin"
    object_type_schemas: dict[str, dict[str, Any]] = Field(min_length=1)
    relationship_type_schemas: dict[str, RelationshipTypeDefinition] = Field(default_factory=dict)
    extraction_prompts: dict[str, Any] = Field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


def load_pack_file(path: Path) -> PackDefinition:
    """Read and check a pack file; every object type schema must be a valid JSON Schema."""
    try:
        definition = PackDefinition.model_validate_json(path.read_bytes())
        for type_name, schema in definition.object_type_schemas.items():
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as error:
                raise InvalidInput(f"{path}: {type_name}: {error.message}") from error
    except ValueError as error:
        raise InvalidInput(f"{path} is not a valid template pack: {error}") from error
    return definition


def pack_checksum(pack: Mapping[str, Any]) -> str:
    """sha256 of the pack's canonical JSON (sorted keys, no spaces), as stored in the table."""
    canonical = json.dumps(pack, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_PACK_COLUMNS = select_list(TemplatePack)

PUBLISH_PACK = """
INSERT INTO kb.template_packs (
    name, version, description, author, license, source,
    object_type_schemas, relationship_type_schemas, extraction_prompts, checksum
) VALUES (
    %(name)s, %(version)s, %(description)s, %(author)s, %(license)s, %(source)s,
    %(object_type_schemas)s, %(relationship_type_schemas)s, %(extraction_prompts)s, %(checksum)s
)
RETURNING {columns}
"""

GET_PACK = """
SELECT {columns} FROM kb.template_packs
WHERE name = %(name)s AND (%(version)s::text IS NULL OR version = %(version)s)
ORDER BY string_to_array(version, '.')::int[] DESC
LIMIT 1
"""

INSTALL_PACK = """
INSERT INTO kb.project_template_packs (project_id, pack_name, template_pack_id)
VALUES (%(project_id)s, %(pack_name)s, %(template_pack_id)s)
ON CONFLICT (project_id, pack_name) DO UPDATE
    SET template_pack_id = EXCLUDED.template_pack_id, updated_at = now()
    WHERE kb.project_template_packs.template_pack_id <> EXCLUDED.template_pack_id
"""

INSTALLATION = """
SELECT i.project_id, i.pack_name, i.template_pack_id, p.version, i.installed_at, i.updated_at
FROM kb.project_template_packs i
JOIN kb.template_packs p ON p.id = i.template_pack_id
WHERE i.project_id = %(project_id)s AND i.pack_name = %(pack_name)s
"""

INSTALLED_PACKS = """
SELECT {columns},
       id::text || ' ' || md5(object_type_schemas::text || relationship_type_schemas::text)
           AS stamp
FROM kb.template_packs
WHERE id IN (
    SELECT template_pack_id FROM kb.project_template_packs WHERE project_id = %(project_id)s
)
ORDER BY name
"""

# Which packs are installed in a project (`%(project_id)s`), as the statement that carries this
# expression sees them: each by its id and a hash of its schemas as stored (so that even a row
# edited by hand, which the table's contract rules out, is seen). The same stamp means the same
# schemas. A graph write returns it, so that the write can tell whether the packs it was
# validated against were the ones installed for it (PackValidation).
PACK_STAMP = """(
    SELECT array_agg(
        p.id::text || ' ' || md5(p.object_type_schemas::text || p.relationship_type_schemas::text)
    )
    FROM kb.project_template_packs i JOIN kb.template_packs p ON p.id = i.template_pack_id
    WHERE i.project_id = %(project_id)s
)"""

# How many projects' packs a process keeps (each is a few kilobytes of schemas).
KNOWN_PROJECTS = 1024


def publish_pack(conn: Connection[Any], definition: PackDefinition) -> TemplatePack:
    """Store a new pack version. A (name, version) that exists already is an error."""
    pack = definition.as_json()
    exists = get_pack(conn, definition.name, definition.version)
    if exists is not None:
        raise InvalidInput(f"pack {definition.name} {definition.version} is already published")
    with conn.cursor(row_factory=class_row(TemplatePack)) as cur:
        cur.execute(
            _compose(PUBLISH_PACK),
            {
                "name": definition.name,
                "version": definition.version,
                "description": definition.description,
                "author": definition.author,
                "license": definition.license,
                "source": definition.source,
                "object_type_schemas": Jsonb(pack["object_type_schemas"]),
                "relationship_type_schemas": Jsonb(pack["relationship_type_schemas"]),
                "extraction_prompts": Jsonb(pack["extraction_prompts"]),
                "checksum": pack_checksum(pack),
            },
        )
        row = cur.fetchone()
    assert row is not None
    return row


def get_pack(conn: Connection[Any], name: str, version: str | None = None) -> TemplatePack | None:
    """The pack with this name and version, or its newest version when none is given."""
    with conn.cursor(row_factory=class_row(TemplatePack)) as cur:
        cur.execute(_compose(GET_PACK), {"name": name, "version": version})
        return cur.fetchone()


def install_pack(
    conn: Connection[Any], project_id: UUID, name: str, version: str | None = None
) -> PackInstallation:
    """Install a pack (its newest version unless one is given) into a project.

    Installing again is harmless; installing another version of the same pack replaces the
    installed one. A pack that would define a type another installed pack already defines is
    refused.
    """
    pack = get_pack(conn, name, version)
    if pack is None:
        wanted = name if version is None else f"{name} {version}"
        raise PackNotFound(f"no template pack {wanted} is published")
    for other in installed_packs(conn, project_id):
        if other.name == pack.name:
            continue
        clash = sorted(
            (set(other.object_type_schemas) & set(pack.object_type_schemas))
            | (set(other.relationship_type_schemas) & set(pack.relationship_type_schemas))
        )
        if clash:
            raise InvalidInput(
                f"cannot install {pack.name} {pack.version} in project {project_id}: "
                f"types {', '.join(clash)} are already defined by the installed pack {other.name}"
            )
    params = {"project_id": project_id, "pack_name": pack.name, "template_pack_id": pack.id}
    conn.execute(INSTALL_PACK, params)
    _known.forget(project_id)  # (a write would find out anyway, by its stamp)
    with conn.cursor(row_factory=class_row(PackInstallation)) as cur:
        cur.execute(INSTALLATION, params)
        installation = cur.fetchone()
    assert installation is not None
    return installation


def installed_packs(conn: Connection[Any], project_id: UUID) -> list[TemplatePack]:
    return list(_read_installed(conn, project_id).packs)


@dataclass(frozen=True, slots=True)
class InstalledPacks:
    """The packs installed in a project, and their stamp (what PACK_STAMP gives for them)."""

    project_id: UUID
    packs: tuple[TemplatePack, ...]
    stamp: frozenset[str]


class _KnownPacks:
    """The packs last read for each of the most recently written projects, in this process.

    Only ever a first guess: every write that was validated against them checks them against
    the stamp its own statement returns (PackValidation.confirm), so a pack installed or
    upgraded since, by this process or another, is never missed.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._packs: OrderedDict[UUID, InstalledPacks] = OrderedDict()

    def get(self, project_id: UUID) -> InstalledPacks | None:
        with self._lock:
            installed = self._packs.get(project_id)
            if installed is not None:
                self._packs.move_to_end(project_id)
            return installed

    def remember(self, installed: InstalledPacks) -> None:
        with self._lock:
            self._packs[installed.project_id] = installed
            self._packs.move_to_end(installed.project_id)
            while len(self._packs) > self._size:
                self._packs.popitem(last=False)

    def forget(self, project_id: UUID) -> None:
        with self._lock:
            self._packs.pop(project_id, None)


_known = _KnownPacks(KNOWN_PROJECTS)


def _read_installed(conn: Connection[Any], project_id: UUID) -> InstalledPacks:
    """The packs installed in the project now (one query), remembered for later writes."""

    def pack_and_stamp(*, stamp: str, **columns: Any) -> tuple[TemplatePack, str]:
        return TemplatePack(**columns), stamp

    with conn.cursor(row_factory=kwargs_row(pack_and_stamp)) as cur:
        cur.execute(_compose(INSTALLED_PACKS), {"project_id": project_id})
        rows = cur.fetchall()
    installed = InstalledPacks(
        project_id, tuple(pack for pack, _ in rows), frozenset(stamp for _, stamp in rows)
    )
    _known.remember(installed)
    return installed


def stamp_of(value: Sequence[str] | None) -> frozenset[str]:
    """A stamp as a statement returns PACK_STAMP (an array, NULL for no pack)."""
    return frozenset(value or ())


@dataclass(frozen=True, slots=True)
class PackValidation:
    """The validation of one graph write, usually without a round trip of its own.

    The write is validated against the packs last read for its project in this process (read
    now if there are none, or if they refuse it, so that an error never comes from packs read
    earlier). The write statement then returns PACK_STAMP, which `confirm` compares with those
    packs: when another pack version was installed meanwhile (by any process), the write is
    validated again against the packs installed now, and an error raised there undoes it (the
    write runs in a savepoint). A write is thus committed only if it is valid against the packs
    its own statement saw.
    """

    installed: InstalledPacks
    check: Callable[[Sequence[TemplatePack]], None]

    @classmethod
    def of_object(
        cls, conn: Connection[Any], project_id: UUID, type_name: str, properties: Mapping[str, Any]
    ) -> PackValidation:
        """Validate an object's type and properties (see validate_object)."""
        check = partial(_check_object, project_id, type_name, properties)
        return cls._validate(conn, project_id, check)

    @classmethod
    def of_relationship(
        cls,
        conn: Connection[Any],
        project_id: UUID,
        type_name: str,
        source_type: str,
        target_type: str,
    ) -> PackValidation:
        """Validate a relationship's type and ends (see validate_relationship)."""
        check = partial(_check_relationship, project_id, type_name, source_type, target_type)
        return cls._validate(conn, project_id, check)

    @classmethod
    def _validate(
        cls,
        conn: Connection[Any],
        project_id: UUID,
        check: Callable[[Sequence[TemplatePack]], None],
    ) -> PackValidation:
        installed = _known.get(project_id)
        if installed is not None:
            try:
                check(installed.packs)
                return cls(installed, check)
            except (UnknownType, PropertyValidationError, InvalidInput):
                pass  # perhaps packs read earlier: ask the database
        installed = _read_installed(conn, project_id)
        check(installed.packs)
        return cls(installed, check)

    def confirm(self, conn: Connection[Any], stamp: frozenset[str] | None) -> None:
        """Validate again if the write's statement saw other packs than the ones validated
        against (`stamp`: what it returned for PACK_STAMP; None: it returned nothing)."""
        if stamp != self.installed.stamp:
            self.check(_read_installed(conn, self.installed.project_id).packs)


def validate_object(
    conn: Connection[Any], project_id: UUID, type_name: str, properties: Mapping[str, Any]
) -> None:
    """Check an object's type and properties against the packs installed in its project.

    Raises `UnknownType` or `PropertyValidationError` (listing every problem found).
    """
    _check_object(project_id, type_name, properties, installed_packs(conn, project_id))


def _check_object(
    project_id: UUID,
    type_name: str,
    properties: Mapping[str, Any],
    packs: Sequence[TemplatePack],
) -> None:
    for pack in packs:
        if type_name in pack.object_type_schemas:
            problems = _property_problems(pack, type_name, properties)
            if problems:
                raise PropertyValidationError(type_name, problems)
            return
    raise UnknownType(
        f"unknown object type {type_name!r} in project {project_id}; "
        + _known_types(packs, "object_type_schemas")
    )


def validate_relationship(
    conn: Connection[Any], project_id: UUID, type_name: str, source_type: str, target_type: str
) -> None:
    """Check that the project's packs define this relationship type between these types."""
    packs = installed_packs(conn, project_id)
    _check_relationship(project_id, type_name, source_type, target_type, packs)


def _check_relationship(
    project_id: UUID,
    type_name: str,
    source_type: str,
    target_type: str,
    packs: Sequence[TemplatePack],
) -> None:
    for pack in packs:
        definition = pack.relationship_type_schemas.get(type_name)
        if definition is None:
            continue
        sources = definition.get("sourceTypes", [])
        targets = definition.get("targetTypes", [])
        if ANY_TYPE not in sources and source_type not in sources:
            raise InvalidInput(
                f"a {type_name} relationship cannot start at a {source_type}; "
                f"allowed source types: {', '.join(sources)}"
            )
        if ANY_TYPE not in targets and target_type not in targets:
            raise InvalidInput(
                f"a {type_name} relationship cannot end at a {target_type}; "
                f"allowed target types: {', '.join(targets)}"
            )
        return
    raise UnknownType(
        f"unknown relationship type {type_name!r} in project {project_id}; "
        + _known_types(packs, "relationship_type_schemas")
    )


def _known_types(packs: Sequence[TemplatePack], attribute: str) -> str:
    names = sorted(name for pack in packs for name in getattr(pack, attribute))
    if not packs:
        return "no template pack is installed in this project"
    return "the installed packs define: " + ", ".join(names)


def _property_problems(
    pack: TemplatePack, type_name: str, properties: Mapping[str, Any]
) -> list[str]:
    validator = _validator(json.dumps(pack.object_type_schemas[type_name], sort_keys=True))
    return [_describe(error) for error in sorted(validator.iter_errors(properties), key=str)]


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    # Keyed by the schema's text, so a pack row edited by hand never meets a stale validator.
    return Draft202012Validator(
        json.loads(schema_json), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _describe(error: ValidationError) -> str:
    where = ".".join(str(part) for part in error.absolute_path)
    subject = f"property {where!r}" if where else "properties"
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else error.message
        return f"missing required property {missing!r}"
    if error.validator == "type":
        expected = error.validator_value
        got = _json_type(error.instance)
        return f"{subject} must be of JSON type {expected}, got {got}"
    if error.validator == "enum" and isinstance(error.validator_value, list):
        allowed = ", ".join(str(value) for value in error.validator_value)
        return f"{subject} must be one of {allowed}, got {error.instance!r}"
    return f"{subject}: {error.message}"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _compose(statement: str) -> sql.Composed:
    return sql.SQL(statement).format(columns=_PACK_COLUMNS)
