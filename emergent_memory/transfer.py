"""Export and import of everything the graph stores, as JSON Lines records, to move or back up.

An export is a header record followed by one record per row: every version of every object
and relationship (same ids, versions, heads, timestamps and embeddings), the pack
installations of each project, the memory recall log (with each recall's query) and the
memories' evidence (format version 3; version 2 files, whose recalls have no query, and
version 1 files, without evidence, import as before). `export_records` yields them as
JSON-serializable dicts (one per line once `json.dumps`-ed); `import_records` writes them into
another database, skipping rows it already holds, so importing a file twice changes nothing.

Like the other store modules, both take a connection and never commit: run an export in one
transaction (one snapshot; REPEATABLE READ makes it consistent across the tables) and an
import in one transaction, rolled back when it raises.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

import psycopg
from psycopg import Connection, sql
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from emergent_memory.db.migrate import current_revision
from emergent_memory.errors import InvalidInput
from emergent_memory.graph.models import Scope
from emergent_memory.graph.versioning import require_transaction

FORMAT_NAME = "emergent-memory-export"
# 2: evidence records (kb.memory_evidence, migration 0013)
# 3: a recall's query (or its SHA-256: kb.memory_recalls, migration 0020)
FORMAT_VERSION = 3

# rows fetched per round trip by the export's server-side cursors
BATCH_SIZE = 500

# --- export ---------------------------------------------------------------------------------

# The generated columns (fts, content_hash) are left out: the target computes them from the
# same data. Vectors go out as real[] so the export does not depend on pgvector's adapters.
EXPORT_OBJECTS = """
SELECT id, canonical_id, version, is_head, project_id, actor_id, scope, type, key, status,
       properties, labels, embedding::real[] AS embedding, embedding_model,
       deleted_at, delete_reason, created_at, updated_at
FROM kb.graph_objects
WHERE {filter}
ORDER BY canonical_id, version
"""

EXPORT_RELATIONSHIPS = """
SELECT id, canonical_id, version, is_head, project_id, actor_id, type, src_id, dst_id,
       properties, deleted_at, delete_reason, created_at, updated_at
FROM kb.graph_relationships
WHERE {filter}
ORDER BY canonical_id, version
"""

EXPORT_PACK_INSTALLATIONS = """
SELECT i.project_id, i.pack_name, p.version AS pack_version, i.installed_at, i.updated_at
FROM kb.project_template_packs i
JOIN kb.template_packs p ON p.id = i.template_pack_id
WHERE {filter}
ORDER BY i.project_id, i.pack_name
"""

EXPORT_RECALLS = """
SELECT canonical_id, actor_id, project_id, recalled_at, query, query_sha256
FROM kb.memory_recalls
WHERE {filter}
ORDER BY canonical_id, recalled_at, actor_id, project_id
"""

# The evidence of memories (migration 0013). Its ids are the target's own: an evidence row is
# already present when an identical one exists (like a recall).
EXPORT_EVIDENCE = """
SELECT canonical_id, actor_id, project_id, evidence, origin, session_id, episode_id,
       independent, confidence_before, confidence_after, created_at
