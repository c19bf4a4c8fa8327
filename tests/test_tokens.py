"""API tokens: shown once, stored hashed, scoped, expiring and revocable."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from emergent_memory import tokens
from emergent_memory.cli import _is_loopback
from emergent_memory.errors import InvalidInput, NotFound


def new(conn: psycopg.Connection[Any], **overrides: Any) -> tokens.NewToken:
    arguments: dict[str, Any] = {
        "name": "laptop",
        "actor_id": uuid.uuid4(),
        "project_id": uuid.uuid4(),
        "scopes": ["memory:read"],
    }
    return tokens.create_token(conn, **(arguments | overrides))


def test_only_the_hash_is_stored(conn: psycopg.Connection[Any]) -> None:
    created = new(conn)
    assert created.token.startswith("emt_")
    assert len(created.token) > 40
    row = conn.execute(
        "SELECT token_hash, token_prefix FROM kb.api_tokens WHERE id = %s", (created.info.id,)
    ).fetchone()
    assert row == (hashlib.sha256(created.token.encode()).digest(), created.token[:12])
    dump = conn.execute("SELECT row_to_json(t)::text FROM kb.api_tokens t").fetchall()
    assert all(created.token not in line for (line,) in dump)


def test_verify_finds_live_tokens_only(conn: psycopg.Connection[Any]) -> None:
    created = new(conn, scopes=["memory:read", "memory:write"])
    found = tokens.verify_token(conn, created.token)
    assert found is not None
    assert tokens.principal_of(found).can_write
    assert found.last_used_at is None
    assert tokens.verify_token(conn, created.token + "x") is None
    assert tokens.verify_token(conn, "not-even-a-token") is None

    expired = new(conn, expires_in=timedelta(days=1))
    assert tokens.verify_token(conn, expired.token) is not None
    conn.execute(
        "UPDATE kb.api_tokens SET expires_at = now() - interval '1 second' WHERE id = %s",
        (expired.info.id,),
    )
    assert tokens.verify_token(conn, expired.token) is None

    revoked = tokens.revoke_token(conn, created.info.id)
    assert revoked.revoked_at is not None
    assert tokens.verify_token(conn, created.token) is None
    assert tokens.revoke_token(conn, created.info.id).revoked_at == revoked.revoked_at
    with pytest.raises(NotFound):
        tokens.revoke_token(conn, uuid.uuid4())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": " "}, "needs a name"),
        ({"scopes": []}, "scopes must be among"),
        ({"scopes": ["memory:everything"]}, "got memory:everything"),
        ({"expires_in": timedelta(0)}, "lifetime must be positive"),
    ],
)
def test_bad_tokens_are_refused(
    conn: psycopg.Connection[Any], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        new(conn, **overrides)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.10", False),
        ("memory.example.com", False),
    ],
)
def test_only_loopback_addresses_count_as_local(host: str, loopback: bool) -> None:
    assert _is_loopback(host) is loopback
