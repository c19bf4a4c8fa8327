"""Injection and recall's relevance: the weights of relevance and its two floors, calibrated
and cross-validated on labelled prompt sets, and what the product injects.

Relevance (emergent_memory/memory/relevance.py) is a logistic function of three pieces of
evidence the product's recall row holds for a (prompt, memory) pair: cosine similarity, the
idf-weighted coverage of the prompt's words by the memory's full text, and the gap between the
memory's similarity and the closest memory's. Its weights are fitted by logistic regression
(L2 1e-2) on the pairs the product's recall returns (its 20 candidates, the injection's own
call); what recall never returns is never injected and counts as missed.

Two floors, each by a stated criterion and never by hand:

- injection (UserPromptSubmit): **precision first**, the lowest floor at which at least
  TARGET_PRECISION of the injected memories are relevant, pooled over (prompt, memory) pairs;
  the lowest such floor keeps the most recall;
- recall (MCP, REST, dashboard): the highest floor at which recall's hit@10 and MRR@10 over
  the answerable queries (with their category and scope filters, as benchmarks/quality.py
  counts them) stay within RECALL_TOLERANCE of recall without a floor: the floor removes what
  has no evidence, never an answer the quality benchmark counts.

Labelled sets (the retrieval.json format: users, memories, queries with `relevant` keys and a
`kind`): benchmarks/data/retrieval.json (section 2's set; prompts whose labels assume a
category or scope filter, and those under the product's minimum of 3 words, are left out of
injection) and benchmarks/data/injection_prompts.json (coding-agent prompts, at least 40% with
no answer, chat-like and non-English prompts and memories). In the second format a memory of
scope "global" is the user's in every project (the product's scope "user"); in retrieval.json
it is everyone's (detected by the memories' `importance` field; --global-means overrides).
The sets share one database, each with its own users and projects: retrieval.json's global
memories (everyone's) are visible to the other set's users too, as memories that never answer
their prompts (with --data one set runs alone).

Cross-validation: 5 folds stratified by set and kind, fixed seed; for each held-out fold the
weights and both floors are chosen on the other four, and counted on the held-out prompts.
Reported per regime: each kind of prompt, English against other languages, prompts with no
answer (how many got anything injected), and every wrong verdict of the shipped model.

    python -m benchmarks.injection                      # calibrate on the shipped sets, report
    python -m benchmarks.injection --data PATH [--data PATH2]   # calibrate on other sets
    python -m benchmarks.injection --data PATH --data-only-eval # the shipped weights and
                                                        # floors on PATH, once, no fitting

Then the product, end to end, on the same database: InjectionService (the configuration
emergent_memory/app.py builds: the calibrated floor, budget 500 tokens) for every prompt in a
fresh session, against baselines from the same run (the cosine floor 0.59 shipped before, the
recall's top k); and SessionStart for each user in each project: what each category gets, by
turns, against the order before (corrections and instructions first).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pgvector import Vector

from benchmarks import quality
from benchmarks.common import DATA, CachedEmbeddings, bench_database, percentiles, write_result
from emergent_memory import graph
from emergent_memory.app import injection_config, memory_config
from emergent_memory.db.pool import create_pool
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.errors import InvalidInput, SecretRejected
from emergent_memory.memory import MemoryService, relevance, store
from emergent_memory.memory.injection import (
    _WORD,  # the words the product counts in a prompt
    PROMPT_CANDIDATES,
    START_CANDIDATES,
    START_ORDER,
    InjectionService,
    fit,
    language_rules,
)
from emergent_memory.memory.records import conflict_state
from emergent_memory.settings import Settings

TARGET_PRECISION = 0.8
RECALL_TOLERANCE = 0.005
FOLDS, SEED = 5, 20240611
L2 = 1e-2
# Floors tried: 0.000, 0.001, ... 1.000 (relevance is a probability; the recall floor is low).
FLOORS = [step / 1000 for step in range(1001)]
# Kinds whose labels assume a recall filter that injection does not apply.
FILTERED_KINDS = frozenset({"category_filter", "scope_filter"})
SETS = [DATA / "retrieval.json", DATA / "injection_prompts.json"]
# The cosine floor shipped before relevance (all-MiniLM-L6-v2), measured as a baseline.
COSINE_FLOOR_BEFORE = 0.59
# Queries of no meaning, asked of every user's store: recall should find nothing relevant.
NONSENSE = ("xyzzy frobnicate", "qwpoeiru zxmcnvb lkjasd", "blorft wibble snargle")
_LETTER = re.compile(r"[^\W\d_]")


# -- the labelled sets --------------------------------------------------------------------


@dataclass
class LabelledSet:
    """One labelled file: its users, memories and queries, and how its scopes map to the
    product's."""

    name: str
    users: list[dict[str, Any]]
    memories: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    global_means: str  # "everyone" (retrieval.json) or "user" (the prompt-set format)
    ids: dict[str, uuid.UUID] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)

    def uid(self, key: str) -> str:
        return f"{self.name}:{key}"

    def scope_of(self, memory: dict[str, Any]) -> str:
        if memory["scope"] == "global" and self.global_means == "user":
            return "user"
        return str(memory["scope"])


def read_set(path: Path, global_means: str | None = None) -> LabelledSet:
    data = json.loads(path.read_text())
    if global_means is None:
        prompt_format = any("importance" in m for m in data["memories"])
        global_means = "user" if prompt_format else "everyone"
    return LabelledSet(
        name=path.stem,
        users=data["users"],
        memories=data["memories"],
        queries=data["queries"],
        global_means=global_means,
    )