FROM kb.memory_evidence
WHERE {filter}
ORDER BY canonical_id, created_at, id
"""

# The filters' building blocks. `{objects}` is the object filter: with an actor, only the
# relationships between two exported objects, and the recalls of exported objects, go out.
IN_PROJECT = "project_id = %(project_id)s"
OF_ACTOR = "actor_id = %(actor_id)s"
BOTH_ENDS_EXPORTED = """
src_id IN (SELECT canonical_id FROM kb.graph_objects WHERE {objects})
AND dst_id IN (SELECT canonical_id FROM kb.graph_objects WHERE {objects})
"""
OF_EXPORTED_OBJECT = "canonical_id IN (SELECT canonical_id FROM kb.graph_objects WHERE {objects})"
INSTALLED_IN_PROJECT = "i.project_id = %(project_id)s"
INSTALLED_IN_PROJECT_OF_EXPORTED_OBJECT = (
    "i.project_id IN (SELECT project_id FROM kb.graph_objects WHERE {objects})"
)

# --- import ---------------------------------------------------------------------------------

INSERT_OBJECT = """
INSERT INTO kb.graph_objects (
    id, canonical_id, version, is_head, project_id, actor_id, scope, type, key, status,
    properties, labels, embedding, embedding_model, deleted_at, delete_reason,
    created_at, updated_at
) VALUES (
    %(id)s, %(canonical_id)s, %(version)s, %(is_head)s, %(project_id)s, %(actor_id)s,
    %(scope)s, %(type)s, %(key)s, %(status)s, %(properties)s, %(labels)s,
    %(embedding)s::real[]::vector, %(embedding_model)s, %(deleted_at)s, %(delete_reason)s,
    %(created_at)s, %(updated_at)s
)
ON CONFLICT (id) DO NOTHING
RETURNING id
"""

INSERT_RELATIONSHIP = """
INSERT INTO kb.graph_relationships (
    id, canonical_id, version, is_head, project_id, actor_id, type, src_id, dst_id,
    properties, deleted_at, delete_reason, created_at, updated_at
) VALUES (
    %(id)s, %(canonical_id)s, %(version)s, %(is_head)s, %(project_id)s, %(actor_id)s,
    %(type)s, %(src_id)s, %(dst_id)s, %(properties)s, %(deleted_at)s, %(delete_reason)s,
    %(created_at)s, %(updated_at)s
)
ON CONFLICT (id) DO NOTHING
RETURNING id
"""

FIND_PACK = "SELECT id FROM kb.template_packs WHERE name = %(name)s AND version = %(version)s"

INSERT_PACK_INSTALLATION = """
INSERT INTO kb.project_template_packs (
    project_id, pack_name, template_pack_id, installed_at, updated_at
) VALUES (
    %(project_id)s, %(pack_name)s, %(template_pack_id)s, %(installed_at)s, %(updated_at)s
)
ON CONFLICT (project_id, pack_name) DO NOTHING
RETURNING project_id
"""

# Recalls have no id: a row is already present when an identical one exists.
INSERT_RECALL = """
INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at, query,
                               query_sha256)
SELECT %(canonical_id)s::uuid, %(actor_id)s::uuid, %(project_id)s::uuid,
       %(recalled_at)s::timestamptz, %(query)s, %(query_sha256)s
WHERE NOT EXISTS (
    SELECT FROM kb.memory_recalls
    WHERE canonical_id = %(canonical_id)s::uuid
      AND recalled_at = %(recalled_at)s::timestamptz
      AND actor_id IS NOT DISTINCT FROM %(actor_id)s::uuid
)
RETURNING canonical_id
"""

INSERT_EVIDENCE = """
INSERT INTO kb.memory_evidence (canonical_id, actor_id, project_id, evidence, origin,
                                session_id, episode_id, independent, confidence_before,
                                confidence_after, created_at)
SELECT %(canonical_id)s::uuid, %(actor_id)s::uuid, %(project_id)s::uuid, %(evidence)s::text,
       %(origin)s::text, %(session_id)s::text, %(episode_id)s::uuid, %(independent)s::boolean,
       %(confidence_before)s::float8, %(confidence_after)s::float8,
       %(created_at)s::timestamptz
