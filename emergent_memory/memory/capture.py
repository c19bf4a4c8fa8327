"""Automatic capture: conversations received, queued in windows, and tried without saving.

`CaptureService.enqueue` is what `POST /api/v1/capture` calls: it stores a session's new turns
(cleaned first: memory/capture_text.py; a secret is never stored, not even in the queue) and
cuts them into windows for the capture worker (memory/capture_worker.py), which asks the gate
and extractor models and saves through `MemoryService.save`. Capture is off until an Anthropic
API key is configured: then `enqueue` checks its input, stores nothing, and acknowledges
nothing (its receipt says "off", with nothing received), so a client keeps what it sent and
sends it again once capture is on.

`dry_run` runs the same models on a conversation and says what would be saved, storing
nothing (memory/capture_dry_run.py); memory/capture_admin.py is the operator's view of the
queue (status, dead letters, retry).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

import psycopg
from pgvector import Vector
from typing_extensions import TypedDict

from emergent_memory.auth.principal import Principal
from emergent_memory.db import rounds
from emergent_memory.errors import (
    EmbeddingUnavailable,
    InvalidInput,
    PermissionDenied,
)
from emergent_memory.llm import AnthropicClient
from emergent_memory.memory import capture_dry_run, capture_store, sessions, validation
from emergent_memory.memory.capture_dry_run import DryRunResult
from emergent_memory.memory.capture_store import CloseMemory
from emergent_memory.memory.capture_text import ROLES, Role, Turn, clean
from emergent_memory.memory.extraction import CLOSE_MEMORIES, Extractor
from emergent_memory.memory.service import MemoryService, acting_for

logger = logging.getLogger(__name__)

MAX_MESSAGES = 10_000  # per request (the REST route's limit too)
MAX_MESSAGE_CHARS = 1_000_000  # per message, before cleaning
CLOSE_QUERY_CHARS = 1000  # of each turn, embedded to find the memories close to a window
UNREACHABLE = (
    "lost the database connection while storing the conversation (the database restarted or "
    "is unreachable); send it again (turns already received are recognised by their index)"
)
CAPTURE_OFF = (
    "automatic capture is off: set EMERGENT_MEMORY_ANTHROPIC_API_KEY (docs/automatic-memory.md)"
)


@dataclass(frozen=True, slots=True)
class CapturedMessage:
    """One message of a conversation, as a client sends it."""

    role: Literal["user", "assistant", "tool"]
    content: str


class CaptureReceipt(TypedDict):
    """What `enqueue` did: `accepted` new turns stored, `already_received` ones the server had,
    `next_index` the index the next message of the session will have, `windows_queued` new
    windows for the worker; `capture` "off" when nothing is stored: then nothing counts as
    received, and `next_index` is the index the request started at (0 without one), where a
    client sends from again once capture is on."""

    capture: Literal["queued", "off"]
    accepted: int
    already_received: int
    next_index: int
    windows_queued: int


@dataclass(frozen=True, slots=True)
class CaptureConfig:
    """Capture's tunables (from Settings, in the composition root: app.capture_config). The
    models have no default here (Settings has them); the worker's backoff and lock timeout
    are the embedding worker's settings. `retry_after_cap`: the longest `retry-after` (s) a
    window is retried after as an attempt; a longer one parks it until then, the attempt given
    back. `dead_retention`: seconds a dead window keeps its turns (for `capture retry`)."""

    gate_model: str
    extractor_model: str
    window_turns: int = 16
    window_overlap: int = 4
    tool_output_chars: int = 1500
    daily_token_budget: int = 1_000_000
    idle_seconds: float = 600.0
    max_attempts: int = 6
    backoff_base: float = 2.0
    backoff_max: float = 600.0
    lock_timeout: float = 300.0
    batch_size: int = 4
    retry_after_cap: float = 900.0
    dead_retention: float = 7 * 86400.0

    def __post_init__(self) -> None:
        if self.window_turns < 1 or not 0 <= self.window_overlap < self.window_turns:
            raise ValueError("window_turns must be positive and window_overlap below it")
        if self.max_attempts < 1 or self.batch_size < 1 or self.daily_token_budget < 0:
            raise ValueError(
                "max_attempts and batch_size must be positive, the budget not negative"
            )
        if self.backoff_base < 0 or self.backoff_max < self.backoff_base:
            raise ValueError("backoff_base must not be negative nor exceed backoff_max")
        if self.lock_timeout <= 0 or self.idle_seconds <= 0:
            raise ValueError("lock_timeout and idle_seconds must be positive")
        if self.retry_after_cap < 0 or self.dead_retention <= 0:
            raise ValueError("retry_after_cap must not be negative, dead_retention positive")

    def backoff(self, attempts: int) -> float:
        """Seconds before the next attempt of a window that failed `attempts` times."""
        return rounds.backoff(attempts, self.backoff_base, self.backoff_max)


class CaptureService:
    """Capture for principals, on the memory service's pool; `llm` None: capture is off."""

    def __init__(
        self, memory: MemoryService, llm: AnthropicClient | None, config: CaptureConfig
    ) -> None:
        self._memory = memory
        self._llm = llm
        self._config = config
        self._extractor = (
            None
            if llm is None
            else Extractor(
                llm, gate_model=config.gate_model, extractor_model=config.extractor_model
            )
        )

    @property
    def enabled(self) -> bool:
        """Whether capture is on (an API key is configured)."""
        return self._extractor is not None

    @property
    def config(self) -> CaptureConfig:
        return self._config

    @property
    def memory(self) -> MemoryService:
        return self._memory

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            raise InvalidInput(CAPTURE_OFF)
        return self._extractor

    # -- receiving ------------------------------------------------------------------------

    def enqueue(
        self,
        principal: Principal,
        *,
        session_id: str,
        client: str,
        messages: Sequence[CapturedMessage | Any],
        first_index: int | None,
        final: bool,
    ) -> CaptureReceipt:
        """Store the session's messages not yet received (cleaned) and queue full windows
        (with `final`, the rest as well). `first_index`: the index of messages[0] in the
        session (None: right after what the server has); beyond that, it is a gap, refused."""
        session = validation.session_name(session_id)
        client_ = validation.client_name(client)
        checked = checked_messages(messages)
        start = _first_index(first_index)
        flush = validation.flag(final, "final")
        if not principal.can_write:
            raise PermissionDenied("this credential may not capture (needs memory:write)")
        if not self.enabled:
            return {
                "capture": "off",
                "accepted": 0,
                "already_received": 0,
                "next_index": start or 0,  # nothing was received: send these again
                "windows_queued": 0,
            }
        # cleaned before the transaction, which holds the session's row (the secret scan of a
        # megabyte takes seconds); messages the server already has (a resend) are cleaned too
        limit = self._config.tool_output_chars
        cleaned = [clean(m.role, m.content, tool_output_chars=limit).content for m in checked]
        with acting_for(self._memory.pool, principal, lost=UNREACHABLE) as conn:
            row = sessions.touch(conn, principal, session, client_)  # locked until commit
            have = row.turns_received
            start = have if start is None else start
            if start > have:
                raise InvalidInput(
                    f"first_index {start} leaves a gap: the server has {have} messages of "
                    f"session {session!r}; send the session's messages from index {have}"
                )
            known = min(have - start, len(checked))
            fresh = [
                Turn(start + index, checked[index].role, cleaned[index])
                for index in range(known, len(checked))
            ]
            capture_store.insert_turns(conn, principal, session, fresh)
            received = have + len(fresh)
            windowed, queued = self._cut(conn, principal, session, client_, row, received, flush)
            capture_store.advance_session(
                conn, principal, session, received=received, windowed=windowed
            )
        return {
            "capture": "queued",
            "accepted": len(fresh),
            "already_received": known,
            "next_index": received,
            "windows_queued": queued,
        }

    def _cut(
        self,
        conn: psycopg.Connection[Any],
        principal: Principal,
        session: str,
        client: str,
        row: sessions.SessionRow,
        received: int,
        final: bool,
    ) -> tuple[int, int]:
        """Queue the session's full windows (and with `final` the rest); the new count of
        windowed turns and how many windows were queued.

        A full window is queued once a turn after it has arrived: until `final` (or the idle
        cut) a session always has a turn waiting, so a session with none waiting is one that
        was flushed, whose turns no later window reads (capture_store.PRUNE_TURNS)."""
        size = self._config.window_turns
        windowed, queued = row.turns_windowed, 0
        ends = []
        while received - windowed > size:
            windowed += size
            ends.append(windowed)
        if final and received > windowed:
            windowed = received
            ends.append(windowed)
        first = row.turns_windowed
        for end in ends:
            queued += capture_store.insert_window(
                conn, principal, session_id=session, client=client, first_turn=first, end_turn=end
            )
            first = end
        return windowed, queued

    # -- what the models see --------------------------------------------------------------

    def close_memories(self, principal: Principal, turns: Sequence[Turn]) -> list[CloseMemory]:
        """The principal's own active memories closest to the user and assistant turns (at
        most CLOSE_MEMORIES, closest first); none when the embedder is down."""
        texts = [
            " ".join(turn.content.split())[:CLOSE_QUERY_CHARS]
            for turn in turns
            if turn.role != "tool" and turn.content.strip()
        ]
        if not texts:
            return []
        embedder = self._memory.embedder
        try:
            vectors = embedder.embed_documents(texts)
        except EmbeddingUnavailable as error:
            logger.warning("capture offers no existing memories to the extractor: %s", error)
            return []
        best: dict[UUID, CloseMemory] = {}
        with acting_for(self._memory.pool, principal, lost=UNREACHABLE) as conn:
            for vector in vectors:
                for memory in capture_store.nearest_own(
                    conn, principal, Vector(vector), embedder.model_name, CLOSE_MEMORIES
                ):
                    if memory.id not in best or best[memory.id].similarity < memory.similarity:
                        best[memory.id] = memory
        ranked = sorted(best.values(), key=lambda memory: (-memory.similarity, str(memory.id)))
        return ranked[:CLOSE_MEMORIES]

    # -- dry run --------------------------------------------------------------------------

    def dry_run(self, principal: Principal, messages: Sequence[CapturedMessage]) -> DryRunResult:
        """What capture would save from a conversation, window by window, through the same
        cleaning, models and rule as the worker, storing nothing at all (not even the LLM
        calls' tokens, which the result reports). Raises LLMFailed when a model fails."""
        extractor = self.extractor
        checked = checked_messages(messages)
        if not principal.can_read:
            raise PermissionDenied("this credential may not read memories (needs memory:read)")
        limit = self._config.tool_output_chars
        cleaned = [clean(m.role, m.content, tool_output_chars=limit) for m in checked]
        return capture_dry_run.dry_run(
            extractor,
            lambda turns: self.close_memories(principal, turns),
            cleaned,
            window_turns=self._config.window_turns,
            window_overlap=self._config.window_overlap,
        )