def principal_of(labelled: LabelledSet, user: str, project: str, admin: bool = False) -> Any:
    # each set's users are its own: the set's name keeps them apart in one database
    return quality.principal_of(labelled.uid(user), labelled.uid(project), admin)


def load(service: MemoryService, labelled: LabelledSet) -> None:
    """Save the set's memories through the memory service, each as its user in its project;
    then mark the superseded ones (the set says what supersedes what: no dedup)."""
    for memory in labelled.memories:
        principal = principal_of(labelled, memory["user"], memory["project"], admin=True)
        importance = memory.get("importance")
        try:
            saved = service.save(
                principal,
                memory["content"],
                memory["category"],
                source=memory.get("source", "inferred"),
                scope=labelled.scope_of(memory),
                importance=None if importance in (None, "normal") else importance,
            )
        except (InvalidInput, SecretRejected):
            labelled.refused.append(memory["key"])
            continue
        labelled.ids[memory["key"]] = uuid.UUID(saved["memory"]["id"])
    with service.pool.connection() as conn, conn.transaction():
        for memory in labelled.memories:
            newer = memory.get("superseded_by")
            if newer and newer in labelled.ids and memory["key"] in labelled.ids:
                old_id, new_id = labelled.ids[memory["key"]], labelled.ids[newer]
                graph.create_relationship(
                    conn,
                    project_id=quality.ident("project", labelled.uid(memory["project"])),
                    type="SUPERSEDES",
                    src_id=new_id,
                    dst_id=old_id,
                    actor_id=quality.ident("user", labelled.uid(memory["user"])),
                )
                graph.update_object(conn, old_id, properties={"superseded_by": str(new_id)})


def is_other_language(text: str) -> bool:
    """Text the local model reads poorly: many letters outside ASCII (accents, CJK, Cyrillic)."""
    letters = _LETTER.findall(text)
    return bool(letters) and sum(ch > "\x7f" for ch in letters) / len(letters) >= 0.1


def foreign(item: dict[str, Any], text: str) -> bool:
    """Not English: by the item's `lang` (ISO 639-1) when the set gives it, else by its
    letters."""
    lang = item.get("lang")
    return is_other_language(text) if lang is None else lang != "en"


def regimes(labelled: LabelledSet, query: dict[str, Any]) -> list[str]:
    """The regimes a prompt belongs to: its kind, its language, whether it has an answer and
    in which language that is written."""
    by_key = {m["key"]: m for m in labelled.memories}
    answers = [by_key[k] for k in query["relevant"] if k in by_key]
    names = [
        f"kind: {query['kind']}",
        "prompt: other language" if foreign(query, query["query"]) else "prompt: English",
    ]
    if not answers:
        return [*names, "answer: none"]
    if any(foreign(m, m["content"]) for m in answers):
        return [*names, "answer: some", "answer: a memory in another language"]
    return [*names, "answer: some"]


# -- what recall returns for each prompt ------------------------------------------------------


@dataclass
class Pair:
    memory: str  # the memory's key, with its set's name ("retrieval:m001")
    similarity: float
    coverage: float
    gap: float
    relevant: bool
    outranked: bool
    weight: float = 1.0  # what the search multiplied the fused score by (relevance.weighed)
    # injection's rule on how to answer in the prompt's language (memory/languages.py) holds:
    # injected whatever its relevance, and left out of fitting the weights
    answers_language: bool = False


@dataclass
class Prompt:
    """A prompt (or query) of a set, with what the product's recall returned for it."""

    key: str
    set: str
    kind: str
    text: str
    regimes: list[str]
    relevant: int  # how many memories answer it (labelled, found or not)
    pairs: list[Pair]  # recall's rows in its order (injection: no filter; recall: its filter)
    injectable: bool  # injection would answer it (no filter assumed, at least 3 words)

    @property
    def uid(self) -> str:
        return f"{self.set}:{self.key}"


def collect(
    memory: MemoryService, embedder: CachedEmbeddings, sets: Sequence[LabelledSet]
) -> tuple[list[Prompt], list[Prompt]]:
    """For every query: recall's candidates as injection reads them (no filter) and as recall
    reads them (the query's filters): each row's evidence and label."""
    config = memory_config(Settings(), embedder.model_name)
    min_words = Settings.model_fields["injection_min_prompt_words"].default
    injected: list[Prompt] = []
    recalled: list[Prompt] = []
    keys = {uid: labelled.uid(key) for labelled in sets for key, uid in labelled.ids.items()}
    with memory.pool.connection() as conn:
        for labelled in sets:
            vectors = embedder.vectors([q["query"] for q in labelled.queries], "q")
            for query, vector in zip(labelled.queries, vectors, strict=True):
                wanted = {labelled.uid(k) for k in query["relevant"]}
                principal = principal_of(labelled, query["user"], query["project"])
                injectable = (
                    query["kind"] not in FILTERED_KINDS
                    and len(_WORD.findall(query["query"])) >= min_words
                )
                for filtered, into in ((False, injected), (True, recalled)):
                    if not filtered and not injectable:
                        continue
                    rows = store.recall(
                        conn,
                        principal,
                        query=query["query"],
                        embedding=Vector(vector.tolist()),
                        model=embedder.model_name,
                        category=query.get("category") if filtered else None,
                        scope=query.get("scope") if filtered else None,
                        limit=PROMPT_CANDIDATES,
                        **config.recall_tuning,
                    )
                    values = relevance.features(rows, config.fusion)
                    rules = (
                        []
                        if filtered
                        else language_rules(
                            conn,
                            principal,
                            query["query"],
                            rows,
                            embedder.model_name,
                            config.recall_tuning,
                        )
                    )  # fmt: skip (the product's: InjectionService offers them first)
                    ruling, seen = {row.id for row in rules}, {row.id for row in rows}
                    added = [row for row in rules if row.id not in seen]
                    rows, values = [*rows, *added], [*values, *[(0.0, 0.0, -1.0)] * len(added)]
                    conn.rollback()
                    pairs = [
                        Pair(keys[row.id], s, c, g, keys[row.id] in wanted,
                             conflict_state(row) == "outranked", relevance.weighed(row, 1.0),
                             row.id in ruling)
                        for row, (s, c, g) in zip(rows, values, strict=True)
                    ]  # fmt: skip
                    into.append(
                        Prompt(
                            query["key"],
                            labelled.name,
                            query["kind"],
                            query["query"],
                            regimes(labelled, query),
                            len(wanted),
                            pairs,
                            injectable,
                        )
                    )
    return injected, recalled


