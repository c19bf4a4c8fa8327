"""Ranking over twelve simulated months of use (`python -m benchmarks.lifecycle`).

Recall multiplies relevance by a recency factor (days since last use or change, against the
category's half-life) and an importance factor (migration 0013; weights
EMERGENT_MEMORY_RECALL_RECENCY_WEIGHT and _IMPORTANCE_WEIGHT). Fresh memories, as in the
retrieval-quality benchmark, all have recency 1 and say nothing about it; this benchmark
simulates a year of one agent's use per user and measures, month by month:

- how often the *currently* relevant memory ranks first, and in the top 3 and 10, for
  questions about facts whose value changed during the year (a port, an on-call engineer, an
  owner, a release day, a database version, a formatter preference: each value saved as a
  memory when it changed, in a different phrasing; the product's dedup supersedes the old
  value when it recognises the change, otherwise both stay active and ranking must choose);
- the same for stable memories created in the first month and never changed (instructions,
  conventions, corrections, some of importance core or high): old, but still the answer;
- what decay does to confidence over simulated time (effective confidence of the active
  memories per month, and of a memory left unused since month 0).

The data: per user, generated background memories (the quality benchmark's texts, created
throughout the year, some of importance low or high), the changing facts and the stable
memories, all saved through the memory service with the product's dedup policy. Use follows
a realistic pattern: every ten simulated days, each user's agent recalls a handful of times
(questions about the facts it works with, the stable rules, generic questions about its
services), through the service, so every memory a recall returns counts as used, as in the
product. Each setting of the weights is its own world (its own users, the same content): the
uses a ranking causes feed that world's later recency, as they would.

Time is simulated in the database: after each ten-day step every timestamp of the
benchmark's rows (versions' created_at/updated_at, the recall log, evidence, relationships)
moves ten days into the past, as an administrator, so that `now()` is always the simulated
present; memories created and uses made during a step get their simulated day.
"""

from __future__ import annotations

import random
import re
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import psycopg

from benchmarks import generate
from benchmarks.common import CachedEmbeddings, bench_database, write_result
from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.auth.principal import READ, WRITE, Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.authority import SOURCE_ORDER

NAMESPACE = uuid.UUID("5a0c3e2b-8d41-4f6a-b7e9-2c1d0f9e8a73")
DAYS, STEP, MONTH = 360, 10, 30
SERVICES = generate.SERVICES
PEOPLE = generate.PEOPLE

# kind, category, phrasings (each change uses the next), question, values
SUBJECTS: list[tuple[str, str, list[str], str, list[str]]] = [
    (
        "port",
        "fact",
        [
            "The {service} service listens on port {v}.",
            "{service} moved to port {v}.",
            "Port {v} is where {service} runs now.",
            "The {service} service answers on port {v} since the last migration.",
        ],
        "which port does the {service} service use",
        [str(p) for p in range(3100, 9900, 137)],
    ),
    (
        "oncall",
        "fact",
        [
            "{v} is on call for {service} this rotation.",
            "The {service} on-call engineer is {v}.",
            "{v} took over the {service} pager.",
            "Page {v} for {service} incidents now.",
        ],
        "who is on call for {service}",
        PEOPLE,
    ),
    (
        "owner",
        "fact",
        [
            "{v} owns the {service} service.",
            "The {service} service is now owned by {v}.",
            "Ownership of {service} moved to {v}.",
            "{v} is the new owner of {service}.",
        ],
        "who owns the {service} service",
        PEOPLE,
    ),
    (
        "release",
        "convention",
        [
            "Releases of {service} are cut every {v}.",
            "{service} releases moved to {v}.",
            "{service} ships on {v} now.",
            "The {service} release train leaves on {v}.",
        ],
        "when are {service} releases cut",
        generate.DAYS,
    ),
    (
        "version",
        "fact",
        [
            "The {service} database runs Postgres {v}.",
            "{service} was upgraded to Postgres {v}.",
            "Postgres {v} is what {service} uses now.",
            "The {service} database is on Postgres {v} after the upgrade.",
        ],
        "which Postgres version does {service} use",
        [f"{major}.{minor}" for major in (13, 14, 15, 16, 17) for minor in (2, 4, 7)],
    ),
    (
        "formatter",
        "preference",
        [
            "The user formats {service} code with {v}.",
            "For {service}, the user switched to {v} for formatting.",
            "The user now prefers {v} to format {service} code.",
            "{v} is the formatter the user wants for {service}.",
        ],
        "which formatter does the user use for {service}",
        ["black", "ruff format", "prettier", "yapf", "autopep8", "dprint", "biome"],
    ),
]

