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

Then the product, end to end: the set's memories saved through the memory service (each
user's as that user, as benchmarks/quality.py loads them, so that every label holds), and for
each of the same prompts the real InjectionService (the configuration emergent_memory/app.py
builds: the calibrated floor, the default budget of 500 tokens) injecting for the event
"prompt" in a fresh session: the share of injected memories that are relevant (precision),
the share of relevant ones injected (recall), the tokens used. Baselines in the same run, on
the same database: the product's hybrid recall's top k (k = 1, 3, 5) with no floor and no
budget, and its 20 candidates above the floor with no budget. And SessionStart: what one
injection holds for each user in each of their projects (categories, tokens, how much of what
the user sees).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pgvector import Vector

from benchmarks import quality
from benchmarks.common import DATA, CachedEmbeddings, bench_database, percentiles, write_result
from emergent_memory.app import injection_config
from emergent_memory.db.pool import create_pool
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import MemoryConfig, MemoryService, store
from emergent_memory.memory.injection import (
    _WORD,  # the words the product counts in a prompt
    PROMPT_CANDIDATES,
    Candidate,
    InjectionConfig,
    InjectionService,
    fit,
)
from emergent_memory.settings import Settings

TARGET_PRECISION = 0.8
FOLDS, SEED = 5, 20240611
# Floors tried, lowest first: 0.20, 0.21, ... 0.90.
FLOORS = [round(0.20 + step / 100, 2) for step in range(71)]
# Kinds whose labels assume a recall filter that injection does not apply.
FILTERED_KINDS = frozenset({"category_filter", "scope_filter"})


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