# -- the model: fitting and floors ----------------------------------------------------------


def design(pairs: Sequence[Pair]) -> np.ndarray:
    return np.asarray([[1.0, p.similarity, p.coverage, p.gap] for p in pairs]).reshape(-1, 4)


def fit_weights(prompts: Sequence[Prompt]) -> np.ndarray:
    """Logistic regression (Newton's method, L2) of relevant on the evidence."""
    pairs = [pair for prompt in prompts for pair in prompt.pairs if not pair.answers_language]
    x = design(pairs)
    y = np.asarray([pair.relevant for pair in pairs], dtype=float)
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -60, 60)))
        gradient = x.T @ (p - y) + L2 * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + L2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def model_of(
    w: np.ndarray, recall_floor: float, injection_floor: float, wordless: float = 0.0
) -> relevance.RelevanceModel:
    return relevance.RelevanceModel(
        intercept=round(float(w[0]), 3),
        similarity=round(float(w[1]), 3),
        coverage=round(float(w[2]), 3),
        gap=round(float(w[3]), 3),
        recall_floor=recall_floor,
        injection_floor=injection_floor,
        wordless_similarity=wordless,
    )


def scored(model: relevance.RelevanceModel, prompt: Prompt) -> list[float]:
    """Each pair's relevance; 1 where injection's language rule holds (InjectionService)."""
    values = relevance.scores([(p.similarity, p.coverage, p.gap) for p in prompt.pairs], model)
    return [1.0 if p.answers_language else v for p, v in zip(prompt.pairs, values, strict=True)]


def choose_wordless_similarity(prompts: Sequence[Prompt]) -> float:
    """The highest similarity (0.00, 0.01, ... 0.50) below which a query sharing no word with
    its candidates may be called unanchored without emptying any answerable query (its
    filters applied) whose answer recall finds in its first 10."""
    found = [
        max(pair.similarity for pair in prompt.pairs)
        for prompt in prompts
        if prompt.pairs
        and any(pair.relevant for pair in prompt.pairs[:10])
        and all(pair.coverage <= 0 for pair in prompt.pairs)
    ]
    lowest = min(found, default=0.5)
    return max((s / 100 for s in range(51) if s / 100 <= lowest), default=0.0)


def injection_counts(
    model: relevance.RelevanceModel, prompts: Sequence[Prompt], floor: float
) -> dict[str, int]:
    """Pooled over the prompts: injected, relevant among them, relevant in all; no-answer
    prompts and how many got anything."""
    injected = hits = relevant = empty = empty_into = 0
    for prompt in prompts:
        chosen = [
            pair
            for pair, value in zip(prompt.pairs, scored(model, prompt), strict=True)
            if value >= floor and not pair.outranked
        ]
        injected += len(chosen)
        hits += sum(pair.relevant for pair in chosen)
        relevant += prompt.relevant
        if not prompt.relevant:
            empty += 1
            empty_into += bool(chosen)
    return {
        "injected": injected,
        "relevant_injected": hits,
        "relevant": relevant,
        "no_answer_prompts": empty,
        "no_answer_injected_into": empty_into,
    }


def scores(counted: dict[str, int]) -> dict[str, Any]:
    injected, hits = counted["injected"], counted["relevant_injected"]
    relevant = counted["relevant"]
    return {
        **counted,
        "precision": round(hits / injected, 4) if injected else 1.0,
        "recall": round(hits / relevant, 4) if relevant else 0.0,
    }


def choose_injection_floor(model: relevance.RelevanceModel, prompts: Sequence[Prompt]) -> float:
    """The lowest floor whose pooled precision reaches TARGET_PRECISION; if none does, 1."""
    values = sorted(
        (
            (value, pair.relevant)
            for prompt in prompts
            for pair, value in zip(prompt.pairs, scored(model, prompt), strict=True)
            if not pair.outranked
        ),
        reverse=True,
    )
    # precision of "value >= floor" for each floor, from the counts above it
    best = 1.0
    hits = taken = 0
    index = 0
    for floor in reversed(FLOORS):
        while index < len(values) and values[index][0] >= floor:
            hits += values[index][1]
            taken += 1
            index += 1
        if taken and hits >= TARGET_PRECISION * taken:
            best = floor
    return best


