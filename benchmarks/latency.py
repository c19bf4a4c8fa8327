"""Latency at scale, against baselines measured in the same run.

For each scale (memories in total; spread over 100 actors, or concentrated in one), loads
synthetic memories through the bulk path (the same rows the service writes, embeddings
from the on-disk cache) and measures, as p50/p95/p99 over many calls: recall end to end
(with query embedding), the recall SQL alone, save, and list; and as baselines: the same
recall SQL with index scans disabled (exact vector scan), the recall SQL of the revision
before 0008 (full text of every query word only, through that migration's downgrade), HNSW
recall@10 against exact, and a naive "one query per channel, fuse in Python" recall. Saves
EXPLAIN (ANALYZE, BUFFERS) of the recall SQL, and measures throughput over streamable HTTP
with 8 concurrent clients and the server's resident memory.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import psutil
from pgvector import Vector
from psycopg import ClientCursor, Connection
from psycopg.types.json import Jsonb

from benchmarks import generate
from benchmarks.common import (
    BEFORE_RARE_WORDS,
    CachedEmbeddings,
    bench_database,
    percentiles,
    recall_before_lifecycle,
    timed,
    write_result,
)
from emergent_memory import graph
from emergent_memory.auth import tokens
from emergent_memory.auth.principal import READ, WRITE, Principal
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_role
from emergent_memory.db.pool import create_pool
from emergent_memory.db.roles import ensure_login_role
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.memory import MemoryConfig, MemoryService, store
from emergent_memory.memory.models import CONFIDENCE_BY_SOURCE

NAMESPACE = uuid.UUID("0d7c6a52-2f9e-4c1b-9a8e-5b3f1e2d4c6a")
BENCH_APP_ROLE = "emergent_memory_bench_app"
HNSW = "graph_objects_embedding_hnsw_idx"
COPY_OBJECTS = (
    "COPY kb.graph_objects (canonical_id, version, project_id, actor_id, scope, type, "
    "properties, labels, embedding, embedding_model) FROM STDIN"
)
NEAREST = """
SELECT o.canonical_id FROM kb.graph_objects o
WHERE o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
  AND NOT (o.properties ? 'superseded_by')
  AND ((o.actor_id = %(actor_id)s AND (o.scope = 'user'
        OR (o.scope = 'project' AND o.project_id = %(project_id)s))) OR o.scope = 'global')
  AND o.embedding_model = %(model)s
ORDER BY o.embedding <=> %(embedding)s
LIMIT %(limit)s
"""
LEXICAL = """
SELECT o.canonical_id FROM kb.graph_objects o, websearch_to_tsquery('english', %(query)s) q
WHERE o.fts @@ q AND o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
  AND NOT (o.properties ? 'superseded_by')
  AND ((o.actor_id = %(actor_id)s AND (o.scope = 'user'
        OR (o.scope = 'project' AND o.project_id = %(project_id)s))) OR o.scope = 'global')
