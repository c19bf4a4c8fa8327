"""The hooks' sync of Claude Code's auto memory: the files Claude writes, edits or deletes
in the session's memory folder go to the server (POST /api/v1/import/claude-code), which
saves, updates or forgets their memories as `import --from claude-code` does.

The session's memory folder is `memory/` beside its transcript (`transcript_path`'s folder,
`<config dir>/projects/<project folder>/`). What was sent is remembered per folder in
`<data dir>/hooks/auto-memory/<hash of the folder's path>.json`: {"folder", "files": {name:
SHA-1 of its text}}. A sync compares the folder with it: files new or changed are sent, files
gone are sent as deleted; only what the server answered for is written back, so a sync that
could not reach the server is done again by the next one.

- PostToolUse (matcher Write|Edit|MultiEdit|Bash): after a Write, Edit or MultiEdit of a file
  in the folder, or a Bash command that names a memory folder (an `rm`, a `mv`), one sync.
- SessionStart: once its context is printed, when the folder differs from what was sent, a
  detached `hook AutoMemorySync` run does the sync (the catch-up of what changed while no
  hook ran: before the hooks were installed, or while the server was down), so that the
  session's start never waits for it.

A request carries the folder's name and its `origin` (auto_memory_files.origin: this
machine and the `projects` directory), so that the same folder name elsewhere is another
folder, and at most MAX_REQUEST_BYTES of JSON as the client encodes it (ASCII: a non-ASCII
character costs up to 12 bytes), well under the server's default limit of 1 MiB; the rest goes
with the next sync. A file too large to go alone is not sent (its count is logged).

No file's content, nor its name, is ever logged: counts and statuses only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from emergent_memory.auth.local_ids import text_digest
from emergent_memory.hooks.auto_memory_files import MEMORY_FOLDER, note_names, origin, read_note
from emergent_memory.hooks.client import Unreachable, error_code
from emergent_memory.hooks.state import hooks_dir, locked, write_atomically

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from typing import Any

    from emergent_memory.hooks.run import HookRun

IMPORT_PATH = "/api/v1/import/claude-code"
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
MAX_REQUEST_BYTES = 600_000  # of the request's JSON (ASCII-escaped, as the client sends it)
MAX_REQUEST_FILES = 200
REQUEST_OVERHEAD = 4_096  # the body but its files, at most (a folder name: 255 characters)


def session_memory_folder(payload: dict[str, Any]) -> Path | None:
    """The session's auto memory folder, when it exists and is not a symbolic link:
    `memory/` beside its transcript."""
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not os.path.isabs(transcript):
        return None
    folder = Path(transcript).parent / MEMORY_FOLDER
    return folder if folder.is_dir() and not folder.is_symlink() else None


def touches(payload: dict[str, Any], folder: Path) -> bool:
    """Whether the tool call of a PostToolUse input may have changed the folder."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return False
    if tool in WRITE_TOOLS:
        path = tool_input.get("file_path")
        if not isinstance(path, str) or not os.path.isabs(path):
            return False
        return os.path.realpath(os.path.dirname(path)) == os.path.realpath(folder)
    if tool == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and MEMORY_FOLDER in command
    return False


def state_file(data_dir: Path, folder: Path) -> Path:
    return hooks_dir(data_dir) / "auto-memory" / f"{text_digest(str(folder))}.json"


