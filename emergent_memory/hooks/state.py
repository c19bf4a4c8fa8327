"""What the hooks remember between runs: per session, how far its transcript was sent.

One small JSON file per session in `<data dir>/hooks/sessions/`, named by a hash of the
session id, written atomically (a temporary file renamed over it). Losing it costs only a
resend: the server drops message indices it already has. Locks (`locked`) keep two runs of
one session, or two sessions starting the server, from racing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, a race costs a resend at most
    fcntl = None  # type: ignore[assignment]

# State files of sessions untouched for this long are removed (on SessionStart).
STATE_MAX_AGE_SECONDS = 30 * 24 * 3600


@dataclass
class SessionState:
    transcript: str | None = None  # the transcript path the offset belongs to
    offset: int = 0  # bytes of the transcript already sent (always at a line's end)
    next_index: int = 0  # index of the next message in the session's message sequence
    notice_shown: bool = False  # the "server is not running" notice was injected
    project_dir: str | None = None  # the directory the project id below was derived from
    project_id: str | None = None


def hooks_dir(data_dir: Path) -> Path:
    return data_dir / "hooks"


def state_path(data_dir: Path, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
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
    write_atomically(path, json.dumps(asdict(state)).encode())


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
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


@contextlib.contextmanager
def locked(path: Path, wait: float) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (created if needed) for the block; yields False when
    it could not be had within `wait` seconds (or cannot be taken at all)."""
    if fcntl is None:  # pragma: no cover
        yield True
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.02)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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
