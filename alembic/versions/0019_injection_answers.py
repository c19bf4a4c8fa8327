"""The injection log records every answer, the prompt it answered and the text it injected.

Revision ID: 0019_injection_answers
Revises: 0018_capture_waiting
Create Date: 2026-12-06

- kb.injections.outcome: what the answer was. `injected` (memories went into the session), or
  why nothing did: `nothing_relevant` (no memory reached the relevance floor; at a session's
  start, no memory to offer), `already_shown` (the ones that did were shown in the session
  already), `over_budget` (none fitted the token budget), `too_short` (a prompt of too few
  words to search), `no_embedding` (the embedding model was unavailable), `resumed` (a resumed
  session's start injects nothing). Rows written before this revision all injected
  something (`injected`; a row without memories, which only a hand could have written,
  `nothing_relevant`). `outcome = 'injected'` exactly when memory_ids is not empty (the
  column's default is `injected`, so that an INSERT of before still works).
- kb.injections.prompt: the prompt a `prompt` event answered, its first 2,000 characters;
  prompt_length its whole length in characters. prompt_sha256 (hex): the SHA-256 of the
  prompt (UTF-8) instead of its text when the secret scanner found a secret in it. A prompt
  row has either the text or the digest; both NULL: not recorded (before this revision). A
  session_start row has none of the three.
- kb.injections.memory_texts and memory_tokens: per memory of memory_ids (same order), its
  line exactly as injected and the tokens estimated for it; NULL before this revision.
- kb.expire_injections(p_age), a SECURITY DEFINER function like
  kb.expire_dead_capture_windows (the injection service serves every actor): deletes the rows
  older than p_age seconds, except those that still say which memories a live session was
  shown (memories injected since the session's last /clear or compaction), which injection
  reads so as not to show a memory twice. Returns how many went. The index on created_at
  finds them.

The row-level security of the table is unchanged (0011: a row is visible to, and writable
by, the actor it belongs to, and emergent_memory_admin).

The downgrade deletes the rows that injected nothing (0018 never wrote such rows), drops the
function, the index and the columns (prompts and injected texts are lost), and restores the
table's comment.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019_injection_answers"
down_revision: str | None = "0018_capture_waiting"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"

OUTCOMES = (
    "'injected', 'nothing_relevant', 'already_shown', 'over_budget', 'too_short', "
    "'no_embedding', 'resumed'"
)

ADD_COLUMNS = f"""
ALTER TABLE kb.injections
    ADD COLUMN outcome text NOT NULL DEFAULT 'injected' CHECK (outcome IN ({OUTCOMES})),
    ADD COLUMN prompt text CHECK (prompt IS NULL OR char_length(prompt) <= 2000),
    ADD COLUMN prompt_length integer CHECK (prompt_length IS NULL OR prompt_length >= 0),
    ADD COLUMN prompt_sha256 text
        CHECK (prompt_sha256 IS NULL OR prompt_sha256 ~ '^[0-9a-f]{{64}}$'),
    ADD COLUMN memory_texts text[],
    ADD COLUMN memory_tokens integer[]
"""

# Rows of before that injected nothing (none were logged; a row written by hand may be)
NOTHING_BEFORE = (
    "UPDATE kb.injections SET outcome = 'nothing_relevant' WHERE cardinality(memory_ids) = 0"
)

ADD_CONSTRAINTS = """
ALTER TABLE kb.injections
    ADD CONSTRAINT injections_outcome_memories_check
        CHECK ((outcome = 'injected') = (cardinality(memory_ids) > 0)),
    ADD CONSTRAINT injections_prompt_or_digest_check
        CHECK (prompt IS NULL OR prompt_sha256 IS NULL),
    ADD CONSTRAINT injections_prompt_event_check
        CHECK (event = 'prompt'
               OR (prompt IS NULL AND prompt_sha256 IS NULL AND prompt_length IS NULL)),
    ADD CONSTRAINT injections_memory_texts_check
        CHECK (memory_texts IS NULL OR cardinality(memory_texts) = cardinality(memory_ids)),
    ADD CONSTRAINT injections_memory_tokens_check
        CHECK (memory_tokens IS NULL OR cardinality(memory_tokens) = cardinality(memory_ids))