# stable memories: text, question, category, importance
STABLE: list[tuple[str, str, str, str]] = [
    (
        "Always run the {service} contract tests before merging to main.",
        "what to run before merging {service} changes",
        "instruction",
        "core",
    ),
    (
        "Never deploy {service} on a Friday afternoon.",
        "can I deploy {service} on friday",
        "instruction",
        "high",
    ),
    (
        "{service} amounts are integers in cents, never floating point.",
        "how are {service} amounts stored",
        "correction",
        "core",
    ),
    (
        "The {service} API paginates with opaque cursors, not offsets.",
        "how does the {service} API paginate",
        "convention",
        "high",
    ),
    (
        "Ask {person} before changing the {service} database schema.",
        "who to ask about {service} schema changes",
        "instruction",
        "normal",
    ),
    (
        "The {service} integration tests need the local Kafka broker running first.",
        "what do the {service} integration tests need",
        "fact",
        "normal",
    ),
]


@dataclass
class Event:
    day: float
    user: int
    content: str
    category: str
    importance: str
    key: str  # what it answers: a subject, a stable memory, or "" (background)
    source: str = "explicit"
    states: str = ""  # background: the user's subject whose value it states, if any


# Background texts (generate.TEMPLATES) that state, unqualified, the value of a subject
# SUBJECTS plants: a later one is that subject's current value, as a planted change would be.
# Not those said of another project ("In project 62, ...") nor those qualified by an
# environment or a week ("runs on port 4000 in staging", "on call during week 12").
STATES_A_SUBJECT = [
    ("owner", re.compile(r"\w+ owns the (\w+) service now;")),
    ("port", re.compile(r"The (\w+) service listens on port \d+, not \d+ as assumed earlier")),
    ("release", re.compile(r"Releases of (\w+) are cut every \w+ at")),
    ("version", re.compile(r"The (\w+) database is Postgres version [\d.]+")),
]


def states_a_subject(text: str) -> str:
    """The subject key (`kind:service`) a background text states the value of, or ""."""
    if text.startswith("In project"):
        return ""
    for kind, pattern in STATES_A_SUBJECT:
        found = pattern.match(text)
        if found:
            return f"{kind}:{found.group(1)}"
    return ""


@dataclass
class World:
    name: str
    recency_weight: float
    importance_weight: float
    ids: dict[tuple[int, int], str] = field(default_factory=dict)  # (user, event) -> memory
    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def actor(world: str, user: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"actor:{world}:{user}")


def project(world: str, user: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"project:{world}:{user}")


def principal(world: str, user: int) -> Principal:
    return Principal(actor(world, user), project(world, user), frozenset({READ, WRITE}))


