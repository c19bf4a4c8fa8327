"""Fit and measure verify_memory's learned confirmation (emergent_memory/memory/verify_learned.py)
on the recorded candidates of the spent held-out verify sets.

The population is every recorded claim the rules answer `related` or `new` (the only answers
the model may change) whose closest memory it may read (verify_learned.eligible: at least the
policy's `related_from` close, both in English, no difference the rules read); the target is
its label `confirmed`. The model is scikit-learn's
HistGradientBoostingClassifier (100 trees of at most 15 leaves, no early stopping, seed 0) on
verify_learned.FEATURES. Its threshold is the lowest (0.50 to 0.99 by 0.01) at which at most
1% of the conflicts of the sets it is chosen on are answered `confirmed`, the rules' own
included, read from out-of-fold probabilities (folds by set, so no set is judged by a model
that saw it).

    python -m benchmarks.verify_replay record records.json   # the candidates, once
    python -m benchmarks.verify_learned fit records.json [--write]

`fit` prints a 5-fold cross-validation by set (each fold's threshold chosen on the other four
alone: an inner 4-fold cross-validation of their own); `--write` then fits on every set and
writes the product's model (emergent_memory/memory/verify_learned.json). scikit-learn comes with
the `offline` extra that make installs; the product reads the written trees without it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import trees
from benchmarks.common import DATA
from benchmarks.trees import FOLDS
from benchmarks.verify_replay import Record, _policy, rules
from emergent_memory.memory import verify_learned

VERDICTS = ("confirmed", "conflict", "related", "new")
MAX_CONFLICTS_CONFIRMED = 0.01  # of the conflicts, the rules' own included
THRESHOLDS = [round(0.5 + i / 100, 2) for i in range(50)]
MODEL = Path(verify_learned.__file__).with_name("verify_learned.json")


def rows(paths: Sequence[Path]) -> dict[str, Any]:
    """Per recorded claim: its set, key, text, label, the rules' verdict and the model's input
    (None when the rules answered confirmed or conflict, or the model may not read the pair)."""
    sets, keys, claims, labels, verdicts, inputs = [], [], [], [], [], []
    for path in paths:
        records: dict[str, dict[str, Record]] = json.loads(path.read_text())
        for name, entries in records.items():
            for claim in json.loads((DATA / name).read_text())["claims"]:
                entry = entries.get(claim["claim"])
                if entry is None:
                    continue
                verdict = rules(entry).verdict
                sets.append(name)
                keys.append(claim["key"])
                claims.append(claim["claim"])
                labels.append(claim["verdict"])
                verdicts.append(verdict)
                inputs.append(_input(entry, verdict))
    return {
        "sets": sets,
        "keys": keys,
        "claims": claims,
        "labels": labels,
        "verdicts": verdicts,
        "inputs": inputs,
    }


def _input(entry: Record, verdict: str) -> list[float] | None:
    pairs = entry["pairs"]
    if verdict not in ("related", "new") or not pairs:
        return None
    ranked = sorted(range(len(pairs)), key=lambda i: -(pairs[i][1] or 0.0))
    similarities = [pairs[i][1] or 0.0 for i in ranked]
    closest = pairs[ranked[0]][0]
    if not verify_learned.eligible(entry["text"], closest, similarities[0], _policy().related_from):
        return None
    return verify_learned.features(
        entry["text"], pairs[ranked[0]][0], similarities, verdict == "new"
    )


def _confirmed(data: dict[str, Any]) -> list[bool]:
    return [label == "confirmed" for label in data["labels"]]


def _probabilities(data: dict[str, Any], train: np.ndarray, test: np.ndarray) -> np.ndarray:
    return trees.probabilities(data["inputs"], _confirmed(data), train, test)


def answered(data: dict[str, Any], probability: np.ndarray, threshold: float) -> list[str]:
    return [
        "confirmed" if p == p and p >= threshold else verdict
        for verdict, p in zip(data["verdicts"], probability, strict=True)
    ]


def conflicts_confirmed(labels: Sequence[str], answers: Sequence[str], rows_: np.ndarray) -> float:
    conflicts = [int(i) for i in np.flatnonzero(rows_) if labels[int(i)] == "conflict"]
    return sum(answers[i] == "confirmed" for i in conflicts) / max(1, len(conflicts))


def out_of_fold(data: dict[str, Any], rows_: np.ndarray) -> np.ndarray:
    """Each of the `rows_`' probability from a model fitted on the other folds (folds by set
    within them); NaN elsewhere and where a row has no input."""
    return trees.out_of_fold(data["sets"], data["inputs"], _confirmed(data), rows_)


def choose(data: dict[str, Any], rows_: np.ndarray) -> float:
    """The threshold for the `rows_` given: the lowest at which out-of-fold answers confirm at
    most MAX_CONFLICTS_CONFIRMED of their conflicts."""
    probability = out_of_fold(data, rows_)
    for threshold in THRESHOLDS:
        given = answered(data, probability, threshold)
        if conflicts_confirmed(data["labels"], given, rows_) <= MAX_CONFLICTS_CONFIRMED:
            return threshold
    return 1.0


def report(data: dict[str, Any], answers: Sequence[str], title: str) -> list[str]:
    labels = data["labels"]
    right_ = sum(a == b for a, b in zip(answers, labels, strict=True))
    lines = [f"{title}: {right_} of {len(labels)} right"]
    per = []
    for verdict in VERDICTS:
        of = [i for i, label in enumerate(labels) if label == verdict]
        per.append(f"{verdict} {sum(answers[i] == verdict for i in of) / max(1, len(of)):.3f}")
    confirmed = [i for i, a in enumerate(answers) if a == "confirmed"]
    right = sum(labels[i] == "confirmed" for i in confirmed)
    conflicts = [i for i, label in enumerate(labels) if label == "conflict"]
    wrong = sum(answers[i] == "confirmed" for i in conflicts)
    lines.append("  per class: " + ", ".join(per))
    lines.append(
        f"  answered confirmed {len(confirmed)}, of them right {right} "
        f"({right / max(1, len(confirmed)):.3f}); conflicts answered confirmed {wrong} of "
        f"{len(conflicts)} ({wrong / max(1, len(conflicts)):.4f})"
    )
    return lines


def cross_validate(data: dict[str, Any]) -> list[str]:
    names = sorted(set(data["sets"]))
    fold = trees.folds(data["sets"], names)
    probability = np.full(len(fold), np.nan)
    chosen = []
    answers = list(data["verdicts"])
    for k in range(FOLDS):
        train, test = fold != k, fold == k
        threshold = choose(data, train)
        chosen.append(threshold)
        probability[test] = _probabilities(data, train, test)[test]
        fold_answers = answered(data, probability, threshold)
        for j in np.flatnonzero(test):
            answers[int(j)] = fold_answers[int(j)]
    lines = report(data, data["verdicts"], "the rules alone")
    lines += report(
        data, answers, f"rules and the model, {FOLDS}-fold by set (thresholds {chosen})"
    )
    lines.append("every answer the model changed, held out (right / wrong, set/key, label, p):")
    for i, (rule, answer) in enumerate(zip(data["verdicts"], answers, strict=True)):
        if rule != answer:
            mark = "right" if answer == data["labels"][i] else "WRONG"
            lines.append(
                f"  {mark} {data['sets'][i]}/{data['keys'][i]} labelled {data['labels'][i]}, "
                f"{rule} -> {answer} (p {probability[i]:.2f}): {data['claims'][i]}"
            )
    return lines


def write(data: dict[str, Any], path: Path = MODEL) -> float:
    """Fit on every set, choose the threshold on all of them, write the product's model."""
    everything = np.ones(len(data["labels"]), dtype=bool)
    threshold = choose(data, everything)
    fitted_on = f"{len(set(data['sets']))} spent verify sets, {{rows}} claims the rules "
    trees.write(
        data["inputs"],
        _confirmed(data),
        verify_learned.FEATURES,
        threshold,
        fitted_on + "answer related or new",
        path,
    )
    return threshold


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.verify_learned")
    commands = parser.add_subparsers(dest="command", required=True)
    fitting = commands.add_parser("fit", help="cross-validate; --write: the product's model")
    fitting.add_argument("records", type=Path, nargs="+")
    fitting.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    data = rows(args.records)
    print("\n".join(cross_validate(data)), flush=True)
    if args.write:
        print(f"written {MODEL} (threshold {write(data)})")


if __name__ == "__main__":
    main(sys.argv[1:])
