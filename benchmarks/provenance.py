"""Capture's provenance check (memory/provenance.py, through extraction.not_users_word): on
labelled proposals, is a proposal the user's word when it is, and not when its words came from
a tool result or the agent?

Each case is a short conversation (turns with roles user, assistant, tool), one proposal
(content, category, source, the turns it cites) and a label: `user` (what the user typed or
agreed to, restated, paraphrased or translated) or `not_user` (it cites a user turn, but its
content or a material detail of it comes only from a tool result or the assistant). The rule
says user-backed or not; nothing else of capture runs (no model, no database).

    python -m benchmarks.run --only provenance
    python -m benchmarks.provenance benchmarks/data/provenance_holdout.json   # one file

Reported: honest proposals kept as the user's word (the target is at least 0.95), poisoned ones
caught, by regime (agent, chat) and by language (English or not), and every wrong verdict.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, write_result
from emergent_memory.memory.capture_text import Turn
from emergent_memory.memory.extraction import not_users_word

SETS = ("provenance_labelled.json", "provenance_holdout.json")


def verdicts(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case with what the rule says: `predicted` user or not_user, and why not."""
    results = []
    for case in cases:
        turns = [
            Turn(index, turn["role"], turn["text"]) for index, turn in enumerate(case["turns"])
        ]
        evidence = {turn for turn in case["proposal"]["evidence_turns"] if 0 <= turn < len(turns)}
        why = not_users_word(case["proposal"]["content"], turns, evidence)
        results.append(
            {
                "id": case["id"],
                "regime": case["regime"],
                "language": case["language"],
                "label": case["label"],
                "predicted": "user" if why is None else "not_user",
                "why": why,
            }
        )
    return results


def scores(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Honest kept and poisoned caught, overall and by regime and language group."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        groups["all"].append(result)
        groups[result["regime"]].append(result)
        groups["english" if result["language"] == "en" else "other languages"].append(result)
    table = {}
    for name, members in groups.items():
        honest = [r for r in members if r["label"] == "user"]
        poisoned = [r for r in members if r["label"] == "not_user"]
        table[name] = {
            "honest_kept": f"{sum(r['predicted'] == 'user' for r in honest)}/{len(honest)}",
            "poisoned_caught": (
                f"{sum(r['predicted'] == 'not_user' for r in poisoned)}/{len(poisoned)}"
            ),
        }
    return table


def measure(path: Path) -> dict[str, Any]:
    cases = json.loads(path.read_text())
    results = verdicts(cases)
    honest = [r for r in results if r["label"] == "user"]
    kept = sum(r["predicted"] == "user" for r in honest)
    return {
        "set": path.name,
        "cases": len(results),
        "honest_kept_rate": round(kept / len(honest), 3) if honest else None,
        "scores": scores(results),
        "wrong": [r for r in results if r["predicted"] != r["label"]],
    }


def markdown(measured: Sequence[dict[str, Any]], cases: dict[str, dict[str, Any]]) -> str:
    lines = ["# Capture provenance check", ""]
    for result in measured:
        lines += [
            f"## {result['set']} ({result['cases']} cases)",
            "",
            "| group | honest kept as the user's word | poisoned caught |",
            "|---|---|---|",
        ]
        lines += [
            f"| {group} | {row['honest_kept']} | {row['poisoned_caught']} |"
            for group, row in result["scores"].items()
        ]
        lines += ["", "Wrong verdicts:", ""]
        for wrong in result["wrong"]:
            case = cases[wrong["id"]]
            lines.append(
                f"- `{wrong['id']}` ({wrong['regime']}, {wrong['language']}) label "
                f"{wrong['label']}, said {wrong['predicted']}"
                f"{': ' + wrong['why'] if wrong['why'] else ''}. Proposal: "
                f"{case['proposal']['content']!r}"
            )
        lines.append("")
    return "\n".join(lines)


def run(paths: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    chosen = list(paths) if paths else [DATA / name for name in SETS if (DATA / name).exists()]
    measured = [measure(path) for path in chosen]
    cases = {case["id"]: case for path in chosen for case in json.loads(path.read_text())}
    write_result("provenance", {"sets": measured}, markdown(measured, cases))
    return measured


if __name__ == "__main__":
    for result in run([Path(arg) for arg in sys.argv[1:]] or None):
        print(result["set"], json.dumps(result["scores"]), f"wrong: {len(result['wrong'])}")
