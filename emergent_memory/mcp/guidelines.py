"""What the server tells agents: its instructions, the tools' descriptions, the guidelines."""

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
Save something worth remembering in later sessions: a preference of the user ("prefers
pnpm over npm"), a correction of something you got wrong, a project convention, a fact about
the project or the user, a standing instruction, a decision (give its rationale), a lesson
learned or a known risk. Save it immediately, when you learn it.

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
older one with manage_memory; if it is a different fact, leave both. One with kept_because
comes from a stronger source or another category: ask the user before changing it.

Optional: importance (normal by default; core only for what must shape every session, low
for trivia), evidence (what backs it: a quote or where you saw it), valid_from/valid_until
when the fact holds only for a known time ("until the migration on 1 March"), rationale (why;
for decisions), supersede_reason (why the fact changed, when it replaces an older memory)."""

RECALL_MEMORIES = """\
Search what you remember about the user and this project, by meaning and by exact words.
Call it at the start of every task, and whenever the user mentions earlier work, their
preferences, or "as I told you". Use a short natural-language query ("package manager
preference", "how to run the tests", "ERR_4471"). Results are ordered by relevance, with a
score breakdown; an empty list means nothing relevant is remembered. A memory that automatic
capture took from a conversation says which one in derived_from (session, turns, date).

With include_episodes: true it also searches the conversations themselves (your captured
sessions, in a separate list, episodes): use it when the user asks what was said or decided
earlier ("what did we decide about the cache last week") and no memory answers.

Expired memories (valid_until passed) and archived ones are left out; include_archived: true
brings archived ones back into the search. as_of (a date) answers what was believed true at
that time, including memories replaced since. Each memory shows confidence (stored) and
effective_confidence (after fading from disuse), its evidence_count and last_evidence."""

MANAGE_MEMORY = """\
List, correct, reinforce, archive, delete or restore memories. action "list" shows the
memories you can see (optionally of one category), most used first; with status
"superseded", "archived" or "deleted" it shows those instead, newest first, with
superseded_by, archived_at or deleted_at and the reason. "update" changes a memory's
content, category, confidence, importance, valid_from, valid_until or rationale (null
removes the last four; the id stays the same; the exact text of another memory is refused,
and close ones are listed in possible_duplicates); "reinforce" records evidence (required:
a short quote or where you saw it) that a memory is still true and raises its confidence;
"archive" takes a memory that is still true but no longer useful out of recall; "delete"
removes one memory; both keep an optional reason. "restore" makes a superseded, archived or
deleted memory active again (the memory that had replaced it stays); "forget_all" removes
every active and archived memory the user saved in this project and requires confirm: true.
Use reinforce when the user confirms a remembered fact, update or delete when they say a
memory is wrong or outdated, and restore when a fact was replaced, archived or deleted by
mistake."""

VERIFY_MEMORY = """\
Check a claim against what you remember before you act on it or save it: "The staging
database is on db-2". Answers a verdict: confirmed (a memory states the same fact), conflict
(a memory states a different value for the same subject: find out which is true, then save
the correction or update the wrong memory), related (memories about the same subject that
neither confirm nor contradict), or new (nothing relevant). With the matching memories, each
with its similarity, its relation (confirms, conflicts, related) and why. related is not a
confirmation: read the matches (a close related match may be a conflict the rules missed).
Read-only: nothing is saved and no use is counted. If the user confirms a confirmed fact,
reinforce it with manage_memory."""
