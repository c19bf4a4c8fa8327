"""SQL round trips per save and per recall, counted on the wire.

A round trip is one wait of the client for the server: one ReadyForQuery message from the
server in libpq's protocol trace (an extended-protocol Sync, or a simple Query such as BEGIN,
COMMIT or SAVEPOINT). Statements are the Execute and Query messages the client sent. Both are
counted for whole service calls (from taking the pooled connection to giving it back, so the
pool's check of the connection, BEGIN and COMMIT are in), as the application role.

Each scenario runs as a new actor in one project, after a few rounds of warming up (psycopg
prepares a statement on its sixth use, which costs one more round trip once), and is counted
several times; the report gives the count and says if the rounds disagreed. Then each is
timed over more calls, without the trace (it costs time), with vectors from the embedding
cache, so that the time is the database's and the service's own.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from psycopg import Connection, pq

from benchmarks.common import CachedEmbeddings, bench_database, percentiles, write_result
from benchmarks.latency import app_role_url
from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryConfig, MemoryService

# What a save path runs (a fresh actor for every round, so that earlier rounds never change
# which path a save takes); `setup` is not counted. The texts of each round name its own
# ticket: hundreds of actors saving one identical text made the HNSW index miss an actor's
# copy of it (identical vectors are a hard case for the index), and the save took another path.
OLD_FACT = "Deploys to production happen on Fridays (ticket OPS-{ticket})"
REWORDED_FACT = "Production deploys happen on Fridays (ticket OPS-{ticket})"  # supersedes OLD
OTHER_FACT = "The ledger service listens on port 8443 (ticket OPS-{ticket})"  # distinct
TEXTS = (OLD_FACT, REWORDED_FACT, OTHER_FACT)
CONTEXT = "release process"
QUERY = "when do production deploys happen"


@dataclass
class Counted:
    """Round trips and statements seen on one connection while counting."""

    round_trips: int = 0
    statements: int = 0
    lines: list[str] = field(default_factory=list)


@contextmanager
def count_round_trips(conn: Connection[Any]) -> Iterator[Counted]:
    """Count the round trips of `conn` (and its statements) inside the block, by libpq's
    protocol trace (Linux). The trace stays on the connection's libpq handle, so a pooled
    connection is counted whoever takes it from the pool meanwhile."""
    counted = Counted()
    with tempfile.TemporaryFile() as trace:
        conn.pgconn.trace(os.dup(trace.fileno()))  # libpq closes its copy on untrace
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield counted
        finally:
            conn.pgconn.untrace()
            trace.seek(0)
            counted.lines = trace.read().decode("utf-8", "replace").splitlines()
    for line in counted.lines:
        direction, _, rest = line.partition("\t")
        message = rest.partition("\t")[2].split("\t", 1)[0].strip()
        if direction == "B" and message == "ReadyForQuery":
            counted.round_trips += 1
        elif direction == "F" and message in ("Execute", "Query"):
            counted.statements += 1


# (the service, the round's actor, the round's ticket)
Step = Callable[[MemoryService, Principal, int], Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    setup: Step
    call: Step
    check: Callable[[Any], bool]


def _save(content: str, context: str | None = None) -> Step:
    def save(service: MemoryService, principal: Principal, ticket: int) -> Any:
        return service.save(principal, content.format(ticket=ticket), "fact", context=context)

    return save


def _recall(service: MemoryService, principal: Principal, ticket: int) -> Any:
    return service.recall(principal, QUERY)


def _created(result: Any) -> bool:
    return bool(result["status"] == "created" and not result["superseded_ids"])


def _superseded(result: Any) -> bool:
    return bool(result["status"] == "updated" and len(result["superseded_ids"]) == 1)


SCENARIOS = [
    Scenario(
        "plain save",
        "a new memory, distinct from the actor's one other memory",
        _save(OLD_FACT),
        _save(OTHER_FACT),
        _created,
    ),
    Scenario(
        "save with a context",
        "a new memory filed in a context the actor has",
        _save(OLD_FACT, CONTEXT),
        _save(OTHER_FACT, CONTEXT),
        lambda result: _created(result) and result["memory"]["contexts"] == [CONTEXT],
    ),
    Scenario(
        "save with a new context",
        "a new memory filed in a context created by this save",
        _save(OLD_FACT),
        _save(OTHER_FACT, CONTEXT),
        lambda result: _created(result) and result["memory"]["contexts"] == [CONTEXT],
    ),
    Scenario(
        "save that supersedes",
        "a rewording of the actor's memory, which it supersedes",
        _save(OLD_FACT),
        _save(REWORDED_FACT),
        _superseded,
    ),
    Scenario(
        "save with a context that supersedes",
        "a rewording, in the context of the memory it supersedes",
        _save(OLD_FACT, CONTEXT),
        _save(REWORDED_FACT, CONTEXT),
        lambda result: _superseded(result) and result["memory"]["contexts"] == [CONTEXT],
    ),
    Scenario(
        "save of an exact repeat",
        "the same text again (the memory is reinforced)",
        _save(OLD_FACT),
        _save(OLD_FACT),
        lambda result: result["status"] == "unchanged",
    ),
    Scenario(
        "recall",
        "a query matching the actor's memory",
        _save(OLD_FACT),
        _recall,
        lambda result: len(result["memories"]) == 1,
    ),
]


def measure(
    service: MemoryService,
    conn: Connection[Any],
    project_id: uuid.UUID,
    scenarios: list[Scenario] | None = None,
    *,
    warm_up: int = 6,
    rounds: int = 5,
    timed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Round trips and statements of each scenario, counted on `conn`, the only connection
    of the service's pool; then, if `timed`, the time of that many more calls, not traced
    (the trace costs time). Every round is a new actor in `project_id`."""
    chosen = SCENARIOS if scenarios is None else scenarios
    samples: dict[str, list[Counted]] = {scenario.name: [] for scenario in chosen}
    times: dict[str, list[float]] = {scenario.name: [] for scenario in chosen}
    for round_ in range(warm_up + rounds + timed):
        for scenario in chosen:
            principal = Principal(uuid.uuid4(), project_id)
            scenario.setup(service, principal, round_)
            if round_ < warm_up + rounds:
                with count_round_trips(conn) as counted:
                    result = scenario.call(service, principal, round_)
                if round_ >= warm_up:
                    samples[scenario.name].append(counted)
            else:
                start = time.perf_counter()
                result = scenario.call(service, principal, round_)
                times[scenario.name].append((time.perf_counter() - start) * 1000)
            if not scenario.check(result):
                raise AssertionError(f"{scenario.name}: not the path it measures: {result}")
    report: dict[str, dict[str, Any]] = {}
    for scenario in chosen:
        trips = [counted.round_trips for counted in samples[scenario.name]]
        statements = [counted.statements for counted in samples[scenario.name]]
        report[scenario.name] = {
            "description": scenario.description,
            "round_trips": int(statistics.median(trips)),
            "statements": int(statistics.median(statements)),
            "round_trips_seen": sorted(set(trips)),
        }
        if timed:
            report[scenario.name]["ms"] = percentiles(times[scenario.name])
    return report


