"""What the dashboard's pages show, shaped from the services' results: the word diff between
two versions of a memory, a message's memory ids (links on the page), and chart series. Plain
data only: the templates escape it."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

Change = Literal["same", "added", "removed"]


class DiffPart(TypedDict):
    change: Change
    text: str


class MessagePart(TypedDict):
    text: str
    memory_id: bool  # the text is a memory's id: shown as a link to its page


MEMORY_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def with_memory_links(message: str) -> list[MessagePart]:
    """A message in runs of text and of memory ids (each id a link on the page)."""
    parts: list[MessagePart] = []
    at = 0
    for found in MEMORY_ID.finditer(message):
        if found.start() > at:
            parts.append({"text": message[at : found.start()], "memory_id": False})
        parts.append({"text": found.group(0), "memory_id": True})
        at = found.end()
    if at < len(message):
        parts.append({"text": message[at:], "memory_id": False})
    return parts


WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[DiffPart]:
    """The changes from `old` to `new`, word by word (whitespace kept), as runs of same,
    removed and added text."""
    a, b = WORDS.findall(old), WORDS.findall(new)
    parts: list[DiffPart] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append({"change": "same", "text": "".join(a[i1:i2])})
            continue
        if i2 > i1:
            parts.append({"change": "removed", "text": "".join(a[i1:i2])})
        if j2 > j1:
            parts.append({"change": "added", "text": "".join(b[j1:j2])})
    return parts


def versions_with_diffs(versions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each version (newest first) with the diff of its content against the one before it."""
    ordered = sorted(versions, key=lambda v: int(v.get("version", 0)))
    shaped: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for version in ordered:
        content = str(version.get("content") or "")
        diff = None if previous is None else word_diff(str(previous.get("content") or ""), content)
        changed = diff is not None and any(part["change"] != "same" for part in diff)
        shaped.append({**version, "diff": diff if changed else None})
        previous = version
    return list(reversed(shaped))


def counted(counts: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """A {label: count} mapping as chart items, largest first."""
    if not counts:
        return []
    items = [(str(label), float(value or 0)) for label, value in counts.items()]
    return sorted(items, key=lambda item: (-item[1], item[0]))
