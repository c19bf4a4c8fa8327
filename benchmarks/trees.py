"""What the two learned readings' fits share (benchmarks/verify_learned.py,
benchmarks/dedup_learned.py): the model, folds by set, and writing the fitted trees for the
product (emergent_memory/memory/trees.py reads them without scikit-learn)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from emergent_memory.memory.trees import TreeEnsemble

FOLDS = 5


def model() -> Any:
    """scikit-learn's HistGradientBoostingClassifier: 100 trees of at most 15 leaves, no early
    stopping, seed 0 (scikit-learn comes with the `offline` extra that make installs)."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # type: ignore[import-untyped]

    return HistGradientBoostingClassifier(
        max_iter=100, learning_rate=0.1, max_leaf_nodes=15, early_stopping=False, random_state=0
    )


def folds(sets: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """Each row's fold: its set's place among the sorted `names`, modulo FOLDS (-1 when its
    set is not among them)."""
    order = {name: i % FOLDS for i, name in enumerate(sorted(names))}
    return np.array([order.get(name, -1) for name in sets])


def write(
    inputs: Sequence[Sequence[float] | None],
    positive: Sequence[bool],
    features: Sequence[str],
    threshold: float,
    fitted_on: str,
    path: Path,
    thresholds: dict[str, float] | None = None,
) -> None:
    """Fit a model on every row that has an input and write its trees to `path`, after
    checking that the product's reading of them gives scikit-learn's probabilities on those
    rows; `fitted_on` says on what ("{rows}" becomes how many rows), `thresholds` the
    thresholds of named kinds of rows, if they have their own."""
    rows = [x for x in inputs if x is not None]
    targets = [p for x, p in zip(inputs, positive, strict=True) if x is not None]
    fitted = model().fit(np.array(rows), np.array(targets))
    trees = [
        [
            [
                -1 if node["is_leaf"] else int(node["feature_idx"]),
                float(node["num_threshold"]),  # whole: a value may equal it
                int(node["left"]),
                int(node["right"]),
                float(node["value"]),
            ]
            for node in predictor.nodes
        ]
        for (predictor,) in fitted._predictors
    ]
    baseline = float(np.ravel(fitted._baseline_prediction)[0])
    written = TreeEnsemble(
        baseline,
        tuple(tuple((int(n[0]), n[1], int(n[2]), int(n[3]), n[4]) for n in tree) for tree in trees),
        threshold,
    )
    expected = fitted.predict_proba(np.array(rows))[:, 1]
    read = np.array([written.probability(x) for x in rows])
    if float(np.max(np.abs(expected - read))) > 1e-6:  # the product must read what was fitted
        raise RuntimeError("the written trees do not give scikit-learn's probabilities")
    path.write_text(
        json.dumps(
            {
                "features": list(features),
                "baseline": baseline,
                "threshold": threshold,
                **({"thresholds": thresholds} if thresholds else {}),
                "fitted_on": fitted_on.format(rows=len(rows)),
                "trees": trees,
            },
            separators=(",", ":"),
        )
        + "\n"
    )


def probabilities(
    inputs: Sequence[Sequence[float] | None],
    positive: Sequence[bool],
    train: np.ndarray,
    test: np.ndarray,
) -> np.ndarray:
    """A model fitted on the `train` rows that have an input, its probabilities for the `test`
    rows (NaN elsewhere and where a row has none)."""
    fit = [int(i) for i in np.flatnonzero(train) if inputs[int(i)] is not None]
    fitted = model().fit(np.array([inputs[i] for i in fit]), np.array([positive[i] for i in fit]))
    out = np.full(len(inputs), np.nan)
    ask = [int(i) for i in np.flatnonzero(test) if inputs[int(i)] is not None]
    if ask:
        out[ask] = fitted.predict_proba(np.array([inputs[i] for i in ask]))[:, 1]
    return out


def out_of_fold(
    sets: Sequence[str],
    inputs: Sequence[Sequence[float] | None],
    positive: Sequence[bool],
    rows: np.ndarray,
) -> np.ndarray:
    """Each of the `rows`' probability from a model fitted on the other folds (folds by set
    within them); NaN elsewhere and where a row has no input."""
    names = sorted({s for s, r in zip(sets, rows, strict=True) if r})
    inner = folds(sets, names)
    probability = np.full(len(rows), np.nan)
    for k in range(FOLDS):
        test = rows & (inner == k)
        probability[test] = probabilities(inputs, positive, rows & (inner != k), test)[test]
    return probability
