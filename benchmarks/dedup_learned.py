"""Fit and measure save's learned reading (emergent_memory/memory/dedup_learned.py) on the
spent labelled dedup pairs.

The population is every labelled pair (`same`, `corrects`, `conflicts`, `distinct`) of the
spent sets that the shipped policy's rules keep for want of evidence and the model may read
(dedup_learned.eligible); the target is `same` or `corrects` (may supersede). The model is the
ensemble of benchmarks/trees.py on dedup_learned.FEATURES. It has a threshold per kind of
pair (dedup_learned.kind: two texts under one label, and the rest), 0.50 to 0.99 by 0.01
each: of the pairs of thresholds at which, read from out-of-fold probabilities (folds by set,
so no set is judged by a model that saw it), the supersessions it adds are wrong (a
`conflicts` or `distinct` pair) for at most MAX_WRONG_ADDED of the pairs that must not
supersede in each regime (agent notes, chat turns), the one that catches the most.

    python -m benchmarks.dedup_learned fit [--write]

`fit` prints a 5-fold cross-validation by set (each fold's thresholds chosen on the other four
alone: an inner 4-fold cross-validation of their own), per regime and language, with every
verdict the model changed; `--write` then fits on every set and writes the product's model
(emergent_memory/memory/dedup_learned.json). The held-out sets written after the shipped model
(UNSEEN) are left out of the fit: their first runs are in benchmarks/README.md, section 3.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import trees
from benchmarks.common import DATA, CachedEmbeddings
from benchmarks.dedup import load_pairs, similarities
from benchmarks.trees import FOLDS
from emergent_memory.memory import dedup, dedup_learned

SUPERSEDES = frozenset({"same", "corrects"})
MAX_WRONG_ADDED = 0.001  # of the pairs that must not supersede, in each regime
# a threshold per kind of pair (dedup_learned.kind: None, or two texts under one label)
Thresholds = dict[str | None, float]
THRESHOLDS = [round(0.5 + i / 100, 2) for i in range(50)]
MODEL = Path(dedup_learned.__file__).with_name("dedup_learned.json")
REGIMES = ("agent", "chat")
# what rows() gives for each labelled pair, a list per column
COLUMNS = ("sets", "keys", "texts", "regimes", "languages", "labels", "verdicts", "inputs", "kinds")
# held-out sets written after the shipped model, never fitted on
UNSEEN = (
    "dedup_holdout_131.json",
    "dedup_holdout_132.json",
    "dedup_holdout_133.json",
    "dedup_holdout_134.json",
    "dedup_holdout_135.json",
    "dedup_holdout_136.json",
    "dedup_holdout_137.json",
    "dedup_holdout_138.json",
    "dedup_holdout_139.json",
    "dedup_holdout_140.json",
    "dedup_holdout_141.json",
    "dedup_holdout_142.json",
    "dedup_holdout_143.json",
    "dedup_holdout_144.json",
    "dedup_holdout_145.json",
    "dedup_holdout_146.json",
    "dedup_holdout_147.json",
    "dedup_holdout_148.json",
    "dedup_holdout_149.json",
    "dedup_holdout_150.json",
    "dedup_holdout_151.json",
    "dedup_holdout_152.json",
    "dedup_holdout_153.json",
    "dedup_holdout_154.json",
    "dedup_holdout_155.json",
    "dedup_holdout_156.json",
    "dedup_holdout_157.json",
    "dedup_holdout_158.json",
    "dedup_holdout_159.json",
    "dedup_holdout_160.json",
    "dedup_holdout_161.json",
    "dedup_holdout_162.json",
    "dedup_holdout_163.json",
    "dedup_holdout_164.json",
    "dedup_holdout_165.json",
    "dedup_holdout_166.json",
    "dedup_holdout_167.json",
)


def _rules() -> dedup.DedupPolicy:
    """The shipped policy of the local model, without its learned reading."""
    from emergent_memory.app import DEDUP_POLICIES
    from emergent_memory.embeddings.local import LOCAL_MODEL_NAME

    return replace(DEDUP_POLICIES[LOCAL_MODEL_NAME], learned=None)


def spent() -> list[str]:
    """Every labelled set of four verdicts in benchmarks/data but the unseen ones."""
    names = sorted(p.name for p in DATA.glob("*.json") if p.name.startswith(("dedup_", "chat_")))
    return [name for name in names if name not in UNSEEN and _labelled(name)]


def _labelled(name: str) -> bool:
    pairs = load_pairs(name)
    return bool(pairs) and "verdict" in pairs[0]


def rows(names: Sequence[str], embedder: Any = None) -> dict[str, Any]:
    """Per labelled pair: its set, key, texts, regime, language, label, the rules' decision
    and the model's input (None where it may not read the pair)."""
    policy = _rules()
    embedder = embedder or CachedEmbeddings()
    data: dict[str, list[Any]] = {column: [] for column in COLUMNS}
    for name in names:
        pairs = load_pairs(name)
        for pair, similarity in zip(pairs, similarities(pairs, embedder), strict=True):
            existing, new = pair["existing"], pair["new"]
            row, kind = None, None
            if similarity < policy.considered_from:
                decision = dedup.Decision("distinct", "not similar")  # as explain decides
            else:  # compared once, for the rules and the model
                compared = dedup._compared(existing, new, False)
                decision = policy.judge(similarity, compared)
                if decision.reason == "not enough evidence":
                    kind = dedup_learned.kind(compared)
                    if dedup_learned.eligible(existing, new, compared, decision):
                        row = dedup_learned.features(similarity, existing, new, compared)
            data["sets"].append(name)
            data["keys"].append(pair.get("key", ""))
            data["texts"].append((existing, new))
            data["regimes"].append(
                pair.get("regime", "chat" if name.startswith("chat_") else "agent")
            )
            data["languages"].append("English" if pair.get("language", "en") == "en" else "other")
            data["labels"].append(pair["verdict"])
            data["verdicts"].append(decision.verdict)
            data["inputs"].append(row)
            data["kinds"].append(kind)
    if isinstance(embedder, CachedEmbeddings):
        embedder.save()
    return data


