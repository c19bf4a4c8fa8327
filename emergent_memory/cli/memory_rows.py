"""How memories read in the CLI's tables: one row each, with the notes a person needs under it.

A row is the memory's short id (as the tools show it: memory.lines.short_ids over every id
the table names, so each is unique there and `show`, `forget`, `restore`, `archive` and
`reinforce` take it back), its category, its age (since it last changed), its flags (core,
conflict or outranked, low confidence, superseded, deleted, archived or expired) and its
content. Commands put their own columns first (recall: rank and relevance; verify: relation
and similarity). Under a row, notes only for what is not the default: importance, validity,
decayed confidence, conflicts, the rationale, why it is no longer active, and the
conversation it was captured from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from emergent_memory.cli.output import Cell, Screen, Styled, cell
from emergent_memory.memory.lines import age, flags, one_line, short_ids

MEMORY_HEADERS = ("CATEGORY", "AGE", "FLAGS", "CONTENT")
FLAG_COLOURS = {
    "core": "cyan",
    "conflict": "red",
    "outranked": "red",
    "low confidence": "yellow",
}  # the rest (superseded, deleted, archived, expired) in magenta


def memory_table(
    screen: Screen,
    memories: Sequence[Mapping[str, Any]],
    *,
    first: tuple[Sequence[str], Callable[[Mapping[str, Any]], Sequence[Cell]]] = ((), lambda _: ()),
    notes: Callable[[Mapping[str, Any], Mapping[str, str]], list[Cell]] | None = None,
) -> list[str]:
    """The memories as a table: `first` the command's own columns (their headers, and the
    cells of a memory), then ID, CATEGORY, AGE, FLAGS and CONTENT; `notes` the lines under a
    memory (given the short ids)."""
    now = datetime.now(UTC)
    shown = short_ids(referenced_ids(memories))
    headers, own = first
    rows = [
        [*own(memory), *memory_cells(memory, shown[str(memory["id"])], now)] for memory in memories
    ]
    below = [(notes or memory_notes)(memory, shown) for memory in memories]
    # the notes begin under CATEGORY, after the id
    return screen.table([*headers, "ID", *MEMORY_HEADERS], rows, below, len(headers) + 1)


def referenced_ids(memories: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ids of the memories and of the memories they name (conflicts, replacements)."""
    ids = [str(memory["id"]) for memory in memories]
    for memory in memories:
        ids += [str(other) for other in memory.get("conflicts_with") or ()]
        if memory.get("superseded_by"):
            ids.append(str(memory["superseded_by"]))
    return list(dict.fromkeys(ids))


def memory_cells(memory: Mapping[str, Any], short: str, now: datetime) -> list[Cell]:
    marks = flags(memory, now)
    return [
        Styled(short, "yellow"),
        cell(memory["category"], "green"),
        Styled(age(memory.get("updated_at"), now), dim=True),
        Styled(", ".join(marks), FLAG_COLOURS.get(marks[0], "magenta") if marks else None),
        cell(memory["content"]),
    ]


def memory_notes(memory: Mapping[str, Any], shown: Mapping[str, str]) -> list[Cell]:
    """The lines under a memory's row: its lifecycle, why it was made, why it is no longer
    active, where it was captured from."""
    lines: list[Cell] = []
    lifecycle = lifecycle_text(memory, shown)
    if lifecycle:
        lines.append(cell(lifecycle, dim=True))
    if memory.get("rationale"):
        lines.append(cell(f"why: {memory['rationale']}", dim=True))
    status = status_text(memory, shown)
    if status:
        lines.append(cell(status, "magenta"))
    source = memory.get("derived_from")
    if source:
        lines.append(cell(f"captured from {describe_episode(source)}", dim=True))
    return lines


def lifecycle_text(memory: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    """A memory's importance, validity, decayed confidence and conflicts, on one line;
    nothing for what is absent or the default (its evidence is on its page: `show`)."""
    parts = []
    if memory.get("importance") not in (None, "normal", "core"):  # core: a flag
        parts.append(f"importance {memory['importance']}")
    if memory.get("valid_from") or memory.get("valid_until"):
        parts.append(
            f"valid {memory.get('valid_from') or '...'} to {memory.get('valid_until') or '...'}"
        )
    effective = memory.get("effective_confidence")
    if effective is not None and effective != memory["confidence"]:
        parts.append(f"confidence {memory['confidence']:.2f} (now {effective:.2f})")
    if memory.get("conflicts_with"):
        side = (
            "this one is outranked"
            if memory.get("conflict") == "outranked"
            else "this one is the current value"
        )
        others = ", ".join(shown.get(str(i), str(i)) for i in memory["conflicts_with"])
        parts.append(f"conflicts with {others} ({side})")
    return ", ".join(parts)


def status_text(memory: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    """Why a memory is out of recall (deleted, archived, superseded), with the reason."""
    if memory.get("deleted_at"):
        return f"deleted {moment(memory['deleted_at'])}{_reason(memory, 'delete')}"
    if memory.get("archived_at"):
        archived = f"archived {moment(memory['archived_at'])}{_reason(memory, 'archive')}"
        return f"{archived}; `restore` brings it back"
    replaced_by = memory.get("superseded_by")
    if replaced_by:
        because = memory.get("superseded_because")
        why = f": replaced because {because}" if because else _reason(memory, "supersede")
        return f"superseded by {shown.get(str(replaced_by), str(replaced_by))}{why}"
    return ""


def moment(iso: str) -> str:
    """A timestamp (ISO 8601) as a person reads it: date and time to the minute, in UTC."""
    try:
        return f"{datetime.fromisoformat(iso).astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    except ValueError:
        return one_line(iso)


def describe_episode(episode: Mapping[str, Any]) -> str:
    """A captured conversation window in a few words: session, client, turns, when."""
    turns = episode["turns"]
    return (
        f"session {episode['session_id']} ({episode['client']}), turns {turns['first']}"
        f"-{turns['last']}, {moment(episode['captured_at'])}"
    )


def _reason(memory: Mapping[str, Any], kind: str) -> str:
    reason = memory.get(f"{kind}_reason")
    return f" ({reason})" if reason else ""