def recall_quality(
    model: relevance.RelevanceModel, prompts: Sequence[Prompt], floor: float
) -> dict[str, Any]:
    """hit@10, MRR@10 over the answerable queries (their filters applied), the share of the
    relevant memories in the top 10 that the floor keeps, and the queries without an answer
    that come back empty."""
    hit = mrr = kept = found = 0.0
    answerable = empty = emptied = returned = 0
    for prompt in prompts:
        # as recall answers: of its window, the most relevant first (service._relevant)
        window = list(zip(prompt.pairs, scored(model, prompt), strict=True))
        window.sort(key=lambda item: -item[1] * item[0].weight)
        top = window[:10]
        shown = [pair for pair, value in top if value >= floor]
        returned += len(shown)
        found += sum(pair.relevant for pair, _ in top)
        kept += sum(pair.relevant for pair in shown)
        if prompt.relevant:
            answerable += 1
            rank = next((i + 1 for i, pair in enumerate(shown) if pair.relevant), None)
            hit += rank is not None
            mrr += 1 / rank if rank else 0.0
        else:
            empty += 1
            emptied += not shown
    return {
        "hit@10": round(hit / answerable, 4) if answerable else 0.0,
        "mrr@10": round(mrr / answerable, 4) if answerable else 0.0,
        "relevant_kept": round(kept / found, 4) if found else 1.0,
        "returned_per_query": round(returned / len(prompts), 2) if prompts else 0.0,
        "no_answer_queries": empty,
        "no_answer_emptied": emptied,
    }


def choose_recall_floor(model: relevance.RelevanceModel, prompts: Sequence[Prompt]) -> float:
    """The highest floor at which hit@10 and MRR@10 stay within RECALL_TOLERANCE of no floor."""
    base = recall_quality(model, prompts, 0.0)
    best = 0.0
    for floor in FLOORS[:200]:  # 0 to 0.199: beyond, answers are cut
        row = recall_quality(model, prompts, floor)
        if (
            row["hit@10"] >= base["hit@10"] - RECALL_TOLERANCE
            and row["mrr@10"] >= base["mrr@10"] - RECALL_TOLERANCE
        ):
            best = floor
        else:
            break
    return best


def calibrate_on(
    injected: Sequence[Prompt], recalled: Sequence[Prompt]
) -> relevance.RelevanceModel:
    weights = fit_weights(injected)
    wordless = choose_wordless_similarity(recalled)
    unfloored = model_of(weights, 0.0, 0.0, wordless)
    return model_of(
        weights,
        choose_recall_floor(unfloored, recalled),
        choose_injection_floor(unfloored, injected),
        wordless,
    )


def folds(prompts: Sequence[Prompt]) -> dict[str, int]:
    """A fold per query (by set and key): each (set, kind) shuffled with a fixed seed, dealt
    round robin; a query's injection and recall rows share its fold."""
    rng = random.Random(SEED)
    fold: dict[str, int] = {}
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for prompt in prompts:
        groups[(prompt.set, prompt.kind)].append(prompt.uid)
    for group in sorted(groups):
        members = sorted(set(groups[group]))
        rng.shuffle(members)
        for position, uid in enumerate(members):
            fold[uid] = position % FOLDS
    return fold


def by_regime(
    model: relevance.RelevanceModel, prompts: Sequence[Prompt], floor: float
) -> dict[str, dict[str, Any]]:
    names = sorted({name for prompt in prompts for name in prompt.regimes})
    table = {}
    for name in names:
        members = [p for p in prompts if name in p.regimes]
        table[name] = scores(injection_counts(model, members, floor)) | {"prompts": len(members)}
    for labelled in sorted({p.set for p in prompts}):
        members = [p for p in prompts if p.set == labelled]
        table[f"set: {labelled}"] = scores(injection_counts(model, members, floor)) | {
            "prompts": len(members)
        }
    return table


def cross_validate(injected: Sequence[Prompt], recalled: Sequence[Prompt]) -> dict[str, Any]:
    fold = folds([*injected, *recalled])
    per_fold = []
    pooled: Counter[str] = Counter()
    held_out: list[tuple[relevance.RelevanceModel, Prompt]] = []
    recall_rows = []
    for k in range(FOLDS):
        train_i = [p for p in injected if fold[p.uid] != k]
        train_r = [p for p in recalled if fold[p.uid] != k]
        test_i = [p for p in injected if fold[p.uid] == k]
        test_r = [p for p in recalled if fold[p.uid] == k]
        model = calibrate_on(train_i, train_r)
        counted = injection_counts(model, test_i, model.injection_floor)
        pooled.update(counted)
        held_out += [(model, p) for p in test_i]
        recall_rows.append(
            {
                "with_floor": recall_quality(model, test_r, model.recall_floor),
                "no_floor": recall_quality(model, test_r, 0.0),
                "queries": len(test_r),
            }
        )
        per_fold.append(
            {
                "fold": k,
                "prompts": len(test_i),
                "weights": [model.intercept, model.similarity, model.coverage, model.gap],
                "injection_floor": model.injection_floor,
                "recall_floor": model.recall_floor,
                "train": scores(injection_counts(model, train_i, model.injection_floor)),
                "test": scores(counted),
            }
        )
    # per regime, each prompt judged by the model of the folds it was held out of
    regime_counts: dict[str, Counter[str]] = defaultdict(Counter)
    for model, prompt in held_out:
        counted = injection_counts(model, [prompt], model.injection_floor)
        for name in [*prompt.regimes, f"set: {prompt.set}"]:
            regime_counts[name].update(counted | {"prompts": 1})
    return {
        "injection": scores(dict(pooled)),
        "folds": per_fold,
        "by_regime": {name: scores(dict(c)) for name, c in sorted(regime_counts.items())},
        "recall": {
            name: {
                metric: round(
                    sum(r[name][metric] * r["queries"] for r in recall_rows)
                    / max(1, sum(r["queries"] for r in recall_rows)),
                    4,
                )
                for metric in ("hit@10", "mrr@10", "relevant_kept", "returned_per_query")
            }
            | {
                "no_answer_emptied": sum(r[name]["no_answer_emptied"] for r in recall_rows),
                "no_answer_queries": sum(r[name]["no_answer_queries"] for r in recall_rows),
            }
            for name in ("with_floor", "no_floor")
        },
    }


