"""Load: 50 MCP clients mixing save / recall / update / delete / list for half a minute against
the real HTTP server, then an audit of the database against everything the clients were told.

The run lasts LOAD_TEST_SECONDS seconds (default 30, which the whole suite's 15-minute budget
allows; e.g. `LOAD_TEST_SECONDS=300 pytest
tests/test_load.py -s` for a longer soak). Throughput is printed (run with -s to see it), never
asserted: speed belongs to benchmarks/.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import secrets
import statistics
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from fastmcp import Client
from psycopg import sql
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.connection import with_role
from emergent_memory.db.roles import ensure_login_role
from emergent_memory.errors import InvalidInput, MemoryNotFound
from emergent_memory.memory import MemoryService
from tests.embedders import EmbeddingServer
from tests.helpers import (
    HttpServer,
    client_for,
    hold_advisory_lock,
    internal_errors,
    lock_waiters,
    make_token,
    running_http_server,
    wait_until,
)

DURATION = float(os.environ.get("LOAD_TEST_SECONDS", "30"))
# Seconds a request may wait for one of the server's connections, and a client for an answer:
# generous, since how fast the server answers 50 clients is not what this test asserts (on a
# loaded machine requests queue for a while); a request that never ends still fails it.
POOL_TIMEOUT, CALL_TIMEOUT = 60, 120
SHARED_ACTORS, CLIENTS_PER_SHARED_ACTOR, SOLO_CLIENTS = 10, 3, 20  # 50 clients
LOAD_ROLE = "emergent_memory_test_load"  # the server's login role: an application role

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# The only errors a client may see, per tool: each is the expected outcome of a race between
# clients of one actor (another client deleted or superseded the memory meanwhile). Anything
# else fails the test: an internal (masked) error, a deadlock, busy, a timeout.
ALLOWED_ERRORS: dict[str, dict[str, str]] = {
    "save_memory": {
        # the exact duplicate it was about to reinforce was deleted meanwhile
        "deleted meanwhile": rf"memory {UUID} was deleted meanwhile; save it again",
        # a memory named in related_to was deleted
        "related gone": rf"related_to: no object with id {UUID} in this project",
    },
    "manage_memory": {
        "not found": rf"memory {UUID} not found",
        # another client of the actor deleted it first (the actor may know it was deleted)
        "deleted": rf"memory {UUID} is deleted; restore it first \(manage_memory action "
        rf"'restore', or POST /api/v1/memories/{UUID}/restore\), then change it",
        "already deleted": rf"memory {UUID} is already deleted; manage_memory action "
        rf"'restore', or POST /api/v1/memories/{UUID}/restore brings it back",
        "superseded": rf"memory {UUID} was superseded by {UUID}; update that one instead",
        # an update to the exact text of another memory of the actor (the load repeats texts)
        "twin": rf"memory {UUID} already says exactly this; keep that one \(and delete {UUID} "
        r"if it is no longer needed\) rather than having two identical memories",
    },
    "recall_memories": {},
}

TOPICS = ("billing", "search", "payments", "gateway", "reports", "mailer", "auth", "uploads")
HOSTS = ("alpha", "bravo", "charlie")
REGIONS = ("north", "south", "east")
CATEGORIES = ("fact", "convention", "instruction", "pattern")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Actor:
    """What the clients of one actor were told, to audit the database against."""

    id: uuid.UUID
    project: uuid.UUID
    tag: str
    known: list[str] = field(default_factory=list)  # acknowledged saves, in order
    saved: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)  # acknowledged deletes
    superseded: dict[str, str] = field(default_factory=dict)  # old id -> the save's new id
    recalled: Counter[str] = field(default_factory=Counter)  # id -> times a recall returned it
    recalled_scopes: dict[str, str] = field(default_factory=dict)

    def content(self, rng: random.Random) -> str:
        # Two texts of one topic differing in one word are near-duplicates (bag-of-words
        # cosine 12/13 > 0.9: superseded); in two words, distinct (11/13); in none, exact.
        return (
            f"The {rng.choice(TOPICS)} service of team {self.tag} runs on host "
            f"{rng.choice(HOSTS)} in region {rng.choice(REGIONS)}"
        )


@dataclass
class Ledger:
    calls: Counter[str] = field(default_factory=Counter)  # "tool action: outcome"
    latencies: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    unexpected: list[str] = field(default_factory=list)


class LoadClient:
    def __init__(
        self, client: Client[Any], actor: Actor, ledger: Ledger, rng: random.Random
    ) -> None:
        self.client, self.actor, self.ledger, self.rng = client, actor, ledger, rng

    async def call(self, tool: str, label: str, arguments: dict[str, Any]) -> Any:
        """The structured result, or None after an allowed error (anything else is recorded
        as unexpected)."""
        started = time.monotonic()
        try:
            result = await self.client.call_tool(
                tool, {**arguments, "detail": True}, raise_on_error=False
            )
        except Exception as error:  # a JSON-RPC error, a timeout, a broken session
            self.ledger.unexpected.append(f"{label}: {type(error).__name__}: {error}")
            self.ledger.calls[f"{label}: exception"] += 1
            return None
        finally:
            self.ledger.latencies[label].append(time.monotonic() - started)
        if not result.is_error:
            self.ledger.calls[f"{label}: ok"] += 1
            return result.structured_content
        text = " ".join(getattr(part, "text", "") for part in result.content)
        for kind, pattern in ALLOWED_ERRORS[tool].items():
            if re.fullmatch(pattern, text):
                self.ledger.calls[f"{label}: {kind}"] += 1
                return None
        self.ledger.unexpected.append(f"{label}: {text}")
        self.ledger.calls[f"{label}: unexpected error"] += 1
        return None

    def some_known_id(self) -> str | None:
        # mostly recent memories, where clients of one actor contend
        known = self.actor.known
        return known[-1 - min(int(self.rng.expovariate(0.3)), len(known) - 1)] if known else None

    async def save(self) -> None:
        arguments: dict[str, Any] = {
            "content": self.actor.content(self.rng),
            "category": self.rng.choice(CATEGORIES),
            "scope": "project" if self.rng.random() < 0.2 else "user",
        }
        if self.rng.random() < 0.25:
            arguments["options"] = {"context": f"{self.rng.choice(TOPICS)} operations"}
        related = self.some_known_id()
        if related is not None and self.rng.random() < 0.15:
            arguments["options"] = {**arguments.get("options", {}), "related_to": [related]}
        result = await self.call("save_memory", "save", arguments)
        if result is not None:
            memory_id = result["memory"]["id"]
            if memory_id not in self.actor.saved:
                self.actor.saved.add(memory_id)
                self.actor.known.append(memory_id)
            for old in result["superseded_ids"]:
                self.actor.superseded[old] = memory_id

    async def recall(self) -> None:
        arguments: dict[str, Any] = {
            "query": f"{self.rng.choice(TOPICS)} service {self.rng.choice(HOSTS)}",
            "limit": self.rng.randint(1, 10),
        }
        if self.rng.random() < 0.2:
            arguments["category"] = self.rng.choice(CATEGORIES)
        result = await self.call("recall_memories", "recall", arguments)
        if result is not None:
            for memory in result["memories"]:
                self.actor.recalled[memory["id"]] += 1
                self.actor.recalled_scopes[memory["id"]] = memory["scope"]

    async def update(self) -> None:
        memory_id = self.some_known_id()
        if memory_id is None:
            return
        change = self.rng.choice(("content", "category", "confidence"))
        updates: dict[str, Any] = {
            "content": self.actor.content(self.rng),
            "category": self.rng.choice(CATEGORIES),
            "confidence": round(self.rng.uniform(0.3, 1.0), 2),
        }
        await self.call(
            "manage_memory",
            "update",
            {"action": "update", "memory_id": memory_id, "updates": {change: updates[change]}},
        )

    async def delete(self) -> None:
        memory_id = self.some_known_id()
        if memory_id is None:
            return
        result = await self.call(
            "manage_memory", "delete", {"action": "delete", "memory_id": memory_id}
        )
        if result is not None:
            self.actor.deleted.add(memory_id)

    async def list(self) -> None:
        await self.call(
            "manage_memory", "list", {"action": "list", "limit": self.rng.randint(1, 30)}
        )

    async def run(self, deadline: float) -> None:
        operations: list[Callable[[], Any]] = [
            self.save,
            self.recall,
            self.update,
            self.delete,
            self.list,
        ]
        weights = [40, 30, 12, 10, 8]
        while time.monotonic() < deadline:
            await self.rng.choices(operations, weights)[0]()


def one_value(conn: psycopg.Connection[Any], query: str | sql.Composed, *params: Any) -> Any:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def deadlocks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return int(
            one_value(
                conn, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
            )
        )


@pytest.mark.anyio
async def test_fifty_clients_under_load_keep_the_data_consistent(
    database_url: str, embedding_server: EmbeddingServer
) -> None:
    """50 clients over streamable HTTP with bearer tokens: 10 actors with 3 clients each
    (contending on the same memories) and 20 actors with one. No error but the allowed races
    above, no deadlock, one head per object and relationship, every acknowledged save present
    (and active unless an acknowledged delete or supersession says otherwise), no memory that
    no save acknowledged, no recall of another actor's memory, and use counts equal to the
    recall results the clients received."""
    password = secrets.token_hex(16)
    ensure_login_role(database_url, LOAD_ROLE, password=password)
    server_url = with_role(database_url, LOAD_ROLE, password)

    rng = random.Random(20261122)
    actors = [
        Actor(uuid.uuid4(), uuid.uuid4(), f"t{n:02d}") for n in range(SHARED_ACTORS + SOLO_CLIENTS)
    ]
    seats = [actors[n] for n in range(SHARED_ACTORS) for _ in range(CLIENTS_PER_SHARED_ACTOR)]
    seats += actors[SHARED_ACTORS:]
    tokens = [make_token(database_url, actor.id, actor.project)[0] for actor in seats]
    ledger = Ledger()
    deadlocks_before = deadlocks(database_url)

    with running_http_server(
        server_url,
        embedding_server,
        EMERGENT_MEMORY_DEDUP_THRESHOLD="0.9",
        EMERGENT_MEMORY_LOG_LEVEL="ERROR",
        EMERGENT_MEMORY_POOL_TIMEOUT=str(POOL_TIMEOUT),
    ) as server:
        started = time.monotonic()
        deadline = started + DURATION  # connecting the 50 clients is part of the run
        crashed = await asyncio.gather(
            *(
                run_client(server, token, actor, ledger, random.Random(rng.random()), deadline)
                for token, actor in zip(tokens, seats, strict=True)
            ),
            return_exceptions=True,
        )
        elapsed = time.monotonic() - started
    report_throughput(ledger, elapsed)
    escaped = internal_errors(server.log)
    for error in escaped[:3]:
        print(f"internal error in the server log:\n{error}")
    assert [c for c in crashed if c is not None] == []

    with psycopg.connect(database_url, autocommit=True) as conn:
        audit_database(conn, actors)
        # the server's connections are gone, so their statistics are flushed
        deadline = time.monotonic() + 60
        server_connections = "SELECT count(*) FROM pg_stat_activity WHERE usename = %s"
        while one_value(conn, server_connections, LOAD_ROLE):
            assert time.monotonic() < deadline, "the server's connections did not close"
            time.sleep(0.1)
    assert deadlocks(database_url) == deadlocks_before
    assert not any("deadlock" in text.lower() for text in ledger.unexpected)
    assert ledger.unexpected == [], f"{len(ledger.unexpected)} unexpected errors (printed above)"
    assert escaped == [], f"{len(escaped)} internal errors in the server log (printed above)"


async def run_client(
    server: HttpServer,
    token: str,
    actor: Actor,
    ledger: Ledger,
    rng: random.Random,
    deadline: float,
) -> None:
    async with client_for(server, token, timeout=CALL_TIMEOUT) as client:
        await LoadClient(client, actor, ledger, rng).run(deadline)


def audit_database(conn: psycopg.Connection[Any], actors: list[Actor]) -> None:
    projects = [actor.project for actor in actors]
    for table in ("graph_objects", "graph_relationships"):
        query = sql.SQL(
            "SELECT count(*) FROM (SELECT canonical_id FROM kb.{} WHERE project_id = ANY(%s) "
            "GROUP BY canonical_id HAVING count(*) FILTER (WHERE is_head) <> 1) AS wrong"
        ).format(sql.Identifier(table))
        bad_heads = one_value(conn, query, projects)
        assert bad_heads == 0, f"{bad_heads} objects of kb.{table} have no head or several"

    for actor in actors:
        heads = {
            str(id_): (deleted, superseded_by)
            for id_, deleted, superseded_by in conn.execute(
                "SELECT canonical_id, deleted_at IS NOT NULL, properties ->> 'superseded_by' "
                "FROM kb.graph_objects WHERE type = 'Memory' AND is_head AND actor_id = %s",
                (actor.id,),
            )
        }
        # every memory stored was acknowledged, and every acknowledged save is stored
        assert set(heads) == actor.saved, actor.tag
        for memory_id, (deleted, superseded_by) in heads.items():
            # inactive only for a reason the clients were told about, and then inactive
            assert deleted == (memory_id in actor.deleted), (actor.tag, memory_id)
            if memory_id in actor.superseded:
                assert superseded_by is not None, (actor.tag, memory_id)
            else:
                assert superseded_by is None, (actor.tag, memory_id)
            if superseded_by is not None:
                assert superseded_by in actor.saved

        # recalls returned only this actor's memories (or global ones)
        foreign = {
            id_
            for id_ in actor.recalled
            if id_ not in actor.saved and actor.recalled_scopes[id_] != "global"
        }
        assert foreign == set(), (actor.tag, foreign)
        # one kb.memory_recalls row per memory per recall result received
        logged = Counter(
            {
                str(id_): count
                for id_, count in conn.execute(
                    "SELECT canonical_id, count(*) FROM kb.memory_recalls WHERE actor_id = %s "
                    "GROUP BY canonical_id",
                    (actor.id,),
                )
            }
        )
        assert logged == actor.recalled, actor.tag
        use_counts = dict(
            conn.execute(
                "SELECT id::text, use_count FROM kb.memories WHERE actor_id = %s", (actor.id,)
            ).fetchall()
        )
        assert use_counts == {id_: actor.recalled[id_] for id_ in use_counts}, actor.tag
        assert set(use_counts) == {
            id_ for id_, (deleted, by) in heads.items() if not deleted and by is None
        }


def report_throughput(ledger: Ledger, elapsed: float) -> None:
    total = sum(ledger.calls.values())
    print(f"\n{total} calls in {elapsed:.1f} s: {total / elapsed:.1f} calls/s")
    for label, latencies in sorted(ledger.latencies.items()):
        ordered = sorted(latencies)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(
            f"  {label:7} {len(latencies):6} calls {len(latencies) / elapsed:6.1f}/s  "
            f"median {statistics.median(ordered) * 1000:6.0f} ms  p95 {p95 * 1000:6.0f} ms"
        )
    for outcome, count in sorted(ledger.calls.items()):
        print(f"  {outcome:32} {count}")
    for text in ledger.unexpected[:20]:
        print(f"  UNEXPECTED {text}")


# -- the races of that load, one at a time --------------------------------------------------
#
# Each test below stops one request at the advisory lock it takes (held by a connection of the
# test), lets a competing write of the same actor commit meanwhile, then lets the request go
# on: the deterministic version of a race the load test above runs into by chance.


def version_lock_key(memory_id: str) -> str:
    """The advisory lock that serializes the versions of one object (lock_versions)."""
    return f"kb.graph_objects:{memory_id}"


def run_blocked(
    database_url: str,
    owner_pool: ConnectionPool,
    lock_key: str,
    request: Callable[[], Any],
    meanwhile: Callable[[psycopg.Connection[Any]], None],
) -> Future[Any]:
    """Run `request` in a thread until it waits on `lock_key`, held by a transaction of the
    test; in that transaction (lock still held) run `meanwhile`, commit, and return the
    request's future."""
    with ThreadPoolExecutor(1) as executor:
        with owner_pool.connection() as blocker, blocker.transaction():
            hold_advisory_lock(blocker, lock_key)
            future = executor.submit(request)
            wait_until(
                lambda: lock_waiters(database_url, blocker.info.backend_pid) > 0 or future.done(),
                what="the request waits on the lock",
            )
            assert not future.done(), f"the request did not wait on {lock_key}: {future}"
            meanwhile(blocker)
        wait([future], timeout=60)  # the lock is released: the request goes on
        return future