ORDER BY ts_rank_cd(o.fts, q) DESC
LIMIT %(limit)s
"""


@dataclass(frozen=True)
class Scale:
    name: str
    memories: int
    actors: int


SCALES = {
    "smoke": [Scale("300-spread", 300, 10)],
    "full": [
        Scale("10k-spread", 10_000, 100),
        Scale("10k-one-actor", 10_000, 1),
        Scale("100k-spread", 100_000, 100),
        Scale("100k-one-actor", 100_000, 1),
    ],
}
# `python -m benchmarks.latency 100k`: the two 100,000-memory scales of the full run alone
SCALES["100k"] = SCALES["full"][2:]


def actor_id(n: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"actor:{n}")


def project_id(actor: int, project: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"project:{actor}:{project}")


def bulk_load(conn: Connection[Any], scale: Scale, embedder: CachedEmbeddings) -> float:
    """COPY the rows the service would write (same properties, labels, vectors)."""
    rows = list(generate.memories(scale.memories, scale.actors))
    vectors = embedder.vectors([row.content for row in rows])
    embedder.save()
    start = time.perf_counter()
    with conn.transaction():
        for actor, project in {(r.actor, r.project) for r in rows}:
            graph.install_pack(conn, project_id(actor, project), "agent-memory")
        # rebuilt after the load, as the migrations define it (faster than growing it row by row)
        definition = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (HNSW,))
        create_hnsw = definition.fetchone()[0]  # type: ignore[index]
        conn.execute(f"DROP INDEX kb.{HNSW}")
        with conn.cursor() as cur, cur.copy(COPY_OBJECTS) as copy:
            for row, vector in zip(rows, vectors, strict=True):
                copy.write_row(
                    (
                        uuid.uuid4(),
                        1,
                        project_id(row.actor, row.project),
                        actor_id(row.actor),
                        row.scope,
                        "Memory",
                        Jsonb(
                            {
                                "content": row.content,
                                "category": row.category,
                                "source": "inferred",
                                "scope": row.scope,
                                "confidence": CONFIDENCE_BY_SOURCE["inferred"],
                            }
                        ),
                        ["memory", row.category, row.scope],
                        Vector(vector.tolist()),
                        embedder.model_name,
                    )
                )
        conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
        conn.execute(create_hnsw)
    conn.execute("VACUUM ANALYZE kb.graph_objects")
    return time.perf_counter() - start


def measure(
    url: str,
    scale: Scale,
    embedder: CachedEmbeddings,
    calls: int,
    loader: Callable[[Connection[Any], Scale, CachedEmbeddings], float] | None = None,
) -> dict[str, Any]:
    """Loads as the database's owner (`loader`, when given, replaces the bulk load:
    benchmarks.scale), then measures as the application role, subject to row-level
    security like the product: the recall SQL and its two baselines (exact scan,
    the revision before 0008) set the transaction's principal, as the service does. The
    naive baseline, HNSW recall@10 and the plans run as the owner: they are the SQL of
    kb.recall_memories_for, which the product runs as its definer."""
    owner_pool = create_pool(url, min_size=1, max_size=2)
    app_pool = create_pool(app_role_url(url), min_size=1, max_size=4)
    result: dict[str, Any] = {
        "scale": scale.name,
        "memories": scale.memories,
        "actors": scale.actors,
        "measured_as": "application role (row-level security enforced)",
    }
    try:
        with owner_pool.connection() as conn:
            conn.autocommit = True
            result["load_seconds"] = round((loader or bulk_load)(conn, scale, embedder), 1)
        config = MemoryConfig(dedup_threshold=0.85)
        service = MemoryService(app_pool, embedder.model, config)
        me = Principal(actor_id(0), project_id(0, 0), frozenset({READ, WRITE}))
        texts = generate.queries(calls)
        vectors = [Vector(v.tolist()) for v in embedder.vectors(texts, "q")]
        embedder.save()
        model = embedder.model_name
        service.recall(me, "warm up")  # load the model, warm the caches

        # the rows each timed recall returned, by measure: a call that returns nothing (no
        # principal set, under row-level security) would time nothing and show here
        returned: dict[str, list[int]] = {}

        def sql_recall(conn: Connection[Any], i: int, name: str, before: bool = False) -> None:
            # what the service sends for a recall: the principal, then kb.recall_memories
            # (`before`: as revisions before 0013 take it, for the older revision's baseline)
            with conn.transaction():
                graph.act_as(conn, me.actor_id, me.project_id)
                if before:
                    rows: list[Any] = recall_before_lifecycle(
                        conn,
                        me.actor_id,
                        me.project_id,
                        config.recall_tuning,
                        query=texts[i],
                        embedding=vectors[i],
                        model=model,
                        category=None,
                        scope=None,
                        limit=10,
                    )
                else:
                    rows = store.recall(
                        conn,
                        me,
                        query=texts[i],
                        embedding=vectors[i],
                        model=model,
                        category=None,
                        scope=None,
                        limit=10,
                        **config.recall_tuning,
                    )
            returned.setdefault(name, []).append(len(rows))

        counter = iter(range(10**9))
        result["recall_end_to_end_ms"] = percentiles(
            timed(lambda: service.recall(me, texts[next(counter) % calls]), calls)
        )
        with app_pool.connection() as conn:
            conn.autocommit = True
            counter = iter(range(10**9))
            result["recall_sql_ms"] = percentiles(
                timed(lambda: sql_recall(conn, next(counter) % calls, "recall_sql_ms"), calls)
            )
            conn.execute("SET enable_indexscan = off")  # exact vector scan
            counter = iter(range(10**9))
            exact = "baseline_exact_recall_sql_ms"
            result[exact] = percentiles(
                timed(lambda: sql_recall(conn, next(counter) % calls, exact), min(calls, 200))
            )
            conn.execute("RESET enable_indexscan")
            # the full-text branch before 0008 (every word of the query only), with that
            # revision's own downgrade; then back to head
            migrate.downgrade(url, BEFORE_RARE_WORDS)
            try:
                counter = iter(range(10**9))
                every_word = "baseline_every_word_recall_sql_ms"
                result[every_word] = percentiles(
                    timed(
                        lambda: sql_recall(conn, next(counter) % calls, every_word, before=True),
                        calls,
                    )
                )
            finally:
                start = time.perf_counter()  # 0008 builds its full-text index again
                migrate.upgrade(url)
                result["upgrade_to_head_seconds"] = round(time.perf_counter() - start, 1)
        with owner_pool.connection() as conn:
            conn.autocommit = True
            result["hnsw"] = hnsw_recall(conn, me, vectors[:100], model, config)
            result["hnsw_recall_at_10"] = result["hnsw"]["recall_at_10"]
            counter = iter(range(10**9))
            naive = "baseline_naive_two_queries_ms"
            result[naive] = percentiles(
                timed(
                    lambda: returned.setdefault(naive, []).append(
                        len(naive_recall(conn, me, texts, vectors, model, next(counter) % calls))
                    ),
                    calls,
                )
            )
            result["explain"] = explain(conn, me, texts[0], vectors[0], model, config)
            result["plan_checks"] = plan_checks(result["explain"])
        result["rows_returned"] = {
            name: {"calls": len(counts), "rows": sum(counts), "empty_calls": counts.count(0)}
            for name, counts in returned.items()
        }
        saves = iter(range(10**9))
        result["save_ms"] = percentiles(
            timed(
                lambda: service.save(
                    me,
                    f"Benchmark memory number {next(saves)} about the ledger rollout",
                    "fact",
                ),
                min(calls, 300),
            )
        )
        result["list_ms"] = percentiles(timed(lambda: service.list_memories(me), calls))
    finally:
        app_pool.close()
        owner_pool.close()
    return result


def app_role_url(owner_url: str) -> str:
    """A login role of the application group on the benchmark's server."""
    password = secrets.token_hex(16)
    ensure_login_role(owner_url, BENCH_APP_ROLE, password=password)
    return with_role(owner_url, BENCH_APP_ROLE, password)


