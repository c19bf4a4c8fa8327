"""Property: no operation returns, changes or reveals another actor's memory.

Hypothesis drives random sequences of saves, recalls, lists, updates, deletes, forget_all and
stats by a few actors in a few projects, with every scope, through the service: once on the
application role (row-level security and the service's checks) and once on the owner's role
(the service's checks alone: each layer must hold by itself). The model only records who owns
each memory, in which scope and project; after every step it checks that what came back was
visible to the caller, that an id the caller may not see fails exactly like an id that does
not exist, and that such a failure changed nothing.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    precondition,
    rule,
    run_state_machine_as_test,
)
from psycopg_pool import ConnectionPool

from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.errors import InvalidInput, MemoryNotFound, PermissionDenied
from emergent_memory.memory import MemoryService

WORDS = ["tabs", "spaces", "postgres", "redis", "deploy", "friday", "coffee", "vim", "port"]


@dataclass(frozen=True)
class Owner:
    actor: uuid.UUID
    project: uuid.UUID
    scope: str


def visible(owner: Owner, to: Principal) -> bool:
    """DESIGN.md 5, restated independently of the code under test."""
    if owner.scope == "global":
        return True
    if owner.actor != to.actor_id:
        return False
    return owner.scope == "user" or owner.project == to.project_id


def writable(owner: Owner, by: Principal) -> bool:
    return visible(owner, by) and (owner.scope != "global" or by.is_admin)


def same_failure(error: Exception, memory_id: str, service: MemoryService, who: Principal) -> None:
    """The error for a hidden id is the error for an id that does not exist."""
    unknown = str(uuid.uuid4())
    with pytest.raises(MemoryNotFound) as reference:
        service.delete(who, unknown)
    assert type(error) is type(reference.value)
    assert str(error).replace(memory_id, "<id>") == str(reference.value).replace(unknown, "<id>")


def attempt(operation: Callable[..., Any], *args: Any) -> Any:
    """The operation's result, or the domain error it raised (anything else propagates)."""
    try:
        return operation(*args)
    except (MemoryNotFound, PermissionDenied, InvalidInput) as error:
        return error