def wrong_verdicts(
    model: relevance.RelevanceModel, prompts: Sequence[Prompt], floor: float
) -> list[dict[str, Any]]:
    """Every (prompt, memory) the model judges wrongly at `floor`: injected but not relevant,
    or relevant and recalled but not injected; and relevant memories recall never returned."""
    wrong = []
    for prompt in prompts:
        seen = set()
        for pair, value in zip(prompt.pairs, scored(model, prompt), strict=True):
            seen.add(pair.memory)
            injected = value >= floor and not pair.outranked
            if injected != pair.relevant:
                wrong.append(
                    {
                        "prompt": prompt.uid,
                        "memory": pair.memory,
                        "relevance": round(value, 4),
                        "verdict": "injected, not relevant"
                        if injected
                        else "relevant, not injected",
                        "kind": prompt.kind,
                    }
                )
        missing = prompt.relevant - sum(pair.relevant for pair in prompt.pairs)
        if missing > 0:
            wrong.append(
                {
                    "prompt": prompt.uid,
                    "memory": f"{missing} not among recall's {PROMPT_CANDIDATES} candidates",
                    "relevance": None,
                    "verdict": "relevant, not recalled",
                    "kind": prompt.kind,
                }
            )
    return wrong


def cosine_before(injected: Sequence[Prompt]) -> dict[str, Any]:
    """Today's rule measured on the same rows: cosine >= 0.59 (no outranked side)."""
    injected_n = hits = relevant = empty = empty_into = 0
    for prompt in injected:
        chosen = [
            p for p in prompt.pairs if p.similarity >= COSINE_FLOOR_BEFORE and not p.outranked
        ]
        injected_n += len(chosen)
        hits += sum(p.relevant for p in chosen)
        relevant += prompt.relevant
        if not prompt.relevant:
            empty += 1
            empty_into += bool(chosen)
    return scores(
        {
            "injected": injected_n,
            "relevant_injected": hits,
            "relevant": relevant,
            "no_answer_prompts": empty,
            "no_answer_injected_into": empty_into,
        }
    )


# -- the product, end to end ----------------------------------------------------------------


def prompt_injections(
    service: InjectionService, labelled: LabelledSet, prompts: Sequence[Prompt]
) -> dict[str, list[str]]:
    """The memory keys the product injects for each prompt, each in a fresh session."""
    keys = {uid: key for key, uid in labelled.ids.items()}
    by_key = {q["key"]: q for q in labelled.queries}
    others = "another set's memory"
    chosen: dict[str, list[str]] = {}
    for prompt in prompts:
        if prompt.set != labelled.name:
            continue
        query = by_key[prompt.key]
        result = service.context(
            principal_of(labelled, query["user"], query["project"]),
            session_id=f"benchmark-{prompt.key}-{uuid.uuid4()}",
            event="prompt",
            client="benchmark",
            prompt=query["query"],
        )
        chosen[prompt.uid] = [keys.get(uuid.UUID(m["id"]), others) for m in result["memories"]]
    return chosen


def product_tally(
    sets: Sequence[LabelledSet], prompts: Sequence[Prompt], chosen: dict[str, list[str]]
) -> dict[str, Any]:
    queries = {f"{s.name}:{q['key']}": q for s in sets for q in s.queries}
    owners = {f"{s.name}:{m['key']}": (s, m) for s in sets for m in s.memories}
    injected = hits = relevant = leaks = into = empty_into = empty = 0
    for prompt in prompts:
        query = queries[prompt.uid]
        memories = chosen.get(prompt.uid, [])
        injected += len(memories)
        hits += sum(key in query["relevant"] for key in memories)
        relevant += len(query["relevant"])
        into += bool(memories)
        if not query["relevant"]:
            empty += 1
            empty_into += bool(memories)
        for key in memories:
            if f"{prompt.set}:{key}" not in owners:  # another set's global memory
                continue
            labelled, memory = owners[f"{prompt.set}:{key}"]
            shared = labelled.scope_of(memory) == "global"
            leaks += not shared and memory["user"] != query["user"]
    return scores(
        {
            "injected": injected,
            "relevant_injected": hits,
            "relevant": relevant,
            "no_answer_prompts": empty,
            "no_answer_injected_into": empty_into,
        }
    ) | {"prompts": len(prompts), "prompts_injected_into": into, "leaks": leaks}


def in_context(
    service: InjectionService, labelled: LabelledSet, prompts: Sequence[Prompt]
) -> dict[str, tuple[list[str], list[str]]]:
    """What the agent holds when it answers each prompt in a session that began as Claude
    Code's do: SessionStart's memory keys, then the prompt's (in the same session, so the
    product never injects a memory twice)."""
    keys = {uid: key for key, uid in labelled.ids.items()}
    by_key = {q["key"]: q for q in labelled.queries}
    others = "another set's memory"
    held: dict[str, tuple[list[str], list[str]]] = {}
    for prompt in prompts:
        if prompt.set != labelled.name:
            continue
        query = by_key[prompt.key]
        principal = principal_of(labelled, query["user"], query["project"])
        session = f"benchmark-in-context-{prompt.key}-{uuid.uuid4()}"
        answers = [
            service.context(principal, session_id=session, event=event, client="benchmark", **asked)
            for event, asked in (("session_start", {}), ("prompt", {"prompt": query["query"]}))
        ]
        start, added = (
            [keys.get(uuid.UUID(m["id"]), others) for m in answer["memories"]] for answer in answers
        )
        held[prompt.uid] = (start, added)
    return held


