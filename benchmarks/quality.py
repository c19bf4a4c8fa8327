"""Retrieval quality on the labelled development set (benchmarks/data/retrieval.json).

Loads the memories through the memory service (real local model), marks the superseded
ones, then scores every query with the product's hybrid recall and with each channel alone
(vector only, full text only), in one run: hit@1, hit@5, hit@10 and MRR@10, overall and per
kind of query. Also compares the `english` and `simple` text search configurations.

Then it does it again with a background: the labelled set has about 33 memories visible per
query, so the top 10 is a third of them and hit@10 barely tells channels apart. The
background adds generated memories (benchmarks/generate.py, the latency benchmark's texts)
to every user, and generated queries that name one of their identifiers (an error code or a
ticket, found in exactly one memory) in a question. The fusion settings are swept on this
larger store, so the defaults can cite these numbers.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

import numpy as np
from pgvector import Vector
from psycopg import Connection

from benchmarks import generate
from benchmarks.common import (
    BEFORE_RARE_WORDS,
    DATA,
    CachedEmbeddings,
    bench_database,
    recall_before_lifecycle,
    write_result,
)
from emergent_memory import graph
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.db import migrate
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryConfig, MemoryService, relevance, store
from emergent_memory.memory.service import _relevant as relevant_rows

NAMESPACE = uuid.UUID("3b1f0e52-7a4c-4f0e-9a43-6f1d2c7b8e90")
K = 10
# Generated memories per user in the background (see the module docstring), and at most how
# many generated identifier queries each user gets.
BACKGROUND_PER_USER = 300
IDENTIFIER_QUERIES_PER_USER = 8
IDENTIFIER = re.compile(r"\b(E\d{4}|[A-Z]{3}-\d{3,4})\b")
ASK_ABOUT_ERROR = ["what is {x}", "why would we see {x}", "{x} meaning", "what causes {x}"]
ASK_ABOUT_TICKET = ["what is {x} about", "status of {x}", "which work does {x} cover"]

# Full text requiring every word of the query (what recall's full-text branch did before
# 0008), with either text search configuration, for the english-vs-simple comparison; no
# index needed at this size.
LEXICAL_WITH_CONFIG = """
SELECT o.canonical_id
FROM kb.graph_objects o, websearch_to_tsquery(%(config)s::regconfig, %(query)s) AS q(tsq)
WHERE o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
  AND NOT (o.properties ? 'superseded_by')
  AND ((o.actor_id = %(actor_id)s AND (o.scope = 'user'
        OR (o.scope = 'project' AND o.project_id = %(project_id)s))) OR o.scope = 'global')
  AND (%(category)s::text IS NULL OR o.labels @> ARRAY[%(category)s::text])
  AND (%(scope)s::text IS NULL OR o.scope = %(scope)s)
  AND to_tsvector(%(config)s::regconfig, o.properties ->> 'content') @@ q.tsq
ORDER BY ts_rank_cd(to_tsvector(%(config)s::regconfig, o.properties ->> 'content'), q.tsq) DESC,
         o.canonical_id
