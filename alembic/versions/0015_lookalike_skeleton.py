"""Exact repeats are found on a skeleton of the text: look-alike characters are the same text.

Revision ID: 0015_lookalike_skeleton
Revises: 0014_finite_similarity
Create Date: 2026-11-29

A copy of a memory written with a Cyrillic "a" (U+0430) for the Latin one, in full-width
letters (U+FF4E U+FF45 ... for "never"), or struck through with a combining mark (U+0336 after
each letter) looks the same to a
person, but its fingerprint differed, so it was saved as a second memory (or, close by meaning,
superseded the original). kb.memory_fingerprint, which the stored column
kb.graph_objects.content_fingerprint (0006) is generated from, now reads a skeleton of the text:

1. NFKC normalization (full-width and other compatibility forms, ligatures: the full-width
   "fi", the ligature U+FB01 and "fi" are one text), when the database's encoding is UTF8 (PostgreSQL's normalize() refuses any other;
   elsewhere this step is left out);
2. marks and characters that do not change what the text says are removed: the combining
   overlays and lines (U+0305, U+0332, U+0333, U+0334 to U+0338: strikethrough, underline,
   overline), the combining marks for symbols (U+20D0 to U+20FF), zero-width and format
   characters (U+200B to U+200F, U+2060 to U+2064, U+FEFF) and the soft hyphen; accents are
   kept (in Vietnamese, French or Hindi they tell words apart);
3. after lower-casing, Cyrillic and Greek letters that look like Latin ones are read as those
   (LOOKALIKES: Cyrillic a, ve, ie, ka, em, en, o, er, es, te, u, ha, the Ukrainian i, je,
   dze, komi de, qa, we; Greek alpha, epsilon, iota, kappa, nu, omicron, rho, tau, upsilon,
   chi): each maps to one Latin letter and no two letters of one script to the same one, so
   two texts of one script still differ wherever they did;
4. as before: spaces collapsed and trimmed, lower case, md5.

What is stored and shown stays as written: only the fingerprint changes. Adding the function
means dropping the generated column (and its index) and adding it again, which rewrites
kb.graph_objects once. Memories that were saved as two before and now share a fingerprint stay
two (nothing is merged); a new repeat of them is a repeat of the older.

The downgrade puts back 0004's fingerprint (trim, collapse, lower-case, md5) the same way.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015_lookalike_skeleton"
down_revision: str | None = "0014_finite_similarity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Cyrillic and Greek lower-case letters that look like Latin ones (code points), and those
# Latin letters.
_LOOKALIKE_CODES = {
    0x0430: "a", 0x0432: "b", 0x0435: "e", 0x043A: "k", 0x043C: "m", 0x043D: "h", 0x043E: "o",
    0x0440: "p", 0x0441: "c", 0x0442: "t", 0x0443: "y", 0x0445: "x", 0x0456: "i", 0x0458: "j",
    0x0455: "s", 0x0501: "d", 0x051B: "q", 0x051D: "w",
    0x03B1: "a", 0x03B5: "e", 0x03B9: "i", 0x03BA: "k", 0x03BD: "v", 0x03BF: "o", 0x03C1: "p",
    0x03C4: "t", 0x03C5: "u", 0x03C7: "x",
}  # fmt: skip
LOOKALIKES = "".join(chr(code) for code in _LOOKALIKE_CODES)
LATIN = "".join(_LOOKALIKE_CODES.values())

# What does not change what a text says: overlays, lines, marks for symbols, zero-width and
# format characters, the soft hyphen (a bracket expression of PostgreSQL's regular expressions).
INVISIBLE = r"[\u0305\u0332\u0333\u0334-\u0338\u20d0-\u20ff\u200b-\u200f\u2060-\u2064\ufeff\u00ad]"

BEFORE = r"md5(lower(btrim(regexp_replace(content, '\s+', ' ', 'g'))))"


def skeleton(normalized: str) -> str:
    """The function's body, around `normalized` (the text, NFKC-normalized or not)."""
    return (
        "md5(translate(lower(btrim(regexp_replace(regexp_replace("
        f"{normalized}, '{INVISIBLE}', '', 'g'), '\\s+', ' ', 'g'))), "
        f"'{LOOKALIKES}', '{LATIN}'))"
    )


COMMENT = (
    "COMMENT ON FUNCTION kb.memory_fingerprint(text) IS 'The fingerprint of a memory''s text "
    "for exact repeats: md5 of its skeleton (NFKC when the database is UTF8; overlays, "
    "zero-width and format characters removed; spaces collapsed; lower case; Cyrillic and "
    "Greek look-alikes read as Latin letters). Migration 0015.'"
)


def _replace_fingerprint(body: str) -> None:
    op.execute("DROP INDEX kb.graph_objects_content_fingerprint_idx")
    op.execute("ALTER TABLE kb.graph_objects DROP COLUMN content_fingerprint")
    op.execute(
        "CREATE OR REPLACE FUNCTION kb.memory_fingerprint(content text) RETURNS text "
        f"LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN {body}"
    )
    op.execute(
        "ALTER TABLE kb.graph_objects ADD COLUMN content_fingerprint text "
        "GENERATED ALWAYS AS (kb.memory_fingerprint(properties ->> 'content')) STORED"
    )
    op.execute(
        "COMMENT ON COLUMN kb.graph_objects.content_fingerprint IS "
        "'kb.memory_fingerprint of the content property: finds exact repeats by index.'"
    )
    op.execute(
        "CREATE INDEX graph_objects_content_fingerprint_idx "
        "ON kb.graph_objects (content_fingerprint) WHERE is_head AND deleted_at IS NULL"
    )


def upgrade() -> None:
    encoding = op.get_bind().exec_driver_sql("SHOW server_encoding").scalar()
    normalized = "normalize(content, NFKC)" if encoding == "UTF8" else "content"
    _replace_fingerprint(skeleton(normalized))
    op.execute(COMMENT)


def downgrade() -> None:
    _replace_fingerprint(BEFORE)
    op.execute("COMMENT ON FUNCTION kb.memory_fingerprint(text) IS NULL")