def context_tally(
    sets: Sequence[LabelledSet],
    prompts: Sequence[Prompt],
    held: dict[str, tuple[list[str], list[str]]],
) -> dict[str, Any]:
    """Of the memories that answer the prompts, how many the agent holds when it answers:
    from SessionStart, added by the prompt, in all."""
    queries = {f"{s.name}:{q['key']}": q for s in sets for q in s.queries}
    relevant = at_start = added = start_size = added_size = added_no_answer = 0
    for prompt in prompts:
        wanted = set(queries[prompt.uid]["relevant"])
        start, by_prompt = held[prompt.uid]
        relevant += len(wanted)
        at_start += len(wanted & set(start))
        added += len(wanted & set(by_prompt))
        start_size += len(start)
        added_size += len(by_prompt)
        added_no_answer += not wanted and bool(by_prompt)
    return {
        "relevant": relevant,
        "relevant_at_start": at_start,
        "relevant_added_by_prompt": added,
        "recall_at_start": round(at_start / relevant, 4) if relevant else None,
        "recall_in_context": round((at_start + added) / relevant, 4) if relevant else None,
        "memories_at_start_per_prompt": round(start_size / max(1, len(prompts)), 2),
        "memories_added_per_prompt": round(added_size / max(1, len(prompts)), 2),
        "no_answer_prompts_added_to": added_no_answer,
        "no_answer_prompts": sum(not queries[p.uid]["relevant"] for p in prompts),
    }


def session_starts(
    service: InjectionService, memory: MemoryService, sets: Sequence[LabelledSet], budget: int
) -> dict[str, Any]:
    """One SessionStart injection per user and project: what each category gets, by turns
    (the product), and by the order before (core, then corrections and instructions first,
    then each category in START_ORDER: the same candidates sorted so, fitted to the budget)."""
    injected: Counter[str] = Counter()
    before: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    tokens: list[float] = []
    sessions = 0
    for labelled in sets:
        current = {
            labelled.ids[m["key"]]: m
            for m in labelled.memories
            if not m.get("superseded_by") and m["key"] in labelled.ids
        }
        for user in labelled.users:
            for project in user["projects"]:
                principal = principal_of(labelled, user["key"], project)
                result = service.context(
                    principal,
                    session_id=f"benchmark-start-{uuid.uuid4()}",
                    event="session_start",
                    client="benchmark",
                )
                sessions += 1
                tokens.append(result["estimated_tokens"])
                injected.update(m["category"] for m in result["memories"])
                with memory.pool.connection() as conn:
                    candidates = store.start_candidates(
                        conn, principal, START_ORDER, START_CANDIDATES
                    )
                    conn.rollback()
                seen.update(c.category for c in candidates)
                order = {name: i for i, name in enumerate(START_ORDER)}
                core = {
                    c.id for c in candidates if current.get(c.id, {}).get("importance") == "core"
                }
                old = sorted(
                    candidates,
                    key=lambda c: (c.id not in core, order.get(c.category, len(order))),
                )
                chosen, _, _ = fit(old, set(), budget)
                before.update(c.category for c, _ in chosen)
    return {
        "sessions": sessions,
        "tokens_per_injection": percentiles(tokens) if tokens else None,
        "categories": {
            category: {
                "visible": seen[category],
                "injected_by_turns": injected[category],
                "injected_before": before[category],
            }
            for category in [*START_ORDER, *sorted(set(seen) - set(START_ORDER))]
            if seen[category]
        },
    }


def nonsense(memory: MemoryService, sets: Sequence[LabelledSet]) -> dict[str, Any]:
    """NONSENSE asked of every user's store in each project: how many memories recall returns
    (its default floor), against no floor."""
    returned = unfloored = asked = 0
    for labelled in sets:
        for user in labelled.users:
            for project in user["projects"][:1]:
                principal = principal_of(labelled, user["key"], project)
                for query in NONSENSE:
                    asked += 1
                    found = memory.recall(principal, query, record_use=False)
                    returned += len(found["memories"])
                    unfloored += len(
                        memory.recall(principal, query, record_use=False, min_relevance=0)[
                            "memories"
                        ]
                    )
    return {"queries": asked, "returned": returned, "returned_without_floor": unfloored}


# -- the run --------------------------------------------------------------------------------


# A smoke run keeps every SMOKE_BACKGROUND-th memory that answers none of its queries.
SMOKE_BACKGROUND = 4


def _smoke_memories(labelled: LabelledSet) -> list[dict[str, Any]]:
    """The memories the sliced queries need (their answers and what those supersede or are
    superseded by) and a share of the rest as background."""
    needed = {key for query in labelled.queries for key in query["relevant"]}
    for memory in labelled.memories:
        if memory.get("superseded_by") in needed or memory["key"] in needed:
            needed |= {memory["key"], memory.get("superseded_by") or memory["key"]}
    return [
        m
        for i, m in enumerate(labelled.memories)
        if m["key"] in needed or i % SMOKE_BACKGROUND == 0
    ]


