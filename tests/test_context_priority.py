"""A context's priority orders a session start's injection (docs/api.md, Contexts): among
memories of one category and importance, those of a higher-priority context come first; a
memory without a context counts as the default priority (50)."""

from __future__ import annotations

import uuid

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import MemoryService
from emergent_memory.memory.browse import BrowseService
from tests.test_injection import make_injection


def test_a_higher_priority_context_is_injected_first_at_a_session_start(
    service: MemoryService, principal: Principal
) -> None:
    def fact(content: str, context: str | None = None) -> str:
        saved = service.save(principal, content, "fact", "explicit", context=context)
        return str(saved["memory"]["id"])

    low = fact("The staging cache is warmed every morning", "chores")
    plain = fact("The team's chat channel is #payments")
    high = fact("Production deploys need a change ticket", "release")
    browse = BrowseService(service.pool)
    by_name = {c["name"]: c["id"] for c in browse.contexts(principal)}
    injection = make_injection(service)

    def order() -> list[str]:
        result = injection.context(principal, session_id=str(uuid.uuid4()), event="session_start")
        return [m["id"] for m in result["memories"]]

    default = order()  # every context at 50: the newest first
    assert default == [high, plain, low]
    browse.set_context_priority(principal, by_name["release"], 10)
    browse.set_context_priority(principal, by_name["chores"], 90)
    assert order() == [low, plain, high]
    # importance still comes first: a high memory of the lowest context before the others
    service.update(principal, high, {"importance": "high"})
    assert order() == [high, low, plain]
