"""Export and import: a JSON Lines copy of one database's graph lands row for row in another."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from pgvector.psycopg import register_vector

from emergent_memory import graph
from emergent_memory.db import migrate
from emergent_memory.errors import InvalidInput
from emergent_memory.graph import Embedding
from emergent_memory.transfer import (
    FORMAT_VERSION,
    ImportCounts,
    KindCounts,
    export_records,
    import_records,
)
from tests.helpers import memory

Connect = Callable[[str], psycopg.Connection[Any]]

# Every row of the four tables, generated columns (fts, content_hash) included. A pack
# installation names its pack by name and version: pack ids are local to each database.
SNAPSHOT = {
    "objects": "SELECT to_jsonb(o) FROM kb.graph_objects o ORDER BY id",
    "relationships": "SELECT to_jsonb(r) FROM kb.graph_relationships r ORDER BY id",
    "pack_installations": """
        SELECT to_jsonb(i) - 'template_pack_id' || jsonb_build_object('pack_version', p.version)
        FROM kb.project_template_packs i JOIN kb.template_packs p ON p.id = i.template_pack_id
        ORDER BY i.project_id, i.pack_name
    """,
    "recalls": """
        SELECT to_jsonb(m) FROM kb.memory_recalls m
        ORDER BY canonical_id, recalled_at, actor_id NULLS FIRST
    """,
    # ids are each database's own
    "evidence": """
        SELECT to_jsonb(e) - 'id' FROM kb.memory_evidence e ORDER BY canonical_id, created_at
    """,
}


@dataclass(frozen=True)
class Source:
    """A committed database with two projects, two actors, versions, tombstones and recalls."""

    url: str
    project_a: uuid.UUID
    project_b: uuid.UUID
    actor_1: uuid.UUID
    actor_2: uuid.UUID
    tabs: uuid.UUID  # actor 1, project A: two versions, embedded
    pnpm: uuid.UUID  # actor 1, project A: deleted (tombstone), no embedding
    work: uuid.UUID  # actor 1, project A: a MemoryContext with a key
    shared: uuid.UUID  # actor 2, project A: a global memory, embedded
    other: uuid.UUID  # actor 1, project B, embedded


def vector(seed: int) -> list[float]:
    return [math.sin(seed * 7.3 + i * 0.37) for i in range(384)]


@pytest.fixture
def connect() -> Iterator[Connect]:
    """Factory of autocommit connections (pgvector registered) to a given database."""
    opened: list[psycopg.Connection[Any]] = []

    def open_connection(url: str) -> psycopg.Connection[Any]:
        conn = psycopg.connect(url, autocommit=True)
        register_vector(conn)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        conn.close()


@pytest.fixture(scope="module")
def source(make_database: Callable[[], str]) -> Source:
    url = make_database()
    migrate.upgrade(url)
    project_a, project_b, actor_1, actor_2 = (uuid.uuid4() for _ in range(4))
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        register_vector(conn)
        for project in (project_a, project_b):
            graph.install_pack(conn, project, "agent-memory")

        def new_memory(
            project: uuid.UUID, actor: uuid.UUID, content: str, **more: Any
        ) -> uuid.UUID:
            created = graph.create_object(
                conn,
                project_id=project,
                actor_id=actor,
                type="Memory",
                properties=memory(content) | {"confidence": 0.9},
                labels=["memory", "preference"],
                **more,
            )
            return created.canonical_id

        tabs = new_memory(
            project_a, actor_1, "The user prefers tabs", embedding=Embedding.of(vector(1), "m")
        )
        graph.update_object(
            conn,
            tabs,
            properties={"content": "The user prefers tabs in Go only"},
            embedding=Embedding.of(vector(2), "m"),
        )
        pnpm = new_memory(project_a, actor_1, "The user prefers pnpm")
        work = graph.create_object(
            conn,
            project_id=project_a,
            actor_id=actor_1,
            type="MemoryContext",
            properties={"name": "work"},
            key="work",
        ).canonical_id
        shared = new_memory(
            project_a,
            actor_2,
            "Releases are cut on Tuesdays",
            scope="global",
            embedding=Embedding.of(vector(3), "m"),
        )
        other = new_memory(
            project_b,
            actor_1,
            "The user writes SQL in lower case",
            embedding=Embedding.of(vector(4), "m"),
        )

        def relate(type: str, src: uuid.UUID, dst: uuid.UUID, actor: uuid.UUID) -> uuid.UUID:
            return graph.create_relationship(
                conn, project_id=project_a, type=type, src_id=src, dst_id=dst, actor_id=actor
            ).canonical_id

        filed = relate("BELONGS_TO_CONTEXT", tabs, work, actor_1)
        graph.update_relationship(conn, filed, properties={"weight": 0.5})
        derived = relate("DERIVED_FROM", tabs, pnpm, actor_1)
        graph.delete_relationship(conn, derived, reason="wrong inference")
        relate("RELEVANT_TO", shared, tabs, actor_2)
        graph.delete_object(conn, pnpm, reason="no longer true")

        digest = "ab" * 32  # a query that held a secret: only its SHA-256 (migration 0020)
        for canonical_id, actor, project, days_ago, query, query_sha256 in (
            (tabs, actor_1, project_a, 3, "tabs or spaces?", None),
            (tabs, actor_1, project_a, 1, None, digest),
            (tabs, None, project_a, 2, None, None),
            (shared, actor_1, project_a, 1, "what is shared", None),
            (other, actor_1, project_b, 1, None, None),
        ):
            conn.execute(
                "INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at, "
                "query, query_sha256) VALUES (%s, %s, %s, now() - make_interval(days => %s), "
                "%s, %s)",
                (canonical_id, actor, project, days_ago, query, query_sha256),
            )
        for canonical_id, actor, project, evidence, days_ago in (
            (tabs, actor_1, project_a, None, 3),
            (tabs, actor_1, project_a, "the user said so again", 1),
            (other, actor_1, project_b, "seen in the README", 2),
        ):
            conn.execute(
                "INSERT INTO kb.memory_evidence (canonical_id, actor_id, project_id, evidence, "
                "origin, session_id, independent, confidence_before, confidence_after, "
                "created_at) VALUES (%s, %s, %s, %s, 'reinforce', 's-1', %s, 0.7, 0.775, "
                "now() - make_interval(days => %s))",
                (canonical_id, actor, project, evidence, evidence is not None, days_ago),
            )
    return Source(url, project_a, project_b, actor_1, actor_2, tabs, pnpm, work, shared, other)


@pytest.fixture
def target(make_database: Callable[[], str]) -> str:
    """A fresh migrated database to import into."""
    url = make_database()
    migrate.upgrade(url)
    return url


def export_from(connect: Connect, url: str, **filters: uuid.UUID | None) -> list[dict[str, Any]]:
    conn = connect(url)
    with conn.transaction():
        return list(export_records(conn, **filters))


def export_lines(connect: Connect, url: str, **filters: uuid.UUID | None) -> list[str]:
    return [json.dumps(record) for record in export_from(connect, url, **filters)]


def import_into(connect: Connect, url: str, records: list[dict[str, Any]]) -> ImportCounts:
    conn = connect(url)
    with conn.transaction():
        return import_records(conn, records)


def snapshot(connect: Connect, url: str) -> dict[str, list[Any]]:
    conn = connect(url)
    return {
        table: [row[0] for row in conn.execute(query).fetchall()]
        for table, query in SNAPSHOT.items()
    }


def of_kind(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in records if record["kind"] == kind]


def line_of(records: list[dict[str, Any]], predicate: Callable[[dict[str, Any]], bool]) -> int:
    """The 1-based line of the first record that satisfies the predicate."""
    return next(number for number, record in enumerate(records, 1) if predicate(record))


def test_export_then_import_copies_every_row_exactly(
    connect: Connect, source: Source, target: str
) -> None:
    lines = export_lines(connect, source.url)

    counts = import_into(connect, target, [json.loads(line) for line in lines])

    copied = snapshot(connect, target)
    assert copied == snapshot(connect, source.url)
    assert {table: len(rows) for table, rows in copied.items()} == {
        "objects": 7,
        "relationships": 5,
        "pack_installations": 2,
        "recalls": 5,
        "evidence": 3,
    }
    assert counts == ImportCounts(
        objects=KindCounts(inserted=7),
        relationships=KindCounts(inserted=5),
        pack_installations=KindCounts(inserted=2),
        recalls=KindCounts(inserted=5),
        evidence=KindCounts(inserted=3),
    )


def test_imported_objects_keep_their_embeddings_and_history(
    connect: Connect, source: Source, target: str
) -> None:
    import_into(connect, target, export_from(connect, source.url))

    conn = connect(target)
    head = graph.get_head(conn, source.tabs)
    assert head is not None
    assert (head.version, head.embedding, head.embedding_model) == (
        2,
        Embedding.of(vector(2), "m").vector,
        "m",
    )
    assert [v.is_head for v in graph.list_versions(conn, source.tabs)] == [False, True]
    assert graph.get_head(conn, source.pnpm) is None  # still deleted
    tombstone = graph.get_head(conn, source.pnpm, include_deleted=True)
    assert tombstone is not None
    assert tombstone.delete_reason == "no longer true"


def test_importing_twice_reports_everything_present_and_changes_nothing(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    first = import_into(connect, target, records)
    after_first = snapshot(connect, target)

    second = import_into(connect, target, records)

    assert snapshot(connect, target) == after_first
    assert second.inserted == 0
    assert second.already_present == first.inserted == len(records) - 1
    assert second.recalls == KindCounts(inserted=0, already_present=5)
    assert second.evidence == KindCounts(inserted=0, already_present=3)


def test_export_is_json_lines_in_a_deterministic_order(connect: Connect, source: Source) -> None:
    first = export_lines(connect, source.url)
    second = export_lines(connect, source.url)

    records = [json.loads(line) for line in first]
    header = records[0]
    assert header["kind"] == "header"
    assert header["format"] == "emergent-memory-export"
    assert header["version"] == FORMAT_VERSION
    assert header["schema_revision"] == migrate.head_revision()
    assert [record["kind"] for record in records[1:]] == sorted(
        (record["kind"] for record in records[1:]),
        key=["object", "relationship", "pack_installation", "recall", "evidence"].index,
    )
    for kind in ("object", "relationship"):
        keys = [(r["canonical_id"], r["version"]) for r in of_kind(records, kind)]
        assert keys == sorted(keys, key=lambda key: (uuid.UUID(key[0]), key[1]))
    assert first[1:] == second[1:]
    assert json.loads(second[0]) | {"exported_at": None} == header | {"exported_at": None}


def test_object_records_hold_every_stored_column_but_the_generated_ones(
    connect: Connect, source: Source
) -> None:
    records = export_from(connect, source.url)
    head = next(
        r
        for r in of_kind(records, "object")
        if r["canonical_id"] == str(source.tabs) and r["is_head"]
    )
    assert set(head) == {
        "kind", "id", "canonical_id", "version", "is_head", "project_id", "actor_id", "scope",
        "type", "key", "status", "properties", "labels", "embedding", "embedding_model",
        "deleted_at", "delete_reason", "created_at", "updated_at",
    }  # fmt: skip
    assert len(head["embedding"]) == 384
    assert head["created_at"].endswith("+00:00")
    assert of_kind(records, "pack_installation")[0].keys() == {
        "kind", "project_id", "pack_name", "pack_version", "installed_at", "updated_at",
    }  # fmt: skip


def test_project_filter_exports_only_that_project(connect: Connect, source: Source) -> None:
    records = export_from(connect, source.url, project_id=source.project_b)

    assert {r["canonical_id"] for r in of_kind(records, "object")} == {str(source.other)}
    assert of_kind(records, "relationship") == []
    assert [r["pack_name"] for r in of_kind(records, "pack_installation")] == ["agent-memory"]
    assert {r["project_id"] for r in records[1:]} == {str(source.project_b)}
    assert [r["canonical_id"] for r in of_kind(records, "recall")] == [str(source.other)]


def test_actor_filter_exports_their_objects_and_the_edges_between_them(
    connect: Connect, source: Source
) -> None:
    records = export_from(connect, source.url, actor_id=source.actor_1)

    objects = {r["canonical_id"] for r in of_kind(records, "object")}
    assert objects == {str(i) for i in (source.tabs, source.pnpm, source.work, source.other)}
    edges = {(r["type"], r["src_id"], r["dst_id"]) for r in of_kind(records, "relationship")}
    # the RELEVANT_TO edge from actor 2's global memory is left out
    assert edges == {
        ("BELONGS_TO_CONTEXT", str(source.tabs), str(source.work)),
        ("DERIVED_FROM", str(source.tabs), str(source.pnpm)),
    }
    # recalls of the exported objects, whoever recalled them
    recalled = [(r["canonical_id"], r["actor_id"]) for r in of_kind(records, "recall")]
    assert sorted(recalled, key=str) == sorted(
        [
            (str(source.tabs), str(source.actor_1)),
            (str(source.tabs), str(source.actor_1)),
            (str(source.tabs), None),
            (str(source.other), str(source.actor_1)),
        ],
        key=str,
    )
    assert {r["project_id"] for r in of_kind(records, "pack_installation")} == {
        str(source.project_a),
        str(source.project_b),
    }


def test_actor_and_project_filters_combine(connect: Connect, source: Source) -> None:
    records = export_from(connect, source.url, project_id=source.project_a, actor_id=source.actor_2)

    assert {r["canonical_id"] for r in of_kind(records, "object")} == {str(source.shared)}
    assert of_kind(records, "relationship") == []
    assert [r["canonical_id"] for r in of_kind(records, "recall")] == [str(source.shared)]
    assert [r["project_id"] for r in of_kind(records, "pack_installation")] == [
        str(source.project_a)
    ]


def test_a_filtered_export_imports_on_its_own(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url, actor_id=source.actor_1)

    counts = import_into(connect, target, records)

    assert counts.inserted == len(records) - 1
    conn = connect(target)
    assert graph.get_head(conn, source.tabs) is not None
    assert graph.get_head(conn, source.shared) is None


def test_export_outside_a_transaction_is_refused(connect: Connect, source: Source) -> None:
    with pytest.raises(RuntimeError, match="transaction"):
        export_records(connect(source.url))


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            {"format": "emergent-memory-export", "version": FORMAT_VERSION + 1},
            "newer than this emergent-memory reads",
        ),
        ({"format": "something-else", "version": 1}, "not an emergent-memory export"),
        ({"version": 1}, "not an emergent-memory export"),
    ],
)
def test_headers_this_version_cannot_read_are_refused(
    connect: Connect, source: Source, target: str, header: dict[str, Any], message: str
) -> None:
    records = export_from(connect, source.url)
    records[0] = {"kind": "header", "exported_at": records[0]["exported_at"]} | header

    with pytest.raises(InvalidInput, match=message):
        import_into(connect, target, records)


def test_an_export_without_its_header_is_refused(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)

    with pytest.raises(InvalidInput, match="line 1: not an emergent-memory export"):
        import_into(connect, target, records[1:])
    with pytest.raises(InvalidInput, match="empty"):
        import_into(connect, target, [])


def test_an_unknown_kind_is_refused_with_its_line(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    records.insert(3, {"kind": "memory", "content": "?"})

    with pytest.raises(InvalidInput, match=r"line 4: unknown record kind 'memory'"):
        import_into(connect, target, records)


def test_a_missing_field_is_refused_with_its_line(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    line = line_of(records, lambda r: r["kind"] == "relationship")
    del records[line - 1]["src_id"]

    with pytest.raises(InvalidInput, match=rf"line {line}: .*missing field 'src_id'"):
        import_into(connect, target, records)


def test_a_pack_the_target_does_not_have_is_named(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    line = line_of(records, lambda r: r["kind"] == "pack_installation")
    records[line - 1]["pack_version"] = "9.9.9"

    with pytest.raises(InvalidInput, match=rf"line {line}: template pack agent-memory 9.9.9"):
        import_into(connect, target, records)


def test_an_embedding_of_another_dimension_is_refused(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    line = line_of(records, lambda r: r["kind"] == "object" and r["embedding"] is not None)
    records[line - 1]["embedding"] = [0.1, 0.2, 0.3]

    with pytest.raises(InvalidInput, match=rf"line {line}: .*3-dimension.*384-dimension"):
        import_into(connect, target, records)


@pytest.mark.parametrize("head_only", [False, True], ids=["full-history", "head-only"])
def test_an_object_with_other_history_in_the_target_is_refused_and_nothing_written(
    connect: Connect, source: Source, target: str, head_only: bool
) -> None:
    conn = connect(target)
    with conn.transaction():
        graph.install_pack(conn, source.project_a, "agent-memory")
        graph.create_object(
            conn,
            project_id=source.project_a,
            type="Memory",
            properties=memory("Written in the target"),
            canonical_id=source.tabs,
        )
    before = snapshot(connect, target)
    records = export_from(connect, source.url)
    if head_only:
        records = [
            r
            for r in records
            if not (r["kind"] == "object" and r["canonical_id"] == str(source.tabs)) or r["is_head"]
        ]

    with pytest.raises(InvalidInput, match=f"object {source.tabs} already exists .* other history"):
        import_into(connect, target, records)

    assert snapshot(connect, target) == before


def test_a_recall_of_an_older_export_imports_without_a_query(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    assert {r["query"] for r in of_kind(records, "recall")} == {
        "tabs or spaces?",
        "what is shared",
        None,
    }
    older = [
        {**r, "version": 2}
        if r["kind"] == "header"
        else {k: v for k, v in r.items() if k not in ("query", "query_sha256")}
        if r["kind"] == "recall"
        else r
        for r in records
    ]
    counts = import_into(connect, target, older)
    assert counts.recalls == KindCounts(inserted=5)
    rows = connect(target).execute(
        "SELECT count(*) FROM kb.memory_recalls WHERE query IS NULL AND query_sha256 IS NULL"
    )
    assert rows.fetchone() == (5,)


def test_a_recall_with_both_a_query_and_its_digest_is_refused(
    connect: Connect, source: Source, target: str
) -> None:
    records = export_from(connect, source.url)
    line = line_of(records, lambda r: r["kind"] == "recall")
    records[line - 1] = {**records[line - 1], "query": "x", "query_sha256": "cd" * 32}
    with pytest.raises(InvalidInput, match=f"line {line}: invalid recall record"):
        import_into(connect, target, records)
