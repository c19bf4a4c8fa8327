"""An answer is delivered whole, or the write behind it is undone.

Every edge (MCP, REST, the CLI's --json, the dashboard) sends the memory service's results as
JSON, which has no NaN or infinity, and a client refuses an answer that holds one. So each
write of the service builds its answer inside its transaction and passes it through
`deliverable` before the transaction commits: an answer that could not be delivered raises
there, the transaction rolls back, and the caller gets an error for a write that did not
happen, never an error for a write that did (whose retry would write it twice). Reads check
their answers the same way before they record a use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeVar

A = TypeVar("A")


class UndeliverableAnswer(Exception):
    """An answer that no edge could send: a bug, logged as an internal error. Its message names
    where in the answer (a path such as $.memory.confidence), never a value, which may be
    text a user wrote."""


def problem(value: Any, path: str = "$") -> str | None:
    """Where the value stops being plain JSON with finite numbers, or None when it is:
    dicts with string keys, lists, strings, booleans, None, integers, finite floats."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"a number that is not finite at {path}"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a key that is not a string in {path}"
            found = problem(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = problem(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    return f"a value of type {type(value).__name__} at {path}"


def deliverable(answer: A, operation: str) -> A:
    """The answer as it is, once it is known that every edge can deliver it; else
    UndeliverableAnswer (raised inside the write's transaction, which then rolls back)."""
    found = problem(answer)
    if found is not None:
        raise UndeliverableAnswer(f"the answer of {operation} cannot be delivered: {found}")
    return answer