# The vector branch of kb.recall_memories_for alone: no text can match '', no similarity floor.
VECTOR_BRANCH = """
SELECT similarity FROM kb.recall_memories_for(
    %(actor_id)s, %(project_id)s, '', %(embedding)s, %(model)s,
    p_limit => %(candidates)s, p_candidates => %(candidates)s, p_min_similarity => 0)
WHERE vector_rank IS NOT NULL ORDER BY similarity DESC LIMIT 10
"""


def hnsw_recall(
    conn: Connection[Any], me: Principal, vectors: list[Vector], model: str, config: MemoryConfig
) -> dict[str, float]:
    """Recall@10 of the product's vector branch (its HNSW candidates, re-ranked) against an
    exact search: the share of its 10 nearest that are at least as near as the exact 10th
    (ties between equal vectors count as found); and how much less similar its results are
    than the exact ones, rank by rank (mean and largest shortfall of cosine similarity)."""
    overlaps: list[float] = []
    shortfalls: list[float] = []
    for vector in vectors:
        params = {
            "actor_id": me.actor_id,
            "project_id": me.project_id,
            "model": model,
            "embedding": vector,
            "candidates": config.recall_candidates,
        }
        approximate = [row[0] for row in conn.execute(VECTOR_BRANCH, params)]
        with conn.transaction():
            conn.execute("SET LOCAL enable_indexscan = off")
            exact = [row[0] for row in conn.execute(VECTOR_BRANCH, params)]
        if exact:
            found = sum(1 for similarity in approximate if similarity >= exact[-1] - 1e-6)
            overlaps.append(found / len(exact))
            approximate += [0.0] * (len(exact) - len(approximate))
            shortfalls += [max(0.0, e - a) for e, a in zip(exact, approximate, strict=False)]
    return {
        "recall_at_10": round(float(np.mean(overlaps)), 4),
        "mean_similarity_shortfall": round(float(np.mean(shortfalls)), 5),
        "max_similarity_shortfall": round(float(np.max(shortfalls)), 4),
    }