WHERE NOT EXISTS (
    SELECT FROM kb.memory_evidence
    WHERE canonical_id = %(canonical_id)s::uuid AND actor_id = %(actor_id)s::uuid
      AND created_at = %(created_at)s::timestamptz AND origin = %(origin)s::text
      AND evidence IS NOT DISTINCT FROM %(evidence)s::text
)
RETURNING canonical_id
"""

# The dimension of kb.graph_objects.embedding (pgvector keeps it as the type modifier; -1
# means the column takes vectors of any dimension).
EMBEDDING_DIMENSIONS = """
SELECT atttypmod FROM pg_attribute
WHERE attrelid = 'kb.graph_objects'::regclass AND attname = 'embedding'
"""

# What each unique index refusing an imported row means, by index name.
CONFLICTS = {
    "graph_objects_one_head_idx": (
        "object {canonical_id} already exists in the target with other history: another of "
        "its versions is the head there, so this file's head cannot be imported"
    ),
    "graph_objects_canonical_version_key": (
        "object {canonical_id} already exists in the target with other history: its "
        "version {version} there has another id than {id}"
    ),
    "graph_objects_live_key_idx": (
        "another live {type} object with key {key!r} already exists in project {project_id} "
        "of the target"
    ),
    "graph_relationships_one_head_idx": (
        "relationship {canonical_id} already exists in the target with other history: "
        "another of its versions is the head there, so this file's head cannot be imported"
    ),
    "graph_relationships_canonical_version_key": (
        "relationship {canonical_id} already exists in the target with other history: its "
        "version {version} there has another id than {id}"
    ),
    "graph_relationships_live_edge_idx": (
        "another live {type} relationship from {src_id} to {dst_id} already exists in "
        "project {project_id} of the target"
    ),
}


@dataclass(frozen=True, slots=True)
class KindCounts:
    """How many records of one kind an import wrote, and how many the target already held."""

    inserted: int = 0
    already_present: int = 0


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """What an import did, per kind of record."""

    objects: KindCounts
    relationships: KindCounts
    pack_installations: KindCounts
    recalls: KindCounts
    evidence: KindCounts = KindCounts()

    @property
    def inserted(self) -> int:
        return sum(counts.inserted for counts in self._kinds())

    @property
    def already_present(self) -> int:
        return sum(counts.already_present for counts in self._kinds())

    def _kinds(self) -> tuple[KindCounts, ...]:
        return (
            self.objects,
            self.relationships,
            self.pack_installations,
            self.recalls,
            self.evidence,
        )


def export_records(
    conn: Connection[Any], *, project_id: UUID | None = None, actor_id: UUID | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the header, then every object version, relationship version, pack installation,
    recall and piece of evidence, each as a JSON-serializable dict; objects and relationships
    are ordered by (canonical_id, version), so the same data always exports the same way.

    `project_id` keeps what belongs to that project. `actor_id` keeps that actor's objects,
    the relationships between two of them, their recalls and evidence and the pack
    installations of their projects. The rows are streamed through server-side cursors, which
    live in a transaction: call this inside one (`with conn.transaction():` on an autocommit
    connection).
    """
    if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
        raise RuntimeError(
            "an export reads through server-side cursors, which need a transaction: "
            "use `with conn.transaction():`"
        )
    return _export(conn, project_id=project_id, actor_id=actor_id)


def import_records(conn: Connection[Any], records: Iterable[Mapping[str, Any]]) -> ImportCounts:
    """Write exported records into this database with their own ids, versions and timestamps.

    The first record must be an export header this version can read (a later header, from
    concatenated exports, is checked the same way). Rows the target already holds (same id;
    for installations the same project and pack name; for recalls and evidence an identical
    row) are counted as already present and left alone. Any bad record raises `InvalidInput` naming
    its line (the header is line 1); so does a row that contradicts the target's history of
    the same object or relationship. Run it in one transaction and roll back when it raises.
    """
    require_transaction(conn)
    importer = _Importer(conn)
    line = 0
    for line, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise InvalidInput(f"line {line}: a record must be a JSON object")
        kind = record.get("kind")
        if line == 1 or kind == "header":
            check_header(record, line)
        else:
            importer.write(record, line)
    if line == 0:
        raise InvalidInput("the export is empty: it has no header")
    return importer.counts()


