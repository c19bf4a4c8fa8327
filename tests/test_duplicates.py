"""Possible duplicates (recorded by save and update, decided by a person: keep both,
supersede, merge) and MemoryService's bulk delete and restore, on the real database, for one
actor only (another actor's ids are not found, exactly like missing ones)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.errors import InvalidInput, ObjectNotFound, PermissionDenied
from emergent_memory.memory import MemoryService
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.records import pair_why

MakeService = Callable[..., MemoryService]
FRIDAYS = "Deploys to production happen on Fridays"
THURSDAYS = "Deploys to production happen on Thursdays"


@pytest.fixture
def service(make_service: MakeService) -> MemoryService:
    """The band where a close memory that does not say it changed is a possible duplicate."""
    return make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)


@pytest.fixture
def duplicates(pool: ConnectionPool, service: MemoryService) -> DuplicateService:
    return DuplicateService(pool, service)


@pytest.fixture
def admin(global_memories_cleanup: None) -> Principal:
    """An administrator; the global memories of the test are removed when it ends (every
    actor sees them: left behind, they would show in other tests' lists)."""
    return Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))


@pytest.fixture
def browse(pool: ConnectionPool) -> BrowseService:
    return BrowseService(pool)


def snapshot(owner_pool: ConnectionPool, actor: Principal) -> list[tuple[Any, ...]]:
    """Everything an actor has: every version of its objects and edges, and its pairs."""
    with owner_pool.connection() as conn:
        objects = conn.execute(
            "SELECT id, properties, deleted_at FROM kb.graph_objects WHERE actor_id = %s "
            "ORDER BY id",
            (actor.actor_id,),
        ).fetchall()
        edges = conn.execute(
            "SELECT id, deleted_at FROM kb.graph_relationships WHERE actor_id = %s ORDER BY id",
            (actor.actor_id,),
        ).fetchall()
        pairs = conn.execute(
            "SELECT id, decision FROM kb.possible_duplicates WHERE actor_id = %s ORDER BY id",
            (actor.actor_id,),
        ).fetchall()
    return [*objects, *edges, *pairs]


def a_pair(service: MemoryService, principal: Principal) -> tuple[str, str]:
    """(older, newer): two memories the duplicate check found close."""
    old = service.save(principal, FRIDAYS, "fact", context="deploys")["memory"]["id"]
    new = service.save(principal, THURSDAYS, "fact")
    assert [d["id"] for d in new["possible_duplicates"]] == [old]
    return old, new["memory"]["id"]


# -- recording ------------------------------------------------------------------------------


