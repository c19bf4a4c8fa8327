"""What the server tells agents: its instructions, the tools' descriptions, the guidelines."""

from __future__ import annotations

# The memory_guidelines prompt: its text lives in the memory layer, which capture's extractor
# reads too.
from emergent_memory.memory.guidelines import MEMORY_GUIDELINES as MEMORY_GUIDELINES

INSTRUCTIONS = """\
emergent-memory keeps what you learn about the user and their projects across sessions.
Call recall_memories at the start of a task and whenever the user refers to earlier work or
to their preferences; call save_memory as soon as you learn a preference, a correction, a
convention, a fact or a standing instruction worth keeping. The memory_guidelines prompt
explains how to write good memories."""

SAVE_MEMORY = """\
Save something worth remembering in later sessions: a preference of the user ("prefers
pnpm over npm"), a correction of something you got wrong, a project convention, a fact about
the project or the user, or a standing instruction. Save it immediately, when you learn it.

Write ONE specific, self-contained fact per memory, in the present tense, with the context
needed to understand it later ("In the billing service, money amounts are integers in
cents"). Never save credentials (they are refused) or transient details of the current task.

Saving something you already know is safe: the same text is not stored twice (status
"unchanged"), and a reworded or corrected version of a memory replaces it (status
"updated", with the replaced ids in superseded_ids). When a fact changed, say so in the new
memory ("now", "instead of", "no longer", "switched from X to Y"): that is how a correction
is recognised as replacing the old fact.

When a close memory was not replaced, it is listed in possible_duplicates (id, content,
similarity): if it is the same fact, or the new memory makes it wrong, update or delete the
older one with manage_memory; if it is a different fact, leave both."""

RECALL_MEMORIES = """\
Search what you remember about the user and this project, by meaning and by exact words.
Call it at the start of every task, and whenever the user mentions earlier work, their
preferences, or "as I told you". Use a short natural-language query ("package manager
preference", "how to run the tests", "ERR_4471"). Results are ordered by relevance, with a
score breakdown; an empty list means nothing relevant is remembered. A memory that automatic
capture took from a conversation says which one in derived_from (session, turns, date).

With include_episodes: true it also searches the conversations themselves (your captured
sessions, in a separate list, episodes): use it when the user asks what was said or decided
earlier ("what did we decide about the cache last week") and no memory answers."""

MANAGE_MEMORY = """\
List, correct, delete or restore memories. action "list" shows the memories you can see
(optionally of one category), most used first; with status "superseded" or "deleted" it
shows the ones that were replaced or deleted instead, newest first, with superseded_by and
deleted_at. "update" changes a memory's content, category or confidence (the id stays the
same; the exact text of another memory is refused, and close ones are listed in
possible_duplicates); "delete" removes one memory; "restore" makes a superseded or deleted
memory active again (the memory that had replaced it stays); "forget_all" removes every
active memory the user saved in this project and requires confirm: true. Use update or
delete when the user says a memory is wrong or outdated, and restore when a fact was
replaced or deleted by mistake."""