LIMIT %(limit)s
"""


def ident(kind: str, key: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"{kind}:{key}")


def principal_of(user: str, project: str, admin: bool = False) -> Principal:
    scopes = {READ, WRITE} | ({ADMIN} if admin else set())
    return Principal(ident("user", user), ident("project", project), frozenset(scopes))


class DevSet:
    def __init__(self, limit_queries: int | None = None) -> None:
        data = json.loads((DATA / "retrieval.json").read_text())
        self.users: list[dict[str, Any]] = data["users"]
        self.memories: list[dict[str, Any]] = data["memories"]
        self.queries: list[dict[str, Any]] = data["queries"][:limit_queries]
        if limit_queries:
            needed = {key for q in self.queries for key in q["relevant"]}
            needed |= {m["superseded_by"] for m in self.memories if m["key"] in needed}
            old = {m["key"] for m in self.memories if m.get("superseded_by") in needed}
            keep = needed | old
            users = {q["user"] for q in self.queries}
            self.memories = [m for m in self.memories if m["key"] in keep or m["user"] in users][
                : max(len(keep), 120)
            ]
            keys = {m["key"] for m in self.memories}
            self.queries = [q for q in self.queries if set(q["relevant"]) <= keys]
        self.ids: dict[str, uuid.UUID] = {}
        self.owner: dict[uuid.UUID, dict[str, Any]] = {}


def load(service: MemoryService, devset: DevSet) -> None:
    for memory in devset.memories:
        principal = principal_of(memory["user"], memory["project"], admin=True)
        saved = service.save(
            principal,
            memory["content"],
            memory["category"],
            source=memory["source"],
            scope=memory["scope"],
        )
        assert saved["status"] == "created", (memory["key"], saved["status"])
        memory_id = uuid.UUID(saved["memory"]["id"])
        devset.ids[memory["key"]] = memory_id
        devset.owner[memory_id] = memory
    with service.pool.connection() as conn, conn.transaction():
        for memory in devset.memories:
            newer = memory.get("superseded_by")
            if newer and newer in devset.ids:
                old_id, new_id = devset.ids[memory["key"]], devset.ids[newer]
                graph.create_relationship(
                    conn,
                    project_id=ident("project", memory["project"]),
                    type="SUPERSEDES",
                    src_id=new_id,
                    dst_id=old_id,
                    actor_id=ident("user", memory["user"]),
                )
                graph.update_object(conn, old_id, properties={"superseded_by": str(new_id)})


def add_background(
    service: MemoryService, embedder: CachedEmbeddings, devset: DevSet, per_user: int
) -> int:
    """Save per_user generated memories for every user (user or project scope, in one of
    their projects), then add a query for up to IDENTIFIER_QUERIES_PER_USER of each user's
    user-scope memories whose identifier no other memory has. Returns the memories added."""
    users = devset.users
    generated = list(generate.memories(per_user * len(users), len(users), seed=5))
    embedder.vectors([m.content for m in generated])  # one batched pass, then cached
    identifiers: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for number, memory in enumerate(generated):
        user = users[memory.actor]
        project = user["projects"][memory.project % len(user["projects"])]
        key = f"g{number:05d}"
        saved = service.save(
            principal_of(user["key"], project),
            memory.content,
            memory.category,
            source="explicit",
            scope=memory.scope,
        )
        memory_id = uuid.UUID(saved["memory"]["id"])
        devset.ids[key] = memory_id
        devset.owner[memory_id] = {"key": key, "user": user["key"], "scope": memory.scope}
        for found in IDENTIFIER.findall(memory.content):
            identifiers[found].append((key, devset.owner[memory_id] | {"project": project}))
    rng = random.Random(3)
    unique = sorted((x, *found[0]) for x, found in identifiers.items() if len(found) == 1)
    rng.shuffle(unique)
    asked: dict[str, int] = defaultdict(int)
    for identifier, key, owner in unique:
        if owner["scope"] != "user" or asked[owner["user"]] >= IDENTIFIER_QUERIES_PER_USER:
            continue
        asked[owner["user"]] += 1
        asking = ASK_ABOUT_ERROR if identifier.startswith("E") else ASK_ABOUT_TICKET
        devset.queries.append(
            {
                "key": f"gq{len(devset.queries):04d}",
                "user": owner["user"],
                "project": owner["project"],
                "query": rng.choice(asking).format(x=identifier),
                "relevant": [key],
                "category": None,
                "scope": None,
                "kind": "identifier_generated",
            }
        )
    return len(generated)


def ranked_ids(
    conn: Connection[Any],
    config: MemoryConfig,
    query: dict[str, Any],
    vector: Vector | None,
    model: str,
    mode: str,
) -> list[uuid.UUID]:
    principal = principal_of(query["user"], query["project"])
    if mode == "before_lifecycle":  # at an older revision (its downgrade)
        found = recall_before_lifecycle(
            conn,
            principal.actor_id,
            principal.project_id,
            config.recall_tuning,
            query=query["query"],
            embedding=vector,
            model=model,
            category=query.get("category"),
            scope=query.get("scope"),
            limit=K,
        )
        return [uuid.UUID(str(memory_id)) for memory_id in found]
    rows = store.recall(
        conn,
        principal,
        query=query["query"],
        embedding=vector,
        model=model,
        category=query.get("category"),
        scope=query.get("scope"),
        limit=100,
        **config.recall_tuning,
    )
    if mode in ("hybrid", "relevance_floor"):
        # the product's recall (MemoryService.recall): of the search's window, the most
        # relevant first; the calibrated floor removes what is under it
        window = rows[: max(K, relevance.RELEVANCE_WINDOW)]
        judged = relevance.relevances(window, config.fusion, config.relevance)
        floor = config.relevance.recall_floor if mode == "relevance_floor" else 0.0
        kept, _ = relevant_rows(window, judged, floor, K)
        return [row.id for row in kept]
    if mode == "vector":
        rows = sorted((r for r in rows if r.vector_rank), key=lambda r: r.vector_rank or 0)
    elif mode == "lexical":
        rows = sorted((r for r in rows if r.lexical_rank), key=lambda r: r.lexical_rank or 0)
    return [row.id for row in rows[:K]]  # "search_order": the fused score's (before stop 88)


def score(devset: DevSet, rankings: dict[str, list[uuid.UUID]]) -> dict[str, Any]:
    """hit@k and MRR@10 over answerable queries; leaks over all (must be 0)."""
    totals: dict[str, list[float]] = defaultdict(list)
    per_kind: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    leaks = 0
    for query in devset.queries:
        ranking = rankings[query["key"]]
        for memory_id in ranking:
            owner = devset.owner[memory_id]
            if owner["scope"] != "global" and owner["user"] != query["user"]:
                leaks += 1
        if not query["relevant"]:
            continue
        wanted = {devset.ids[key] for key in query["relevant"]}
        rank = next((i + 1 for i, m in enumerate(ranking) if m in wanted), None)
        values = {
            "hit@1": float(rank is not None and rank <= 1),
            "hit@5": float(rank is not None and rank <= 5),
            "hit@10": float(rank is not None and rank <= 10),
            "mrr": 1.0 / rank if rank else 0.0,
        }
        for name, value in values.items():
            totals[name].append(value)
            per_kind[query["kind"]][name].append(value)
    summary: dict[str, Any] = {n: round(float(np.mean(v)), 4) for n, v in totals.items()}
    summary["missed_at_10"] = [
        {"query": q["key"], "kind": q["kind"], "text": q["query"]}
        for q in devset.queries
        if q["relevant"]
        and not {devset.ids[key] for key in q["relevant"]} & set(rankings[q["key"]])
    ]
    summary["queries"] = len(totals["mrr"])
    summary["leaks"] = leaks
    summary["by_kind"] = {
        kind: {n: round(float(np.mean(v)), 3) for n, v in metrics.items()}
        | {"queries": len(metrics["mrr"])}
        for kind, metrics in sorted(per_kind.items())
    }
    return summary


def evaluate(
    conn: Connection[Any],
    devset: DevSet,
    vectors: dict[str, Vector],
    config: MemoryConfig,
    model: str,
    mode: str = "hybrid",
) -> dict[str, Any]:
    rankings = {
        q["key"]: ranked_ids(conn, config, q, vectors[q["key"]], model, mode)
        for q in devset.queries
    }
    return score(devset, rankings)


def lexical_with(conn: Connection[Any], devset: DevSet, text_config: str) -> dict[str, Any]:
    rankings = {}
    for query in devset.queries:
        principal = principal_of(query["user"], query["project"])
        rows = conn.execute(
            LEXICAL_WITH_CONFIG,
            {
                "config": text_config,
                "query": query["query"],
                "actor_id": principal.actor_id,
                "project_id": principal.project_id,
                "category": query.get("category"),
                "scope": query.get("scope"),
                "limit": K,
            },
        ).fetchall()
        rankings[query["key"]] = [uuid.UUID(str(row[0])) for row in rows]
    return score(devset, rankings)


def run(
    limit_queries: int | None = None, sweep: bool = True, background: int = BACKGROUND_PER_USER
) -> dict[str, Any]:
    devset = DevSet(limit_queries)
    embedder = CachedEmbeddings()
    defaults = MemoryConfig(dedup_threshold=2.0)  # the set says what supersedes what
    channels_config = replace(defaults, recall_min_similarity=0.0)
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            service = MemoryService(pool, embedder, defaults)
            load(service, devset)
            model = embedder.model_name
            result: dict[str, Any] = {"defaults": _config_json(defaults)}
            for stage in ("labelled", "with_background"):
                if stage == "with_background":
                    result["background_memories"] = add_background(
                        service, embedder, devset, background
                    )
                vectors = query_vectors(embedder, devset)
                embedder.save()
                with pool.connection() as conn:
                    result[stage] = {
                        "memories": len(devset.owner),
                        "queries": len(devset.queries),
                        "hybrid": evaluate(conn, devset, vectors, defaults, model),
                        "hybrid_search_order": evaluate(
                            conn, devset, vectors, defaults, model, "search_order"
                        ),
                        "hybrid_relevance_floor": evaluate(
                            conn, devset, vectors, defaults, model, "relevance_floor"
                        ),
                        "vector_only": evaluate(
                            conn, devset, vectors, channels_config, model, "vector"
                        ),
                        "fulltext_only": evaluate(
                            conn, devset, vectors, channels_config, model, "lexical"
                        ),
                        "every_word_english": lexical_with(conn, devset, "english"),
                        "every_word_simple": lexical_with(conn, devset, "simple"),
                    }
                    # the product before 0008 (full text of every query word only); the
                    # downgrade drops an index, so this connection must hold no lock
                    conn.commit()
                    migrate.downgrade(url, BEFORE_RARE_WORDS)
                    try:
                        result[stage]["hybrid_before_0008"] = evaluate(
                            conn, devset, vectors, defaults, model, "before_lifecycle"
                        )
                    finally:
                        # and the upgrade alters a policy of kb.graph_objects (0010), which
                        # waits for every transaction that read the table to end
                        conn.rollback()
                        migrate.upgrade(url)
                    if sweep and stage == "with_background":
                        result["sweep"] = sweep_settings(conn, devset, vectors, defaults, model)
                    if stage == "with_background":  # last: it dates the memories
                        result["lifecycle_terms"] = lifecycle_terms(
                            conn, devset, vectors, defaults, model, full=sweep
                        )
        finally:
            pool.close()
    write_result("quality", result, markdown(result))
    return result


def run_lifecycle_terms(background: int = BACKGROUND_PER_USER) -> dict[str, Any]:
    """The lifecycle terms' part alone (`python -m benchmarks.quality lifecycle`): the
    labelled set with the background, then `lifecycle_terms` over the whole grid, written to
    results/quality-lifecycle.*; quicker than the whole run (no channels, no sweep)."""
    devset = DevSet()
    embedder = CachedEmbeddings()
    defaults = MemoryConfig(dedup_threshold=2.0)
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            service = MemoryService(pool, embedder, defaults)
            load(service, devset)
            added = add_background(service, embedder, devset, background)
            vectors = query_vectors(embedder, devset)
            embedder.save()
            with pool.connection() as conn:
                result: dict[str, Any] = {
                    "defaults": _config_json(defaults),
                    "memories": len(devset.owner),
                    "background_memories": added,
                    "queries": len(devset.queries),
                    "lifecycle_terms": lifecycle_terms(
                        conn, devset, vectors, defaults, embedder.model_name
                    ),
                }
        finally:
            pool.close()
    lines = [
        "# Retrieval quality with the lifecycle terms",
        "",
        f"The labelled set with its background: {result['memories']} memories, "
        f"{result['queries']} queries (`python -m benchmarks.quality lifecycle`).",
    ]
    write_result(
        "quality-lifecycle",
        result,
        "\n".join(lines + lifecycle_markdown(result["lifecycle_terms"])),
    )
    return result


def query_vectors(embedder: CachedEmbeddings, devset: DevSet) -> dict[str, Vector]:
    texts = [q["query"] for q in devset.queries]
    return {
        q["key"]: Vector(v.tolist())
        for q, v in zip(devset.queries, embedder.vectors(texts, "q"), strict=True)
    }


def sweep_settings(
    conn: Connection[Any],
    devset: DevSet,
    vectors: dict[str, Vector],
    defaults: MemoryConfig,
    model: str,
) -> list[dict[str, Any]]:
    tried = []
    variants: list[Callable[[MemoryConfig], MemoryConfig]] = []
    for k, (lexical, vector), floor in itertools.product(
        (10, 30, 60, 100), ((1, 1), (1, 1.5), (1, 2), (1.5, 1), (2, 1)), (0.0, 0.1, 0.15, 0.25)
    ):
        variants.append(
            lambda c, k=k, lexical=lexical, vector=vector, floor=floor: replace(
                c,
                recall_rrf_k=k,
                recall_lexical_weight=lexical,
                recall_vector_weight=vector,
                recall_min_similarity=floor,
            )
        )
    for candidates in (20, 100):
        variants.append(lambda c, n=candidates: replace(c, recall_candidates=n))
    for weight in (0.0, 0.5):
        variants.append(lambda c, w=weight: replace(c, recall_confidence_weight=w))
    for make in variants:
        config = make(defaults)
        outcome = evaluate(conn, devset, vectors, config, model)
        tried.append(
            {"settings": _config_json(config)}
            | {n: outcome[n] for n in ("hit@1", "hit@5", "hit@10", "mrr")}
        )
    return sorted(tried, key=lambda row: (-row["mrr"], -row["hit@10"]))


# The memories' ages, uses and importance for the lifecycle terms' check (seeded): created
# over the last year, 40 % used since (1 to 20 times, the last use between creation and
# now), importance 5 % low, 10 % high, 3 % core. None of it depends on what a query asks
# for: the labels do not change with time, so on this set the terms can only cost quality.
AGE_DAYS = 365
DATE_MEMORIES = """
UPDATE kb.graph_objects o
SET created_at = now() - make_interval(secs => a.age * 86400),
    updated_at = now() - make_interval(secs => a.age * 86400),
    properties = CASE WHEN a.importance = 'normal' THEN o.properties
                      ELSE o.properties || jsonb_build_object('importance', a.importance) END