def _export(
    conn: Connection[Any], *, project_id: UUID | None, actor_id: UUID | None
) -> Iterator[dict[str, Any]]:
    yield {
        "kind": "header",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "schema_revision": current_revision(conn),
    }
    params = {"project_id": project_id, "actor_id": actor_id}
    statements = {
        "object": EXPORT_OBJECTS,
        "relationship": EXPORT_RELATIONSHIPS,
        "pack_installation": EXPORT_PACK_INSTALLATIONS,
        "recall": EXPORT_RECALLS,
        "evidence": EXPORT_EVIDENCE,
    }
    filters = _export_filters(by_project=project_id is not None, by_actor=actor_id is not None)
    for kind, statement in statements.items():
        query = sql.SQL(statement).format(filter=filters[kind])
        with conn.cursor(name=f"emergent_memory_export_{uuid4().hex}", row_factory=dict_row) as cur:
            cur.itersize = BATCH_SIZE
            cur.execute(query, params)
            for row in cur:
                yield {"kind": kind} | {name: _json_value(value) for name, value in row.items()}


def _export_filters(*, by_project: bool, by_actor: bool) -> dict[str, sql.Composable]:
    """The WHERE condition of each kind's export query."""
    objects = _all_of(_when(by_project, IN_PROJECT), _when(by_actor, OF_ACTOR))

    def of_exported_objects(condition: str) -> sql.Composable:
        return sql.SQL(condition).format(objects=objects)

    return {
        "object": objects,
        "relationship": _all_of(
            _when(by_project, IN_PROJECT),
            _when(by_actor, of_exported_objects(BOTH_ENDS_EXPORTED)),
        ),
        "pack_installation": _all_of(
            _when(by_project, INSTALLED_IN_PROJECT),
            _when(by_actor, of_exported_objects(INSTALLED_IN_PROJECT_OF_EXPORTED_OBJECT)),
        ),
        "recall": _all_of(
            _when(by_project, IN_PROJECT),
            _when(by_actor, of_exported_objects(OF_EXPORTED_OBJECT)),
        ),
        "evidence": _all_of(
            _when(by_project, IN_PROJECT),
            _when(by_actor, of_exported_objects(OF_EXPORTED_OBJECT)),
        ),
    }


def _when(given: bool, condition: str | sql.Composable) -> sql.Composable | None:
    if not given:
        return None
    return sql.SQL(condition) if isinstance(condition, str) else condition


def _all_of(*conditions: sql.Composable | None) -> sql.Composable:
    present = [condition for condition in conditions if condition is not None]
    return sql.SQL(" AND ").join(present) if present else sql.SQL("true")


def _json_value(value: Any) -> Any:
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def check_header(record: Mapping[str, Any], line: int) -> None:
    """Refuse (InvalidInput, naming the line) a record that is not a header of an export this
    version reads."""
    if record.get("kind") != "header":
        raise InvalidInput(
            f"line {line}: not an emergent-memory export: the first record must be its header "
            f'({{"kind": "header", "format": "{FORMAT_NAME}", ...}})'
        )
    if record.get("format") != FORMAT_NAME:
        raise InvalidInput(
            f"line {line}: the header's format is {record.get('format')!r}, "
            f"not {FORMAT_NAME!r}: this is not an emergent-memory export"
        )
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(f"line {line}: the header's version must be a positive integer")
    if version > FORMAT_VERSION:
        raise InvalidInput(
            f"line {line}: the export has format version {version}, newer than this "
            f"emergent-memory reads (up to {FORMAT_VERSION}): upgrade emergent-memory to import it"
        )


# --- the records an import accepts ----------------------------------------------------------

Version = Annotated[int, Field(strict=True, ge=1)]
Flag = Annotated[bool, Field(strict=True)]
NonEmpty = Annotated[str, Field(min_length=1)]


