"""What agents are told about good memories: the memory_guidelines prompt's text, which automatic
capture's extractor follows too.

The text lives here, in the memory layer, so that both the MCP prompt (mcp/guidelines.py) and
the capture extractor (memory/extraction.py) use the same words. Each section is its own
constant; MEMORY_GUIDELINES is all of them in order.
"""

from __future__ import annotations

TITLE = "# Using emergent-memory\n\n"

WHEN_TO_RECALL = """\
## When to recall
- At the start of every task: recall what you know about the user's preferences and the
  project's conventions for what you are about to do.
- When the user refers to the past ("like last time", "as I said", "our usual setup").
- When the user asks what was said or decided in an earlier conversation and no memory has
  it: recall with options {"include_episodes": true}, which also searches the captured
  conversations.
- Before making a choice the user may have an opinion on (tools, style, structure).
- When the user asks what was true at an earlier time ("which database did we use in
  June?"): recall with options {"as_of": "2026-06-15"}, which answers what was believed
  true then.

"""

WHEN_TO_SAVE = """\
## When to save
Save immediately, in the same turn, when you learn:
- a **preference**: "The user prefers pytest fixtures over setUp methods."
- a **correction**: the user corrected what you believed or did; save the right version,
  source "corrected".
- a **convention** of the project: "API routes are named in kebab-case."
- a **fact** about the project or the user: "The staging database is stage_db on db-2."
- an **instruction** that should hold in later sessions: "Always run `make check` before
  committing."
- a **pattern** you noticed repeatedly: "The user reviews diffs before accepting changes."
- a **decision** taken with the user, with its rationale (why): "The API paginates with
  cursors, not offsets", rationale "offsets skip rows when items are added while paging".
- a **lesson** learned: what went wrong and what to do instead: "Running migrations without
  a lock timeout blocked production writes; always set lock_timeout first."
- a **risk**, a known pitfall: "Deleting a tenant leaves its S3 objects behind."

Use source "explicit" when the user said it (also when the user changes what they said
before: that replaces it), "inferred" when you concluded it, "corrected" when the user
corrected you. Use scope "user" (the default) for things true of the user everywhere,
"project" for things true only in this project.

"""

HOW_TO_WRITE = """\
## How to write a good memory
- **Specific**: "Use pnpm, not npm, in this repository" rather than "likes pnpm".
- **Self-contained**: understandable without the conversation; name the project area.
- **One fact** per memory; save two memories rather than one with "and".
- **Present tense**, stated as a fact: "The CI runs on GitHub Actions."
- **With context** when it matters: "In the billing service, amounts are in cents."
- Put related memories in a named context ("frontend", "release process").

"""

WHAT_NEVER_TO_SAVE = """\
## What never to save
- Credentials of any kind: passwords, API keys, tokens, private keys, connection strings
  with passwords. Save where the secret lives instead ("the deploy token is in the
  DEPLOY_TOKEN environment variable").
- Transient details of the current task (a file you are editing right now, a temporary
  error, today's to-do list).
- Things the user asked you to forget, or private information about other people.

"""

VERIFY_AND_REINFORCE = """\
## Verify before you act, reinforce what is confirmed
- Before acting on a remembered fact that may have changed since it was saved (a host, a
  version, a date, who owns what), and before saving something that may contradict what is
  remembered, call verify_memory with the claim as one sentence. It answers:
  - **confirmed**: a memory states the same fact, in its words or close to them; do not
    save it again.
  - **conflict**: a memory states a different value, or says the opposite. Ask the user or
    check which is true; then save the true fact saying it changed ("now", "instead of"), or
    update the wrong one.
  - **related**: memories on the same subject that neither confirm nor contradict; read them
    (a close match may say the same in other words, or the opposite).
  - **new**: nothing relevant is remembered; save it if it is worth keeping.
- When the user confirms a remembered fact ("yes, still pnpm"), or you see it confirmed (a
  config file, a passing run), reinforce it: manage_memory action "reinforce" with its
  memory_id and evidence, a short quote or where you saw it. Independent evidence raises
  confidence; the same evidence twice does not.

"""

