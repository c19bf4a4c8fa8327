"""Claude Code's auto memory folders on disk: where they are, their files, their project.

Claude Code keeps a project's memory in `<config dir>/projects/<project folder>/memory/`
(the config dir is $CLAUDE_CONFIG_DIR, else ~/.claude), beside the project's session
transcripts (`<project folder>/<session id>.jsonl`). The project folder's name is the
project's directory with `/` (and other characters) turned into `-`, which cannot be turned
back: the directory is read from the `cwd` the transcripts record instead.

A folder is known by its `origin` and its name: the same project folder name on two
machines (or under two config dirs) is two folders, whose files are other files.

Symbolic links are never followed into: a memory file that is one, or a memory folder that is
one, is not read (`a symbolic link`), so that a link planted in the folder (`x.md ->
~/.netrc`) never sends what it points to.

Standard library only: `import --from claude-code` reads folders with it, and so do the
hooks (PostToolUse, the SessionStart catch-up), which must start fast.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from collections.abc import Mapping

INDEX_FILE = "MEMORY.md"
MEMORY_FOLDER = "memory"
MAX_FILE_BYTES = 256_000  # a larger file is not read (no memory is that long)
MAX_TRANSCRIPT_LINES = 200  # lines of each transcript read to find its cwd
MAX_TRANSCRIPTS = 20  # the newest ones, read to find a cwd
SYMBOLIC_LINK = "a symbolic link"
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # 0 on Windows


def claude_config_dir(environ: Mapping[str, str]) -> Path:
    """$CLAUDE_CONFIG_DIR, else ~/.claude."""
    configured = environ.get("CLAUDE_CONFIG_DIR", "")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def project_folders(config_dir: Path) -> list[Path]:
    """The project folders under `<config dir>/projects/` that hold a memory folder."""
    try:
        entries = sorted(os.scandir(config_dir / "projects"), key=lambda entry: entry.name)
    except OSError:
        return []
    return [
        Path(entry.path)
        for entry in entries
        if entry.is_dir() and (Path(entry.path) / MEMORY_FOLDER).is_dir()
    ]


def locate(directory: Path) -> tuple[Path, Path] | None:
    """(project folder, memory folder) for a directory given as either; None when it is
    neither (no `memory/` in it, and not a folder named `memory`)."""
    if (directory / MEMORY_FOLDER).is_dir():
        return directory, directory / MEMORY_FOLDER
    if directory.is_dir() and directory.name == MEMORY_FOLDER:
        return directory.parent, directory
    return None


def origin(project_folder: Path) -> str:
    """Where a project folder is: the first 16 hex digits of the SHA-256 of `<host
    name>\n<absolute path (symbolic links resolved) of the directory holding it>`, the
    `projects` directory. The import and the hooks' sync compute it alike."""
    holder = os.path.realpath(os.path.dirname(os.path.abspath(project_folder)))
    where = f"{socket.gethostname()}\n{holder}"
    return hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def note_names(memory_folder: Path) -> list[str]:
    """The memory files of a folder: its `.md` files but the index (symbolic links included,
    for read_note to say why it does not read them), sorted."""
    try:
        entries = list(os.scandir(memory_folder))
    except OSError:
        return []
    return sorted(
        entry.name
        for entry in entries
        if entry.name.endswith(".md")
        and entry.name != INDEX_FILE
        and (entry.is_symlink() or entry.is_file())
    )


def read_note(path: Path) -> tuple[str | None, str | None]:
    """(text, None), or (None, why it cannot be read): a symbolic link (the file, or its
    memory folder), not a regular file, unreadable, too large, not UTF-8."""
    if path.is_symlink() or path.parent.is_symlink():
        return None, SYMBOLIC_LINK
    try:
        descriptor = _open_no_follow(path)
    except OSError as error:
        return None, SYMBOLIC_LINK if error.errno == errno.ELOOP else _unreadable(error)
    with os.fdopen(descriptor, "rb") as file:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None, "not a regular file"
            raw = file.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            return None, _unreadable(error)
    if len(raw) > MAX_FILE_BYTES:
        return None, f"too large (over {MAX_FILE_BYTES:,} bytes)"
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


def _open_no_follow(path: Path) -> int:
    """The file's descriptor, following no symbolic link at the folder or the file (a link
    swapped in after the check above: ELOOP), nor blocking on a FIFO."""
    if not _NO_FOLLOW or os.open not in os.supports_dir_fd:  # Windows: the check above
        return os.open(path, os.O_RDONLY)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | _NO_FOLLOW)
    try:
        return os.open(path.name, os.O_RDONLY | _NO_FOLLOW | os.O_NONBLOCK, dir_fd=folder)
    finally:
        os.close(folder)


def _unreadable(error: OSError) -> str:
    return f"unreadable ({error.strerror or type(error).__name__})"


def recorded_cwd(project_folder: Path) -> str | None:
    """The directory the project's sessions ran in, as their transcripts record it (`cwd`
    of their lines), newest transcript first; None when none records one."""
    try:
        transcripts = [
            entry
            for entry in os.scandir(project_folder)
            if entry.name.endswith(".jsonl") and entry.is_file()
        ]
    except OSError:
        return None
    transcripts.sort(key=_modified, reverse=True)
    for entry in transcripts[:MAX_TRANSCRIPTS]:
        found = _cwd_in(Path(entry.path))
        if found:
            return found
    return None


def _modified(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


def _cwd_in(transcript: Path) -> str | None:
    try:
        with transcript.open("rb") as file:
            for number, line in enumerate(file):
                if number >= MAX_TRANSCRIPT_LINES:
                    break
                if b'"cwd"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                cwd = record.get("cwd") if isinstance(record, dict) else None
                if isinstance(cwd, str) and os.path.isabs(cwd):
                    return cwd
    except OSError:
        return None
    return None
