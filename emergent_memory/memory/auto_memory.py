"""Claude Code's auto memory files read as memories: the file format and the mapping rule.

Claude Code keeps one Markdown file per fact in a project's memory folder
(`~/.claude/projects/<project>/memory/`), with a frontmatter of `name`, `description` and
`metadata.type` (`type` at the top level is accepted too), `[[name]]` links to other files,
and an index `MEMORY.md` that is not a memory. The frontmatter is a small YAML subset, read
permissively here: `key: value` (quoted or not), one level of nesting (`metadata:` then
indented keys) and block scalars (`>` folds, `|` keeps lines). A file without frontmatter is a
fact.

The mapping (docs/clients.md "Claude Code's own memory"):

| type        | category                                    | scope                   |
|-------------|---------------------------------------------|-------------------------|
| `user`      | preference                                  | user                    |
| `feedback`  | correction if it says something was wrong   | user                    |
|             | (CORRECTION_TERMS), else instruction        |                         |
| `project`   | fact                                        | project (of the folder) |
| `reference` | fact                                        | user                    |

The memory's text is the file's body, as written (links included); the description (Claude
Code's one-line label of the note for its index) only when there is no body. A file's key is
(origin, project folder, file name), the origin being where the folder is (the machine and
the `projects` directory holding it): the import finds the memory it made from a file by that
key (auto_memory_store).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from emergent_memory.errors import InvalidInput
from emergent_memory.memory.models import Category, MemoryScope

MAX_FOLDER_NAME = 255

INDEX_FILE = "MEMORY.md"
NOTE_SUFFIX = ".md"
TYPES = ("user", "feedback", "project", "reference")
NoteType = Literal["user", "feedback", "project", "reference"]

# Words and phrases with which a feedback note says that something was wrong (a correction,
# rather than a standing instruction), matched on the lower-cased words: "anywhere", as whole
# words or phrases; "opening a sentence", as its first word; "never in", phrases in which the
# words above say nothing was wrong ("no longer than 72 characters"). docs/clients.md lists
# them (tests/test_auto_memory.py keeps it so); labelled examples: FEEDBACK_CASES there.
CORRECTION_TERMS: dict[str, tuple[str, ...]] = {
    "anywhere": (
        "wrong",
        "wrongly",
        "incorrect",
        "incorrectly",
        "mistake",
        "mistakes",
        "mistaken",
        "mistakenly",
        "corrected",
        "correction",
        "erroneous",
        "erroneously",
        "misunderstood",
        "misread",
        "not true",
        "no longer",
        "should have been",
        "should not have been",
        "shouldn't have been",
        "i should not have",
        "i shouldn't have",
        "instead of what",
    ),
    "opening a sentence": ("actually",),
    "never in": ("no longer than",),
}

LINK = re.compile(r"\[\[([^\[\]\n|#]{1,200})(?:[|#][^\[\]\n]*)?\]\]")
_WORD = re.compile(r"[a-z']+|[.!?;:\n]")  # words, and the ends of sentences
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")
FILE_NAME = re.compile(r"^[^/\\\x00]{1,255}$")
ORIGIN = re.compile(r"^[0-9a-f]{16}$")


class NoteProblem(Exception):
    """A file that cannot become a memory; the message says why, and never quotes the file."""


@dataclass(frozen=True, slots=True)
class Note:
    """One memory file as the import reads it."""

    file_name: str
    name: str
    type: NoteType
    description: str
    body: str
    sha256: str  # of the file's text: the same text imports once

    @property
    def stem(self) -> str:
        return self.file_name.removesuffix(NOTE_SUFFIX)

    @property
    def links(self) -> list[str]:
        """The names the file links to ([[name]]), each once, in order."""
        found = dict.fromkeys(match.strip() for match in LINK.findall(self.body))
        return [name for name in found if name]

    @property
    def category(self) -> Category:
        if self.type == "user":
            return "preference"
        if self.type == "feedback":
            return "correction" if says_correction(self.text) else "instruction"
        return "fact"

    @property
    def scope(self) -> MemoryScope:
        return "project" if self.type == "project" else "user"

    @property
    def text(self) -> str:
        """The memory's text: the body; the description only when there is no body. The
        description is Claude Code's one-line label of the note for its index (often a
        heading such as "indentation", or the body again), which would only make the memory
        read worse and match other notes' labels."""
        return self.body.strip() or self.description.strip()


def is_note_file(file_name: str) -> bool:
    """Whether a file of a memory folder is a memory (a Markdown file other than the index)."""
    return file_name.endswith(NOTE_SUFFIX) and file_name != INDEX_FILE


