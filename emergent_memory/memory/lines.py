"""How a memory reads on one line, for an agent (mcp/compact.py) and for a person (the CLI's
tables): its short id, its age, its flags, and its text made safe to print.

A short id is the first SHORT_ID hex characters of the id, more when two ids shown together
share them; manage_memory and the CLI take one back (MemoryService.resolve_memory_id). Flags,
three at most: `core`; `conflict` or `outranked`; `low confidence` (effective confidence
below LOW_CONFIDENCE); and the first of `superseded`, `deleted`, `archived`, `expired` that
holds (core is the one left out when all four would be shown). `one_line` folds line breaks
and makes every other control character visible, so no text of a memory can break a line
format or reach a terminal as an escape sequence. Standard library only: the MCP server and
the CLI import it at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

SHORT_ID = 8  # hex characters of an id shown, and the fewest a tool accepts back
LOW_CONFIDENCE = 0.5

_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def one_line(text: str) -> str:
    """`text` on one line: line breaks folded to " ⏎ ", other control characters visible."""
    folded = _LINE_BREAKS.sub(" ⏎ ", text)
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", folded)


def short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id's shortest prefix of at least SHORT_ID hex characters (dashes skipped) that no
    other id of `ids` shares."""
    plain = {id_: id_.replace("-", "") for id_ in ids}
    shown: dict[str, str] = {}
    for id_, hex_ in plain.items():
        length = SHORT_ID
        while length < len(hex_) and any(
            other != id_ and plain[other].startswith(hex_[:length]) for other in plain
        ):
            length += 1
        shown[id_] = hex_[:length]
    return shown


def age(timestamp: str | None, now: datetime) -> str:
    """How long ago, in one unit: now, 5m, 3h, 2d, 3w, 4mo, 2y."""
    if not timestamp:
        return "?"
    seconds = (now - datetime.fromisoformat(timestamp)).total_seconds()
    for unit, size in (("y", 31_536_000), ("mo", 2_592_000), ("w", 604_800), ("d", 86_400)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h"
    if seconds >= 60:
        return f"{int(seconds // 60)}m"
    return "now"


def flags(memory: Mapping[str, Any], now: datetime) -> list[str]:
    found = []
    if memory.get("importance") == "core":
        found.append("core")
    if memory.get("conflict") == "outranked":
        found.append("outranked")
    elif memory.get("conflicts_with"):
        found.append("conflict")
    if memory.get("effective_confidence", 1.0) < LOW_CONFIDENCE:
        found.append("low confidence")
    # one word for where it stands, the first that holds: out of recall for one reason
    status = memory.get("status")
    until = memory.get("valid_until")
    if status in ("superseded", "deleted"):
        found.append(str(status))
    elif memory.get("archived_at"):
        found.append("archived")
    elif until and _before(until, now):
        found.append("expired")
    return found[-3:]  # three at most: core is the one left out


def _before(iso: str, now: datetime) -> bool:
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= now