FROM unnest(%(ids)s::uuid[], %(ages)s::float8[], %(importance)s::text[]) AS a(id, age, importance)
WHERE o.canonical_id = a.id
"""
USE_MEMORIES = """
INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at)
SELECT o.canonical_id, o.actor_id, o.project_id, now() - make_interval(secs => u.ago * 86400)
FROM unnest(%(ids)s::uuid[], %(agos)s::float8[]) AS u(id, ago)
JOIN kb.graph_objects o ON o.canonical_id = u.id AND o.is_head
"""
TERMS_TRIED = [(wr, wi) for wr in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5) for wi in (0.0, 0.05, 0.1, 0.2)]


def lifecycle_terms(
    conn: Connection[Any],
    devset: DevSet,
    vectors: dict[str, Vector],
    defaults: MemoryConfig,
    model: str,
    full: bool = True,
) -> dict[str, Any]:
    """Hybrid recall with the lifecycle terms (recency, importance) off and on: first with
    every memory just saved (recency 1, importance normal: the terms change nothing), then
    with realistic ages, uses and importance (AGE_DAYS), over a grid of weights."""

    def scored(config: MemoryConfig) -> dict[str, Any]:
        outcome = evaluate(conn, devset, vectors, config, model)
        return {n: outcome[n] for n in ("hit@1", "hit@5", "hit@10", "mrr")}

    def weights(wr: float, wi: float, decay: bool = True) -> MemoryConfig:
        config = replace(defaults, recall_recency_weight=wr, recall_importance_weight=wi)
        # without decay: effective confidence is the stored one, as before 0013
        return config if decay else replace(config, decay_half_life_days=1e9)

    shipped = (defaults.recall_recency_weight, defaults.recall_importance_weight)
    result: dict[str, Any] = {
        "shipped": {"recency_weight": shipped[0], "importance_weight": shipped[1]},
        "fresh": {"off": scored(weights(0, 0, decay=False)), "shipped": scored(defaults)},
    }
    rng = random.Random(13)
    ids = sorted(devset.owner, key=str)
    ages = [rng.uniform(0, AGE_DAYS) for _ in ids]
    importance = [
        rng.choices(["low", "normal", "high", "core"], weights=[5, 82, 10, 3])[0] for _ in ids
    ]
    used, agos = [], []
    for memory_id, age in zip(ids, ages, strict=True):
        if rng.random() < 0.4:
            for _ in range(min(20, int(rng.paretovariate(1.2)))):
                used.append(memory_id)
                agos.append(rng.uniform(0, age))
    with conn.transaction():
        conn.execute(DATE_MEMORIES, {"ids": ids, "ages": ages, "importance": importance})
        conn.execute(USE_MEMORIES, {"ids": used, "agos": agos})
    result["aged"] = {"memories": len(ids), "uses": len(used)}
    tried = TERMS_TRIED if full else [(0.0, 0.0), shipped]
    result["aged"]["without"] = scored(weights(0, 0, decay=False))
    result["aged"]["grid"] = [
        {"recency_weight": wr, "importance_weight": wi} | scored(weights(wr, wi))
        for wr, wi in dict.fromkeys(tried)
    ]
    return result


def _config_json(config: MemoryConfig) -> dict[str, Any]:
    return {k: v for k, v in asdict(config).items() if k.startswith("recall_")}


CHANNELS = (
    "hybrid",
    "hybrid_relevance_floor",
    "hybrid_search_order",
    "hybrid_before_0008",
    "vector_only",
    "fulltext_only",
    "every_word_english",
    "every_word_simple",
)


def markdown(result: dict[str, Any]) -> str:
    labelled, background = result["labelled"], result["with_background"]
    lines = [
        "# Retrieval quality",
        "",
        "Metrics over the queries that have an answer; leaks = memories of another user "
        "returned (must be 0). hybrid is the product's order: of the search's 20 first "
        "candidates (fused ranks, weighed by confidence, recency and importance), the most "
        "relevant first (relevance weighed the same way; since stop 88). "
        "hybrid_relevance_floor is the product's recall as it answers: the hybrid top 10, "
        "less what is under the calibrated relevance floor. hybrid_search_order is the fused "
        "score's order, the product's before stop 88. fulltext_only is the product's "
        "full-text branch (rare words weighted, since 0008); hybrid_before_0008 is the "
        "product at the revision before, whose full-text branch required every word; "
        "every_word_* require every word of the query, with the `english` or `simple` text "
        "search configuration.",
    ]
    for title, stage in (
        (
            f"With a background ({background['memories']} memories: the labelled set plus "
            f"{result['background_memories']} generated ones; {background['queries']} queries: "
            "the labelled ones plus generated identifier questions)",
            background,
        ),
        (
            f"The labelled set alone ({labelled['memories']} memories, {labelled['queries']} "
            "queries, benchmarks/data/retrieval.json; about 33 memories visible per query)",
            labelled,
        ),
    ):
        lines += ["", f"## {title}", ""]
        lines += [
            "| channel | hit@1 | hit@5 | hit@10 | MRR@10 | leaks |",
            "|---|---|---|---|---|---|",
        ]
        for name in CHANNELS:
            row = stage[name]
            lines.append(
                f"| {name} | {row['hit@1']} | {row['hit@5']} | {row['hit@10']} | {row['mrr']} | "
                f"{row['leaks']} |"
            )
        lines += ["", "Per kind of query (MRR@10: hybrid / vector only / full text only):", ""]
        lines += ["| kind | queries | hybrid | vector | full text |", "|---|---|---|---|---|"]
        for kind, row in stage["hybrid"]["by_kind"].items():
            vector = stage["vector_only"]["by_kind"].get(kind, {}).get("mrr", 0)
            text = stage["fulltext_only"]["by_kind"].get(kind, {}).get("mrr", 0)
            lines.append(f"| {kind} | {row['queries']} | {row['mrr']} | {vector} | {text} |")
        missed = ", ".join(m["query"] for m in stage["hybrid"]["missed_at_10"])
        lines += ["", f"Hybrid misses at 10: {missed or 'none'}"]
    lines += ["", f"Defaults: `{json.dumps(result['defaults'])}`"]
    if "lifecycle_terms" in result:
        lines += lifecycle_markdown(result["lifecycle_terms"])
    if "sweep" in result:
        lines += [
            "",
            f"Best settings tried, with the background (of {len(result['sweep'])}):",
            "",
        ]
        lines += ["| settings | hit@1 | hit@10 | MRR |", "|---|---|---|---|"]
        for row in result["sweep"][:8]:
            lines.append(
                f"| `{json.dumps(row['settings'])}` | {row['hit@1']} | {row['hit@10']} | "
                f"{row['mrr']} |"
            )
    return "\n".join(lines)


def lifecycle_markdown(terms: dict[str, Any]) -> list[str]:
    shipped = terms["shipped"]
    fresh = terms["fresh"]
    lines = [
        "",
        "## Lifecycle terms (recency, importance), with the background",
        "",
        f"Shipped weights: recency {shipped['recency_weight']}, importance "
        f"{shipped['importance_weight']}. Every memory just saved (recency 1, importance "
        f"normal, no decay yet): MRR {fresh['off']['mrr']} / hit@10 {fresh['off']['hit@10']} "
        f"without the terms, {fresh['shipped']['mrr']} / {fresh['shipped']['hit@10']} with "
        "them.",
        "",
        f"Then dated ({terms['aged']['memories']} memories created over the last "
        f"{AGE_DAYS} days, {terms['aged']['uses']} uses, importance 5 % low, 10 % high, 3 % "
        "core, all independent of the queries, so the terms can only cost quality here). "
        "Without the lifecycle terms (no recency, no importance, confidence not decayed, as "
        f"before 0013): hit@1 {terms['aged']['without']['hit@1']}, hit@10 "
        f"{terms['aged']['without']['hit@10']}, MRR {terms['aged']['without']['mrr']}. With "
        "decay (the shipped floor, grace and half-life, through the confidence weight) and:",
        "",
        "| recency weight | importance weight | hit@1 | hit@5 | hit@10 | MRR@10 |",
        "|---|---|---|---|---|---|",
    ]
    for row in terms["aged"]["grid"]:
        lines.append(
            f"| {row['recency_weight']} | {row['importance_weight']} | {row['hit@1']} | "
            f"{row['hit@5']} | {row['hit@10']} | {row['mrr']} |"
        )
    return lines


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["lifecycle"]:
        print("\n".join(lifecycle_markdown(run_lifecycle_terms()["lifecycle_terms"])))
    else:
        print(markdown(run()))
