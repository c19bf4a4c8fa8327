"""The secret detector on a held-out set of issue 26's classes (login pairs without the word
"password", US SSNs and ITINs, card security codes) and look-alikes, written by someone who had
not read the detector: benchmarks/data/secrets_holdout.json.

    python -m benchmarks.secrets_holdout [path]

A positive is caught when a finding covers its whole secret (what capture removes and save
refuses), and touched when a finding only overlaps it; a benign text must give no finding.
Every wrong verdict is listed (the texts are invented values).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, write_result
from emergent_memory.memory.secrets import find_secrets


def verdict(case: dict[str, Any]) -> str:
    text, secret = case["text"], case["secret"]
    findings = find_secrets(text)
    if secret is None:
        return "clean" if not findings else "flagged"
    start = text.index(secret)
    end = start + len(secret)
    if any(f.start <= start and f.end >= end for f in findings):
        return "caught"
    if any(f.start < end and f.end > start for f in findings):
        return "touched"
    return "missed"


def run(path: Path = DATA / "secrets_holdout.json") -> dict[str, Any]:
    cases = json.loads(path.read_text())
    results = [{**case, "verdict": verdict(case)} for case in cases]
    table: dict[str, Counter[str]] = {}
    for result in results:
        table.setdefault(result["class"], Counter())[result["verdict"]] += 1
        group = "english" if result["language"] == "en" else "other languages"
        table.setdefault(f"{result['class']} ({group})", Counter())[result["verdict"]] += 1
    wrong = [r for r in results if r["verdict"] not in ("caught", "clean")]
    lines = [f"# Secret detector on {path.name} ({len(cases)} cases)", ""]
    lines += ["| class | caught / clean | touched | missed / flagged |", "|---|---|---|---|"]
    for name, counts in sorted(table.items()):
        good = counts["caught"] + counts["clean"]
        bad = counts["missed"] + counts["flagged"]
        lines.append(f"| {name} | {good} | {counts['touched']} | {bad} |")
    lines += ["", "Wrong verdicts:", ""]
    lines += [
        f"- `{r['id']}` ({r['class']}, {r['regime']}, {r['language']}): {r['verdict']}: "
        f"{json.dumps(r['text'], ensure_ascii=False)}"
        for r in wrong
    ]
    result = {
        "set": path.name,
        "cases": len(cases),
        "table": {k: dict(v) for k, v in table.items()},
        "wrong": wrong,
    }
    write_result("secrets_holdout", result, "\n".join(lines))
    return result


if __name__ == "__main__":
    measured = run(Path(sys.argv[1])) if len(sys.argv) > 1 else run()
    for name, counts in sorted(measured["table"].items()):
        print(name, counts)
    print("wrong:", len(measured["wrong"]))
