"""Fuzzing the four tools' arguments: whatever a client sends, the answer is a result or a
clear tool error, never an internal error, and an error writes nothing."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from typing import Any

import psycopg
import pytest
from anyio.from_thread import start_blocking_portal
from fastmcp import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY
from emergent_memory.auth.principal import Principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from emergent_memory.memory.models import (
    ACTIONS,
    CATEGORIES,
    IMPORTANCES,
    LIST_STATUSES,
    SCOPES,
    SOURCES,
)
from emergent_memory.memory.verify import VerifyConfig, VerifyService

# What FastMCP answers (mask_error_details) when a tool raises something that is not a
# ToolError: the call failed for a reason the caller is not told.
MASKED = "Error calling tool"

# -- the argument space ---------------------------------------------------------------------

# Any character, surrogates and controls included; dictionary keys leave surrogates out, as
# the in-memory client cannot encode them (the HTTP test in test_bad_input.py sends some).
ANY_CHARACTER = st.characters(exclude_categories=())
KEY_CHARACTER = st.characters(exclude_categories=("Cs",))  # not surrogates

SPECIAL_TEXTS = st.sampled_from(
    [
        "",
        " ",
        "\t\n\r",
        "\x00",
        "tabs\x00",
        "\x1b[31m",
        "\ud800",
        "!!!",
        "&|!():*",
        "<->",
        "' OR 1=1 --",
        "'); DELETE FROM kb.graph_objects; --",
        "%s %(actor_id)s {}",
        "AKIAIOSFODNN7REALKEY",
        "x" * 2000,
        "x" * 2001,
        "z" * 100_000,
        "\U0001f600" * 2000,
    ]
)
SENTENCES = st.sampled_from(
    [
        "The user prefers tabs over spaces",
        "The project deploys with Docker Compose",
        "Error ERR_4471 means the licence server is unreachable",
        "tabs",
    ]
)
TEXTS = st.one_of(SENTENCES, st.text(ANY_CHARACTER, max_size=40), SPECIAL_TEXTS)
INTEGERS = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 50, 51, 100, 101, 2**31, 2**63, -(2**63), 10**30, "huge"]).map(
        # more digits than JSON parsers take (made late: Python will not even repr it)
        lambda value: 10**5000 if value == "huge" else value
    ),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), INTEGERS, st.floats(), st.text(ANY_CHARACTER, max_size=20)
)
ANY_JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(KEY_CHARACTER, max_size=8), children, max_size=4),
    ),
    max_leaves=8,
)
# Moments as the lifecycle parameters take them (valid_from, valid_until, as_of), and ones
# they refuse: out of range once in UTC, impossible dates, words.
MOMENTS = st.one_of(
    st.sampled_from(
        [
            "2026-03-01",
            "2026-03-01T09:30:00Z",
            "2026-03-01T09:30:00+14:00",
            "2026-03-01T09:30:00",
            "9999-12-31T23:59:59-14:00",
            "0001-01-01T00:00:00+14:00",
            "2026-02-30",
            "yesterday",
        ]
    ),
    st.datetimes().map(lambda moment: moment.isoformat()),
    TEXTS,
)
DROP = object()  # a mutation that leaves the parameter out


def ids(known: list[str]) -> st.SearchStrategy[str]:
    """Ids the caller may use, ids it may not, unknown ones, and spellings of them."""
    real = st.sampled_from(known)
    return st.one_of(
        real,
        real,
        st.uuids().map(str),
        real.map(lambda id_: "{" + id_ + "}"),
        real.map(lambda id_: "urn:uuid:" + id_),
        real.map(lambda id_: id_.replace("-", "").upper()),
        real.map(lambda id_: id_[:-1]),
        real.map(lambda id_: " " + id_),
    )


def updates(known_texts: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    field = {
        "content": known_texts,
        "category": st.one_of(st.sampled_from(CATEGORIES), TEXTS),
        "confidence": st.one_of(st.floats(0, 1), st.floats(), INTEGERS, ANY_JSON),
    }
    return st.one_of(
        st.fixed_dictionaries({}, optional=field).filter(bool),
        st.dictionaries(st.text(KEY_CHARACTER, max_size=12), ANY_JSON, max_size=3),
    )


def arguments(tool: str, known: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """A plausible call of the tool, then up to two parameters replaced by anything (any
    JSON, odd text, a parameter the tool does not have) or left out."""
    id_ = ids(known)
    category = st.sampled_from(CATEGORIES)
    required: dict[str, st.SearchStrategy[Any]]
    optional: dict[str, st.SearchStrategy[Any]]
    if tool == "save_memory":
        required = {"content": TEXTS, "category": category}
        optional = {
            "source": st.sampled_from(SOURCES),
            "scope": st.sampled_from(SCOPES),
            "options": st.fixed_dictionaries(
                {},
                optional={
                    "context": st.one_of(st.sampled_from(["frontend", " Frontend  "]), TEXTS),
                    "related_to": st.lists(id_, max_size=3)
                    | st.lists(st.uuids().map(str), max_size=22),
                    "importance": st.sampled_from(IMPORTANCES),
                    "evidence": TEXTS,
                    "valid_from": MOMENTS,
                    "valid_until": MOMENTS,
                    "rationale": TEXTS,
                },
            ),
            "detail": st.booleans(),
        }
    elif tool == "recall_memories":
        required = {"query": TEXTS}
        optional = {
            "category": category,
            "limit": st.integers(1, 50),
            "options": st.fixed_dictionaries(
                {},
                optional={
                    "scope": st.sampled_from(SCOPES),
                    "include_archived": st.booleans(),
                    "include_episodes": st.booleans(),
                    "as_of": MOMENTS,
                },
            ),
            "detail": st.booleans(),
        }
    elif tool == "verify_memory":
        required = {"claim": TEXTS}
        optional = {
            "category": category,
            "scope": st.sampled_from(SCOPES),
            "limit": st.integers(1, 20),
            "detail": st.booleans(),
        }
    else:
        required = {"action": st.sampled_from(ACTIONS)}
        optional = {
            "memory_id": id_,
            "updates": updates(TEXTS),
            "category": category,
            "limit": st.integers(1, 100),
            "confirm": st.booleans(),
            "status": st.sampled_from(LIST_STATUSES),
            "evidence": TEXTS,
            "reason": TEXTS,
            "detail": st.booleans(),
        }
    names = [*required, *optional, "actor_id", "project_id", "scopes"]
    mutations = st.lists(
        st.tuples(st.sampled_from(names), st.one_of(st.just(DROP), ANY_JSON, TEXTS, INTEGERS)),
        max_size=2,
    )

    def mutated(call: dict[str, Any], changes: list[tuple[str, Any]]) -> dict[str, Any]:
        call = dict(call)
        for name, value in changes:
            if value is DROP:
                call.pop(name, None)
            else:
                call[name] = value
        return call

    return st.builds(mutated, st.fixed_dictionaries(required, optional=optional), mutations)


# -- the property ---------------------------------------------------------------------------


class ErrorRecords(logging.Handler):
    """Records logged with a traceback: the sign of an internal error, masked or not."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.getMessage().startswith("internal error"):
            self.records.append(record)