def test_save_records_the_pair_it_answers_and_open_lists_it(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    old, new = a_pair(service, principal)
    result = duplicates.open(principal)
    assert result["next_cursor"] is None
    [pair] = result["pairs"]
    assert pair["memory"]["id"] == new
    assert pair["duplicate_of"]["id"] == old
    assert pair["memory"]["content"] == THURSDAYS
    assert pair["duplicate_of"]["status"] == "active"
    assert 0.6 <= pair["similarity"] < 0.9
    # the same pair is not recorded twice, either way round
    service.update(principal, old, {"content": FRIDAYS + " afternoon"})
    assert len(duplicates.open(principal)["pairs"]) == 1


def test_update_records_the_pair_it_answers(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    one = service.save(principal, FRIDAYS, "fact")["memory"]["id"]
    two = service.save(principal, "The office cat is called Miso", "fact")["memory"]["id"]
    assert duplicates.open(principal)["pairs"] == []
    updated = service.update(principal, two, {"content": THURSDAYS})
    assert [d["id"] for d in updated["possible_duplicates"]] == [one]
    [pair] = duplicates.open(principal)["pairs"]
    assert (pair["memory"]["id"], pair["duplicate_of"]["id"]) == (two, one)


def test_a_refused_save_records_nothing(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    service.save(principal, FRIDAYS, "fact")
    before = snapshot(owner_pool, principal)
    with pytest.raises(InvalidInput):
        service.save(principal, THURSDAYS, "fact", related_to=[str(uuid.uuid4())])
    assert snapshot(owner_pool, principal) == before


def test_open_hides_pairs_whose_memory_is_gone_and_other_actors_pairs(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    old, _new = a_pair(service, principal)
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    a_pair(service, neighbour)
    assert len(duplicates.open(principal)["pairs"]) == 1
    assert len(duplicates.open(neighbour)["pairs"]) == 1
    service.delete(principal, old)
    assert duplicates.open(principal)["pairs"] == []
    service.restore(principal, old)
    assert len(duplicates.open(principal)["pairs"]) == 1


def test_open_pages_by_cursor(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    for one, two in (
        (FRIDAYS, THURSDAYS),
        ("The office cat is called Miso", "The office cat is called Tofu"),
        (
            "Backups of the billing database run at noon",
            "Backups of the billing database run at midnight",
        ),
    ):
        service.save(principal, one, "fact")
        assert service.save(principal, two, "fact")["possible_duplicates"] != []
    everything = duplicates.open(principal)["pairs"]
    assert len(everything) >= 3
    seen: list[str] = []
    cursor = None
    while True:
        page = duplicates.open(principal, limit=2, cursor=cursor)
        seen.extend(p["id"] for p in page["pairs"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [p["id"] for p in everything]
    with pytest.raises(InvalidInput, match="cursor"):
        duplicates.open(principal, cursor="bogus")
    with pytest.raises(InvalidInput, match="limit must be from 1 to 200"):
        duplicates.open(principal, limit=500)


# -- decisions ------------------------------------------------------------------------------


def test_keep_both_closes_the_pair_and_changes_no_memory(
    service: MemoryService,
    duplicates: DuplicateService,
    browse: BrowseService,
    principal: Principal,
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    decided = duplicates.decide(principal, pair["id"], "keep_both")
    assert decided["decision"] == "keep_both"
    assert decided["memory"] is None
    assert duplicates.open(principal)["pairs"] == []
    assert {m["id"] for m in browse.list(principal)["memories"]} == {old, new}
    with pytest.raises(InvalidInput, match="decided already"):
        duplicates.decide(principal, pair["id"], "keep_both")
    # saving the same text again does not reopen it
    service.update(principal, new, {"content": THURSDAYS + " morning"})
    service.update(principal, new, {"content": THURSDAYS})
    assert duplicates.open(principal)["pairs"] == []


def test_supersede_keeps_one_and_supersedes_the_other_as_save_does(
    service: MemoryService,
    duplicates: DuplicateService,
    browse: BrowseService,
    principal: Principal,
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    decided = duplicates.decide(principal, pair["id"], "supersede", keep=new)
    assert decided["kept_id"] == new
    assert decided["superseded_ids"] == [old]
    assert decided["memory"] is not None
    assert decided["memory"]["contexts"] == ["deploys"]  # filed where the other was
    detail = browse.get(principal, old)
    assert detail["status"] == "superseded"
    assert detail["superseded_by"] == new
    assert [link["id"] for link in browse.get(principal, new)["supersedes"]] == [old]
    assert duplicates.open(principal)["pairs"] == []
    # restore undoes it as it undoes save's supersession
    restored = service.restore(principal, old)
    assert restored["broken_supersession"] == new


def test_merge_gives_the_kept_memory_the_merged_text(
    service: MemoryService,
    duplicates: DuplicateService,
    browse: BrowseService,
    principal: Principal,
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    merged = "Deploys to production happen on Thursdays, and on Fridays in an emergency"
    decided = duplicates.decide(principal, pair["id"], "merge", keep=old, content=merged)
    assert decided["memory"] is not None
    assert decided["memory"]["content"] == merged
    assert decided["superseded_ids"] == [new]
    detail = browse.get(principal, old)
    assert [v["change"] for v in detail["versions"]] == ["created", "changed content"]
    assert browse.get(principal, new)["status"] == "superseded"


def test_merge_without_text_keeps_the_kept_text(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    _old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    decided = duplicates.decide(principal, pair["id"], "merge", keep=new)
    assert decided["memory"] is not None
    assert decided["memory"]["content"] == THURSDAYS
    assert decided["decision"] == "merge"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"decision": "delete_both"}, "decision must be one of keep_both, supersede, merge"),
        ({"decision": "supersede"}, "supersede needs keep"),
        ({"decision": "keep_both", "keep": "OLD"}, "do not name one in keep"),
        ({"decision": "supersede", "keep": "OLD", "content": "x"}, "only merge takes it"),
        ({"decision": "supersede", "keep": "not-an-id"}, "keep must be an id"),
        ({"decision": "supersede", "keep": "OTHER"}, "keep must be one of the pair"),
        ({"decision": "merge", "keep": "OLD", "content": ""}, "content"),
        (
            {"decision": "merge", "keep": "OLD", "content": "token ghp_" + "a1B2" * 9},
            "refusing to store this memory",
        ),
        ({"pair_id": "nope", "decision": "keep_both"}, "pair_id must be an id"),
    ],
)
def test_bad_decisions_say_what_to_fix_and_change_nothing(
    service: MemoryService,
    duplicates: DuplicateService,
    principal: Principal,
    owner_pool: ConnectionPool,
    arguments: dict[str, Any],
    message: str,
) -> None:
    old, _new = a_pair(service, principal)
    other = service.save(principal, "The office cat is called Miso", "fact")["memory"]["id"]
    [pair] = duplicates.open(principal)["pairs"]
    call: dict[str, Any] = {"pair_id": pair["id"], **arguments}
    if call.get("keep") == "OLD":
        call["keep"] = old
    if call.get("keep") == "OTHER":
        call["keep"] = other
    before = snapshot(owner_pool, principal)
    with pytest.raises(InvalidInput, match=message):
        duplicates.decide(principal, **call)
    assert snapshot(owner_pool, principal) == before


def test_another_actors_pair_is_not_found_like_a_missing_one(
    service: MemoryService,
    duplicates: DuplicateService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    _old, new = a_pair(service, neighbour)
    [theirs] = duplicates.open(neighbour)["pairs"]
    before = snapshot(owner_pool, neighbour)
    missing = str(uuid.uuid4())
    with pytest.raises(ObjectNotFound) as their_error:
        duplicates.decide(principal, theirs["id"], "supersede", keep=new)
    with pytest.raises(ObjectNotFound) as missing_error:
        duplicates.decide(principal, missing, "supersede", keep=new)
    assert str(their_error.value).replace(theirs["id"], "X") == str(missing_error.value).replace(
        missing, "X"
    )
    with pytest.raises(ObjectNotFound):
        duplicates.decide(principal, theirs["id"], "keep_both")
    assert snapshot(owner_pool, neighbour) == before


def test_deciding_needs_write_and_a_global_pair_needs_admin(
    admin: Principal,
    service: MemoryService,
    duplicates: DuplicateService,
    principal: Principal,
) -> None:
    _old, _new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    assert len(duplicates.open(reader)["pairs"]) == 1
    with pytest.raises(PermissionDenied, match="memory:write"):
        duplicates.decide(reader, pair["id"], "keep_both")
    g_old = service.save(admin, FRIDAYS, "fact", scope="global")["memory"]["id"]
    g_new = service.save(admin, THURSDAYS, "fact", scope="global")["memory"]["id"]
    [global_pair] = duplicates.open(admin)["pairs"]
    decided = duplicates.decide(admin, global_pair["id"], "supersede", keep=g_new)
    assert decided["superseded_ids"] == [g_old]


def test_supersede_a_memory_gone_meanwhile_is_refused(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    service.delete(principal, old)
    with pytest.raises(InvalidInput, match="is deleted; restore it first"):
        duplicates.decide(principal, pair["id"], "supersede", keep=new)
    # the pair stays undecided (hidden while a memory is deleted)
    service.restore(principal, old)
    assert len(duplicates.open(principal)["pairs"]) == 1


# -- bulk delete and restore ----------------------------------------------------------------


def test_bulk_delete_and_restore_each_id_on_its_own(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    mine = [
        service.save(principal, f"Memory number {n} about topic {n * 7}", "fact")["memory"]["id"]
        for n in range(3)
    ]
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    theirs = service.save(neighbour, "The neighbour's own memory", "fact")["memory"]["id"]
    before = snapshot(owner_pool, neighbour)
    missing = str(uuid.uuid4())
    result = service.bulk_delete(principal, [mine[0], theirs, missing, mine[1], "bad-id", mine[0]])
    assert result["changed"] == 2
    by_id = {r["id"]: r for r in result["results"]}
    assert [r["id"] for r in result["results"]] == [mine[0], theirs, missing, mine[1], "bad-id"]
    assert by_id[mine[0]] == {"id": mine[0], "ok": True}
    assert by_id[theirs]["error"]["code"] == "not_found"
    assert by_id[missing]["error"]["code"] == "not_found"
    assert by_id[theirs]["error"]["message"].replace(theirs, "X") == by_id[missing]["error"][
        "message"
    ].replace(missing, "X")
    assert by_id["bad-id"]["error"]["code"] == "invalid_input"
    assert snapshot(owner_pool, neighbour) == before
    assert [m["id"] for m in browse.list(principal)["memories"]] == [mine[2]]

    restored = service.bulk_restore(principal, [mine[0], mine[1], mine[2], theirs])
    assert restored["changed"] == 2
    outcome = {r["id"]: r for r in restored["results"]}
    assert outcome[mine[2]]["error"]["code"] == "invalid_input"  # active: nothing to restore
    assert outcome[theirs]["error"]["code"] == "not_found"
    assert snapshot(owner_pool, neighbour) == before
    assert len(browse.list(principal)["memories"]) == 3


def test_bulk_of_a_global_memory_needs_admin(
    service: MemoryService, principal: Principal, admin: Principal
) -> None:
    shared = service.save(admin, "Company-wide: use UTC in logs", "instruction", scope="global")
    result = service.bulk_delete(principal, [shared["memory"]["id"]])
    assert result["changed"] == 0
    assert result["results"][0]["error"]["code"] == "forbidden"
    assert service.bulk_delete(admin, [shared["memory"]["id"]])["changed"] == 1


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([], "ids is empty"),
        ("abc", "ids must be a list"),
        ([1, 2], "ids must be a list of memory ids"),
        ([str(uuid.uuid4()) for _ in range(201)], "the limit is 200"),
    ],
)
def test_bulk_refuses_bad_lists(
    service: MemoryService, principal: Principal, ids: Any, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        service.bulk_delete(principal, ids)
    with pytest.raises(InvalidInput, match=message):
        service.bulk_restore(principal, ids)


def test_bulk_needs_write(service: MemoryService, principal: Principal) -> None:
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied, match="memory:write"):
        service.bulk_delete(reader, [str(uuid.uuid4())])


# -- why a pair waits, how many wait, and undo -------------------------------------------


def test_each_pair_says_why_it_waits_and_the_count_is_what_open_lists(
    service: MemoryService,
    duplicates: DuplicateService,
    principal: Principal,
    pool: ConnectionPool,
) -> None:
    assert duplicates.pending(principal) == 0
    a_pair(service, principal)  # another day, no change word: a conflict
    told = "The user prefers pnpm over npm in this repository"
    service.save(principal, told, "preference", source="explicit")
    inferred = service.save(
        principal, "In this repository the user prefers pnpm over npm", "preference"
    )
    assert inferred["possible_duplicates"][0]["kept_because"].startswith("kept beside it")
    cat = service.save(principal, "The office cat is called Miso", "fact")["memory"]["id"]
    service.update(principal, cat, {"content": "Deploys to production happen on Mondays"})
    pairs = duplicates.open(principal)["pairs"]
    assert duplicates.pending(principal) == len(pairs) == 3
    why = {p["memory"]["content"]: p["why"] for p in pairs}
    assert why[THURSDAYS] == pair_why("different value")
    assert why[THURSDAYS].startswith("the same subject with another value")
    assert why["In this repository the user prefers pnpm over npm"].startswith(
        "kept beside it: an inferred memory does not replace an explicit one"
    )
    assert why["Deploys to production happen on Mondays"] == "an edit made it close to the other"
    # another actor's count, and a credential that may not read
    assert duplicates.pending(Principal(uuid.uuid4(), principal.project_id)) == 0
    blind = Principal(principal.actor_id, principal.project_id, frozenset())
    assert duplicates.pending(blind) == 0
    duplicates.decide(principal, pairs[0]["id"], "keep_both")
    assert duplicates.pending(principal) == 2


def test_a_pair_recorded_before_reasons_were_kept_says_so(
    service: MemoryService, duplicates: DuplicateService, principal: Principal, pool: ConnectionPool
) -> None:
    a_pair(service, principal)
    with pool.connection() as conn:
        graph.act_as(conn, principal.actor_id, principal.project_id)
        conn.execute("UPDATE kb.possible_duplicates SET reason = NULL")
    [pair] = duplicates.open(principal)["pairs"]
    assert pair["why"] == "close in meaning; the save could not tell whether it is the same fact"


def test_undo_of_keep_both_makes_the_conflict_link_again_and_reopens_the_pair(
    service: MemoryService, duplicates: DuplicateService, principal: Principal
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    assert pair["conflict"] is True
    duplicates.decide(principal, pair["id"], "keep_both")
    assert service.list_memories(principal)["memories"][0]["conflicts_with"] == []
    undone = duplicates.undo(principal, pair["id"])
    assert undone == {
        "id": pair["id"],
        "undone": "keep_both",
        "restored_id": None,
        "relinked": True,
    }
    [again] = duplicates.open(principal)["pairs"]
    assert (again["id"], again["conflict"]) == (pair["id"], True)
    records = {m["id"]: m for m in service.list_memories(principal)["memories"]}
    assert records[new]["conflicts_with"] == [old]
    with pytest.raises(InvalidInput, match="waits for a decision; there is nothing to undo"):
        duplicates.undo(principal, pair["id"])
    # decided and undone again: the same pair, the same link, once
    duplicates.decide(principal, pair["id"], "keep_both")
    assert duplicates.undo(principal, pair["id"])["relinked"] is True
    records = {m["id"]: m for m in service.list_memories(principal)["memories"]}
    assert records[old]["conflicts_with"] == [new]


def test_undo_of_supersede_restores_the_other_and_reopens_the_pair(
    service: MemoryService,
    duplicates: DuplicateService,
    browse: BrowseService,
    principal: Principal,
) -> None:
    old, new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    duplicates.decide(principal, pair["id"], "supersede", keep=old)
    assert browse.get(principal, new)["status"] == "superseded"
    undone = duplicates.undo(principal, pair["id"])
    assert undone == {
        "id": pair["id"],
        "undone": "supersede",
        "restored_id": new,
        "relinked": False,
    }
    assert browse.get(principal, new)["status"] == "active"
    assert browse.get(principal, old)["status"] == "active"
    assert [p["id"] for p in duplicates.open(principal)["pairs"]] == [pair["id"]]


def test_undo_of_supersede_gives_back_what_the_kept_memory_took_from_the_other(
    service: MemoryService,
    duplicates: DuplicateService,
    browse: BrowseService,
    principal: Principal,
) -> None:
    """Keeping the weaker memory makes it take the stronger one's source, importance,
    confidence, rationale and contexts (nothing lost); undoing that decision gives them back,
    so the stronger memory is the current side of their conflict again. A property edited
    since the decision is the person's, and stays."""
    strong = service.save(principal, FRIDAYS, "fact", source="explicit", importance="high",
                          rationale="the release calendar", context="deploys")  # fmt: skip
    weak = service.save(principal, THURSDAYS, "fact")
    old, new = strong["memory"]["id"], weak["memory"]["id"]
    assert [d["id"] for d in weak["possible_duplicates"]] == [old]
    [pair] = duplicates.open(principal)["pairs"]
    assert pair["conflict"]  # another day of the same subject: linked as a conflict
    before = browse.get(principal, new)
    assert (before["source"], before["importance"]) == ("inferred", "normal")
    assert before["contexts"] == []

    decided = duplicates.decide(principal, pair["id"], "supersede", keep=new)["memory"]
    assert decided is not None
    assert (decided["source"], decided["importance"], decided["rationale"]) == (
        "explicit",
        "high",
        "the release calendar",
    )
    assert decided["confidence"] == 1.0
    assert decided["contexts"] == ["deploys"]

    duplicates.undo(principal, pair["id"])
    after = browse.get(principal, new)
    for field in ("source", "importance", "rationale", "confidence", "contexts", "content"):
        assert after[field] == before[field], field
    [kept_strong] = [m for m in service.recall(principal, "deploys to production")["memories"]
                     if m["id"] == old]  # fmt: skip
    assert browse.get(principal, old)["contexts"] == ["deploys"]
    assert kept_strong["conflict"] == "current"  # the explicit one is current again
    # the history says what the kept one took over, and that it gave it back
    taken = "confidence, source, importance, rationale"
    assert [v["change"] for v in after["versions"]] == [
        "created",
        f"took over {taken} from {old}, which it replaced",
        f"gave back the {taken} it took from {old} (the replacement was undone)",
    ]

    # decided again, then the importance edited by a person: undo leaves that edit alone
    duplicates.decide(principal, pair["id"], "supersede", keep=new)
    service.update(principal, new, {"importance": "low"})
    duplicates.undo(principal, pair["id"])
    edited = browse.get(principal, new)
    assert (edited["importance"], edited["source"], edited["contexts"]) == ("low", "inferred", [])


def test_undo_refuses_a_merge_an_open_pair_and_other_actors_pairs_changing_nothing(
    service: MemoryService,
    duplicates: DuplicateService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    old, _new = a_pair(service, principal)
    [pair] = duplicates.open(principal)["pairs"]
    with pytest.raises(InvalidInput, match="nothing to undo"):
        duplicates.undo(principal, pair["id"])
    stranger = Principal(uuid.uuid4(), principal.project_id)
    duplicates.decide(principal, pair["id"], "merge", keep=old)
    before = snapshot(owner_pool, principal)
    with pytest.raises(InvalidInput, match="a merge is undone on the memories' pages"):
        duplicates.undo(principal, pair["id"])
    with pytest.raises(ObjectNotFound, match=f"possible duplicate {pair['id']} not found"):
        duplicates.undo(stranger, pair["id"])
    missing = str(uuid.uuid4())
    with pytest.raises(ObjectNotFound, match=f"possible duplicate {missing} not found"):
        duplicates.undo(principal, missing)
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied):
        duplicates.undo(reader, pair["id"])
    with pytest.raises(InvalidInput, match="pair_id"):
        duplicates.undo(principal, "not-an-id")
    assert snapshot(owner_pool, principal) == before
