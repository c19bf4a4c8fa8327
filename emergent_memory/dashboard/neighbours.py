"""A memory's neighbours as a small graph drawn on the server (SVG, no script): the memory on
the left, each object one live relationship leads to on the right, with the relation on the
line's end (supersedes, superseded by, conflicts with, derived from, relevant to, in
context). Memories and contexts are links; the list under it says the same in words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from emergent_memory.dashboard.web import UI, without_invisible

# The most neighbours drawn; the others are only in the list below the drawing
MAX_DRAWN = 12
# (the boxes' places and sizes are _neighbours.html's: 640 wide, boxes 44 high)
ROW = 56  # each neighbour's height, its gap included
BOX_HEIGHT = 44
LABEL = 30  # characters of a label drawn (the whole text is the box's title)

# The relation's words by (type, direction): "out" from this memory, "in" to it
RELATIONS = {
    ("SUPERSEDES", "out"): "supersedes",
    ("SUPERSEDES", "in"): "superseded by",
    ("CONFLICTS_WITH", "out"): "conflicts with",
    ("CONFLICTS_WITH", "in"): "conflicts with",
    ("DERIVED_FROM", "out"): "derived from",
    ("DERIVED_FROM", "in"): "source of",
    ("RELEVANT_TO", "out"): "relevant to",
    ("RELEVANT_TO", "in"): "relevant to it",
    ("BELONGS_TO_CONTEXT", "out"): "in context",
}


@dataclass(frozen=True, slots=True)
class Node:
    y: int  # the box's top
    relation: str
    kind: str  # the relation's CSS class: supersedes, conflicts, derived, context, other
    label: str  # drawn (cut short)
    title: str  # the whole label (a tooltip)
    href: str | None


@dataclass(frozen=True, slots=True)
class Drawing:
    height: int
    center_y: int  # the memory's box top
    label: str
    lines: tuple[str, str]  # the memory's text on two lines
    nodes: tuple[Node, ...]
    more: int  # neighbours not drawn


def neighbour_graph(memory: Mapping[str, Any]) -> Drawing | None:
    """The drawing of a memory's neighbours (None without any)."""
    found = [_neighbour(r) for r in memory.get("relationships") or []]
    drawn = found[:MAX_DRAWN]
    if not drawn:
        return None
    height = max(ROW * len(drawn) + 16, 2 * ROW)
    nodes = tuple(Node(8 + i * ROW, *neighbour) for i, neighbour in enumerate(drawn))
    text = _clean(memory.get("content"))
    return Drawing(
        height=height,
        center_y=(height - BOX_HEIGHT - 16) // 2,
        label=text,
        lines=_two_lines(text, LABEL),
        nodes=nodes,
        more=len(found) - len(drawn),
    )


def _neighbour(relationship: Mapping[str, Any]) -> tuple[str, str, str, str, str | None]:
    kind_of = str(relationship.get("type") or "")
    direction = str(relationship.get("direction") or "out")
    relation = RELATIONS.get(
        (kind_of, direction),
        kind_of.lower().replace("_", " ") + (" (to it)" if direction == "in" else ""),
    )
    other = str(relationship.get("other_id") or "")
    label = _clean(relationship.get("other_label")) or other
    href: str | None = None
    if relationship.get("other_type") == "Memory":
        href = f"{UI}/memories/{other}"
    elif kind_of == "BELONGS_TO_CONTEXT":
        href = f"{UI}/memories?{urlencode({'context': label})}"
    css = {
        "SUPERSEDES": "supersedes",
        "CONFLICTS_WITH": "conflicts",
        "DERIVED_FROM": "derived",
        "BELONGS_TO_CONTEXT": "context",
    }.get(kind_of, "other")
    return relation, css, _cut(label, LABEL), label, href


def _clean(value: object) -> str:
    """One line of text without invisible or direction-changing characters."""
    return " ".join(without_invisible(value).split())


def _cut(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _two_lines(text: str, length: int) -> tuple[str, str]:
    """The text on two lines of about `length` characters, broken between words."""
    if len(text) <= length:
        return text, ""
    cut = text.rfind(" ", 0, length + 1)
    cut = cut if cut > length // 2 else length
    return text[:cut].rstrip(), _cut(text[cut:].strip(), length)
