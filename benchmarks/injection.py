"""Injection: the relevance floor of UserPromptSubmit, calibrated, and the precision of what
the product injects.

A memory injected into a prompt that does not need it costs the user's context and the
model's attention, so the floor is chosen for **precision first**: the lowest cosine
similarity (prompt against memory, the local model all-MiniLM-L6-v2) at which at least
TARGET_PRECISION of the injected memories are relevant; the lowest such floor keeps the most
recall.

Calibration, on the labelled retrieval set (benchmarks/data/retrieval.json): each query is a
prompt; its candidates are the memories the product could inject for it (visible to its user
in its project, not superseded), labelled relevant when the set says they answer it. The
floor alone decides (no rank or budget cut: those come after it in the product, and the
second part measures them). Queries whose labels assume a recall filter (category_filter,
scope_filter: without the filter, a memory of another category may answer them too) and
queries shorter than the product's minimum prompt (they are never injected into) are left
out. 5-fold cross-validation over queries, stratified by kind: for each held-out fold the
floor is chosen on the other four and counted on the held-out queries; the shipped floor is
the one chosen on all queries. Precision and recall are pooled over (query, memory) pairs.

The labels are strict: the set plants near misses (a neighbouring port, host, date or
teammate) among each user's memories, and a near miss counts as irrelevant even where a
person might find it useful. The precision here is a lower bound of the useful share.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.common import DATA, CachedEmbeddings, write_result
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.settings import Settings

TARGET_PRECISION = 0.8
FOLDS, SEED = 5, 20240611
# Floors tried, lowest first: 0.20, 0.21, ... 0.90.
FLOORS = [round(0.20 + step / 100, 2) for step in range(71)]
# Kinds whose labels assume a recall filter that injection does not apply.
FILTERED_KINDS = frozenset({"category_filter", "scope_filter"})
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Labelled:
    """Per query (a prompt), its candidates' similarities and which of them are relevant."""

    keys: list[str]
    kinds: list[str]
    similarities: list[np.ndarray]
    relevant: list[np.ndarray]
    left_out: dict[str, int]


def visible(memory: dict[str, Any], query: dict[str, Any]) -> bool:
    """The retrieval set's visibility rule (its description; the product's kb.visible_to)."""
    if memory["scope"] == "global":
        return True
    if memory["user"] != query["user"]:
        return False
    return bool(memory["scope"] == "user" or memory["project"] == query["project"])