class _Record(BaseModel):
    # every field is required (null where the column allows it): a record without one is
    # truncated or hand-made, and guessing its value would import the wrong data
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObjectRecord(_Record):
    kind: Literal["object"]
    id: UUID
    canonical_id: UUID
    version: Version
    is_head: Flag
    project_id: UUID
    actor_id: UUID | None
    scope: Scope
    type: NonEmpty
    key: NonEmpty | None
    status: str | None
    properties: dict[str, Any]
    labels: list[str]
    embedding: Annotated[list[float], Field(min_length=1)] | None
    embedding_model: NonEmpty | None
    deleted_at: AwareDatetime | None
    delete_reason: str | None
    created_at: AwareDatetime
    updated_at: AwareDatetime

    @model_validator(mode="after")
    def _embedding_has_model(self) -> ObjectRecord:
        if (self.embedding is None) != (self.embedding_model is None):
            raise ValueError("embedding and embedding_model are either both set or both null")
        return self


class RelationshipRecord(_Record):
    kind: Literal["relationship"]
    id: UUID
    canonical_id: UUID
    version: Version
    is_head: Flag
    project_id: UUID
    actor_id: UUID | None
    type: NonEmpty
    src_id: UUID
    dst_id: UUID
    properties: dict[str, Any]
    deleted_at: AwareDatetime | None
    delete_reason: str | None
    created_at: AwareDatetime
    updated_at: AwareDatetime


class PackInstallationRecord(_Record):
    kind: Literal["pack_installation"]
    project_id: UUID
    pack_name: NonEmpty
    pack_version: NonEmpty
    installed_at: AwareDatetime
    updated_at: AwareDatetime


class RecallRecord(_Record):
    kind: Literal["recall"]
    canonical_id: UUID
    actor_id: UUID | None
    project_id: UUID
    recalled_at: AwareDatetime
    # the recall's query, or the SHA-256 kept instead of one that held a secret (format 3;
    # absent from the recalls of older exports, which kept no query)
    query: Annotated[str, Field(max_length=500)] | None = None
    query_sha256: Annotated[str, Field(pattern="^[0-9a-f]{64}$")] | None = None

    @model_validator(mode="after")
    def _query_or_digest(self) -> RecallRecord:
        if self.query is not None and self.query_sha256 is not None:
            raise ValueError("a recall keeps its query or its SHA-256, not both")
        return self


class EvidenceRecord(_Record):
    kind: Literal["evidence"]
    canonical_id: UUID
    actor_id: UUID
    project_id: UUID
    evidence: str | None
    origin: Literal["save", "repeat", "reinforce", "capture"]
    session_id: str | None
    episode_id: UUID | None
    independent: Flag
    confidence_before: Annotated[float, Field(ge=0, le=1)]
    confidence_after: Annotated[float, Field(ge=0, le=1)]
    created_at: AwareDatetime


RECORD_MODELS: dict[str, type[_Record]] = {
    "object": ObjectRecord,
    "relationship": RelationshipRecord,
    "pack_installation": PackInstallationRecord,
    "recall": RecallRecord,
    "evidence": EvidenceRecord,
}


def parse_record(
    record: Mapping[str, Any], line: int
) -> ObjectRecord | RelationshipRecord | PackInstallationRecord | RecallRecord | EvidenceRecord:
    """A record other than the header, checked: InvalidInput names the line and what to fix."""
    kind = record.get("kind")
    model = RECORD_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(["header", *RECORD_MODELS])
        raise InvalidInput(f"line {line}: unknown record kind {kind!r} (known: {known})")
    try:
        return model.model_validate(record)  # type: ignore[return-value]
    except ValidationError as error:
        raise InvalidInput(f"line {line}: invalid {kind} record: {_problems(error)}") from None


