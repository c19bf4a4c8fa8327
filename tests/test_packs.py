"""Template packs: the seeded agent-memory pack, installation, and property validation."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, get_args

import psycopg
import pytest

from emergent_memory import graph
from emergent_memory.errors import (
    InvalidInput,
    PackNotFound,
    PropertyValidationError,
    UnknownType,
)
from emergent_memory.memory.models import (
    CATEGORIES,
    SCOPES,
    SOURCES,
    Category,
    MemoryScope,
    Source,
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
    assert (pack["name"], pack["version"]) == ("agent-memory", "1.3.0")
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
        "importance",
        "valid_from",
        "valid_until",
        "rationale",
        "archived_at",
        "archive_reason",
        "supersede_reason",
        "supersede_rule",
        "supersede_similarity",
    }
    assert memory_type["properties"]["importance"]["enum"] == ["low", "normal", "high", "core"]
    assert memory_type["required"] == ["content", "category"]
    assert memory_type["properties"]["category"]["enum"] == [
        "preference",
        "pattern",
        "correction",
        "fact",
        "instruction",
        "convention",
        "decision",
        "lesson",
        "risk",
    ]
    assert all(p.get("description") for p in memory_type["properties"].values())
    assert {"description", "priority"} <= set(
        pack["object_type_schemas"]["MemoryContext"]["properties"]
    )
    relationships = pack["relationship_type_schemas"]
    assert set(relationships) == {
        "BELONGS_TO_CONTEXT",
        "SUPERSEDES",
        "DERIVED_FROM",
        "RELEVANT_TO",
        "CONFLICTS_WITH",
    }
    assert relationships["CONFLICTS_WITH"]["targetTypes"] == ["Memory"]
    assert relationships["BELONGS_TO_CONTEXT"]["targetTypes"] == ["MemoryContext"]
    assert relationships["DERIVED_FROM"]["targetTypes"] == ["Memory", "Episode"]
    episode = pack["object_type_schemas"]["Episode"]
    assert set(episode["required"]) == {"session_id", "client", "first_turn", "last_turn", "digest"}
    assert all(p.get("description") for p in episode["properties"].values())
    assert "never extracted from documents" in pack["extraction_prompts"]["guidelines"]


@pytest.mark.parametrize(
    ("field", "literal", "words"),
    [
        ("category", Category, CATEGORIES),
        ("source", Source, SOURCES),
        ("scope", MemoryScope, SCOPES),
    ],
)
def test_the_code_speaks_the_vocabulary_of_the_pack(
    field: str, literal: Any, words: tuple[str, ...]
) -> None:
    # the pack's Memory type names the words; the tools, the CLI and the checks use models.py's
    enum = published_pack()["object_type_schemas"]["Memory"]["properties"][field]["enum"]
    assert list(get_args(literal)) == list(words) == enum


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
    assert first.version == "1.3.0"

    newer = published_pack() | {"version": "1.4.0"}
    graph.publish_pack(conn, graph.PackDefinition.model_validate(newer))
    upgraded = graph.install_pack(conn, project, "agent-memory")
    assert upgraded.version == "1.4.0"
    assert [p.version for p in graph.installed_packs(conn, project)] == ["1.4.0"]
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
            "'category' must be one of preference, .*risk, got 'colour'",
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


def notes_pack(name: str, version: str, *, author_required: bool) -> graph.PackDefinition:
    """A small pack: Notes (with an author from 2.0.0 on), Questions from 2.0.0, and ANSWERS
    edges (to a Note before 2.0.0, to a Question from 2.0.0)."""
    note = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "author": {"type": "string"}},
        "required": ["text", "author"] if author_required else ["text"],
    }
    types: dict[str, Any] = {"Note": note}
    answers = {"sourceTypes": ["Note"], "targetTypes": ["Note"]}
    if author_required:
        types["Question"] = {"type": "object", "properties": {"text": {"type": "string"}}}
        answers = {"sourceTypes": ["Note"], "targetTypes": ["Question"]}
    return graph.PackDefinition.model_validate(
        {
            "name": name,
            "version": version,
            "object_type_schemas": types,
            "relationship_type_schemas": {"ANSWERS": answers},
        }
    )


@pytest.fixture
def notes_versions(conn: psycopg.Connection[Any]) -> tuple[str, graph.TemplatePack]:
    """Version 1.0.0 and 2.0.0 of a notes pack (inside the rolled-back transaction)."""
    name = f"notes-{uuid.uuid4().hex[:8]}"
    graph.publish_pack(conn, notes_pack(name, "1.0.0", author_required=False))
    newer = graph.publish_pack(conn, notes_pack(name, "2.0.0", author_required=True))
    return name, newer


def installed_elsewhere(
    conn: psycopg.Connection[Any], project: uuid.UUID, name: str, pack: graph.TemplatePack
) -> None:
    """Install `pack` the way another process does: that process's install_pack runs this
    statement, and this process learns of it only from the database."""
    conn.execute(
        "UPDATE kb.project_template_packs SET template_pack_id = %s, updated_at = now() "
        "WHERE project_id = %s AND pack_name = %s",
        (pack.id, project, name),
    )


def test_a_write_is_validated_against_a_pack_version_another_process_installed(
    conn: psycopg.Connection[Any], notes_versions: tuple[str, graph.TemplatePack]
) -> None:
    name, newer = notes_versions
    project = uuid.uuid4()
    graph.install_pack(conn, project, name, "1.0.0")
    first = graph.create_object(conn, project_id=project, type="Note", properties={"text": "a"})
    second = graph.create_object(conn, project_id=project, type="Note", properties={"text": "b"})
    # this process has read 1.0.0 for the project; 2.0.0 (author required) is installed now
    installed_elsewhere(conn, project, name, newer)
    with pytest.raises(PropertyValidationError, match="missing required property 'author'"):
        graph.create_object(conn, project_id=project, type="Note", properties={"text": "c"})
    assert count_rows(conn, "graph_objects", project) == 2  # nothing written

    graph.install_pack(conn, project, name, "1.0.0")
    graph.update_object(conn, first.canonical_id, properties={"text": "a2"})  # 1.0.0 read again
    installed_elsewhere(conn, project, name, newer)
    with pytest.raises(PropertyValidationError, match="missing required property 'author'"):
        graph.update_object(conn, first.canonical_id, properties={"text": "a3"})
    head = graph.get_head(conn, first.canonical_id)
    assert head is not None
    assert (head.version, head.properties) == (2, {"text": "a2"})  # the old head stays

    graph.install_pack(conn, project, name, "1.0.0")
    graph.create_relationship(
        conn,
        project_id=project,
        type="ANSWERS",
        src_id=first.canonical_id,
        dst_id=second.canonical_id,
    )
    installed_elsewhere(conn, project, name, newer)
    with pytest.raises(InvalidInput, match="cannot end at a Note"):
        graph.create_relationship(
            conn,
            project_id=project,
            type="ANSWERS",
            src_id=second.canonical_id,
            dst_id=first.canonical_id,
        )
    assert count_rows(conn, "graph_relationships", project) == 1


def test_a_type_another_process_installed_can_be_written_at_once(
    conn: psycopg.Connection[Any], notes_versions: tuple[str, graph.TemplatePack]
) -> None:
    name, newer = notes_versions
    project = uuid.uuid4()
    graph.install_pack(conn, project, name, "1.0.0")
    note = graph.create_object(
        conn, project_id=project, type="Note", properties={"text": "a", "author": "me"}
    )
    installed_elsewhere(conn, project, name, newer)
    question = graph.create_object(
        conn, project_id=project, type="Question", properties={"text": "why?"}
    )
    edge = graph.create_relationship(
        conn,
        project_id=project,
        type="ANSWERS",
        src_id=note.canonical_id,
        dst_id=question.canonical_id,
    )
    assert (edge.src_id, edge.dst_id) == (note.canonical_id, question.canonical_id)


def test_a_pack_edited_in_place_is_seen_by_the_next_write(
    conn: psycopg.Connection[Any], notes_versions: tuple[str, graph.TemplatePack]
) -> None:
    name, _ = notes_versions
    project = uuid.uuid4()
    installed = graph.install_pack(conn, project, name, "1.0.0")
    graph.create_object(conn, project_id=project, type="Note", properties={"text": "a"})
    conn.execute(
        "UPDATE kb.template_packs SET object_type_schemas = jsonb_set(object_type_schemas, "
        "'{Note,required}', '[\"text\", \"author\"]') WHERE id = %s",
        (installed.template_pack_id,),
    )
    with pytest.raises(PropertyValidationError, match="missing required property 'author'"):
        graph.create_object(conn, project_id=project, type="Note", properties={"text": "b"})


def test_each_project_is_validated_against_its_own_pack_version(
    conn: psycopg.Connection[Any], notes_versions: tuple[str, graph.TemplatePack]
) -> None:
    name, _ = notes_versions
    old, new = uuid.uuid4(), uuid.uuid4()
    graph.install_pack(conn, old, name, "1.0.0")
    graph.install_pack(conn, new, name, "2.0.0")
    for _ in range(2):  # each project's packs, once read, never serve the other
        graph.create_object(conn, project_id=old, type="Note", properties={"text": "a"})
        with pytest.raises(PropertyValidationError, match="missing required property 'author'"):
            graph.create_object(conn, project_id=new, type="Note", properties={"text": "a"})
        with pytest.raises(UnknownType, match="unknown object type 'Question'"):
            graph.create_object(conn, project_id=old, type="Question", properties={"text": "?"})
        graph.create_object(conn, project_id=new, type="Question", properties={"text": "?"})
    assert count_rows(conn, "graph_objects", old) == 2
    assert count_rows(conn, "graph_objects", new) == 2
