"""Capture from a hook (Stop, PreCompact, SessionEnd): the transcript's unsent part goes to
POST /api/v1/capture, in a few requests of bounded size, and the session's state remembers
how far the server accepted it (202 with "capture": "queued"). A longer transcript is sent
over the next runs.

Nothing is lost while the server cannot take it. A session whose turns are left unsent (no
server, an error answer, capture off, out of time, more than one run sends) goes into its
project's backlog (state.mark_unsent) until they are sent, and a later run of any session of
the project sends them, oldest session first, from where the server stopped taking them:
Stop and PreCompact send one request of the backlog before their own session's, and
SessionStart leaves the backlog to a detached `hook Backlog` process (run.py), so that no
session's start waits for it. A session that ended (SessionEnd ran) has its last request sent
with `final`. With capture off the server answers 202 "off" and keeps nothing: the offset does
not move, so the turns go once capture is on; the whole backlog is sent then (what the
transcripts still hold), the server's daily token budget bounding what capturing it costs.
"""

from __future__ import annotations

from pathlib import Path

from emergent_memory.hooks.client import Answer, Unreachable
from emergent_memory.hooks.config import CLIENT
from emergent_memory.hooks.state import (
    SessionState,
    load_state,
    locked,
    mark_sent,
    mark_unsent,
    remembered_capture,
    state_path,
    unsent_sessions,
)
from emergent_memory.hooks.transcript import Batch, Reading, read_batches

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from emergent_memory.hooks.run import HookRun

CAPTURE_PATH = "/api/v1/capture"
BACKLOG_EVENT = "Backlog"  # the detached run that sends a project's backlog (run.py)
# Capture requests of the run's own session: a longer transcript is sent over the next runs.
MAX_CAPTURE_REQUESTS = {"Stop": 3, "PreCompact": 3, "SessionEnd": 1}
# Requests of the project's backlog a run sends first. SessionEnd sends none: its one short
# request is for its own session's last turns.
MAX_BACKLOG_REQUESTS = {"Stop": 1, "PreCompact": 1, BACKLOG_EVENT: 40}