def owner_deletes(memory_id: str) -> Callable[[psycopg.Connection[Any]], None]:
    """What another client's delete of the memory writes (in the blocker's transaction)."""

    def delete(conn: psycopg.Connection[Any]) -> None:
        graph.delete_object(conn, uuid.UUID(memory_id), reason="by another client")

    return delete


@pytest.mark.parametrize("action", ["delete", "update"])
def test_deleting_or_updating_a_memory_deleted_meanwhile_says_it_is_deleted(
    service: MemoryService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
    action: str,
) -> None:
    """Another client of the actor deletes the memory after this request found it and before
    it wrote: the answer is the tool's own "is deleted" (the actor's own memory: it may know),
    with how to restore it, not the graph's wording."""
    memory_id = service.save(principal, "The wiki lives in Confluence", "fact")["memory"]["id"]

    def request() -> Any:
        if action == "delete":
            return service.delete(principal, memory_id)
        return service.update(principal, memory_id, {"confidence": 0.5})

    future = run_blocked(
        database_url,
        owner_pool,
        version_lock_key(memory_id),
        request,
        owner_deletes(memory_id),
    )
    said = "is already deleted; " if action == "delete" else "is deleted; restore it first "
    with pytest.raises(InvalidInput, match=f"^memory {memory_id} {said}"):
        future.result()


