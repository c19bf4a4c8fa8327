"""Boosted tree ensembles fitted offline and read here without scikit-learn.

Two readings use one: verify's learned confirmation (verify_learned.py) and save's learned
reading of a rewording (dedup_learned.py). Each is a binary scikit-learn
HistGradientBoostingClassifier fitted by a benchmark (benchmarks/trees.py writes it, and
checks that these trees give scikit-learn's probabilities) and shipped as JSON beside this
module: the features it was fitted on, by name, the baseline log-odds, every tree's nodes and
the threshold its probability must reach.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TreeEnsemble", "read"]


@dataclass(frozen=True, slots=True)
class TreeEnsemble:
    """The log-odds of the positive class: the baseline plus each tree's leaf; and the
    threshold from which its probability counts."""

    baseline: float
    # per tree, its nodes: (feature, threshold, left, right, value); a leaf has feature -1
    trees: tuple[tuple[tuple[int, float, int, int, float], ...], ...]
    threshold: float
    # thresholds of their own for named kinds of rows, which the reader tells apart
    thresholds: tuple[tuple[str, float], ...] = ()

    def threshold_for(self, kind: str | None) -> float:
        """The threshold of rows of `kind`: its own, if the ensemble has one."""
        return dict(self.thresholds).get(kind or "", self.threshold)

    def probability(self, row: Sequence[float]) -> float:
        score = self.baseline
        for nodes in self.trees:
            node = nodes[0]
            while node[0] >= 0:
                node = nodes[node[2] if row[node[0]] <= node[1] else node[3]]
            score += node[4]
        return 1.0 / (1.0 + math.exp(-score))


def read(name: str, features: Sequence[str]) -> TreeEnsemble:
    """The ensemble in the file `name` beside this module; refused when it was fitted on other
    features than `features` (the reader's, in order)."""
    data = json.loads(Path(__file__).with_name(name).read_text(encoding="utf-8"))
    if list(data["features"]) != list(features):
        raise ValueError(f"{name} was fitted on other features than its reader's")
    return TreeEnsemble(
        baseline=float(data["baseline"]),
        trees=tuple(
            tuple((int(f), float(t), int(lo), int(hi), float(v)) for f, t, lo, hi, v in tree)
            for tree in data["trees"]
        ),
        threshold=float(data["threshold"]),
        thresholds=tuple(
            (str(kind), float(value)) for kind, value in data.get("thresholds", {}).items()
        ),
    )
