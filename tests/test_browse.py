"""BrowseService on the real database: the memory list (filters, sorts, cursor pages at
10,000 memories), a memory's page, contexts, statistics, the injection log, LLM usage and the
capture queue, each for one actor only (row-level security), with bad input refused."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.errors import InvalidInput, MemoryNotFound, ObjectNotFound, PermissionDenied
from emergent_memory.graph import rls as graph_rls
from emergent_memory.memory import MemoryService, browse_store
from emergent_memory.memory.browse import BrowseService, cost_usd, model_price
from emergent_memory.memory.models import CATEGORIES

MakeService = Callable[..., MemoryService]

# Memories of one actor in bulk: `n` of them, created a minute apart (the first the newest),
# categories in turn, confidence 0.7/0.9/1.0 in turn, in the actor's project, user scope.
BULK_MEMORIES = """
INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, type,
                              properties, labels, created_at, updated_at)
SELECT gen_random_uuid(), 1, %(project_id)s, %(actor_id)s, 'user', 'Memory',
       jsonb_build_object('content', 'bulk memory ' || i || ' ' || md5(i::text),
                          'category', (%(categories)s::text[])[1 + i %% 6],
                          'source', 'inferred', 'scope', 'user',
                          'confidence', (ARRAY[0.7, 0.9, 1.0])[1 + i %% 3]),
       ARRAY['memory', (%(categories)s::text[])[1 + i %% 6], 'user'],
       %(start)s - make_interval(mins => i), %(start)s - make_interval(mins => i)
FROM generate_series(1, %(n)s) i
"""


Bulk = Callable[[Principal, int], None]


def add_bulk(owner_pool: ConnectionPool, principal: Principal, n: int) -> None:
    """Adds `n` memories of an actor in one statement (BULK_MEMORIES)."""
    with owner_pool.connection() as conn:
        conn.execute(
            BULK_MEMORIES,
            {
                "actor_id": principal.actor_id,
                "project_id": principal.project_id,
                "categories": list(CATEGORIES),
                "start": datetime.now(UTC),
                "n": n,
            },
        )


def remove_bulk(owner_pool: ConnectionPool, actors: list[Principal]) -> None:
    """Removes the actors' bulk memories, with their recalls: they have no vector, and the
    session's database is shared with the tests of re-embedding and of the embedding worker."""
    with owner_pool.connection() as conn:
        for actor in actors:
            conn.execute("DELETE FROM kb.memory_recalls WHERE actor_id = %s", (actor.actor_id,))
            conn.execute(
                "DELETE FROM kb.graph_objects WHERE actor_id = %s AND type = 'Memory' "
                "AND properties ->> 'content' LIKE 'bulk memory %%'",
                (actor.actor_id,),
            )


@pytest.fixture
def bulk(owner_pool: ConnectionPool) -> Iterator[Bulk]:
    """Adds `n` memories of an actor (add_bulk); they are removed when the test ends."""
    actors: list[Principal] = []

    def add(principal: Principal, n: int) -> None:
        actors.append(principal)
        add_bulk(owner_pool, principal, n)

    yield add
    remove_bulk(owner_pool, actors)


@pytest.fixture(scope="module")
def ten_thousand(owner_pool: ConnectionPool) -> Iterator[Principal]:
    """An actor with 10,000 bulk memories, some of them used, shared by the module's tests
    that only read them (seeding and removing them takes longer than walking them)."""
    principal = Principal(actor_id=uuid.uuid4(), project_id=uuid.uuid4())
    add_bulk(owner_pool, principal, 10_000)
    with owner_pool.connection() as conn:  # some uses, so that both parts of a use sort show
        conn.execute(
            "INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at) "
            "SELECT canonical_id, actor_id, project_id, now() - make_interval(secs => n) "
            "FROM kb.graph_objects, generate_series(1, 2) n "
            "WHERE actor_id = %s AND right(canonical_id::text, 1) IN ('0', '1')",
            (principal.actor_id,),
        )
    with owner_pool.connection() as conn:  # statistics, as autovacuum keeps them
        conn.execute("ANALYZE kb.graph_objects, kb.memory_recalls")
    yield principal
    remove_bulk(owner_pool, [principal])


def count_rows(owner_pool: ConnectionPool, actor: Principal) -> tuple[int, int, int]:
    """Every row an actor has in the graph and the duplicate pairs (all versions)."""
    with owner_pool.connection() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM kb.graph_objects WHERE actor_id = %(a)s),"
            " (SELECT count(*) FROM kb.graph_relationships WHERE actor_id = %(a)s),"
            " (SELECT count(*) FROM kb.possible_duplicates WHERE actor_id = %(a)s)",
            {"a": actor.actor_id},
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


@pytest.fixture
def service(make_service: MakeService) -> MemoryService:
    """Saves supersede a close memory that says it changed (as in production's calibrated
    bands), and report a close one that does not as a possible duplicate."""
    return make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)


@pytest.fixture
def admin(global_memories_cleanup: None) -> Principal:
    """An administrator; the global memories of the test are removed when it ends (every
    actor sees them: left behind, they would show in other tests' lists)."""
    return Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))


@pytest.fixture
def browse(pool: ConnectionPool) -> BrowseService:
    return BrowseService(pool)


def ids(result: Any) -> list[str]:
    return [m["id"] for m in result["memories"]]


# -- list -----------------------------------------------------------------------------------


