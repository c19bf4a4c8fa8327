"""Conflicts (CONFLICTS_WITH, migration 0016): a save that states another value of the same
subject as its nearest memory, without saying that it changed, keeps both and links them. Every
memory record then names what it conflicts with and whether it is the current side (the
stronger source, else the newer) or the outranked one; recall puts the current side first and
injection never shows the outranked side.
"""

from __future__ import annotations

import random
import string
import uuid

import pytest
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.memory import MemoryService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.records import current_first, pair_why
from tests.test_injection import make_injection


@pytest.fixture
def name() -> str:
    return "".join(random.choices(string.ascii_lowercase, k=10))


def by_id(service: MemoryService, principal: Principal) -> dict[str, dict[str, object]]:
    return {m["id"]: dict(m) for m in service.list_memories(principal, limit=100)["memories"]}


def test_another_value_without_a_change_word_is_kept_linked_and_ranked(
    service: MemoryService, principal: Principal, name: str
) -> None:
    old = service.save(principal, f"The {name} staging database listens on port 5432", "fact")
    new = service.save(principal, f"The {name} staging database listens on port 5433", "fact")
    assert new["status"] == "created"
    assert new["superseded_ids"] == []
    [close] = new["possible_duplicates"]
    assert close["id"] == old["memory"]["id"]
    assert close["conflict"] is True
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    memories = by_id(service, principal)
    assert memories[old_id]["conflicts_with"] == [new_id]
    assert memories[new_id]["conflicts_with"] == [old_id]
    assert (memories[new_id]["conflict"], memories[old_id]["conflict"]) == ("current", "outranked")
    recalled = service.recall(principal, f"which port does the {name} staging database use")
    order = [m["id"] for m in recalled["memories"]]
    assert order.index(new_id) < order.index(old_id)
    assert recalled["memories"][order.index(old_id)]["conflict"] == "outranked"


def test_a_memory_without_conflicts_says_so(service: MemoryService, principal: Principal) -> None:
    saved = service.save(principal, "The user reads on a Kobo Libra", "preference")
    assert saved["memory"]["conflicts_with"] == []
    assert saved["memory"]["conflict"] is None


def test_a_weaker_sources_correction_is_kept_as_the_outranked_side(
    service: MemoryService, principal: Principal, name: str
) -> None:
    deploys = f"The {name} deploys to the production cluster of the shop"
    told = service.save(
        principal, f"{deploys} happen on Fridays at noon", "fact", source="explicit"
    )
    inferred = service.save(principal, f"{deploys} now happen on Thursdays at noon", "fact")
    assert inferred["superseded_ids"] == []
    [close] = inferred["possible_duplicates"]
    assert close["kept_because"].startswith("kept beside it")
    assert close["conflict"] is True
    memories = by_id(service, principal)
    # the older memory is current: the user said it, the newer one was inferred
    assert memories[told["memory"]["id"]]["conflict"] == "current"
    assert memories[inferred["memory"]["id"]]["conflict"] == "outranked"


def test_another_subject_is_not_a_conflict(
    service: MemoryService, principal: Principal, name: str
) -> None:
    service.save(principal, f"Staging {name} deploys are automatic on merge", "fact")
    other = service.save(principal, f"Production {name} deploys are automatic on merge", "fact")
    assert all("conflict" not in d for d in other["possible_duplicates"])
    assert other["memory"]["conflicts_with"] == []


def test_injection_never_shows_the_outranked_side(
    service: MemoryService, principal: Principal, name: str
) -> None:
    old = service.save(
        principal, f"The {name} release train leaves on Tuesdays", "convention", importance="core"
    )
    new = service.save(
        principal, f"The {name} release train leaves on Wednesdays", "convention", importance="core"
    )
    assert new["possible_duplicates"][0]["conflict"] is True
    injection = make_injection(service)
    started = injection.context(principal, session_id=str(uuid.uuid4()), event="session_start")
    injected = {m["id"] for m in started["memories"]}
    assert new["memory"]["id"] in injected
    assert old["memory"]["id"] not in injected
    prompted = injection.context(
        principal,
        session_id=str(uuid.uuid4()),
        event="prompt",
        prompt=f"when does the {name} release train leave",
    )
    ids = {m["id"] for m in prompted["memories"]}
    assert new["memory"]["id"] in ids
    assert old["memory"]["id"] not in ids
    # resolved by deleting the current side: the other is no longer outranked
    service.delete(principal, new["memory"]["id"], reason="the test resolves the conflict")
    assert by_id(service, principal)[old["memory"]["id"]]["conflict"] is None