def plan(
    users: int, background: int, days: int = DAYS, seed: int = 17
) -> tuple[list[Event], dict[str, Any]]:
    """Every memory of the year, with its day; and each user's questions."""
    rng = random.Random(seed)
    events: list[Event] = []
    questions: dict[str, Any] = {"subjects": defaultdict(list), "stable": defaultdict(list)}
    # the quality benchmark's background texts (cached vectors): generated per user
    generated = list(generate.memories(background * 10, 10, seed=5))
    for user in range(users):
        mine = [m for m in generated if m.actor == user % 10][:background]
        backdrop = []
        for m in mine:
            roll = rng.random()
            importance = "low" if roll < 0.08 else "high" if roll < 0.16 else "normal"
            source = "inferred" if rng.random() < 0.5 else "explicit"
            backdrop.append(
                Event(rng.uniform(0, days), user, m.content, m.category, importance, "", source)
            )
        events += backdrop
        services = rng.sample(SERVICES, len(SUBJECTS) * 2 + len(STABLE))
        planted = {
            f"{kind}:{service}"
            for (kind, *_), service in zip(SUBJECTS * 2, services[: len(SUBJECTS) * 2], strict=True)
        }
        for event in backdrop:
            stated = states_a_subject(event.content)
            event.states = stated if stated in planted else ""
        for n, (kind, category, phrasings, question, values) in enumerate(SUBJECTS * 2):
            service = services[n]
            key = f"{kind}:{service}"
            changes = rng.choice([0, 1, 1, 2, 2, 3])
            when = [rng.uniform(0, days / 4)]
            when += [rng.uniform(days / 6, days) for _ in range(changes)]
            chosen = rng.sample(values, len(when))
            for i, (day, value) in enumerate(zip(sorted(when), chosen, strict=True)):
                text = phrasings[i % len(phrasings)].format(service=service, v=value)
                events.append(Event(day, user, text, category, "normal", key))
            questions["subjects"][user].append((key, question.format(service=service)))
        for n, (text, question, category, importance) in enumerate(STABLE):
            service = services[len(SUBJECTS) * 2 + n]
            key = f"stable:{n}"
            content = text.format(service=service, person=rng.choice(PEOPLE))
            events.append(Event(rng.uniform(0, MONTH), user, content, category, importance, key))
            questions["stable"][user].append((key, question.format(service=service)))
    events.sort(key=lambda e: e.day)
    questions["generic"] = generate.queries(200, seed=29)
    return events, questions


# `d`: an interval (e.g. '10 days'); every timestamp of the benchmark's rows moves by it
SHIFT = [
    "UPDATE kb.graph_objects SET created_at = created_at - %(d)s::interval, "
    "updated_at = updated_at - %(d)s::interval, deleted_at = deleted_at - %(d)s::interval",
    "UPDATE kb.graph_relationships SET created_at = created_at - %(d)s::interval, "
    "updated_at = updated_at - %(d)s::interval, deleted_at = deleted_at - %(d)s::interval",
    "UPDATE kb.memory_recalls SET recalled_at = recalled_at - %(d)s::interval",
    "UPDATE kb.memory_evidence SET created_at = created_at - %(d)s::interval",
]


def shift(conn: psycopg.Connection[Any], days: float) -> None:
    """Every timestamp of the benchmark's rows `days` further into the past."""
    with conn.transaction():
        for statement in SHIFT:
            conn.execute(statement, {"d": f"{days} days"})


# `d`: how long ago (an interval); `since`: when the save began
REDATE = [
    "UPDATE kb.graph_objects SET created_at = now() - %(d)s::interval, "
    "updated_at = now() - %(d)s::interval WHERE created_at >= %(since)s",
    "UPDATE kb.graph_objects SET deleted_at = now() - %(d)s::interval "
    "WHERE deleted_at >= %(since)s",
    "UPDATE kb.graph_relationships SET created_at = now() - %(d)s::interval, "
    "updated_at = now() - %(d)s::interval WHERE created_at >= %(since)s",
    "UPDATE kb.memory_evidence SET created_at = now() - %(d)s::interval "
    "WHERE created_at >= %(since)s",
]


def clock(conn: psycopg.Connection[Any]) -> Any:
    return conn.execute("SELECT clock_timestamp()").fetchone()[0]  # type: ignore[index]


def redate(conn: psycopg.Connection[Any], since: Any, days_ago: float) -> None:
    """Whatever a save wrote since `since` (the memory's version, a superseded memory's new
    version, their edges, evidence), dated `days_ago` before the simulated present."""
    with conn.transaction():
        for statement in REDATE:
            conn.execute(statement, {"since": since, "d": f"{days_ago} days"})


