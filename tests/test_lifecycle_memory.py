"""The memory lifecycle (migration 0013, MemoryService): validity in time, evidence and
reinforcement, decay, importance and recency in ranking, archive and restore, the categories
decision, lesson and risk, and the reasons kept for a deletion, supersession or archive.

Mechanics with the deterministic bag-of-words embedder. Times are moved into the past with SQL
as the database's owner (the test's admin connection), never by waiting.
"""

from __future__ import annotations

import itertools
import math
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.errors import InvalidInput, MemoryNotFound, SecretRejected
from emergent_memory.memory import MemoryService, store
from emergent_memory.memory.models import CATEGORIES, REINFORCEMENT_STEP
from tests.test_injection import make_injection

MakeService = Callable[..., MemoryService]


def versions(pool: ConnectionPool, memory_id: str) -> list[dict[str, Any]]:
    """Every version's properties, oldest first (as the owner: no row-level security)."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT properties FROM kb.graph_objects WHERE canonical_id = %s ORDER BY version",
            (memory_id,),
        ).fetchall()
    return [row[0] for row in rows]


def evidence_rows(pool: ConnectionPool, memory_id: str) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT origin, evidence, independent, confidence_before, confidence_after, "
            "session_id FROM kb.memory_evidence WHERE canonical_id = %s ORDER BY id",
            (memory_id,),
        ).fetchall()


def rows_written(pool: ConnectionPool, actor: Principal) -> tuple[int, int]:
    """Every version and evidence row the actor wrote: proof that nothing was written."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM kb.graph_objects WHERE actor_id = %(a)s), "
            "(SELECT count(*) FROM kb.memory_evidence WHERE actor_id = %(a)s)",
            {"a": actor.actor_id},
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def idle_for(pool: ConnectionPool, memory_id: str, days: float) -> None:
    """Make the memory look untouched for `days`: its head version, its uses and its evidence
    moved into the past."""
    params = {"id": memory_id, "days": days}
    with pool.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET updated_at = now() - make_interval(days => %(days)s) "
            "WHERE canonical_id = %(id)s AND is_head",
            params,
        )
        conn.execute(
            "UPDATE kb.memory_recalls SET recalled_at = now() - make_interval(days => %(days)s) "
            "WHERE canonical_id = %(id)s",
            params,
        )
        conn.execute(
            "UPDATE kb.memory_evidence SET created_at = now() - make_interval(days => %(days)s) "
            "WHERE canonical_id = %(id)s",
            params,
        )


def found(service: MemoryService, principal: Principal, query: str, **options: Any) -> list[str]:
    result = service.recall(principal, query, record_use=False, **options)
    return [memory["content"] for memory in result["memories"]]


# -- validity in time ------------------------------------------------------------------------


def test_dates_are_stored_in_utc_and_a_date_alone_is_midnight(
    service: MemoryService, principal: Principal
) -> None:
    saved = service.save(
        principal,
        "The staging cluster runs Kubernetes 1.29",
        "fact",
        valid_from="2026-03-01",
        valid_until="2030-03-01T10:30:00+02:00",
    )["memory"]
    assert saved["valid_from"] == "2026-03-01T00:00:00Z"
    assert saved["valid_until"] == "2030-03-01T08:30:00Z"
    assert saved["importance"] == "normal"
    assert saved["rationale"] is None


def test_expired_memories_leave_recall_and_memories_valid_later_stay(
    service: MemoryService, principal: Principal
) -> None:
    service.save(
        principal, "The release freeze lasts until the audit", "fact", valid_until="2020-01-31"
    )
    service.save(
        principal,
        "The release freeze applies to the payments service",
        "fact",
        valid_from="2099-01-01",
    )
    service.save(principal, "The release freeze is announced in the ops channel", "fact")
    hits = found(service, principal, "release freeze")
    assert sorted(hits) == [
        "The release freeze applies to the payments service",
        "The release freeze is announced in the ops channel",
    ]
    # an expired memory is still a memory: listed, and found as of a time it held
    listed = [m["content"] for m in service.list_memories(principal)["memories"]]
    assert "The release freeze lasts until the audit" in listed
    then = found(service, principal, "release freeze", as_of="2020-01-15")
    assert then == []  # recorded only now: nothing was believed in 2020