def _positive(data: dict[str, Any]) -> list[bool]:
    return [label in SUPERSEDES for label in data["labels"]]


def _added(data: dict[str, Any], probability: np.ndarray, thresholds: Thresholds) -> np.ndarray:
    """Whether the model supersedes each pair the rules do not: its probability reaches the
    threshold of the pair's kind."""
    labelled = np.array([kind == dedup_learned.LABELLED for kind in data["kinds"]])
    limit = np.where(labelled, thresholds[dedup_learned.LABELLED], thresholds[None])
    rules = np.array([verdict == "supersede" for verdict in data["verdicts"]])
    known = ~np.isnan(probability)
    return known & ~rules & (np.where(known, probability, 0.0) >= limit)


def superseded(data: dict[str, Any], probability: np.ndarray, thresholds: Thresholds) -> list[bool]:
    """Whether each pair is superseded: by the rules, or by the model from the threshold of
    its kind."""
    added = _added(data, probability, thresholds)
    return [
        verdict == "supersede" or bool(a)
        for verdict, a in zip(data["verdicts"], added, strict=True)
    ]


def wrong_added(
    data: dict[str, Any], probability: np.ndarray, thresholds: Thresholds, rows_: np.ndarray
) -> dict[str, float]:
    """Per regime, of the `rows_`' pairs that must not supersede, the share the model adds."""
    added = _added(data, probability, thresholds)
    must_not = rows_ & ~np.array(_positive(data))
    regimes = np.array(data["regimes"])
    return {
        regime: float((added & must_not & (regimes == regime)).sum())
        / max(1, int((must_not & (regimes == regime)).sum()))
        for regime in REGIMES
    }


def out_of_fold(data: dict[str, Any], rows_: np.ndarray) -> np.ndarray:
    return trees.out_of_fold(data["sets"], data["inputs"], _positive(data), rows_)


def choose(data: dict[str, Any], rows_: np.ndarray) -> Thresholds:
    """The thresholds for the `rows_` given, one per kind of pair (dedup_learned.kind): of
    the pairs of thresholds at which, out of fold, the model adds supersessions of at most
    MAX_WRONG_ADDED of the pairs that must not supersede in each regime, the one that
    catches the most (on a tie, the higher thresholds); 1.0 each when none does."""
    probability = out_of_fold(data, rows_)
    positive = np.array(_positive(data))
    regimes = np.array(data["regimes"])
    labelled = np.array([kind == dedup_learned.LABELLED for kind in data["kinds"]])
    open_ = rows_ & ~np.isnan(probability) & ~np.array([v == "supersede" for v in data["verdicts"]])
    p = np.where(np.isnan(probability), 0.0, probability)
    must_not = {r: int((rows_ & ~positive & (regimes == r)).sum()) for r in REGIMES}
    # what each kind of pair adds at each threshold (the two kinds add disjoint pairs)
    added: dict[bool, dict[float, tuple[int, dict[str, int]]]] = {}
    for kind in (False, True):
        added[kind] = {}
        for threshold in THRESHOLDS:
            taken = open_ & (labelled == kind) & (p >= threshold)
            wrong = {r: int((taken & ~positive & (regimes == r)).sum()) for r in REGIMES}
            added[kind][threshold] = (int((taken & positive).sum()), wrong)
    best: tuple[int, float, Thresholds] | None = None
    for rest in THRESHOLDS:
        for under_label in THRESHOLDS:
            (caught_rest, wrong_rest), (caught_label, wrong_label) = (
                added[False][rest],
                added[True][under_label],
            )
            if any(
                wrong_rest[r] + wrong_label[r] > MAX_WRONG_ADDED * max(1, must_not[r])
                for r in REGIMES
            ):
                continue
            key = (caught_rest + caught_label, rest + under_label)
            if best is None or key > best[:2]:
                best = (*key, {None: rest, dedup_learned.LABELLED: under_label})
    return best[2] if best else {None: 1.0, dedup_learned.LABELLED: 1.0}