def redate_uses(conn: psycopg.Connection[Any], since: Any, step: float) -> None:
    """The uses recorded since `since`, spread over the last `step` days."""
    with conn.transaction():
        conn.execute(
            "UPDATE kb.memory_recalls "
            "SET recalled_at = now() - make_interval(secs => random() * %(s)s) "
            "WHERE recalled_at >= %(since)s",
            {"since": since, "s": step * 86400},
        )


def ranks(service: MemoryService, who: Principal, query: str, limit: int = 10) -> list[str]:
    found = service.recall(who, query, limit=limit, record_use=False)
    return [m["id"] for m in found["memories"]]


def answers(
    world: World, events: list[Event], today: float, stated: bool = True
) -> tuple[dict[tuple[int, str], str], dict[tuple[int, str], set[str]]]:
    """Each (user, subject)'s current memory by `today`, and the other values' memories.
    With `stated`, a background text that states a planted subject's value (Event.states) is
    one of its values too, and the current value is the one the product's contract makes
    current (memory/authority.py: the strongest source, then the newest; an inferred note
    never overrides an explicit value). Without, only the planted texts (all explicit) are
    its values, the newest current: the labels before stop 88, kept for comparison."""
    best: dict[tuple[int, str], tuple[tuple[int, float], str]] = {}
    every: dict[tuple[int, str], set[str]] = defaultdict(set)
    for n, event in enumerate(events):
        key = event.key or (event.states if stated else "")
        if event.day <= today and key and (event.user, n) in world.ids:
            memory = world.ids[(event.user, n)]
            every[(event.user, key)].add(memory)
            rank = (SOURCE_ORDER.index(event.source), event.day)
            if (event.user, key) not in best or rank >= best[(event.user, key)][0]:
                best[(event.user, key)] = (rank, memory)
    current = {key: memory for key, (_, memory) in best.items()}
    older = {key: every[key] - {current[key]} for key in current}
    return current, older


def evaluate(
    service: MemoryService,
    world: World,
    events: list[Event],
    questions: dict[str, Any],
    users: int,
    today: float,
) -> dict[str, Any]:
    """Rank of the current answer to every question, for the memories existing `today`;
    "changed_planted_only": the changed facts scored as labelled before stop 88 (a later
    background text stating another value of the subject did not count as its value)."""
    labels = {
        "": answers(world, events, today),
        "_planted_only": answers(world, events, today, False),
    }
    scores: dict[str, dict[str, list[float]]] = {
        "changed": defaultdict(list),
        "unchanged": defaultdict(list),
        "stable": defaultdict(list),
        "changed_planted_only": defaultdict(list),
    }
    for user in range(users):
        who = principal(world.name, user)
        asked = [("subjects", k, q) for k, q in questions["subjects"][user]]
        asked += [("stable", k, q) for k, q in questions["stable"][user]]
        for group, key, question in asked:
            ranking: list[str] | None = None
            for suffix, (current, older) in labels.items():
                wanted = current.get((user, key))
                if wanted is None:
                    continue
                stale = older.get((user, key), set())
                kind = "stable" if group == "stable" else "changed" if stale else "unchanged"
                if suffix and kind != "changed":
                    continue
                if ranking is None:
                    ranking = ranks(service, who, question)
                rank = ranking.index(wanted) + 1 if wanted in ranking else None
                values = scores[kind + suffix]
                values["hit@1"].append(float(rank == 1))
                values["hit@3"].append(float(rank is not None and rank <= 3))
                values["hit@10"].append(float(rank is not None))
                values["mrr"].append(1 / rank if rank else 0.0)
                if stale:
                    first_stale = next((i for i, m in enumerate(ranking) if m in stale), None)
                    values["stale_above_current"].append(
                        float(first_stale is not None and (rank is None or first_stale < rank - 1))
                    )
    return {
        kind: {name: round(float(np.mean(v)), 4) for name, v in values.items()}
        | {"questions": len(values["mrr"])}
        for kind, values in scores.items()
    }


