"""What the hooks remember between runs: per session, how far its transcript was sent.

One small JSON file per session in `<data dir>/hooks/sessions/`, named by a hash of the
session id, written atomically (a temporary file renamed over it). Losing it costs only a
resend: the server drops message indices it already has. Locks (`locked`) keep two runs of
one session, or two sessions starting the server, from racing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from emergent_memory.auth.local_ids import text_digest

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, a race costs a resend at most
    fcntl = None  # type: ignore[assignment]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from types import TracebackType

# State files of sessions untouched for this long are removed (on SessionStart).
STATE_MAX_AGE_SECONDS = 30 * 24 * 3600


class SessionState:
    """One session's state (a plain class: dataclasses would cost every hook several ms to
    import)."""

    __slots__ = ("next_index", "notice_shown", "offset", "project_dir", "project_id", "transcript")

    def __init__(
        self,
        *,
        transcript: str | None = None,
        offset: int = 0,
        next_index: int = 0,
        notice_shown: bool = False,
        project_dir: str | None = None,
        project_id: str | None = None,
    ) -> None:
        self.transcript = transcript  # the transcript path the offset belongs to
        self.offset = offset  # bytes of the transcript already sent (always at a line's end)
        self.next_index = next_index  # index of the next message in the session's sequence
        self.notice_shown = notice_shown  # the "server is not running" notice was injected
        self.project_dir = project_dir  # the directory the project id below was derived from
        self.project_id = project_id

    def as_dict(self) -> dict[str, object]:
        """The state as saved, its fields in the order above."""
        return {
            "transcript": self.transcript,
            "offset": self.offset,
            "next_index": self.next_index,
            "notice_shown": self.notice_shown,
            "project_dir": self.project_dir,
            "project_id": self.project_id,
        }


def hooks_dir(data_dir: Path) -> Path:
    return data_dir / "hooks"


def state_path(data_dir: Path, session_id: str) -> Path:
    name = text_digest(session_id)
    return hooks_dir(data_dir) / "sessions" / f"{name}.json"


def load_state(path: Path) -> SessionState:
    """The saved state, or a fresh one when there is none or it is unreadable."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return SessionState()
    if not isinstance(data, dict):
        return SessionState()
    offset, next_index = data.get("offset"), data.get("next_index")
    if not (_count(offset) and _count(next_index)):
        return SessionState()
    assert isinstance(offset, int)
    assert isinstance(next_index, int)
    return SessionState(
        transcript=_text(data.get("transcript")),
        offset=offset,
        next_index=next_index,
        notice_shown=data.get("notice_shown") is True,
        project_dir=_text(data.get("project_dir")),
        project_id=_text(data.get("project_id")),
    )


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def save_state(path: Path, state: SessionState) -> None:
    """Write the state atomically. Raises OSError when it cannot be written."""
    write_atomically(path, json.dumps(state.as_dict()).encode())


def write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:  # noqa: SIM105 - contextlib would be imported for this alone
            temporary.unlink()
        except OSError:
            pass
        raise


class locked:  # lower case as contextlib.suppress: `with locked(path, wait) as have:`
    """Hold an exclusive lock on `path` (created if needed) for the block; gives False when
    it could not be had within `wait` seconds (or cannot be taken at all). A class rather
    than a contextlib.contextmanager, which a hook would import for it alone."""

    def __init__(self, path: Path, wait: float) -> None:
        self.path = path
        self.wait = wait
        self.fd: int | None = None  # the lock file, open while the lock is held

    def __enter__(self) -> bool:
        if fcntl is None:  # pragma: no cover
            return True
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.02)
            else:
                self.fd = fd
                return True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.fd is None:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.fd = None


def remove_stale_states(data_dir: Path, now: float | None = None) -> int:
    """Remove the state files of sessions untouched for STATE_MAX_AGE_SECONDS."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(hooks_dir(data_dir) / "sessions"))
    except OSError:
        return 0
    for entry in entries:
        try:
            if now - entry.stat().st_mtime > STATE_MAX_AGE_SECONDS:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed
