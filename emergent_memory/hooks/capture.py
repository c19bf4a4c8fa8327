"""Capture from a hook (Stop, PreCompact, SessionEnd): the transcript's unsent part goes to
POST /api/v1/capture, in a few requests of bounded size, and the session's state remembers
how far the server accepted it (202). A longer transcript is sent over the next runs.
"""

from __future__ import annotations

from pathlib import Path

from emergent_memory.hooks.client import Unreachable
from emergent_memory.hooks.config import CLIENT
from emergent_memory.hooks.state import SessionState, load_state, locked, state_path
from emergent_memory.hooks.transcript import Batch, read_batches

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from emergent_memory.hooks.run import HookRun

CAPTURE_PATH = "/api/v1/capture"
# Capture requests per run: a longer transcript is sent over the next runs.
MAX_CAPTURE_REQUESTS = {"Stop": 3, "PreCompact": 3, "SessionEnd": 1}


class TranscriptCapture:
    """Sends one session's transcript for one hook run."""

    def __init__(self, run: HookRun) -> None:
        self.run = run
        self.log = run.log

    def send(self, *, final: bool) -> None:
        """Send the transcript's unsent part: only what the server accepted (202) counts as
        sent. With `final`, the last request asks the server to capture the rest now."""
        run = self.run
        assert run.config is not None
        path = state_path(run.config.data_dir, run.session_id)
        with locked(path.with_suffix(".lock"), wait=min(1.0, run.left() / 4)) as have:
            if not have:
                self.log.info("another run of this session's hooks is sending; left to it")
                return
            state = load_state(path)
            project = run.project_id(state)
            if project is None:
                return
            self._send_transcript(path, state, project, final)

    def _batches(self, state: SessionState) -> list[Batch]:
        """The unsent part of the transcript (none when it cannot be read: logged)."""
        transcript = self.run.payload.get("transcript_path")
        if not isinstance(transcript, str) or not transcript:
            self.log.warning("the hook input has no transcript_path; nothing sent")
            return []
        location = Path(transcript).expanduser()
        if state.transcript != str(location):
            state.transcript, state.offset, state.next_index = str(location), 0, 0
        try:
            if location.stat().st_size < state.offset:
                self.log.warning("the transcript is shorter than what was sent; from 0")
                state.offset, state.next_index = 0, 0
            return read_batches(
                location,
                state.offset,
                state.next_index,
                max_batches=MAX_CAPTURE_REQUESTS.get(self.run.event, 1),
            ).batches
        except FileNotFoundError:
            # Claude Code writes the transcript after its first hooks, and at Stop it may not
            # be there yet: a later Stop, PreCompact or SessionEnd sends it
            log = self.log.info if self.run.event == "Stop" else self.log.warning
            log(f"the transcript {location} is not written yet; nothing sent")
            return []
        except OSError as error:
            self.log.warning(
                f"cannot read the transcript {location}: "
                f"{error.strerror or type(error).__name__}; nothing sent"
            )
            return []

    def _send_transcript(self, path: Path, state: SessionState, project: str, final: bool) -> None:
        batches = self._batches(state)
        for number, batch in enumerate(batches, start=1):
            last = number == len(batches)
            if not batch.messages and not (final and last):
                state.offset = batch.end_offset
                continue
            status = self._send(project, batch.first_index, batch.messages, final and last)
            if status != 202:
                self._after_refusal(state, status, batch.first_index)
                self.run.save(path, state)
                return
            state.offset = batch.end_offset
            state.next_index = batch.first_index + len(batch.messages)
            self.run.save(path, state)
        if final and not batches:
            status = self._send(project, state.next_index, [], True)
            self._after_refusal(state, status, state.next_index)
        self.run.save(path, state)

    def _after_refusal(self, state: SessionState, status: int | None, first_index: int) -> None:
        """A 400 for messages after the first is the server missing earlier ones (a gap:
        they were sent while capture was off, or its database was reset): the next run sends
        the transcript again from its start, and the server keeps what it lacks."""
        if status == 400 and first_index > 0:
            self.log.warning(
                f"the server refused messages from index {first_index}; the next run sends "
                "the transcript again from its start"
            )
            state.offset, state.next_index = 0, 0

    def _send(
        self,
        project: str,
        first_index: int,
        messages: list[dict[str, str]],
        final: bool,
    ) -> int | None:
        """The server's status for the capture request; None: no answer."""
        run = self.run
        if run.left() < 0.1:
            self.log.warning("out of time before sending the transcript; the next run sends it")
            return None
        body = {
            "session_id": run.session_id,
            "client": CLIENT,
            "project_id": project,
            "first_index": first_index,
            "messages": messages,
            "final": final,
        }
        try:
            answer = run.post(CAPTURE_PATH, body)
        except Unreachable as error:
            what = "is not running" if error.refused else f"is unreachable ({error.reason})"
            assert run.config is not None
            self.log.warning(f"the server at {run.config.url} {what}; the transcript waits")
            return None
        if answer.status != 202:
            run.refusal(answer)
        return answer.status