CONFIDENCE = """
WITH active AS (
    SELECT o.canonical_id, coalesce(o.properties ->> 'importance', 'normal') AS importance,
           (o.properties ->> 'confidence')::double precision AS stored,
           kb.memory_effective_confidence(
               (o.properties ->> 'confidence')::double precision, o.properties ->> 'importance',
               greatest(
                   (SELECT max(m.recalled_at) FROM kb.memory_recalls m
                    WHERE m.canonical_id = o.canonical_id),
                   (SELECT max(e.created_at) FROM kb.memory_evidence e
                    WHERE e.canonical_id = o.canonical_id),
                   o.updated_at),
               now(), %(floor)s, %(grace)s, %(half_life)s) AS effective
    FROM kb.graph_objects o
    WHERE o.type = 'Memory' AND o.actor_id = ANY(%(actors)s) AND kb.is_active_memory(o)
)
SELECT importance, count(*), avg(stored), avg(effective),
       avg((effective < 0.5)::int), avg((effective <= %(floor)s + 1e-9)::int)
FROM active GROUP BY ROLLUP (importance) ORDER BY importance NULLS FIRST
"""

# a memory saved on day 0 and never used, reinforced or changed: its confidence each month
IDLE_CURVE = """
SELECT m, s, i, kb.memory_effective_confidence(s, i, now() - make_interval(days => m * 30),
       now(), %(floor)s, %(grace)s, %(half_life)s)
FROM generate_series(0, 12) AS m, unnest(ARRAY[0.7, 0.9, 1.0]::float8[]) AS s,
     unnest(ARRAY['normal', 'core']) AS i
ORDER BY i DESC, s, m
"""


def confidence(
    conn: psycopg.Connection[Any], actors: list[uuid.UUID], decay: dict[str, float]
) -> dict[str, Any]:
    rows = conn.execute(CONFIDENCE, {"actors": actors, **decay}).fetchall()
    return {
        (importance or "all"): {
            "memories": count,
            "stored_mean": round(float(stored), 4),
            "effective_mean": round(float(effective), 4),
            "below_archive_threshold_0.5": round(float(below), 4),
            "at_floor": round(float(floor), 4),
        }
        for importance, count, stored, effective, below, floor in rows
    }


# The recall SQL's recency is of the last use or change; the variant measures it of the last
# change only (patched into the benchmark's own database, never the product's).
RECENCY_OF_USE = (
    "kb.memory_recency(o.properties ->> 'category',\n"
    + " " * 33
    + ("greatest(lu.last_used, o.updated_at), now())")
)
RECENCY_OF_CHANGE = "kb.memory_recency(o.properties ->> 'category', o.updated_at, now())"


def recency_of_change_only(conn: psycopg.Connection[Any]) -> None:
    definition = conn.execute(
        "SELECT pg_get_functiondef('kb.recall_memories_for'::regproc)"
    ).fetchone()[0]  # type: ignore[index]
    assert RECENCY_OF_USE in definition, "the recall SQL's recency changed: update the variant"
    conn.execute(definition.replace(RECENCY_OF_USE, RECENCY_OF_CHANGE))


# Each (name, wr, wi) is a world; "off" is the ranking before migration 0013.
WORLDS = [
    ("off", 0.0, 0.0),
    ("wr 0.05, wi 0", 0.05, 0.0),
    ("wr 0.05, wi 0.05", 0.05, 0.05),
    ("wr 0.1, wi 0.05", 0.1, 0.05),
    ("wr 0.3, wi 0.1", 0.3, 0.1),
]


def run(
    users: int = 6,
    background: int = 150,
    recalls_per_step: int = 6,
    days: int = DAYS,
    variant: bool = True,
    worlds: list[tuple[str, float, float]] | None = None,
) -> dict[str, Any]:
    """The simulation in each world (WORLDS, and the shipped weights if they are not among
    them); then (with `variant`) the shipped and a stronger recency of the last change only,
    in a database of its own."""
    shipped = MemoryConfig(dedup_threshold=1.0)
    weights = (shipped.recall_recency_weight, shipped.recall_importance_weight)
    if worlds is None:
        worlds = list(WORLDS)
        if weights not in {(wr, wi) for _, wr, wi in worlds}:
            worlds.append(("shipped", *weights))
    result = simulate(users, background, recalls_per_step, worlds, days)
    result["shipped_weights"] = {"recency_weight": weights[0], "importance_weight": weights[1]}
    if variant:
        result["variant"] = simulate(
            users,
            background,
            recalls_per_step,
            [("shipped, change only", *weights), ("wr 0.3, wi 0.1, change only", 0.3, 0.1)],
            days,
            recency_from="change",
        )
    write_result("lifecycle", result, markdown(result))
    return result