def run(rounds: int = 5, timed: int = 50, warm_up: int = 6) -> dict[str, Any]:
    """Counts (and times) every scenario with the real model's vectors (from the cache: no
    model time) and the product's dedup policy, as the application role through a pool of one
    connection, on an empty database."""
    embedder = CachedEmbeddings()
    config = MemoryConfig(**MemoryConfig.dedup_fields(DEDUP_POLICIES[embedder.model_name]))
    with bench_database() as url:
        pool = create_pool(app_role_url(url), min_size=1, max_size=1)
        try:
            with pool.connection() as conn:
                pass  # the pool's only connection: counted whoever holds it
            service = MemoryService(pool, embedder, config)
            # every text's vector in the cache first: the times are without the model
            tickets = range(warm_up + rounds + timed)
            embedder.embed_documents([text.format(ticket=n) for n in tickets for text in TEXTS])
            embedder.embed_query(QUERY)
            embedder.save()
            scenarios = measure(
                service, conn, uuid.uuid4(), warm_up=warm_up, rounds=rounds, timed=timed
            )
        finally:
            pool.close()
    result = {"scenarios": scenarios, "rounds": rounds, "timed": timed}
    write_result("roundtrips", result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# SQL round trips",
        "",
        "Per service call, from taking the pooled connection to giving it back (the pool's "
        "check of the connection, BEGIN and COMMIT included), as the application role; counted "
        f"in libpq's protocol trace over {result['rounds']} rounds after warming up. Time: p50 / "
        f"p95 in ms over {result['timed']} more calls, not traced, on an empty database, with "
        "vectors from the cache (no model time).",
        "",
        "| call | round trips | statements | time |",
        "|---|---|---|---|",
    ]
    for name, counted in result["scenarios"].items():
        trips = str(counted["round_trips"])
        if len(counted["round_trips_seen"]) > 1:
            trips += f" (rounds: {', '.join(map(str, counted['round_trips_seen']))})"
        ms = counted["ms"]
        lines.append(
            f"| {name}: {counted['description']} | {trips} | {counted['statements']} | "
            f"{ms['p50']} / {ms['p95']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run()))