class _Importer:
    """Writes validated records one by one and counts what it did."""

    def __init__(self, conn: Connection[Any]) -> None:
        self._conn = conn
        self._counts: Counter[tuple[str, bool]] = Counter()
        self._pack_ids: dict[tuple[str, str], UUID] = {}
        self._dimensions: int | None = None

    def write(self, record: Mapping[str, Any], line: int) -> None:
        parsed = parse_record(record, line)
        kind = str(record["kind"])
        if isinstance(parsed, ObjectRecord):
            inserted = self._object(parsed, line)
        elif isinstance(parsed, RelationshipRecord):
            inserted = self._insert(INSERT_RELATIONSHIP, _row(parsed), line)
        elif isinstance(parsed, PackInstallationRecord):
            inserted = self._pack_installation(parsed, line)
        elif isinstance(parsed, EvidenceRecord):
            inserted = self._insert(INSERT_EVIDENCE, _row(parsed), line)
        else:
            inserted = self._insert(INSERT_RECALL, _row(parsed), line)
        self._counts[kind, inserted] += 1

    def counts(self) -> ImportCounts:
        def of(kind: str) -> KindCounts:
            return KindCounts(self._counts[kind, True], self._counts[kind, False])

        return ImportCounts(
            objects=of("object"),
            relationships=of("relationship"),
            pack_installations=of("pack_installation"),
            recalls=of("recall"),
            evidence=of("evidence"),
        )

    def _object(self, record: ObjectRecord, line: int) -> bool:
        if record.embedding is not None:
            dimensions = self._embedding_dimensions()
            if dimensions > 0 and len(record.embedding) != dimensions:
                raise InvalidInput(
                    f"line {line}: object {record.canonical_id} version {record.version} has a "
                    f"{len(record.embedding)}-dimension embedding (model "
                    f"{record.embedding_model!r}), but this database stores {dimensions}-"
                    "dimension vectors: import into a database set up for the same model"
                )
        return self._insert(INSERT_OBJECT, _row(record), line)

    def _pack_installation(self, record: PackInstallationRecord, line: int) -> bool:
        pack = (record.pack_name, record.pack_version)
        if pack not in self._pack_ids:
            found = self._conn.execute(FIND_PACK, {"name": pack[0], "version": pack[1]}).fetchone()
            if found is None:
                raise InvalidInput(
                    f"line {line}: template pack {pack[0]} {pack[1]} is not published in the "
                    "target database: publish it there first"
                )
            self._pack_ids[pack] = found[0]
        params = _row(record) | {"template_pack_id": self._pack_ids[pack]}
        return self._insert(INSERT_PACK_INSTALLATION, params, line)

    def _insert(self, statement: str, params: dict[str, Any], line: int) -> bool:
        """Run one INSERT ... RETURNING; True when it wrote the row, False when already there."""
        try:
            return self._conn.execute(statement, params).fetchone() is not None
        except psycopg.errors.UniqueViolation as error:
            conflict = CONFLICTS.get(error.diag.constraint_name or "")
            if conflict is None:
                raise
            raise InvalidInput(f"line {line}: {conflict.format(**params)}") from error
        except psycopg.errors.IntegrityError as error:
            raise InvalidInput(f"line {line}: the target refuses the row: {error}") from error

    def _embedding_dimensions(self) -> int:
        if self._dimensions is None:
            row = self._conn.execute(EMBEDDING_DIMENSIONS).fetchone()
            assert row is not None, "kb.graph_objects has an embedding column"
            self._dimensions = int(row[0])
        return self._dimensions


def _row(record: _Record) -> dict[str, Any]:
    """A record's fields as statement parameters (JSONB wrapped)."""
    params = record.model_dump(exclude={"kind"})
    if "properties" in params:
        params["properties"] = Jsonb(params["properties"])
    return params


def _problems(error: ValidationError) -> str:
    problems = []
    for problem in error.errors(include_url=False):
        field = ".".join(str(part) for part in problem["loc"])
        if problem["type"] == "missing":
            problems.append(f"missing field {field!r}")
        elif problem["type"] == "extra_forbidden":
            problems.append(f"unknown field {field!r}")
        elif field:
            problems.append(f"{field}: {problem['msg']}")
        else:
            problems.append(problem["msg"])
    return "; ".join(problems)