def prompts_of(queries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The queries that are prompts injection would answer, and how many were left out why."""
    min_words = Settings.model_fields["injection_min_prompt_words"].default
    left_out: Counter[str] = Counter()
    kept = []
    for query in queries:
        if query["kind"] in FILTERED_KINDS:
            left_out["labels assume a recall filter"] += 1
        elif len(_WORD.findall(query["query"])) < min_words:
            left_out[f"fewer than {min_words} words (never injected into)"] += 1
        else:
            kept.append(query)
    return kept, dict(left_out)


def labelled_prompts(embedder: CachedEmbeddings, limit: int | None = None) -> Labelled:
    data = json.loads((DATA / "retrieval.json").read_text())
    memories = [m for m in data["memories"] if not m.get("superseded_by")]
    queries, left_out = prompts_of(data["queries"])
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
        left_out=left_out,
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


# -- the product, end to end ----------------------------------------------------------------

TOP_K = (1, 3, 5)
# Candidates the baselines read from the product's recall: as many as the injection reads.
CANDIDATES = PROMPT_CANDIDATES


def tally(
    devset: quality.DevSet,
    prompts: Sequence[dict[str, Any]],
    chosen: dict[str, list[Candidate]],
) -> dict[str, Any]:
    """Pooled precision and recall of what was chosen per prompt; the tokens it costs as an
    injection (the product's estimator and text); leaks: another user's memories (must be 0)."""
    injected = hits = relevant = leaks = 0
    tokens: list[float] = []
    for prompt in prompts:
        memories = chosen[prompt["key"]]
        wanted = {devset.ids[key] for key in prompt["relevant"]}
        injected += len(memories)
        hits += sum(memory.id in wanted for memory in memories)
        relevant += len(wanted)
        for memory in memories:
            owner = devset.owner[memory.id]
            leaks += owner["scope"] != "global" and owner["user"] != prompt["user"]
        if memories:
            tokens.append(fit(memories, set(), 10**9)[2])
    return scores({"injected": injected, "relevant_injected": hits, "relevant": relevant}) | {
        "prompts": len(prompts),
        "prompts_injected_into": len(tokens),
        "memories_per_injection": round(injected / len(tokens), 2) if tokens else 0.0,
        "tokens_per_injection": percentiles(tokens) if tokens else None,
        "leaks": leaks,
    }


def by_kind(
    devset: quality.DevSet,
    prompts: Sequence[dict[str, Any]],
    chosen: dict[str, list[Candidate]],
) -> dict[str, dict[str, Any]]:
    kinds = sorted({p["kind"] for p in prompts})
    return {
        kind: tally(devset, [p for p in prompts if p["kind"] == kind], chosen) for kind in kinds
    }


def prompt_injections(
    service: InjectionService, devset: quality.DevSet, prompts: Sequence[dict[str, Any]]
) -> tuple[dict[str, list[Candidate]], list[float], int]:
    """The product's injection for each prompt, each in a fresh session; its wall times; the
    largest estimated tokens it reported."""
    chosen: dict[str, list[Candidate]] = {}
    times: list[float] = []
    reported = 0
    for prompt in prompts:
        principal = quality.principal_of(prompt["user"], prompt["project"])
        start = time.perf_counter()
        result = service.context(
            principal,
            session_id=f"benchmark-{prompt['key']}-{uuid.uuid4()}",
            event="prompt",
            client="benchmark",
            prompt=prompt["query"],
        )
        times.append((time.perf_counter() - start) * 1000)
        reported = max(reported, result["estimated_tokens"])
        chosen[prompt["key"]] = [
            Candidate(uuid.UUID(m["id"]), m["content"], m["category"]) for m in result["memories"]
        ]
    return chosen, times, reported


Recalled = dict[str, list[tuple[Candidate, float | None]]]


def recalled(
    service: MemoryService,
    embedder: CachedEmbeddings,
    config: InjectionConfig,
    prompts: Sequence[dict[str, Any]],
) -> Recalled:
    """The product's hybrid recall of each prompt (the injection's own call, CANDIDATES
    long): the candidates in its order, each with its cosine similarity to the prompt."""
    vectors = embedder.vectors([p["query"] for p in prompts], "q")
    found: Recalled = {}
    with service.pool.connection() as conn:
        for prompt, vector in zip(prompts, vectors, strict=True):
            rows = store.recall(
                conn,
                quality.principal_of(prompt["user"], prompt["project"]),
                query=prompt["query"],
                embedding=Vector(vector.tolist()),
                model=embedder.model_name,
                category=None,
                scope=None,
                limit=CANDIDATES,
                **config.recall_tuning,
            )
            conn.rollback()
            found[prompt["key"]] = [
                (Candidate(row.id, row.content, row.category), row.similarity) for row in rows
            ]
    return found


def baselines(found: Recalled, floor: float) -> dict[str, dict[str, list[Candidate]]]:
    """The recall's top k with no floor and no budget; its candidates above the floor with no
    budget."""
    chosen: dict[str, dict[str, list[Candidate]]] = {f"top {k}": {} for k in TOP_K}
    chosen["floor, no budget"] = {}
    for key, rows in found.items():
        for k in TOP_K:
            chosen[f"top {k}"][key] = [candidate for candidate, _ in rows[:k]]
        chosen["floor, no budget"][key] = [
            candidate
            for candidate, similarity in rows
            if similarity is not None and similarity >= floor
        ]
    return chosen


# -- an alternative rule: the recall's first result from a lower floor --------------------------

FIRST_FLOORS = [round(0.20 + step / 100, 2) for step in range(41)]  # 0.20 .. 0.60
REST_FLOORS = [round(0.50 + step / 100, 2) for step in range(41)]  # 0.50 .. 0.90


def first_result_rule(
    devset: quality.DevSet, prompts: Sequence[dict[str, Any]], found: Recalled
) -> dict[str, Any]:
    """Cross-validates "the recall's first result from floor `first`, every other from floor
    `rest`" (first <= rest) like the single floor: on the training folds the pair of most
    recall at precision >= TARGET_PRECISION (ties: the higher floors), counted on the held-out
    fold. The hybrid rank carries what the similarity misses (a paraphrase's answer is often
    the first result with a similarity near 0.3)."""
    none = -2.0
    first_sim, first_rel, rest_sims, rest_rels, relevant = [], [], [], [], []
    for prompt in prompts:
        wanted = {devset.ids[key] for key in prompt["relevant"]}
        rows = [(none if s is None else s, c.id in wanted) for c, s in found[prompt["key"]]]
        first_sim.append(rows[0][0] if rows else none)
        first_rel.append(bool(rows and rows[0][1]))
        rest_sims.append(np.asarray([s for s, _ in rows[1:]]))
        rest_rels.append(np.asarray([r for _, r in rows[1:]], dtype=bool))
        relevant.append(len(wanted))
    firsts, rests = np.asarray(FIRST_FLOORS), np.asarray(REST_FLOORS)
    allowed = firsts[:, None] <= rests[None, :]

    def grid(members: list[int]) -> tuple[np.ndarray, np.ndarray, int]:
        """Injected and relevant injected for every (first, rest) pair; relevant in all."""
        s1 = np.asarray([first_sim[i] for i in members])
        r1 = np.asarray([first_rel[i] for i in members], dtype=bool)
        taken = s1[None, :] >= firsts[:, None]
        injected_first, hits_first = taken.sum(axis=1), (taken & r1).sum(axis=1)
        sims = np.concatenate([rest_sims[i] for i in members] + [np.zeros(0)])
        rels = np.concatenate([rest_rels[i] for i in members] + [np.zeros(0, dtype=bool)])
        above = sims[None, :] >= rests[:, None]
        injected_rest, hits_rest = above.sum(axis=1), (above & rels).sum(axis=1)
        injected = injected_first[:, None] + injected_rest[None, :]
        hits = hits_first[:, None] + hits_rest[None, :]
        return injected, hits, sum(relevant[i] for i in members)

    def choose_pair(members: list[int]) -> tuple[int, int]:
        injected, hits, _ = grid(members)
        precise = allowed & (injected > 0) & (hits >= TARGET_PRECISION * injected)
        if not precise.any():
            return len(FIRST_FLOORS) - 1, len(REST_FLOORS) - 1
        best = hits[precise].max()
        # ties go to the higher floors: the last such pair in row-major order
        options = np.argwhere(precise & (hits == best))
        i, j = max(map(tuple, options))
        return int(i), int(j)

    def counted(members: list[int], pair: tuple[int, int]) -> dict[str, int]:
        injected, hits, relevant_all = grid(members)
        i, j = pair
        return {
            "injected": int(injected[i, j]),
            "relevant_injected": int(hits[i, j]),
            "relevant": relevant_all,
        }

    everyone = list(range(len(prompts)))
    fold = folds([p["kind"] for p in prompts])
    per_fold, pooled = [], Counter[str]()
    for k in range(FOLDS):
        train = [i for i in everyone if fold[i] != k]
        test = [i for i in everyone if fold[i] == k]
        pair = choose_pair(train)
        result = counted(test, pair)
        pooled.update(result)
        per_fold.append(
            {
                "fold": k,
                "prompts": len(test),
                "first": FIRST_FLOORS[pair[0]],
                "rest": REST_FLOORS[pair[1]],
                "test": scores(result),
            }
        )
    pair = choose_pair(everyone)
    other_user = [i for i in everyone if prompts[i]["kind"] == "other_user"]
    return {
        "first": FIRST_FLOORS[pair[0]],
        "rest": REST_FLOORS[pair[1]],
        "in_sample": scores(counted(everyone, pair)),
        "cross_validated": scores(dict(pooled)),
        "folds": per_fold,
        "other_user_prompts_injected_into": sum(
            first_sim[i] >= FIRST_FLOORS[pair[0]]
            or bool((rest_sims[i] >= REST_FLOORS[pair[1]]).any())
            for i in other_user
        ),
        "other_user_prompts": len(other_user),
    }


def session_starts(service: InjectionService, devset: quality.DevSet) -> dict[str, Any]:
    """One SessionStart injection for each user in each of their projects, in a fresh session:
    what it holds, against what the user sees there."""
    current = [m for m in devset.memories if not m.get("superseded_by") and m["key"] in devset.ids]
    injected: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    tokens: list[float] = []
    counts: list[int] = []
    directing_seen = directing_injected = 0
    for user in devset.users:
        for project in user["projects"]:
            principal = quality.principal_of(user["key"], project)
            result = service.context(
                principal,
                session_id=f"benchmark-start-{uuid.uuid4()}",
                event="session_start",
                client="benchmark",
            )
            where = {"user": user["key"], "project": project}
            visible_here = [m for m in current if visible(m, where)]
            seen.update(m["category"] for m in visible_here)
            injected.update(m["category"] for m in result["memories"])
            tokens.append(result["estimated_tokens"])
            counts.append(len(result["memories"]))
            directing = {
                str(devset.ids[m["key"]])
                for m in visible_here
                if m["category"] in ("correction", "instruction")
            }
            directing_seen += len(directing)
            directing_injected += len(directing & {m["id"] for m in result["memories"]})
    return {
        "sessions": len(tokens),
        "memories_per_injection": percentiles(counts) if counts else None,
        "tokens_per_injection": percentiles(tokens) if tokens else None,
        "categories_injected": dict(injected.most_common()),
        "categories_visible": dict(seen.most_common()),
        "corrections_and_instructions": {
            "visible": directing_seen,
            "injected": directing_injected,
        },
    }


def product(embedder: CachedEmbeddings, limit: int | None = None) -> dict[str, Any]:
    devset = quality.DevSet(limit)
    prompts, left_out = prompts_of(devset.queries)
    config = injection_config(Settings(), embedder.model_name)
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            # the set says what supersedes what: no dedup while loading
            memory = MemoryService(pool, embedder, MemoryConfig(dedup_threshold=2.0))
            quality.load(memory, devset)
            embedder.save()
            service = InjectionService(pool, embedder, config)
            chosen, times, reported = prompt_injections(service, devset, prompts)
            found = recalled(memory, embedder, config, prompts)
            starts = session_starts(service, devset)
        finally:
            pool.close()
    return {
        "floor": config.relevance_floor,
        "budget_tokens": config.budget_tokens,
        "memories": len(devset.ids),
        "left_out": left_out,
        "injection": tally(devset, prompts, chosen)
        | {
            "largest_reported_tokens": reported,
            "wall_ms": percentiles(times),
            "by_kind": by_kind(devset, prompts, chosen),
        },
        "baselines": {
            name: tally(devset, prompts, picked)
            for name, picked in baselines(found, config.relevance_floor).items()
        },
        "first_result_rule": first_result_rule(devset, prompts, found),
        "session_start": starts,
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
        "product": product(embedder, limit),
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
    return "\n".join(lines + product_markdown(result["product"]))


def _tokens(row: dict[str, Any]) -> str:
    spread = row["tokens_per_injection"]
    return "-" if spread is None else f"{spread['p50']:.0f} / {spread['mean']:.0f}"


def product_markdown(result: dict[str, Any]) -> list[str]:
    injection = result["injection"]
    left_out = ", ".join(f"{n} {why}" for why, n in result["left_out"].items()) or "none"
    lines = [
        "",
        "## What the product injects on a prompt",
        "",
        f"The set's {result['memories']} memories saved through the memory service (each "
        f"user's as that user); {injection['prompts']} prompts (left out as above: "
        f"{left_out}), each as its user in its project, in a fresh session, through "
        f"InjectionService (event prompt, floor {result['floor']}, budget "
        f"{result['budget_tokens']} tokens). Baselines on the same database in the same run: "
        "the product's hybrid recall of the prompt (the injection's own call), its top k with "
        f"no floor and no budget, and its {CANDIDATES} candidates above the floor with no "
        "budget. Tokens: the product's estimate of the injected text (marker and header "
        "included), p50 / mean over the prompts that got any.",
        "",
        f"**Injection: precision {injection['precision']}, recall {injection['recall']}** "
        f"({injection['relevant_injected']} of {injection['relevant']} relevant memories "
        f"injected, {injection['injected']} injected into {injection['prompts_injected_into']} "
        f"of {injection['prompts']} prompts); largest injection "
        f"{injection['largest_reported_tokens']} tokens; another user's memories injected: "
        f"{injection['leaks']}. Wall time per injection (embedding, recall, session, log) p50 "
        f"{injection['wall_ms']['p50']:.1f} ms, p95 {injection['wall_ms']['p95']:.1f} ms.",
        "",
        "| what is injected | precision | recall | injected | prompts injected into | "
        "memories per injection | tokens p50 / mean |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [("**the product (floor and budget)**", injection)]
    rows += [(f"baseline: {name}", row) for name, row in result["baselines"].items()]
    for name, row in rows:
        lines.append(
            f"| {name} | {row['precision']} | {row['recall']} | {row['injected']} | "
            f"{row['prompts_injected_into']} | {row['memories_per_injection']} | "
            f"{_tokens(row)} |"
        )
    lines += [
        "",
        "The product by kind of prompt:",
        "",
        "| kind | prompts | injected into | injected | precision | recall |",
        "|---|---|---|---|---|---|",
    ]
    for kind, row in injection["by_kind"].items():
        lines.append(
            f"| {kind} | {row['prompts']} | {row['prompts_injected_into']} | {row['injected']} "
            f"| {row['precision']} | {row['recall']} |"
        )
    rule = result["first_result_rule"]
    cross, inside = rule["cross_validated"], rule["in_sample"]
    lines += [
        "",
        "An alternative rule, not shipped: the recall's first result from a lower floor, every "
        "other from a higher one (the hybrid rank knows what the similarity misses: a "
        "paraphrase's answer is often the recall's first result at a similarity far below "
        "the floor). Cross-validated the "
        f"same way: **first from {rule['first']:.2f}, the rest from {rule['rest']:.2f}**, "
        f"in sample precision {inside['precision']}, recall {inside['recall']}; held out "
        f"precision {cross['precision']}, recall {cross['recall']}. But it injects into "
        f"{rule['other_user_prompts_injected_into']} of the {rule['other_user_prompts']} "
        "prompts that have no answer (other_user), where the single floor injects into none; "
        "and this set's prompts nearly all have an answer, while most prompts of a coding "
        "session ask nothing of memory. Calibrating it needs a set of prompts without an "
        "answer first.",
        "",
        "| fold | prompts | first / rest chosen on the others | held out: precision | recall |",
        "|---|---|---|---|---|",
    ]
    for row in rule["folds"]:
        lines.append(
            f"| {row['fold']} | {row['prompts']} | {row['first']:.2f} / {row['rest']:.2f} | "
            f"{row['test']['precision']} | {row['test']['recall']} |"
        )
    start = result["session_start"]
    directing = start["corrections_and_instructions"]
    count, tokens = start["memories_per_injection"], start["tokens_per_injection"]
    lines += [
        "",
        "## What the product injects at session start",
        "",
        f"One SessionStart injection (budget {result['budget_tokens']}) for each user in each "
        f"of their projects ({start['sessions']} sessions): memories per injection p50 "
        f"{count['p50']:.0f} (mean {count['mean']:.1f}), tokens p50 {tokens['p50']:.0f} (max "
        f"{max(tokens['p99'], tokens['p95']):.0f}). Of the corrections and instructions "
        f"visible there, {directing['injected']} of {directing['visible']} were injected.",
        "",
        "| category | injected | visible (summed over the sessions) |",
        "|---|---|---|",
    ]
    for category, visible_count in start["categories_visible"].items():
        lines.append(
            f"| {category} | {start['categories_injected'].get(category, 0)} | {visible_count} |"
        )
    return lines


if __name__ == "__main__":
    print(markdown(run()))
