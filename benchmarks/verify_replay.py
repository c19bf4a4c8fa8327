"""verify_memory's rules replayed on fixed candidates: what a change of the rules does to every
spent held-out claim, without the noise of a fresh store.

A run of the held-out sets through the service (benchmarks/verify.py's `holdout`) answers a
few claims differently from one run to the next with the same code (which memories recall
brings back at the margin, and which ones save kept or linked as conflicts), so two such runs
cannot tell a change of a few answers from chance. This records, once, what verify saw for
every claim: each candidate's content and similarity, its clause closest to the claim (with
that clause's similarity) and its conflict flags; then judges those fixed candidates with the
rules of the code on the path through the service's own steps (verify_clauses.answer_by_rules,
the learned confirmation, then the outranked side of a conflict), so two versions of the rules
compare claim by claim.

    python -m benchmarks.verify_replay record records.json     # about 15 minutes, all sets
    python -m benchmarks.verify_replay replay records.json a.json
    python -m benchmarks.verify_replay diff a.json b.json       # the answers that changed

`record` takes `--only verify_holdout_42.json,...`; the records are JSON (about 40 MB for
every set: keep them out of the repository). The LLM judge is off, as in the held-out runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks import verify as bench
from benchmarks.common import DATA, CachedEmbeddings, bench_database
from emergent_memory.app import VERIFY_POLICIES
from emergent_memory.db.pool import create_pool
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import MemoryService, verify_learned
from emergent_memory.memory import verify as service
from emergent_memory.memory.verify_rules import Answer, Clause, read_pair

Record = dict[str, Any]  # text, pairs, clauses, flags


def _policy() -> Any:
    return replace(VERIFY_POLICIES[LOCAL_MODEL_NAME], judge_bands=())


def record(
    path: Path, only: Sequence[str] = (), limit: int | None = None
) -> dict[str, dict[str, Record]]:
    """Run every held-out set (or `only` those; the first `limit` claims of each) through
    VerifyService.verify and keep, per set and claim text, what the rules were given and the
    service's answer."""
    embedder = CachedEmbeddings()
    records: dict[str, dict[str, Record]] = {}
    current: Record = {}
    state = {"file": ""}
    by_rules, stale = service.answer_by_rules, service._stale

    def recording_rules(policy: Any, text: str, pairs: Any, features: Any, closest: Any) -> Answer:
        # every candidate's closest clause, none left out, so that the replay leaves out
        # those its own rules find to conflict (None each when verify reads no clause)
        contents = [content for content, _ in pairs]
        found = closest(contents) if closest is not None else None
        current.clear()
        current.update(
            text=text,
            pairs=list(pairs),
            clauses=[
                None if c is None else (c.similarity, c.text) for c in found or [None] * len(pairs)
            ],
        )
        if found is None:  # verify reads no clause (no vectors, or the embedder failed)
            return by_rules(policy, text, pairs, features, None)

        def recorded(wanted: list[str]) -> list[Clause | None]:
            # the clauses found above, each memory's read apart from the others', for those
            # the rules still ask about (the embedder called once per claim, not twice)
            return [c if want else None for want, c in zip(wanted, found, strict=True)]

        return by_rules(policy, text, pairs, features, recorded)

    def recording_stale(answer: Answer, candidates: Sequence[dict[str, Any]]) -> Answer:
        current["flags"] = [
            (m.get("conflict"), list(m.get("conflicts_with") or ())) for m in candidates
        ]
        answered = stale(answer, candidates)
        current["verdict"] = answered.verdict
        records.setdefault(state["file"], {})[current["text"]] = dict(current)
        return answered

    files = [name for name in bench.HOLDOUTS if not only or name in only]
    with (
        mock.patch.object(service, "answer_by_rules", recording_rules),
        mock.patch.object(service, "_stale", recording_stale),
        bench_database() as url,
    ):
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            memory = MemoryService(pool, embedder, bench.memory_config())
            for name in files:
                state["file"] = name
                bench.holdout(memory, _policy(), limit, name)
                print(f"{name}: {len(records.get(name, {}))} claims", flush=True)
            embedder.save()
        finally:
            pool.close()
    path.write_text(json.dumps(records, ensure_ascii=False))
    return records


