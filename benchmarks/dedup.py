"""Dedup calibration: how well does one cosine-similarity threshold decide "supersede"?

Embeds each labelled pair of benchmarks/data/dedup_pairs.json with the default local model,
then reports precision and recall of "supersede" for every threshold, and per kind of pair
(reworded, correction, related but distinct, unrelated) the similarities seen.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import numpy as np

from benchmarks.common import DATA, CachedEmbeddings, write_result
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME

# A false "supersede" hides a distinct fact from recall (it stays only as history), which
# is worse than keeping a duplicate; so the default is the lowest threshold whose precision
# reaches this, i.e. the best recall at that precision.
TARGET_PRECISION = 0.95


def load_pairs(limit: int | None = None) -> list[dict[str, Any]]:
    pairs = json.loads((DATA / "dedup_pairs.json").read_text())["pairs"]
    return list(pairs[:limit] if limit else pairs)


def similarities(pairs: list[dict[str, Any]], embedder: CachedEmbeddings) -> list[float]:
    existing = embedder.vectors([p["existing"] for p in pairs])
    new = embedder.vectors([p["new"] for p in pairs])
    return [float(np.dot(a, b)) for a, b in zip(existing, new, strict=True)]


def sweep(labels: list[bool], scores: list[float]) -> list[dict[str, float]]:
    rows = []
    for step in range(50, 100):
        threshold = step / 100
        predicted = [score >= threshold for score in scores]
        tp = sum(p and t for p, t in zip(predicted, labels, strict=True))
        fp = sum(p and not t for p, t in zip(predicted, labels, strict=True))
        fn = sum(t and not p for p, t in zip(predicted, labels, strict=True))
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(
            {
                "threshold": threshold,
                "precision": round(precision, 4),
                "recall": round(recall, 4),
                "f1": round(f1, 4),
                "false_supersedes": fp,
                "missed_supersedes": fn,
            }
        )
    return rows


def run(limit: int | None = None) -> dict[str, Any]:
    pairs = load_pairs(limit)
    embedder = CachedEmbeddings()
    scores = similarities(pairs, embedder)
    embedder.save()
    labels = [bool(p["supersede"]) for p in pairs]
    rows = sweep(labels, scores)
    by_kind: dict[str, dict[str, float]] = {}
    for kind in sorted({p["kind"] for p in pairs}):
        values = [s for s, p in zip(scores, pairs, strict=True) if p["kind"] == kind]
        by_kind[kind] = {
            "n": len(values),
            "min": round(min(values), 3),
            "p25": round(float(np.percentile(values, 25)), 3),
            "median": round(statistics.median(values), 3),
            "p75": round(float(np.percentile(values, 75)), 3),
            "max": round(max(values), 3),
        }
    best_f1 = max(rows, key=lambda r: (r["f1"], -r["threshold"]))
    precise = [r for r in rows if r["precision"] >= TARGET_PRECISION and r["recall"] > 0]
    chosen = min(precise, key=lambda r: r["threshold"]) if precise else best_f1
    per_kind_at_chosen = {
        kind: round(
            sum(
                s >= chosen["threshold"]
                for s, p in zip(scores, pairs, strict=True)
                if p["kind"] == kind
            )
            / by_kind[kind]["n"],
            3,
        )
        for kind in by_kind
    }
    result = {
        "model": LOCAL_MODEL_NAME,
        "pairs": len(pairs),
        "target_precision": TARGET_PRECISION,
        "chosen": chosen,
        "best_f1": best_f1,
        "superseded_share_by_kind_at_chosen": per_kind_at_chosen,
        "similarity_by_kind": by_kind,
        "sweep": rows,
        "examples_wrong_at_chosen": [
            {
                "kind": p["kind"],
                "similarity": round(s, 3),
                "existing": p["existing"],
                "new": p["new"],
            }
            for s, p in sorted(zip(scores, pairs, strict=True), key=lambda x: -x[0])
            if (s >= chosen["threshold"]) != bool(p["supersede"])
        ][:12],
    }
    write_result("dedup", result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    chosen, best = result["chosen"], result["best_f1"]
    lines = [
        "# Dedup calibration",
        "",
        f"Model `{result['model']}`, {result['pairs']} labelled pairs.",
        "",
        f"Chosen threshold **{chosen['threshold']:.2f}**: the lowest with precision >= "
        f"{result['target_precision']} (precision {chosen['precision']}, recall "
        f"{chosen['recall']}, F1 {chosen['f1']}). Best F1: {best['f1']} at "
        f"{best['threshold']:.2f} (precision {best['precision']}, recall {best['recall']}).",
        "",
        "| kind | n | min | p25 | median | p75 | max | superseded at chosen |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, stats in result["similarity_by_kind"].items():
        share = result["superseded_share_by_kind_at_chosen"][kind]
        lines.append(
            f"| {kind} | {stats['n']} | {stats['min']} | {stats['p25']} | {stats['median']} | "
            f"{stats['p75']} | {stats['max']} | {share:.0%} |"
        )
    lines += [
        "",
        "| threshold | precision | recall | F1 | false supersedes | missed |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["sweep"]:
        if round(row["threshold"] * 100) % 5 == 0 or row is chosen:
            lines.append(
                f"| {row['threshold']:.2f} | {row['precision']} | {row['recall']} | "
                f"{row['f1']} | {row['false_supersedes']} | {row['missed_supersedes']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    outcome = run()
    print(markdown(outcome))