def test_list_shows_the_callers_memories_newest_first_with_status_and_project(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    first = service.save(principal, "The user prefers tabs over spaces", "preference")
    second = service.save(principal, "The API listens on port 8080", "fact", scope="project")
    result = browse.list(principal)
    assert ids(result) == [second["memory"]["id"], first["memory"]["id"]]
    assert result["next_cursor"] is None
    shown = result["memories"][0]
    assert shown["status"] == "active"
    assert shown["superseded_by"] is None
    assert shown["deleted_at"] is None
    assert shown["project_id"] == str(principal.project_id)
    assert shown["content"] == "The API listens on port 8080"
    assert shown["scope"] == "project"
    assert shown["use_count"] == 0
    assert ids(browse.list(principal, sort="oldest")) == ids(result)[::-1]


def test_list_by_status(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    kept = service.save(principal, "The build uses make", "fact")["memory"]["id"]
    gone = service.save(principal, "The cache lives in redis", "fact")["memory"]["id"]
    service.delete(principal, gone)
    old = service.save(principal, "The staging database is called stage1", "fact")
    new = service.save(principal, "The staging database is now called stage2", "fact")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    assert set(ids(browse.list(principal))) == {kept, new_id}
    deleted = browse.list(principal, status="deleted")
    assert ids(deleted) == [gone]
    assert deleted["memories"][0]["status"] == "deleted"
    assert deleted["memories"][0]["deleted_at"] is not None
    superseded = browse.list(principal, status="superseded")
    assert ids(superseded) == [old_id]
    assert superseded["memories"][0]["superseded_by"] == new_id
    assert set(ids(browse.list(principal, status="all"))) == {kept, gone, old_id, new_id}


def test_each_filter(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    pref = service.save(principal, "The user prefers dark mode", "preference", context="ui")
    fact = service.save(principal, "Deploys go to the staging cluster first", "fact")
    proj = service.save(principal, "This repository uses ruff", "convention", scope="project")
    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    far = service.save(elsewhere, "Kubernetes manifests are in deploy/k8s", "fact")
    p_id, f_id, j_id, far_id = (r["memory"]["id"] for r in (pref, fact, proj, far))
    # user-scope memories saved in another project are visible here too
    assert set(ids(browse.list(principal))) == {p_id, f_id, j_id, far_id}
    assert ids(browse.list(principal, category="preference")) == [p_id]
    assert ids(browse.list(principal, scope="project")) == [j_id]
    assert set(ids(browse.list(principal, scope="user"))) == {p_id, f_id, far_id}
    assert ids(browse.list(principal, scope="global")) == []
    assert ids(browse.list(principal, project_id=elsewhere.project_id)) == [far_id]
    assert ids(browse.list(principal, project_id=str(elsewhere.project_id))) == [far_id]
    assert ids(browse.list(principal, context="UI")) == [p_id]
    assert ids(browse.list(principal, context="nothing-filed-here")) == []
    assert ids(browse.list(principal, text="staging deploys")) == [f_id]
    assert ids(browse.list(principal, text='"dark mode" -light')) == [p_id]
    # dates: move one memory back in time
    with owner_pool.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET created_at = %s WHERE canonical_id = %s",
            (datetime(2020, 5, 1, tzinfo=UTC), f_id),
        )
    assert ids(browse.list(principal, created_before="2021-01-01")) == [f_id]
    assert f_id not in ids(browse.list(principal, created_after=datetime(2021, 1, 1, tzinfo=UTC)))
    assert ids(browse.list(principal, created_after="2020-04-30", created_before="2020-05-02")) == [
        f_id
    ]
    # uses: recall one memory
    service.recall(principal, "dark mode")
    used = browse.list(principal, used_after=datetime.now(UTC) - timedelta(minutes=5))
    assert ids(used) == [p_id]
    assert used["memories"][0]["use_count"] == 1
    assert ids(browse.list(principal, used_before=datetime.now(UTC) - timedelta(minutes=5))) == []


def test_each_sort(service: MemoryService, browse: BrowseService, principal: Principal) -> None:
    a = service.save(principal, "Alpha services run on python", "fact", source="explicit")
    b = service.save(principal, "Beta services run on golang", "fact", source="corrected")
    c = service.save(principal, "Gamma services run on rust", "fact")
    a_id, b_id, c_id = (r["memory"]["id"] for r in (a, b, c))
    service.recall(principal, "golang beta")
    service.recall(principal, "golang beta")
    service.recall(principal, "alpha python")
    assert ids(browse.list(principal, sort="recent")) == [c_id, b_id, a_id]
    assert ids(browse.list(principal, sort="oldest")) == [a_id, b_id, c_id]
    assert ids(browse.list(principal, sort="most_used")) == [b_id, a_id, c_id]
    assert ids(browse.list(principal, sort="least_used")) == [c_id, a_id, b_id]
    assert ids(browse.list(principal, sort="last_used")) == [a_id, b_id, c_id]
    assert ids(browse.list(principal, sort="confidence")) == [a_id, b_id, c_id]
    used = browse.list(principal, sort="most_used")["memories"]
    assert [m["use_count"] for m in used] == [2, 1, 0]


@pytest.mark.parametrize(
    "sort", ["recent", "oldest", "most_used", "least_used", "last_used", "confidence"]
)
def test_cursor_pages_cover_ten_thousand_memories_once_each(
    ten_thousand: Principal, browse: BrowseService, sort: str
) -> None:
    principal = ten_thousand
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = browse.list(principal, sort=sort, cursor=cursor, limit=200)
        seen.extend(ids(result))
        pages += 1
        cursor = result["next_cursor"]
        if cursor is None:
            break
        assert len(result["memories"]) == 200
    assert pages == 50
    assert len(seen) == 10_000
    assert len(set(seen)) == 10_000
    if sort == "recent":  # one a minute, the first the newest
        contents = [m["content"] for m in browse.list(principal, sort=sort, limit=3)["memories"]]
        assert [c.split()[2] for c in contents] == ["1", "2", "3"]


@pytest.mark.parametrize(
    "sort", ["recent", "oldest", "most_used", "least_used", "last_used", "confidence"]
)
def test_numbered_pages_count_and_walk_both_ways_as_the_list_does(
    ten_thousand: Principal,
    browse: BrowseService,
    principal: Principal,
    sort: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sort (the use sorts in their two parts, used and never used, whose boundary the
    walks cross): next and previous, nearby pages and jumps by number from either end give
    exactly the list's pages; the total is every memory of the actor and no other's."""
    owner = ten_thousand
    everything: list[str] = []
    cursor = None
    while True:
        result = browse.list(owner, sort=sort, cursor=cursor, limit=200)
        everything += ids(result)
        if (cursor := result["next_cursor"]) is None:
            break

    def rows(number: int) -> list[str]:
        return everything[(number - 1) * 200 : number * 200]

    assert browse.numbered_page(principal, sort=sort, limit=200)["total"] == 0  # RLS
    for start, end in ((8, 12), (38, 43)):
        shown = browse.numbered_page(owner, sort=sort, page=start, limit=200)
        assert (shown["total"], shown["pages"], shown["page"]) == (10_000, 50, start)
        assert ids(shown) == rows(start)
        for number in range(start + 1, end + 1):  # on by next
            shown = browse.numbered_page(owner, sort=sort, cursor=shown["next_cursor"], limit=200)
            assert (shown["page"], ids(shown)) == (number, rows(number))
        for link in shown["nearby"]:
            near = browse.numbered_page(owner, sort=sort, cursor=link["cursor"], limit=200)
            assert (near["page"], ids(near)) == (link["page"], rows(link["page"]))
        for number in range(end - 1, start - 1, -1):  # back by previous
            assert shown["has_previous"]
            shown = browse.numbered_page(
                owner, sort=sort, cursor=shown["previous_cursor"], limit=200
            )
            assert (shown["page"], ids(shown)) == (number, rows(number))
    last = browse.numbered_page(owner, sort=sort, page=50, limit=200)
    assert ids(last) == rows(50)
    assert last["next_cursor"] is None
    second = browse.numbered_page(owner, sort=sort, page=2, limit=200)
    assert second["previous_cursor"] is None  # the previous page is the first: no cursor
    assert second["has_previous"]
    assert [link["page"] for link in second["nearby"]] == [1, 3, 4]
    from emergent_memory.memory import browse as browse_module

    monkeypatch.setattr(browse_module, "JUMP_ROWS", 1_000)
    with pytest.raises(InvalidInput, match="page 25 of 50 is more than 1,000 memories"):
        browse.numbered_page(owner, sort=sort, page=25, limit=200)
    assert ids(browse.numbered_page(owner, sort=sort, page=46, limit=200)) == rows(46)


def test_a_numbered_page_whose_rows_went_gives_way_to_the_first_or_last(
    browse: BrowseService, service: MemoryService, principal: Principal, bulk: Bulk
) -> None:
    bulk(principal, 35)
    pages = [browse.numbered_page(principal, limit=10)]
    for _ in range(3):
        pages.append(browse.numbered_page(principal, cursor=pages[-1]["next_cursor"], limit=10))
    first, second, third, fourth = pages
    assert (fourth["page"], len(fourth["memories"]), fourth["next_cursor"]) == (4, 5, None)
    for memory_id in ids(fourth):
        service.delete(principal, memory_id)
    gone = browse.numbered_page(principal, cursor=third["next_cursor"], limit=10)
    assert (gone["page"], gone["pages"], ids(gone)) == (3, 3, ids(third))  # the last page
    for memory_id in ids(first) + ids(second):
        service.delete(principal, memory_id)
    assert third["previous_cursor"] is not None
    back = browse.numbered_page(principal, cursor=third["previous_cursor"], limit=10)
    assert (back["page"], back["pages"], ids(back)) == (1, 1, ids(third))  # the first page
    with pytest.raises(InvalidInput, match="cursor is not one this list gave"):
        browse.list(principal, cursor=third["previous_cursor"])  # not a next_cursor


def test_matching_ids_and_what_a_change_of_many_changed(
    browse: BrowseService, service: MemoryService, principal: Principal
) -> None:
    facts = [
        service.save(principal, f"Fact number {n} xq{n}z", "fact")["memory"]["id"] for n in range(3)
    ]
    service.save(principal, "An instruction to keep", "instruction")
    assert sorted(browse.matching_ids(principal, 3, category="fact")) == sorted(facts)
    assert browse.count(principal, category="fact") == 3
    moved = service.save(principal, "A fact that becomes an instruction", "fact")["memory"]["id"]
    service.update(principal, moved, {"category": "instruction"})  # counted by its new one
    assert (browse.count(principal, category="fact"), browse.count(principal)) == (3, 5)
    assert browse.count(principal, category="instruction") == 2
    with pytest.raises(InvalidInput, match=r"3 memories match these filters.*at most 2"):
        browse.matching_ids(principal, 2, category="fact")
    service.bulk_delete(principal, facts[:2], reason="change A")
    service.delete(principal, facts[2], reason="change B")
    other = Principal(uuid.uuid4(), uuid.uuid4())
    theirs = service.save(other, "Their fact to delete", "fact")["memory"]["id"]
    service.bulk_delete(other, [theirs], reason="change A")
    assert sorted(browse.changed_together(principal, "delete", "change A", 10)) == sorted(facts[:2])
    assert browse.changed_together(principal, "archive", "change A", 10) == []
    with pytest.raises(InvalidInput, match="delete or archive"):
        browse.changed_together(principal, "restore", "change A", 10)


def test_a_page_in_the_middle_continues_where_the_last_stopped(
    browse: BrowseService, principal: Principal, bulk: Bulk
) -> None:
    bulk(principal, 120)
    everything = ids(browse.list(principal, sort="confidence", limit=200))
    first = browse.list(principal, sort="confidence", limit=50)
    second = browse.list(principal, sort="confidence", limit=50, cursor=first["next_cursor"])
    assert ids(first) + ids(second) == everything[:100]
    by_category = browse.list(principal, category="fact", limit=7)
    rest = browse.list(principal, category="fact", limit=200, cursor=by_category["next_cursor"])
    assert len(ids(by_category) + ids(rest)) == 20
    assert all(m["category"] == "fact" for m in by_category["memories"] + rest["memories"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"status": "archive"},
            "status must be one of active, archived, superseded, deleted, all",
        ),
        ({"importance": "urgent"}, "importance must be one of low, normal, high, core"),
        ({"sort": "random"}, "sort must be one of recent"),
        ({"limit": 0}, "limit must be from 1 to 200"),
        ({"limit": 201}, "limit must be from 1 to 200"),
        ({"limit": "ten"}, "limit must be a whole number"),
        ({"category": "gossip"}, "category must be one of"),
        ({"scope": "team"}, "scope must be one of"),
        ({"project_id": "not-an-id"}, "project_id must be an id"),
        ({"created_after": "yesterday"}, "created_after must be an ISO 8601 date"),
        ({"used_before": "2026-13-01"}, "used_before must be an ISO 8601 date"),
        ({"created_before": 20260101}, "created_before must be an ISO 8601 date"),
        (
            {"created_after": "2026-02-01", "created_before": "2026-01-01"},
            "created_after must be earlier than created_before",
        ),
        ({"text": "   "}, "text must be some words"),
        ({"text": "the and of"}, "text has no word to search for"),
        ({"text": "x" * 501}, "the limit is 500"),
        ({"context": ""}, "context must be a non-empty name"),
        ({"cursor": "not a cursor"}, "cursor is not one this list gave"),
        ({"cursor": "eyJ2IjogMX0"}, "cursor is not one this list gave"),
        ({"cursor": ""}, "cursor is not one this list gave"),
    ],
)
def test_bad_input_says_what_to_fix_and_writes_nothing(
    browse: BrowseService,
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
    arguments: dict[str, Any],
    message: str,
) -> None:
    service.save(principal, "Something to list", "fact")
    before = count_rows(owner_pool, principal)
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(")):
        browse.list(principal, **arguments)
    assert count_rows(owner_pool, principal) == before


def test_a_cursor_of_another_sort_or_filter_is_refused(
    browse: BrowseService, principal: Principal, bulk: Bulk
) -> None:
    bulk(principal, 5)
    cursor = browse.list(principal, limit=2)["next_cursor"]
    assert cursor is not None
    with pytest.raises(InvalidInput, match="other filters or another sort"):
        browse.list(principal, sort="oldest", cursor=cursor)
    with pytest.raises(InvalidInput, match="other filters or another sort"):
        browse.list(principal, category="fact", cursor=cursor)
    tampered = cursor[:-4] + ("AAAA" if not cursor.endswith("AAAA") else "BBBB")
    with pytest.raises(InvalidInput, match="cursor"):
        browse.list(principal, cursor=tampered)


def test_another_actors_memories_never_show(
    service: MemoryService, browse: BrowseService, principal: Principal, bulk: Bulk
) -> None:
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    theirs = service.save(neighbour, "Neighbour's secret plan for the deploy", "fact")
    service.save(neighbour, "Neighbour's project convention", "convention", scope="project")
    bulk(neighbour, 30)
    mine = service.save(principal, "My own memory", "fact")["memory"]["id"]
    for status in ("active", "all"):
        assert ids(browse.list(principal, status=status)) == [mine]
    assert ids(browse.list(principal, text="neighbour secret plan")) == []
    assert ids(browse.list(principal, project_id=principal.project_id)) == [mine]
    with pytest.raises(MemoryNotFound) as theirs_error:
        browse.get(principal, theirs["memory"]["id"])
    missing = str(uuid.uuid4())
    with pytest.raises(MemoryNotFound) as missing_error:
        browse.get(principal, missing)
    assert str(theirs_error.value).replace(theirs["memory"]["id"], "X") == str(
        missing_error.value
    ).replace(missing, "X")


def test_global_memories_are_listed_for_everyone(
    admin: Principal, service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    shared = service.save(
        admin, "Company-wide: deploys freeze on Fridays", "instruction", scope="global"
    )["memory"]["id"]
    mine = service.save(principal, "I like short answers", "preference")["memory"]["id"]
    assert set(ids(browse.list(principal))) == {shared, mine}
    assert ids(browse.list(principal, scope="global")) == [shared]
    assert browse.get(principal, shared)["scope"] == "global"


def test_read_needs_a_read_scope(browse: BrowseService) -> None:
    nobody = Principal(uuid.uuid4(), uuid.uuid4(), frozenset())
    with pytest.raises(PermissionDenied, match="memory:read"):
        browse.list(nobody)
    with pytest.raises(PermissionDenied, match="memory:read"):
        browse.get(nobody, str(uuid.uuid4()))


# -- get ------------------------------------------------------------------------------------


def test_get_shows_versions_chains_relationships_and_uses(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    first = service.save(principal, "The staging database is called stage1", "fact", context="ops")
    second = service.save(principal, "The staging database is now called stage2", "fact")
    third = service.save(
        principal, "The staging database was renamed, it is now called stage3", "fact"
    )
    one, two, three = (r["memory"]["id"] for r in (first, second, third))
    assert second["superseded_ids"] == [one]
    assert third["superseded_ids"] == [two]
    service.update(principal, three, {"confidence": 0.95})
    service.update(principal, three, {"content": "The staging database is now called stage-3"})
    service.recall(principal, "staging database")

    detail = browse.get(principal, three)
    assert detail["status"] == "active"
    assert detail["content"] == "The staging database is now called stage-3"
    assert [v["version"] for v in detail["versions"]] == [1, 2, 3]
    assert [v["change"] for v in detail["versions"]] == [
        "created",
        "changed confidence",
        "changed content",
    ]
    assert detail["versions"][1]["changed"] == ["confidence"]
    assert detail["versions"][0]["content"] == third["memory"]["content"]
    assert [link["id"] for link in detail["supersedes"]] == [two, one]
    assert {link["status"] for link in detail["supersedes"]} == {"superseded"}
    assert detail["superseded_by_chain"] == []
    assert detail["contexts"] == ["ops"]  # the replacement stays where the old was filed
    assert detail["use_count"] == 1
    assert len(detail["recalls"]) == 1
    kinds = {(r["type"], r["direction"], r["other_id"]) for r in detail["relationships"]}
    assert ("SUPERSEDES", "out", two) in kinds
    assert any(
        r["type"] == "BELONGS_TO_CONTEXT" and r["other_label"] == "ops"
        for r in detail["relationships"]
    )

    oldest = browse.get(principal, one)
    assert oldest["status"] == "superseded"
    assert [link["id"] for link in oldest["superseded_by_chain"]] == [two, three]
    assert oldest["supersedes"] == []
    assert oldest["versions"][-1]["change"] == f"superseded by {two}"

    service.delete(principal, one)
    gone = browse.get(principal, one)
    assert gone["status"] == "deleted"
    assert gone["versions"][-1]["change"].startswith("deleted")


def test_get_refuses_a_bad_id(browse: BrowseService, principal: Principal) -> None:
    with pytest.raises(InvalidInput, match="is not a memory id"):
        browse.get(principal, "42")


# -- contexts -------------------------------------------------------------------------------


def test_contexts_list_rename_and_priority(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    service.save(principal, "Use CSS grid for layouts", "convention", context="frontend")
    service.save(principal, "Components live in src/ui", "fact", context="frontend")
    gone = service.save(principal, "The API is versioned", "fact", context="Backend")
    service.delete(principal, gone["memory"]["id"])
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    service.save(neighbour, "Their own filing", "fact", context="theirs")
    found = browse.contexts(principal)
    assert [(c["name"], c["priority"], c["memory_count"]) for c in found] == [
        ("Backend", 50, 0),
        ("frontend", 50, 2),
    ]
    front = found[1]["id"]
    renamed = browse.rename_context(principal, front, "  web   frontend ")
    assert renamed == {"id": front, "name": "web frontend", "priority": 50, "memory_count": 2}
    assert ids(browse.list(principal, context="web frontend")) != []
    assert ids(browse.list(principal, context="frontend")) == []
    assert browse.rename_context(principal, front, "Web Frontend")["name"] == "Web Frontend"
    with pytest.raises(InvalidInput, match="another context is named 'backend'"):
        browse.rename_context(principal, front, "backend")
    assert browse.set_context_priority(principal, front, 90)["priority"] == 90
    assert browse.contexts(principal)[1]["priority"] == 90


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda b, p, c: b.rename_context(p, c, ""), InvalidInput, "context must be a non-empty"),
        (lambda b, p, c: b.rename_context(p, c, "a\nb"), InvalidInput, "line break"),
        (lambda b, p, c: b.rename_context(p, "x", "ok"), InvalidInput, "context_id must be an id"),
        (lambda b, p, c: b.set_context_priority(p, c, 101), InvalidInput, "from 0 to 100"),
        (lambda b, p, c: b.set_context_priority(p, c, -1), InvalidInput, "from 0 to 100"),
        (lambda b, p, c: b.set_context_priority(p, c, True), InvalidInput, "whole number"),
        (lambda b, p, c: b.set_context_priority(p, c, 5.5), InvalidInput, "whole number"),
    ],
)
def test_bad_context_changes_are_refused_and_change_nothing(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
    call: Callable[[BrowseService, Principal, str], Any],
    error: type[Exception],
    message: str,
) -> None:
    service.save(principal, "Use CSS grid for layouts", "convention", context="frontend")
    context = browse.contexts(principal)[0]["id"]
    before = count_rows(owner_pool, principal)
    with pytest.raises(error, match=message):
        call(browse, principal, context)
    assert count_rows(owner_pool, principal) == before


def test_another_actors_context_is_not_found_like_a_missing_one(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    service.save(neighbour, "Their own filing", "fact", context="theirs")
    theirs = browse.contexts(neighbour)[0]["id"]
    memory = service.save(principal, "Mine", "fact")["memory"]["id"]
    before = count_rows(owner_pool, neighbour)
    missing = str(uuid.uuid4())
    messages = []
    for target in (theirs, missing, memory):  # a memory is no context either
        with pytest.raises(ObjectNotFound) as found:
            browse.rename_context(principal, target, "mine now")
        messages.append(str(found.value).replace(target, "X"))
        with pytest.raises(ObjectNotFound):
            browse.set_context_priority(principal, target, 1)
    assert len(set(messages)) == 1
    assert count_rows(owner_pool, neighbour) == before
    reader = Principal(neighbour.actor_id, neighbour.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied, match="memory:write"):
        browse.rename_context(reader, theirs, "x")


# -- stats ----------------------------------------------------------------------------------


def test_stats_count_what_the_actor_sees(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
    admin: Principal,
) -> None:
    keep = service.save(principal, "The user prefers vim", "preference")["memory"]["id"]
    service.save(principal, "Builds run with make", "fact", scope="project")
    gone = service.save(principal, "The cache is redis", "fact")["memory"]["id"]
    service.delete(principal, gone)
    service.save(principal, "Deploys go out on Fridays", "fact")
    service.save(principal, "Deploys now go out on Thursdays instead", "fact")
    service.save(admin, "Company rule: UTC in every log line", "instruction", scope="global")
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    service.save(neighbour, "Not counted", "fact")
    service.recall(principal, "vim")
    with owner_pool.connection() as conn:
        conn.execute(
            "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
            "first_turn, end_turn, status) VALUES (%s, %s, 's1', 'test', 0, 4, 'dead'), "
            "(%s, %s, 's1', 'test', 4, 8, 'pending')",
            (principal.actor_id, principal.project_id) * 2,
        )
    stats = browse.stats(principal)
    assert stats["by_status"] == {"active": 4, "archived": 0, "superseded": 1, "deleted": 1}
    assert stats["total"] == 6
    assert stats["by_category"]["fact"] == 2
    assert stats["by_category"]["preference"] == 1
    assert stats["by_category"]["instruction"] == 1
    assert stats["by_scope"] == {"user": 2, "project": 1, "global": 1}
    assert stats["by_project"][str(principal.project_id)] == 3
    assert sum(stats["by_project"].values()) == 4
    assert len(stats["growth"]) == 90
    today = stats["growth"][-1]
    assert today["day"] == datetime.now(UTC).date().isoformat()
    assert today["created"] == 6
    assert today["deleted"] == 1
    assert stats["most_used"][0]["id"] == keep
    assert stats["most_used"][0]["use_count"] == 1
    assert keep not in [m["id"] for m in stats["least_used"][:3]]
    assert len(stats["least_used"]) == 4
    assert stats["capture_queue"] == {"pending": 1, "running": 0, "done": 0, "dead": 1}
    assert stats["embedding_queue"] == {"pending": 0, "running": 0, "dead": 0}


# -- the injection log, LLM usage, the capture queue ---------------------------------------


def inject(
    owner_pool: ConnectionPool,
    principal: Principal,
    session: str,
    memory_ids: list[str],
    at: datetime,
) -> None:
    with owner_pool.connection() as conn:
        conn.execute(
            "INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, "
            "memory_ids, estimated_tokens, budget_tokens, created_at) "
            "VALUES (%s, %s, %s, 'claude-code', 'prompt', %s::uuid[], 120, 2000, %s)",
            (principal.actor_id, principal.project_id, session, memory_ids, at),
        )


def test_the_injection_log_by_session(
    service: MemoryService,
    browse: BrowseService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    one = service.save(principal, "Prefers pytest", "preference")["memory"]["id"]
    two = service.save(principal, "Uses uv", "fact")["memory"]["id"]
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    theirs = service.save(neighbour, "Their memory", "fact")["memory"]["id"]
    now = datetime.now(UTC)
    inject(owner_pool, principal, "old-session", [one], now - timedelta(hours=2))
    inject(owner_pool, principal, "new-session", [one, two, theirs], now - timedelta(hours=1))
    inject(owner_pool, principal, "new-session", [two], now)
    inject(owner_pool, neighbour, "their-session", [theirs], now)
    service.delete(principal, two)
    log = browse.injections(principal)
    assert [s["session_id"] for s in log["sessions"]] == ["new-session", "old-session"]
    assert log["next_cursor"] is None
    new = log["sessions"][0]
    assert new["injection_count"] == 2
    assert new["estimated_tokens"] == 240
    latest, earlier = new["injections"]
    assert [m["id"] for m in latest["memories"]] == [two]
    assert latest["memories"][0]["status"] == "deleted"
    assert [m["id"] for m in earlier["memories"]] == [one, two]
    assert earlier["hidden"] == 1  # the other actor's memory: neither content nor id
    assert theirs not in str(log)
    assert earlier["budget_tokens"] == 2000
    first = browse.injections(principal, limit=1)
    assert [s["session_id"] for s in first["sessions"]] == ["new-session"]
    rest = browse.injections(principal, limit=1, cursor=first["next_cursor"])
    assert [s["session_id"] for s in rest["sessions"]] == ["old-session"]
    assert rest["next_cursor"] is None
    only = browse.injections(principal, session_id="old-session")
    assert [s["session_id"] for s in only["sessions"]] == ["old-session"]
    assert browse.injections(principal, session_id="their-session")["sessions"] == []
    with pytest.raises(InvalidInput, match="other filters"):
        browse.injections(principal, session_id="old-session", cursor=first["next_cursor"])
    with pytest.raises(InvalidInput, match="limit must be from 1 to 100"):
        browse.injections(principal, limit=0)


def test_llm_usage_per_day_and_model_with_its_cost(
    browse: BrowseService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    now = datetime.now(UTC)
    calls = [
        ("claude-haiku-4-5", 1_000_000, 100_000, "ok", now),
        ("claude-haiku-4-5", 500_000, 0, "error", now),
        ("claude-sonnet-4-6", 200_000, 20_000, "ok", now - timedelta(days=1)),
        ("some-local-model", 10, 10, "ok", now),
        ("claude-haiku-4-5", 1, 1, "ok", now - timedelta(days=40)),
    ]
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    with owner_pool.connection() as conn:
        for model, tokens_in, tokens_out, outcome, at in calls:
            conn.execute(
                "INSERT INTO kb.llm_calls (actor_id, purpose, model, input_tokens, "
                "output_tokens, outcome, created_at) VALUES (%s, 'gate', %s, %s, %s, %s, %s)",
                (principal.actor_id, model, tokens_in, tokens_out, outcome, at),
            )
        conn.execute(
            "INSERT INTO kb.llm_calls (actor_id, purpose, model, outcome) "
            "VALUES (%s, 'gate', 'claude-haiku-4-5', 'ok')",
            (neighbour.actor_id,),
        )
    usage = browse.llm_usage(principal)
    assert usage["days"] == 30
    rows = {(u["day"], u["model"]): u for u in usage["usage"]}
    today = now.date().isoformat()
    haiku = rows[(today, "claude-haiku-4-5")]
    assert (haiku["calls"], haiku["errors"]) == (2, 1)
    assert haiku["input_tokens"] == 1_500_000
    assert haiku["cost_usd"] == pytest.approx(1.5 + 0.5)
    sonnet = rows[((now - timedelta(days=1)).date().isoformat(), "claude-sonnet-4-6")]
    assert sonnet["cost_usd"] == pytest.approx(0.6 + 0.3)
    assert rows[(today, "some-local-model")]["cost_usd"] is None
    assert usage["unpriced_models"] == ["some-local-model"]
    assert usage["totals"]["calls"] == 4
    assert usage["totals"]["cost_usd"] == pytest.approx(2.9)
    assert len(browse.llm_usage(principal, days=60)["usage"]) == 4
    for days in (0, 367, "30", True):
        with pytest.raises(InvalidInput, match="days must be a whole number from 1 to 366"):
            browse.llm_usage(principal, days=days)  # type: ignore[arg-type]


def test_the_price_table() -> None:
    assert model_price("claude-haiku-4-5-20251001") == (1.0, 5.0)
    assert model_price("claude-sonnet-4-6") == (3.0, 15.0)
    assert model_price("claude-opus-4-1") == (15.0, 75.0)
    assert model_price("gpt-4o") is None
    assert cost_usd("claude-haiku-4-5", 2_000_000, 1_000_000) == pytest.approx(7.0)
    assert cost_usd("mystery", 1, 1) is None


def test_the_capture_queue_and_its_dead_letters(
    browse: BrowseService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    with owner_pool.connection() as conn:
        for actor, first, status, error in (
            (principal, 0, "done", None),
            (principal, 4, "dead", "the model refused: <script>alert(1)</script>"),
            (principal, 8, "pending", None),
            (neighbour, 0, "dead", "theirs"),
        ):
            conn.execute(
                "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
                "first_turn, end_turn, status, attempts, last_error) "
                "VALUES (%s, %s, 'sess', 'claude-code', %s, %s, %s, 3, %s)",
                (actor.actor_id, actor.project_id, first, first + 4, status, error),
            )
    queue = browse.capture_queue(principal)
    assert queue["counts"] == {"pending": 1, "running": 0, "done": 1, "dead": 1}
    [dead] = queue["dead_letters"]
    assert dead["last_error"] == "the model refused: <script>alert(1)</script>"
    assert dead["turns"] == {"first": 4, "last": 7}
    assert dead["attempts"] == 3
    assert dead["session_id"] == "sess"
    nobody = Principal(uuid.uuid4(), uuid.uuid4(), frozenset())
    for call in (browse.capture_queue, browse.stats, browse.contexts, browse.llm_usage):
        with pytest.raises(PermissionDenied):
            call(nobody)
    with pytest.raises(PermissionDenied):
        browse.injections(nobody)


@pytest.mark.parametrize("sort", ["recent", "confidence", "least_used"])
def test_pages_walked_on_the_index_keep_exactly_the_filtered_memories(
    bulk: Bulk, browse: BrowseService, principal: Principal, pool: ConnectionPool, sort: str
) -> None:
    """A category filter's pages are read walking the key's index (browse_store
    WALKED_FILTERS): every memory of the category once, in the sort's order, nothing else;
    and the planner's settings are back to normal for the rest of the transaction."""
    bulk(principal, 3_000)
    category = CATEGORIES[1]
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        result = browse.list(principal, sort=sort, category=category, cursor=cursor, limit=90)
        seen.extend(result["memories"])
        cursor = result["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 500  # one in six, categories in turn
    assert len({m["id"] for m in seen}) == 500
    assert {m["category"] for m in seen} == {category}
    if sort == "recent":
        created = [m["created_at"] for m in seen]
        assert created == sorted(created, reverse=True)
    if sort == "confidence":
        confidences = [m["confidence"] for m in seen]
        assert confidences == sorted(confidences, reverse=True)

    with pool.connection() as conn, conn.transaction():
        graph_rls.act_as(conn, principal.actor_id, principal.project_id)
        browse_store.page(
            conn,
            principal,
            status="active",
            sort=sort,
            filters={"category": category},
            after=None,
            limit=5,
        )
        settings = conn.execute(
            "SELECT current_setting('enable_bitmapscan'), current_setting('enable_seqscan')"
        ).fetchone()
    assert settings == ("on", "on")


# -- the lifecycle: archived, importance, validity, evidence, reasons ------------------------


def test_archived_memories_have_their_own_status_and_importance_filters(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    kept = service.save(principal, "The build uses make", "fact", importance="high")
    low = service.save(principal, "The office plant is a ficus", "fact", importance="low")
    shelved = service.save(principal, "The team used Travis CI in 2019", "fact")
    kept_id, low_id, shelved_id = (r["memory"]["id"] for r in (kept, low, shelved))
    service.archive(principal, shelved_id, reason="nobody asked for it in a year")
    assert set(ids(browse.list(principal))) == {kept_id, low_id}  # active: not archived
    archived = browse.list(principal, status="archived")
    assert ids(archived) == [shelved_id]
    [row] = archived["memories"]
    assert row["status"] == "archived"
    assert row["archived_at"] is not None
    assert row["importance"] == "normal"
    assert set(ids(browse.list(principal, status="all"))) == {kept_id, low_id, shelved_id}
    assert ids(browse.list(principal, importance="high")) == [kept_id]
    assert ids(browse.list(principal, importance="low")) == [low_id]
    assert ids(browse.list(principal, importance="normal")) == []
    assert ids(browse.list(principal, status="archived", importance="normal")) == [shelved_id]
    assert ids(browse.list(principal, status="all", importance="core")) == []
    shown = {m["id"]: m for m in browse.list(principal)["memories"]}
    assert shown[kept_id]["importance"] == "high"
    assert shown[kept_id]["archived_at"] is None
    service.restore(principal, shelved_id)
    assert browse.list(principal, status="archived")["memories"] == []
    assert shelved_id in ids(browse.list(principal))


def test_a_memory_past_its_validity_is_marked_expired(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    ended = service.save(
        principal,
        "The freeze lasts until the release",
        "fact",
        valid_from="2020-01-01",
        valid_until="2020-02-01T12:00:00Z",
    )["memory"]["id"]
    open_ended = service.save(principal, "Releases are tagged vX.Y.Z", "convention")["memory"]["id"]
    rows = {m["id"]: m for m in browse.list(principal)["memories"]}
    assert rows[ended]["expired"] is True
    assert rows[ended]["valid_from"].startswith("2020-01-01T00:00:00")
    assert rows[ended]["valid_until"].startswith("2020-02-01T12:00:00")
    assert rows[open_ended]["expired"] is False
    assert rows[open_ended]["valid_until"] is None
    assert browse.get(principal, ended)["expired"] is True


def test_get_shows_the_evidence_newest_first_with_what_it_did_to_confidence(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    memory_id = service.save(
        principal, "The user prefers pnpm", "preference", evidence="said so in chat"
    )["memory"]["id"]
    service.reinforce(principal, memory_id, "package.json pins pnpm 9", session_id="s-42")
    service.reinforce(principal, memory_id, "package.json pins pnpm 9")  # the same again
    detail = browse.get(principal, memory_id)
    assert detail["evidence_count"] == 3
    texts = [e["evidence"] for e in detail["evidence"]]
    assert texts == ["package.json pins pnpm 9", "package.json pins pnpm 9", "said so in chat"]
    newest, middle, first = detail["evidence"]
    assert (first["origin"], middle["origin"], newest["origin"]) == (
        "save",
        "reinforce",
        "reinforce",
    )
    assert middle["session_id"] == "s-42"
    assert middle["independent"] is True
    assert newest["independent"] is False
    assert middle["confidence_before"] is not None
    assert middle["confidence_after"] is not None
    assert middle["confidence_after"] >= middle["confidence_before"]
    assert newest["confidence_after"] == newest["confidence_before"]
    assert detail["effective_confidence"] <= 1.0
    # another actor sees none of it, exactly as a missing memory
    neighbour = Principal(uuid.uuid4(), principal.project_id)
    with pytest.raises(MemoryNotFound):
        browse.get(neighbour, memory_id)


def test_get_keeps_why_a_memory_was_archived_deleted_or_superseded(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    memory_id = service.save(principal, "Lint with flake8", "convention")["memory"]["id"]
    service.archive(principal, memory_id, reason="the project moved to ruff")
    archived = browse.get(principal, memory_id)
    assert archived["status"] == "archived"
    assert archived["archive_reason"] == "the project moved to ruff"
    assert archived["versions"][-1]["change"] == "archived (the project moved to ruff)"
    service.restore(principal, memory_id)
    restored = browse.get(principal, memory_id)
    assert restored["status"] == "active"
    assert restored["archive_reason"] is None
    assert restored["versions"][-1]["change"] == "restored from the archive"
    service.update(principal, memory_id, {"importance": "high", "rationale": "CI enforces it"})
    changed = browse.get(principal, memory_id)
    assert changed["versions"][-1]["change"] == "changed importance, rationale"
    assert changed["rationale"] == "CI enforces it"
    service.delete(principal, memory_id, reason="duplicate of the CI note")
    deleted = browse.get(principal, memory_id)
    assert deleted["delete_reason"] == "duplicate of the CI note"
    assert deleted["versions"][-1]["change"] == "deleted (duplicate of the CI note)"

    old = service.save(principal, "Deploys go out on Fridays", "fact")["memory"]["id"]
    newer = service.save(
        principal,
        "Deploys now go out on Thursdays instead",
        "fact",
        supersede_reason="the release train moved",
    )
    assert newer["superseded_ids"] == [old]
    superseded = browse.get(principal, old)
    assert superseded["status"] == "superseded"
    assert superseded["supersede_reason"] == "the release train moved"
    assert superseded["versions"][-1]["change"] == (
        f"superseded by {newer['memory']['id']} (the release train moved)"
    )


def test_stats_count_archived_memories_and_importance(
    service: MemoryService, browse: BrowseService, principal: Principal
) -> None:
    service.save(principal, "Always run the tests before a push", "instruction", importance="core")
    service.save(principal, "The user likes short answers", "preference", importance="high")
    service.save(principal, "The staging host is stage-1", "fact")
    low = service.save(principal, "The coffee machine is on floor 2", "fact", importance="low")
    service.archive(principal, low["memory"]["id"])
    stats = browse.stats(principal)
    assert stats["by_status"] == {"active": 3, "archived": 1, "superseded": 0, "deleted": 0}
    assert stats["by_importance"] == {"low": 0, "normal": 1, "high": 1, "core": 1}
    assert stats["archived_by_importance"] == {"low": 1, "normal": 0, "high": 0, "core": 0}
    assert stats["total"] == 4