def test_the_review_queue_resolves_a_conflict(
    service: MemoryService, principal: Principal, name: str, pool: ConnectionPool
) -> None:
    duplicates = DuplicateService(pool, service)
    old = service.save(principal, f"The {name} staging database listens on port 5432", "fact")
    new = service.save(principal, f"The {name} staging database listens on port 5433", "fact")
    [pair] = duplicates.open(principal)["pairs"]
    assert pair["conflict"] is True
    assert pair["memory"]["conflict"] == "current"
    assert pair["duplicate_of"]["conflict"] == "outranked"
    # both true: the link goes, neither is outranked
    duplicates.decide(principal, pair["id"], "keep_both")
    memories = by_id(service, principal)
    assert memories[old["memory"]["id"]]["conflict"] is None
    assert memories[new["memory"]["id"]]["conflict"] is None
    assert memories[new["memory"]["id"]]["conflicts_with"] == []


def test_the_older_side_can_win(
    service: MemoryService, principal: Principal, name: str, pool: ConnectionPool
) -> None:
    duplicates = DuplicateService(pool, service)
    old = service.save(principal, f"The {name} staging database listens on port 5432", "fact")
    service.save(principal, f"The {name} staging database listens on port 5433", "fact")
    [pair] = duplicates.open(principal)["pairs"]
    decided = duplicates.decide(principal, pair["id"], "supersede", keep=old["memory"]["id"])
    assert decided["kept_id"] == old["memory"]["id"]
    [active] = service.list_memories(principal)["memories"]
    assert active["id"] == old["memory"]["id"]
    assert (active["conflicts_with"], active["conflict"]) == ([], None)


def test_current_first_gives_the_current_side_the_first_place_its_conflict_was_found_in() -> None:
    def record(id_: str, source: str, day: int, conflict: str | None, others: list[str]) -> dict:
        return {"id": id_, "source": source, "created_at": f"2026-11-{day:02d}T10:00:00+00:00",
                "conflict": conflict, "conflicts_with": others}  # fmt: skip

    stale = record("a", "inferred", 1, "outranked", ["b"])
    other = record("x", "inferred", 5, None, [])
    current = record("b", "inferred", 2, "current", ["a"])
    # the stale side matched best: the current value takes its place, before the other memory
    assert [m["id"] for m in current_first([stale, other, current])] == ["b", "x", "a"]
    assert [m["id"] for m in current_first([other, stale, current])] == ["x", "b", "a"]
    assert [m["id"] for m in current_first([current, other, stale])] == ["b", "x", "a"]
    # the stronger source is current although older
    told = record("t", "explicit", 1, "current", ["i"])
    inferred = record("i", "inferred", 9, "outranked", ["t"])
    assert [m["id"] for m in current_first([inferred, told])] == ["t", "i"]
    assert [m["id"] for m in current_first([told, inferred])] == ["t", "i"]
    # a value changed twice: three memories linked one to the next, found in reverse order
    first = record("v1", "explicit", 1, "outranked", ["v2"])
    second = record("v2", "explicit", 2, "outranked", ["v1", "v3"])
    third = record("v3", "explicit", 3, "current", ["v2"])
    found = [first, other, second, told, third]
    assert [m["id"] for m in current_first(found)] == ["v3", "x", "v2", "t", "v1"]
    # a conflict whose other side was not found moves nothing
    alone = record("s", "inferred", 1, "outranked", ["gone"])
    assert [m["id"] for m in current_first([alone, other])] == ["s", "x"]


