"""How `import --from claude-code` files a Claude Code `feedback` note: a correction or an
instruction (memory/auto_memory.py `says_correction`, a list of words and phrases).

The rule was written on the labelled cases in tests/test_auto_memory.py (FEEDBACK_CASES). It
is measured here on benchmarks/data/feedback_holdout.json, 120 notes written afterwards by a
helper who had read neither the rule nor those cases, per language regime (English, and text
in other languages, which the word list does not read). Every wrong verdict is listed.

    python -m benchmarks.feedback
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

from benchmarks.common import write_result
from emergent_memory.memory.auto_memory import says_correction

DATA = Path(__file__).parent / "data" / "feedback_holdout.json"


def run() -> dict[str, Any]:
    notes = json.loads(DATA.read_text(encoding="utf-8"))["notes"]
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    wrong = []
    for note in notes:
        regime = "English" if note["language"] == "en" else "other language"
        answered = "correction" if says_correction(note["text"]) else "instruction"
        counts[regime][f"{note['label']} -> {answered}"] += 1
        if answered != note["label"]:
            wrong.append({"key": note["key"], "label": note["label"], "text": note["text"]})
    result: dict[str, Any] = {"notes": len(notes), "regimes": counts, "wrong": wrong}
    lines = [f"# Feedback notes: correction or instruction ({len(notes)} held-out notes)", ""]
    for regime, counter in sorted(counts.items()):
        right = counter["correction -> correction"] + counter["instruction -> instruction"]
        total = sum(counter.values())
        lines.append(
            f"- {regime}: {right}/{total} right; corrections caught "
            f"{counter['correction -> correction']}/"
            f"{counter['correction -> correction'] + counter['correction -> instruction']}, "
            f"instructions called corrections {counter['instruction -> correction']}/"
            f"{counter['instruction -> instruction'] + counter['instruction -> correction']}"
        )
    lines += ["", "Every wrong verdict:", ""]
    lines += [f"- {w['key']} labelled {w['label']}: {json.dumps(w['text'])}" for w in wrong]
    write_result("feedback", result, "\n".join(lines))
    return result


if __name__ == "__main__":
    run()