def report(data: dict[str, Any], chosen: Sequence[bool], title: str) -> list[str]:
    """Per regime and language: distinct and conflicting pairs superseded, same and corrects
    caught."""
    lines = [f"{title}:"]
    groups = sorted(set(zip(data["regimes"], data["languages"], strict=True)))
    for regime, language in groups:
        in_group = [
            i
            for i, (r, lang) in enumerate(zip(data["regimes"], data["languages"], strict=True))
            if r == regime and lang == language
        ]
        counts = []
        for label in ("distinct", "conflicts"):
            of = [i for i in in_group if data["labels"][i] == label]
            hit = sum(chosen[i] for i in of)
            counts.append(f"{label} superseded {hit} of {len(of)} ({hit / max(1, len(of)):.4f})")
        of = [i for i in in_group if data["labels"][i] in SUPERSEDES]
        hit = sum(chosen[i] for i in of)
        counts.append(f"same and corrects caught {hit} of {len(of)} ({hit / max(1, len(of)):.3f})")
        lines.append(f"  {regime}, {language}: " + "; ".join(counts))
    return lines


def cross_validate(data: dict[str, Any]) -> list[str]:
    names = sorted(set(data["sets"]))
    fold = trees.folds(data["sets"], names)
    probability = np.full(len(fold), np.nan)
    chosen_thresholds = []
    chosen = [v == "supersede" for v in data["verdicts"]]
    for k in range(FOLDS):
        train, test = fold != k, fold == k
        threshold = choose(data, train)
        chosen_thresholds.append(threshold)
        probability[test] = trees.probabilities(data["inputs"], _positive(data), train, test)[test]
        fold_chosen = superseded(data, probability, threshold)
        for j in np.flatnonzero(test):
            chosen[int(j)] = fold_chosen[int(j)]
    rules = [v == "supersede" for v in data["verdicts"]]
    lines = report(data, rules, "the rules alone")
    lines += report(
        data, chosen, f"rules and the model, {FOLDS}-fold by set (thresholds {chosen_thresholds})"
    )
    lines.append("every verdict the model changed, held out (right / wrong, set/key, label, p):")
    for i, (rule, now) in enumerate(zip(rules, chosen, strict=True)):
        if rule != now:
            mark = "right" if data["labels"][i] in SUPERSEDES else "WRONG"
            existing, new = data["texts"][i]
            lines.append(
                f"  {mark} {data['sets'][i]}/{data['keys'][i]} {data['regimes'][i]} labelled "
                f"{data['labels'][i]} (p {probability[i]:.2f}): {existing!r} / {new!r}"
            )
    return lines


def write(data: dict[str, Any], path: Path = MODEL) -> Thresholds:
    """Fit on every set, choose the thresholds on all of them, write the product's model."""
    everything = np.ones(len(data["labels"]), dtype=bool)
    threshold = choose(data, everything)
    fitted_on = f"{len(set(data['sets']))} spent dedup sets, {{rows}} pairs the rules keep "
    own = {dedup_learned.LABELLED: threshold[dedup_learned.LABELLED]}
    trees.write(
        data["inputs"],
        _positive(data),
        dedup_learned.FEATURES,
        threshold[None],
        fitted_on + "for want of evidence",
        path,
        own,
    )
    return threshold


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dedup_learned")
    commands = parser.add_subparsers(dest="command", required=True)
    fitting = commands.add_parser("fit", help="cross-validate; --write: the product's model")
    fitting.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    data = rows(spent())
    print("\n".join(cross_validate(data)), flush=True)
    if args.write:
        print(f"written {MODEL} (threshold {write(data)})")


if __name__ == "__main__":
    main(sys.argv[1:])