@pytest.mark.parametrize(
    "as_owner",
    [False, True],
    # the application role: row-level security and the service's own checks; the owner:
    # the service's checks alone (each layer must hold by itself)
    ids=["application-role", "owner-role"],
)
def test_no_operation_crosses_actors(
    make_service: Callable[..., MemoryService],
    owner_pool: ConnectionPool,
    global_memories_cleanup: None,
    as_owner: bool,
) -> None:
    def stored(memory_id: str) -> tuple[Any, ...] | None:
        """The memory's head as stored (owner's view of the truth), bypassing the service."""
        with owner_pool.connection() as conn:
            return conn.execute(
                "SELECT version, deleted_at IS NOT NULL, properties ->> 'content' "
                "FROM kb.graph_objects WHERE canonical_id = %s AND is_head",
                (memory_id,),
            ).fetchone()

    service = make_service(maintenance=as_owner)

    def scope_of(memory_id: str) -> str | None:
        with owner_pool.connection() as conn:
            row = conn.execute(
                "SELECT scope FROM kb.graph_objects WHERE canonical_id = %s AND is_head",
                (memory_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    class Isolation(RuleBasedStateMachine):
        memories = Bundle("memories")

        def __init__(self) -> None:
            super().__init__()
            # new actors and projects for every run: the model knows all of their memories
            self.actors = [uuid.uuid4() for _ in range(3)]
            self.projects = [uuid.uuid4() for _ in range(2)]
            self.owners: dict[str, Owner] = {}

        def teardown(self) -> None:
            """Global memories are everyone's: retire this run's before the next run."""
            with owner_pool.connection() as conn:
                conn.execute(
                    "UPDATE kb.graph_objects SET deleted_at = now(), delete_reason = 'test' "
                    "WHERE scope = 'global' AND actor_id = ANY(%s) AND is_head "
                    "AND deleted_at IS NULL",
                    (self.actors,),
                )

        def principal(self, actor: int, project: int) -> Principal:
            """Actor 0 holds an administrator credential (it may write global memories)."""
            scopes = {READ, WRITE} | ({ADMIN} if actor == 0 else set())
            return Principal(self.actors[actor], self.projects[project], frozenset(scopes))

        def check_visible(self, ids: list[str], who: Principal) -> None:
            for memory_id in ids:
                owner = self.owners.get(memory_id)
                if owner is None:  # not from this run: only a global memory may show up
                    assert scope_of(memory_id) == "global", f"{who} was shown {memory_id}"
                    continue
                assert visible(owner, who), f"{who} was shown {owner}'s memory {memory_id}"

        def check_refusal(
            self,
            outcome: Any,
            memory: str,
            owner: Owner,
            who: Principal,
            before: tuple[Any, ...] | None,
        ) -> None:
            """A refused update or delete: hidden ids fail like unknown ones; nothing changed."""
            if isinstance(outcome, MemoryNotFound):
                if visible(owner, who):
                    assert before is not None
                    assert before[1], "a visible live memory was reported as not found"
                else:
                    same_failure(outcome, memory, service, who)
            elif isinstance(outcome, PermissionDenied):
                assert visible(owner, who)
                assert not writable(owner, who)
            if isinstance(outcome, Exception):
                assert stored(memory) == before

        @rule(
            target=memories,
            actor=st.integers(0, 2),
            project=st.integers(0, 1),
            scope=st.sampled_from(["user", "user", "project", "global"]),
            words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=4),
        )
        def save(self, actor: int, project: int, scope: str, words: list[str]) -> str:
            who = self.principal(actor, project)
            if scope == "global" and not who.is_admin:
                with pytest.raises(PermissionDenied):
                    service.save(who, " ".join(words), "fact", scope=scope)
                scope = "user"
            result = service.save(who, " ".join(words), "fact", scope=scope)
            memory_id = result["memory"]["id"]
            if result["status"] == "unchanged":
                # an exact repeat of a memory the caller sees in that scope
                assert memory_id in self.owners
                assert visible(self.owners[memory_id], who)
            else:
                self.owners[memory_id] = Owner(who.actor_id, who.project_id, scope)
            self.check_visible(result["superseded_ids"], who)
            for old in result["superseded_ids"]:
                assert self.owners[old].scope == scope
                assert writable(self.owners[old], who)
            return memory_id

        @rule(actor=st.integers(0, 2), project=st.integers(0, 1), word=st.sampled_from(WORDS))
        def recall(self, actor: int, project: int, word: str) -> None:
            who = self.principal(actor, project)
            result = service.recall(who, word, limit=50)
            self.check_visible([m["id"] for m in result["memories"]], who)

        @rule(actor=st.integers(0, 2), project=st.integers(0, 1))
        def list_and_stats(self, actor: int, project: int) -> None:
            who = self.principal(actor, project)
            listed = service.list_memories(who, limit=100)
            self.check_visible([m["id"] for m in listed["memories"]], who)
            stats = service.stats(who)
            mine = sum(1 for owner in self.owners.values() if owner.actor == who.actor_id)
            assert stats["active"] + stats["superseded"] + stats["deleted"] <= mine

        @rule(
            memory=memories,
            actor=st.integers(0, 2),
            project=st.integers(0, 1),
            words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=4),
        )
        def update(self, memory: str, actor: int, project: int, words: list[str]) -> None:
            who = self.principal(actor, project)
            owner, before = self.owners[memory], stored(memory)
            outcome = attempt(service.update, who, memory, {"content": " ".join(words) + " x"})
            self.check_refusal(outcome, memory, owner, who, before)
            if isinstance(outcome, InvalidInput):  # said only to who may change it
                assert writable(owner, who), f"{who} learnt {outcome} of a hidden memory"
                assert before is not None
                deleted = "is deleted; restore it first" in str(outcome)
                twin = re.match(r"memory ([0-9a-f-]{36}) already says exactly this", str(outcome))
                if twin is not None:  # the new text is another memory's of its scope, who sees
                    assert not before[1]
                    assert visible(self.owners[twin.group(1)], who)
                    assert self.owners[twin.group(1)].scope == owner.scope
                else:
                    assert deleted if before[1] else "superseded" in str(outcome)
            elif not isinstance(outcome, Exception):
                assert writable(owner, who), f"{who} updated {owner}'s memory"
                assert outcome["memory"]["id"] == memory

        @rule(memory=consumes(memories), actor=st.integers(0, 2), project=st.integers(0, 1))
        def delete(self, memory: str, actor: int, project: int) -> None:
            who = self.principal(actor, project)
            owner, before = self.owners[memory], stored(memory)
            outcome = attempt(service.delete, who, memory)
            self.check_refusal(outcome, memory, owner, who, before)
            if isinstance(outcome, InvalidInput):  # said only to who may change it
                assert writable(owner, who), f"{who} learnt {outcome} of a hidden memory"
                assert before is not None
                assert before[1]
                assert "is already deleted" in str(outcome)
            elif not isinstance(outcome, Exception):
                assert writable(owner, who), f"{who} deleted {owner}'s memory"

        @precondition(lambda self: len(self.owners) > 3)
        @rule(actor=st.integers(0, 2), project=st.integers(0, 1))
        def forget_all(self, actor: int, project: int) -> None:
            who = self.principal(actor, project)
            others = {
                memory_id: stored(memory_id)
                for memory_id, owner in self.owners.items()
                if not (owner.actor == who.actor_id and owner.project == who.project_id)
                or owner.scope == "global"
            }
            service.forget_all(who, confirm=True)
            for memory_id, before in others.items():
                assert stored(memory_id) == before, f"forget_all by {who} touched {memory_id}"

    run_state_machine_as_test(
        Isolation,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