def naive_recall(
    conn: Connection[Any],
    me: Principal,
    texts: list[str],
    vectors: list[Vector],
    model: str,
    i: int,
) -> list[Any]:
    params = {
        "actor_id": me.actor_id,
        "project_id": me.project_id,
        "model": model,
        "embedding": vectors[i],
        "query": texts[i],
        "limit": 50,
    }
    semantic = [row[0] for row in conn.execute(NEAREST, params)]
    lexical = [row[0] for row in conn.execute(LEXICAL, params)]
    scores: dict[Any, float] = {}
    for ranked in (semantic, lexical):
        for rank, key in enumerate(ranked, 1):
            scores[key] = scores.get(key, 0.0) + 1 / (60 + rank)
    top = sorted(scores, key=lambda k: -scores[k])[:10]
    rows = conn.execute(
        "SELECT canonical_id, properties FROM kb.graph_objects WHERE canonical_id = ANY(%s) "
        "AND is_head",
        (top,),
    ).fetchall()
    return rows


def explain(
    conn: Connection[Any],
    me: Principal,
    text: str,
    vector: Vector,
    model: str,
    config: MemoryConfig,
) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the body of kb.recall_memories with these arguments."""
    body = conn.execute(
        "SELECT prosrc FROM pg_proc WHERE proname = 'recall_memories_for'"
    ).fetchone()[0]  # type: ignore[index]
    # the function's arguments, in order, as its revision defines them
    names, types = conn.execute(
        "SELECT proargnames[1:pronargs], oidvectortypes(proargtypes) FROM pg_proc "
        "WHERE proname = 'recall_memories_for'"
    ).fetchone()  # type: ignore[misc]
    for position, name in enumerate(names, 1):
        body = re.sub(rf"\b{name}\b", f"${position}", body)
    values = {
        "p_actor_id": me.actor_id,
        "p_project_id": me.project_id,
        "p_query": text,
        "p_query_embedding": vector,
        "p_embedding_model": model,
        "p_category": None,
        "p_scope": None,
        "p_limit": 10,
        "p_include_archived": False,
        "p_as_of": None,
    } | {f"p_{name}": value for name, value in config.recall_tuning.items()}
    with conn.transaction():
        # the function's own settings (hnsw.ef_search and the rest), as a call would have
        conn.execute(
            "SELECT set_config(split_part(c, '=', 1), split_part(c, '=', 2), true) "
            "FROM pg_proc, unnest(proconfig) AS c WHERE proname = 'recall_memories_for'"
        )
        conn.execute(f"PREPARE recall_body ({types}) AS {body}")
        arguments = tuple(values[name] for name in names)
        casts = [t.strip() for t in types.split(",")]
        placeholders = ", ".join(f"%s::{cast}" for cast in casts)
        # utility statements take no bound parameters: bind on the client side
        with ClientCursor(conn) as cursor:
            cursor.execute(
                f"EXPLAIN (ANALYZE, BUFFERS) EXECUTE recall_body ({placeholders})", arguments
            )
            plan = cursor.fetchall()
        conn.execute("DEALLOCATE recall_body")
    return "\n".join(row[0] for row in plan)


def plan_checks(plan: str) -> dict[str, bool]:
    return {
        "vector branch uses HNSW or an index-narrowed exact scan": HNSW in plan
        or "graph_objects_actor_scope_idx" in plan,
        "text branch uses the GIN index": "graph_objects_memory_owner_fts_idx" in plan,
        "scope filter uses an index": "graph_objects_actor_scope_idx" in plan or HNSW in plan,
        "no sequential scan of graph_objects": "Seq Scan on graph_objects" not in plan,
    }


def http_throughput(url: str, seconds: float, clients: int = 8) -> dict[str, Any]:
    """Recalls per second over streamable HTTP, and the server's resident memory."""
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    env["EMERGENT_MEMORY_DATABASE_URL"] = app_role_url(url)  # as the product runs
    process = subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
        [
            sys.executable,
            "-m",
            "emergent_memory",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise RuntimeError("the HTTP server exited; run it by hand to see why")
            time.sleep(0.3)
        import psycopg

        with psycopg.connect(url) as conn:
            token = tokens.create_token(
                conn,
                name="bench",
                actor_id=actor_id(0),
                project_id=project_id(0, 0),
                scopes=[READ],
            ).token
        server = psutil.Process(process.pid)
        texts = generate.queries(200, seed=23)

        async def worker(done: list[int], stop_at: float) -> None:
            transport = StreamableHttpTransport(
                base + "/mcp", headers={"Authorization": f"Bearer {token}"}
            )
            async with Client(transport, timeout=60) as client:
                while time.monotonic() < stop_at:
                    await client.call_tool("recall_memories", {"query": random.choice(texts)})
                    done.append(1)

        async def load() -> tuple[int, float, int]:
            done: list[int] = []
            warm_stop = time.monotonic() + 3  # includes the model's first use
            await asyncio.gather(*(worker([], warm_stop) for _ in range(2)))
            idle = server.memory_info().rss
            start = time.monotonic()
            await asyncio.gather(*(worker(done, start + seconds) for _ in range(clients)))
            return len(done), time.monotonic() - start, idle

        peak = [0]

        def sample() -> None:
            while process.poll() is None and not stop_sampling:
                peak[0] = max(peak[0], server.memory_info().rss)
                time.sleep(0.2)

        import threading

        stop_sampling = False
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        count, elapsed, idle = asyncio.run(load())
        stop_sampling = True
        return {
            "clients": clients,
            "seconds": round(elapsed, 1),
            "recalls": count,
            "recalls_per_second": round(count / elapsed, 1),
            "rss_idle_mb": round(idle / 2**20),
            "rss_under_load_peak_mb": round(peak[0] / 2**20),
        }
    finally:
        process.terminate()
        process.wait(timeout=30)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TARGETS = {
    "recall_sql_p50_ms": 5,
    "recall_end_to_end_p50_ms": 25,
    "recall_end_to_end_p95_ms": 50,
    "save_p50_ms": 40,
    "hnsw_recall_at_10": 0.98,
    "http_recalls_per_second": 50,
}


def query_embedding(calls: int, runtimes: tuple[str, ...] = ("onnx", "torch")) -> dict[str, Any]:
    """The query embedding alone, with each runtime of the local model (no cache)."""
    texts = generate.queries(calls, seed=5)
    measured: dict[str, Any] = {}
    for runtime in runtimes:
        model = LocalEmbeddings(runtime=runtime)
        model.load()
        queries = iter(texts)
        measured[runtime] = percentiles(
            timed(lambda m=model, q=queries: m.embed_query(next(q)), calls)  # type: ignore[misc]
        )
    return measured


def run(scale_set: str = "full", calls: int = 500, http_seconds: float = 20) -> dict[str, Any]:
    embedder = CachedEmbeddings()
    # a smoke run shows the script works: the torch runtime (seconds to load) only in full
    embedding = query_embedding(calls, ("onnx",) if scale_set == "smoke" else ("onnx", "torch"))
    results = []
    for scale in SCALES[scale_set]:
        with bench_database() as url:
            measured = measure(url, scale, embedder, calls)
            if scale is SCALES[scale_set][-1] or scale.name.startswith("100k-spread"):
                measured["http"] = http_throughput(url, http_seconds)
            results.append(measured)
            print(
                f"{scale.name}: recall e2e p50 {measured['recall_end_to_end_ms']['p50']} ms",
                file=sys.stderr,
            )
    result = {
        "query_embedding_ms": embedding,
        "scales": results,
        "targets": TARGETS,
        "calls": calls,
        "machine": {"cpus": os.cpu_count()},
    }
    write_result(f"latency-{scale_set}", result, markdown(result))
    return result


def _cell(row: dict[str, Any], name: str) -> str:
    p = row[name]
    return f"{p['p50']} / {p['p95']} / {p['p99']}"


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Latency",
        "",
        f"p50 / p95 / p99 in ms over {result['calls']} calls each; "
        f"{result['machine']['cpus']} CPUs, as the application role (row-level security "
        "enforced; the recall SQL includes setting the principal). Baselines: the same recall "
        "SQL with index scans off (exact vector scan), the recall SQL before 0008 (full text "
        "of every query word only), and one query per channel fused in Python. HNSW "
        "recall@10: the vector branch's 10 nearest against an exact search.",
        "",
        "| scale | load s | recall e2e | recall SQL | baseline: exact scan | "
        "baseline: every word (before 0008) | baseline: naive | save | list | HNSW recall@10 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["scales"]:
        lines.append(
            f"| {row['scale']} | {row['load_seconds']} | {_cell(row, 'recall_end_to_end_ms')} | "
            f"{_cell(row, 'recall_sql_ms')} | {_cell(row, 'baseline_exact_recall_sql_ms')} | "
            f"{_cell(row, 'baseline_every_word_recall_sql_ms')} | "
            f"{_cell(row, 'baseline_naive_two_queries_ms')} | {_cell(row, 'save_ms')} | "
            f"{_cell(row, 'list_ms')} | {row['hnsw_recall_at_10']} |"
        )
    lines += ["", "Rows each timed recall returned (mean per call, at most 10):", ""]
    for row in result["scales"]:
        returned = row["rows_returned"]
        per_call = ", ".join(
            f"{label} {returned[name]['rows'] / returned[name]['calls']:.1f}"
            for label, name in (
                ("recall SQL", "recall_sql_ms"),
                ("exact scan", "baseline_exact_recall_sql_ms"),
                ("every word", "baseline_every_word_recall_sql_ms"),
                ("naive", "baseline_naive_two_queries_ms"),
            )
        )
        empty = sum(counted["empty_calls"] for counted in returned.values())
        lines.append(f"- {row['scale']}: {per_call}; calls that returned nothing: {empty}")
    e = result["query_embedding_ms"]
    lines += [
        "",
        f"Query embedding alone (p50 / p95 / p99): onnxruntime {_cell(e, 'onnx')}"
        + (f", sentence-transformers {_cell(e, 'torch')}." if "torch" in e else "."),
    ]
    for row in result["scales"]:
        if "http" in row:
            h = row["http"]
            lines += [
                "",
                f"HTTP ({row['scale']}): {h['recalls_per_second']} recalls/s with "
                f"{h['clients']} clients over {h['seconds']} s; server RSS idle "
                f"{h['rss_idle_mb']} MB, peak under load {h['rss_under_load_peak_mb']} MB.",
            ]
    lines += ["", "HNSW against exact search, per rank of the 10 nearest (cosine similarity):", ""]
    for row in result["scales"]:
        h = row["hnsw"]
        lines.append(
            f"- {row['scale']}: recall@10 {h['recall_at_10']}; results less similar than the "
            f"exact ones by {h['mean_similarity_shortfall']} on average, "
            f"{h['max_similarity_shortfall']} at most"
        )
    lines += [
        "",
        "Upgrading from the baseline's revision back to head (0008 rebuilds its index):",
        "",
    ]
    lines += [f"- {row['scale']}: {row['upgrade_to_head_seconds']} s" for row in result["scales"]]
    lines += ["", "Plan checks (EXPLAIN ANALYZE of the recall SQL, in the JSON result):", ""]
    for row in result["scales"]:
        failed = [name for name, ok in row["plan_checks"].items() if not ok]
        verdict = "all pass" if not failed else "FAILS: " + "; ".join(failed)
        lines.append(f"- {row['scale']}: {verdict}")
    return "\n".join(lines)


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "full"
    print(markdown(run(chosen)))