def test_session_start_keeps_the_stronger_older_side_of_a_conflict(
    service: MemoryService, principal: Principal, name: str
) -> None:
    deploys = f"The {name} deploys to the production cluster of the shop"
    told = service.save(principal, f"{deploys} happen on Fridays at noon", "fact",
                        source="explicit", importance="core")  # fmt: skip
    inferred = service.save(principal, f"{deploys} now happen on Thursdays at noon", "fact",
                            importance="core")  # fmt: skip
    assert inferred["possible_duplicates"][0]["conflict"] is True
    started = make_injection(service).context(
        principal, session_id=str(uuid.uuid4()), event="session_start"
    )
    injected = {m["id"] for m in started["memories"]}
    assert told["memory"]["id"] in injected
    assert inferred["memory"]["id"] not in injected


def test_a_contracted_negation_is_kept_beside_the_statement_and_linked_as_a_conflict(
    semantic: MemoryService, principal: Principal
) -> None:
    old = semantic.save(
        principal, "The partner API accepts requests without a client certificate", "fact"
    )
    new = semantic.save(
        principal,
        "The partner API doesn\u2019t accept requests without a client certificate",
        "fact",
    )
    assert new["superseded_ids"] == []
    [close] = new["possible_duplicates"]
    assert (close["id"], close["conflict"]) == (old["memory"]["id"], True)
    memories = by_id(semantic, principal)
    assert memories[old["memory"]["id"]]["conflicts_with"] == [new["memory"]["id"]]
    assert memories[new["memory"]["id"]]["conflicts_with"] == [old["memory"]["id"]]


def test_a_negation_reworded_with_the_same_polarity_supersedes(
    semantic: MemoryService, principal: Principal
) -> None:
    old = semantic.save(principal, "Never deploy the billing service on Fridays", "instruction")
    new = semantic.save(principal, "Don't deploy the billing service on Fridays", "instruction")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert new["memory"]["conflicts_with"] == []


def test_a_stated_change_of_a_memory_that_is_not_the_nearest_is_linked_as_a_conflict(
    semantic: MemoryService, principal: Principal, pool: ConnectionPool
) -> None:
    old = semantic.save(principal, "The recommendations service listens on port 4607.", "fact")
    other = semantic.save(principal, "payments moved to port 9539.", "fact")
    new = semantic.save(principal, "recommendations moved to port 9539.", "fact")
    # the nearest memory is the payments one (another service): neither is superseded
    assert new["status"] == "created"
    assert new["superseded_ids"] == []
    old_id, other_id, new_id = old["memory"]["id"], other["memory"]["id"], new["memory"]["id"]
    close = {c["id"]: c for c in new["possible_duplicates"]}
    assert close[old_id]["conflict"] is True
    assert close[old_id]["why"] == pair_why("next nearest changed")
    assert "another memory is closer in meaning" in close[old_id]["why"]
    assert close.get(other_id, {}).get("conflict") is not True
    memories = by_id(semantic, principal)
    assert memories[new_id]["conflicts_with"] == [old_id]
    assert memories[other_id]["conflicts_with"] == []
    assert (memories[new_id]["conflict"], memories[old_id]["conflict"]) == ("current", "outranked")
    order = [
        m["id"]
        for m in semantic.recall(principal, "which port does the recommendations service use")[
            "memories"
        ]
    ]
    assert order.index(new_id) < order.index(old_id)
    # recorded for the review queue, as the nearest memory's conflicts are
    pairs = DuplicateService(pool, semantic).open(principal)["pairs"]
    [linked] = [p for p in pairs if p["duplicate_of"]["id"] == old_id]
    assert (linked["memory"]["id"], linked["conflict"]) == (new_id, True)


def test_a_next_nearest_memory_of_the_same_named_thing_at_another_version_is_linked(
    semantic: MemoryService, principal: Principal
) -> None:
    """The name says which thing: another version of it among the next nearest is another
    value of the same subject, linked however the sentences run (dedup.another_version)."""
    old = semantic.save(principal, "Postgres 17.2 is what the auth service runs.", "fact")
    near = semantic.save(
        principal, "The auth database was slow on Postgres 13.4 during the upgrade.", "fact"
    )
    new = semantic.save(
        principal, "The auth database is on Postgres 13.4 after the upgrade.", "fact"
    )
    old_id, near_id, new_id = old["memory"]["id"], near["memory"]["id"], new["memory"]["id"]
    # the nearest memory is what happened during the upgrade: another occasion, kept apart
    assert new["possible_duplicates"][0]["id"] == near_id
    assert new["superseded_ids"] == []
    close = {c["id"]: c for c in new["possible_duplicates"]}
    assert close[old_id]["conflict"] is True
    assert close[old_id]["why"] == pair_why("different value")
    memories = by_id(semantic, principal)
    assert old_id in memories[new_id]["conflicts_with"]
    assert near_id not in memories[new_id]["conflicts_with"]
    assert memories[old_id]["conflict"] == "outranked"
    order = [
        m["id"]
        for m in semantic.recall(principal, "which Postgres version does auth use")["memories"]
    ]
    assert order.index(new_id) < order.index(old_id)


