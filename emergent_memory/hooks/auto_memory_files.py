"""Claude Code's auto memory folders on disk: where they are, their files, their project.

Claude Code keeps a project's memory in `<config dir>/projects/<project folder>/memory/`
(the config dir is $CLAUDE_CONFIG_DIR, else ~/.claude), beside the project's session
transcripts (`<project folder>/<session id>.jsonl`). The project folder's name is the
project's directory with `/` (and other characters) turned into `-`, which cannot be turned
back: the directory is read from the `cwd` the transcripts record instead.

Standard library only: `import --from claude-code` reads folders with it, and so do the
hooks (PostToolUse, the SessionStart catch-up), which must start fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from collections.abc import Mapping

INDEX_FILE = "MEMORY.md"
MEMORY_FOLDER = "memory"
MAX_FILE_BYTES = 256_000  # a larger file is not read (no memory is that long)
MAX_TRANSCRIPT_LINES = 200  # lines of each transcript read to find its cwd
MAX_TRANSCRIPTS = 20  # the newest ones, read to find a cwd


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


def note_names(memory_folder: Path) -> list[str]:
    """The memory files of a folder: its `.md` files but the index, sorted."""
    try:
        entries = list(os.scandir(memory_folder))
    except OSError:
        return []
    return sorted(
        entry.name
        for entry in entries
        if entry.name.endswith(".md") and entry.name != INDEX_FILE and entry.is_file()
    )


def read_note(path: Path) -> tuple[str | None, str | None]:
    """(text, None), or (None, why it cannot be read): unreadable, too large, not UTF-8."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        return None, f"unreadable ({error.strerror or type(error).__name__})"
    if len(raw) > MAX_FILE_BYTES:
        return None, f"too large (over {MAX_FILE_BYTES} bytes)"
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


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
