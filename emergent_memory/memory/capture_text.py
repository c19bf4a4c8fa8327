"""What automatic capture keeps of a conversation's turns, and how it writes them down.

A turn is cleaned once, when it is received and before it is stored anywhere (the capture
queue included):

1. characters PostgreSQL cannot store (NUL, half a surrogate pair) are replaced;
2. `<emergent-memory>...</emergent-memory>` blocks (memories injected into the session) are
   removed, so memories are never extracted again from their own injection; an opening marker
   without its end removes the rest of the turn;
3. every secret the detector (memory/secrets.py) finds is replaced by `[secret removed]`;
4. a tool result longer than the configured limit keeps its head and tail, with a line
   saying how many characters were cut; a user or assistant turn longer than
   TEXT_TURN_CHARS is cut the same way (a pasted log is data, not conversation). The head
   and tail are scanned with SCAN_MARGIN characters beyond each cut, so a secret across a
   cut is seen whole;
5. when step 3 or 4 changed it, the result is scanned for secrets again: the stored text is
   checked as stored.

Windows are written for the models as numbered turns (`[12] user:`) and kept in an Episode as
role-prefixed turns (`user: ...`). In both, every line of a turn's text after its first is
indented, so text inside a turn (a tool result saying "\\n[13] user: ...") can never look like
a turn of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from emergent_memory.markers import strip_markers
from emergent_memory.memory.validation import storable

Role = Literal["user", "assistant", "tool"]
ROLES: tuple[Role, ...] = get_args(Role)

# Longest user or assistant turn kept whole; tool results have their own (configured) limit.
TEXT_TURN_CHARS = 8000
REDACTION = "[secret removed]"
# Characters scanned for secrets beyond each cut of a long text (a private key block is a few
# thousand characters).
SCAN_MARGIN = 8192


@dataclass(frozen=True, slots=True)
class CleanTurn:
    """A turn as capture stores it, and what cleaning removed (counts, never text)."""

    role: Role
    content: str
    secrets_removed: int
    markers_removed: int
    chars_cut: int


@dataclass(frozen=True, slots=True)
class Turn:
    """A stored turn: its index in the session, role and (cleaned) text."""

    index: int
    role: Role
    content: str


def clean(role: Role, content: str, *, tool_output_chars: int) -> CleanTurn:
    """The turn as capture may store it (the module's docstring says what goes)."""
    text, markers = strip_markers(storable(content))
    limit = tool_output_chars if role == "tool" else max(TEXT_TURN_CHARS, tool_output_chars)
    text, secrets, cut = _redacted_within(text, limit, "tool output" if role == "tool" else "text")
    more = 0
    if secrets or cut:  # the text changed since it was scanned: scan it as stored
        text, more = redact_secrets(text)
    return CleanTurn(role, text, secrets + more, markers, cut)


def redact_secrets(text: str) -> tuple[str, int]:
    """The text with every secret the detector finds replaced; how many were."""
    from emergent_memory.memory.secrets import find_secrets

    findings = find_secrets(text)
    if not findings:
        return text, 0
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts.append(text[position : finding.start])
        parts.append(REDACTION)
        position = finding.end
    parts.append(text[position:])
    return "".join(parts), len(findings)


def _redacted_within(text: str, limit: int, what: str) -> tuple[str, int, int]:
    """The text with its secrets replaced and, when longer than `limit` characters, only its
    head and tail (about `limit` kept in all) joined by a line that says how much was cut;
    how many secrets were replaced and how many characters cut.

    A long text is cut before it is scanned (the scan of a megabyte takes seconds): the head
    and tail are scanned with SCAN_MARGIN characters beyond the cut, so that a secret across
    the cut is still seen whole, and only then cut to size."""
    if len(text) <= limit:
        redacted, found = redact_secrets(text)
        return redacted, found, 0
    head_size = limit * 2 // 3
    tail_size = limit - head_size
    if len(text) <= limit + 2 * SCAN_MARGIN:  # the two pieces would overlap: scan it whole
        head, found = redact_secrets(text)
        tail = head
    else:
        head, found_in_head = redact_secrets(text[: head_size + SCAN_MARGIN])
        tail, found_in_tail = redact_secrets(text[-(tail_size + SCAN_MARGIN) :])
        found = found_in_head + found_in_tail
    cut = len(text) - head_size - tail_size
    kept = f"{head[:head_size]}\n[... {cut} characters of {what} cut ...]\n{tail[-tail_size:]}"
    return kept, found, cut


def prompt_text(turns: Sequence[Turn], *, window_start: int) -> str:
    """Turns numbered for the models: `[index] role:` then the text, continuation lines
    indented; the turns before `window_start` come first, headed as context."""
    context = [turn for turn in turns if turn.index < window_start]
    window = [turn for turn in turns if turn.index >= window_start]
    lines: list[str] = []
    if context:
        lines.append("(context: the turns before this window, already read)")
        lines.extend(_written(f"[{t.index}] {t.role}:", t.content, "    ") for t in context)
        lines.append("(the window)")
    lines.extend(_written(f"[{t.index}] {t.role}:", t.content, "    ") for t in window)
    return "\n".join(lines)


def episode_text(turns: Sequence[Turn]) -> str:
    """The window's turns as an Episode keeps them: `role: text`, continuation lines
    indented; empty turns (a marker and nothing else) are left out."""
    return "\n".join(
        _written(f"{turn.role}:", turn.content, "  ") for turn in turns if turn.content.strip()
    )


def digest(text: str) -> str:
    """sha256 of an Episode's text, in hex: the same text read again is recognised."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _written(head: str, content: str, indent: str) -> str:
    lines = content.splitlines() or [""]
    first = f"{head} {lines[0]}" if lines[0] else head
    return "\n".join([first, *(indent + line for line in lines[1:])])