class TranscriptCapture:
    """Sends transcripts for one hook run: its own session's, and its project's backlog."""

    def __init__(self, run: HookRun) -> None:
        self.run = run
        self.log = run.log
        self.requests_left = 0  # of the part being sent (the backlog, or the own session)
        self.stopped = False  # the server did not take a request: the backlog waits
        self.refused_status: int | None = None  # the status of the last request not taken

    def send(self, *, final: bool) -> None:
        """The backlog's first request (capture not known to be off), then the session's
        unsent part: only what the server accepted counts as sent. With `final`, the last
        request asks the server to capture the rest now."""
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
            backlog = MAX_BACKLOG_REQUESTS.get(run.event, 0)
            said = remembered_capture(run.config.data_dir) or {}
            if backlog and (said.get("url"), said.get("capture")) != (run.config.url, "off"):
                self.send_backlog(project, backlog, skip=run.session_id)
            state.ended = state.ended or run.event == "SessionEnd"
            transcript = run.payload.get("transcript_path")
            if not isinstance(transcript, str) or not transcript:
                self.log.warning("the hook input has no transcript_path; nothing sent")
                return
            self.requests_left = MAX_CAPTURE_REQUESTS.get(run.event, 1)
            self.stopped = False
            location = str(Path(transcript).expanduser())
            self._send_session(path, state, run.session_id, project, location, final=final)

    def send_backlog(self, project: str, requests: int, *, skip: str | None = None) -> None:
        """Send the project's waiting sessions (but `skip`), oldest first, in at most
        `requests` requests; stop at the first the server does not take."""
        run = self.run
        assert run.config is not None
        self.requests_left, self.stopped = requests, False
        for session_id in unsent_sessions(run.config.data_dir, project):
            if self.stopped or self.requests_left <= 0 or run.left() < 0.1:
                return
            if session_id == skip:
                continue
            path = state_path(run.config.data_dir, session_id)
            with locked(path.with_suffix(".lock"), wait=0) as have:
                if not have:  # a run of that session is sending it now
                    continue
                state = load_state(path)
                if state.transcript is None:  # its state was lost: nothing known to send
                    mark_sent(run.config.data_dir, project, session_id)
                    continue
                self.log.info("sending the turns of an earlier session that were left unsent")
                self._send_session(
                    path, state, session_id, project, state.transcript, final=state.ended
                )

    def _send_session(
        self,
        path: Path,
        state: SessionState,
        session_id: str,
        project: str,
        transcript: str,
        *,
        final: bool,
    ) -> None:
        """Send one session's unsent part, save its state, and put it in (or take it out of)
        the project's backlog."""
        run = self.run
        assert run.config is not None
        if state.transcript != transcript:
            state.transcript, state.offset, state.next_index = transcript, 0, 0
        done = self._send_transcript(state, session_id, project, final)
        run.save(path, state)
        try:
            if done:
                mark_sent(run.config.data_dir, project, session_id)
            else:
                mark_unsent(run.config.data_dir, project, session_id)
        except OSError as error:
            self.log.warning(f"cannot note the session's unsent turns: {error.strerror}")

    def _send_transcript(
        self, state: SessionState, session_id: str, project: str, final: bool
    ) -> bool:
        """Send what the transcript holds after the state's offset; whether nothing of it is
        left unsent."""
        if self.requests_left <= 0:
            return False
        batches: list[Batch] = []
        more = False
        try:
            reading = self._reading(state)
            batches, more = reading.batches, reading.more
        except FileNotFoundError:
            # Claude Code writes the transcript after its first hooks, and at Stop it may not
            # be there yet: a later Stop, PreCompact or SessionEnd sends it. A waiting session's
            # transcript that is gone (Claude Code removes old ones) has nothing left to send.
            if session_id != self.run.session_id:
                self.log.warning(f"the transcript {state.transcript} is gone; nothing sent")
            else:
                log = self.log.info if self.run.event == "Stop" else self.log.warning
                log(f"the transcript {state.transcript} is not written yet; nothing sent")
        except OSError as error:
            self.log.warning(
                f"cannot read the transcript {state.transcript}: "
                f"{error.strerror or type(error).__name__}; nothing sent"
            )
            return False
        for number, batch in enumerate(batches, start=1):
            flush = final and number == len(batches) and not more
            if not batch.messages and not flush:
                state.offset = batch.end_offset
                continue
            if not self._sent(session_id, project, batch.first_index, batch.messages, flush):
                self._after_refusal(state, batch.first_index)
                return False
            state.offset = batch.end_offset
            state.next_index = batch.first_index + len(batch.messages)
        if (
            final
            and not batches
            and not self._sent(session_id, project, state.next_index, [], True)
        ):
            self._after_refusal(state, state.next_index)
            return False
        return not more

    def _reading(self, state: SessionState) -> Reading:
        """The unsent part of the transcript, in at most the requests left. Raises OSError."""
        assert state.transcript is not None
        location = Path(state.transcript)
        if location.stat().st_size < state.offset:
            self.log.warning("the transcript is shorter than what was sent; from 0")
            state.offset, state.next_index = 0, 0
        return read_batches(
            location, state.offset, state.next_index, max_batches=self.requests_left
        )

    def _after_refusal(self, state: SessionState, first_index: int) -> None:
        """A 400 for messages after the first is the server missing earlier ones (its
        database was reset, or an older server acknowledged them while capture was off): the
        next run sends the transcript again from its start, and the server keeps what it
        lacks."""
        if self.refused_status == 400 and first_index > 0:
            self.log.warning(
                f"the server refused messages from index {first_index}; the next run sends "
                "the transcript again from its start"
            )
            state.offset, state.next_index = 0, 0

    def _sent(
        self,
        session_id: str,
        project: str,
        first_index: int,
        messages: list[dict[str, str]],
        final: bool,
    ) -> bool:
        """Whether the server took the request: 202, and capture not off. Anything else
        stops the backlog for this run."""
        answer = self._send(session_id, project, first_index, messages, final)
        self.requests_left -= 1
        self.refused_status = None if answer is None else answer.status
        if answer is None or answer.status != 202:
            self.stopped = True
            return False
        off = _capture(answer) == "off"
        self.run.note_capture("off" if off else "on")
        if off:
            self.log.info("capture is off on the server: the transcript waits until it is on")
            self.stopped = True
        return not off

    def _send(
        self,
        session_id: str,
        project: str,
        first_index: int,
        messages: list[dict[str, str]],
        final: bool,
    ) -> Answer | None:
        """The server's answer to the capture request; None: no answer."""
        run = self.run
        if run.left() < 0.1:
            self.log.warning("out of time before sending the transcript; the next run sends it")
            return None
        body = {
            "session_id": session_id,
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
        return answer


def _capture(answer: Answer) -> str | None:
    """What a 202 says of capture: "queued" or "off" (None: it does not say)."""
    capture = answer.body.get("capture") if isinstance(answer.body, dict) else None
    return capture if isinstance(capture, str) else None