IMPORTANCE_AND_TIME = """\
## Importance and time
These go in save_memory's options: {"importance": "high", "valid_until": "2027-03-01"}.
- importance: leave "normal" for most memories. "high" for what matters in many tasks.
  "core" only for what must shape every session ("Never push to main; open a pull request"):
  core memories are given at the start of every session and never fade. "low" for trivia.
- A memory nobody uses fades (its effective confidence drops) and, unless its importance is
  high or core, is eventually archived: out of recall, never deleted.
- valid_from / valid_until: when a fact holds only for a known time, give the dates (ISO
  8601, UTC; a date alone is midnight): "The staging database is db-2 until the migration on
  1 March" gets valid_until "2027-03-01"; a fact that starts later gets valid_from. Expired
  memories leave recall by themselves; do not delete them.
- rationale: for a decision, say why in a sentence; it is kept with the memory.

"""

KEEPING_MEMORIES_RIGHT = """\
## Keeping memories right
- If a recalled memory is wrong or outdated, update it (manage_memory action "update") or
  save the corrected fact, saying that it changed ("The API now listens on port 9090",
  "The user switched from npm to pnpm"): it then replaces the old one (give
  supersede_reason in options when you know why it changed).
- When save_memory lists close memories it kept beside the new one, read them: if one is the
  same fact or is now wrong, update or delete it (manage_memory); if it is a different fact,
  keep both. A fact saved again in other words is usually kept beside the old one (unless
  it says it changed, or repeats all the old one's words or all but one exchanged for
  another, adding no value or negation): to reword a memory, update it instead. One "kept
  beside it" comes from a stronger source (explicit > corrected > inferred), is core, or is
  of another category: what the user said is never replaced by what you inferred; ask the
  user before changing it. A value that
  differs without a change word ("now", "switched", ...) is kept beside the old one as a
  conflict: say that it changed, or save it as a correction, when it did. A change of a
  memory that is not the closest one is kept beside it as a conflict too, never replacing
  it: when both are about the same thing, supersede the old one.
- A recalled memory flagged "outranked" states another value of the same subject as another
  memory, which is current (a stronger source, or newer): trust the current one; when you
  learn which value holds, supersede the wrong one with the right one (manage_memory action
  "supersede", memory_id the one that stays, replaces the wrong one, reason why), or update
  or delete it, or ask the user. When both are true (they hold in different places or
  times), action "keep_both" with memory_id and other removes the conflict: neither is
  outranked any more.
- Delete memories the user asks you to forget (manage_memory action "delete"), with a
  reason ("the user asked to forget it"); the reason is kept.
- Archive (action "archive", with a reason) a memory that is still true but no longer
  useful; it leaves recall and stays listed.
- If a fact the user gave you is missing, it may have been replaced by a newer memory,
  archived or deleted: look with manage_memory action "list" and status "superseded",
  "archived" or "deleted" (or recall with include_archived), and bring it back with action
  "restore".
"""

READING_ANSWERS = """\

## Reading the tools' answers
- Each memory is one line: [id] category, age, flags: content. The id is short (the first 8
  or more characters of the whole id); pass it as memory_id to manage_memory as shown.
- Flags: core; conflict (another memory states another value of the same subject) or
  outranked (that other memory is the one to trust); low confidence (it faded, or was weak);
  superseded, deleted, archived or expired. Line breaks inside a memory show as " ⏎ ".
- "Nothing relevant remembered." means no memory matched well enough: do not guess one
  (recall with options {"min_relevance": 0} shows the weaker matches when you must look).
- detail: true gives every field (whole ids, scores, provenance, evidence) when you need it.
- Rarely used arguments go in options: save_memory's importance, evidence, rationale,
  valid_from, valid_until, context (a group name), related_to (ids), supersede_reason;
  recall_memories' include_episodes, include_archived, as_of, scope, min_relevance (0-1:
  lower finds more; default the calibrated floor).
"""

MEMORY_GUIDELINES = TITLE + "".join(
    (
        WHEN_TO_RECALL,
        WHEN_TO_SAVE,
        HOW_TO_WRITE,
        WHAT_NEVER_TO_SAVE,
        VERIFY_AND_REINFORCE,
        IMPORTANCE_AND_TIME,
        KEEPING_MEMORIES_RIGHT,
        READING_ANSWERS,
    )
)
