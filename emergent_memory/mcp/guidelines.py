"""What the server tells agents: its instructions, the tools' descriptions, the guidelines.

A client sends every tool's description and input schema to the model in every request, so
they say only what the agent needs to call the tools right: when to call each, what never to
save, the categories and scopes, that recall goes by meaning. How to write good memories, the
rarely used options and how to read the answers are in the memory_guidelines prompt (read when
the agent asks for it) and in docs/memory.md. tests/test_tool_budget.py holds their size.
"""

from __future__ import annotations

# The memory_guidelines prompt: its text lives in the memory layer, which capture's extractor
# reads too.
from emergent_memory.memory.guidelines import MEMORY_GUIDELINES as MEMORY_GUIDELINES

INSTRUCTIONS = """\
emergent-memory keeps what you learn about the user and their projects across sessions.
Call recall_memories at the start of a task and whenever the user refers to earlier work or
to their preferences; call save_memory as soon as you learn a preference, a correction, a
convention, a fact, a standing instruction, a decision, a lesson or a risk worth keeping;
call verify_memory before acting on a remembered fact that may have changed. The
memory_guidelines prompt explains how to write good memories."""

SAVE_MEMORY = """\
Save a lasting fact as soon as you learn it: a preference, correction, convention, fact,
instruction, decision, lesson or risk about the user or project. One self-contained sentence;
when a fact changed say so ("now", "instead of"), and the new memory replaces the old. Never
save secrets (refused) or details of the current task. The answer says what happened and
lists close or conflicting memories to resolve with manage_memory."""

SOURCE = (
    "explicit: the user said it; corrected: the user corrected you; inferred: you concluded it."
)
SCOPE = "user: all the user's projects; project: this one; global: everyone (admin)."
SAVE_OPTIONS = (
    "Rarely needed (see memory_guidelines): importance (low|normal|high|core), evidence, "
    "rationale, valid_from, valid_until, context, related_to, supersede_reason."
)
DETAIL = "true: also every field of the full records."

RECALL_MEMORIES = """\
Search your memories of the user and this project, by meaning and exact words ("package
manager", "ERR_4471"). Call it at the start of every task and when the user refers to
earlier work or their preferences. One line per memory, most relevant first:
[id] category, age, flags: content."""

RECALL_OPTIONS = (
    "include_episodes (also search past conversations), include_archived, as_of (a date: "
    "what was believed then), scope, min_relevance (0-1, lower finds more)."
)

MANAGE_MEMORY = """\
List, update, reinforce (the user confirmed it), archive, delete or restore memories;
forget_all deletes this project's. Settle a conflict: supersede, update or delete the wrong
side, or keep_both if both hold."""

MEMORY_ID = "Its id as shown (8+ characters)."
UPDATES = (
    "For update: content, category, confidence, importance, valid_from, valid_until, rationale."
)
STATUS = "For list: active (default), superseded, archived or deleted."
EVIDENCE = "For reinforce (required): a quote, or where you saw it."
REASON = "For delete, archive, supersede: why."
REPLACES = "For supersede: the id memory_id replaces."
OTHER = "For keep_both: the other side."

VERIFY_MEMORY = """\
Check a claim against memory before acting on it or saving it. Verdict: confirmed, conflict
(find out which is true, then fix the wrong memory), related (not a confirmation: read the
matches) or new. Read-only."""
