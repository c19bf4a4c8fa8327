"""Claude Code's JSONL transcript as capture messages: {"role", "content"}, in batches.

Each line of the transcript is one entry. Entries of type `user` hold what the user typed
and, as `tool_result` blocks, what tools returned; entries of type `assistant` hold text,
thinking and `tool_use` blocks. The roles sent are:

- "user": text the user typed, and nothing else;
- "assistant": the assistant's text;
- "tool": a tool call ("called Bash: ls -la") and a tool's result, which is data from a
  command, a file or a page, never the user's word, although it arrives in a `user` entry.

Left out: thinking, images, meta entries (`isMeta`: caveats, "Continue from where you left
off."), subagent entries (`isSidechain`: the prompt there is the assistant's, not the
user's), compaction summaries (`isCompactSummary`), slash commands and their local output
(`<command-name>`, `<local-command-stdout>` texts), the CLI's own answers (model
`<synthetic>`), and every other entry type (attachment, system, queue-operation,
last-prompt, mode, summary, file-history-snapshot...), among them the hooks' own injected
context (attachments of type hook_additional_context). tests/data/claude_code/ has real
transcripts of Claude Code 2.1.197 with each of these.

Any `<emergent-memory>...</emergent-memory>` block (the injected memories) is cut from every
text, by the server's rule (emergent_memory/markers.py), so that memories are never extracted
from their own injection; Claude Code's `<system-reminder>` blocks too.

The conversion of a line depends on that line only, so a message's index in the session
is the same however the transcript is cut into hook runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from emergent_memory import markers

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from typing import Any, BinaryIO

# One message's text is cut to this (its head and tail kept): the server trims tool output
# further (EMERGENT_MEMORY_CAPTURE_TOOL_OUTPUT_CHARS).
MAX_MESSAGE_CHARS = 16_000
# A tool call is summarised in at most this many characters.
MAX_CALL_CHARS = 600
# A transcript line longer than this is skipped (a giant tool result; its neighbours stay).
MAX_LINE_BYTES = 2_000_000
# Bytes of the transcript read in one hook run (the rest is read by the next runs).
MAX_READ_BYTES = 8_000_000
# Encoded size of one request's messages: well under the server's 1 MB default body limit.
MAX_BATCH_BYTES = 256_000
MAX_BATCH_MESSAGES = 500

# Claude Code's own notes in a user's turn (cut to the end when unclosed, as a marker block).
SYSTEM_REMINDER = re.compile(
    r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL | re.IGNORECASE
)
# What Claude Code writes in the user's place when the user interrupts; not the user's words.
NOT_TYPED = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
# User texts that are a slash command or its local output, not the user's words.
COMMAND_TEXT = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
)
# The model name of the answers the CLI writes itself ("No response requested.").
SYNTHETIC_MODEL = "<synthetic>"
# The input fields that say best what a call did, in order of preference.
CALL_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt")


def strip_markers(text: str) -> str:
    """The text without injected blocks: the memories' (markers.strip_markers), then Claude
    Code's system reminders; trimmed."""
    return SYSTEM_REMINDER.sub("", markers.strip_markers(text)[0]).strip()


def cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """At most `limit` characters: the head and the tail, and how much was cut between."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters cut ...]\n{text[-keep:]}"


def entry_messages(entry: object) -> list[dict[str, str]]:
    """The messages one transcript entry holds, in order (often none)."""
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return []
    if any(
        entry.get(flag) is True
        for flag in ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")
    ):
        return []
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("model") == SYNTHETIC_MODEL:
        return []
    content = message.get("content")
    blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else []
    if isinstance(content, list):
        blocks = content
    speaker = "user" if entry["type"] == "user" else "assistant"
    found: list[dict[str, str]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        text: str | None = None
        role = "tool"
        if kind == "text" and isinstance(block.get("text"), str):
            role, text = speaker, strip_markers(block["text"])
            if speaker == "user" and (text in NOT_TYPED or text.startswith(COMMAND_TEXT)):
                text = None
        elif isinstance(kind, str) and kind.endswith("tool_use"):  # also server_tool_use
            text = _call(block)
        elif isinstance(kind, str) and kind.endswith("tool_result"):
            text = _result(block)
        if text:
            found.append({"role": role, "content": cut(text)})
    return found


def _call(block: dict[str, Any]) -> str:
    name = block.get("name") if isinstance(block.get("name"), str) else "a tool"
    given = block.get("input")
    if isinstance(given, dict):
        chosen = next((given[key] for key in CALL_KEYS if isinstance(given.get(key), str)), None)
        summary = chosen if chosen is not None else json.dumps(given, ensure_ascii=False)
    else:
        summary = "" if given is None else json.dumps(given, ensure_ascii=False)
    return cut(strip_markers(f"called {name}: {summary}".rstrip(": ")), MAX_CALL_CHARS)


def _result(block: dict[str, Any]) -> str:
    content = block.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                parts.append(str(item.get("text", "")))
            elif isinstance(item, dict) and item.get("type") == "image":
                parts.append("[image]")
    text = strip_markers("\n".join(parts))
    if not text:
        return ""
    return f"error: {text}" if block.get("is_error") is True else text


class Batch:
    """Messages for one capture request, and where in the transcript they end.

    `first_index` is the index of messages[0] in the session; `end_offset` the byte offset
    just after the last line they come from (or after lines that held no message). A plain
    class, as the others a hook loads: dataclasses would cost it several ms to import."""

    __slots__ = ("end_offset", "first_index", "messages")

    def __init__(self, first_index: int, messages: list[dict[str, str]], end_offset: int) -> None:
        self.first_index = first_index
        self.messages = messages
        self.end_offset = end_offset


class Reading:
    """What one reading of the transcript found."""

    __slots__ = ("batches", "more", "skipped_lines")

    def __init__(self, batches: list[Batch], skipped_lines: int, more: bool) -> None:
        self.batches = batches
        self.skipped_lines = skipped_lines  # not JSON, or longer than MAX_LINE_BYTES
        self.more = more  # the transcript holds more complete lines than this reading took


def read_batches(
    path: Path,
    offset: int,
    first_index: int,
    *,
    max_batches: int,
    max_batch_bytes: int = MAX_BATCH_BYTES,
    max_read_bytes: int = MAX_READ_BYTES,
) -> Reading:
    """The messages of the transcript's complete lines after `offset`, in at most
    `max_batches` batches. Raises OSError when the file cannot be read."""
    batches: list[Batch] = []
    messages: list[dict[str, str]] = []
    size = 0
    index, end = first_index, offset
    skipped = 0
    more = False
    with path.open("rb") as transcript:
        for line, line_end in _lines(transcript, offset, max_read_bytes):
            found: list[dict[str, str]] = []
            if line is None:
                skipped += 1
            elif line.strip():
                try:
                    found = entry_messages(json.loads(line))
                except ValueError:
                    skipped += 1
            weight = sum(_encoded_size(message) for message in found)
            if messages and (
                size + weight > max_batch_bytes or len(messages) + len(found) > MAX_BATCH_MESSAGES
            ):
                batches.append(Batch(index, messages, end))
                index += len(messages)
                messages, size = [], 0
                if len(batches) == max_batches:
                    more = True
                    break
            messages.extend(found)
            size += weight
            end = line_end
    if (messages or end != offset) and len(batches) < max_batches:
        batches.append(Batch(index, messages, end))
    return Reading(batches, skipped, more)


def _encoded_size(message: dict[str, str]) -> int:
    return len(json.dumps(message)) + 2  # as the client encodes it: ASCII JSON


def _lines(transcript: BinaryIO, offset: int, max_read: int) -> Iterator[tuple[bytes | None, int]]:
    """(line, offset after it) for each complete line from `offset`, reading at most
    `max_read` bytes (plus what skipping one over-long line takes); None for a line longer
    than MAX_LINE_BYTES. An incomplete last line is left for a later run."""
    transcript.seek(offset)
    data = transcript.read(max_read)
    start = 0
    while True:
        newline = data.find(b"\n", start)
        if newline < 0:
            break
        if newline - start > MAX_LINE_BYTES:
            yield None, offset + newline + 1
        else:
            yield data[start:newline], offset + newline + 1
        start = newline + 1
    if len(data) - start <= MAX_LINE_BYTES:
        return  # an incomplete line, or the end of what this run reads
    # a line too long to hold: skip to its end, if it has one yet
    position = offset + len(data)
    while chunk := transcript.read(1_000_000):
        newline = chunk.find(b"\n")
        if newline >= 0:
            yield None, position + newline + 1
            return
        position += len(chunk)
