"""docs/security.md: its role setup works as written, and its SQL examples run and do what
they say."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from emergent_memory.auth.principal import Principal
from emergent_memory.db.connection import with_role
from emergent_memory.memory import MemoryService
from tests.test_cli import run

DOC = Path(__file__).resolve().parent.parent / "docs" / "security.md"


def sql_examples() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def statements_of(block: str) -> list[str]:
    """The block's statements, comments removed."""
    code = re.sub(r"--[^\n]*", "", block)
    return [part.strip() for part in code.split(";") if part.strip()]


def rows_of(conn: psycopg.Connection[Any], statement: str) -> list[tuple[Any, ...]]:
    cursor = conn.execute(statement)
    return cursor.fetchall() if cursor.description else []


def test_create_role_gives_a_login_that_row_level_security_confines(
    make_database: Callable[[], str], service: MemoryService
) -> None:
    url = make_database()
    assert run("db", "upgrade", env={"EMERGENT_MEMORY_DATABASE_URL": url}).returncode == 0
    name = f"emt_server_{uuid.uuid4().hex[:8]}"
    password = secrets.token_hex(12)
    env = {"EMERGENT_MEMORY_DATABASE_URL": url, "THE_PASSWORD": password}

    created = run("db", "create-role", name, "--password-env", "THE_PASSWORD", env=env)
    assert created.returncode == 0, created.stderr
    assert created.stdout == f"role {name} can log in as a member of emergent_memory_app\n"
    again = run("db", "create-role", name, "--password-env", "THE_PASSWORD", env=env)
    assert again.returncode == 0, again.stderr  # idempotent

    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(
            "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, "
            "type) VALUES (gen_random_uuid(), 1, gen_random_uuid(), gen_random_uuid(), 'user', "
            "'Memory')"
        )
    with psycopg.connect(with_role(url, name, password)) as conn:
        attributes = conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert attributes == (False, False)
        assert conn.execute("SELECT count(*) FROM kb.graph_objects").fetchone() == (0,)

    admin = run("db", "create-role", f"{name}_admin", "--admin", env=env)
    assert admin.returncode == 0, admin.stderr
    assert "emergent_memory_admin" in admin.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["Bad-Name"], "role name 'Bad-Name': use lower-case letters"),
        (["ok_name", "--password-env", "UNSET_VARIABLE_X"], "UNSET_VARIABLE_X: that variable"),
    ],
)
def test_create_role_refuses_bad_input(
    make_database: Callable[[], str], arguments: list[str], message: str
) -> None:
    env = {"EMERGENT_MEMORY_DATABASE_URL": make_database()}
    assert run("db", "upgrade", env=env).returncode == 0
    result = run("db", "create-role", *arguments, env=env)
    assert result.returncode == 1
    assert message in result.stderr


def test_the_sql_examples_run_as_documented(
    app_database_url: str,
    service: MemoryService,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    setting, create_roles, look_as = sql_examples()
    actor = uuid.UUID("11111111-1111-1111-1111-111111111111")
    project = uuid.UUID("22222222-2222-2222-2222-222222222222")
    service.save(Principal(actor, project), "Security docs example memory", "fact")

    with psycopg.connect(app_database_url, autocommit=True) as conn:
        results = [rows_of(conn, statement) for statement in statements_of(look_as)]
        contents = results[2]  # BEGIN, set_config, SELECT content FROM kb.memories, COMMIT
        assert ("Security docs example memory",) in contents
        assert conn.execute("SELECT count(*) FROM kb.memories").fetchone() == (0,)  # ended
        with conn.transaction():
            conn.execute(setting)
            assert conn.execute("SELECT kb.current_actor_id()").fetchone() == (actor,)
            assert conn.execute("SELECT kb.current_principal_is_admin()").fetchone() == (False,)
            visible = {row[0] for row in conn.execute("SELECT actor_id FROM kb.memories")}
            assert visible == {actor}

    # the role creation statements, with names of this test run and a real password
    suffix = uuid.uuid4().hex[:8]
    statements = create_roles.replace("emergent_server", f"emt_doc_server_{suffix}")
    statements = statements.replace("alice_admin", f"emt_doc_admin_{suffix}")
    statements = statements.replace("'...'", "'" + secrets.token_hex(8) + "'")
    with connect() as owner:
        owner.execute(statements)
        members = owner.execute(
            "SELECT r.rolname, g.rolname FROM pg_auth_members m "
            "JOIN pg_roles r ON r.oid = m.member JOIN pg_roles g ON g.oid = m.roleid "
            "WHERE r.rolname LIKE %s ORDER BY 1",
            (f"%{suffix}",),
        ).fetchall()
        assert members == [
            (f"emt_doc_admin_{suffix}", "emergent_memory_admin"),
            (f"emt_doc_server_{suffix}", "emergent_memory_app"),
        ]
        for role in (f"emt_doc_admin_{suffix}", f"emt_doc_server_{suffix}"):
            owner.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