def sent_files(path: Path) -> dict[str, str]:
    """name -> digest of what was sent last ({} when nothing was, or the file is unreadable)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {name: digest for name, digest in files.items() if isinstance(digest, str)}


class Changes:
    """What differs between a folder and what was sent: texts to send (and the bytes each
    costs in the request), names deleted; the count of files unreadable, and of files too
    large to send."""

    __slots__ = ("deleted", "digests", "sizes", "texts", "too_large", "unreadable")

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.digests: dict[str, str] = {}
        self.deleted: list[str] = []
        self.unreadable = 0
        self.too_large = 0

    def __bool__(self) -> bool:
        return bool(self.texts or self.deleted)


def changes(folder: Path, sent: dict[str, str]) -> Changes:
    found = Changes()
    names = note_names(folder)
    for name in names:
        text, _ = read_note(folder / name)
        if text is None:
            found.unreadable += 1  # `import --from claude-code` says why it is skipped
            continue
        digest = text_digest(text)
        if sent.get(name) == digest:
            continue
        size = len(json.dumps({"name": name, "text": text})) + 2  # ", " between files
        if size > MAX_REQUEST_BYTES - REQUEST_OVERHEAD:
            found.too_large += 1  # never fits: not sent, and not pending
            continue
        found.texts[name] = text
        found.sizes[name] = size
        found.digests[name] = digest
    present = set(names)
    found.deleted = sorted(name for name in sent if name not in present)
    return found


class AutoMemorySync:
    """One sync of a session's memory folder, within the hook run's time."""

    def __init__(self, run: HookRun, folder: Path, project: str) -> None:
        assert run.config is not None
        self.run = run
        self.folder = folder
        self.project = project
        self.state = state_file(run.config.data_dir, folder)
        self.origin = origin(folder.parent)

    def pending(self) -> bool:
        return bool(changes(self.folder, sent_files(self.state)))

    def sync(self) -> None:
        lock = self.state.with_name(self.state.name + ".lock")
        with locked(lock, wait=min(1.0, max(0.0, self.run.left() / 4))) as have:
            if not have:
                self.run.log.info("another run is syncing this auto memory folder; left to it")
                return
            self._sync()

    def _sync(self) -> None:
        sent = sent_files(self.state)
        found = changes(self.folder, sent)
        if found.unreadable:
            self.run.log.warning(f"{found.unreadable} auto memory file(s) could not be read")
        if found.too_large:
            self.run.log.warning(f"{found.too_large} auto memory file(s) too large to send")
        if not found:
            return
        body, names = self._request(found)
        try:
            answer = self.run.post(IMPORT_PATH, body)
        except Unreachable as error:
            self.run.log.warning(f"auto memory not sent: the server is unreachable ({error})")
            return
        if answer.status != 200 or not isinstance(answer.body, dict):
            self.run.log.warning(
                f"auto memory not sent: the server answered {answer.status} ({error_code(answer)})"
            )
            return
        for name in names:
            sent[name] = found.digests[name]
        for name in body["deleted"]:
            sent.pop(name, None)
        self._save(sent)
        counts = answer.body.get("counts")
        if isinstance(counts, dict):
            shown = ", ".join(f"{counts[key]} {key}" for key in counts if counts[key])
            self.run.log.info(f"auto memory synced: {shown or 'nothing'}")

    def _request(self, found: Changes) -> tuple[dict[str, Any], list[str]]:
        """The request's body (at most MAX_REQUEST_BYTES of JSON, MAX_REQUEST_FILES names),
        and the names of the files it carries."""
        body: dict[str, Any] = {
            "folder": self.folder.parent.name,
            "origin": self.origin,
            "project_id": self.project,
            "files": [],
            "deleted": [],
        }
        size = len(json.dumps(body))
        for name in found.deleted[:MAX_REQUEST_FILES]:
            cost = len(json.dumps(name)) + 2  # ", " between items
            if size + cost > MAX_REQUEST_BYTES - REQUEST_OVERHEAD:
                break
            body["deleted"].append(name)
            size += cost
        names: list[str] = []
        for name, cost in found.sizes.items():
            if len(names) + len(body["deleted"]) >= MAX_REQUEST_FILES:
                break
            if size + cost > MAX_REQUEST_BYTES:
                break  # the rest goes with the next sync
            names.append(name)
            size += cost
        body["files"] = [{"name": name, "text": found.texts[name]} for name in names]
        return body, names

    def _save(self, sent: dict[str, str]) -> None:
        data = {"folder": str(self.folder), "files": sent}
        try:
            write_atomically(self.state, json.dumps(data).encode())
        except OSError as error:
            self.run.log.warning(f"cannot save the auto memory sync state: {error.strerror}")
