"""Recall's full text finds the parts of a path, a host or a dotted name, not only the whole.

Revision ID: 0025_identifier_words
Revises: 0024_memory_use_counts
Create Date: 2026-12-07

PostgreSQL's text search parser keeps a file path, a host name or an email address as one
word: "pino redacts in src/logger.ts" is indexed as 'src/logger.ts', and
"crates/logsift-core/src/parse/jsonl.rs" as that whole string. A query naming the file
("what does logger.ts redact", "who knows jsonl.rs"), a directory or a word of it
("logsift-core", "jsonl") found no such memory by full text: the rare-word evidence recall
and injection rely on for identifiers (benchmarks/README.md, sections 2 and 6) was 0 for it,
and only the embedding model could find it.

kb.identifier_words(fts) reads the words of a memory's text search vector that hold a path,
host or dotted name (a letter, and '/', '.', '@' or ':' between letters or digits) and gives
back their parts, parsed and stemmed by the same 'english' configuration as the rest of the
memory: each segment between slashes ('jsonl.rs', 'logsift-core', 'src') and each run of
letters and digits ('jsonl', 'rs', 'logsift', 'core'); and, kept whole as the parser keeps
them, the tails of a path ('src/parse/jsonl.rs', 'parse/jsonl.rs') and of a dotted name
('lumen.internal' of 'staging-db.lumen.internal'), so that a query naming a shorter path or
host finds the longer one. kb.memory_text_owner, the expression
recall's full-text index is built on (migration 0008), now adds them to the memory's words,
and the index is rebuilt. The query's side is read the same way: kb.recall_memories_for's
rare-word lookups (migration 0008) take the parts of the query's own identifiers as words too,
so the query "app/src/logger.ts" finds a memory naming logger.ts or src/logger.ts, each part
weighed by its rarity like every word (src, in many memories, weighs little; logger.ts, in
one, the most). The function is written out whole in 0025_identifier_words/
recall_memories_for.sql (its comments say what changed from 0014's); its signature, settings
and grants are unchanged. The memory's own fts column and the weights of recall are as they
were.

The downgrade writes 0014's recall function and 0008's kb.memory_text_owner back, rebuilds
the index and drops kb.identifier_words.

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0025_identifier_words"
down_revision: str | None = "0024_memory_use_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "kb.graph_objects_memory_owner_fts_idx"

# The whole recall function, as this revision defines it and as its downgrade writes it back.
VERSIONS = Path(__file__).resolve().parent
RECALL_FOR = VERSIONS / "0025_identifier_words" / "recall_memories_for.sql"
RECALL_FOR_BEFORE = VERSIONS / "0014_finite_similarity" / "recall_memories_for.sql"

IDENTIFIER_WORDS = r"""
CREATE FUNCTION kb.identifier_words(p_fts tsvector)
RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    word text;
    sep text;
    parts text[];
    tail text;
    words text := '';
    tails text[] := '{}';
BEGIN
    -- most memories hold no path, host or dotted name: one look at the vector's text, not a
    -- reading of each of its words (the index's recheck calls this for every row it reads)
    IF strpos(p_fts::text, '/') = 0 AND strpos(p_fts::text, '.') = 0 THEN
        RETURN ''::tsvector;
    END IF;
    FOREACH word IN ARRAY tsvector_to_array(p_fts) LOOP
        CONTINUE WHEN word !~ '[[:alpha:]]' OR word !~ '[[:alnum:]][/.@:][[:alnum:]]';
        -- each segment between slashes and each run of letters and digits
        words := words || ' ' || translate(word, '/', ' ') || ' '
            || regexp_replace(word, '[^[:alnum:]]+', ' ', 'g');
        -- the tails of a path (src/logger.ts of app/src/logger.ts) and of a dotted name
        -- (lumen.internal of staging-db.lumen.internal), whole as the parser keeps them
        CONTINUE WHEN strpos(word, '@') > 0 OR word !~ '[[:alnum:]][/.][[:alnum:]]';
        sep := CASE WHEN strpos(word, '/') > 0 THEN '/' ELSE '.' END;
        parts := string_to_array(word, sep);
        FOR i IN 2 .. cardinality(parts) - CASE WHEN sep = '.' THEN 1 ELSE 0 END LOOP
            tail := array_to_string(parts[i:], sep);
            IF tail ~ '[[:alpha:]]' THEN
                tails := tails || tail;
            END IF;
        END LOOP;
    END LOOP;
    -- the segments and runs parsed and stemmed as the memory's own words are
    RETURN to_tsvector('english'::regconfig, words) || array_to_tsvector(tails);
END
$$
"""

IDENTIFIER_WORDS_COMMENT = (
    "COMMENT ON FUNCTION kb.identifier_words IS 'The parts of the paths, hosts and dotted "
    "names among a text search vector''s words (each segment between slashes, each run of "
    "letters and digits, the tails of a path or dotted name), parsed and stemmed as english: what recall''s full-text index adds "
    "to a memory''s words.'"
)

# 0008's function, with the identifiers' parts added before the owner's word
MEMORY_TEXT_OWNER = """
CREATE OR REPLACE FUNCTION kb.memory_text_owner(p_actor_id uuid, p_scope text, p_fts tsvector)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN p_fts || kb.identifier_words(p_fts) || array_to_tsvector(ARRAY[
    CASE WHEN p_scope = 'global' THEN '@global' ELSE '@' || coalesce(p_actor_id::text, '') END
])
"""

MEMORY_TEXT_OWNER_BEFORE = """
CREATE OR REPLACE FUNCTION kb.memory_text_owner(p_actor_id uuid, p_scope text, p_fts tsvector)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN p_fts || array_to_tsvector(ARRAY[
    CASE WHEN p_scope = 'global' THEN '@global' ELSE '@' || coalesce(p_actor_id::text, '') END
])
"""

COMMENT = (
    "COMMENT ON FUNCTION kb.memory_text_owner IS 'A memory''s text search vector, the parts "
    "of its identifiers (kb.identifier_words) and a word naming its owner (@<actor id>, or "
    "@global): recall''s full-text index.'"
)
COMMENT_BEFORE = (
    "COMMENT ON FUNCTION kb.memory_text_owner IS 'A memory''s text search vector plus "
    "a word naming its owner (@<actor id>, or @global): recall''s full-text index.'"
)


def upgrade() -> None:
    op.execute(IDENTIFIER_WORDS)
    op.execute(IDENTIFIER_WORDS_COMMENT)
    op.execute(MEMORY_TEXT_OWNER)
    op.execute(COMMENT)
    # the index holds what the function gave when each row was written: built again
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(f"REINDEX INDEX {INDEX}")
    op.execute(RECALL_FOR.read_text())


def downgrade() -> None:
    op.execute(RECALL_FOR_BEFORE.read_text())
    op.execute(MEMORY_TEXT_OWNER_BEFORE)
    op.execute(COMMENT_BEFORE)
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(f"REINDEX INDEX {INDEX}")
    op.execute("DROP FUNCTION kb.identifier_words(tsvector)")