def judge(entry: Record, *, learned: bool = True) -> Answer:
    """The answer for one recorded claim, through the service's own steps (the rules, the
    learned confirmation unless `learned` is false, the outranked side of a conflict)."""
    answer = rules(entry)
    if learned:
        answer = verify_learned.learned(_policy(), entry["text"], entry["pairs"], answer)
    candidates = [{"conflict": flag, "conflicts_with": ids} for flag, ids in entry["flags"]]
    return service._stale(answer, candidates)


def rules(entry: Record) -> Answer:
    """The rules' answer for one recorded claim (verify_clauses.answer_by_rules)."""
    text, pairs = entry["text"], entry["pairs"]
    recorded = entry["clauses"]

    def closest(contents: list[str]) -> list[Clause | None]:
        return [
            None if not content or c is None else Clause(c[0], read_pair(c[1], text), c[1])
            for content, c in zip(contents, recorded, strict=True)
        ]

    features = [read_pair(content, text) for content, _ in pairs]
    return service.answer_by_rules(_policy(), text, pairs, features, closest)


def replay(records_path: Path, out: Path) -> dict[str, Any]:
    """Every recorded claim judged by the rules on the path; writes and returns its answers
    (keyed "set/claim key") with the totals."""
    records: dict[str, dict[str, Record]] = json.loads(records_path.read_text())
    answers: dict[str, dict[str, Any]] = {}
    for name, entries in records.items():
        data = json.loads((DATA / name).read_text())
        for claim in data["claims"]:
            entry = entries.get(claim["claim"])
            if entry is None:
                continue
            answer = judge(entry)
            answers[f"{name}/{claim['key']}"] = {
                "label": claim["verdict"],
                "kind": claim.get("kind"),
                "claim": claim["claim"],
                "verdict": answer.verdict,
                "why": answer.why,
            }
    totals = {
        "claims": len(answers),
        "right": sum(1 for a in answers.values() if a["verdict"] == a["label"]),
        "conflicts_confirmed": sum(
            1 for a in answers.values() if a["label"] == "conflict" and a["verdict"] == "confirmed"
        ),
    }
    out.write_text(json.dumps({"totals": totals, "answers": answers}, ensure_ascii=False))
    return totals


def diff(before_path: Path, after_path: Path) -> list[str]:
    """The claims answered differently by two replays: gained (now right), lost (was
    right) or other (wrong both times), with counts."""
    before = json.loads(before_path.read_text())["answers"]
    after = json.loads(after_path.read_text())["answers"]
    lines, counts = [], Counter[str]()
    for key in sorted(before.keys() & after.keys()):
        was, now = before[key], after[key]
        if was["verdict"] == now["verdict"]:
            continue
        label = was["label"]
        change = (
            "gained" if now["verdict"] == label else "lost" if was["verdict"] == label else "other"
        )
        counts[change] += 1
        lines.append(
            f"{change} {key} ({was['kind']}) labelled {label}: {was['verdict']} -> "
            f"{now['verdict']}: {was['claim']}"
        )
    lines.append(", ".join(f"{n} {change}" for change, n in sorted(counts.items())) or "no change")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.verify_replay")
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="run the held-out sets, keep the candidates")
    recording.add_argument("records", type=Path)
    recording.add_argument("--only", default="", help="comma-separated set file names")
    recording.add_argument("--limit", type=int, help="the first LIMIT claims of each set")
    replaying = commands.add_parser("replay", help="judge the recorded candidates")
    replaying.add_argument("records", type=Path)
    replaying.add_argument("out", type=Path)
    comparing = commands.add_parser("diff", help="the answers two replays differ on")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        only = [name for name in args.only.split(",") if name]
        unknown = [name for name in only if name not in bench.HOLDOUTS]
        if unknown:
            parser.error(f"not a held-out verify set: {', '.join(unknown)}")
        record(args.records, only, args.limit)
    elif args.command == "replay":
        print(json.dumps(replay(args.records, args.out)))
    else:
        print("\n".join(diff(args.before, args.after)))


if __name__ == "__main__":
    main(sys.argv[1:])