"""

COLUMN_COMMENTS = {
    "outcome": "What the answer was: injected, or why nothing was (nothing_relevant, "
    "already_shown, over_budget, too_short, no_embedding, resumed).",
    "prompt": "The prompt a prompt event answered, its first 2,000 characters; NULL at a "
    "session start, when it held a secret (prompt_sha256), or before revision 0019.",
    "prompt_length": "The length of the whole prompt in characters; NULL at a session start or "
    "before revision 0019.",
    "prompt_sha256": "SHA-256 (hex) of a prompt the secret scanner found a secret in, stored "
    "instead of its text.",
    "memory_texts": "The line of each injected memory as the session received it, in the order of "
    "memory_ids; NULL before revision 0019.",
    "memory_tokens": "The tokens estimated for each injected memory, in the order of "
    "memory_ids; NULL before revision 0019.",
}

COMMENT_BEFORE = (
    "Every injection of memories into a session: which memories, how many estimated tokens, "
    "under which budget."
)
COMMENT_AFTER = (
    "Every answer of injection (session start, prompt), including those that injected "
    "nothing and why: the prompt (or its digest when it held a secret), which memories and "
    "their text as injected, how many estimated tokens, under which budget. Rows older than "
    "the retention period are deleted by kb.expire_injections."
)

EXPIRE = """
CREATE FUNCTION kb.expire_injections(p_age double precision)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    expired integer;
BEGIN
    DELETE FROM kb.injections i
    WHERE i.created_at < now() - make_interval(secs => p_age)
      AND NOT (
          cardinality(i.memory_ids) > 0
          AND EXISTS (
              SELECT 1 FROM kb.agent_sessions s
              WHERE s.actor_id = i.actor_id AND s.session_id = i.session_id
                AND i.created_at >= s.shown_since
          )
      );
    GET DIAGNOSTICS expired = ROW_COUNT;
    RETURN expired;
END
$$
"""

EXPIRE_SIGNATURE = "kb.expire_injections(double precision)"


def upgrade() -> None:
    op.execute(ADD_COLUMNS)
    op.execute(NOTHING_BEFORE)
    op.execute(ADD_CONSTRAINTS)
    for column, comment in COLUMN_COMMENTS.items():
        assert "'" not in comment
        op.execute(f"COMMENT ON COLUMN kb.injections.{column} IS '{comment}'")
    assert "'" not in COMMENT_AFTER
    op.execute(f"COMMENT ON TABLE kb.injections IS '{COMMENT_AFTER}'")
    op.execute("CREATE INDEX injections_created_idx ON kb.injections (created_at)")
    op.execute(EXPIRE)
    op.execute(f"REVOKE ALL ON FUNCTION {EXPIRE_SIGNATURE} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {EXPIRE_SIGNATURE} TO {APP}, {ADMIN}")


def downgrade() -> None:
    op.execute("DELETE FROM kb.injections WHERE outcome <> 'injected'")
    op.execute(f"DROP FUNCTION {EXPIRE_SIGNATURE}")
    op.execute("DROP INDEX kb.injections_created_idx")
    constraints = (
        "outcome_memories",
        "prompt_or_digest",
        "prompt_event",
        "memory_texts",
        "memory_tokens",
    )
    drops = [f"DROP CONSTRAINT injections_{name}_check" for name in constraints]
    drops += [f"DROP COLUMN {column}" for column in COLUMN_COMMENTS]
    op.execute("ALTER TABLE kb.injections " + ", ".join(drops))
    op.execute(f"COMMENT ON TABLE kb.injections IS '{COMMENT_BEFORE}'")
