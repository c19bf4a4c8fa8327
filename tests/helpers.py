"""Small helpers shared by tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

import psycopg
import pytest


def count_rows(conn: psycopg.Connection[Any], table: str, project_id: UUID) -> int:
    """Rows (every version) of a kb table that belong to a project."""
    query = {
        "graph_objects": "SELECT count(*) FROM kb.graph_objects WHERE project_id = %s",
        "graph_relationships": "SELECT count(*) FROM kb.graph_relationships WHERE project_id = %s",
    }[table]
    row = conn.execute(query, (project_id,)).fetchone()
    assert row is not None
    return int(row[0])


def memory(content: str = "The user prefers tabs", category: str = "preference") -> dict[str, Any]:
    return {"content": content, "category": category}


def wait_until(condition: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    """Poll `condition` until it holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(0.05)


def lock_waiters(owner_url: str, blocker_pid: int | None = None) -> int:
    """How many backends of this database wait on a lock (held by `blocker_pid`, if given)."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND cardinality(pg_blocking_pids(pid)) > 0 "
            "AND (%(pid)s::int IS NULL OR %(pid)s::int = ANY(pg_blocking_pids(pid)))",
            {"pid": blocker_pid},
        ).fetchone()
    return 0 if row is None else int(row[0])


def hold_advisory_lock(conn: psycopg.Connection[Any], key: str) -> None:
    """Take, in `conn`'s transaction, the advisory lock the store takes for `key`
    (store.lock_saves, versioning.lock_versions: hashtextextended(key, 0))."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


# What the MCP server logs when a request fails with an internal error: a tool's exception
# (masked for the client), or any exception that escaped to the ASGI server (an HTTP 500).
INTERNAL_ERROR_MARKERS = (
    "ERROR emergent_memory.mcp.server: internal error in",
    "Exception in ASGI",
)


def internal_errors(server_log: str) -> list[str]:
    """The internal errors in a server's stderr, each with its traceback up to the exception's
    own line, for a test to show."""
    found: list[str] = []
    lines = iter(server_log.splitlines())
    for line in lines:
        if not any(marker in line for marker in INTERNAL_ERROR_MARKERS):
            continue
        error = [line]
        for more in lines:
            error.append(more)
            if more and not more.startswith((" ", "Traceback", "\t")):
                break  # the exception's line ends the traceback
        found.append("\n".join(error))
    return found