def check_file_name(file_name: str) -> str:
    """A memory file's name: no folder in it, a Markdown file, not the index."""
    if not FILE_NAME.match(file_name) or file_name in (".", ".."):
        raise NoteProblem("not a file name (a name without folders, at most 255 characters)")
    if not is_note_file(file_name):
        raise NoteProblem(f"not a memory file (a .md file other than {INDEX_FILE})")
    return file_name


def check_folder_name(folder: object) -> str:
    """A project folder's name, as under ~/.claude/projects/: no slashes, not . or .."""
    if (
        not isinstance(folder, str)
        or not 1 <= len(folder) <= MAX_FOLDER_NAME
        or "/" in folder
        or "\\" in folder
        or "\x00" in folder
        or folder in (".", "..")
    ):
        raise InvalidInput(
            "folder: the name of the memory folder's project folder (as under "
            f"~/.claude/projects/), without slashes, 1 to {MAX_FOLDER_NAME} characters"
        )
    return folder


def check_origin(origin: object) -> str | None:
    """Where a folder is, as hooks/auto_memory_files.origin computes it: 16 hex digits."""
    if origin is None:
        return None
    if not isinstance(origin, str) or not ORIGIN.fullmatch(origin):
        raise InvalidInput(
            "origin: where the folder is, 16 lower-case hexadecimal digits (the start of the "
            "SHA-256 of the host name, a newline and the path of the projects directory)"
        )
    return origin


def shown_name(name: str) -> str:
    """A file name as an answer may show it: at most 255 characters."""
    return name[:255]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def decode(raw: bytes) -> str:
    """The file's text; raises NoteProblem when it is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NoteProblem("not UTF-8 text") from None


def parse_note(file_name: str, text: str) -> Note:
    """The note a memory file holds. Raises NoteProblem (an unknown type, nothing to save)."""
    check_file_name(file_name)
    fields, body = split_frontmatter(text)
    metadata = fields.get("metadata")
    kind = metadata.get("type") if isinstance(metadata, dict) else None
    if not kind:
        top = fields.get("type")
        kind = top if isinstance(top, str) else None
    kind = (kind or "reference").strip().lower()
    if kind not in TYPES:
        raise NoteProblem(f"unknown type (expected one of {', '.join(TYPES)})")
    name = fields.get("name")
    description = fields.get("description")
    note = Note(
        file_name=file_name,
        name=name.strip() if isinstance(name, str) and name.strip() else file_name[:-3],
        type=kind,  # type: ignore[arg-type]  # checked against TYPES above
        description=description if isinstance(description, str) else "",
        body=body,
        sha256=text_sha256(text),
    )
    if not note.text:
        raise NoteProblem("empty: neither a description nor a body")
    return note


def split_frontmatter(text: str) -> tuple[dict[str, str | dict[str, str]], str]:
    """The frontmatter's fields and the body; ({}, text) when the file has none."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return _fields(lines[1:end]), "\n".join(lines[end + 1 :])
    return {}, text  # no closing line: not a frontmatter


def _fields(lines: list[str]) -> dict[str, str | dict[str, str]]:
    fields: dict[str, str | dict[str, str]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _KEY_LINE.match(line)
        if not match or line[:1].isspace():
            continue
        key, value = match.group(1), match.group(2).strip()
        block = []
        while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
            block.append(lines[index])
            index += 1
        if value[:1] in (">", "|"):
            fields[key] = _block_scalar(value[0], block)
        elif value:
            fields[key] = _scalar(value)
        else:
            fields[key] = _nested(block)
    return fields


def _nested(lines: list[str]) -> dict[str, str]:
    nested: dict[str, str] = {}
    for line in lines:
        match = _KEY_LINE.match(line.strip())
        if match and match.group(2).strip()[:1] not in (">", "|"):
            nested[match.group(1)] = _scalar(match.group(2).strip())
    return nested


def _block_scalar(style: str, lines: list[str]) -> str:
    stripped = [line.strip() for line in lines]
    while stripped and not stripped[-1]:
        stripped.pop()
    if style == "|":
        return "\n".join(stripped)
    return " ".join(part for part in stripped if part)


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].strip()


def says_correction(text: str) -> bool:
    """Whether a feedback note says that something was wrong (CORRECTION_TERMS)."""
    tokens = _WORD.findall(text.lower().replace("\u2019", "'"))
    sentences = " ".join(token if token[0].isalpha() else "." for token in tokens)
    words = f" . {sentences} "
    for phrase in CORRECTION_TERMS["never in"]:
        words = words.replace(f" {phrase} ", " ")
    if any(f" {term} " in words for term in CORRECTION_TERMS["anywhere"]):
        return True
    return any(f" . {term} " in words for term in CORRECTION_TERMS["opening a sentence"])