def merge(result: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The worlds of a second run of the same simulation (same users, plan and questions, its
    own database) added to the first's result."""
    result["worlds"] |= other["worlds"]
    for row, extra in zip(result["monthly"], other["monthly"], strict=True):
        row["worlds"] |= extra["worlds"]
    result["separate_runs"] = [*result.get("separate_runs", []), *other["worlds"]]
    return result


def simulate(
    users: int,
    background: int,
    recalls_per_step: int,
    worlds: list[tuple[str, float, float]],
    days: int = DAYS,
    recency_from: str = "use",
) -> dict[str, Any]:
    started = time.perf_counter()
    embedder = CachedEmbeddings()
    shipped = MemoryConfig(dedup_threshold=1.0)
    policy = DEDUP_POLICIES[embedder.model_name]
    base = replace(shipped, **MemoryConfig.dedup_fields(policy))
    decay = {
        "floor": shipped.decay_floor,
        "grace": shipped.decay_grace_days,
        "half_life": shipped.decay_half_life_days,
    }
    events, questions = plan(users, background, days)
    embedder.vectors([e.content for e in events])  # one batched pass for the new texts
    asked = [q for qs in questions["subjects"].values() for _, q in qs]
    asked += [q for qs in questions["stable"].values() for _, q in qs] + questions["generic"]
    embedder.vectors(asked, "q")
    embedder.save()
    state = [World(name, wr, wi) for name, wr, wi in worlds]
    rng = random.Random(41)
    monthly: list[dict[str, Any]] = []
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            services = {
                w.name: MemoryService(
                    pool,
                    embedder,
                    replace(
                        base,
                        recall_recency_weight=w.recency_weight,
                        recall_importance_weight=w.importance_weight,
                    ),
                )
                for w in state
            }
            with psycopg.connect(url, autocommit=True) as admin:
                if recency_from == "change":
                    recency_of_change_only(admin)
                pending = 0
                for step in range(days // STEP):
                    end = (step + 1) * STEP
                    shift(admin, STEP)
                    while pending < len(events) and events[pending].day <= end:
                        event = events[pending]
                        for world in state:
                            since = clock(admin)
                            saved = services[world.name].save(
                                principal(world.name, event.user),
                                event.content,
                                event.category,  # type: ignore[arg-type]
                                source=event.source,  # type: ignore[arg-type]
                                importance=event.importance,  # type: ignore[arg-type]
                            )
                            world.outcomes[saved["status"]] += 1
                            memory_id = saved["memory"]["id"]
                            world.ids[(event.user, pending)] = memory_id
                            redate(admin, since, end - event.day)
                        pending += 1
                    since = clock(admin)
                    sessions(services, state, questions, users, recalls_per_step, rng)
                    redate_uses(admin, since, STEP)
                    if end % MONTH == 0:
                        month = end // MONTH
                        row: dict[str, Any] = {"month": month, "worlds": {}}
                        for world in state:
                            actors = [actor(world.name, u) for u in range(users)]
                            row["worlds"][world.name] = {
                                "ranking": evaluate(
                                    services[world.name], world, events, questions, users, end
                                ),
                                "confidence": confidence(admin, actors, decay),
                            }
                        monthly.append(row)
                        print(
                            f"month {month}: {time.perf_counter() - started:.0f} s", file=sys.stderr
                        )
                idle = admin.execute(IDLE_CURVE, decay).fetchall()
        finally:
            pool.close()
    result = {
        "users": users,
        "background_per_user": background,
        "recalls_per_user_per_step": recalls_per_step,
        "days": days,
        "step_days": STEP,
        "worlds": {
            w.name: {
                "recency_weight": w.recency_weight,
                "importance_weight": w.importance_weight,
                "saves": dict(w.outcomes),
            }
            for w in state
        },
        "decay": decay,
        "memories_planned_per_world": len(events),
        "monthly": monthly,
        "idle_curve": [
            {"month": m, "stored": s, "importance": i, "effective": round(e, 4)}
            for m, s, i, e in idle
        ],
        "recency_from": recency_from,
        "seconds": round(time.perf_counter() - started),
    }
    return result


def sessions(
    services: dict[str, MemoryService],
    state: list[World],
    questions: dict[str, Any],
    users: int,
    per_step: int,
    rng: random.Random,
) -> None:
    """Each user's agent recalls `per_step` times (the same questions in every world): a
    fact it works with (the subjects that exist by now), a stable rule, or a generic
    question about its services; every memory returned counts as used."""
    for user in range(users):
        pool = [q for _, q in questions["subjects"][user]] * 3
        pool += [q for _, q in questions["stable"][user]] * 2
        chosen = [rng.choice(pool) for _ in range(per_step - 2)]
        chosen += rng.sample(questions["generic"], 2)
        for world in state:
            who = principal(world.name, user)
            for question in chosen:
                services[world.name].recall(who, question)


def markdown(result: dict[str, Any]) -> str:
    worlds = result["worlds"]
    lines = [
        "# Ranking over simulated months of use",
        "",
        f"{result['users']} users per world, {result['background_per_user']} background "
        f"memories each plus changing facts and stable rules "
        f"({result['memories_planned_per_world']} saves per world), "
        f"{result['days']} simulated days in steps of {result['step_days']}; each user "
        f"recalls {result['recalls_per_user_per_step']} times per step (every memory "
        "returned counts as used). Worlds, by recency weight wr and importance weight wi: "
        + ", ".join(
            f"`{name}` (saves " + ", ".join(f"{k} {v}" for k, v in sorted(w["saves"].items())) + ")"
            for name, w in worlds.items()
        )
        + ".",
        "",
        *(
            [
                "Worlds "
                + "; ".join(f"`{name}`" for name in result["separate_runs"])
                + " ran in a second run of the same simulation (its own database, the same "
                "plan and questions).",
                "",
            ]
            if result.get("separate_runs")
            else []
        ),
        "## The current value of a changed fact ranks first (hit@1) / in the top 3",
        "",
        "Questions about facts whose value changed at least once by that month; "
        "'stale above' = an older value of the same fact ranks above the current one. A "
        "background text that states a planted subject's value unqualified (`states_a_subject`"
        ") is one of its values, the current one when it is the strongest source and the "
        "newest (since stop 88; the pooled table also scores the labels before).",
        "",
        "| month | " + " | ".join(f"{n}: hit@1 / hit@3 / stale above" for n in worlds) + " |",
        "|---|" + "---|" * len(worlds),
    ]
    for row in result["monthly"]:
        cells = []
        for name in worlds:
            r = row["worlds"][name]["ranking"]["changed"]
            if r.get("questions"):
                cells.append(f"{r['hit@1']} / {r['hit@3']} / {r.get('stale_above_current', 0)}")
            else:
                cells.append("-")
        lines.append(f"| {row['month']} | " + " | ".join(cells) + " |")
    for kind, title in (
        ("unchanged", "Facts not changed (yet): hit@1 / MRR"),
        ("stable", "Stable rules from the first month (some core or high): hit@1 / MRR"),
    ):
        lines += [
            "",
            f"## {title}",
            "",
            "| month | " + " | ".join(worlds) + " |",
            "|---|" + "---|" * len(worlds),
        ]
        for row in result["monthly"]:
            cells = []
            for name in worlds:
                r = row["worlds"][name]["ranking"][kind]
                cells.append(f"{r['hit@1']} / {r['mrr']}" if r.get("questions") else "-")
            lines.append(f"| {row['month']} | " + " | ".join(cells) + " |")
    lines += ["", "Over the year (all months' questions pooled):", ""]
    lines += [
        "| world | changed hit@1 | changed hit@1, labelled as before stop 88 | changed hit@10 "
        "| stable hit@1 | all MRR |",
        "|---|---|---|---|---|---|",
    ]
    for name in worlds:
        lines.append(f"| {name} | " + " | ".join(_pooled(result, name)) + " |")
    variant = result.get("variant")
    if variant:
        for name in variant["worlds"]:
            lines.append(f"| {name} | " + " | ".join(_pooled(variant, name)) + " |")
        lines += [
            "",
            "'change only': recency of the last change (the memory's `updated_at`) instead "
            "of the last use or change, patched into that run's database "
            f"({variant['seconds']} s). Changed facts, by month (hit@1 / stale above):",
            "",
            "| month | " + " | ".join(variant["worlds"]) + " |",
            "|---|" + "---|" * len(variant["worlds"]),
        ]
        for row in variant["monthly"]:
            cells = []
            for name in variant["worlds"]:
                r = row["worlds"][name]["ranking"]["changed"]
                cells.append(
                    f"{r['hit@1']} / {r.get('stale_above_current', 0)}"
                    if r.get("questions")
                    else "-"
                )
            lines.append(f"| {row['month']} | " + " | ".join(cells) + " |")
    d = result["decay"]
    first = next(iter(worlds))
    lines += [
        "",
        f"## Confidence over time (decay: floor {d['floor']}, grace {d['grace']} days, "
        f"half-life {d['half_life']} days)",
        "",
        f"Active memories of world `{first}` at each month's end: mean stored / mean effective "
        "confidence; share below the archive threshold (0.5); share at the floor.",
        "",
        "| month | all | low | normal | high | core |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["monthly"]:
        c = row["worlds"][first]["confidence"]
        cells = []
        for importance in ("all", "low", "normal", "high", "core"):
            x = c.get(importance)
            cells.append(
                "-"
                if x is None
                else f"{x['stored_mean']:.2f} / {x['effective_mean']:.2f}; "
                f"{x['below_archive_threshold_0.5']:.0%} < 0.5; {x['at_floor']:.0%} floor"
            )
        lines.append(f"| {row['month']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "A memory saved at month 0 and never used, reinforced or changed (effective "
        "confidence; stored 0.7 = inferred, 0.9 = corrected, 1.0 = explicit):",
        "",
        "| importance, stored | " + " | ".join(f"month {m}" for m in range(13)) + " |",
        "|---|" + "---|" * 13,
    ]
    curve: dict[tuple[str, float], list[float]] = defaultdict(list)
    for point in result["idle_curve"]:
        curve[(point["importance"], point["stored"])].append(point["effective"])
    for (importance, stored), values in curve.items():
        lines.append(f"| {importance}, {stored} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    lines += ["", f"Run time: {result['seconds']} s."]
    return "\n".join(lines)


def _pooled(result: dict[str, Any], name: str) -> list[str]:
    totals: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for row in result["monthly"]:
        ranking = row["worlds"][name]["ranking"]
        for kind in ("changed", "stable", "changed_planted_only"):
            r = ranking.get(kind, {})
            if r.get("questions"):
                totals[f"{kind} hit@1"].append((r["hit@1"], r["questions"]))
                totals[f"{kind} hit@10"].append((r["hit@10"], r["questions"]))
        for kind in ("changed", "unchanged", "stable"):  # every question once
            r = ranking[kind]
            if r.get("questions"):
                totals["mrr"].append((r["mrr"], r["questions"]))

    def mean(key: str) -> str:
        pairs = totals[key]
        weight = sum(n for _, n in pairs)
        return f"{sum(v * n for v, n in pairs) / weight:.3f}" if weight else "-"

    return [
        mean("changed hit@1"),
        mean("changed_planted_only hit@1"),
        mean("changed hit@10"),
        mean("stable hit@1"),
        mean("mrr"),
    ]


if __name__ == "__main__":
    print(markdown(run()))