def labelled_prompts(embedder: CachedEmbeddings, limit: int | None = None) -> Labelled:
    data = json.loads((DATA / "retrieval.json").read_text())
    memories = [m for m in data["memories"] if not m.get("superseded_by")]
    min_words = Settings.model_fields["injection_min_prompt_words"].default
    left_out: Counter[str] = Counter()
    queries = []
    for query in data["queries"]:
        if query["kind"] in FILTERED_KINDS:
            left_out["labels assume a recall filter"] += 1
        elif len(_WORD.findall(query["query"])) < min_words:
            left_out[f"fewer than {min_words} words (never injected into)"] += 1
        else:
            queries.append(query)
    if limit:
        queries = queries[:: max(1, len(queries) // limit)][:limit]
    # query and document vectors are computed alike by the local model (no prefixes), and
    # normalised: the dot product is the cosine similarity the product's recall reports
    documents = np.stack(embedder.vectors([m["content"] for m in memories], "d"))
    prompts = np.stack(embedder.vectors([q["query"] for q in queries], "q"))
    embedder.save()
    similarity = prompts @ documents.T
    sims, relevant = [], []
    for row, query in zip(similarity, queries, strict=True):
        seen = [i for i, m in enumerate(memories) if visible(m, query)]
        sims.append(row[seen])
        relevant.append(np.asarray([memories[i]["key"] in query["relevant"] for i in seen]))
    return Labelled(
        keys=[q["key"] for q in queries],
        kinds=[q["kind"] for q in queries],
        similarities=sims,
        relevant=relevant,
        left_out=dict(left_out),
    )


def counts(data: Labelled, members: list[int], floor: float) -> dict[str, int]:
    """Pooled over the member queries: injected, relevant among them, relevant in all."""
    injected = hits = relevant = 0
    for i in members:
        chosen = data.similarities[i] >= floor
        injected += int(chosen.sum())
        hits += int((chosen & data.relevant[i]).sum())
        relevant += int(data.relevant[i].sum())
    return {"injected": injected, "relevant_injected": hits, "relevant": relevant}


def scores(counted: dict[str, int]) -> dict[str, float]:
    injected, hits = counted["injected"], counted["relevant_injected"]
    relevant = counted["relevant"]
    return {
        **counted,
        "precision": round(hits / injected, 4) if injected else 1.0,
        "recall": round(hits / relevant, 4) if relevant else 0.0,
    }


def choose(data: Labelled, members: list[int]) -> float:
    """The lowest floor whose pooled precision over the members reaches TARGET_PRECISION (the
    most recall at that precision); if none does, the floor of highest precision."""
    rows = [(floor, scores(counts(data, members, floor))) for floor in FLOORS]
    for floor, row in rows:
        if row["injected"] and row["precision"] >= TARGET_PRECISION:
            return floor
    return max(rows, key=lambda r: (r[1]["precision"], r[1]["recall"]))[0]


def folds(kinds: list[str]) -> list[int]:
    """A fold number per query: each kind shuffled with a fixed seed, dealt round robin."""
    rng = random.Random(SEED)
    fold = [0] * len(kinds)
    for kind in sorted(set(kinds)):
        members = [i for i, k in enumerate(kinds) if k == kind]
        rng.shuffle(members)
        for position, i in enumerate(members):
            fold[i] = position % FOLDS
    return fold


def calibrate(data: Labelled) -> dict[str, Any]:
    everyone = list(range(len(data.keys)))
    fold = folds(data.kinds)
    per_fold = []
    pooled = Counter[str]()
    for k in range(FOLDS):
        train = [i for i in everyone if fold[i] != k]
        test = [i for i in everyone if fold[i] == k]
        floor = choose(data, train)
        counted = counts(data, test, floor)
        pooled.update(counted)
        per_fold.append(
            {
                "fold": k,
                "queries": len(test),
                "floor": floor,
                "train": scores(counts(data, train, floor)),
                "test": scores(counted),
            }
        )
    floor = choose(data, everyone)
    relevant = np.concatenate([s[r] for s, r in zip(data.similarities, data.relevant, strict=True)])
    other = np.concatenate([s[~r] for s, r in zip(data.similarities, data.relevant, strict=True)])
    by_kind: dict[str, dict[str, Any]] = {}
    for kind in sorted(set(data.kinds)):
        members = [i for i in everyone if data.kinds[i] == kind]
        with_any = sum(bool((data.similarities[i] >= floor).any()) for i in members)
        by_kind[kind] = scores(counts(data, members, floor)) | {
            "queries": len(members),
            "queries_injected_into": with_any,
        }
    return {
        "floor": floor,
        "in_sample": scores(counts(data, everyone, floor)),
        "cross_validated": scores(dict(pooled)),
        "folds": per_fold,
        "by_kind": by_kind,
        "sweep": [{"floor": f} | scores(counts(data, everyone, f)) for f in FLOORS],
        "similarity": {
            "relevant": _spread(relevant),
            "irrelevant": _spread(other),
        },
    }


def _spread(values: np.ndarray) -> dict[str, float]:
    points = {"p05": 5, "p25": 25, "p50": 50, "p75": 75, "p95": 95, "p99": 99}
    return {"n": len(values)} | {
        name: round(float(np.percentile(values, p)), 3) for name, p in points.items()
    }


def run(limit: int | None = None) -> dict[str, Any]:
    embedder = CachedEmbeddings()
    data = labelled_prompts(embedder, limit)
    result: dict[str, Any] = {
        "model": LOCAL_MODEL_NAME,
        "target_precision": TARGET_PRECISION,
        "queries": len(data.keys),
        "left_out": data.left_out,
        "candidates": sum(len(s) for s in data.similarities),
        "cross_validation": {"folds": FOLDS, "seed": SEED, "stratified_by": "kind"},
        "calibration": calibrate(data),
    }
    write_result("injection", result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    calibration = result["calibration"]
    cross, inside = calibration["cross_validated"], calibration["in_sample"]
    left_out = ", ".join(f"{n} {why}" for why, n in result["left_out"].items()) or "none"
    lines = [
        "# Injection",
        "",
        "## The relevance floor of UserPromptSubmit",
        "",
        f"Model `{result['model']}`; {result['queries']} prompts of the labelled retrieval set "
        f"(left out: {left_out}), each against every memory it could be shown "
        f"({result['candidates']} pairs). Criterion: the lowest floor at which at least "
        f"{result['target_precision']} of the injected memories are relevant (precision "
        "first, then as much recall as that allows). Precision and recall pooled over "
        "(prompt, memory) pairs; the floor alone decides (no rank or budget cut).",
        "",
        f"**Floor {calibration['floor']:.2f}**, chosen on all prompts: precision "
        f"{inside['precision']}, recall {inside['recall']} ({inside['relevant_injected']} of "
        f"{inside['relevant']} relevant injected; {inside['injected']} injected). "
        f"{result['cross_validation']['folds']}-fold cross-validated (floor chosen on four "
        f"folds, counted on the fifth, pooled): precision {cross['precision']}, recall "
        f"{cross['recall']}.",
        "",
        "| fold | prompts | floor chosen on the others | held out: precision | recall | "
        "injected | relevant injected / relevant |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in calibration["folds"]:
        test = row["test"]
        lines.append(
            f"| {row['fold']} | {row['queries']} | {row['floor']:.2f} | {test['precision']} | "
            f"{test['recall']} | {test['injected']} | {test['relevant_injected']} / "
            f"{test['relevant']} |"
        )
    spread = calibration["similarity"]
    lines += [
        "",
        "Cosine similarity of a prompt to its relevant memories and to the others it could be "
        "shown:",
        "",
        "| memories | n | p05 | p25 | p50 | p75 | p95 | p99 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in spread.items():
        lines.append(
            f"| {name} | {row['n']} | {row['p05']} | {row['p25']} | {row['p50']} | "
            f"{row['p75']} | {row['p95']} | {row['p99']} |"
        )
    lines += [
        "",
        "Every floor, all prompts:",
        "",
        "| floor | injected | relevant injected | precision | recall |",
        "|---|---|---|---|---|",
    ]
    for row in calibration["sweep"]:
        if round(row["floor"] * 100) % 5 == 0 or row["floor"] == calibration["floor"]:
            lines.append(
                f"| {row['floor']:.2f} | {row['injected']} | {row['relevant_injected']} | "
                f"{row['precision']} | {row['recall']} |"
            )
    lines += [
        "",
        f"By kind of prompt at {calibration['floor']:.2f} (other_user: only another user's "
        "memory answers, so anything injected is irrelevant):",
        "",
        "| kind | prompts | injected into | injected | precision | recall |",
        "|---|---|---|---|---|---|",
    ]
    for kind, row in calibration["by_kind"].items():
        lines.append(
            f"| {kind} | {row['queries']} | {row['queries_injected_into']} | {row['injected']} "
            f"| {row['precision']} | {row['recall']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run()))