def test_another_holder_of_a_role_said_in_other_words_is_linked_and_ranks_first(
    semantic: MemoryService, principal: Principal
) -> None:
    """Who is on call for a thing, said two ways (dedup.role_given_to_another): the new holder
    is linked as a conflict of the old, newer first, through the real model's similarity
    (far below the band where wording counts)."""
    old = semantic.save(principal, "The analytics on-call engineer is Nadia.", "fact")
    semantic.save(principal, "Analytics dashboards refresh every 15 minutes.", "fact")
    new = semantic.save(principal, "Omar took over the analytics pager.", "fact")
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    assert new["superseded_ids"] == []
    close = {c["id"]: c for c in new["possible_duplicates"]}
    assert close[old_id]["conflict"] is True
    memories = by_id(semantic, principal)
    assert (memories[new_id]["conflict"], memories[old_id]["conflict"]) == ("current", "outranked")
    order = [
        m["id"] for m in semantic.recall(principal, "who is on call for analytics")["memories"]
    ]
    assert order.index(new_id) < order.index(old_id)


def test_a_role_given_to_another_below_the_stated_change_band_is_linked(
    semantic: MemoryService, principal: Principal
) -> None:
    """The real model puts "Rosa took over the webhooks pager." 0.39 from "The webhooks
    on-call engineer is Chen.", below `change_from`: the role's own band (role_from) links
    it, the new holder first; the same holder said in other words replaces the old."""
    old = semantic.save(principal, "The webhooks on-call engineer is Chen.", "fact")
    new = semantic.save(principal, "Rosa took over the webhooks pager.", "fact")
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    assert new["superseded_ids"] == []
    memories = by_id(semantic, principal)
    assert (memories[new_id]["conflict"], memories[old_id]["conflict"]) == ("current", "outranked")
    order = [m["id"] for m in semantic.recall(principal, "who is on call for webhooks")["memories"]]
    assert order.index(new_id) < order.index(old_id)
    signs = semantic.save(principal, "Isolde signs off on dockd releases.", "fact")
    again = semantic.save(principal, "Releases of dockd need Isolde's sign-off.", "fact")
    assert again["superseded_ids"] == [signs["memory"]["id"]]


def test_a_memory_said_of_one_project_is_not_replaced_by_a_change_that_names_none(
    semantic: MemoryService, principal: Principal
) -> None:
    """ "In project 92, ..." holds of that project; a change said of no project is kept beside
    it (dedup.scope_dropped), never replaces it."""
    old = semantic.save(
        principal,
        "In project 92, releases of reporting are cut every Wednesday at 11:00 UTC.",
        "fact",
    )
    new = semantic.save(principal, "reporting releases moved to Wednesday.", "fact")
    assert new["superseded_ids"] == []
    memories = by_id(semantic, principal)
    assert {old["memory"]["id"], new["memory"]["id"]} <= set(memories)
    assert memories[old["memory"]["id"]]["conflicts_with"] == []


def test_a_next_nearest_memory_with_another_value_and_no_change_word_is_not_linked(
    semantic: MemoryService, principal: Principal
) -> None:
    billing = semantic.save(principal, "The billing service listens on port 8306.", "fact")
    reporting = semantic.save(principal, "The reporting service listens on port 8306.", "fact")
    new = semantic.save(principal, "The reporting service listens on port 9265.", "fact")
    memories = by_id(semantic, principal)
    # the nearest (reporting, another port) is a conflict; billing is another service
    assert memories[new["memory"]["id"]]["conflicts_with"] == [reporting["memory"]["id"]]
    assert memories[billing["memory"]["id"]]["conflicts_with"] == []
    assert new["superseded_ids"] == []


