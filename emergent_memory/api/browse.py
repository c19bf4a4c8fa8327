"""The endpoints of /api/v1 around the memories: contexts (list, rename, priority),
statistics, the injection log, LLM usage and its cost, and the capture queue; each one call
of BrowseService."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator
from typing_extensions import TypedDict

from emergent_memory.api.common import Call, Endpoint, Input, NoInput, QueryInput
from emergent_memory.auth.principal import WRITE
from emergent_memory.memory.browse import (
    BrowseService,
    CaptureQueue,
    Context,
    InjectionLog,
    LLMUsage,
    Stats,
)


class ContextChange(Input):
    """A context's new name, or its new priority (0 to 100): one change per request."""

    name: str | None = None
    priority: int | None = None

    @model_validator(mode="after")
    def _one_change(self) -> ContextChange:
        if (self.name is None) == (self.priority is None):
            raise ValueError("send one of name or priority (one change per request)")
        return self


class InjectionsQuery(QueryInput):
    session_id: str | None = None
    cursor: str | None = None
    limit: int | None = None


class UsageQuery(QueryInput):
    days: int | None = None


class ContextList(TypedDict):
    contexts: list[Context]


def browse_endpoints(browse: BrowseService) -> list[Endpoint[Any, Any]]:
    def contexts(call: Call[NoInput, NoInput]) -> ContextList:
        return {"contexts": browse.contexts(call.principal)}

    def change_context(call: Call[NoInput, ContextChange]) -> Context:
        body, context_id = call.body, call.path["context_id"]
        if body.name is not None:
            return browse.rename_context(call.principal, context_id, body.name)
        assert body.priority is not None  # one of the two (ContextChange)
        return browse.set_context_priority(call.principal, context_id, body.priority)

    def stats(call: Call[NoInput, NoInput]) -> Stats:
        return browse.stats(call.principal)

    def injections(call: Call[InjectionsQuery, NoInput]) -> InjectionLog:
        query = call.query
        return browse.injections(call.principal, query.session_id, query.cursor, query.limit)

    def llm_usage(call: Call[UsageQuery, NoInput]) -> LLMUsage:
        return browse.llm_usage(call.principal, call.query.days)

    def capture_queue(call: Call[NoInput, NoInput]) -> CaptureQueue:
        return browse.capture_queue(call.principal)

    return [
        Endpoint(
            "get",
            "/contexts",
            "The token's contexts, with how many active memories each holds",
            contexts,
            ContextList,
            NoInput,
            NoInput,
            tags=("contexts",),
        ),
        Endpoint(
            "patch",
            "/contexts/{context_id}",
            "Rename a context, or set its priority (0 to 100)",
            change_context,
            Context,
            NoInput,
            ContextChange,
            scope=WRITE,
            tags=("contexts",),
        ),
        Endpoint(
            "get",
            "/stats",
            "Counts by status, category, scope and project; growth; most and least used; queues",
            stats,
            Stats,
            NoInput,
            NoInput,
            tags=("activity",),
        ),
        Endpoint(
            "get",
            "/injections",
            "The injection log: per session, the memories injected and the tokens they took",
            injections,
            InjectionLog,
            InjectionsQuery,
            NoInput,
            tags=("activity",),
        ),
        Endpoint(
            "get",
            "/llm-usage",
            "Automatic capture's LLM calls, tokens and cost per day and model",
            llm_usage,
            LLMUsage,
            UsageQuery,
            NoInput,
            tags=("activity",),
        ),
        Endpoint(
            "get",
            "/capture/queue",
            "Automatic capture's windows by status, and the dead letters with their reasons",
            capture_queue,
            CaptureQueue,
            NoInput,
            NoInput,
            tags=("activity",),
        ),
    ]