def test_as_of_answers_what_was_believed_then_including_memories_superseded_later(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    old = service.save(principal, "Deploys to production happen on Fridays", "fact")
    with connect() as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    between: datetime = row[0]
    new = service.save(
        principal, "Production deploys happen on Fridays", "fact", supersede_reason="reworded"
    )
    assert new["superseded_ids"] == [old["memory"]["id"]]

    assert found(service, principal, "production deploys Fridays") == [
        "Production deploys happen on Fridays"
    ]
    then = found(service, principal, "production deploys Fridays", as_of=between.isoformat())
    assert then == ["Deploys to production happen on Fridays"]
    # superseded before now: not what is believed now, even as of now
    now = found(
        service, principal, "production deploys Fridays", as_of=datetime.now(UTC).isoformat()
    )
    assert now == ["Production deploys happen on Fridays"]
    # a time before either was recorded: nothing
    assert found(service, principal, "production deploys Fridays", as_of="2001-01-01") == []


def test_as_of_leaves_out_what_was_not_valid_then(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    saved = service.save(
        principal,
        "The on-call rota is kept in PagerDuty",
        "fact",
        valid_from="2024-01-01",
        valid_until="2025-01-01",
    )
    with connect() as conn:  # recorded long ago (as_of reads the version written by then)
        conn.execute(
            "UPDATE kb.graph_objects SET created_at = '2023-06-01', updated_at = '2023-06-01' "
            "WHERE canonical_id = %s",
            (saved["memory"]["id"],),
        )
    query = "on-call rota PagerDuty"
    assert found(service, principal, query, as_of="2024-06-01") == [
        "The on-call rota is kept in PagerDuty"
    ]
    assert found(service, principal, query, as_of="2023-12-31") == []  # not yet valid
    assert found(service, principal, query, as_of="2025-01-01") == []  # the end is excluded
    assert found(service, principal, query) == []  # expired now


def test_a_supersession_ends_the_old_memorys_validity_where_the_new_one_begins(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    first = service.save(principal, "The build runs on Jenkins", "fact")["memory"]
    second = service.save(
        principal, "The build runs on GitHub Actions", "fact", valid_from="2026-05-01"
    )["memory"]
    service.supersede(principal, second["id"], first["id"], reason="we moved CI")
    old = versions(owner_pool, first["id"])[-1]
    assert old["valid_until"] == "2026-05-01T00:00:00Z"
    assert old["supersede_reason"] == "we moved CI"

    # without a start, it ends now; an earlier end is kept
    third = service.save(principal, "Builds are cached in S3", "fact")["memory"]
    fourth = service.save(principal, "Builds are cached on the runner", "fact")["memory"]
    before = datetime.now(UTC)
    service.supersede(principal, fourth["id"], third["id"])
    ended = datetime.fromisoformat(versions(owner_pool, third["id"])[-1]["valid_until"])
    assert before - timedelta(minutes=1) < ended <= datetime.now(UTC)
    fifth = service.save(
        principal, "Artifacts expire after 30 days", "fact", valid_until="2021-01-01"
    )["memory"]
    sixth = service.save(principal, "Artifacts expire after 90 days", "fact")["memory"]
    service.supersede(principal, sixth["id"], fifth["id"])
    assert versions(owner_pool, fifth["id"])[-1]["valid_until"] == "2021-01-01T00:00:00Z"


def test_restore_gives_back_the_validity_a_supersession_ended(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    old = service.save(principal, "Deploys to production happen on Fridays", "fact")
    new = service.save(principal, "Production deploys happen on Fridays", "fact")
    assert "valid_until" in versions(owner_pool, old["memory"]["id"])[-1]
    restored = service.restore(principal, old["memory"]["id"])["memory"]
    assert restored["valid_until"] is None
    assert new["memory"]["id"] != restored["id"]
    assert "Deploys to production happen on Fridays" in found(service, principal, "deploys")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"valid_from": "yesterday"}, r"valid_from 'yesterday' is not an ISO 8601 date"),
        ({"valid_until": "2026-13-01"}, r"valid_until '2026-13-01' is not an ISO 8601 date"),
        ({"valid_until": 20260101}, r"valid_until must be an ISO 8601 date .* got a number"),
        (
            {"valid_from": "2026-03-01", "valid_until": "2026-03-01"},
            r"valid_until \(2026-03-01T00:00:00Z\) must be after valid_from",
        ),
        (
            {"valid_from": "2026-03-02", "valid_until": "2026-03-01T23:00:00Z"},
            r"valid_until .* must be after valid_from",
        ),
        ({"importance": "urgent"}, r"importance must be one of low, normal, high, core"),
        ({"rationale": "x" * 1001}, r"rationale is 1001 characters long; the limit is 1000"),
        ({"rationale": "  "}, r"rationale is empty"),
        ({"evidence": "y" * 501}, r"evidence is 501 characters long; the limit is 500"),
        ({"supersede_reason": "z" * 501}, r"supersede_reason is 501 characters long"),
    ],
)
def test_bad_lifecycle_input_is_refused_naming_the_field_and_nothing_is_written(
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
    options: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(InvalidInput, match=message):
        service.save(principal, "The API gateway times out after 30 seconds", "fact", **options)
    assert rows_written(owner_pool, principal) == (0, 0)


def test_secrets_are_refused_in_evidence_and_rationale(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    secret = "the key is AKIAZ7QW2ERTY5UIOP3A"
    with pytest.raises(SecretRejected, match="refusing to store this evidence"):
        service.save(principal, "The bucket is in eu-west-1", "fact", evidence=secret)
    with pytest.raises(SecretRejected, match="refusing to store this rationale"):
        service.save(principal, "The bucket is in eu-west-1", "decision", rationale=secret)
    assert rows_written(owner_pool, principal) == (0, 0)


def test_bad_as_of_is_refused(service: MemoryService, principal: Principal) -> None:
    with pytest.raises(InvalidInput, match="as_of 'last week' is not an ISO 8601 date"):
        service.recall(principal, "anything", as_of="last week")


def test_update_sets_and_removes_the_lifecycle_properties_and_checks_the_order(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(
        principal, "The docs site is built with MkDocs", "fact", valid_from="2026-01-01"
    )["memory"]
    updated = service.update(
        principal,
        saved["id"],
        {"importance": "high", "valid_until": "2027-01-01", "rationale": "team decision"},
    )["memory"]
    assert (updated["importance"], updated["valid_until"], updated["rationale"]) == (
        "high",
        "2027-01-01T00:00:00Z",
        "team decision",
    )
    with pytest.raises(InvalidInput, match=r"valid_until .* must be after valid_from"):
        service.update(principal, saved["id"], {"valid_until": "2025-06-01"})
    cleared = service.update(
        principal, saved["id"], {"importance": None, "valid_from": None, "rationale": None}
    )["memory"]
    assert (cleared["importance"], cleared["valid_from"], cleared["rationale"]) == (
        "normal",
        None,
        None,
    )
    assert "importance" not in versions(owner_pool, saved["id"])[-1]


# -- evidence and reinforcement -------------------------------------------------------------


def test_independent_evidence_raises_confidence_and_every_piece_is_kept(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(
        principal, "The user runs tests with pytest -x", "fact", evidence="said so in the kickoff"
    )["memory"]
    assert saved["confidence"] == 0.7
    assert saved["evidence_count"] == 1
    first = service.reinforce(principal, saved["id"], "pytest.ini sets -x", session_id="session-1")
    assert first["independent"] is True
    assert (first["confidence_before"], first["confidence_after"]) == (0.7, 0.775)
    assert first["confidence_after"] == round(0.7 + 0.3 * REINFORCEMENT_STEP, 4)
    second = service.reinforce(principal, saved["id"], "the CI script runs pytest -x")
    assert second["confidence_after"] == store.reinforced(0.775, REINFORCEMENT_STEP)
    assert second["evidence_count"] == 3
    memory = second["memory"]
    assert memory["confidence"] == second["confidence_after"]
    assert memory["last_evidence"] is not None
    assert memory["last_evidence"]["evidence"] == "the CI script runs pytest -x"
    assert memory["last_evidence"]["origin"] == "reinforce"
    # each independent piece wrote a version, so history shows why
    assert [v["confidence"] for v in versions(owner_pool, saved["id"])] == [
        0.7,
        0.775,
        second["confidence_after"],
    ]
    assert evidence_rows(owner_pool, saved["id"]) == [
        ("save", "said so in the kickoff", True, 0.7, 0.7, None),
        ("reinforce", "pytest.ini sets -x", True, 0.7, 0.775, "session-1"),
        ("reinforce", "the CI script runs pytest -x", True, 0.775, 0.8313, None),
    ]


def test_evidence_already_recorded_is_kept_but_raises_nothing(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(
        principal, "The user runs tests with pytest -x", "fact", evidence="pytest.ini sets -x"
    )["memory"]
    again = service.reinforce(principal, saved["id"], "  PYTEST.ini   sets -x ")
    assert again["independent"] is False
    assert again["confidence_before"] == again["confidence_after"] == 0.7
    assert again["evidence_count"] == 2
    assert len(versions(owner_pool, saved["id"])) == 1  # no version without a change


@pytest.mark.parametrize("repeat", ["  EV-3483. ", "ev 3483", "(EV/3483)!"])
def test_the_same_evidence_with_other_punctuation_is_not_independent(
    service: MemoryService, principal: Principal, repeat: str
) -> None:
    saved = service.save(principal, "The build uses Bazel", "fact", evidence="ev-3483")["memory"]
    again = service.reinforce(principal, saved["id"], repeat)
    assert again["independent"] is False
    assert again["confidence_after"] == again["confidence_before"]
    other = service.reinforce(principal, saved["id"], "ev-3484")  # another ticket: new
    assert other["independent"] is True


def test_confidence_never_rises_above_one(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user's name is Ada", "fact", source="explicit")
    memory_id = saved["memory"]["id"]
    for n in range(30):
        result = service.reinforce(principal, memory_id, f"introduced herself, meeting {n}")
        assert result["confidence_after"] <= 1.0
    assert result["confidence_after"] == 1.0
    assert len(versions(owner_pool, memory_id)) == 1  # already 1.0: nothing to raise
    close_to_one = service.save(principal, "The user lives in Lyon", "fact")["memory"]
    for n in range(60):
        service.reinforce(principal, close_to_one["id"], f"mentioned Lyon again ({n})")
    # rounded to 4 places, it converges on 0.9999 and stays there
    assert versions(owner_pool, close_to_one["id"])[-1]["confidence"] == 0.9999


def test_an_exact_repeat_reinforces_with_new_evidence_and_only_to_the_source_without(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    text = "The user prefers dark mode"
    first = service.save(principal, text, "preference")["memory"]
    plain = service.save(principal, text, "preference")
    assert plain["status"] == "unchanged"
    assert plain["memory"]["confidence"] == 0.7
    raised = service.save(principal, text, "preference", source="explicit")
    assert raised["memory"]["confidence"] == 1.0  # the source's, as before
    assert raised["memory"]["id"] == first["id"]
    other = service.save(principal, "The user likes terse answers", "preference")["memory"]
    repeated = service.save(
        principal, "The user likes terse answers", "preference", evidence="asked for brevity"
    )
    assert repeated["memory"]["confidence"] == 0.775
    rows = evidence_rows(owner_pool, other["id"])
    assert [(r[0], r[2]) for r in rows] == [("save", False), ("repeat", True)]
    assert [(r[0], r[2]) for r in evidence_rows(owner_pool, first["id"])] == [
        ("save", False),
        ("repeat", False),
        ("repeat", False),
    ]


def test_reinforce_checks_its_input_and_another_actors_memory_is_not_found(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user's editor is Helix", "fact")["memory"]
    other = Principal(uuid.uuid4(), principal.project_id)
    before = rows_written(owner_pool, principal)
    with pytest.raises(MemoryNotFound, match=f"memory {saved['id']} not found"):
        service.reinforce(other, saved["id"], "I saw it")
    missing = str(uuid.uuid4())
    with pytest.raises(MemoryNotFound, match=f"memory {missing} not found"):
        service.reinforce(principal, missing, "I saw it")
    with pytest.raises(InvalidInput, match="evidence is required"):
        service.manage(principal, "reinforce", memory_id=saved["id"])
    with pytest.raises(InvalidInput, match="evidence is empty"):
        service.reinforce(principal, saved["id"], " ")
    with pytest.raises(InvalidInput, match="evidence goes with reinforce"):
        service.manage(principal, "delete", memory_id=saved["id"], evidence="x")
    assert rows_written(owner_pool, principal) == before
    assert rows_written(owner_pool, other) == (0, 0)
    done = service.manage(principal, "reinforce", memory_id=saved["id"], evidence="config file")
    assert done["independent"] is True  # type: ignore[typeddict-item]


# -- decay -----------------------------------------------------------------------------------

DECAYS = [store.Decay(), store.Decay(0.1, 0.0, 30.0), store.Decay(0.5, 90.0, 365.0)]
IDLE_DAYS = [None, 0.0, 1.5, 29.0, 30.0, 31.0, 100.0, 365.0, 1000.0, 20000.0, -3.0]


def test_the_sql_decay_equals_its_python_mirror_on_a_grid(
    conn: psycopg.Connection[Any],
) -> None:
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    cases = list(
        itertools.product(
            [0.0, 0.2, 0.3, 0.55, 0.9, 1.0],
            [None, "low", "normal", "high", "core"],
            IDLE_DAYS,
            DECAYS,
        )
    )
    for stored, importance, idle, decay in cases:
        last = None if idle is None else now - timedelta(days=idle)
        row = conn.execute(
            "SELECT kb.memory_effective_confidence(%s, %s, %s, %s, %s, %s, %s)",
            (stored, importance, last, now, decay.floor, decay.grace_days, decay.half_life_days),
        ).fetchone()
        assert row is not None
        expected = store.effective_confidence(stored, importance, last, now, decay)
        assert math.isclose(row[0], expected, abs_tol=1e-12), (stored, importance, idle, decay)
        assert row[0] <= stored + 1e-12
        assert row[0] >= min(stored, decay.floor) - 1e-12
        if importance == "core":
            assert row[0] == stored


def test_the_sql_recency_half_life_and_importance_equal_their_python_mirrors(
    conn: psycopg.Connection[Any],
) -> None:
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    for category, idle in itertools.product([*CATEGORIES, None, "other"], IDLE_DAYS):
        last = None if idle is None else now - timedelta(days=idle)
        row = conn.execute(
            "SELECT kb.memory_recency(%s, %s, %s), kb.memory_half_life(%s)",
            (category, last, now, category),
        ).fetchone()
        assert row is not None
        assert math.isclose(row[0], store.recency(category, last, now), abs_tol=1e-12)
        assert row[1] == store.half_life(category)
    assert store.half_life("fact") == 90
    assert store.half_life("pattern") == 180
    assert {store.half_life(c) for c in CATEGORIES if c not in ("fact", "pattern")} == {365}
    for importance in [None, "low", "normal", "high", "core", "other"]:
        row = conn.execute("SELECT kb.memory_importance_value(%s)", (importance,)).fetchone()
        assert row is not None
        assert row[0] == store.importance_value(importance)


def test_confidence_decays_when_unused_and_a_recall_restores_it(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user's laptop runs Fedora", "fact", source="explicit")
    memory_id = saved["memory"]["id"]
    assert saved["memory"]["effective_confidence"] == 1.0
    idle_for(owner_pool, memory_id, 120)
    [listed] = service.list_memories(principal)["memories"]
    expected = 0.5 ** (90 / 180)
    assert listed["confidence"] == 1.0  # stored, unchanged: decay never writes
    assert listed["effective_confidence"] == pytest.approx(expected, abs=1e-3)
    idle_for(owner_pool, memory_id, 2000)
    [floored] = service.list_memories(principal)["memories"]
    assert floored["effective_confidence"] == 0.3  # the floor

    recalled = service.recall(principal, "laptop Fedora")["memories"][0]
    assert recalled["scores"]["effective_confidence"] == 0.3  # as ranked
    assert recalled["scores"]["recency"] < 0.01  # a fact unused for 2000 days
    [restored] = service.list_memories(principal)["memories"]
    assert restored["effective_confidence"] == 1.0
    assert len(versions(owner_pool, memory_id)) == 1  # the use wrote no version


def test_evidence_restores_confidence_and_core_memories_never_decay(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    plain = service.save(principal, "The user's shell is fish", "fact", source="explicit")
    core = service.save(
        principal,
        "Never push to main directly",
        "instruction",
        source="explicit",
        importance="core",
    )
    for saved in (plain, core):
        idle_for(owner_pool, saved["memory"]["id"], 1000)
    listed = {m["content"]: m for m in service.list_memories(principal)["memories"]}
    assert listed["The user's shell is fish"]["effective_confidence"] == 0.3
    assert listed["Never push to main directly"]["effective_confidence"] == 1.0
    service.reinforce(principal, plain["memory"]["id"], "fish config in dotfiles")
    listed = {m["content"]: m for m in service.list_memories(principal)["memories"]}
    assert listed["The user's shell is fish"]["effective_confidence"] == 1.0


def test_recall_ranks_with_decayed_confidence_from_sql(
    make_service: MakeService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    """Two equally relevant memories: the one unused for long (decayed, less recent) ranks
    below the one in use, with the factors in its score breakdown."""
    service = make_service(recall_confidence_weight=0.5, recall_recency_weight=0.5)
    stale = service.save(principal, "Alpha service logs go to Loki", "fact", source="explicit")
    fresh = service.save(principal, "Beta service logs go to Loki", "fact", source="explicit")
    idle_for(owner_pool, stale["memory"]["id"], 400)
    memories = service.recall(principal, "service logs Loki", record_use=False)["memories"]
    assert [m["id"] for m in memories] == [fresh["memory"]["id"], stale["memory"]["id"]]
    scores = memories[1]["scores"]
    assert scores["effective_confidence"] == pytest.approx(
        store.effective_confidence(
            1.0, None, datetime.now(UTC) - timedelta(days=400), datetime.now(UTC)
        ),
        abs=1e-3,
    )
    assert scores["recency"] == pytest.approx(0.5 ** (400 / 90), abs=1e-3)
    assert scores["importance_factor"] == 1.0
    expected = (
        scores["fused"]
        * (1 - 0.5 + 0.5 * scores["effective_confidence"])
        * (1 - 0.5 + 0.5 * scores["recency"])
    )
    assert scores["score"] == pytest.approx(expected, rel=1e-3)


# -- importance ------------------------------------------------------------------------------


@pytest.mark.parametrize("high_first", [True, False])
def test_importance_lifts_a_memory_in_the_ranking(
    make_service: MakeService, principal: Principal, high_first: bool
) -> None:
    service = make_service(recall_importance_weight=0.5)
    texts = ["Alpha team reviews pull requests daily", "Beta team reviews pull requests daily"]
    if not high_first:
        texts.reverse()
    high = service.save(principal, texts[0], "convention", importance="high")["memory"]
    low = service.save(principal, texts[1], "convention", importance="low")["memory"]
    memories = service.recall(principal, "team reviews pull requests", record_use=False)["memories"]
    assert [m["id"] for m in memories] == [high["id"], low["id"]]
    assert [m["scores"]["importance_factor"] for m in memories] == [1.5, 0.5]
    assert [m["importance"] for m in memories] == ["high", "low"]
    # weight 0 turns it off
    plain = make_service(recall_importance_weight=0.0).recall(
        principal, "team reviews pull requests", record_use=False
    )["memories"]
    assert {m["scores"]["importance_factor"] for m in plain} == {1.0}


def test_core_memories_come_first_at_session_start_within_the_budget_and_count_no_use(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    service.save(principal, "Always answer in British English", "instruction", source="explicit")
    service.save(principal, "The user corrected the port: it is 8443", "correction")
    core = service.save(
        principal, "The user is blind and uses a screen reader", "fact", importance="core"
    )["memory"]
    long_core = service.save(
        principal, "Core: " + "very long memory " * 60, "fact", importance="core"
    )["memory"]
    injection = make_injection(service, budget=200)
    result = injection.context(principal, session_id="s-core", event="session_start")
    ids = [m["id"] for m in result["memories"]]
    assert ids[0] == core["id"]  # first, though a fact
    first = result["memories"][0]
    assert (first["importance"], first["confidence"], first["effective_confidence"]) == (
        "core",
        0.7,
        0.7,
    )
    assert long_core["id"] not in ids  # core, but over the budget: skipped, never cut
    assert result["estimated_tokens"] <= 200
    with owner_pool.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM kb.memory_recalls WHERE actor_id = %s", (principal.actor_id,)
        ).fetchone()
    assert row == (0,)  # injection is never a use
    [listed] = [m for m in service.list_memories(principal)["memories"] if m["id"] == core["id"]]
    assert listed["use_count"] == 0
    assert listed["last_used"] is None


def test_injection_shows_the_decayed_confidence(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(
        principal, "Always run the linter before pushing", "instruction", source="explicit"
    )["memory"]
    idle_for(owner_pool, saved["id"], 2000)
    result = make_injection(service).context(principal, session_id="s-dec", event="session_start")
    [shown] = result["memories"]
    assert (shown["confidence"], shown["effective_confidence"]) == (1.0, 0.3)


def test_expired_memories_are_not_injected(service: MemoryService, principal: Principal) -> None:
    service.save(principal, "Use the old VPN gateway", "instruction", valid_until="2020-01-01")
    result = make_injection(service).context(principal, session_id="s-exp", event="session_start")
    assert result["memories"] == []


# -- archive and restore ---------------------------------------------------------------------


def test_an_archived_memory_leaves_recall_and_lists_until_restored(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The wiki lives on Confluence", "fact")["memory"]
    archived = service.manage(
        principal, "archive", memory_id=saved["id"], reason="nobody uses the wiki"
    )
    assert archived["archived"] == saved["id"]  # type: ignore[typeddict-item]
    memory = archived["memory"]  # type: ignore[typeddict-item]
    assert memory["status"] == "archived"
    assert memory["archive_reason"] == "nobody uses the wiki"
    assert memory["archived_at"] is not None
    assert found(service, principal, "wiki Confluence") == []
    assert found(service, principal, "wiki Confluence", include_archived=True) == [
        "The wiki lives on Confluence"
    ]
    [hit] = service.recall(principal, "wiki Confluence", include_archived=True)["memories"]
    assert hit["archived_at"] == memory["archived_at"]
    assert service.list_memories(principal)["memories"] == []
    [listed] = service.list_memories(principal, status="archived")["memories"]
    assert listed["id"] == saved["id"]
    assert listed["status"] == "archived"
    stats = service.stats(principal)
    assert (stats["active"], stats["archived"]) == (0, 1)
    with pytest.raises(InvalidInput, match="already archived"):
        service.archive(principal, saved["id"])

    restored = service.restore(principal, saved["id"])
    assert restored["restored_from"] == "archived"
    assert found(service, principal, "wiki Confluence") == ["The wiki lives on Confluence"]
    head = versions(owner_pool, saved["id"])[-1]
    assert "archived_at" not in head
    assert "archive_reason" not in head
    assert len(versions(owner_pool, saved["id"])) == 3  # saved, archived, restored


def test_an_exact_repeat_of_an_archived_memory_restores_and_reinforces_it(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    saved = service.save(principal, "The user prefers short commit messages", "preference")
    service.archive(principal, saved["memory"]["id"])
    again = service.save(
        principal, "The user prefers short commit messages", "preference", evidence="said so again"
    )
    assert again["status"] == "unchanged"
    assert again.get("restored") is True
    assert again["memory"]["id"] == saved["memory"]["id"]
    assert again["memory"]["confidence"] == 0.775
    assert service.list_memories(principal)["count"] == 1
    assert "restored" not in service.save(
        principal, "The user prefers short commit messages", "preference"
    )


def test_core_and_superseded_memories_are_not_archived(
    service: MemoryService, principal: Principal
) -> None:
    core = service.save(principal, "Never deploy on Fridays", "instruction", importance="core")
    with pytest.raises(InvalidInput, match="core memories are never archived"):
        service.archive(principal, core["memory"]["id"])
    old = service.save(principal, "Deploys to production happen on Fridays", "fact")
    service.save(principal, "Production deploys happen on Fridays", "fact")
    with pytest.raises(InvalidInput, match="was superseded by"):
        service.archive(principal, old["memory"]["id"])
    with pytest.raises(MemoryNotFound):
        service.archive(Principal(uuid.uuid4(), principal.project_id), core["memory"]["id"])


def test_forget_all_deletes_archived_memories_too(
    service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The user's cat is called Miso", "fact")
    archived = service.save(principal, "The user's old car was a Golf", "fact")
    service.archive(principal, archived["memory"]["id"])
    assert service.forget_all(principal, confirm=True) == {"deleted_count": 2}
    assert service.list_memories(principal, status="archived")["memories"] == []
    assert service.stats(principal)["deleted"] == 2


def test_reinforcing_an_archived_memory_brings_it_back(
    service: MemoryService, principal: Principal
) -> None:
    saved = service.save(principal, "The user reads papers on a Kindle", "fact")["memory"]
    service.archive(principal, saved["id"])
    result = service.reinforce(principal, saved["id"], "mentioned the Kindle today")
    assert result["restored"] is True
    assert service.list_memories(principal)["count"] == 1


def test_a_repeat_racing_an_archive_comes_back_restored(
    service: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    text = "The user keeps meeting notes in Obsidian"
    id_ = uuid.UUID(service.save(principal, text, "fact")["memory"]["id"])
    results: list[Any] = []
    with pool.connection() as conn, conn.transaction():
        # the archive job's transaction: the memory locked, a version with archived_at
        graph.act_as(conn, principal.actor_id, principal.project_id)
        graph.lock_object(conn, id_)
        graph.update_object(
            conn, id_, properties={"archived_at": "2026-01-01T00:00:00Z", "archive_reason": "x"}
        )
        saving = threading.Thread(
            target=lambda: results.append(service.save(principal, text, "fact"))
        )
        saving.start()
        saving.join(timeout=1.0)
        assert saving.is_alive()  # the repeat waits on the memory's lock
    saving.join(timeout=30)
    [again] = results
    assert again.get("restored") is True
    assert found(service, principal, "meeting notes Obsidian") == [text]


def test_resaving_an_expired_memory_without_dates_makes_it_hold_again(
    service: MemoryService, principal: Principal
) -> None:
    text = "The office canteen is closed for renovation"
    saved = service.save(principal, text, "fact", valid_until="2020-01-31")["memory"]
    assert found(service, principal, "canteen renovation") == []
    again = service.save(principal, text, "fact")
    assert again["memory"]["id"] == saved["id"]
    assert again["memory"]["valid_until"] is None
    assert found(service, principal, "canteen renovation") == [text]
    # a repeat with dates sets them, checked
    dated = service.save(principal, text, "fact", valid_until="2099-01-01")
    assert dated["memory"]["valid_until"] == "2099-01-01T00:00:00Z"
    with pytest.raises(InvalidInput, match="valid_until"):
        service.save(principal, text, "fact", valid_from="2099-06-01", valid_until="2099-02-01")


def test_reinforcing_an_archived_memory_refuses_a_twin(
    service: MemoryService, principal: Principal
) -> None:
    text = "The user's laptop is a ThinkPad X1"
    archived = service.save(principal, text, "fact")["memory"]
    service.archive(principal, archived["id"])
    other = service.save(principal, "The user's desktop runs Fedora", "fact")["memory"]
    service.update(principal, other["id"], {"content": text})
    with pytest.raises(InvalidInput, match="already says exactly this"):
        service.reinforce(principal, archived["id"], "mentioned the ThinkPad")
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [other["id"]]


def test_an_archived_memory_cannot_become_core(
    service: MemoryService, principal: Principal
) -> None:
    saved = service.save(principal, "The user plays chess on Sundays", "fact")["memory"]
    service.archive(principal, saved["id"])
    with pytest.raises(InvalidInput, match=r"importance.*restore"):
        service.update(principal, saved["id"], {"importance": "core"})
    service.update(principal, saved["id"], {"importance": "high"})  # others are fine


# -- categories and reasons ------------------------------------------------------------------


def test_decisions_lessons_and_risks_are_memories_like_the_others(
    service: MemoryService, principal: Principal
) -> None:
    decision = service.save(
        principal,
        "The team chose PostgreSQL over MongoDB for the orders service",
        "decision",
        rationale="joins across orders and customers; the team knows it",
    )["memory"]
    service.save(
        principal,
        "Running migrations during peak hours locked the orders table; run them at night",
        "lesson",
    )
    service.save(principal, "The payment webhook can deliver an event twice", "risk")
    assert decision["category"] == "decision"
    assert decision["rationale"] == "joins across orders and customers; the team knows it"
    assert service.list_memories(principal, category="risk")["count"] == 1
    [project] = service.stats(principal)["projects"]
    assert {k: project["by_category"][k] for k in ("decision", "lesson", "risk")} == {
        "decision": 1,
        "lesson": 1,
        "risk": 1,
    }


def test_the_reasons_of_a_deletion_a_supersession_and_an_archive_are_kept(
    service: MemoryService, principal: Principal
) -> None:
    gone = service.save(principal, "The user drinks oat milk", "preference")["memory"]
    service.manage(principal, "delete", memory_id=gone["id"], reason="the user asked")
    [deleted] = service.list_memories(principal, status="deleted")["memories"]
    assert deleted["delete_reason"] == "the user asked"  # type: ignore[typeddict-item]
    plain = service.save(principal, "The user drinks black coffee", "preference")["memory"]
    service.delete(principal, plain["id"])
    reasons = {
        m["id"]: m["delete_reason"]  # type: ignore[typeddict-item]
        for m in service.list_memories(principal, status="deleted")["memories"]
    }
    assert reasons[plain["id"]] == "deleted by its owner"

    service.save(principal, "Deploys to production happen on Fridays", "fact")
    service.save(
        principal,
        "Production deploys happen on Fridays",
        "fact",
        supersede_reason="the team reworded it",
    )
    [superseded] = service.list_memories(principal, status="superseded")["memories"]
    assert superseded["supersede_reason"] == "the team reworded it"  # type: ignore[typeddict-item]

    kept = service.save(principal, "The user's desk is by the window", "fact")["memory"]
    service.archive(principal, kept["id"], reason="moved offices")
    [archived] = service.list_memories(principal, status="archived")["memories"]
    assert archived["archive_reason"] == "moved offices"  # type: ignore[typeddict-item]
    with pytest.raises(InvalidInput, match="reason goes with delete, archive and supersede"):
        service.manage(principal, "restore", memory_id=kept["id"], reason="x")


# -- as_of: each memory as its version at that time ------------------------------------------


def clock(connect: Callable[[], psycopg.Connection[Any]]) -> str:
    """The database's clock now, as an as_of."""
    with connect() as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    return str(row[0].isoformat())


def recalled(
    service: MemoryService, principal: Principal, query: str, **options: Any
) -> list[dict[str, Any]]:
    result = service.recall(principal, query, record_use=False, **options)
    return [dict(memory) for memory in result["memories"]]


def test_as_of_before_a_supersession_that_ended_validity_earlier_finds_the_old_memory(
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
    owner_pool: ConnectionPool,
) -> None:
    """The reviewer's case: the supersession ends the old memory's validity at the new one's
    valid_from, before the moment asked about; what was believed at that moment still holds,
    as that version said it (no end of validity yet)."""
    old = service.save(principal, "The build runs on Jenkins", "fact")["memory"]["id"]
    moment = clock(connect)
    new = service.save(
        principal, "The build runs on GitHub Actions", "fact", valid_from="2026-05-01"
    )["memory"]["id"]
    service.supersede(principal, new, old)
    [superseded] = [v for v in versions(owner_pool, old) if v.get("superseded_by")]
    assert superseded["valid_until"] == "2026-05-01T00:00:00Z"
    assert moment > "2026-05-01"
    then = recalled(service, principal, "build runs", as_of=moment)
    assert [(m["id"], m["content"], m["valid_until"]) for m in then] == [
        (old, "The build runs on Jenkins", None)
    ]
    assert found(service, principal, "build runs") == ["The build runs on GitHub Actions"]
    assert found(service, principal, "build runs", as_of=clock(connect)) == [
        "The build runs on GitHub Actions"
    ]


def test_as_of_finds_an_updated_memory_with_its_content_at_that_time(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    memory_id = service.save(principal, "The staging database is db-1", "fact")["memory"]["id"]
    before = clock(connect)
    service.update(principal, memory_id, {"content": "The staging database is db-2"})
    after = clock(connect)
    query = "staging database"
    then = recalled(service, principal, query, as_of=before)
    assert [(m["id"], m["content"]) for m in then] == [(memory_id, "The staging database is db-1")]
    assert found(service, principal, query, as_of=after) == ["The staging database is db-2"]
    assert found(service, principal, query) == ["The staging database is db-2"]


def test_as_of_finds_a_memory_archived_later_before_its_archiving(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    memory_id = service.save(principal, "The wiki lives on Confluence", "fact")["memory"]["id"]
    before = clock(connect)
    service.archive(principal, memory_id, reason="moved")
    after = clock(connect)
    query = "wiki Confluence"
    then = recalled(service, principal, query, as_of=before)
    assert [(m["id"], m["archived_at"]) for m in then] == [(memory_id, None)]
    assert found(service, principal, query, as_of=after) == []
    assert found(service, principal, query, as_of=after, include_archived=True) == [
        "The wiki lives on Confluence"
    ]


def test_as_of_never_finds_a_deleted_memory(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    """A deletion (or forget_all) is the owner's wish: not undone by asking for the past."""
    deleted = service.save(principal, "The VPN password rotates monthly", "fact")["memory"]
    service.save(principal, "The VPN gateway is in Frankfurt", "fact")
    before = clock(connect)
    service.delete(principal, deleted["id"])
    assert found(service, principal, "VPN", as_of=before) == ["The VPN gateway is in Frankfurt"]
    service.forget_all(principal, confirm=True)
    for moment in (before, clock(connect)):
        assert found(service, principal, "VPN", as_of=moment) == []
        assert found(service, principal, "VPN", as_of=moment, include_archived=True) == []


def test_as_of_never_finds_another_actors_memory(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    service.save(other, "The deploy key is kept in Vault", "fact", scope="user")
    service.save(other, "The deploy pipeline is in Vault too", "fact", scope="project")
    moment = clock(connect)
    assert found(service, principal, "deploy Vault", as_of=moment) == []
    assert found(service, principal, "deploy Vault", as_of=moment, include_archived=True) == []
    assert sorted(found(service, other, "deploy Vault", as_of=moment)) == [
        "The deploy key is kept in Vault",
        "The deploy pipeline is in Vault too",
    ]


def test_as_of_a_date_alone_is_the_end_of_that_day_in_utc(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    from emergent_memory.memory import validity

    assert validity.as_of("2026-03-01") == datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert validity.as_of("2026-03-01T10:00:00+02:00") == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert validity.as_of("2026-03-01T10:00:00") == datetime(2026, 3, 1, 10, tzinfo=UTC)
    service.save(principal, "The linter is Ruff", "fact", valid_until="2099-01-01")
    today = clock(connect)[:10]
    # recorded today: believed true on this day (midnight would have been before it)
    assert found(service, principal, "linter Ruff", as_of=today) == ["The linter is Ruff"]
    assert found(service, principal, "linter Ruff", as_of=f"{today}T00:00:00Z") == []
    # a validity that ends on a day does not hold on that day
    assert found(service, principal, "linter Ruff", as_of="2099-01-01") == []
    assert found(service, principal, "linter Ruff", as_of="2098-12-31") == ["The linter is Ruff"]


def test_as_of_after_forget_all_still_finds_superseded_history_until_it_is_deleted(
    service: MemoryService, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    """forget_all deletes active and archived memories; superseded ones stay history (issue
    13), so as of a time before their supersession they are found, until deleted by id."""
    old = service.save(principal, "The queue is RabbitMQ", "fact")["memory"]["id"]
    moment = clock(connect)
    new = service.save(principal, "The queue is Kafka", "fact")["memory"]["id"]
    service.supersede(principal, new, old)
    service.forget_all(principal, confirm=True)
    assert found(service, principal, "queue", as_of=moment) == ["The queue is RabbitMQ"]
    service.delete(principal, old)
    assert found(service, principal, "queue", as_of=moment) == []
