"""An answer is delivered whole or the write behind it is undone (memory/answers.py).

Each write of the service checks its answer inside its transaction; here the last step of
each write, the one that builds and checks its answer, is made to fail after every row was
written, and nothing may remain: no version, edge, evidence, recorded use, duplicate pair,
injection or session. The agent is then told the call failed, and its retry writes once."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from functools import partial
from typing import Any

import psycopg
import pytest
from anyio.from_thread import start_blocking_portal
from fastmcp import Client

from emergent_memory.auth.principal import Principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService, answers
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.injection import InjectionService
from tests.test_injection import make_injection

# Every row a write of one actor leaves, table by table.
WRITES = """
SELECT
  (SELECT count(*) FROM kb.graph_objects WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.graph_relationships WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.memory_evidence WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.memory_recalls WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.possible_duplicates WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.injections WHERE actor_id = %(actor)s),
  (SELECT count(*) FROM kb.agent_sessions WHERE actor_id = %(actor)s)
"""


class AnswerFailed(Exception):
    """What the sabotaged answer step raises."""


@pytest.fixture
def me(principal: Principal) -> Principal:
    return Principal(uuid.uuid4(), principal.project_id)


@pytest.fixture
def writes(
    connect: Callable[[], psycopg.Connection[Any]], me: Principal
) -> Iterator[Callable[[], tuple[int, ...]]]:
    conn = connect()  # the owner's connection: every row, whatever the policies say
    yield lambda: tuple(conn.execute(WRITES, {"actor": me.actor_id}).fetchone() or ())
    conn.close()


@pytest.fixture
def failing_answers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The answer step of every write fails (after its rows were written); the operations
    whose answer was checked are listed."""
    checked: list[str] = []

    def fail(answer: Any, operation: str) -> Any:
        checked.append(operation)
        raise AnswerFailed(operation)

    monkeypatch.setattr(answers, "deliverable", fail)
    return checked


# -- the check itself --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "where"),
    [
        ({"memory": {"scores": {"similarity": math.nan}}}, "$.memory.scores.similarity"),
        ({"memories": [{"score": 1.0}, {"score": math.inf}]}, "$.memories[1].score"),
        ({"x": [[-math.inf]]}, "$.x[0][0]"),
        ({1: "a"}, "a key that is not a string in $"),
        ({"id": uuid.UUID(int=1)}, "a value of type UUID at $.id"),
        ({"ids": ("a", "b")}, "a value of type tuple at $.ids"),
    ],
)
def test_an_answer_no_edge_could_send_is_refused_naming_where_never_what(
    answer: Any, where: str
) -> None:
    with pytest.raises(answers.UndeliverableAnswer) as refused:
        answers.deliverable(answer, "save")
    assert where in str(refused.value)
    assert str(refused.value).startswith("the answer of save cannot be delivered")


def test_plain_json_with_finite_numbers_is_delivered_as_it_is() -> None:
    answer = {
        "memory": {"id": "x", "confidence": 0.7, "contexts": [], "derived_from": None},
        "similarity": -1.0,
        "count": 10**30,
        "degraded": False,
    }
    assert answers.deliverable(answer, "save") is answer


def test_the_refusal_never_quotes_the_answer() -> None:
    with pytest.raises(answers.UndeliverableAnswer) as refused:
        answers.deliverable({"content": "my password is Zx9!qLmP", "x": math.nan}, "save")
    assert "Zx9" not in str(refused.value)


# -- each write, its answer step failing after its rows -----------------------------------------


def test_a_new_memory_whose_answer_fails_is_not_saved(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    failing_answers: list[str],
) -> None:
    before = writes()
    with pytest.raises(AnswerFailed):
        service.save(me, "The user deploys with Docker Compose", "fact", context="ops")
    assert failing_answers == ["save"]
    assert writes() == before


def test_a_supersession_whose_answer_fails_leaves_the_old_memory_as_it_was(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = service.save(me, "Deploys to production happen on Fridays", "fact")["memory"]["id"]
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        service.save(me, "Deploys to production now happen on Thursdays", "fact")
    assert writes() == before
    monkeypatch.undo()
    listed = service.manage(me, "list")
    assert [m["id"] for m in listed["memories"]] == [old]  # still active, not superseded


def test_an_exact_repeat_whose_answer_fails_reinforces_nothing(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "The user prefers tabs over spaces"
    service.save(me, text, "preference")
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        service.save(me, text, "preference", source="explicit", evidence="they said so")
    assert writes() == before


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(
            lambda s, me, id_: s.update(me, id_, {"content": "Tabs, width 4"}), id="update"
        ),
        pytest.param(
            lambda s, me, id_: s.reinforce(me, id_, "seen in .editorconfig"), id="reinforce"
        ),
        pytest.param(lambda s, me, id_: s.archive(me, id_, reason="stale"), id="archive"),
        pytest.param(lambda s, me, id_: s.delete(me, id_, reason="wrong"), id="delete"),
        pytest.param(lambda s, me, id_: s.forget_all(me, confirm=True), id="forget_all"),
    ],
)
def test_a_change_whose_answer_fails_changes_nothing(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
    write: Callable[[MemoryService, Principal, str], Any],
) -> None:
    id_ = service.save(me, "The user indents with tabs", "preference")["memory"]["id"]
    before = writes()
    version = _version(service, me, id_)
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        write(service, me, id_)
    assert writes() == before
    monkeypatch.undo()
    assert _version(service, me, id_) == version