def test_recall_brings_the_current_side_along_with_a_stale_side_that_matched_better(
    semantic: MemoryService, principal: Principal
) -> None:
    service = semantic
    # (the lifecycle benchmark's phrasings: two changes of owner, linked as a conflict)
    old = service.save(principal, "The billing service is now owned by Sven.", "fact")
    new = service.save(principal, "Ownership of billing moved to Jun.", "fact")
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    memories = by_id(service, principal)
    assert (memories[new_id]["conflict"], memories[old_id]["conflict"]) == ("current", "outranked")
    query = "who owns the billing service"
    everything = service.recall(principal, query, min_relevance=0.0, record_use=False)
    scores = {m["id"]: m["relevance"] for m in everything["memories"]}
    assert scores[old_id] > scores[new_id]  # the stale wording matches the question better
    # the current value takes the place the stale one was found in
    found = service.recall(principal, query, record_use=False)["memories"]
    assert [m["id"] for m in found[:2]] == [new_id, old_id]
    # one memory asked for: the current value, which names the stale one it conflicts with
    [only] = service.recall(principal, query, limit=1, record_use=False)["memories"]
    assert only["id"] == new_id
    assert only["conflicts_with"] == [old_id]
    # a floor above both: nothing relevant, so nothing is brought along either
    strict = service.recall(principal, query, min_relevance=0.999, record_use=False)
    assert strict["memories"] == []


def test_the_rows_kept_make_room_for_the_current_side_last_unrelated_first() -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from emergent_memory.memory.service import _relevant

    def row(
        id_: str, day: int, others: list[str], source: str = "explicit", factor: float = 1.0
    ) -> SimpleNamespace:
        linked = [{"id": other} for other in others]
        created = datetime(2026, 11, day, tzinfo=UTC)
        # `factor`: what the search multiplied the fused score by (confidence, recency...)
        return SimpleNamespace(
            id=id_,
            source=source,
            created_at=created,
            conflicts_with=linked,
            fused=0.02,
            score=0.02 * factor,
        )

    stale, x, y = row("stale", 1, ["new"]), row("x", 5, []), row("y", 6, [])
    new = row("new", 3, ["stale"])
    rows = [stale, x, y, new]
    judged = [0.9, 0.8, 0.7, 0.1]
    kept, values = _relevant(rows, judged, 0.5, 3)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["stale", "new", "x"]  # y, unrelated and last, made room
    assert values == [0.9, 0.1, 0.8]  # each keeps its own relevance
    kept, _ = _relevant(rows, judged, 0.5, 1)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["new"]  # the stale side gives way, never the current
    # a weaker source never outranks: nothing brought along for an explicit stale side
    inferred = row("new", 3, ["stale"], source="inferred")
    kept, _ = _relevant([stale, x, y, inferred], judged, 0.5, 3)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["stale", "x", "y"]
    # a value changed twice, the newest found last
    v1, v2, v3 = row("v1", 1, ["v2"]), row("v2", 2, ["v1", "v3"]), row("v3", 3, ["v2"])
    kept, _ = _relevant([v1, x, v3, v2], [0.9, 0.8, 0.2, 0.2], 0.5, 10)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["v1", "v2", "v3", "x"]


