"""API tokens: shown once, stored hashed, scoped, expiring and revocable."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from emergent_memory.auth import tokens
from emergent_memory.cli.serve import _is_loopback
from emergent_memory.errors import InvalidInput, NotFound, PermissionDenied


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


# -- the application role (migration 0009) ------------------------------------------------

ATTACKS = {
    "read every token": "SELECT id, actor_id, scopes FROM kb.api_tokens",
    "read one column": "SELECT count(*) FROM kb.api_tokens",
    "escalate a token": "UPDATE kb.api_tokens SET scopes = ARRAY['memory:read', 'memory:admin']",
    "revoke someone's token": "UPDATE kb.api_tokens SET revoked_at = now()",
    "forge an admin token": (
        "INSERT INTO kb.api_tokens (name, token_hash, token_prefix, actor_id, project_id, scopes) "
        "VALUES ('forged', sha256('emt_forged'::bytea), 'emt_forged', gen_random_uuid(), "
        "gen_random_uuid(), ARRAY['memory:admin'])"
    ),
    "delete tokens": "DELETE FROM kb.api_tokens",
    "lock the table": "LOCK TABLE kb.api_tokens",
    "copy the table": "COPY kb.api_tokens TO STDOUT",
}


@pytest.mark.parametrize("statement", list(ATTACKS.values()), ids=list(ATTACKS))
def test_the_application_role_can_neither_read_nor_write_the_token_table(
    connect: Any, app_connect: Any, statement: str
) -> None:
    with connect() as owner:
        victim = new(owner, scopes=["memory:read"])
    conn = app_connect()
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(statement)
    conn.rollback()
    with connect() as owner:
        row = owner.execute(
            "SELECT scopes, revoked_at, (SELECT count(*) FROM kb.api_tokens WHERE name = 'forged')"
            " FROM kb.api_tokens WHERE id = %s",
            (victim.info.id,),
        ).fetchone()
    assert row == (["memory:read"], None, 0)  # nothing changed


def test_the_application_role_verifies_the_token_it_was_given_and_learns_nothing_else(
    connect: Any, app_connect: Any
) -> None:
    with connect() as owner:
        mine = new(owner, scopes=["memory:read", "memory:write"])
        other = new(owner, scopes=["memory:admin"])
        revoked = new(owner)
        tokens.revoke_token(owner, revoked.info.id)
    conn = app_connect()
    found = tokens.verify_token(conn, mine.token)
    assert found is not None
    assert (found.id, found.actor_id, found.scopes) == (
        mine.info.id,
        mine.info.actor_id,
        ["memory:read", "memory:write"],
    )
    assert tokens.verify_token(conn, revoked.token) is None
    # one character changed (never to itself: a token may well end in "A")
    altered = mine.token[:-1] + ("B" if mine.token.endswith("A") else "A")
    assert tokens.verify_token(conn, altered) is None
    # the function answers for a hash only: no hash, a short one or a prefix finds nothing
    for argument in (None, b"", other.token.encode(), hashlib.sha256(b"x").digest()[:31]):
        assert conn.execute("SELECT * FROM kb.verify_api_token(%s)", (argument,)).fetchall() == []
    conn.commit()
    with connect() as owner:
        used = owner.execute(
            "SELECT id FROM kb.api_tokens WHERE last_used_at IS NOT NULL AND id = ANY(%s)",
            ([mine.info.id, other.info.id, revoked.info.id],),
        ).fetchall()
    assert used == [(mine.info.id,)]  # its use was recorded, and only its


def test_the_verification_function_is_not_executable_by_public(connect: Any) -> None:
    with connect() as owner:
        acl = owner.execute(
            "SELECT proacl::text[], prosecdef, proconfig FROM pg_proc "
            "WHERE oid = 'kb.verify_api_token(bytea)'::regprocedure"
        ).fetchone()
    assert acl is not None
    grants, security_definer, config = acl
    assert security_definer
    assert config == ["search_path=pg_catalog, public"]
    grantees = {grant.split("=")[0] for grant in grants}
    assert "" not in grantees  # "=X/owner" would be PUBLIC
    assert {"emergent_memory_app", "emergent_memory_admin"} <= grantees


def test_token_management_as_the_application_role_is_a_clear_refusal(app_connect: Any) -> None:
    conn = app_connect()
    with pytest.raises(PermissionDenied, match=r"may not manage API tokens.*emergent_memory_admin"):
        new(conn)
    conn.rollback()
    with pytest.raises(PermissionDenied, match="may not manage API tokens"):
        tokens.list_tokens(conn)
    conn.rollback()
    with pytest.raises(PermissionDenied, match="may not manage API tokens"):
        tokens.revoke_token(conn, uuid.uuid4())


def test_an_administrator_role_manages_tokens(admin_database_url: str) -> None:
    with psycopg.connect(admin_database_url) as conn:
        created = new(conn, scopes=["memory:admin"])
        assert created.info.id in {info.id for info in tokens.list_tokens(conn)}
        assert tokens.revoke_token(conn, created.info.id).revoked_at is not None
        conn.rollback()
