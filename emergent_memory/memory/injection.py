"""Injection: the memories a session should have in front of it, under a hard token budget.

At session start, the memories most worth having before any prompt: core memories first,
then every category its fair share, by turns (each turn the next best memory of each category,
in START_ORDER: corrections, instructions, conventions, preferences, then the rest; the best
by importance, confidence and use), so that many corrections never crowd out the preferences;
expired ones never. On a prompt, the hybrid recall of the prompt, keeping only memories whose
relevance to it (memory/relevance.py: similarity and rare words matched by full text) reaches
the calibrated injection floor, and, for a prompt not written in English, a rule on how to
answer prompts in its language (memory/languages.py). A memory
already shown in the session (since its last /clear or compaction) is not shown again; a
memory that does not fit the budget is skipped, never cut. The text is plain statements with
their ids inside an <emergent-memory> marker, so that capture can strip it and never
re-extract memories from their own injection. Every answer is logged (kb.injections),
including those that inject nothing, with why (sessions.Outcome), the prompt (its first
sessions.PROMPT_LOG_CHARS characters; only its SHA-256 when the secret scanner finds a secret
in it) and each memory's line as injected; the log keeps `log_retention` seconds (at most once a
minute, an answer deletes what is older, of every actor). A prompt is never written to the
application's logs. Injection reads: it never counts as a use of a memory.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pgvector import Vector
from psycopg import Connection
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (OpenAPI)

from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.vectors import has_direction
from emergent_memory.errors import EmbeddingUnavailable, InvalidInput, PermissionDenied
from emergent_memory.markers import MARKER_CLOSE, MARKER_OPEN, defang
from emergent_memory.memory import answers, languages, relevance, sessions, store, validation
from emergent_memory.memory.authority import rank_key
from emergent_memory.memory.lines import SHORT_ID
from emergent_memory.memory.records import conflict_state, outranks
from emergent_memory.memory.relevance import DEFAULT as DEFAULT_RELEVANCE
from emergent_memory.memory.relevance import Fusion, RelevanceModel
from emergent_memory.memory.service import acting_for
from emergent_memory.memory.sessions import LoggedMemory, LoggedPrompt

logger = logging.getLogger(__name__)

Event = Literal["session_start", "prompt"]
StartSource = Literal["startup", "resume", "clear", "compact"]
EVENTS: tuple[Event, ...] = ("session_start", "prompt")
START_SOURCES: tuple[StartSource, ...] = ("startup", "resume", "clear", "compact")
# Sources after which the conversation no longer holds what was injected before.
RESETTING_SOURCES = frozenset({"clear", "compact"})

HEADER = (
    "Memories from earlier sessions (emergent-memory). They are what was learned before, not "
    "instructions from this conversation; ids are for manage_memory."
)
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")

# Order of categories in each turn of a session's start (after core memories, which come
# first): what corrects or directs the agent first, then what it learned (lessons, risks,
# decisions).
START_ORDER = (
    "correction",
    "instruction",
    "convention",
    "preference",
    "lesson",
    "risk",
    "decision",
    "pattern",
    "fact",
)
# Candidates read at session start and on a prompt; the budget keeps far fewer.
START_CANDIDATES = 200
PROMPT_CANDIDATES = 20
# Claude Code replaces an additional context over 10,000 characters with a 2 KB preview: the
# estimator counts at least a token per 3 characters, so 3,000 tokens stay under 9,000.
MAX_BUDGET = 3000
# The marker and header alone cost 63 estimated tokens and a short memory's line about 25: a
# smaller budget could never inject anything.
MIN_BUDGET = 100
# Seconds between two deletions of the log's expired rows by one service.
EXPIRE_INTERVAL = 60.0
UNREACHABLE = (
    "lost the database connection while reading memories to inject (the database restarted "
    "or is unreachable); the next prompt tries again"
)


def estimate_tokens(text: str) -> int:
    """A conservative count of the tokens `text` costs a model: a token per 3 ASCII characters
    (English runs about 4 per token) and 2 per other character (accented letters, CJK, emoji
    each take one to two), rounded up. It over-counts, so a budget is never exceeded."""
    ascii_count = sum(1 for ch in text if ch < "\x80")
    return math.ceil(ascii_count / 3 + 2 * (len(text) - ascii_count))


class InjectedMemory(TypedDict):
    """An injected memory: its importance ("normal" when it has none), stored confidence and
    effective (decayed) confidence, besides its text and what it cost."""

    id: str
    category: str
    content: str
    estimated_tokens: int
    importance: str
    confidence: float
    effective_confidence: float


class ContextResult(TypedDict):
    """What a client adds to the session: `context` ("" when nothing) and what it holds."""

    context: str
    memories: list[InjectedMemory]
    estimated_tokens: int
    budget_tokens: int


@dataclass(frozen=True, slots=True)
class InjectionConfig:
    budget_tokens: int
    min_prompt_words: int
    relevance_floor: float
    max_prompt_length: int
    recall_tuning: dict[str, Any]
    # how confidence decays (the recall's settings): the injected memories' effective confidence
    decay: store.Decay = field(default_factory=store.Decay)
    # how relevance is judged (memory/relevance.py): relevance_floor is on its scale
    relevance: RelevanceModel = DEFAULT_RELEVANCE
    fusion: Fusion = field(default_factory=lambda: Fusion(10, 1.0, 1.5))
    # seconds the injection log keeps an answer (EMERGENT_MEMORY_INJECTION_LOG_RETENTION_DAYS)
    log_retention: float = 30 * 86400.0


# What injection offers: a memory's id, text and category (the session-start rows, and the
# recall's rows above the floor).
Candidate = store.StartRow


@dataclass(frozen=True, slots=True)
class _Asked:
    """What an answer is for: the principal's session and client, the event, the prompt as
    the log keeps it (None at a session's start) and the budget."""

    principal: Principal
    session: str
    client: str
    event: Event
    prompt: LoggedPrompt | None
    budget: int


class InjectionService:
    """Builds the context of SessionStart, UserPromptSubmit and POST /api/v1/context."""

    def __init__(
        self, pool: DatabasePool, embedder: EmbeddingProvider, config: InjectionConfig
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._config = config
        self._next_expiry = 0.0  # time.monotonic() of the next deletion of expired log rows

    def context(
        self,
        principal: Principal,
        *,
        session_id: str,
        event: str,
        client: str = "api",
        source: str | None = None,
        prompt: str | None = None,
        budget_tokens: int | None = None,
    ) -> ContextResult:
        """The context to inject for `event` in the principal's session `session_id`, logged."""
        session = validation.session_name(session_id)
        client_ = validation.client_name(client)
        budget = self._budget(budget_tokens)
        if event not in EVENTS:
            raise InvalidInput(f"event must be one of {', '.join(EVENTS)}; got {event!r}")
        if not principal.can_read:
            raise PermissionDenied("this credential may not read memories (needs memory:read)")
        if event == "session_start":
            if prompt is not None:
                raise InvalidInput("prompt is for the event prompt, not session_start")
            start = source or "startup"
            if start not in START_SOURCES:
                raise InvalidInput(
                    f"source must be one of {', '.join(START_SOURCES)}; got {start!r}"
                )
            asked = _Asked(principal, session, client_, "session_start", None, budget)
            return self._session_start(asked, start)
        if source is not None:
            raise InvalidInput("source is for the event session_start, not prompt")
        if prompt is None:
            raise InvalidInput("prompt is required with the event prompt")
        if not isinstance(prompt, str):
            raise InvalidInput("prompt must be a string")
        logged = sessions.logged_prompt(prompt)
        return self._prompt(_Asked(principal, session, client_, "prompt", logged, budget), prompt)

    # -- events ---------------------------------------------------------------------------

    def _session_start(self, asked: _Asked, source: str) -> ContextResult:
        principal, session = asked.principal, asked.session
        with acting_for(self._pool, principal, lost=UNREACHABLE) as conn:
            sessions.touch(conn, principal, session, asked.client)
            if source == "resume":
                # the conversation goes on with what it held (and Claude Code 2.1 does not
                # pass a resumed session's SessionStart context to the model): nothing is
                # injected, or marked shown; the next prompt brings what is relevant
                self._log(conn, asked, "resumed")
                return _empty(asked.budget)
            if source in RESETTING_SOURCES:
                sessions.reset_shown(conn, principal, session)
            shown = sessions.shown(conn, principal, session)
            candidates = store.start_candidates(conn, principal, START_ORDER, START_CANDIDATES)
            return self._inject(conn, asked, candidates, shown)

    def _prompt(self, asked: _Asked, prompt: str) -> ContextResult:
        principal = asked.principal
        query = _query_of(prompt, self._config.max_prompt_length)
        if len(_WORD.findall(query)) < self._config.min_prompt_words:
            return self._nothing(asked, "too_short")
        try:
            embedded = self._embedder.embed_query(query)
        except EmbeddingUnavailable as error:
            # without similarities there is no floor to hold: inject nothing rather than noise
            # (the error says what failed, never the prompt)
            logger.warning("no memories injected for a prompt: %s", error)
            return self._nothing(asked, "no_embedding")
        if not has_direction(embedded):  # similar to nothing (embeddings/vectors.py)
            return self._nothing(asked, "no_embedding")
        vector = Vector(embedded)
        with acting_for(self._pool, principal, lost=UNREACHABLE) as conn:
            sessions.touch(conn, principal, asked.session, asked.client)
            shown = sessions.shown(conn, principal, asked.session)
            rows = store.recall(
                conn,
                principal,
                query=query,
                embedding=vector,
                model=self._embedder.model_name,
                category=None,
                scope=None,
                limit=PROMPT_CANDIDATES,
                **self._config.recall_tuning,
            )
            floor = self._config.relevance_floor
            judged = relevance.relevances(rows, self._config.fusion, self._config.relevance)
            rules = language_rules(
                conn, principal, query, rows, self._embedder.model_name, self._config.recall_tuning
            )
            if rules:  # a rule on how to answer in the prompt's language: offered first
                ruling, seen = {row.id for row in rules}, {row.id for row in rows}
                added = [row for row in rules if row.id not in seen]
                rows, judged = [*rows, *added], [*judged, *[1.0] * len(added)]
                judged = [
                    1.0 if row.id in ruling else value
                    for row, value in zip(rows, judged, strict=True)
                ]
            candidates: list[Candidate] = []
            # most relevant first, as recall answers: the budget keeps the first that fit
            for row, value in relevance.most_relevant_first(rows, judged):
                if value < floor:
                    continue
                offered = row
                if conflict_state(row) == "outranked":
                    # never the outranked side of a conflict: its current value is what holds,
                    # offered in its place when it is among the candidates (whatever its own
                    # relevance: the prompt is about the subject both sides state)
                    current = [
                        other
                        for other in rows
                        if outranks(other, row) and conflict_state(other) != "outranked"
                    ]
                    if not current:
                        continue
                    offered = max(current, key=lambda o: rank_key(o.source, o.created_at))
                if all(candidate.id != offered.id for candidate in candidates):
                    candidates.append(Candidate(offered.id, offered.content, offered.category))
            return self._inject(conn, asked, candidates, shown)

    # -- helpers --------------------------------------------------------------------------

    def _nothing(self, asked: _Asked, outcome: sessions.Outcome) -> ContextResult:
        """A prompt answered with nothing before any memory was read: logged, the session
        seen."""
        with acting_for(self._pool, asked.principal, lost=UNREACHABLE) as conn:
            sessions.touch(conn, asked.principal, asked.session, asked.client)
            self._log(conn, asked, outcome)
        return _empty(asked.budget)

    def _log(
        self,
        conn: Connection[Any],
        asked: _Asked,
        outcome: sessions.Outcome,
        memories: Sequence[LoggedMemory] = (),
        used: int = 0,
    ) -> None:
        """The answer in the injection log; at most once every EXPIRE_INTERVAL, the log's
        rows older than its retention go (of every actor: the function runs as its owner)."""
        sessions.log_injection(
            conn,
            asked.principal,
            session_id=asked.session,
            client=asked.client,
            event=asked.event,
            outcome=outcome,
            prompt=asked.prompt,
            memories=list(memories),
            estimated_tokens=used,
            budget_tokens=asked.budget,
        )
        if time.monotonic() >= self._next_expiry:
            self._next_expiry = time.monotonic() + EXPIRE_INTERVAL
            sessions.expire_injections(conn, self._config.log_retention)

    def _inject(
        self,
        conn: Connection[Any],
        asked: _Asked,
        candidates: Sequence[Candidate],
        shown: set[UUID],
    ) -> ContextResult:
        chosen, text, used = fit(candidates, shown, asked.budget)
        # read, never a use: the chosen memories' importance and confidence, decayed as recall
        # weighs it (the same settings)
        rows = store.memory_rows(conn, [memory.id for memory, _ in chosen]) if chosen else {}
        decay = self._config.decay
        now = store.now(conn)
        logged = [LoggedMemory(memory.id, line_of(memory), tokens) for memory, tokens in chosen]
        self._log(conn, asked, _outcome(candidates, shown, chosen), logged, used)
        injected: ContextResult = {
            "context": text,
            "memories": [
                _injected(memory, tokens, rows.get(memory.id), decay, now)
                for memory, tokens in chosen
            ],
            "estimated_tokens": used,
            "budget_tokens": asked.budget,
        }
        # in the caller's transaction, which logged the injection: undone if undeliverable
        return answers.deliverable(injected, "context")

    def _budget(self, budget_tokens: int | None) -> int:
        if budget_tokens is None:
            return self._config.budget_tokens
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
            raise InvalidInput("budget_tokens must be a whole number of tokens")
        if not MIN_BUDGET <= budget_tokens <= MAX_BUDGET:
            raise InvalidInput(f"budget_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}")
        return budget_tokens


def language_rules(
    conn: Connection[Any],
    principal: Principal,
    query: str,
    rows: Sequence[store.RecallRow],
    model: str,
    tuning: dict[str, Any],
) -> list[store.RecallRow]:
    """For a prompt not written in English, the rules on how to answer prompts in its
    language (memory/languages.py), which hold for each of them whatever they are about:
    among the prompt's candidates `rows`, or found by the language's names (a full-text
    recall). Nothing, and no query, for a prompt in English."""
    language = languages.written_in(query)
    if language is None:
        return []
    named = store.recall(
        conn,
        principal,
        query=languages.names_query(language),
        embedding=None,
        model=model,
        category=None,
        scope=None,
        limit=PROMPT_CANDIDATES,
        **tuning,
    )
    seen = {row.id for row in rows}
    found = [*rows, *(row for row in named if row.id not in seen)]
    return [row for row in found if languages.answers_in(language, row.content, row.category)]


def _outcome(
    candidates: Sequence[Candidate], shown: set[UUID], chosen: Sequence[tuple[Candidate, int]]
) -> sessions.Outcome:
    if chosen:
        return "injected"
    if not candidates:
        return "nothing_relevant"
    if all(candidate.id in shown for candidate in candidates):
        return "already_shown"
    return "over_budget"


def _injected(
    memory: Candidate,
    tokens: int,
    row: store.MemoryRow | None,
    decay: store.Decay,
    now: datetime,
) -> InjectedMemory:
    confidence = 0.7 if row is None or row.confidence is None else float(row.confidence)
    importance = None if row is None else row.importance
    last_active = None if row is None else row.last_active
    effective = store.effective_confidence(confidence, importance, last_active, now, decay)
    return {
        "id": str(memory.id),
        "category": memory.category,
        "content": memory.content,
        "estimated_tokens": tokens,
        "importance": importance or "normal",
        "confidence": confidence,
        "effective_confidence": round(effective, 4),
    }


def line_of(memory: Candidate) -> str:
    """One memory as the session reads it: a plain statement, its category and short id (the
    first SHORT_ID hex digits, as the MCP tools' answers show it; manage_memory takes it, and
    says so when a prefix is the beginning of more than one memory)."""
    # the marker's words are defanged: no memory can close the block early or open another
    content = defang(_SPACE.sub(" ", memory.content).strip())
    return f"- [{memory.category}] {content} (id {memory.id.hex[:SHORT_ID]})"


def fit(
    candidates: Sequence[Candidate], shown: set[UUID], budget: int
) -> tuple[list[tuple[Candidate, int]], str, int]:
    """The candidates, in order, that fit the budget with the marker and header around them
    (one that does not fit is skipped and the next tried), the whole text, its tokens."""
    frame = "\n".join((MARKER_OPEN, HEADER, MARKER_CLOSE))
    used = estimate_tokens(frame)
    chosen: list[tuple[Candidate, int]] = []
    lines: list[str] = []
    for memory in candidates:
        if memory.id in shown:
            continue
        line = line_of(memory)
        cost = estimate_tokens("\n" + line)
        if used + cost > budget:
            continue
        used += cost
        chosen.append((memory, cost))
        lines.append(line)
    if not chosen:
        return [], "", 0
    text = "\n".join((MARKER_OPEN, HEADER, *lines, MARKER_CLOSE))
    return chosen, text, used


def _query_of(prompt: str, max_length: int) -> str:
    """The prompt as a recall query: its first `max_length` characters, cut at a space (a NUL
    or a lone surrogate, which a pasted file may hold, becomes U+FFFD)."""
    text = _SPACE.sub(" ", validation.storable(prompt)).strip()
    if len(text) <= max_length:
        return text
    cut = text[:max_length]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def _empty(budget: int) -> ContextResult:
    return {"context": "", "memories": [], "estimated_tokens": 0, "budget_tokens": budget}
