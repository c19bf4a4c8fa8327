#!/usr/bin/env python3
"""Validate dedup_pairs.json (labeled memory pairs for duplicate-detection calibration).

Standalone, stdlib only (Python 3.11+). Usage:

    python dedup_check.py [path/to/dedup_pairs.json]

Labelling rule the pairs follow: texts that differ in an identifier, a number, a
version, a date, a named entity or a relation ("the user" / "the user's mother")
state different facts unless the new text says the old value changed ("switched
from X to Y", "now", "instead of", "no longer", ...), in which case it is a
correction and supersedes. Similarity from tokens the embedding model does not
know (emoji, scripts it was not trained on) is no evidence of sameness.

Checks:
  * top-level object with a non-empty "description" string and a "pairs" list
  * every pair has exactly the fields key, existing, new, kind, supersede
  * kind is one of the known kinds, with an exact count per kind:
      supersede=true:  reworded 100, correction 70, correction_named 77,
                       reworded_values 46
      supersede=false: related_distinct 110, unrelated 60,
                       value_changed_unmarked 20, distinct_value 121,
                       distinct_relation 37, distinct_unknown_tokens 30
  * supersede is true exactly for reworded, correction, correction_named and
    reworded_values
  * keys are unique and follow d001, d002, ... in order
  * existing and new texts are non-empty, have no leading/trailing whitespace
    and are not identical within a pair (also after normalising case and
    whitespace)
  * no duplicated pair (same two texts, in either order, after normalisation)
  * each text has 8-35 words, except distinct_unknown_tokens texts (emoji runs
    have no spaces), which are only capped at 2,000 characters

Prints the counts per kind and exits with status 1 on any violation.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

EXPECTED_COUNTS = {
    "reworded": 100,
    "correction": 70,
    "related_distinct": 110,
    "unrelated": 60,
    "value_changed_unmarked": 20,
    "distinct_value": 121,
    "distinct_relation": 37,
    "distinct_unknown_tokens": 30,
    "correction_named": 77,
    "reworded_values": 46,
}
SUPERSEDE_KINDS = {"reworded", "correction", "correction_named", "reworded_values"}
FIELDS = {"key", "existing", "new", "kind", "supersede"}
MIN_WORDS, MAX_WORDS = 8, 35
# Kinds whose texts are exempt from the word limits (only capped in characters).
UNKNOWN_TOKEN_KINDS = {"distinct_unknown_tokens"}
MAX_CHARS = 2000
KEY_RE = re.compile(r"^d\d{3,}$")


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("dedup_pairs.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"ERROR: cannot load {path}: {exc}")
        return 1

    errors: list[str] = []

    if not isinstance(data, dict):
        print("ERROR: top level must be a JSON object")
        return 1
    if not isinstance(data.get("description"), str) or not data["description"].strip():
        errors.append("missing or empty 'description'")
    pairs = data.get("pairs")
    if not isinstance(pairs, list):
        print("ERROR: 'pairs' must be a list")
        return 1

    counts: Counter[str] = Counter()
    seen_keys: set[str] = set()
    seen_pairs: dict[frozenset[str] | tuple[str, str], str] = {}

    for i, pair in enumerate(pairs):
        where = f"pairs[{i}]"
        if not isinstance(pair, dict):
            errors.append(f"{where}: not an object")
            continue
        key = pair.get("key")
        where = f"{where} ({key})"
        if set(pair) != FIELDS:
            errors.append(f"{where}: fields {sorted(pair)} != {sorted(FIELDS)}")

        # key
        if not isinstance(key, str) or not KEY_RE.match(key):
            errors.append(f"{where}: bad key {key!r}")
        elif key in seen_keys:
            errors.append(f"{where}: duplicate key {key}")
        else:
            seen_keys.add(key)
            expected_key = f"d{i + 1:03d}"
            if key != expected_key:
                errors.append(f"{where}: key out of sequence, expected {expected_key}")

        # kind / supersede
        kind = pair.get("kind")
        if kind not in EXPECTED_COUNTS:
            errors.append(f"{where}: unknown kind {kind!r}")
        else:
            counts[kind] += 1
        sup = pair.get("supersede")
        if not isinstance(sup, bool):
            errors.append(f"{where}: supersede must be a boolean, got {sup!r}")
        elif kind in EXPECTED_COUNTS and sup != (kind in SUPERSEDE_KINDS):
            errors.append(f"{where}: supersede={sup} is wrong for kind {kind}")

        # texts
        existing, new = pair.get("existing"), pair.get("new")
        texts_ok = True
        for name, text in (("existing", existing), ("new", new)):
            if not isinstance(text, str) or not text.strip():
                errors.append(f"{where}: '{name}' must be a non-empty string")
                texts_ok = False
                continue
            if text != text.strip():
                errors.append(f"{where}: '{name}' has leading/trailing whitespace")
            if kind in UNKNOWN_TOKEN_KINDS:
                if len(text) > MAX_CHARS:
                    errors.append(
                        f"{where}: '{name}' has {len(text)} characters (allowed {MAX_CHARS})"
                    )
                continue
            n_words = len(text.split())
            if not MIN_WORDS <= n_words <= MAX_WORDS:
                errors.append(
                    f"{where}: '{name}' has {n_words} words "
                    f"(allowed {MIN_WORDS}-{MAX_WORDS}): {text!r}"
                )
        if not texts_ok:
            continue
        a, b = normalise(existing), normalise(new)
        if a == b:
            errors.append(f"{where}: existing and new texts are identical")
            continue
        for sig in ((a, b), frozenset((a, b))):
            if sig in seen_pairs:
                errors.append(f"{where}: duplicate of pair {seen_pairs[sig]}")
                break
        seen_pairs[(a, b)] = str(key)
        seen_pairs[frozenset((a, b))] = str(key)

    print(f"file: {path}")
    print(f"total pairs: {len(pairs)}")
    for kind, expected in EXPECTED_COUNTS.items():
        got = counts.get(kind, 0)
        flag = "ok" if got == expected else f"MISMATCH (expected {expected})"
        print(f"  {kind:<23} {got:>4}  {flag}")
        if got != expected:
            errors.append(f"kind {kind}: {got} pairs, expected {expected}")
    n_sup = sum(1 for p in pairs if isinstance(p, dict) and p.get("supersede") is True)
    print(f"  {'supersede=true':<23} {n_sup:>4}")
    print(f"  {'supersede=false':<23} {len(pairs) - n_sup:>4}")

    if errors:
        print(f"\n{len(errors)} violation(s):")
        for err in errors:
            print(f"  - {err}")
        return 1
    print("\nOK: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