def test_a_restore_whose_answer_fails_leaves_the_memory_deleted(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    id_ = service.save(me, "The staging database listens on 5433", "fact")["memory"]["id"]
    service.delete(me, id_)
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        service.restore(me, id_)
    assert writes() == before
    monkeypatch.undo()
    assert service.manage(me, "list")["memories"] == []


def test_a_person_s_supersession_whose_answer_fails_changes_nothing(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keep = service.save(me, "The API listens on port 8080", "fact")["memory"]["id"]
    other = service.save(me, "Our cache is Redis 7", "fact")["memory"]["id"]
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        service.supersede(me, keep, other, content="The API listens on port 8081")
    assert writes() == before


def test_a_recall_whose_answer_fails_counts_no_use(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service.save(me, "The user prefers pnpm over npm", "preference")
    before = writes()
    checked: list[str] = []
    monkeypatch.setattr(answers, "deliverable", partial(_raise, checked=checked))
    with pytest.raises(AnswerFailed):
        service.recall(me, "pnpm")
    assert checked == ["recall"]
    assert writes() == before  # no row in kb.memory_recalls


def test_an_injection_whose_answer_fails_logs_nothing(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service.save(me, "The user prefers pnpm over npm in this repository", "preference")
    injection: InjectionService = make_injection(service)
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    for event, prompt in (("session_start", None), ("prompt", "which package manager, pnpm?")):
        with pytest.raises(AnswerFailed):
            injection.context(me, session_id="s-1", event=event, prompt=prompt)
    assert writes() == before  # neither the injection, nor the session, nor what was shown


def test_a_duplicate_decision_or_a_context_change_whose_answer_fails_changes_nothing(
    service: MemoryService,
    me: Principal,
    writes: Callable[[], tuple[int, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = service.save(me, "Service A listens on port 8080", "fact", context="ops")
    second = service.save(me, "Service B listens on port 8080", "fact")
    assert [d["id"] for d in second["possible_duplicates"]] == [first["memory"]["id"]]
    duplicates = DuplicateService(service.pool, service)
    browse = BrowseService(service.pool)
    pairs = duplicates.open(me)["pairs"]
    assert len(pairs) == 1
    [context] = browse.contexts(me)
    before = writes()
    monkeypatch.setattr(answers, "deliverable", _raise)
    with pytest.raises(AnswerFailed):
        duplicates.decide(me, pairs[0]["id"], "keep_both")
    with pytest.raises(AnswerFailed):
        browse.rename_context(me, context["id"], "operations")
    with pytest.raises(AnswerFailed):
        browse.set_context_priority(me, context["id"], 90)
    assert writes() == before
    monkeypatch.undo()
    assert browse.contexts(me) == [context]
    assert first["memory"]["contexts"] == ["ops"]
    assert [p["id"] for p in duplicates.open(me)["pairs"]] == [pairs[0]["id"]]  # undecided


def test_through_mcp_a_failed_answer_is_an_error_and_the_retry_saves_once(
    service: MemoryService, me: Principal, writes: Callable[[], tuple[int, ...]]
) -> None:
    server = create_server(lambda: nullcontext(service), lambda: me)
    text = "The user wants commit messages in the imperative mood"
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
    ):
        call = partial(
            client.call_tool,
            "save_memory",
            {"content": text, "category": "preference", "detail": True},
        )
        before = writes()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(answers, "deliverable", _raise)
            failed = portal.call(partial(call, raise_on_error=False))
        assert failed.is_error
        assert writes() == before
        retried = portal.call(call)
    assert retried.structured_content is not None
    assert retried.structured_content["status"] == "created"  # not "unchanged": nothing was left
    assert len(service.manage(me, "list")["memories"]) == 1


def _raise(answer: Any, operation: str, checked: list[str] | None = None) -> Any:
    if checked is not None:
        checked.append(operation)
    raise AnswerFailed(operation)


def _version(service: MemoryService, me: Principal, memory_id: str) -> tuple[Any, ...]:
    """What a memory's head says now: its content, confidence, importance and archive state."""
    listed = service.manage(me, "list", status="archived")["memories"]
    listed += service.manage(me, "list")["memories"]
    found = [m for m in listed if m["id"] == memory_id]
    return tuple((m["content"], m["confidence"], m["importance"], m["updated_at"]) for m in found)
