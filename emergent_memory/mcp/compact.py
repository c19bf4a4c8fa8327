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

import copy
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any

from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import TypeAdapter

from emergent_memory.memory.lines import SHORT_ID, age, flags, one_line, short_ids

NOTHING_RELEVANT = "Nothing relevant remembered."
DEGRADED = "(matched by words only: the embedding model is unavailable)"


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
    if action == "keep_both":
        shown = short_ids(result["kept_both"])
        lines = [
            memory_line(memory, shown[str(memory["id"])], now) for memory in result["memories"]
        ]
        return "\n".join(["Kept both; they no longer conflict:", *lines])
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


@cache
def _result_schema(result: Any) -> dict[str, Any]:
    """pydantic's JSON schema of a result type, derived once per process (the types are fixed;
    a process that builds the server more than once, as the tests do, would derive it each
    time); answer_schema works on a copy."""
    return TypeAdapter(result).json_schema()


def answer_schema(result: Any) -> dict[str, Any]:
    """The output schema of a tool whose full result has the type `result`: that result's
    schema plus `text`, the one key always present (the others come with `detail`)."""
    schema = copy.deepcopy(_result_schema(result))
    schema["properties"] = {
        "text": {"type": "string", "description": "The answer as the model reads it."},
        **schema["properties"],
    }
    schema["required"] = ["text"]
    return schema
