"""Sources' authority on the save path, and what a supersession keeps (memory/authority.py).

explicit > corrected > inferred: a memory from a weaker source never supersedes one from a
stronger source, nor changes it by an exact repeat; it is kept beside it and reported. A core
memory is changed only by an explicit one. A memory that supersedes another keeps the higher
importance, the stronger source, the higher confidence, the other's rationale (unless it gives
one), its contexts and its evidence.
"""

from __future__ import annotations

import random
import string
import uuid
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import MemoryService, authority
from emergent_memory.memory.models import CONFIDENCE_BY_SOURCE


@pytest.fixture
def texts() -> tuple[str, str]:
    """A fact and its rewording (which supersedes it under the test embedder), about a service
    no other test names, so that each test's pair is its own."""
    name = "".join(random.choices(string.ascii_lowercase, k=10))
    return (
        f"Deploys of the {name} service to production happen on Fridays",
        f"Production deploys of the {name} service happen on Fridays",
    )


def active_ids(service: MemoryService, principal: Principal) -> set[str]:
    return {m["id"] for m in service.list_memories(principal)["memories"]}


def evidence_of(pool: ConnectionPool, memory_id: str) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT evidence, origin, session_id FROM kb.memory_evidence "
            "WHERE canonical_id = %s ORDER BY created_at, id",
            (memory_id,),
        ).fetchall()


@pytest.mark.parametrize(
    ("held", "weaker"),
    [("explicit", "inferred"), ("explicit", "corrected"), ("corrected", "inferred")],
)
def test_a_weaker_source_is_kept_beside_a_stronger_one_and_reported(
    texts: tuple[str, str], service: MemoryService, principal: Principal, held: str, weaker: str
) -> None:
    old_text, reworded = texts
    old = service.save(principal, old_text, "fact", source=held)["memory"]
    new = service.save(principal, reworded, "fact", source=weaker)
    assert new["status"] == "created"
    assert new["superseded_ids"] == []
    assert active_ids(service, principal) == {old["id"], new["memory"]["id"]}
    [close] = new["possible_duplicates"]
    assert close["id"] == old["id"]
    assert close["kept_because"].startswith("kept beside it")
    assert close["why"] == close["kept_because"]  # authority's reason is the pair's
    assert weaker in close["kept_because"]
    assert held in close["kept_because"]
    # the pair waits on the duplicates page for a person to decide
    pending = service.list_memories(principal)["memories"]
    assert {m["source"] for m in pending} == {held, weaker}


@pytest.mark.parametrize(
    ("old_source", "new_source"),
    [
        ("inferred", "explicit"),
        ("inferred", "corrected"),
        ("corrected", "explicit"),
        ("explicit", "explicit"),
        ("inferred", "inferred"),
    ],
)
def test_an_equal_or_stronger_source_supersedes(
    texts: tuple[str, str],
    service: MemoryService,
    principal: Principal,
    old_source: str,
    new_source: str,
) -> None:
    old_text, reworded = texts
    old = service.save(principal, old_text, "fact", source=old_source)["memory"]
    new = service.save(principal, reworded, "fact", source=new_source)
    assert new["superseded_ids"] == [old["id"]]
    assert new["memory"]["source"] == new_source
    assert "kept_because" not in str(new["possible_duplicates"])


@pytest.mark.parametrize("source", ["inferred", "corrected"])
def test_only_an_explicit_memory_replaces_a_core_one(
    texts: tuple[str, str], service: MemoryService, principal: Principal, source: str
) -> None:
    old_text, reworded = texts
    core = service.save(principal, old_text, "fact", source=source, importance="core")["memory"]
    kept = service.save(principal, reworded, "fact", source=source)
    assert kept["superseded_ids"] == []
    assert "core memory" in kept["possible_duplicates"][0]["kept_because"]
    assert active_ids(service, principal) == {core["id"], kept["memory"]["id"]}

    elsewhere = Principal(uuid.uuid4(), uuid.uuid4())
    core = service.save(elsewhere, old_text, "fact", source=source, importance="core")["memory"]
    explicit = service.save(elsewhere, reworded, "fact", source="explicit")
    assert explicit["superseded_ids"] == [core["id"]]
    assert explicit["memory"]["importance"] == "core"


