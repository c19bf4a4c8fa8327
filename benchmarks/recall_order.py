"""Recall's order on the labelled prompt sets (`python -m benchmarks.recall_order [FILE ...]`;
about a minute; default: benchmarks/data/injection_holdout.json and injection_prompts.json).

Since stop 88 recall returns the most relevant of the search's candidates first
(service._relevant: relevance weighed by confidence, recency and importance) instead of the
fused score's order. This measures both orders from the same rows, per query with an answer
(the query's filters applied, the search's first RELEVANCE_WINDOW rows as recall reads them,
no floor): hit@1, hit@10 and MRR@10, over all queries and per kind. The relevance weights were
fitted on retrieval.json and injection_prompts.json (benchmarks/injection.py), never on
injection_holdout.json: that set is the held-out check of the order.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from pgvector import Vector

from benchmarks import injection
from benchmarks.common import DATA, CachedEmbeddings, bench_database
from emergent_memory.app import memory_config
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryService, relevance, store
from emergent_memory.settings import Settings

SETS = [DATA / "injection_holdout.json", DATA / "injection_prompts.json"]
K = 10


def orders(rows: list[store.RecallRow], judged: list[float]) -> dict[str, list[Any]]:
    """The memories' ids in the search's order and in the product's."""
    ranked = relevance.most_relevant_first(rows, judged)
    return {"search order": [r.id for r in rows], "most relevant first": [r.id for r, _ in ranked]}


def measure(paths: list[Path]) -> dict[str, dict[str, dict[str, float]]]:
    """{set: {"order|kind": {hit@1, hit@10, mrr, queries}}}."""
    sets = [injection.read_set(path) for path in paths]
    embedder = CachedEmbeddings()
    result: dict[str, dict[str, dict[str, float]]] = {}
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            config = memory_config(Settings(), embedder.model_name)
            memory = MemoryService(pool, embedder, config)
            for labelled in sets:
                injection.load(memory, labelled)
            for labelled in sets:
                tally: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
                vectors = embedder.vectors([q["query"] for q in labelled.queries], "q")
                with pool.connection() as conn:
                    for query, vector in zip(labelled.queries, vectors, strict=True):
                        wanted = {labelled.ids[k] for k in query["relevant"] if k in labelled.ids}
                        if not wanted:
                            continue
                        rows = store.recall(
                            conn,
                            injection.principal_of(labelled, query["user"], query["project"]),
                            query=query["query"],
                            embedding=Vector(vector.tolist()),
                            model=embedder.model_name,
                            category=query.get("category"),
                            scope=query.get("scope"),
                            limit=relevance.RELEVANCE_WINDOW,
                            **config.recall_tuning,
                        )
                        conn.rollback()
                        judged = relevance.relevances(rows, config.fusion, config.relevance)
                        for order, ids in orders(rows, judged).items():
                            top = ids[:K]
                            rank = next((i + 1 for i, m in enumerate(top) if m in wanted), None)
                            for group in ("all", query["kind"]):
                                scores = tally[f"{order}|{group}"]
                                scores["hit@1"].append(float(rank == 1))
                                scores["hit@10"].append(float(rank is not None))
                                scores["mrr"].append(1 / rank if rank else 0.0)
                embedder.save()
                result[labelled.name] = {
                    key: {n: round(float(np.mean(v)), 4) for n, v in scores.items()}
                    | {"queries": len(scores["mrr"])}
                    for key, scores in sorted(tally.items())
                }
        finally:
            pool.close()
    return result


def markdown(result: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = []
    for name, rows in result.items():
        lines += [f"## {name}", "", "| kind | queries | order | hit@1 | hit@10 | MRR@10 |"]
        lines += ["|---|---|---|---|---|---|"]
        for key in sorted(rows, key=lambda k: (k.split("|")[1] != "all", k.split("|")[1], k)):
            order, kind = key.split("|")
            row = rows[key]
            lines.append(
                f"| {kind} | {row['queries']} | {order} | {row['hit@1']} | {row['hit@10']} | "
                f"{row['mrr']} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    chosen = [DATA / name for name in sys.argv[1:]] or SETS
    print(markdown(measure(chosen)))
