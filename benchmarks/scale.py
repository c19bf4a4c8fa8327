"""The latency benchmark once at 1,000,000 memories (`python -m benchmarks.scale`).

Embedding a million texts with the local model takes about 70 minutes on two cores, so the
bulk reuses the cached vectors of the latency benchmark's 100,000 texts
(`generate.memories(100_000, 100)`): memory `i` is copy `i // 100_000` of base memory
`i % 100_000`, with the base's category, scope, actor and project, the base's text with its
serial rewritten (`(note 5)` becomes `(note 300005)`, `In project 5,` becomes `In project
(i % 97),`, so every text stays distinct and full text sees new words where the generator
puts them), and the base's vector moved by a small deterministic random perturbation
(Gaussian, seeded by the copy) then normalised. The perturbation's size is calibrated here:
the real model embeds a sample of rewritten texts, and the noise is chosen so a copy's
cosine similarity to its base matches what the model gives (reported). Copy 0 is the
100,000-memory corpus itself. Then the latency benchmark's own measures run on it
(`latency.measure`: recall end to end and SQL, the baselines, HNSW recall@10, save, list,
the plans, HTTP throughput with 8 clients), plus the load's phases, the sizes on disk and
the server's memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import uuid
from typing import Any

import numpy as np
import psutil
from pgvector import Vector
from psycopg import Connection
from psycopg.types.json import Jsonb

from benchmarks import generate, latency
from benchmarks.common import CachedEmbeddings, bench_database, write_result
from emergent_memory import graph
from emergent_memory.memory.models import CONFIDENCE_BY_SOURCE

BASE = 100_000
MILLION = latency.Scale("1m-spread", 1_000_000, 100)
SMOKE = latency.Scale("3k-smoke", 3_000, 10)
# maintenance_work_mem for the HNSW build: the graph of 1,000,000 384-dimension vectors
# needs about 2.5 GB in memory; below that pgvector writes it out and builds far slower
BUILD_MEMORY = "6GB"
LOAD: dict[str, Any] = {}  # what the loader measured, merged into the result


def rewrite(text: str, serial: int) -> str:
    """The base text with its serial replaced, as the generator would have numbered it."""
    if text.startswith("In project "):
        return re.sub(r"^In project \d+,", f"In project {serial % 97},", text, count=1)
    return re.sub(r"\(note \d+\)$", f"(note {serial})", text, count=1)


def perturbed(base: np.ndarray, copy: int, noise: float) -> np.ndarray:
    """Copy `copy` of the base vectors: each moved by Gaussian noise of norm about `noise`,
    normalised again; seeded by the copy, so a rerun loads the same vectors."""
    if copy == 0:
        return base
    rng = np.random.default_rng(1_000 + copy)
    step = rng.standard_normal(base.shape, dtype=np.float32)
    step *= noise / np.sqrt(base.shape[1])
    moved = base + step
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    return moved


def calibrate(
    embedder: CachedEmbeddings, base_texts: list[str], base: np.ndarray
) -> dict[str, Any]:
    """Embed a sample of rewritten texts with the real model; choose the noise whose
    perturbed copies are as similar to their base as the model's embeddings are."""
    sample = list(range(0, len(base_texts), max(1, len(base_texts) // 200)))[:200]
    rewritten = [rewrite(base_texts[i], i + 300_000) for i in sample]
    real = np.stack(embedder.vectors(rewritten))
    embedder.save()
    similarity = float(np.mean(np.sum(real * base[sample], axis=1)))
    # for a unit vector plus isotropic noise of norm r: cos is about 1 / sqrt(1 + r^2)
    noise = float(np.sqrt(max(1 / similarity**2 - 1, 0.0)))
    check = perturbed(base[sample], 3, noise)
    return {
        "sample": len(sample),
        "model_similarity_mean": round(similarity, 4),
        "model_similarity_min": round(float(np.min(np.sum(real * base[sample], axis=1))), 4),
        "noise_norm": round(noise, 4),
        "perturbed_similarity_mean": round(float(np.mean(np.sum(check * base[sample], axis=1))), 4),
    }


def load(conn: Connection[Any], scale: latency.Scale, embedder: CachedEmbeddings) -> float:
    """latency.bulk_load's rows, for `scale.memories` memories built from the cached base."""
    # the smoke run's few memories: three copies of a third of them
    base_count = BASE if scale.memories >= BASE else max(1, scale.memories // 3)
    rows = list(generate.memories(base_count, scale.actors))
    texts = [row.content for row in rows]
    base = np.stack(embedder.vectors(texts))
    embedder.save()
    LOAD["calibration"] = calibrate(embedder, texts, base)
    noise = LOAD["calibration"]["noise_norm"]
    start = time.perf_counter()
    with conn.transaction():
        for actor, project in {(r.actor, r.project) for r in rows}:
            graph.install_pack(conn, latency.project_id(actor, project), "agent-memory")
        definition = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (latency.HNSW,)
        )
        create_hnsw = definition.fetchone()[0]  # type: ignore[index]
        conn.execute(f"DROP INDEX kb.{latency.HNSW}")
        copies = -(-scale.memories // base_count)
        with conn.cursor() as cur, cur.copy(latency.COPY_OBJECTS) as copy:
            for k in range(copies):
                vectors = perturbed(base, k, noise)
                for i, (row, vector) in enumerate(zip(rows, vectors, strict=True)):
                    serial = k * base_count + i
                    if serial >= scale.memories:
                        break
                    copy.write_row(
                        (
                            uuid.uuid4(),
                            1,
                            latency.project_id(row.actor, row.project),
                            latency.actor_id(row.actor),
                            row.scope,
                            "Memory",
                            Jsonb(
                                {
                                    "content": rewrite(row.content, serial) if k else row.content,
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
                print(f"copied {min((k + 1) * base_count, scale.memories)}", file=sys.stderr)
        LOAD["copy_seconds"] = round(time.perf_counter() - start, 1)
        print(f"COPY done in {LOAD['copy_seconds']} s; building HNSW", file=sys.stderr)
        conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        LOAD["maintenance_work_mem"] = BUILD_MEMORY
        LOAD["max_parallel_maintenance_workers"] = conn.execute(
            "SHOW max_parallel_maintenance_workers"
        ).fetchone()[0]  # type: ignore[index]
        built = time.perf_counter()
        conn.execute(create_hnsw)
        LOAD["hnsw_build_seconds"] = round(time.perf_counter() - built, 1)
        LOAD["hnsw_definition"] = create_hnsw
        print(f"HNSW built in {LOAD['hnsw_build_seconds']} s", file=sys.stderr)
    analysed = time.perf_counter()
    conn.execute("VACUUM ANALYZE kb.graph_objects")
    LOAD["vacuum_analyze_seconds"] = round(time.perf_counter() - analysed, 1)
    LOAD["sizes_mb"] = sizes(conn)
    LOAD["load_average_after_load"] = [round(x, 2) for x in os.getloadavg()]
    return time.perf_counter() - start


def sizes(conn: Connection[Any]) -> dict[str, float]:
    """The table (heap, TOAST), each of its indexes and the database, in MB."""
    measured: dict[str, float] = {}
    row = conn.execute(
        "SELECT pg_relation_size('kb.graph_objects'), pg_total_relation_size('kb.graph_objects'),"
        " pg_indexes_size('kb.graph_objects'), pg_database_size(current_database())"
    ).fetchone()
    assert row is not None
    heap, total, indexes, database = row
    measured["graph_objects_heap"] = round(heap / 2**20, 1)
    measured["graph_objects_toast_and_other"] = round((total - heap - indexes) / 2**20, 1)
    measured["graph_objects_indexes"] = round(indexes / 2**20, 1)
    measured["graph_objects_total"] = round(total / 2**20, 1)
    measured["database"] = round(database / 2**20, 1)
    for name, size in conn.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
        "WHERE indrelid = 'kb.graph_objects'::regclass ORDER BY 2 DESC"
    ):
        measured["index " + name] = round(size / 2**20, 1)
    return measured


def postgres_memory(conn: Connection[Any]) -> dict[str, Any]:
    """The server's processes: resident memory in total and of the largest, and their
    unique memory (shared buffers counted once, in the postmaster's share)."""
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    backend = psutil.Process(pid)
    postmaster = backend.parent()
    processes = [postmaster, *postmaster.children()]
    rss = [p.memory_info().rss for p in processes]
    uss = []
    for p in processes:
        with contextlib.suppress(psutil.Error):
            uss.append(p.memory_full_info().uss)
    return {
        "processes": len(processes),
        "rss_sum_mb": round(sum(rss) / 2**20),
        "rss_largest_mb": round(max(rss) / 2**20),
        "uss_sum_mb": round(sum(uss) / 2**20),
        "shared_buffers": conn.execute("SHOW shared_buffers").fetchone()[0],  # type: ignore[index]
    }


def run(
    scale: latency.Scale = MILLION, calls: int = 500, http_seconds: float = 20
) -> dict[str, Any]:
    embedder = CachedEmbeddings()
    started = time.time()
    with bench_database() as url:
        measured = latency.measure(url, scale, embedder, calls, loader=load)
        measured.update(LOAD)
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            measured["postgres_memory_after_measures"] = postgres_memory(conn)
            measured["sizes_mb_after_measures"] = sizes(conn)
        measured["http"] = latency.http_throughput(url, http_seconds)
    measured["wall_seconds"] = round(time.time() - started)
    result = {
        "scales": [measured],
        "calls": calls,
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": list(os.getloadavg())},
        "base_memories": BASE if scale.memories >= BASE else max(1, scale.memories // 3),
    }
    name = "latency-1m" if scale is MILLION else f"latency-{scale.name}"
    write_result(name, result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    row = result["scales"][0]
    c = row["calibration"]
    s = row["sizes_mb"]
    pm = row["postgres_memory_after_measures"]
    lines = [
        f"# Latency at {row['memories']:,} memories ({row['actors']} actors)",
        "",
        "p50 / p95 / p99 in ms over "
        f"{result['calls']} calls each, as the application role (row-level security), the "
        "first actor in its first project "
        f"({row['memories'] // row['actors']:,} memories of its own).",
        "",
        "| measure | p50 / p95 / p99 |",
        "|---|---|",
    ]
    for label, name in (
        ("recall, end to end", "recall_end_to_end_ms"),
        ("recall SQL", "recall_sql_ms"),
        ("baseline: same SQL, exact scan", "baseline_exact_recall_sql_ms"),
        ("baseline: recall SQL before 0008 (every word)", "baseline_every_word_recall_sql_ms"),
        ("baseline: naive (2 queries, fused in Python)", "baseline_naive_two_queries_ms"),
        ("save", "save_ms"),
        ("list", "list_ms"),
    ):
        lines.append(f"| {label} | {latency._cell(row, name)} |")
    h = row["hnsw"]
    http = row["http"]
    lines += [
        "",
        f"- Load: {row['load_seconds']} s in all: COPY {row['copy_seconds']} s, HNSW build "
        f"{row['hnsw_build_seconds']} s (maintenance_work_mem {row['maintenance_work_mem']}, "
        f"max_parallel_maintenance_workers {row['max_parallel_maintenance_workers']}), "
        f"VACUUM ANALYZE {row['vacuum_analyze_seconds']} s.",
        f"- HNSW recall@10 (100 queries, the product's vector branch against exact): "
        f"{h['recall_at_10']}; results less similar than exact by "
        f"{h['mean_similarity_shortfall']} on average, {h['max_similarity_shortfall']} at most.",
        f"- Sizes (MB): kb.graph_objects heap {s['graph_objects_heap']}, TOAST "
        f"{s['graph_objects_toast_and_other']}, indexes {s['graph_objects_indexes']} "
        f"(HNSW {s.get('index kb.' + latency.HNSW, '?')}), total {s['graph_objects_total']}; "
        f"database {s['database']}.",
        f"- HTTP, {http['clients']} clients: {http['recalls_per_second']} recalls/s; MCP server "
        f"RSS idle {http['rss_idle_mb']} MB, peak {http['rss_under_load_peak_mb']} MB.",
        f"- PostgreSQL ({pm['processes']} processes, shared_buffers {pm['shared_buffers']}): "
        f"RSS sum {pm['rss_sum_mb']} MB, largest {pm['rss_largest_mb']} MB, unique memory "
        f"sum {pm['uss_sum_mb']} MB.",
        f"- Going back to head after the baseline's downgrade: {row['upgrade_to_head_seconds']} s.",
        f"- Vectors: {result['base_memories']:,} cached, the rest perturbed copies: the model "
        f"gives a rewritten text a cosine similarity of {c['model_similarity_mean']} to its "
        f"base (mean over {c['sample']}, min {c['model_similarity_min']}); noise of norm "
        f"{c['noise_norm']} gives {c['perturbed_similarity_mean']}.",
        "- Plan checks: "
        + (
            "all pass"
            if all(row["plan_checks"].values())
            else "FAIL: " + ", ".join(k for k, ok in row["plan_checks"].items() if not ok)
        ),
        f"- Wall time of the whole run: {row['wall_seconds']} s; load average at the end "
        f"{[round(x, 2) for x in result['machine']['load_average_at_end']]} on "
        f"{result['machine']['cpus']} CPUs.",
    ]
    return "\n".join(lines)


def cpu_profile(url: str, calls: int = 300) -> dict[str, Any]:
    """On a database loaded by `run` (kept: a pg_basebackup copy of its server, started
    again and migrated to head): wall time and CPU time per call of the recall SQL, recall
    end to end, list and save. CPU time (the server backend's, plus this process's for
    end-to-end calls: the query embedding) does not count the time spent waiting for a core,
    so it says what an operation costs however busy the machine is."""
    import psycopg

    from emergent_memory.auth.principal import READ, WRITE, Principal
    from emergent_memory.db.pool import create_pool
    from emergent_memory.memory import MemoryConfig, MemoryService, store

    embedder = CachedEmbeddings()
    app_url = latency.app_role_url(url)
    me = Principal(latency.actor_id(0), latency.project_id(0, 0), frozenset({READ, WRITE}))
    texts = generate.queries(calls, seed=37)
    vectors = [Vector(v.tolist()) for v in embedder.vectors(texts, "q")]
    embedder.save()
    config = MemoryConfig(dedup_threshold=0.85)
    client = psutil.Process()

    def cpu(process: psutil.Process) -> float:
        times = process.cpu_times()
        return float(times.user + times.system)

    measured: dict[str, Any] = {"calls": calls, "load_average_before": list(os.getloadavg())}
    with psycopg.connect(app_url, autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        backend = psutil.Process(conn.info.backend_pid)
        walls: list[float] = []
        start_cpu = cpu(backend)
        for i in range(calls):
            started = time.perf_counter()
            with conn.transaction():
                graph.act_as(conn, me.actor_id, me.project_id)
                store.recall(
                    conn,
                    me,
                    query=texts[i],
                    embedding=vectors[i],
                    model=embedder.model_name,
                    category=None,
                    scope=None,
                    limit=10,
                    **config.recall_tuning,
                )
            walls.append((time.perf_counter() - started) * 1000)
        measured["recall_sql"] = {
            "wall_ms": latency.percentiles(walls),
            "server_cpu_ms_per_call": round((cpu(backend) - start_cpu) * 1000 / calls, 2),
        }
    pool = create_pool(app_url, min_size=1, max_size=1)
    try:
        service = MemoryService(pool, embedder.model, config)
        service.recall(me, "warm up")
        with pool.connection() as conn:
            backend = psutil.Process(conn.info.backend_pid)
        for name, call, repeat in (
            ("recall_end_to_end", lambda i: service.recall(me, texts[i]), calls),
            ("list", lambda i: service.list_memories(me), calls),
            (
                "save",
                lambda i: service.save(me, f"CPU profile memory {i} about the ledger", "fact"),
                min(calls, 200),
            ),
        ):
            walls = []
            server, own = cpu(backend), cpu(client)
            for i in range(repeat):
                started = time.perf_counter()
                call(i)
                walls.append((time.perf_counter() - started) * 1000)
            measured[name] = {
                "wall_ms": latency.percentiles(walls),
                "server_cpu_ms_per_call": round((cpu(backend) - server) * 1000 / repeat, 2),
                "client_cpu_ms_per_call": round((cpu(client) - own) * 1000 / repeat, 2),
            }
    finally:
        pool.close()
    measured["load_average_after"] = list(os.getloadavg())
    return measured


if __name__ == "__main__":
    if sys.argv[1:2] == ["cpu"]:  # python -m benchmarks.scale cpu URL NAME
        import json

        print(json.dumps(cpu_profile(sys.argv[2]), indent=2))
    else:
        chosen = SMOKE if sys.argv[1:] == ["smoke"] else MILLION
        print(markdown(run(chosen, calls=20 if chosen is SMOKE else 500)))
