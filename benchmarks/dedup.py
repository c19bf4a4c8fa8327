"""Dedup calibration: when should a new memory supersede its nearest existing one?

A false "supersede" hides a distinct fact the user gave (it stays only as history), which is
far worse than keeping a duplicate; so the target is **no distinct fact superseded** and, under
that, as many rewordings and corrections caught as possible (target >= 0.90).

Embeds each labelled pair of benchmarks/data/dedup_pairs.json with the default local model,
then:

1. sweeps a single cosine-similarity threshold, and gives the similarities seen per kind;
2. evaluates three rules with 5-fold cross-validation: the threshold alone, the rule shipped
   before the trust issue (a band with change markers and a subject veto), and the shipped
   rule (emergent_memory/memory/dedup.py: value, holder, subject and script rules, then a band).
   Parameters are chosen on the training folds (the best recall with no false supersede there,
   ties to the more conservative), and both numbers are counted on the held-out folds;
3. runs the policy the application ships (emergent_memory/app.py) through the product's own
   code: verdicts and their reasons by kind, cost per pair, a stress set (every pair that must
   not supersede, its new text ending in "now"), and the held-out sets
   benchmarks/data/dedup_holdout*.json, written without seeing the rule or the calibration
   set (HOLDOUTS says how each was used).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from benchmarks.common import DATA, CachedEmbeddings, write_result
from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import dedup

# Cross-validation: folds stratified by kind, dealt from a shuffle with a fixed seed.
FOLDS, SEED = 5, 20240611
SHIPPED_RULE = "value, holder, subject and script rules + band"
# Grids, most conservative first (ties go to the first).
HIGH = [round(0.95 - step / 100, 2) for step in range(26)]  # 0.95 .. 0.70
LOW = [round(0.85 - step / 100, 2) for step in range(26)]  # 0.85 .. 0.60
NAMED = [round(0.70 - step / 100, 2) for step in range(0, 26, 5)]  # 0.70 .. 0.45
THRESHOLDS = [round(0.99 - step / 100, 2) for step in range(50)]  # 0.99 .. 0.50


def load_pairs(name: str = "dedup_pairs.json", limit: int | None = None) -> list[dict[str, Any]]:
    """The labelled pairs; with a limit, an evenly spaced sample (every kind is represented)."""
    pairs = json.loads((DATA / name).read_text())["pairs"]
    if limit:
        pairs = pairs[:: max(1, len(pairs) // limit)][:limit]
    return list(pairs)


def similarities(pairs: list[dict[str, Any]], embedder: CachedEmbeddings) -> list[float]:
    existing = embedder.vectors([p["existing"] for p in pairs])
    new = embedder.vectors([p["new"] for p in pairs])
    return [float(np.dot(a, b)) for a, b in zip(existing, new, strict=True)]


def _counts(predicted: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(caught, wrongly superseded, missed) within mask; predicted may be one row or a grid."""
    return np.stack(
        [
            (predicted & labels & mask).sum(axis=-1),
            (predicted & ~labels & mask).sum(axis=-1),
            (~predicted & labels & mask).sum(axis=-1),
        ],
        axis=-1,
    )


def _scores(caught: float, wrong: float, missed: float) -> dict[str, float]:
    precision = caught / (caught + wrong) if caught + wrong else 1.0
    recall = caught / (caught + missed) if caught + missed else 0.0
    return {
        "wrongly_superseded": int(wrong),
        "caught": int(caught),
        "missed": int(missed),
        "recall": round(recall, 4),
        "precision": round(precision, 4),
    }


def sweep(labels: np.ndarray, scores: np.ndarray) -> list[dict[str, float]]:
    everything = np.ones(len(labels), dtype=bool)
    return [
        {"threshold": t, **_scores(*_counts(scores >= t, labels, everything))}
        for t in THRESHOLDS[::-1]
    ]


# -- rules ------------------------------------------------------------------------------------


