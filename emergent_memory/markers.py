"""The `<emergent-memory>` marker around injected memories: how it is written, cut and defanged.

Injection (memory/injection.py) puts the memories it gives a session between MARKER_OPEN and
MARKER_CLOSE; capture (memory/capture_text.py on the server, hooks/transcript.py in the Claude
Code hooks) cuts every such block out of a conversation's text with `strip_markers`, so that
memories are never extracted again from their own injection. The rule:

- an opening tag is `<emergent-memory>`, in any case, with whitespace after `<` and before
  `>`, and attributes (`<emergent-memory source="hook">`); a longer name is not one
  (`<emergent-memory-cli>`, `<emergent-memory/>`), nor are attributes holding `<` or `>`;
- a block runs from an opening tag to the first closing tag (`</emergent-memory>`, any case,
  whitespace around `/`), or, unclosed, to the end of the text (a client may have cut it);
- a closing tag outside a block is removed too;
- where a block was, runs of blank lines become one and the text's ends are trimmed.

Whitespace is ASCII's (`[ \\t\\n\\r\\f\\v]`), so that the OpenCode plugin's copy of the rule
(integrations/opencode/emergent-memory.js, which cannot import this) matches the same texts:
tests/data/marker_cases.json holds the cases both are tested with.

Standard library only, and nothing else of the package: the hooks import it on every prompt.
"""

from __future__ import annotations

import re

MARKER_OPEN = "<emergent-memory>"
MARKER_CLOSE = "</emergent-memory>"

# Patterns, compiled on first use (and kept in re's cache): the hooks import this module on
# every run, and most of their runs strip nothing.
# [^<>]* stops at the next tag, so that many unclosed openers cost linear time, not quadratic.
_BLOCK = r"<\s*emergent-memory(?:\s[^<>]*)?>.*?(?:<\s*/\s*emergent-memory\s*>|\Z)"
_CLOSE = r"<\s*/\s*emergent-memory\s*>"
_FLAGS = re.ASCII | re.IGNORECASE | re.DOTALL
_BLANK_RUNS = r"\n{3,}"
ASCII_WHITESPACE = " \t\n\r\f\v"
# Any `<` that starts the marker's name, opening or closing, with any whitespace (Unicode's
# too): broader than _BLOCK and _CLOSE, so that defanged text holds no tag for any client.
# (`<\s*/?\s*` would take quadratic time over a long run of spaces.)
_MENTION = r"<\s*(?:(/)\s*)?emergent-memory"
DEFANGED = "\u2039"  # the `<` of a defanged mention: SINGLE LEFT-POINTING ANGLE QUOTATION MARK


def strip_markers(text: str) -> tuple[str, int]:
    """The text without marker blocks and stray closing tags (the module's rule), and how many
    of them were removed."""
    stripped, blocks = re.subn(_BLOCK, "", text, flags=_FLAGS)
    stripped, strays = re.subn(_CLOSE, "", stripped, flags=_FLAGS)
    if blocks:
        stripped = re.sub(_BLANK_RUNS, "\n\n", stripped).strip(ASCII_WHITESPACE)
    return stripped, blocks + strays


def defang(text: str) -> str:
    """The text with every mention of the marker's tag (`<emergent-memory`, `</emergent-memory`,
    any spacing or case) made harmless: its `<` becomes DEFANGED (U+2039). A memory's text
    inside a block can then neither close the block early nor open another."""
    return re.sub(
        _MENTION,
        lambda found: DEFANGED + (found.group(1) or "") + "emergent-memory",
        text,
        flags=re.IGNORECASE,
    )