def test_recall_keeps_the_most_relevant_of_its_window_most_relevant_first() -> None:
    """The search's order (fused ranks) is not the answer's: of the candidate window, the
    memories most relevant to the query come first, relevance weighed by what the search
    weighs its score by (confidence, recency, importance); equals keep the search's order."""
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from emergent_memory.memory.service import _relevant

    def row(id_: str, factor: float = 1.0) -> SimpleNamespace:
        created = datetime(2026, 11, 1, tzinfo=UTC)
        return SimpleNamespace(
            id=id_,
            source="explicit",
            created_at=created,
            conflicts_with=[],
            fused=0.03,
            score=0.03 * factor,
        )

    rows = [row("a"), row("b"), row("c"), row("d", factor=0.5), row("e")]
    judged = [0.3, 0.9, 0.001, 0.8, 0.3]
    kept, values = _relevant(rows, judged, 0.01, 3)  # type: ignore[arg-type]
    # b first; d's 0.8 weighs 0.4 (half the weight: stale, unused), above a and e (0.3),
    # which keep the search's order; c, under the floor, is never returned
    assert [r.id for r in kept] == ["b", "d", "a"]
    assert values == [0.9, 0.8, 0.3]  # each with its own relevance, unweighed
    kept, _ = _relevant(rows, judged, 0.01, 10)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["b", "d", "a", "e"]
    # a row the search ranked past the limit, but more relevant, is returned
    kept, _ = _relevant([*rows[:4], row("f")], [0.3, 0.2, 0.2, 0.2, 0.95], 0.01, 2)  # type: ignore[arg-type]
    assert [r.id for r in kept] == ["f", "a"]


def test_a_prompt_about_a_stale_side_is_given_the_current_value_instead(
    semantic: MemoryService, principal: Principal, local_embedder: LocalEmbeddings
) -> None:
    old = semantic.save(principal, "The billing service is now owned by Sven.", "fact")
    new = semantic.save(principal, "Ownership of billing moved to Jun.", "fact")
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    assert by_id(semantic, principal)[old_id]["conflict"] == "outranked"
    prompt = "Who owns the billing service? I need someone to review my change."
    found = semantic.recall(principal, prompt, min_relevance=0.0, record_use=False)
    relevance = {m["id"]: m["relevance"] for m in found["memories"]}
    assert relevance[old_id] > relevance[new_id]  # the prompt matches the stale wording
    # a floor between the two: only the stale side would be offered, and it is outranked
    floor = (relevance[old_id] + relevance[new_id]) / 2
    injection = make_injection(semantic, local_embedder, floor=floor)
    prompted = injection.context(
        principal, session_id=str(uuid.uuid4()), event="prompt", prompt=prompt
    )
    assert [m["id"] for m in prompted["memories"]] == [new_id]
    # a floor above both: nothing
    silent = make_injection(semantic, local_embedder, floor=relevance[old_id] + 0.01)
    quiet = silent.context(principal, session_id=str(uuid.uuid4()), event="prompt", prompt=prompt)
    assert quiet["memories"] == []


def test_recall_lists_the_memory_holding_the_query_s_rare_word_before_a_common_phrasing(
    semantic: MemoryService, principal: Principal, local_embedder: LocalEmbeddings
) -> None:
    """The lifecycle benchmark's miss, end to end with the local model: the search's fused
    ranks put another service's release day first (it matches "releases ... cut" by both
    branches); recall answers with the memory that holds the one rare word, "auth", first,
    and every answer is ordered by its relevance."""
    service = semantic
    texts = [
        "Releases of reporting are cut every Thursday.",
        "auth releases moved to Monday.",
        *(f"The auth service listens on port {6000 + n}, not {7000 + n}." for n in range(8)),
        *(f"Error E{4100 + n} means the auth quota was exceeded." for n in range(8)),
    ]
    for text in texts:
        service.save(principal, text, "fact")
    found = service.recall(principal, "when are auth releases cut", record_use=False)
    memories = found["memories"]
    assert memories[0]["content"] == "auth releases moved to Monday."
    # in no conflict, fresh (the same weights): by relevance
    plain = [m["relevance"] for m in memories if not m["conflicts_with"]]
    assert plain == sorted(plain, reverse=True)
    # the search's own order would not have put it first
    scores = sorted(memories, key=lambda m: -m["score"])
    assert scores[0]["content"] != "auth releases moved to Monday."
    # a prompt's injection offers them in the same order (the budget keeps the first)
    injection = make_injection(semantic, local_embedder, floor=0.3)
    prompted = injection.context(
        principal,
        session_id=str(uuid.uuid4()),
        event="prompt",
        prompt="When are auth releases cut?",
    )
    lines = prompted["context"].splitlines()
    auth = next(i for i, line in enumerate(lines) if "auth releases moved to Monday" in line)
    reporting = next(i for i, line in enumerate(lines) if "Releases of reporting" in line)
    assert auth < reporting