def features(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per pair, what the product's rule reads of it (dedup.compare, computed once), and the
    features of the previous rule (a baseline)."""
    return {
        "compared": [dedup.compare(p["existing"], p["new"]) for p in pairs],
        "marked": np.asarray([dedup.says_it_changed(p["existing"], p["new"]) for p in pairs]),
        "keeps": np.asarray([dedup.keeps_every_word(p["existing"], p["new"]) for p in pairs]),
        "old_subject": np.asarray([changes_subject(p["existing"], p["new"]) for p in pairs]),
    }


def changes_subject(existing: str, new: str) -> bool:
    """The previous rule's subject veto (a baseline; the product no longer uses it): the
    existing text loses a value and an ordinary content word, other than words the new text
    replaces with a change marker."""
    old, new_ = dedup.statement(existing), dedup.statement(new)
    lost = (old.words - dedup.STOPWORDS) - new_.words
    lost_values = lost & old.values
    if not lost_values:
        return False
    a = [t.text.lower() for t in old.tokens]
    b = [t.text.lower() for t in new_.tokens]
    excused: set[str] = set()
    for operation, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if operation == "replace" and dedup.statement(" ".join(b[j1:j2])).markers:
            excused.update(t.norm for t in old.tokens[i1:i2])
    return bool(lost - lost_values - excused)


def shipped_rule(
    f: dict[str, Any], sim: np.ndarray, high: float, low: float, named: float
) -> np.ndarray:
    """Which pairs the product's policy with these thresholds supersedes (DedupPolicy.judge on
    each pair's comparison: the rule itself, not a copy of it)."""
    # (the shipped band of one word exchanged, within these bands: it is measured on more
    # data than this set, benchmarks/README.md section 3)
    reworded = DEDUP_POLICIES[LOCAL_MODEL_NAME].reworded_from
    policy = dedup.DedupPolicy(high, low, named, latin_only_model=True, reworded_from=reworded)
    return np.asarray(
        [
            policy.judge(float(s), pair).verdict == "supersede"
            for s, pair in zip(sim, f["compared"], strict=True)
        ]
    )


@dataclass(frozen=True)
class Candidate:
    name: str
    rule: str
    # (parameters, predicted "supersede" per pair), most conservative first
    grid: list[tuple[dict[str, float], np.ndarray]]


def candidates(f: dict[str, Any], sim: np.ndarray) -> list[Candidate]:
    shipped = [
        ({"high": high, "low": low, "named": named}, shipped_rule(f, sim, high, low, named))
        for high in HIGH
        for low in LOW
        if low <= high
        for named in NAMED
        if named <= low
    ]
    previous = [
        (
            {"high": high, "low": low},
            (sim >= low) & ~f["old_subject"] & ((sim >= high) | f["marked"] | f["keeps"]),
        )
        for high in HIGH
        for low in LOW
        if low <= high
    ]
    return [
        Candidate("threshold", "similarity >= t", [({"t": t}, sim >= t) for t in THRESHOLDS]),
        Candidate(
            "previous rule (band + change marker + subject veto)",
            "what shipped before the trust issue, with today's change markers: similarity >= "
            "low, never when the old text loses a value and an ordinary word; then similarity "
            ">= high, or a change marker, or every content word kept",
            previous,
        ),
        Candidate(
            SHIPPED_RULE,
            "emergent_memory/memory/dedup.py: never when the model does not know the texts "
            "(or they differ where it cannot see), the holders differ, or more than one value, "
            "role, modifier or slot changed; nor, without a change marker, when one did or the "
            "closing phrase was replaced; then similarity >= high, or >= low with a change "
            "marker or every word kept, or >= named when the change names the old value",
            shipped,
        ),
    ]


def _choose(grid: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> int:
    """The grid row with the best recall among those that wrongly supersede nothing in mask
    (ties: the most conservative, i.e. the first); if none, the fewest wrong supersedes."""
    counts = _counts(grid, labels, mask)
    caught, wrong = counts[:, 0], counts[:, 1]
    clean = wrong == 0
    if clean.any():
        return int(np.flatnonzero(clean & (caught == caught[clean].max()))[0])
    return int(np.flatnonzero(wrong == wrong.min())[0])


def folds(kinds: list[str]) -> np.ndarray:
    """A fold number per pair: each kind shuffled with a fixed seed and dealt round robin."""
    rng = random.Random(SEED)
    fold = np.zeros(len(kinds), dtype=int)
    for kind in sorted(set(kinds)):
        members = [i for i, k in enumerate(kinds) if k == kind]
        rng.shuffle(members)
        for position, i in enumerate(members):
            fold[i] = position % FOLDS
    return fold


def cross_validate(candidate: Candidate, labels: np.ndarray, fold: np.ndarray) -> dict[str, Any]:
    grid = np.stack([predicted for _, predicted in candidate.grid])
    held_out = np.zeros(3, dtype=int)
    per_fold = []
    for k in range(FOLDS):
        chosen = _choose(grid, labels, fold != k)
        counts = _counts(grid[chosen], labels, fold == k)
        held_out += counts
        per_fold.append({"parameters": candidate.grid[chosen][0], "test": _scores(*counts)})
    everything = np.ones(len(labels), dtype=bool)
    final = _choose(grid, labels, everything)
    return {
        "name": candidate.name,
        "rule": candidate.rule,
        "grid_size": len(candidate.grid),
        "cross_validated": _scores(*held_out),
        "folds": per_fold,
        "parameters": candidate.grid[final][0],
        "in_sample": _scores(*_counts(grid[final], labels, everything)),
        "chosen_index": final,
    }


# -- the shipped policy -----------------------------------------------------------------------


def with_change_marker(text: str) -> str:
    """The same sentence, saying it is new: "... in local development." -> "... now."."""
    return text.rstrip(".") + " now."


def marked_negatives(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stress set: every pair that must not supersede, with its new text saying "now"."""
    return [p | {"new": with_change_marker(p["new"])} for p in pairs if not p["supersede"]]


def verdicts(
    policy: dedup.DedupPolicy, pairs: list[dict[str, Any]], scores: list[float]
) -> list[dedup.Decision]:
    return [policy.explain(s, p["existing"], p["new"]) for s, p in zip(scores, pairs, strict=True)]


def by_kind(pairs: list[dict[str, Any]], decisions: list[dedup.Decision]) -> dict[str, Any]:
    table: dict[str, dict[str, int]] = {}
    reasons: dict[str, dict[str, int]] = {}
    for decision, pair in zip(decisions, pairs, strict=True):
        counts = table.setdefault(
            pair["kind"], {"supersede": 0, "possible_duplicate": 0, "distinct": 0}
        )
        counts[decision.verdict] += 1
        why = reasons.setdefault(pair["kind"], {})
        why[decision.reason] = why.get(decision.reason, 0) + 1
    return {"verdicts": table, "reasons": reasons}


def headline(pairs: list[dict[str, Any]], decisions: list[dedup.Decision]) -> dict[str, Any]:
    labels = np.asarray([bool(p["supersede"]) for p in pairs])
    superseded = np.asarray([d.verdict == "supersede" for d in decisions])
    return _scores(*_counts(superseded, labels, np.ones(len(pairs), dtype=bool)))


def wrong_ones(
    pairs: list[dict[str, Any]], scores: list[float], decisions: list[dedup.Decision]
) -> list[dict[str, Any]]:
    return [
        {
            "kind": p["kind"],
            "similarity": round(s, 3),
            "existing": p["existing"],
            "new": p["new"],
            "verdict": d.verdict,
            "reason": d.reason,
        }
        for s, p, d in zip(scores, pairs, decisions, strict=True)
        if (d.verdict == "supersede") != bool(p["supersede"])
    ]


def shipped_policy(
    pairs: list[dict[str, Any]],
    scores: list[float],
    stress: list[dict[str, Any]],
    stress_scores: list[float],
) -> dict[str, Any]:
    """The policy of emergent_memory/app.py for the local model, run through the product's own
    code on every pair: verdicts and reasons by kind, its cost per pair, the stress set."""
    policy = DEDUP_POLICIES[LOCAL_MODEL_NAME]
    decisions = verdicts(policy, pairs, scores)
    repeat = 20
    start = time.perf_counter()
    for _ in range(repeat):
        # as a save meets texts: not yet analysed
        for cache in (dedup.statement, dedup.compare, dedup.alignment):
            cache.cache_clear()
        for s, p in zip(scores, pairs, strict=True):
            policy.decide(s, p["existing"], p["new"])
    microseconds = (time.perf_counter() - start) / (repeat * len(pairs)) * 1e6
    stressed = verdicts(policy, stress, stress_scores)
    return {
        "threshold": policy.threshold,
        "text_rule_from": policy.text_rule_from,
        "named_change_from": policy.named_change_from,
        "latin_only_model": policy.latin_only_model,
        "in_sample": headline(pairs, decisions),
        **by_kind(pairs, decisions),
        "microseconds_per_pair": round(microseconds, 1),
        "stress": {
            "pairs": len(stress),
            "superseded": sum(d.verdict == "supersede" for d in stressed),
            "superseded_by_threshold_alone": sum(s >= policy.threshold for s in stress_scores),
        },
        "wrong": wrong_ones(pairs, scores, decisions),
    }


# The held-out sets, each written by someone who saw neither the rule nor the other sets.
# Each was run against the rule once when it came in: the first against the first version of
# the rule (10 distinct facts superseded, recall 0.84), the second against the version after
# the first had changed it (5 superseded, recall 0.83). Their failures then changed the rule,
# so neither is independent of it any more. The third came in after the last change, was run
# once (1 wrongly superseded: "the user" / "the user's co-parent", a relation noun missing from
# the list; recall 0.85), and only that list was extended after it.
HOLDOUTS = {
    "dedup_holdout.json": "run against the first version of the rule (10 wrongly superseded, "
    "recall 0.84), whose failures then changed the rule",
    "dedup_holdout_2.json": "run against the second version (5 wrongly superseded, recall "
    "0.83), whose failures then changed the rule",
    "dedup_holdout_3.json": "run once against the rule as shipped (1 wrongly superseded, "
    "recall 0.85); only the relation nouns were extended after it (co-parent, godson, ...)",
}


def holdout(embedder: CachedEmbeddings, name: str) -> dict[str, Any] | None:
    """The shipped policy on a held-out set."""
    if not (DATA / name).exists():
        return None
    pairs = load_pairs(name)
    scores = similarities(pairs, embedder)
    decisions = verdicts(DEDUP_POLICIES[LOCAL_MODEL_NAME], pairs, scores)
    threshold = DEDUP_POLICIES[LOCAL_MODEL_NAME].threshold
    alone = [
        dedup.Decision("supersede" if s >= threshold else "distinct", "similar") for s in scores
    ]
    return {
        "file": name,
        "status": HOLDOUTS[name],
        "pairs": len(pairs),
        "shipped": headline(pairs, decisions),
        "threshold_alone": headline(pairs, alone),
        **by_kind(pairs, decisions),
        "wrong": wrong_ones(pairs, scores, decisions),
    }


def run(limit: int | None = None) -> dict[str, Any]:
    pairs = load_pairs(limit=limit)
    embedder = CachedEmbeddings()
    scores = similarities(pairs, embedder)
    labels = np.asarray([bool(p["supersede"]) for p in pairs])
    sim = np.asarray(scores)
    by_similarity: dict[str, dict[str, float]] = {}
    for kind in sorted({p["kind"] for p in pairs}):
        values = [s for s, p in zip(scores, pairs, strict=True) if p["kind"] == kind]
        by_similarity[kind] = {
            "n": len(values),
            "min": round(min(values), 3),
            "median": round(statistics.median(values), 3),
            "max": round(max(values), 3),
        }
    rows = sweep(labels, sim)
    clean = [r for r in rows if r["wrongly_superseded"] == 0 and r["caught"] > 0]
    chosen = min(clean, key=lambda r: r["threshold"]) if clean else rows[-1]
    fold = folds([p["kind"] for p in pairs])
    f = features(pairs)
    rules = [cross_validate(c, labels, fold) for c in candidates(f, sim)]
    stress = marked_negatives(pairs)
    stress_scores = similarities(stress, embedder)
    stressed = candidates(features(stress), np.asarray(stress_scores))
    for rule, candidate in zip(rules, stressed, strict=True):
        rule["stress_superseded"] = int(candidate.grid[rule.pop("chosen_index")][1].sum())
    shipped = shipped_policy(pairs, scores, stress, stress_scores)
    [family] = [r for r in rules if r["name"] == SHIPPED_RULE]
    # the bands are chosen here; the threshold (similarity alone) on more data, the agent
    # memories of every spent held-out set too (benchmarks/dedup_chat.py)
    shipped["bands_as_chosen_on_all_pairs"] = (
        family["parameters"]["low"],
        family["parameters"]["named"],
    ) == (shipped["text_rule_from"], shipped["named_change_from"])
    held_out = [] if limit else [holdout(embedder, name) for name in HOLDOUTS]
    embedder.save()
    result = {
        "model": LOCAL_MODEL_NAME,
        "pairs": len(pairs),
        "targets": {"wrongly_superseded": 0, "recall": 0.90},
        "chosen": chosen,
        "similarity_by_kind": by_similarity,
        "sweep": rows,
        "cross_validation": {"folds": FOLDS, "seed": SEED, "stratified_by": "kind"},
        "stress_set": "every pair that must not supersede, the new text ending in 'now'",
        "rules": rules,
        "shipped_policy": shipped,
        "holdouts": [h for h in held_out if h is not None],
    }
    write_result("dedup", result, markdown(result))
    return result


# -- the report -------------------------------------------------------------------------------


def markdown(result: dict[str, Any]) -> str:
    chosen = result["chosen"]
    [family] = [r for r in result["rules"] if r["name"] == SHIPPED_RULE]
    cross = family["cross_validated"]
    lines = [
        "# Dedup calibration",
        "",
        f"Model `{result['model']}`, {result['pairs']} labelled pairs "
        "(benchmarks/data/dedup_pairs.json). Targets: no distinct fact wrongly superseded, "
        f"rewordings and corrections caught >= {result['targets']['recall']}.",
        "",
        f"**The shipped rule with its threshold fitted on this set alone, 5-fold "
        f"cross-validated: {cross['wrongly_superseded']} distinct facts wrongly superseded, "
        f"{cross['recall']} of the rewordings and corrections caught** "
        f"({cross['caught']} of {cross['caught'] + cross['missed']}). The product ships a "
        "higher threshold, fitted on the held-out sets' agent memories too "
        "(results/dedup_chat.md); with it, in sample: "
        f"{result['shipped_policy']['in_sample']['wrongly_superseded']} wrongly superseded, "
        f"recall {result['shipped_policy']['in_sample']['recall']}.",
        "",
        "| kind | n | min | median | max |",
        "|---|---|---|---|---|",
    ]
    for kind, stats in result["similarity_by_kind"].items():
        lines.append(
            f"| {kind} | {stats['n']} | {stats['min']} | {stats['median']} | {stats['max']} |"
        )
    if chosen["wrongly_superseded"] == 0:
        verdict = (
            f"A single threshold wrongly supersedes nothing only from {chosen['threshold']:.2f} "
            f"(recall {chosen['recall']}):"
        )
    else:
        verdict = (
            "No single threshold avoids wrongly superseding: even at "
            f"{chosen['threshold']:.2f}, {chosen['wrongly_superseded']} distinct facts are "
            f"superseded (recall {chosen['recall']}; texts the model cannot read score 1.0):"
        )
    lines += [
        "",
        verdict,
        "",
        "| threshold | wrongly superseded | caught | missed | recall |",
        "|---|---|---|---|---|",
    ]
    for row in result["sweep"]:
        if round(row["threshold"] * 100) % 5 == 0 or row is chosen:
            lines.append(
                f"| {row['threshold']:.2f} | {row['wrongly_superseded']} | {row['caught']} | "
                f"{row['missed']} | {row['recall']} |"
            )
    return "\n".join(lines + rules_markdown(result))


def _verdict_table(section: dict[str, Any]) -> list[str]:
    lines = [
        "| kind | supersede | possible duplicate | distinct | reasons |",
        "|---|---|---|---|---|",
    ]
    for kind, counts in section["verdicts"].items():
        reasons = ", ".join(f"{why} {n}" for why, n in sorted(section["reasons"][kind].items()))
        lines.append(
            f"| {kind} | {counts['supersede']} | {counts['possible_duplicate']} | "
            f"{counts['distinct']} | {reasons} |"
        )
    return lines


def rules_markdown(result: dict[str, Any]) -> list[str]:
    cv, shipped = result["cross_validation"], result["shipped_policy"]
    stress = shipped["stress"]
    lines = [
        "",
        f"## Rules ({cv['folds']}-fold cross-validation)",
        "",
        f"Folds stratified by kind (seed {cv['seed']}). For each held-out fold the parameters "
        "are chosen on the other folds (the best recall with no false supersede there); the "
        "numbers are counted on the held-out pairs, pooled. Parameters and in-sample numbers: "
        f"chosen on all pairs. Stress: of the {stress['pairs']} pairs that must not supersede, "
        "rewritten so that the new text ends in 'now', how many the rule supersedes.",
        "",
        "| rule | CV wrongly superseded | CV caught (recall) | parameters (all pairs) | "
        "in sample: wrong / recall | stress |",
        "|---|---|---|---|---|---|",
    ]
    for rule in result["rules"]:
        cross, inside = rule["cross_validated"], rule["in_sample"]
        parameters = ", ".join(f"{k} {v}" for k, v in rule["parameters"].items())
        name = f"**{rule['name']}**" if rule["name"] == SHIPPED_RULE else rule["name"]
        lines.append(
            f"| {name} | {cross['wrongly_superseded']} | {cross['caught']} ({cross['recall']}) "
            f"| {parameters} | {inside['wrongly_superseded']} / {inside['recall']} | "
            f"{rule['stress_superseded']} |"
        )
    lines += ["", "What each rule is:", ""]
    lines += [f"- {rule['name']}: {rule['rule']}." for rule in result["rules"]]
    lines += [
        "",
        f"## The shipped policy (emergent_memory/app.py): threshold {shipped['threshold']}, "
        f"text rule from {shipped['text_rule_from']}, named change from "
        f"{shipped['named_change_from']}",
        "",
        "Run through the product's code (DedupPolicy.explain) on all pairs: "
        f"{shipped['in_sample']['wrongly_superseded']} wrongly superseded, recall "
        f"{shipped['in_sample']['recall']} (in sample; cross-validated above). The bands as chosen "
        "on all pairs (the threshold is fitted on the held-out sets' agent memories too: "
        "results/dedup_chat.md): "
        f"{'yes' if shipped['bands_as_chosen_on_all_pairs'] else 'NO'}. "
        f"{shipped['microseconds_per_pair']} microseconds per pair in pure Python (texts not "
        f"yet analysed). Stress: {stress['superseded']} of {stress['pairs']} superseded (the "
        f"threshold alone: {stress['superseded_by_threshold_alone']}).",
        "",
        *_verdict_table(shipped),
        "",
        "Wrong verdicts (a distinct fact superseded, or a rewording or correction not):",
        "",
    ]
    lines += [
        f'- {e["kind"]}, {e["similarity"]}, {e["reason"]}: "{e["existing"]}" / "{e["new"]}"'
        for e in shipped["wrong"]
    ]
    for held_out in result["holdouts"]:
        rule, alone = held_out["shipped"], held_out["threshold_alone"]
        lines += [
            "",
            f"## Held-out set: {held_out['pairs']} pairs, benchmarks/data/{held_out['file']}",
            "",
            f"Written without seeing the rule or the calibration set; {held_out['status']}. "
            f"Shipped policy: {rule['wrongly_superseded']} wrongly superseded, {rule['caught']} "
            f"of {rule['caught'] + rule['missed']} caught (recall {rule['recall']}). The "
            f"threshold {shipped['threshold']} alone: {alone['wrongly_superseded']} wrongly "
            f"superseded, recall {alone['recall']}.",
            "",
            *_verdict_table(held_out),
            "",
            "Wrong verdicts:",
            "",
        ]
        lines += [
            f'- {e["kind"]}, {e["similarity"]}, {e["reason"]}: "{e["existing"]}" / "{e["new"]}"'
            for e in held_out["wrong"]
        ]
    return lines


if __name__ == "__main__":
    outcome = run()
    print(markdown(outcome))
