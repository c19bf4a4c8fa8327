"""What objects and relationships share about versions: locking, transactions, patches."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from psycopg import Connection
from psycopg.pq import TransactionStatus

LOCK_VERSIONS = "SELECT pg_advisory_xact_lock(hashtextextended(%(lock_key)s, 0))"
TRY_LOCK_VERSIONS = "SELECT pg_try_advisory_xact_lock(hashtextextended(%(lock_key)s, 0))"


def lock_versions(conn: Connection[Any], table: str, canonical_id: UUID) -> None:
    """Serialize writers of one object's (or relationship's) versions until commit.

    A transaction-level advisory lock rather than FOR UPDATE on the head row: a waiter on
    the head row would wake up to find it no longer the head, while a waiter on this lock
    simply reads the head its predecessor committed.
    """
    require_transaction(conn)
    conn.execute(LOCK_VERSIONS, {"lock_key": f"{table}:{canonical_id}"})


def try_lock_versions(conn: Connection[Any], table: str, canonical_id: UUID) -> bool:
    """lock_versions without waiting: False (and no lock) when another transaction holds it,
    the SKIP LOCKED of a job that must never wait for a writer nor be waited for long."""
    require_transaction(conn)
    row = conn.execute(TRY_LOCK_VERSIONS, {"lock_key": f"{table}:{canonical_id}"}).fetchone()
    return bool(row and row[0])


def require_transaction(conn: Connection[Any]) -> None:
    """Store writes belong to the caller's transaction; in autocommit they need an explicit one."""
    if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
        raise RuntimeError(
            "graph store writes must run inside a transaction: use `with conn.transaction():`"
        )


def merge_properties(current: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON merge patch (RFC 7396) at the top level: a None value removes the property."""
    merged = dict(current)
    for name, value in patch.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged


@contextmanager
def savepoint(conn: Connection[Any]) -> Iterator[None]:
    """A savepoint inside the caller's transaction: a failed write leaves nothing behind, and
    the caller's transaction stays usable. Never commits the caller's transaction."""
    if conn.info.transaction_status != TransactionStatus.INTRANS:
        raise RuntimeError("graph store writes must run inside a transaction")
    with conn.transaction():
        yield