@contextmanager
def internal_errors() -> Iterator[ErrorRecords]:
    handler = ErrorRecords()
    loggers = [logging.getLogger("emergent_memory"), logging.getLogger("fastmcp")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


WRITES = """
SELECT
  (SELECT count(*) FROM kb.graph_objects WHERE actor_id = %(actor)s OR project_id = %(project)s),
  (SELECT count(*) FROM kb.graph_relationships
   WHERE actor_id = %(actor)s OR project_id = %(project)s),
  (SELECT count(*) FROM kb.memory_recalls WHERE actor_id = %(actor)s)
"""


@pytest.mark.parametrize(
    "tool", ["save_memory", "recall_memories", "manage_memory", "verify_memory"]
)
def test_any_arguments_get_a_result_or_a_clear_error(
    tool: str,
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    other_actor = Principal(uuid.uuid4(), principal.project_id)
    other_project = Principal(principal.actor_id, uuid.uuid4())
    known = [
        str(service.save(who, text, "fact", scope=scope)["memory"]["id"])
        for who, text, scope in [
            (principal, "The user prefers tabs over spaces", "user"),
            (principal, "This project deploys with Docker Compose", "project"),
            (other_actor, "Bob deploys the billing service", "project"),
            (other_project, "The side project is written in Go", "project"),
        ]
    ]
    conn = connect()
    params = {"actor": principal.actor_id, "project": principal.project_id}

    def writes() -> tuple[Any, ...]:
        return tuple(conn.execute(WRITES, params).fetchone() or ())

    server = create_server(
        lambda: nullcontext(service),
        lambda: principal,
        open_verifier=lambda memory: nullcontext(
            VerifyService(memory, None, VerifyConfig(UNCALIBRATED_VERIFY_POLICY))
        ),
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
        internal_errors() as logged,
    ):

        @settings(
            max_examples=80,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(args=arguments(tool, known))
        def check(args: dict[str, Any]) -> None:
            logged.records.clear()
            before = writes()
            result = portal.call(partial(client.call_tool, tool, args, raise_on_error=False))
            text = " ".join(getattr(block, "text", "") for block in result.content)
            assert not logged.records, logging.Formatter().format(logged.records[0])
            if result.is_error:
                assert text.strip(), "an error without a message"
                assert MASKED not in text, "an internal error escaped"
                assert writes() == before, f"the error {text!r} left rows behind"
            else:
                assert isinstance(result.structured_content, dict)

        check()
