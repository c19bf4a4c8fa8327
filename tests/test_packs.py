"""Template packs: the seeded agent-memory pack, installation, and property validation."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from emergent_memory import graph
from emergent_memory.errors import (
    InvalidInput,
    PackNotFound,
    PropertyValidationError,
    UnknownType,
)
from emergent_memory.resources import packs_dir
from tests.helpers import count_rows, memory

PACK_FILE = packs_dir() / "agent-memory.json"


def published_pack() -> dict[str, Any]:
    return dict(json.loads(PACK_FILE.read_text()))


def test_pack_file_equals_the_pack_seeded_by_the_head_revision(
    conn: psycopg.Connection[Any],
) -> None:
    expected = published_pack()
    pack = graph.get_pack(conn, "agent-memory")
    assert pack is not None
    seeded = {
        "name": pack.name,
        "version": pack.version,
        "description": pack.description,
        "author": pack.author,
        "license": pack.license,
        "source": pack.source,
        "object_type_schemas": pack.object_type_schemas,
        "relationship_type_schemas": pack.relationship_type_schemas,
        "extraction_prompts": pack.extraction_prompts,
    }
    assert seeded == expected
    assert pack.checksum == graph.pack_checksum(expected)


def test_pack_content_follows_the_product_design() -> None:
    pack = published_pack()
    assert (pack["name"], pack["version"]) == ("agent-memory", "1.0.0")
    memory_type = pack["object_type_schemas"]["Memory"]
    assert set(memory_type["properties"]) == {
        "content",
        "category",
        "confidence",
        "source",
        "scope",
        "last_used",
        "use_count",
        "superseded_by",
    }
    assert memory_type["required"] == ["content", "category"]
    assert memory_type["properties"]["category"]["enum"] == [
        "preference",
        "pattern",
        "correction",
        "fact",
        "instruction",
        "convention",
    ]
    assert all(p.get("description") for p in memory_type["properties"].values())
    assert {"description", "priority"} <= set(
        pack["object_type_schemas"]["MemoryContext"]["properties"]
    )
    relationships = pack["relationship_type_schemas"]
    assert set(relationships) == {"BELONGS_TO_CONTEXT", "SUPERSEDES", "DERIVED_FROM", "RELEVANT_TO"}
    assert relationships["BELONGS_TO_CONTEXT"]["targetTypes"] == ["MemoryContext"]
    assert "never extracted from documents" in pack["extraction_prompts"]["guidelines"]


def test_pack_file_is_a_valid_pack() -> None:
    definition = graph.load_pack_file(PACK_FILE)
    assert definition.as_json() == published_pack()


def test_invalid_pack_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    broken = published_pack()
    broken["object_type_schemas"]["Memory"]["properties"]["content"]["type"] = "text"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(InvalidInput, match="Memory"):
        graph.load_pack_file(path)


def test_install_is_idempotent_and_a_new_version_replaces_the_old(
    conn: psycopg.Connection[Any],
) -> None:
    project = uuid.uuid4()
    first = graph.install_pack(conn, project, "agent-memory")
    again = graph.install_pack(conn, project, "agent-memory")
    assert first == again
    assert first.version == "1.0.0"

    newer = published_pack() | {"version": "1.1.0"}
    graph.publish_pack(conn, graph.PackDefinition.model_validate(newer))
    upgraded = graph.install_pack(conn, project, "agent-memory")
    assert upgraded.version == "1.1.0"
    assert [p.version for p in graph.installed_packs(conn, project)] == ["1.1.0"]
    pinned = graph.install_pack(conn, project, "agent-memory", "1.0.0")
    assert pinned.version == "1.0.0"


def test_installing_an_unknown_pack_fails(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(PackNotFound, match="no template pack nope"):
        graph.install_pack(conn, uuid.uuid4(), "nope")
    with pytest.raises(PackNotFound, match=r"agent-memory 9\.9\.9"):
        graph.install_pack(conn, uuid.uuid4(), "agent-memory", "9.9.9")


def test_publishing_a_version_twice_fails(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(InvalidInput, match="already published"):
        graph.publish_pack(conn, graph.load_pack_file(PACK_FILE))


def test_a_pack_redefining_an_installed_type_is_refused(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    rival = published_pack() | {"name": "rival-memory"}
    graph.publish_pack(conn, graph.PackDefinition.model_validate(rival))
    with pytest.raises(InvalidInput, match="already defined by the installed pack agent-memory"):
        graph.install_pack(conn, project_id, "rival-memory")


@pytest.mark.parametrize(
    ("type_name", "properties", "error", "message"),
    [
        ("Memo", memory(), UnknownType, "unknown object type 'Memo'.*Memory, MemoryContext"),
        ("Memory", {"category": "fact"}, PropertyValidationError, "missing required .*'content'"),
        ("Memory", {"content": "x"}, PropertyValidationError, "missing required .*'category'"),
        (
            "Memory",
            memory() | {"confidence": "high"},
            PropertyValidationError,
            "'confidence' must be of JSON type number, got string",
        ),
        (
            "Memory",
            memory() | {"use_count": 1.5},
            PropertyValidationError,
            "'use_count' must be of JSON type integer, got number",
        ),
        (
            "Memory",
            memory() | {"content": 42},
            PropertyValidationError,
            "'content' must be of JSON type string, got number",
        ),
        (
            "Memory",
            memory(category="colour"),
            PropertyValidationError,
            "'category' must be one of preference, .*convention, got 'colour'",
        ),
        (
            "Memory",
            memory() | {"confidence": 1.5},
            PropertyValidationError,
            "'confidence': 1.5 is greater than the maximum of 1",
        ),
        (
            "Memory",
            memory() | {"superseded_by": "not-a-uuid"},
            PropertyValidationError,
            "'superseded_by': 'not-a-uuid' is not a 'uuid'",
        ),
        (
            "Memory",
            memory() | {"last_used": "yesterday"},
            PropertyValidationError,
            "'last_used': 'yesterday' is not a 'date-time'",
        ),
    ],
)
def test_invalid_objects_are_refused_and_nothing_is_written(
    conn: psycopg.Connection[Any],
    project_id: uuid.UUID,
    type_name: str,
    properties: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        graph.create_object(conn, project_id=project_id, type=type_name, properties=properties)
    assert count_rows(conn, "graph_objects", project_id) == 0


def test_every_problem_is_reported_at_once(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    with pytest.raises(PropertyValidationError) as raised:
        graph.create_object(
            conn,
            project_id=project_id,
            type="Memory",
            properties={"category": "colour", "confidence": "high"},
        )
    assert len(raised.value.problems) == 3


def test_an_invalid_update_is_refused_and_writes_no_version(
    conn: psycopg.Connection[Any], project_id: uuid.UUID
) -> None:
    created = graph.create_object(conn, project_id=project_id, type="Memory", properties=memory())
    with pytest.raises(PropertyValidationError, match="'category' must be one of"):
        graph.update_object(conn, created.canonical_id, properties={"category": "colour"})
    with pytest.raises(PropertyValidationError, match="missing required property 'content'"):
        graph.update_object(conn, created.canonical_id, properties={"content": None})
    assert graph.list_versions(conn, created.canonical_id) == [created]


def test_objects_need_the_pack_installed_in_their_project(conn: psycopg.Connection[Any]) -> None:
    project = uuid.uuid4()
    with pytest.raises(UnknownType, match="no template pack is installed in this project"):
        graph.create_object(conn, project_id=project, type="Memory", properties=memory())
    assert count_rows(conn, "graph_objects", project) == 0
