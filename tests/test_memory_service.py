"""The memory service's mechanics: save, dedup, recall, manage, contexts, errors.

These use the deterministic bag-of-words embedder; meaning is tested with the real model in
test_memory_semantics.py.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.db import migrate
from emergent_memory.db.pool import create_pool
from emergent_memory.errors import (
    InvalidInput,
    MemoryNotFound,
    PermissionDenied,
    SecretRejected,
)
from emergent_memory.memory import MemoryConfig, MemoryService, store
from emergent_memory.memory.maintenance import MaintenanceService
from emergent_memory.memory.models import CATEGORIES
from tests import helpers
from tests.embedders import BagOfWordsEmbedder, DownEmbedder

MakeService = Callable[..., MemoryService]


def rows_of(pool: ConnectionPool, actor: Principal, table: str = "graph_objects") -> int:
    """Every row an actor ever wrote (all versions), to prove that nothing was written."""
    queries = {
        "graph_objects": "SELECT count(*) FROM kb.graph_objects WHERE actor_id = %s",
        "graph_relationships": "SELECT count(*) FROM kb.graph_relationships WHERE actor_id = %s",
    }
    with pool.connection() as conn:
        row = conn.execute(queries[table], (actor.actor_id,)).fetchone()
    assert row is not None
    return int(row[0])


def head(pool: ConnectionPool, memory_id: str) -> dict[str, Any]:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT version, properties, labels, scope, embedding_model FROM kb.graph_objects "
            "WHERE canonical_id = %s AND is_head",
            (memory_id,),
        ).fetchone()
    assert row is not None
    return {
        "version": row[0],
        "properties": row[1],
        "labels": row[2],
        "scope": row[3],
        "model": row[4],
    }


def recalled_ids(service: MemoryService, principal: Principal, query: str, **kw: Any) -> list[str]:
    return [m["id"] for m in service.recall(principal, query, **kw)["memories"]]


# -- save ---------------------------------------------------------------------------------


def test_save_creates_a_memory_with_labels_and_confidence_from_its_source(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    result = service.save(
        principal, "  The user prefers pnpm over npm  ", "preference", source="explicit"
    )
    assert result["status"] == "created"
    assert result["superseded_ids"] == []
    assert result["degraded"] is False
    memory = result["memory"]
    assert memory["content"] == "The user prefers pnpm over npm"
    assert (memory["category"], memory["scope"], memory["source"]) == (
        "preference",
        "user",
        "explicit",
    )
    assert memory["confidence"] == 1.0
    assert memory["contexts"] == []
    assert memory["use_count"] == 0
    stored = head(owner_pool, memory["id"])
    assert stored["labels"] == ["memory", "preference", "user"]
    assert stored["model"] == "test/bag-of-words"
    assert stored["version"] == 1


@pytest.mark.parametrize(("source", "confidence"), [("inferred", 0.7), ("corrected", 0.9)])
def test_confidence_by_source(
    service: MemoryService, principal: Principal, source: str, confidence: float
) -> None:
    saved = service.save(principal, "Tests run with pytest", "fact", source=source)
    assert saved["memory"]["confidence"] == confidence


def test_an_exact_duplicate_is_not_stored_twice_but_reinforced(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    first = service.save(principal, "The user prefers tabs", "preference")
    assert first["memory"]["confidence"] == 0.7
    again = service.save(principal, "the user   PREFERS tabs ", "preference", source="explicit")
    assert again["status"] == "unchanged"
    assert again["memory"]["id"] == first["memory"]["id"]
    assert again["memory"]["confidence"] == 1.0
    assert again["similarity"] == 1.0
    assert again["possible_duplicates"] == []
    weaker = service.save(principal, "The user prefers tabs", "preference", source="inferred")
    assert weaker["memory"]["confidence"] == 1.0  # never lowered
    assert len(service.list_memories(principal)["memories"]) == 1
    assert (
        head(owner_pool, first["memory"]["id"])["version"] == 2
    )  # one reinforcement, no new object


def test_a_near_duplicate_supersedes_the_old_memory_which_stays_as_history(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old = service.save(principal, "Deploys to production happen on Fridays", "fact", context="ops")
    new = service.save(principal, "Production deploys happen on Fridays", "fact")
    assert new["status"] == "updated"
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert new["similarity"] is not None
    assert new["similarity"] >= 0.8
    assert new["memory"]["id"] != old["memory"]["id"]
    assert new["memory"]["contexts"] == ["ops"]  # filed where the old fact was
    assert new["possible_duplicates"] == []

    old_head = head(owner_pool, old["memory"]["id"])
    assert old_head["properties"]["superseded_by"] == new["memory"]["id"]
    listed = [m["id"] for m in service.list_memories(principal)["memories"]]
    assert listed == [new["memory"]["id"]]
    assert recalled_ids(service, principal, "deploys Fridays") == [new["memory"]["id"]]
    with owner_pool.connection() as conn:
        lineage = conn.execute(
            "SELECT depth, id::text FROM kb.memory_lineage(%s)", (new["memory"]["id"],)
        ).fetchall()
        edges = conn.execute(
            "SELECT count(*) FROM kb.memory_supersessions WHERE new_id = %s AND old_id = %s",
            (new["memory"]["id"], old["memory"]["id"]),
        ).fetchone()
    assert lineage == [(0, new["memory"]["id"]), (1, old["memory"]["id"])]
    assert edges == (1,)


def test_a_similar_memory_the_rule_does_not_supersede_is_a_possible_duplicate(
    make_service: MakeService, principal: Principal
) -> None:
    service = make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)
    old = service.save(principal, "Deploys to production happen on Fridays", "fact")
    new = service.save(principal, "Deploys to production happen on Thursdays", "fact")
    assert new["status"] == "created"
    assert new["superseded_ids"] == []
    assert new["similarity"] is not None
    assert 0.6 <= new["similarity"] < 0.9
    assert new["possible_duplicates"] == [
        {
            "id": old["memory"]["id"],
            "content": "Deploys to production happen on Fridays",
            "similarity": new["similarity"],
            "why": "the same subject with another value, and neither says it changed",
            # another value of the same subject: linked as a conflict (CONFLICTS_WITH)
            "conflict": True,
        }
    ]
    assert len(service.list_memories(principal)["memories"]) == 2  # both stay active


def test_in_the_band_a_memory_that_says_it_changed_supersedes(
    make_service: MakeService, principal: Principal
) -> None:
    service = make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)
    old = service.save(principal, "Deploys to production happen on Fridays", "fact")
    new = service.save(principal, "Deploys to production now happen on Thursdays", "fact")
    assert new["similarity"] is not None
    assert new["similarity"] < 0.9
    assert new["status"] == "updated"
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert new["possible_duplicates"] == []


def test_possible_duplicates_come_only_from_memories_the_caller_can_see(
    make_service: MakeService, principal: Principal
) -> None:
    service = make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)
    neighbour = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    service.save(neighbour, "Deploys to production happen on Fridays", "fact")
    service.save(neighbour, "Deploys to production happen on Fridays", "fact", scope="project")
    mine = service.save(principal, "Deploys to production happen on Thursdays", "fact")
    assert mine["possible_duplicates"] == []
    assert mine["similarity"] is None  # nothing of its scope is visible to this actor
    project = service.save(
        principal, "Deploys to production happen on Thursdays", "fact", scope="project"
    )
    assert project["possible_duplicates"] == []


def test_a_different_fact_is_created_alongside(
    service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The API server listens on port 8080", "fact")
    other = service.save(principal, "Postgres runs in a container named db", "fact")
    assert other["status"] == "created"
    assert len(service.list_memories(principal)["memories"]) == 2


def test_dedup_only_looks_within_the_same_scope(
    service: MemoryService, principal: Principal
) -> None:
    user = service.save(principal, "Use ruff for linting", "convention", scope="user")
    project = service.save(principal, "Use ruff for linting", "convention", scope="project")
    assert project["status"] == "created"
    assert project["memory"]["id"] != user["memory"]["id"]


def test_contexts_are_created_on_first_use_and_reused_per_actor(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    first = service.save(principal, "Components live in src/ui", "convention", context="Frontend")
    second = service.save(principal, "Styles use Tailwind", "convention", context="frontend")
    assert first["memory"]["contexts"] == ["Frontend"]
    assert second["memory"]["contexts"] == ["Frontend"]  # the same context, found by name
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    theirs = service.save(other, "Pages live in app/", "convention", context="frontend")
    assert theirs["memory"]["contexts"] == ["frontend"]
    with owner_pool.connection() as conn:
        contexts = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE type = 'MemoryContext' "
            "AND actor_id = ANY(%s)",
            ([principal.actor_id, other.actor_id],),
        ).fetchone()
    assert contexts == (2,)


def test_related_to_links_existing_objects_of_the_project(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    target = service.save(principal, "Release notes go in CHANGELOG.md", "convention")
    linked = service.save(
        principal,
        "Every PR updates the changelog",
        "instruction",
        related_to=[target["memory"]["id"]],
    )
    with owner_pool.connection() as conn:
        edge = conn.execute(
            "SELECT type FROM kb.graph_relationships WHERE src_id = %s AND dst_id = %s",
            (linked["memory"]["id"], target["memory"]["id"]),
        ).fetchall()
    assert edge == [("RELEVANT_TO",)]


@pytest.mark.parametrize("where", ["nowhere", "other project", "other actor"])
def test_related_to_must_name_visible_objects_of_the_project(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool, where: str
) -> None:
    if where == "nowhere":
        target = str(uuid.uuid4())
    else:
        owner = Principal(
            actor_id=principal.actor_id if where == "other project" else uuid.uuid4(),
            project_id=uuid.uuid4() if where == "other project" else principal.project_id,
        )
        scope = "project"
        target = service.save(owner, "Something private", "fact", scope=scope)["memory"]["id"]
    before = rows_of(owner_pool, principal)
    with pytest.raises(InvalidInput, match=f"related_to: no object with id {target} in this"):
        service.save(principal, "A memory with a bad link", "fact", related_to=[target])
    assert rows_of(owner_pool, principal) == before


CONTENT_LIMIT = 2000


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"content": ""}, "content is empty"),
        ({"content": "  \n\t "}, "content is empty"),
        ({"content": "x" * (CONTENT_LIMIT + 1)}, "content is 2001 characters long; the limit"),
        ({"content": "nul \x00 byte"}, "NUL character"),
        ({"content": "bell \x07 here"}, "control character U\\+0007"),
        ({"content": 42}, "content must be a string, got a number"),
        ({"content": None}, "content must be a string, got null"),
        ({"category": "colour"}, "category must be one of preference, .*; got 'colour'"),
        ({"category": None}, "category must be one of"),
        ({"source": "rumour"}, "source must be one of explicit, inferred, corrected"),
        ({"scope": "team"}, "scope must be one of user, project, global; got 'team'"),
        ({"context": "   "}, "context must be a non-empty name"),
        ({"context": "x" * 201}, "context is 201 characters long; the limit is 200"),
        ({"context": "ops\x00"}, "context contains a NUL character"),
        # invisible characters that make text display as something else (issue 13)
        (
            {"content": "Deploy with make \u202eyalp\u202c now"},
            "content contains U\\+202E \\(RIGHT-TO-LEFT OVERRIDE\\), an invisible character",
        ),
        ({"content": "pass\u200bword rotation is monthly"}, "content contains U\\+200B"),
        ({"content": "\ufeffThe user prefers tabs"}, "content contains U\\+FEFF"),
        ({"content": "soft\u00adhyphen"}, "content contains U\\+00AD"),
        ({"content": "isolate \u2066x\u2069"}, "content contains U\\+2066"),
        ({"content": "hidden \U000e0041\U000e0042 text"}, "content contains U\\+E0041"),
        ({"context": "front\u202eend"}, "context contains U\\+202E"),
        ({"context": "front\nend"}, "context is a name on one line"),
        ({"context": "front\u2028end"}, "context is a name on one line"),
        ({"related_to": "abc"}, "related_to must be a list"),
        ({"related_to": ["not-a-uuid"]}, "related_to id 'not-a-uuid' is not a memory id"),
        ({"related_to": [str(uuid.uuid4()) for _ in range(21)]}, "21 ids; the limit is 20"),
    ],
)
def test_invalid_saves_are_refused_and_nothing_is_written(
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
    arguments: dict[str, Any],
    message: str,
) -> None:
    call: dict[str, Any] = {"content": "The user prefers tabs", "category": "preference"}
    with pytest.raises(InvalidInput, match=message):
        service.save(principal, **(call | arguments))
    assert rows_of(owner_pool, principal) == 0


@pytest.mark.parametrize(
    "content",
    [
        "The family emoji \U0001f468\u200d\U0001f469\u200d\U0001f467 is one glyph",  # ZWJ
        "The Persian plural \u0645\u06cc\u200c\u0634\u0648\u062f needs a ZWNJ",
        "Scotland's flag \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074"
        "\U000e007f uses tag characters",
        "Hebrew \u05e9\u05dc\u05d5\u05dd\u200f with a right-to-left mark",
    ],
    ids=["zwj-emoji", "zwnj-persian", "flag-tags", "rlm"],
)
def test_text_that_needs_joiners_and_marks_is_stored_as_sent(
    service: MemoryService, principal: Principal, content: str
) -> None:
    saved = service.save(principal, content, "fact")
    assert saved["memory"]["content"] == content


def test_recall_queries_and_updates_refuse_invisible_characters_too(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user prefers tabs", "preference")
    before = rows_of(owner_pool, principal)
    with pytest.raises(InvalidInput, match="query contains U\\+200B"):
        service.recall(principal, "tabs\u200b")
    with pytest.raises(InvalidInput, match="content contains U\\+202E"):
        service.update(principal, saved["memory"]["id"], {"content": "tabs \u202e"})
    assert rows_of(owner_pool, principal) == before


def test_the_content_limit_is_configurable(make_service: MakeService, principal: Principal) -> None:
    service = make_service(max_content_length=10)
    with pytest.raises(InvalidInput, match="the limit is 10"):
        service.save(principal, "eleven char", "fact")
    assert service.save(principal, "ten chars!", "fact")["status"] == "created"


def test_secrets_are_refused_and_nothing_is_written(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(SecretRejected, match="GitHub token") as raised:
        service.save(principal, f"The deploy token is {token}", "fact")
    assert token not in str(raised.value)
    assert rows_of(owner_pool, principal) == 0
    kept = service.save(principal, "The password policy requires 12 characters", "fact")
    assert kept["status"] == "created"
    with pytest.raises(SecretRejected):
        service.update(principal, kept["memory"]["id"], {"content": "password=hunter2xyz"})
    assert head(owner_pool, kept["memory"]["id"])["version"] == 1


@pytest.mark.usefixtures("global_memories_cleanup")
def test_only_administrators_save_global_memories(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    with pytest.raises(PermissionDenied, match="administrator"):
        service.save(principal, "Company style guide lives in the wiki", "fact", scope="global")
    assert rows_of(owner_pool, principal) == 0
    admin = Principal(principal.actor_id, principal.project_id, frozenset({READ, WRITE, ADMIN}))
    saved = service.save(admin, "Company style guide lives in the wiki", "fact", scope="global")
    assert saved["memory"]["scope"] == "global"


def test_a_read_only_principal_cannot_write(service: MemoryService, principal: Principal) -> None:
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied, match="memory:write"):
        service.save(reader, "Anything", "fact")
    with pytest.raises(PermissionDenied, match="memory:write"):
        service.forget_all(reader, confirm=True)
    assert service.recall(reader, "anything")["memories"] == []


# -- recall -------------------------------------------------------------------------------


def test_recall_returns_scores_and_records_use_without_new_versions(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The staging database is called stage_db", "fact")
    first = service.recall(principal, "staging database")
    assert first["degraded"] is False
    [memory] = first["memories"]
    assert memory["id"] == saved["memory"]["id"]
    assert memory["use_count"] == 1
    assert memory["last_used"] is not None
    scores = memory["scores"]
    assert scores["lexical_rank"] == 1
    assert scores["vector_rank"] == 1
    assert scores["similarity"] is not None
    assert 0 < scores["similarity"] <= 1
    assert memory["score"] == scores["score"] > 0
    second = service.recall(principal, "staging database")
    assert second["memories"][0]["use_count"] == 2
    assert head(owner_pool, saved["memory"]["id"])["version"] == 1
    listed = service.list_memories(principal)["memories"][0]
    assert listed["use_count"] == 2


def test_the_list_is_most_used_first_then_newest_with_global_memories_and_categories(
    service: MemoryService, principal: Principal, global_memories_cleanup: None
) -> None:
    from emergent_memory.auth.principal import ADMIN, READ, WRITE

    old = service.save(principal, "The build cache lives on the shared volume", "fact")
    new = service.save(principal, "Deploys go out on Tuesdays after the standup", "convention")
    used = service.save(principal, "The staging database is called stage_db", "fact")
    admin = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))
    shared = service.save(admin, "Every service logs in JSON lines", "convention", scope="global")
    other = Principal(uuid.uuid4(), principal.project_id)
    service.save(other, "Another user's fact about the build cache", "fact", scope="project")
    for _ in range(2):
        service.recall(principal, "staging database stage_db")
    service.recall(principal, "how do services log")

    def ids(**arguments: Any) -> list[str]:
        return [m["id"] for m in service.list_memories(principal, **arguments)["memories"]]

    expected = [used, shared, new, old]  # most used first, then the newest
    assert ids() == [memory["memory"]["id"] for memory in expected]
    assert ids(category="convention") == [shared["memory"]["id"], new["memory"]["id"]]
    assert ids(category="risk") == []  # none of it: known without walking a page
    assert ids(limit=1) == [used["memory"]["id"]]


def test_recall_filters_by_category_and_scope(service: MemoryService, principal: Principal) -> None:
    fact = service.save(principal, "Lint config is in pyproject", "fact", scope="project")
    rule = service.save(principal, "Always lint before commit", "instruction")
    assert recalled_ids(service, principal, "lint", category="fact") == [fact["memory"]["id"]]
    assert recalled_ids(service, principal, "lint", scope="user") == [rule["memory"]["id"]]
    assert set(recalled_ids(service, principal, "lint")) == {
        fact["memory"]["id"],
        rule["memory"]["id"],
    }


def test_recall_honours_the_limit(service: MemoryService, principal: Principal) -> None:
    for number in range(5):
        service.save(principal, f"Service number {number} uses gRPC port {9000 + number}", "fact")
    assert len(service.recall(principal, "service gRPC", limit=3)["memories"]) == 3


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "query is empty"),
        ({"query": 7}, "query must be a string"),
        ({"limit": 0}, "limit must be from 1 to 50; got 0"),
        ({"limit": -1}, "limit must be from 1 to 50"),
        ({"limit": 51}, "limit must be from 1 to 50; got 51"),
        ({"limit": "5"}, "limit must be a whole number"),
        ({"limit": True}, "limit must be a whole number"),
        ({"category": "misc"}, "category must be one of"),
        ({"scope": "everyone"}, "scope must be one of"),
    ],
)
def test_invalid_recalls_are_clear_errors(
    service: MemoryService, principal: Principal, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        service.recall(principal, **({"query": "anything"} | arguments))


# -- manage -------------------------------------------------------------------------------


def test_lifecycle_save_recall_update_delete(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The frontend uses React 18", "fact")
    memory_id = saved["memory"]["id"]
    assert recalled_ids(service, principal, "React") == [memory_id]

    updated = service.manage(
        principal, "update", memory_id=memory_id, updates={"content": "The frontend uses Svelte 5"}
    )
    assert updated["memory"]["id"] == memory_id  # type: ignore[typeddict-item]
    assert recalled_ids(service, principal, "Svelte") == [memory_id]
    assert recalled_ids(service, principal, "React") == []
    assert head(owner_pool, memory_id)["version"] == 2

    assert service.manage(principal, "delete", memory_id=memory_id) == {"deleted": memory_id}
    assert service.recall(principal, "Svelte")["memories"] == []
    assert service.list_memories(principal)["memories"] == []
    # its owner may know it was deleted: said so, with the way back
    with pytest.raises(InvalidInput, match=f"memory {memory_id} is already deleted; "):
        service.delete(principal, memory_id)
    with pytest.raises(InvalidInput, match=f"memory {memory_id} is deleted; restore it first"):
        service.update(principal, memory_id, {"category": "fact"})
    stranger = Principal(uuid.uuid4(), principal.project_id)  # to another actor: not found
    with pytest.raises(MemoryNotFound, match=f"memory {memory_id} not found"):
        service.update(stranger, memory_id, {"category": "fact"})


def test_update_changes_category_and_confidence(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "Prefer small pull requests", "preference")
    result = service.update(
        principal, saved["memory"]["id"], {"category": "convention", "confidence": 0.95}
    )
    assert (result["memory"]["category"], result["memory"]["confidence"]) == ("convention", 0.95)
    assert head(owner_pool, saved["memory"]["id"])["labels"] == ["memory", "convention", "user"]


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        ({}, "updates must be an object with at least one of"),
        ("content", "updates must be an object"),
        ({"scope": "global"}, "updates cannot change scope; only content, category, confidence"),
        ({"content": ""}, "content is empty"),
        ({"category": "misc"}, "category must be one of"),
        ({"confidence": 2}, "confidence must be a number from 0 to 1"),
        ({"confidence": "high"}, "confidence must be a number from 0 to 1"),
    ],
)
def test_invalid_updates_are_refused_and_write_nothing(
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
    updates: object,
    message: str,
) -> None:
    saved = service.save(principal, "Use conventional commits", "convention")
    with pytest.raises(InvalidInput, match=message):
        service.update(principal, saved["memory"]["id"], updates)
    assert head(owner_pool, saved["memory"]["id"])["version"] == 1


def test_manage_rejects_unknown_actions_and_bad_ids(
    service: MemoryService, principal: Principal
) -> None:
    with pytest.raises(
        InvalidInput, match="action must be one of list, delete, update, restore, forget_all"
    ):
        service.manage(principal, "purge")
    with pytest.raises(InvalidInput, match="memory_id is required"):
        service.manage(principal, "delete")
    with pytest.raises(InvalidInput, match="'abc' is not a memory id"):
        service.manage(principal, "delete", memory_id="abc")
    missing = str(uuid.uuid4())
    with pytest.raises(MemoryNotFound, match=f"memory {missing} not found"):
        service.manage(principal, "update", memory_id=missing, updates={"confidence": 1})


def test_a_superseded_memory_cannot_be_updated(
    service: MemoryService, principal: Principal
) -> None:
    old = service.save(principal, "The build uses webpack and babel", "fact")
    new = service.save(principal, "The build uses babel and webpack.", "fact")
    assert new["status"] == "updated"
    with pytest.raises(InvalidInput, match=f"superseded by {new['memory']['id']}"):
        service.update(principal, old["memory"]["id"], {"confidence": 1.0})


def test_forget_all_needs_confirmation_and_deletes_only_this_project(
    service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "Memory one about apples", "fact")
    service.save(principal, "Memory two about pears", "fact", scope="project")
    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    kept = service.save(elsewhere, "Memory three about plums", "fact", scope="project")
    for confirm in (False, None, "yes", 1):
        with pytest.raises(InvalidInput, match="confirm: true"):
            service.manage(principal, "forget_all", confirm=confirm)
    assert len(service.list_memories(principal)["memories"]) == 2
    assert service.manage(principal, "forget_all", confirm=True) == {"deleted_count": 2}
    assert service.list_memories(principal)["memories"] == []
    assert [m["id"] for m in service.list_memories(elsewhere)["memories"]] == [kept["memory"]["id"]]


def test_list_orders_by_use_then_newest_and_filters(
    service: MemoryService, principal: Principal
) -> None:
    older = service.save(principal, "Alpha service owns billing", "fact")
    newer = service.save(principal, "Beta service owns search", "fact")
    rule = service.save(principal, "Never force-push main", "instruction")
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [
        rule["memory"]["id"],
        newer["memory"]["id"],
        older["memory"]["id"],
    ]
    service.recall(principal, "billing")
    listed = service.list_memories(principal, category="fact")
    assert [m["id"] for m in listed["memories"]] == [older["memory"]["id"], newer["memory"]["id"]]
    assert listed["count"] == 2
    assert len(service.list_memories(principal, limit=1)["memories"]) == 1
    with pytest.raises(InvalidInput, match="limit must be from 1 to 100"):
        service.list_memories(principal, limit=101)


def test_list_is_planned_with_its_values_every_time(
    app_database_url: str, principal: Principal
) -> None:
    """psycopg prepares a statement run five times on a connection, and PostgreSQL may then
    switch to a generic plan that knows neither the principal nor the category: for the list
    it sorted every memory of the table (150 ms instead of 15 at 10,000 memories). So the
    list is never prepared."""
    with create_pool(app_database_url, min_size=1, max_size=1) as one:
        service = MemoryService(one, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8))
        service.save(principal, "Alpha service owns billing", "fact")
        for _ in range(8):
            assert service.list_memories(principal)["count"] == 1
        with one.connection() as conn:
            prepared = conn.execute(
                "SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s",
                ("%WITH page AS%",),
            ).fetchall()
    assert prepared == []


def test_only_the_recall_log_commits_without_waiting_for_the_disk(
    app_connect: Callable[[], psycopg.Connection[Any]], principal: Principal
) -> None:
    """Recording uses turns synchronous_commit off for its own transaction, never for the
    connection (the next transaction, a save say, commits durably)."""
    with app_connect() as conn:
        with conn.transaction():
            graph.act_as(conn, principal.actor_id, principal.project_id)
            store.record_recalls(conn, principal, [uuid.uuid4()])
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)


# -- scoping ------------------------------------------------------------------------------


@pytest.mark.usefixtures("global_memories_cleanup")
def test_scoping_matrix(service: MemoryService) -> None:
    """Users A and B, projects P and Q, scopes user / project / global (DESIGN.md 5)."""
    a, b, p, q = (uuid.uuid4() for _ in range(4))
    admin = frozenset({READ, WRITE, ADMIN})
    saved = {
        "a-user": service.save(Principal(a, p), "zebra user memory of A", "fact", scope="user"),
        "a-proj-p": service.save(
            Principal(a, p), "zebra project memory of A in P", "fact", scope="project"
        ),
        "b-user": service.save(Principal(b, q), "zebra user memory of B", "fact", scope="user"),
        "b-proj-p": service.save(
            Principal(b, p), "zebra project memory of B in P", "fact", scope="project"
        ),
        "global": service.save(
            Principal(b, q, admin), "zebra global memory", "fact", scope="global"
        ),
    }
    ids = {name: result["memory"]["id"] for name, result in saved.items()}
    expected = {
        (a, p): {"a-user", "a-proj-p", "global"},
        (a, q): {"a-user", "global"},
        (b, p): {"b-user", "b-proj-p", "global"},
        (b, q): {"b-user", "global"},
    }
    for (actor, project), names in expected.items():
        viewer = Principal(actor, project)
        want = {ids[name] for name in names}
        assert set(recalled_ids(service, viewer, "zebra memory", limit=50)) == want
        listed = service.list_memories(viewer, limit=100)["memories"]
        assert {m["id"] for m in listed} == want
        for name, memory_id in ids.items():
            if name in names:
                continue
            # someone else's memory answers exactly like one that does not exist
            with pytest.raises(MemoryNotFound, match=f"^memory {memory_id} not found$"):
                service.update(viewer, memory_id, {"confidence": 0.1})
            with pytest.raises(MemoryNotFound, match=f"^memory {memory_id} not found$"):
                service.delete(viewer, memory_id)
    # a global memory is visible, but only an administrator changes it
    with pytest.raises(PermissionDenied):
        service.delete(Principal(a, p), ids["global"])
    assert service.delete(Principal(a, p, admin), ids["global"]) == {"deleted": ids["global"]}


# -- concurrency and failures -----------------------------------------------------------


def test_racing_near_duplicate_saves_leave_one_active_memory(
    make_service: MakeService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    service = make_service()
    start = threading.Barrier(10)
    results: list[str] = []
    errors: list[BaseException] = []

    def save(number: int) -> None:
        try:
            start.wait()
            # near-duplicates: the same words, not the same text ("02:00" / "03:00" would be
            # other facts)
            text = "The nightly backup job runs at 02:00 UTC every day" + "!" * number
            results.append(service.save(principal, text, "fact")["status"])
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(results) == ["created"] + ["updated"] * 9
    assert len(service.list_memories(principal)["memories"]) == 1
    with owner_pool.connection() as conn:
        superseded = conn.execute(
            "SELECT superseded FROM kb.memory_stats WHERE actor_id = %s", (principal.actor_id,)
        ).fetchone()
    assert superseded == (9,)


def test_saves_of_different_actors_do_not_serialize(
    service: MemoryService, owner_pool: ConnectionPool
) -> None:
    """A save holding its actor's lock does not block another actor's save."""
    first, second = Principal(uuid.uuid4(), uuid.uuid4()), Principal(uuid.uuid4(), uuid.uuid4())
    with owner_pool.connection() as blocker, blocker.transaction():
        blocker.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"memory-save:user:{first.actor_id}",),
        )
        saved = service.save(second, "Unblocked memory", "fact")  # would hang if serialized
        assert saved["status"] == "created"


@pytest.mark.parametrize("write", ["update", "reinforce", "restore", "supersede"])
def test_a_write_that_needs_the_save_lock_takes_it_before_the_memorys_own(
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
    database_url: str,
    write: str,
) -> None:
    """A save holds its scope's lock, then locks the memory it repeats or supersedes. A write
    that checks new text for a twin needs both locks and takes them in that order: while a
    save holds the scope's lock, the write waits without holding the memory, the save gets
    the memory's lock (no deadlock, which would fail one of the two), and the write then
    completes. (Found by test_load: an update holding its memory, waiting for the save lock,
    and a save repeating that memory's text.)"""
    memory = service.save(principal, "Deploys go out on Tuesdays", "convention")["memory"]["id"]
    other = service.save(principal, "The on-call rota lives in PagerDuty", "fact")["memory"]["id"]
    if write in ("reinforce", "restore"):  # the twin check applies to a memory coming back
        service.archive(principal, memory)
    calls: dict[str, Callable[[], Any]] = {
        "update": lambda: service.update(
            principal, memory, {"content": "Deploys go out on Wednesdays"}
        ),
        "reinforce": lambda: service.reinforce(principal, memory, "the release calendar"),
        "restore": lambda: service.restore(principal, memory),
        "supersede": lambda: service.supersede(
            principal, memory, other, content="Deploys go out on Tuesdays, paged via PagerDuty"
        ),
    }
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = calls[write]()
        except Exception as error:  # shown by the assertion below
            outcome["error"] = error

    writer = threading.Thread(target=run)
    with owner_pool.connection() as save, save.transaction():
        helpers.hold_advisory_lock(save, f"memory-save:user:{principal.actor_id}")
        writer.start()
        deadline = time.monotonic() + 60
        while writer.is_alive() and not helpers.lock_waiters(database_url, save.info.backend_pid):
            assert time.monotonic() < deadline, f"{write} never waited for the save lock"
            time.sleep(0.05)
        assert writer.is_alive(), f"{write} did not wait for the save lock: {outcome}"
        # what the save does next: lock the memory it repeats
        helpers.hold_advisory_lock(save, f"{graph.objects.TABLE}:{memory}")
    writer.join(60)
    assert not writer.is_alive()
    assert "error" not in outcome, outcome
    assert head(owner_pool, memory)["properties"].get("archived_at") is None


def test_with_the_embedder_down_saves_queue_a_job_and_recall_degrades(
    make_service: MakeService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    down = make_service(DownEmbedder())
    saved = down.save(principal, "The cache is Redis 7 on port 6380", "fact")
    assert saved["status"] == "created"
    assert saved["degraded"] is True
    assert saved["similarity"] is None
    with owner_pool.connection() as conn:
        job = conn.execute(
            "SELECT status FROM kb.graph_embedding_jobs WHERE canonical_id = %s",
            (saved["memory"]["id"],),
        ).fetchall()
    assert job == [("pending",)]
    assert head(owner_pool, saved["memory"]["id"])["model"] is None

    recalled = down.recall(principal, "Redis cache port")
    assert recalled["degraded"] is True
    assert [m["id"] for m in recalled["memories"]] == [saved["memory"]["id"]]
    assert recalled["memories"][0]["scores"]["vector_rank"] is None
    # exact duplicates are still caught without vectors
    assert down.save(principal, "The cache is Redis 7 on port 6380", "fact")["status"] == (
        "unchanged"
    )


def test_reembed_moves_every_memory_to_the_new_model(
    make_service: MakeService,
    principal: Principal,
    pool: ConnectionPool,
    owner_pool: ConnectionPool,
) -> None:
    old = make_service(BagOfWordsEmbedder("test/old-model"))
    first = old.save(principal, "Kafka topics are named after domains", "convention")
    down = make_service(DownEmbedder())
    second = down.save(principal, "Logs are shipped to Loki", "fact")
    new = make_service(BagOfWordsEmbedder("test/new-model"))
    # before: the new model finds the memories by full text only, never by foreign vectors
    before = new.recall(principal, "Kafka topics")["memories"]
    assert [m["scores"]["vector_rank"] for m in before] == [None]

    with pytest.raises(PermissionDenied, match="row-level security"):
        # the application role sees only a principal's rows: maintenance refused
        MaintenanceService(pool, BagOfWordsEmbedder("test/new-model")).reembed()
    maintenance = MaintenanceService(owner_pool, BagOfWordsEmbedder("test/new-model"))
    result = maintenance.reembed(batch_size=1)
    assert result["model"] == "test/new-model"
    assert result["reembedded"] >= 2
    assert result["remaining"] == 0
    assert head(owner_pool, first["memory"]["id"])["model"] == "test/new-model"
    assert head(owner_pool, second["memory"]["id"])["model"] == "test/new-model"
    after = new.recall(principal, "Kafka topics")["memories"]
    assert after[0]["id"] == first["memory"]["id"]
    assert after[0]["scores"]["vector_rank"] == 1
    assert head(owner_pool, first["memory"]["id"])["version"] == 1  # vectors are not versions


def test_results_are_plain_json(service: MemoryService, principal: Principal) -> None:
    import json

    saved = service.save(principal, "JSON all the way down", "fact")
    recalled = service.recall(principal, "JSON")
    listed = service.manage(principal, "list")
    for result in (saved, recalled, listed):
        assert json.loads(json.dumps(result)) == result


def test_store_connection_is_never_left_in_a_transaction(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    with pytest.raises(InvalidInput):
        service.save(principal, "x", "nope")
    service.save(principal, "Pool hygiene", "fact")
    with pool.connection() as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_failed_first_save_does_not_break_the_project(
    service: MemoryService, principal: Principal
) -> None:
    with pytest.raises(InvalidInput, match="related_to"):
        service.save(
            principal, "First memory, badly linked", "fact", related_to=[str(uuid.uuid4())]
        )
    assert service.save(principal, "Second memory", "fact")["status"] == "created"


def test_words_of_the_metadata_do_not_match(service: MemoryService, principal: Principal) -> None:
    service.save(principal, "Deploys happen on Fridays", "fact", source="explicit")
    for word in ("fact", "explicit", "user", "memory"):
        ranks = [m["scores"]["lexical_rank"] for m in service.recall(principal, word)["memories"]]
        assert ranks == [None] * len(ranks), word


def test_racing_saves_with_a_new_context_name_share_one_context(
    make_service: MakeService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    service = make_service()
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def save(number: int) -> None:
        try:
            start.wait()
            scope = "user" if number % 2 else "project"
            service.save(
                principal,
                f"Fact {number} about the dashboards",
                "fact",
                scope=scope,
                context="Dashboards",
            )
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with owner_pool.connection() as conn:
        contexts = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE type = 'MemoryContext' "
            "AND actor_id = %s AND is_head",
            (principal.actor_id,),
        ).fetchone()
    assert contexts == (1,)


def test_reembed_finishes_the_queued_jobs(
    make_service: MakeService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = make_service(DownEmbedder()).save(principal, "Queued while the model was down", "fact")
    MaintenanceService(owner_pool, BagOfWordsEmbedder()).reembed()
    with owner_pool.connection() as conn:
        jobs = conn.execute(
            "SELECT status FROM kb.graph_embedding_jobs WHERE canonical_id = %s",
            (saved["memory"]["id"],),
        ).fetchall()
    assert jobs == [("done",)]


# -- update never leaves two identical memories; restore ---------------------------------------


def test_updating_to_the_exact_text_of_another_memory_is_refused_naming_it(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    kept = service.save(principal, "The staging cluster runs in eu-west-1", "fact")
    other = service.save(principal, "Grafana dashboards live in the ops folder", "fact")
    before = head(owner_pool, other["memory"]["id"])
    for text in (
        "The staging cluster runs in eu-west-1",
        "  the STAGING cluster runs in eu-west-1 ",
    ):
        with pytest.raises(InvalidInput, match=f"memory {kept['memory']['id']} already says"):
            service.update(principal, other["memory"]["id"], {"content": text})
    assert head(owner_pool, other["memory"]["id"]) == before  # nothing written
    # its own text (a no-op) and another actor's identical memory are no twins
    stranger = Principal(uuid.uuid4(), principal.project_id)
    service.save(stranger, "Grafana dashboards live in the team folder", "fact")
    same = service.update(
        principal, other["memory"]["id"], {"content": "Grafana dashboards live in the ops folder"}
    )
    assert same["memory"]["content"] == "Grafana dashboards live in the ops folder"
    moved = service.update(
        principal, other["memory"]["id"], {"content": "Grafana dashboards live in the team folder"}
    )
    assert moved["memory"]["content"] == "Grafana dashboards live in the team folder"


def test_an_update_reports_close_memories_and_supersedes_none(
    make_service: MakeService, principal: Principal
) -> None:
    service = make_service(dedup_threshold=0.8, dedup_text_rule_from=0.6)
    near = service.save(principal, "Deploys to production happen on Fridays at noon", "fact")
    edited = service.save(principal, "Lunch is served in the canteen", "fact")
    result = service.update(
        principal,
        edited["memory"]["id"],
        {"content": "Deploys to production happen on Fridays at noon sharp"},
    )
    assert [d["id"] for d in result["possible_duplicates"]] == [near["memory"]["id"]]
    assert result["possible_duplicates"][0]["why"] == "an edit made it close to the other"
    assert {m["id"] for m in service.list_memories(principal)["memories"]} == {
        near["memory"]["id"],
        edited["memory"]["id"],
    }
    unrelated = service.update(principal, edited["memory"]["id"], {"confidence": 0.5})
    assert unrelated["possible_duplicates"] == []


def test_restore_brings_back_a_superseded_memory_and_keeps_the_broken_link_as_history(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old = service.save(principal, "The user keeps a cat named Miso", "fact", context="home")
    new = service.save(principal, "The user keeps a cat named Miso now", "fact")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]

    superseded = service.list_memories(principal, status="superseded")["memories"]
    assert [(m["id"], m["status"], m["superseded_by"]) for m in superseded] == [
        (old_id, "superseded", new_id)
    ]
    version_before = head(owner_pool, old_id)["version"]

    restored = service.manage(principal, "restore", memory_id=old_id)
    assert restored["restored_from"] == "superseded"
    assert restored["broken_supersession"] == new_id
    assert restored["memory"]["id"] == old_id
    assert restored["memory"]["contexts"] == ["home"]
    assert head(owner_pool, old_id)["version"] == version_before + 1  # a new version
    assert "superseded_by" not in head(owner_pool, old_id)["properties"]
    assert {m["id"] for m in service.list_memories(principal)["memories"]} == {old_id, new_id}
    assert old_id in recalled_ids(service, principal, "cat named Miso")
    assert service.list_memories(principal, status="superseded")["memories"] == []
    with owner_pool.connection() as conn:
        edges = conn.execute(
            "SELECT version, deleted_at IS NOT NULL, delete_reason FROM kb.graph_relationships "
            "WHERE src_id = %s AND dst_id = %s AND type = 'SUPERSEDES' ORDER BY version",
            (new_id, old_id),
        ).fetchall()
        lineage = conn.execute("SELECT id::text FROM kb.memory_lineage(%s)", (new_id,)).fetchall()
    assert [(version, deleted) for version, deleted, _ in edges] == [(1, False), (2, True)]
    assert edges[1][2] == f"restored: {old_id} is no longer superseded by {new_id}"
    assert lineage == [(new_id,)]
    with pytest.raises(InvalidInput, match=f"memory {old_id} is active; there is nothing"):
        service.restore(principal, old_id)


def test_restore_brings_back_a_deleted_memory_with_its_vector(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user's dentist is Dr. Okafor in Leeds", "fact")
    memory_id = saved["memory"]["id"]
    service.delete(principal, memory_id)
    deleted = service.list_memories(principal, status="deleted")["memories"]
    assert [(m["id"], m["status"]) for m in deleted] == [(memory_id, "deleted")]
    assert deleted[0]["deleted_at"] is not None
    restored = service.restore(principal, memory_id)
    assert restored["restored_from"] == "deleted"
    assert restored["broken_supersession"] is None
    assert head(owner_pool, memory_id)["model"] is not None  # searchable by meaning at once
    assert recalled_ids(service, principal, "dentist in Leeds") == [memory_id]
    assert service.list_memories(principal, status="deleted")["memories"] == []


def test_restore_of_a_deleted_superseded_memory_undoes_both_in_one_version(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old = service.save(principal, "The release train leaves every second Tuesday", "fact")
    new = service.save(principal, "The release train now leaves every second Tuesday", "fact")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    service.delete(principal, old["memory"]["id"])
    version = head(owner_pool, old["memory"]["id"])["version"]
    restored = service.restore(principal, old["memory"]["id"])
    assert restored["restored_from"] == "superseded and deleted"
    assert head(owner_pool, old["memory"]["id"])["version"] == version + 1


def test_restore_refuses_to_make_a_twin_of_an_active_memory(
    service: MemoryService, principal: Principal
) -> None:
    first = service.save(principal, "Backups are kept for 35 days", "fact")
    service.delete(principal, first["memory"]["id"])
    again = service.save(principal, "Backups are kept for 35 days", "fact")
    assert again["status"] == "created"
    with pytest.raises(InvalidInput, match=f"memory {again['memory']['id']} already says"):
        service.restore(principal, first["memory"]["id"])
    assert len(service.list_memories(principal)["memories"]) == 1


def test_restore_answers_for_others_memories_exactly_like_missing_ones(
    service: MemoryService, principal: Principal, global_memories_cleanup: None
) -> None:
    stranger = Principal(uuid.uuid4(), principal.project_id)
    theirs = service.save(stranger, "Their private note about the offsite", "fact")
    service.delete(stranger, theirs["memory"]["id"])
    missing = str(uuid.uuid4())
    for memory_id in (theirs["memory"]["id"], missing):
        with pytest.raises(MemoryNotFound, match=f"^memory {memory_id} not found$"):
            service.restore(principal, memory_id)
    admin = Principal(uuid.uuid4(), principal.project_id, frozenset({READ, WRITE, ADMIN}))
    shared = service.save(
        admin, "Every repository has a CODEOWNERS file", "convention", scope="global"
    )
    service.delete(admin, shared["memory"]["id"])
    with pytest.raises(PermissionDenied, match="only an administrator"):
        service.restore(principal, shared["memory"]["id"])
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied, match="needs memory:write"):
        service.restore(reader, missing)
    assert service.restore(admin, shared["memory"]["id"])["restored_from"] == "deleted"


def test_list_status_is_checked_and_only_for_list(
    service: MemoryService, principal: Principal
) -> None:
    with pytest.raises(
        InvalidInput, match="status must be one of active, superseded, deleted, archived"
    ):
        service.manage(principal, "list", status="retired")
    with pytest.raises(InvalidInput, match="status is a filter of list; delete does not take it"):
        service.manage(principal, "delete", memory_id=str(uuid.uuid4()), status="deleted")


def test_forget_all_counts_and_deletes_active_memories_only(
    service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The office wifi network is called Orchard", "fact")
    old = service.save(principal, "The coffee machine is on the second floor", "fact")
    new = service.save(principal, "The coffee machine is now on the second floor", "fact")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    service.save(principal, "Parking is free after 6pm", "fact")
    stats = service.stats(principal)
    assert (stats["active"], stats["superseded"], stats["deleted"]) == (3, 1, 0)
    assert service.forget_all(principal, confirm=True) == {"deleted_count": 3}
    stats = service.stats(principal)
    assert (stats["active"], stats["superseded"], stats["deleted"]) == (0, 1, 3)
    superseded = service.list_memories(principal, status="superseded")["memories"]
    assert [m["id"] for m in superseded] == [old["memory"]["id"]]


def test_stats_count_each_category_in_the_order_of_the_vocabulary(
    service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The user prefers tabs over spaces", "preference")
    service.save(principal, "Commit messages follow conventional commits", "convention")
    service.save(principal, "Branch names start with the ticket number", "convention")
    stats = service.stats(principal)
    [project] = stats["projects"]
    assert project == {
        "project_id": str(principal.project_id),
        "active": 3,
        "superseded": 0,
        "deleted": 0,
        "archived": 0,
        "by_category": {
            "preference": 1,
            "pattern": 0,
            "correction": 0,
            "fact": 0,
            "instruction": 0,
            "convention": 2,
            "decision": 0,
            "lesson": 0,
            "risk": 0,
        },
    }
    assert list(project["by_category"]) == list(CATEGORIES)


def test_a_global_supersession_is_undone_only_by_the_administrator_who_made_it(
    service: MemoryService, principal: Principal, global_memories_cleanup: None
) -> None:
    first = Principal(uuid.uuid4(), principal.project_id, frozenset({READ, WRITE, ADMIN}))
    second = Principal(uuid.uuid4(), principal.project_id, frozenset({READ, WRITE, ADMIN}))
    old = service.save(
        first, "Every repository has a CODEOWNERS file", "convention", scope="global"
    )
    new = service.save(
        second, "Every repository has a CODEOWNERS file!", "convention", scope="global"
    )
    assert new["superseded_ids"] == [old["memory"]["id"]]
    with pytest.raises(PermissionDenied, match="only that administrator's credential"):
        service.restore(first, old["memory"]["id"])
    restored = service.restore(second, old["memory"]["id"])
    assert restored["broken_supersession"] == new["memory"]["id"]


def test_reads_go_to_the_read_pool_and_recall_records_its_uses_on_the_primary(
    pool: ConnectionPool,
    app_database_url: str,
    make_database: Callable[[], str],
    principal: Principal,
) -> None:
    """recall's search and list read on the read pool (here read-only: a write there would
    fail), and recall's record of its uses goes to the primary; a read pool on another,
    empty database shows that the reads really go there."""
    separator = "&" if "?" in app_database_url else "?"
    read_only = app_database_url + separator + "options=-c%20default_transaction_read_only%3Don"
    with create_pool(read_only, min_size=1, max_size=2) as read_pool:
        service = MemoryService(
            pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8), read_pool=read_pool
        )
        assert service.read_pool is read_pool
        saved = service.save(principal, "The staging database is called bluebird", "fact")
        [listed] = service.list_memories(principal)["memories"]
        assert listed["id"] == saved["memory"]["id"]
        [found] = service.recall(principal, "staging database bluebird")["memories"]
        assert found["use_count"] == 1
        [listed] = service.list_memories(principal)["memories"]
        assert listed["use_count"] == 1  # recorded on the primary

    empty = make_database()
    migrate.upgrade(empty)
    with create_pool(empty, min_size=1, max_size=2) as elsewhere:
        service = MemoryService(
            pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8), read_pool=elsewhere
        )
        assert service.list_memories(principal)["memories"] == []
        assert service.recall(principal, "staging database bluebird")["memories"] == []
