"""The text the model reads of each tool's answer: one line per memory.

A memory is one line: its short id (the first 8 characters of its id, more when two in the
same answer share them), category, age (since it last changed), flags, then its content:

    [3f2a9c1e] preference, 3d, core: The user prefers pnpm over npm

Flags, three at most: `core`, `conflict` (it states another value of the same subject as
another active memory) or `outranked` (the other side has the stronger source); `low
confidence` (effective confidence below 0.5); and the first of `superseded`, `deleted`,
`archived`, `expired` (valid_until passed) that holds; when all four would be shown, `core`
is left out (the rest say why not to trust the line). So a line costs about 15 tokens
beside its content, 24 at most (tests/test_tool_budget.py).

Content is shown as written, but no text of a memory can break the format: line breaks are
folded to " ⏎ " and other control characters written as `\\xNN`, so every line of an answer
is one the server wrote. The full records (ids, scores, provenance, evidence) are in the
structured content when a tool is asked with `detail: true`. Claude Code shows the model a
tool's structured content rather than its text, so without `detail` the structured content
is the text alone (`answer`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import TypeAdapter

SHORT_ID = 8  # hex characters of an id shown, and the fewest a tool accepts back
LOW_CONFIDENCE = 0.5
NOTHING_RELEVANT = "Nothing relevant remembered."
DEGRADED = "(matched by words only: the embedding model is unavailable)"

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


def memory_line(memory: Mapping[str, Any], short: str, now: datetime) -> str:
    labels = [str(memory["category"]), age(memory.get("updated_at"), now), *flags(memory, now)]
    return f"[{short}] {', '.join(labels)}: {one_line(str(memory['content']))}"


def memory_lines(memories: Sequence[Mapping[str, Any]], now: datetime) -> list[str]:
    shown = short_ids([str(memory["id"]) for memory in memories])
    return [memory_line(memory, shown[str(memory["id"])], now) for memory in memories]


def recall_text(result: Mapping[str, Any], now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    memories = result["memories"]
    lines = memory_lines(memories, now) if memories else [NOTHING_RELEVANT]
    episodes = result.get("episodes")
    if episodes is not None:
        lines += [episode_line(episode) for episode in episodes] or ["No conversation matched."]
    if result.get("degraded"):
        lines.append(DEGRADED)
    return "\n".join(lines)


def episode_line(episode: Mapping[str, Any]) -> str:
    turns = episode["turns"]
    said = episode["summary"] or episode["excerpt"]
    return (
        f"conversation {str(episode['captured_at'])[:10]}, session "
        f"{one_line(str(episode['session_id']))[:SHORT_ID]}, turns {turns['first']}-"
        f"{turns['last']}: {one_line(str(said))}"
    )


def list_text(result: Mapping[str, Any], now: datetime | None = None) -> str:
    memories = result["memories"]
    if not memories:
        return "No memories."
    return "\n".join(memory_lines(memories, now or datetime.now(UTC)))


def save_text(result: Mapping[str, Any]) -> str:
    memory = result["memory"]
    ids = [str(memory["id"]), *result["superseded_ids"]]
    ids += [str(close["id"]) for close in result["possible_duplicates"]]
    shown = short_ids(ids)
    saved = f"[{shown[str(memory['id'])]}] ({memory['category']}, {memory['scope']} scope)"
    status = result["status"]
    if status == "unchanged":
        line = f"Already remembered as {saved}; nothing new saved."
        if result.get("restored"):
            line = f"Already remembered as {saved} (archived): restored it."
    elif result["superseded_ids"]:
        replaced = ", ".join(f"[{shown[id_]}]" for id_ in result["superseded_ids"])
        line = f"Saved {saved}; it supersedes {replaced}."
    else:
        line = f"Saved {saved}."
    lines = [line, *duplicate_lines(result["possible_duplicates"], shown)]
    if result.get("degraded"):
        lines.append("(saved without a vector: the embedding model is unavailable)")
    return "\n".join(lines)


def duplicate_lines(duplicates: Sequence[Mapping[str, Any]], shown: Mapping[str, str]) -> list[str]:
    """A close memory the save or update left beside the new one, and what to do about it."""
    lines = []
    for close in duplicates:
        if close.get("conflict"):
            what = "conflicts (find out which is true; update or delete one)"
        elif close.get("kept_because"):
            what = f"{one_line(str(close['kept_because']))}; ask the user before changing it"
        else:
            what = "close (same fact? update or delete one; else keep both)"
        lines.append(
            f"[{shown[str(close['id'])]}] {what}, {close['similarity']:.2f}: "
            f"{one_line(str(close['content']))}"
        )
    return lines


def verify_text(result: Mapping[str, Any], now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    lines = [f"{result['verdict']}: {one_line(str(result['why']))}"]
    matches = result["matches"]
    shown = short_ids([str(match["id"]) for match in matches])
    for match in matches:
        line = memory_line(match, shown[str(match["id"])], now)
        short, rest = line.split(" ", 1)
        lines.append(
            f"{short} {match['relation']} {match['similarity']:.2f}, {rest} "
            f"({one_line(str(match['why']))})"
        )
    if result.get("degraded"):
        lines.append(DEGRADED)
    return "\n".join(lines)


def manage_text(action: str, result: Mapping[str, Any], now: datetime | None = None) -> str:
    """manage_memory's answer in a few words (list: one line per memory)."""
    now = now or datetime.now(UTC)
    if action == "list":
        return list_text(result, now)
    if action == "forget_all":
        return f"Deleted {result['deleted_count']} memories."
    if action == "delete":
        return f"Deleted [{short_ids([result['deleted']])[result['deleted']]}]."
    memory = result["memory"]
    own = str(memory["id"])
    others = [str(close["id"]) for close in result.get("possible_duplicates", [])]
    others += [str(id_) for id_ in result.get("superseded_ids", [])]
    if result.get("broken_supersession"):
        others.append(str(result["broken_supersession"]))
    shown = short_ids([own, *others])
    line = memory_line(memory, shown[own], now)
    if action == "reinforce":
        change = (
            f"{result['confidence_before']:.2f} -> {result['confidence_after']:.2f}"
            if result["independent"]
            else "evidence already known; confidence unchanged"
        )
        head = f"Reinforced ({change}, {result['evidence_count']} pieces of evidence"
        head += ", restored from archive)" if result["restored"] else ")"
    elif action == "restore":
        head = f"Restored (was {result['restored_from']})"
        if result.get("broken_supersession"):
            head += f"; [{shown[str(result['broken_supersession'])]}] stays active"
    elif action == "supersede":
        replaced = ", ".join(f"[{shown[str(id_)]}]" for id_ in result["superseded_ids"])
        head = f"Superseded {replaced}; this one stays"
    else:
        head = {"update": "Updated", "archive": "Archived"}.get(action, action.capitalize())
    lines = [f"{head}:", line, *duplicate_lines(result.get("possible_duplicates", []), shown)]
    return "\n".join(lines)


# -- what a tool returns ----------------------------------------------------------------------


def answer(text: str, result: Mapping[str, Any], detail: bool) -> ToolResult:
    """A tool's answer: the text, and as structured content the same text (`text`) and, with
    `detail`, every key of the full result beside it. Structured content is what some clients
    (Claude Code) show the model instead of the text, so without `detail` it holds the text
    alone."""
    structured = {"text": text, **result} if detail else {"text": text}
    return ToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def answer_schema(result: Any) -> dict[str, Any]:
    """The output schema of a tool whose full result has the type `result`: that result's
    schema plus `text`, the one key always present (the others come with `detail`)."""
    schema = TypeAdapter(result).json_schema()
    schema["properties"] = {
        "text": {"type": "string", "description": "The answer as the model reads it."},
        **schema["properties"],
    }
    schema["required"] = ["text"]
    return schema
