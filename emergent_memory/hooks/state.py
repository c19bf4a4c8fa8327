"""What the hooks remember between runs: per session, how far its transcript was sent; per
project, the sessions whose turns still wait to be sent; what the server last said of capture.

One small JSON file per session in `<data dir>/hooks/sessions/`, named by a hash of the
session id, written atomically (a temporary file renamed over it). Losing it costs only a
resend: the server drops message indices it already has. A session whose turns were left
unsent (no server, an error answer, capture off, out of time) has a marker holding its id in
`<data dir>/hooks/unsent/<project id>/` until they are sent, so that a later run of any
session of the project sends them. `capture.json` holds the last "on" or "off" the server
answered (for the session start's line and `hooks status`). Locks (`locked`) keep two runs of
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

    __slots__ = (
        "capture_off_said",
        "ended",
        "next_index",
        "notice_shown",
        "offset",
        "project_dir",
        "project_id",
        "transcript",
    )

    def __init__(
        self,
        *,
        transcript: str | None = None,
        offset: int = 0,
        next_index: int = 0,
        notice_shown: bool = False,
        project_dir: str | None = None,
        project_id: str | None = None,
        ended: bool = False,
        capture_off_said: bool = False,
    ) -> None:
        self.transcript = transcript  # the transcript path the offset belongs to
        self.offset = offset  # bytes of the transcript already sent (always at a line's end)
        self.next_index = next_index  # index of the next message in the session's sequence
        self.notice_shown = notice_shown  # the "server is not running" notice was injected
        self.project_dir = project_dir  # the directory the project id below was derived from
        self.project_id = project_id
        self.ended = ended  # SessionEnd ran: its unsent turns are sent with final
        self.capture_off_said = capture_off_said  # the "capture is off" line was injected

    def as_dict(self) -> dict[str, object]:
        """The state as saved, its fields in the order above."""
        return {
            "transcript": self.transcript,
            "offset": self.offset,
            "next_index": self.next_index,
            "notice_shown": self.notice_shown,
            "project_dir": self.project_dir,
            "project_id": self.project_id,
            "ended": self.ended,
            "capture_off_said": self.capture_off_said,
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
        ended=data.get("ended") is True,
        capture_off_said=data.get("capture_off_said") is True,
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
    """Remove the state files of sessions untouched for STATE_MAX_AGE_SECONDS, and the
    unsent markers of sessions that have no state file left."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(hooks_dir(data_dir) / "sessions"))
    except OSError:
        entries = []
    for entry in entries:
        try:
            if now - entry.stat().st_mtime > STATE_MAX_AGE_SECONDS:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    for project in _listing(unsent_dir(data_dir)):
        for marker in _listing(Path(project.path)):
            if not (hooks_dir(data_dir) / "sessions" / f"{marker.name}.json").exists():
                _unlink(Path(marker.path))
    return removed


# -- sessions whose turns wait to be sent ---------------------------------------------------------


def unsent_dir(data_dir: Path) -> Path:
    return hooks_dir(data_dir) / "unsent"


def _marker(data_dir: Path, project: str, session_id: str) -> Path:
    return unsent_dir(data_dir) / project / text_digest(session_id)


def mark_unsent(data_dir: Path, project: str, session_id: str) -> None:
    """Put the session in its project's backlog (kept where it was when it is there already,
    so that the backlog is sent oldest first). Raises OSError."""
    marker = _marker(data_dir, project, session_id)
    if not marker.exists():
        write_atomically(marker, session_id.encode("utf-8", "surrogatepass"))


def mark_sent(data_dir: Path, project: str, session_id: str) -> None:
    """Take the session out of its project's backlog."""
    _unlink(_marker(data_dir, project, session_id))


def unsent_sessions(data_dir: Path, project: str) -> list[str]:
    """The ids of the project's sessions whose turns wait to be sent, oldest first."""
    found: list[tuple[float, str]] = []
    for marker in _listing(unsent_dir(data_dir) / project):
        try:
            session_id = Path(marker.path).read_bytes().decode("utf-8", "surrogatepass")
            found.append((marker.stat().st_mtime, session_id))
        except (OSError, ValueError):
            continue
    return [session_id for _, session_id in sorted(found)]


def unsent_counts(data_dir: Path) -> dict[str, int]:
    """How many sessions wait to be sent, by project id."""
    counts = {}
    for project in _listing(unsent_dir(data_dir)):
        waiting = sum(1 for marker in _listing(Path(project.path)) if marker.is_file())
        if waiting:
            counts[project.name] = waiting
    return counts


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    """The folder's entries without the temporary files of atomic writes (none when it
    cannot be read)."""
    try:
        return [entry for entry in os.scandir(folder) if not entry.name.startswith(".")]
    except OSError:
        return []


def _unlink(path: Path) -> None:
    try:  # noqa: SIM105 - contextlib would be imported for this alone
        path.unlink()
    except OSError:
        pass


# -- what the server last said of capture ---------------------------------------------------------


def capture_path(data_dir: Path) -> Path:
    return hooks_dir(data_dir) / "capture.json"


def remember_capture(data_dir: Path, url: str, capture: str) -> None:
    """Keep what the server at `url` answered of capture ("on" or "off"), and since when;
    written only when it changes. Raises OSError."""
    known = remembered_capture(data_dir)
    if known is not None and (known["url"], known["capture"]) == (url, capture):
        return
    said = {"capture": capture, "url": url, "since": time.time()}
    write_atomically(capture_path(data_dir), json.dumps(said).encode())


def remembered_capture(data_dir: Path) -> dict[str, object] | None:
    """{"capture": "on" or "off", "url", "since": seconds since the epoch}, or None when no
    hook has heard it (or the file is unreadable)."""
    try:
        said = json.loads(capture_path(data_dir).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(said, dict) or said.get("capture") not in ("on", "off"):
        return None
    if not isinstance(said.get("url"), str) or not isinstance(said.get("since"), int | float):
        return None
    return said