def test_updating_a_memory_superseded_meanwhile_is_refused_and_writes_nothing(
    service: MemoryService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    """A save of another client supersedes the memory after this update found it: the update
    is refused as for any superseded memory, and the superseded memory gets no new version
    (nor does the update fail with an internal error)."""
    memory_id = service.save(principal, "Standups are at 9:30", "fact")["memory"]["id"]
    newer = str(uuid.uuid4())

    def supersede(conn: psycopg.Connection[Any]) -> None:
        graph.update_object(conn, uuid.UUID(memory_id), properties={"superseded_by": newer})

    future = run_blocked(
        database_url,
        owner_pool,
        version_lock_key(memory_id),
        lambda: service.update(principal, memory_id, {"confidence": 0.5}),
        supersede,
    )
    with pytest.raises(InvalidInput, match=f"^memory {memory_id} was superseded by {newer}"):
        future.result()
    with owner_pool.connection() as conn:
        versions = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (memory_id,)
        ).fetchone()
    assert versions == (2,)  # the save's version only


def test_a_save_whose_near_duplicate_is_deleted_meanwhile_is_created(
    make_service: Callable[..., MemoryService],
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    """The near-duplicate a save is about to supersede is deleted by another client: the save
    stores its memory as a new one (nothing left to supersede), instead of failing."""
    service = make_service()
    old = service.save(principal, "The nightly backup job runs at 02:00 UTC", "fact")
    old_id = old["memory"]["id"]
    text = "The nightly backup job runs at 02:00 UTC!"  # the same words: it supersedes
    future = run_blocked(
        database_url,
        owner_pool,
        version_lock_key(old_id),
        lambda: service.save(principal, text, "fact"),
        owner_deletes(old_id),
    )
    saved = future.result()
    assert (saved["status"], saved["superseded_ids"]) == ("created", [])
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [
        saved["memory"]["id"]
    ]
    with owner_pool.connection() as conn:
        edges = conn.execute(
            "SELECT count(*) FROM kb.graph_relationships WHERE dst_id = %s", (old_id,)
        ).fetchone()
    assert edges == (0,)  # no SUPERSEDES edge to a deleted memory


def test_a_save_whose_related_memory_is_deleted_meanwhile_is_refused_clearly(
    service: MemoryService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    """The memory named in related_to is deleted after the save checked it: the save is
    refused with the same related_to error as when it was already gone (or, if the save
    keeps the target from being deleted until it commits, it succeeds); never the graph's
    "the target object ... does not exist"."""
    target = service.save(principal, "The design system is in Figma", "fact")["memory"]["id"]
    context = "Design"
    # the save stops at its context's lock, after checking related_to, before linking it
    future = run_blocked(
        database_url,
        owner_pool,
        f"memory-context:{principal.actor_id}:{context.lower()}",
        lambda: service.save(
            principal, "Icons come from Phosphor", "fact", context=context, related_to=[target]
        ),
        owner_deletes(target),
    )
    error = future.exception()
    if error is None:  # the target was locked by the save: it was linked, then deleted
        return
    assert isinstance(error, InvalidInput), repr(error)
    assert str(error) == f"related_to: no object with id {target} in this project"


def test_a_save_whose_exact_duplicate_is_deleted_meanwhile_says_so(
    service: MemoryService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    """A save repeating a memory (here with a higher confidence to give it) while another
    client deletes that memory: the save answers "deleted meanwhile; save it again", as the
    service intends, not the graph's wording or an internal error."""
    text = "The on-call rotation changes on Mondays"
    memory_id = service.save(principal, text, "fact", source="inferred")["memory"]["id"]
    future = run_blocked(
        database_url,
        owner_pool,
        version_lock_key(memory_id),
        lambda: service.save(principal, text, "fact", source="explicit"),
        owner_deletes(memory_id),
    )
    with pytest.raises(MemoryNotFound, match=f"^memory {memory_id} was deleted meanwhile"):
        future.result()


def test_a_save_repeating_a_memory_deleted_while_it_answers_is_no_internal_error(
    service: MemoryService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    """A save finds its exact duplicate, and another client deletes that memory before the
    save has read the memory back for its answer: the save either reports "deleted meanwhile"
    or answers "unchanged" (the delete waiting for it); never an internal error (a KeyError
    reading the answer, masked by the MCP layer)."""
    text = "Feature flags live in LaunchDarkly"
    memory_id = service.save(principal, text, "fact")["memory"]["id"]
    with ThreadPoolExecutor(2) as executor:
        with owner_pool.connection() as blocker, blocker.transaction():
            # the save's answer reads kb.memories, which joins the relationships
            blocker.execute("LOCK TABLE kb.graph_relationships IN ACCESS EXCLUSIVE MODE")
            saving = executor.submit(service.save, principal, text, "fact")
            wait_until(
                lambda: lock_waiters(database_url, blocker.info.backend_pid) > 0 or saving.done(),
                what="the save waits to read its answer",
            )
            assert not saving.done(), saving

            def delete() -> None:
                with owner_pool.connection() as conn, conn.transaction():
                    owner_deletes(memory_id)(conn)

            deleting = executor.submit(delete)
            wait_until(  # deleted, or waiting for the save (which then holds the memory)
                lambda: deleting.done() or lock_waiters(database_url) > 1,
                what="the delete is done or waits",
            )
        wait([saving, deleting], timeout=60)
    deleting.result()
    error = saving.exception()
    if error is not None:
        assert isinstance(error, MemoryNotFound), repr(error)
        assert str(error).startswith(f"memory {memory_id} was deleted meanwhile")
    else:
        assert saving.result()["status"] == "unchanged"