def _first_index(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput("first_index must be a whole number, 0 or more")
    return value


def checked_messages(value: object) -> list[CapturedMessage]:
    """The messages as CapturedMessage: anything with a `role` and a `content` (the REST
    route's validated bodies, a mapping) is taken, and each is checked (enqueue and dry_run
    check theirs; the CLI checks a file's before opening the service). InvalidInput names the
    first message that is not right, as `messages[i]`."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidInput("messages must be a list of {role, content}")
    if len(value) > MAX_MESSAGES:
        raise InvalidInput(
            f"messages holds {len(value)} messages; the limit is {MAX_MESSAGES} per request: "
            "send them in several requests (first_index says where each starts)"
        )
    checked: list[CapturedMessage] = []
    for position, message in enumerate(value):
        if isinstance(message, Mapping):
            role, content = message.get("role"), message.get("content")
        else:
            role, content = getattr(message, "role", None), getattr(message, "content", None)
        if role not in ROLES:
            raise InvalidInput(
                f"messages[{position}].role must be one of {', '.join(ROLES)}, "
                f"got {str(role)[:40]!r}"
            )
        if not isinstance(content, str):
            raise InvalidInput(f"messages[{position}].content must be a string")
        if len(content) > MAX_MESSAGE_CHARS:
            raise InvalidInput(
                f"messages[{position}].content is {len(content)} characters long; the limit "
                f"is {MAX_MESSAGE_CHARS}"
            )
        checked.append(CapturedMessage(_role(role), content))
    return checked


def _role(value: str) -> Role:
    for role in ROLES:
        if role == value:
            return role
    raise AssertionError(value)  # checked by the caller