def test_a_supersession_keeps_importance_source_confidence_rationale_contexts_and_evidence(
    texts: tuple[str, str], service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old_text, reworded = texts
    old = service.save(
        principal,
        old_text,
        "decision",
        source="corrected",
        importance="high",
        rationale="Fridays have the fewest customers online",
        context="ops",
        evidence="the release calendar",
        session_id="session-1",
    )["memory"]
    reinforced = service.reinforce(principal, old["id"], "the on-call handbook")
    new = service.save(principal, reworded, "decision", source="corrected", context="release")
    assert new["superseded_ids"] == [old["id"]]
    survivor = new["memory"]
    assert survivor["importance"] == "high"  # not the default normal of the rewording
    assert survivor["rationale"] == "Fridays have the fewest customers online"
    assert survivor["source"] == "corrected"
    assert (
        survivor["confidence"] == reinforced["confidence_after"] > CONFIDENCE_BY_SOURCE["corrected"]
    )
    assert sorted(survivor["contexts"]) == ["ops", "release"]
    assert survivor["evidence_count"] == 3  # the old memory's two, and its own
    copied = evidence_of(owner_pool, survivor["id"])
    assert ("the release calendar", "save", "session-1") in copied
    assert ("the on-call handbook", "reinforce", None) in copied
    assert len(evidence_of(owner_pool, old["id"])) == 2  # the old memory keeps its own


def test_a_supersession_keeps_the_higher_importance_and_its_own_rationale(
    texts: tuple[str, str], service: MemoryService, principal: Principal
) -> None:
    old_text, reworded = texts
    old = service.save(principal, old_text, "decision", importance="core", rationale="old reason")
    new = service.save(
        principal, reworded, "decision", importance="low", rationale="new", source="explicit"
    )
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert (new["memory"]["importance"], new["memory"]["rationale"]) == ("core", "new")


def test_a_weaker_exact_repeat_is_evidence_but_changes_nothing(
    texts: tuple[str, str], service: MemoryService, principal: Principal
) -> None:
    old_text = texts[0]
    held = service.save(
        principal,
        old_text,
        "fact",
        source="explicit",
        importance="high",
        rationale="the user said so",
    )["memory"]
    repeat = service.save(
        principal,
        old_text,
        "fact",
        source="inferred",
        importance="low",
        rationale="seen in a tool result",
        evidence="tool output",
    )
    assert repeat["status"] == "unchanged"
    memory = repeat["memory"]
    assert (memory["importance"], memory["rationale"], memory["source"]) == (
        "high",
        "the user said so",
        "explicit",
    )
    assert memory["evidence_count"] == held["evidence_count"] + 1
    stronger = service.save(principal, old_text, "fact", source="explicit", importance="low")
    assert stronger["memory"]["importance"] == "low"  # the same authority may change it


def test_the_source_order() -> None:
    assert authority.SOURCE_ORDER == ("inferred", "corrected", "explicit")
    assert authority.refusal({"source": "explicit"}, "inferred") is not None
    assert authority.refusal({"source": "inferred"}, "explicit") is None
    assert authority.refusal({}, "inferred") is None  # no source recorded: inferred
    assert authority.refusal({"source": "explicit", "importance": "core"}, "explicit") is None


def test_a_person_superseding_one_memory_by_another_keeps_what_the_other_had(
    texts: tuple[str, str], service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old_text, reworded = texts
    other = service.save(
        principal,
        old_text,
        "decision",
        source="explicit",
        importance="high",
        rationale="the release calendar says so",
        context="ops",
        evidence="the calendar",
    )["memory"]
    # kept beside it: an inferred memory does not replace an explicit one by itself
    keep = service.save(principal, reworded + " (weekly)", "decision", context="release")
    keep_id = keep["memory"]["id"]
    assert keep["superseded_ids"] == []
    decided = service.supersede(principal, keep_id, other["id"])
    assert decided["superseded_ids"] == [other["id"]]
    kept = decided["memory"]
    assert (kept["importance"], kept["source"], kept["rationale"]) == (
        "high",
        "explicit",
        "the release calendar says so",
    )
    assert kept["confidence"] == CONFIDENCE_BY_SOURCE["explicit"]
    assert sorted(kept["contexts"]) == ["ops", "release"]
    assert ("the calendar", "save", None) in evidence_of(owner_pool, keep_id)
    assert active_ids(service, principal) >= {keep_id}
    assert other["id"] not in active_ids(service, principal)


def test_a_memory_of_another_category_is_kept_beside_and_a_correction_is_not_held_back(
    texts: tuple[str, str], service: MemoryService, principal: Principal
) -> None:
    old_text, reworded = texts
    instruction = service.save(principal, old_text, "instruction", source="explicit")["memory"]
    lesson = service.save(principal, reworded, "lesson", source="explicit")
    assert lesson["superseded_ids"] == []
    [close] = lesson["possible_duplicates"]
    assert close["id"] == instruction["id"]
    assert "a lesson does not replace an instruction" in close["kept_because"]
    # a correction says by itself that it corrects (no change word needed), whatever the
    # category of what it corrects: here its nearest, the lesson
    corrected = service.save(principal, reworded.replace("Fridays", "Thursdays"), "correction",
                             source="explicit")  # fmt: skip
    assert corrected["superseded_ids"] == [lesson["memory"]["id"]]


def test_another_value_without_a_change_word_is_kept_and_a_corrected_source_replaces_it(
    service: MemoryService, principal: Principal
) -> None:
    name = "".join(random.choices(string.ascii_lowercase, k=10))
    tabs = service.save(principal, f"The {name} repository is indented with tabs", "convention")
    spaces = service.save(principal, f"The {name} repository is indented with spaces", "convention")
    assert spaces["superseded_ids"] == []
    assert [d["id"] for d in spaces["possible_duplicates"]] == [tabs["memory"]["id"]]
    assert active_ids(service, principal) >= {tabs["memory"]["id"], spaces["memory"]["id"]}
