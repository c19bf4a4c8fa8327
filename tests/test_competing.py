"""Competing answers (memory/competing.py): two memories nobody linked that answer the query
with different values; recall puts the stronger, else the newer, first."""

from __future__ import annotations

import random
import string

import pytest

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import MemoryService
from emergent_memory.memory.competing import compete, newer_value_first


def record(id_: str, content: str, day: int, source: str = "explicit", category: str = "fact"):
    return {
        "id": id_,
        "content": content,
        "category": category,
        "source": source,
        "created_at": f"2026-11-{day:02d}T10:00:00+00:00",
    }


def ids(memories: list[dict[str, str]]) -> list[str]:
    return [m["id"] for m in memories]


@pytest.mark.parametrize(
    ("older", "newer", "query"),
    [
        # a name, a port, a version, a weekday: the same subject, another value
        (
            "Ivo is on call for billing this rotation.",
            "The billing on-call engineer is Hana.",
            "who is on call for billing",
        ),
        (
            "The ledger service listens on port 4196.",
            "Port 8032 is where ledger runs now.",
            "which port does the ledger service use",
        ),
        (
            "The search database runs Postgres 14.7.",
            "Postgres 16.2 is what the search database uses.",
            "which Postgres version does the search database use",
        ),
        (
            "Releases of checkout are cut every Tuesday.",
            "The checkout release train leaves on Thursday.",
            "when are checkout releases cut",
        ),
    ],
)
def test_the_newer_of_two_competing_answers_comes_first(older: str, newer: str, query: str) -> None:
    old, new = record("old", older, 1), record("new", newer, 9)
    other = record("other", "The billing team meets on Mondays.", 5)
    assert ids(newer_value_first([old, other, new], query)) == ["new", "old", "other"]
    assert ids(newer_value_first([new, old], query)) == ["new", "old"]


@pytest.mark.parametrize(
    ("first", "second", "query"),
    [
        # another subject: the query's words are not in both
        (
            "Ivo is on call for billing this rotation.",
            "Hana is on call for search this rotation.",
            "who is on call for billing",
        ),
        # the same values: nothing competes
        (
            "Ivo is on call for billing this rotation.",
            "For billing, Ivo carries the pager this rotation.",
            "who is on call for billing",
        ),
        # no value of the same kind on both sides
        (
            "The ledger service listens on port 4196.",
            "The ledger service is owned by Nadia.",
            "ledger service port",
        ),
    ],
)
def test_memories_that_do_not_compete_keep_their_order(first: str, second: str, query: str) -> None:
    a, b = record("a", first, 1), record("b", second, 9)
    assert ids(newer_value_first([a, b], query)) == ["a", "b"]


def test_rules_hold_side_by_side() -> None:
    query = "who to ask about billing schema changes"
    older = record("a", "Ask Nadia before changing the billing schema.", 1, category="instruction")
    newer = record("b", "Ask Ivo before changing the billing schema.", 9, category="instruction")
    assert ids(newer_value_first([older, newer], query)) == ["a", "b"]
    # the same two as facts compete
    older, newer = dict(older, category="fact"), dict(newer, category="fact")
    assert ids(newer_value_first([older, newer], query)) == ["b", "a"]


def test_a_weaker_source_or_another_category_does_not_move_up() -> None:
    query = "who is on call for billing"
    told = record("told", "Ivo is on call for billing this rotation.", 1, source="explicit")
    guessed = record("guessed", "The billing on-call engineer is Hana.", 9, source="inferred")
    assert ids(newer_value_first([told, guessed], query)) == ["told", "guessed"]
    rule = record("rule", "The billing on-call engineer is Hana.", 9, category="instruction")
    assert not compete(told, rule, frozenset({"call", "bill"}))
    assert ids(newer_value_first([told, rule], query)) == ["told", "rule"]


def test_recall_puts_the_newer_competing_answer_first(
    service: MemoryService, principal: Principal
) -> None:
    name = "".join(random.choices(string.ascii_lowercase, k=8))
    # the older memory words the question more closely, so search ranks it first
    old = service.save(principal, f"Ivo is on call for {name} billing.", "fact")
    new = service.save(
        principal, f"For {name} billing the pager now goes to Hana, on call.", "fact"
    )
    assert new["superseded_ids"] == []
    order = ids(service.recall(principal, f"who is on call for {name} billing")["memories"])
    assert order.index(new["memory"]["id"]) < order.index(old["memory"]["id"])