def run(
    paths: Sequence[Path] | None = None,
    evaluate_only: bool = False,
    global_means: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    chosen_paths = [p for p in (paths or SETS) if p.exists()]
    sets = [read_set(path, global_means) for path in chosen_paths]
    if limit:  # the smoke test: a slice of each set's queries, with their answers
        for labelled in sets:
            labelled.queries = labelled.queries[:: max(1, len(labelled.queries) // limit)][:limit]
            labelled.memories = _smoke_memories(labelled)
    embedder = CachedEmbeddings()
    settings = Settings()
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            config = memory_config(settings, embedder.model_name)
            memory = MemoryService(pool, embedder, config)
            for labelled in sets:
                load(memory, labelled)
            embedder.save()
            injected, recalled = collect(memory, embedder, sets)
            embedder.save()
            shipped = config.relevance
            result: dict[str, Any] = {
                "model": LOCAL_MODEL_NAME,
                "sets": {
                    s.name: {
                        "memories": len(s.memories),
                        "queries": len(s.queries),
                        "injectable_prompts": sum(p.set == s.name for p in injected),
                        "no_answer_prompts": sum(
                            p.set == s.name and not p.relevant for p in injected
                        ),
                        "memories_refused_on_save": s.refused,
                        "global_means": s.global_means,
                    }
                    for s in sets
                },
                "target_precision": TARGET_PRECISION,
                "recall_tolerance": RECALL_TOLERANCE,
                "shipped": _model_json(shipped),
                "evaluate_only": evaluate_only,
            }
            if not evaluate_only:
                result["cross_validated"] = cross_validate(injected, recalled)
                result["fitted_on_all"] = _model_json(calibrate_on(injected, recalled))
            result["shipped_on_these_sets"] = {
                "injection": scores(injection_counts(shipped, injected, shipped.injection_floor)),
                "by_regime": by_regime(shipped, injected, shipped.injection_floor),
                "recall": {
                    "with_floor": recall_quality(shipped, recalled, shipped.recall_floor),
                    "no_floor": recall_quality(shipped, recalled, 0.0),
                },
                "cosine_floor_before": cosine_before(injected),
                "cosine_floor_before_by_set": {
                    s.name: cosine_before([p for p in injected if p.set == s.name]) for s in sets
                },
                "wrong_verdicts": wrong_verdicts(shipped, injected, shipped.injection_floor),
            }
            injecting = injection_config(settings, embedder.model_name)
            service = InjectionService(pool, embedder, injecting)
            started = time.perf_counter()
            chosen: dict[str, list[str]] = {}
            for labelled in sets:
                chosen |= prompt_injections(service, labelled, injected)
            result["product"] = {
                "injection": product_tally(sets, injected, chosen),
                "wall_ms_per_prompt": round(
                    (time.perf_counter() - started) * 1000 / max(1, len(injected)), 2
                ),
                "session_start": session_starts(service, memory, sets, injecting.budget_tokens),
                "nonsense": nonsense(memory, sets),
            }
            held: dict[str, tuple[list[str], list[str]]] = {}
            for labelled in sets:
                held |= in_context(service, labelled, injected)
            result["product"]["in_context"] = context_tally(sets, injected, held)
        finally:
            pool.close()
    name = "injection" if not paths else "injection-" + "-".join(s.name for s in sets)
    write_result(name, result, markdown(result))
    return result


def _model_json(model: relevance.RelevanceModel) -> dict[str, float]:
    return {
        "intercept": model.intercept,
        "similarity": model.similarity,
        "coverage": model.coverage,
        "gap": model.gap,
        "recall_floor": model.recall_floor,
        "injection_floor": model.injection_floor,
        "wordless_similarity": model.wordless_similarity,
    }


def _pr(row: dict[str, Any]) -> str:
    return (
        f"{row['precision']} | {row['recall']} | {row['injected']} | "
        f"{row['relevant_injected']} / {row['relevant']} | "
        f"{row['no_answer_injected_into']} / {row['no_answer_prompts']}"
    )


def markdown(result: dict[str, Any]) -> str:
    shipped = result["shipped"]
    sets = ", ".join(
        f"`{name}` ({s['memories']} memories, {s['injectable_prompts']} prompts, "
        f"{s['no_answer_prompts']} with no answer)"
        for name, s in result["sets"].items()
    )
    lines = [
        "# Injection and recall relevance",
        "",
        f"Model `{result['model']}`. Sets: {sets}. Relevance = logistic(intercept + a * "
        "similarity + b * coverage + c * gap). Shipped (emergent_memory/memory/relevance.py): "
        f"`{json.dumps(shipped)}`. Injection criterion: the lowest floor with pooled precision "
        f">= {result['target_precision']}; recall criterion: the highest floor keeping hit@10 "
        f"and MRR@10 within {result['recall_tolerance']} of no floor.",
        "",
        "| | precision | recall | injected | relevant injected / relevant | "
        "no-answer prompts injected into |",
        "|---|---|---|---|---|---|",
    ]
    if "cross_validated" in result:
        cross = result["cross_validated"]
        lines.append(f"| 5-fold cross-validated (held out, pooled) | {_pr(cross['injection'])} |")
    on_sets = result["shipped_on_these_sets"]
    lines.append(f"| the shipped model on these sets | {_pr(on_sets['injection'])} |")
    lines.append(
        f"| before: cosine >= {COSINE_FLOOR_BEFORE} | {_pr(on_sets['cosine_floor_before'])} |"
    )
    lines.append(
        f"| the product end to end (InjectionService) | {_pr(result['product']['injection'])} |"
    )
    for name, row in on_sets["cosine_floor_before_by_set"].items():
        shipped_row = on_sets["by_regime"][f"set: {name}"]
        lines.append(f"| `{name}`: the shipped model | {_pr(shipped_row)} |")
        lines.append(f"| `{name}`: before, cosine >= {COSINE_FLOOR_BEFORE} | {_pr(row)} |")
    if "cross_validated" in result:
        cross = result["cross_validated"]
        lines += [
            "",
            f"Fitted on all prompts: `{json.dumps(result['fitted_on_all'])}`.",
            "",
            "| fold | prompts | weights (intercept, similarity, coverage, gap) | injection floor "
            "| recall floor | held out: precision | recall | no-answer injected into |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in cross["folds"]:
            test = row["test"]
            lines.append(
                f"| {row['fold']} | {row['prompts']} | {row['weights']} | "
                f"{row['injection_floor']} | {row['recall_floor']} | {test['precision']} | "
                f"{test['recall']} | {test['no_answer_injected_into']} / "
                f"{test['no_answer_prompts']} |"
            )
        lines += [
            "",
            "Held out, per regime (each prompt judged by the model of the folds it was held "
            "out of):",
            "",
            "| regime | prompts | precision | recall | injected | relevant injected / relevant "
            "| no-answer injected into |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, row in cross["by_regime"].items():
            lines.append(f"| {name} | {row['prompts']} | {_pr(row)} |")
        rec = cross["recall"]
        lines += [
            "",
            "Recall's floor, held out (queries with their filters, top 10):",
            "",
            "| | hit@10 | MRR@10 | relevant kept | returned per query | no-answer queries "
            "emptied |",
            "|---|---|---|---|---|---|",
        ]
        for name in ("no_floor", "with_floor"):
            row = rec[name]
            lines.append(
                f"| {name.replace('_', ' ')} | {row['hit@10']} | {row['mrr@10']} | "
                f"{row['relevant_kept']} | {row['returned_per_query']} | "
                f"{row['no_answer_emptied']} / {row['no_answer_queries']} |"
            )
    lines += [
        "",
        "The shipped model on these sets, per regime:",
        "",
        "| regime | prompts | precision | recall | injected | relevant injected / relevant "
        "| no-answer injected into |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in on_sets["by_regime"].items():
        lines.append(f"| {name} | {row['prompts']} | {_pr(row)} |")
    rec = on_sets["recall"]
    lines += [
        "",
        "| recall, shipped | hit@10 | MRR@10 | relevant kept | returned per query | "
        "no-answer queries emptied |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("no_floor", "with_floor"):
        row = rec[name]
        lines.append(
            f"| {name.replace('_', ' ')} | {row['hit@10']} | {row['mrr@10']} | "
            f"{row['relevant_kept']} | {row['returned_per_query']} | "
            f"{row['no_answer_emptied']} / {row['no_answer_queries']} |"
        )
    product = result["product"]
    start = product["session_start"]
    lines += [
        "",
        f"Nonsense queries ({', '.join(NONSENSE)}) asked of each user's store: "
        f"{product['nonsense']['returned']} memories returned in {product['nonsense']['queries']} "
        f"recalls ({product['nonsense']['returned_without_floor']} without a floor). "
        f"Another user's memories injected: {product['injection']['leaks']}. Wall time per "
        f"prompt injection: {product['wall_ms_per_prompt']} ms.",
        "",
        f"SessionStart ({start['sessions']} sessions, budget 500): tokens p50 "
        f"{start['tokens_per_injection']['p50']:.0f}.",
        "",
        "| category | visible (summed) | injected by turns | injected before (corrections first) |",
        "|---|---|---|---|",
    ]
    for category, row in start["categories"].items():
        lines.append(
            f"| {category} | {row['visible']} | {row['injected_by_turns']} | "
            f"{row['injected_before']} |"
        )
    held = product.get("in_context")
    if held:  # results written before it was measured have none
        lines += [
            "",
            "What the agent holds when it answers (one session per prompt: SessionStart, then "
            "the prompt; the product injects a memory once per session):",
            "",
            "| | relevant held / relevant | recall | memories per prompt |",
            "|---|---|---|---|",
            f"| from SessionStart | {held['relevant_at_start']} / {held['relevant']} | "
            f"{held['recall_at_start']} | {held['memories_at_start_per_prompt']} |",
            f"| added by the prompt | {held['relevant_added_by_prompt']} / {held['relevant']} | "
            f"- | {held['memories_added_per_prompt']} |",
            f"| **in context** | {held['relevant_at_start'] + held['relevant_added_by_prompt']} / "
            f"{held['relevant']} | **{held['recall_in_context']}** | - |",
            "",
            f"No-answer prompts the prompt's injection added to, after SessionStart: "
            f"{held['no_answer_prompts_added_to']} of {held['no_answer_prompts']}.",
        ]
    wrong = on_sets["wrong_verdicts"]
    lines += [
        "",
        f"Every wrong verdict of the shipped model ({len(wrong)}):",
        "",
        "| prompt | memory | relevance | verdict | kind |",
        "|---|---|---|---|---|",
    ]
    for row in wrong:
        value = "-" if row["relevance"] is None else row["relevance"]
        lines.append(
            f"| {row['prompt']} | {row['memory']} | {value} | {row['verdict']} | {row['kind']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        action="append",
        type=Path,
        help="a labelled set in the retrieval.json format (repeat for several); default: "
        "the shipped sets",
    )
    parser.add_argument(
        "--data-only-eval",
        action="store_true",
        help="no fitting or calibration: the shipped weights and floors, evaluated once",
    )
    parser.add_argument(
        "--global-means",
        choices=("user", "everyone"),
        default=None,
        help="what a memory of scope global is (default: detected from the file)",
    )
    args = parser.parse_args()
    result = run(args.data, args.data_only_eval, args.global_means)
    print(markdown(result))


if __name__ == "__main__":
    main()
