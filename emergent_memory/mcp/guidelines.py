"""What the server tells agents: its instructions, the tools' descriptions, the guidelines."""

from __future__ import annotations

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
score breakdown; an empty list means nothing relevant is remembered."""

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

MEMORY_GUIDELINES = """\
# Using emergent-memory

## When to recall
- At the start of every task: recall what you know about the user's preferences and the
  project's conventions for what you are about to do.
- When the user refers to the past ("like last time", "as I said", "our usual setup").
- Before making a choice the user may have an opinion on (tools, style, structure).

## When to save
Save immediately, in the same turn, when you learn:
- a **preference**: "The user prefers pytest fixtures over setUp methods."
- a **correction**: the user corrected you; save the right version, source "corrected".
- a **convention** of the project: "API routes are named in kebab-case."
- a **fact** about the project or the user: "The staging database is stage_db on db-2."
- an **instruction** that should hold in later sessions: "Always run `make check` before
  committing."
- a **pattern** you noticed repeatedly: "The user reviews diffs before accepting changes."

Use source "explicit" when the user said it, "inferred" when you concluded it, "corrected"
for corrections. Use scope "user" (the default) for things true of the user everywhere,
"project" for things true only in this project.

## How to write a good memory
- **Specific**: "Use pnpm, not npm, in this repository" rather than "likes pnpm".
- **Self-contained**: understandable without the conversation; name the project area.
- **One fact** per memory; save two memories rather than one with "and".
- **Present tense**, stated as a fact: "The CI runs on GitHub Actions."
- **With context** when it matters: "In the billing service, amounts are in cents."
- Put related memories in a named context ("frontend", "release process").

## What never to save
- Credentials of any kind: passwords, API keys, tokens, private keys, connection strings
  with passwords. Save where the secret lives instead ("the deploy token is in the
  DEPLOY_TOKEN environment variable").
- Transient details of the current task (a file you are editing right now, a temporary
  error, today's to-do list).
- Things the user asked you to forget, or private information about other people.

## Keeping memories right
- If a recalled memory is wrong or outdated, update it (manage_memory action "update") or
  save the corrected fact, saying that it changed ("The API now listens on port 9090",
  "The user switched from npm to pnpm"): it then replaces the old one.
- When save_memory lists possible_duplicates, read them: if one is the same fact or is now
  wrong, update or delete it (manage_memory); if it is a different fact, keep both.
- Delete memories the user asks you to forget (manage_memory action "delete").
- If a fact the user gave you is missing, it may have been replaced by a newer memory or
  deleted: look with manage_memory action "list" and status "superseded" or "deleted", and
  bring it back with action "restore".
"""
