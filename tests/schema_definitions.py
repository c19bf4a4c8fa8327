"""The definitions each migration leaves in the catalog, recorded so that released revisions
can be rewritten (for reading) without changing what they create.

`record(url)` migrates a fresh database up one revision at a time, then down one at a time
to base, and after every step reads from the catalog, as text, everything of schema kb that a
revision defines: each function as `pg_get_functiondef` prints it, with its privileges and
comment; each policy; each view as `pg_get_viewdef` prints it, with its options; tables'
row-level security, options, columns, constraints, indexes, triggers, comments and grants.
Functions written as `AS $$ ... $$` are printed with their body byte for byte, comments and
whitespace included.

tests/data/schema_definitions.json holds what the released revisions produced;
tests/test_schema_definitions.py checks that the revisions of this checkout produce the same.
After adding a revision, regenerate the file (the entries of the released revisions must come
out unchanged: `git diff` shows only the new states):

    .venv/bin/python -m tests.schema_definitions

(on the embedded server in a temporary directory, or on EMERGENT_MEMORY_TEST_DATABASE_URL's
server). The texts are stored once each, keyed by their sha256; each step lists what it set
(an object's name and its text's key) and dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from alembic.script import ScriptDirectory
from psycopg import sql

from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database, with_database_name
from emergent_memory.resources import migrations_dir

SNAPSHOT = Path(__file__).resolve().parent / "data" / "schema_definitions.json"

# (name, text) of every definition of schema kb. Privileges are listed in full (a default,
# NULL, list as what it means); roles are named as in the database, except the objects'
# owner (the migrating role, which differs between servers): OWNER.
CATALOG = """
WITH kb AS (SELECT oid FROM pg_namespace WHERE nspname = 'kb')
SELECT 'function ' || p.oid::regprocedure, pg_get_functiondef(p.oid)
FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM kb)
UNION ALL
SELECT 'function privileges ' || p.oid::regprocedure, (
    SELECT string_agg(grant_, ' ' ORDER BY grant_) FROM (
        SELECT format('%s:%s%s',
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                           WHEN a.grantee = p.proowner THEN 'OWNER'
                           ELSE pg_get_userbyid(a.grantee) END,
                      a.privilege_type, CASE WHEN a.is_grantable THEN '*' ELSE '' END)
        FROM aclexplode(coalesce(p.proacl, acldefault('f'::"char", p.proowner))) a
    ) AS granted(grant_)
)
FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM kb)
UNION ALL
SELECT 'function comment ' || p.oid::regprocedure, obj_description(p.oid, 'pg_proc')
FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM kb)
  AND obj_description(p.oid, 'pg_proc') IS NOT NULL
UNION ALL
SELECT 'policy ' || tablename || '.' || policyname,
       format(E'%s FOR %s TO %s\\nUSING %s\\nWITH CHECK %s', permissive, cmd, roles, qual,
              with_check)
FROM pg_policies WHERE schemaname = 'kb'
UNION ALL
SELECT 'view ' || c.relname,
       pg_get_viewdef(c.oid) || E'\\noptions ' || coalesce(c.reloptions::text, '{}')
FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM kb) AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'table ' || c.relname,
       format('kind %s, row level security %s, forced %s, options %s', c.relkind,
              c.relrowsecurity, c.relforcerowsecurity, coalesce(c.reloptions::text, '{}'))
FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM kb) AND c.relkind IN ('r', 'p')
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attname,
       format('%s not null %s storage %s default %s generated %s',
              format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attstorage,
              pg_get_expr(d.adbin, d.adrelid), a.attgenerated)
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = (SELECT oid FROM kb) AND c.relkind IN ('r', 'p', 'v')
  AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || conname, pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = (SELECT oid FROM kb)
UNION ALL
SELECT 'index ' || c.relname, pg_get_indexdef(c.oid)
FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM kb) AND c.relkind = 'i'
UNION ALL
SELECT 'trigger ' || t.tgrelid::regclass || ' ' || t.tgname, pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = (SELECT oid FROM kb) AND NOT t.tgisinternal
UNION ALL
SELECT 'comment ' || c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM kb)
  AND obj_description(c.oid, 'pg_class') IS NOT NULL
UNION ALL
SELECT 'comment ' || c.relname || '.' || a.attname, col_description(c.oid, a.attnum)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = (SELECT oid FROM kb) AND a.attnum > 0
  AND col_description(c.oid, a.attnum) IS NOT NULL
UNION ALL
SELECT 'privileges ' || c.relname, (
    SELECT string_agg(grant_, ' ' ORDER BY grant_) FROM (
        SELECT format('%s:%s%s',
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                           WHEN a.grantee = c.relowner THEN 'OWNER'
                           ELSE pg_get_userbyid(a.grantee) END,
                      a.privilege_type, CASE WHEN a.is_grantable THEN '*' ELSE '' END)
        FROM aclexplode(coalesce(c.relacl, acldefault(
                 CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a
    ) AS granted(grant_)
)
FROM pg_class c
WHERE c.relnamespace = (SELECT oid FROM kb) AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
ORDER BY 1
"""


def definitions(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """Everything of schema kb that a revision defines, by name (empty without the schema)."""
    return {str(name): str(text) for name, text in conn.execute(CATALOG)}


def revisions() -> list[str]:
    """The revisions from the first to head."""
    script = ScriptDirectory(str(migrations_dir()))
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def record(url: str) -> dict[str, dict[str, str]]:
    """The definitions after each step: `upgrade to <revision>` from the first revision to
    head, then `downgrade to <revision>` (and `downgrade to base`) back down. `url`: an empty
    database."""
    states: dict[str, dict[str, str]] = {}
    chain = revisions()
    for revision in chain:
        migrate.upgrade(url, revision)
        states[f"upgrade to {revision}"] = _read(url)
    for revision in [*reversed(chain[:-1]), "base"]:
        migrate.downgrade(url, revision)
        states[f"downgrade to {revision}"] = _read(url)
    return states


def _read(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return definitions(conn)


def server_major_version(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.info.server_version // 10000


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def to_file(states: dict[str, dict[str, str]], postgresql: int) -> dict[str, Any]:
    """The states as steps, each with what it set (a name and its text's key) and dropped
    since the step before: what each migration changed, readable in the file."""
    texts: dict[str, str] = {}
    steps: list[dict[str, Any]] = []
    before: dict[str, str] = {}
    for state, found in states.items():
        for text in found.values():
            texts[key(text)] = text
        changed = {name: key(text) for name, text in found.items() if before.get(name) != text}
        steps.append({"state": state, "set": changed, "drop": sorted(set(before) - set(found))})
        before = found
    return {
        "about": "What each migration step leaves in the catalog; see tests/schema_definitions.py",
        "postgresql": postgresql,
        "steps": steps,
        "texts": dict(sorted(texts.items())),
    }


def from_file(stored: dict[str, Any]) -> dict[str, dict[str, str]]:
    texts = stored["texts"]
    states: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for step in stored["steps"]:
        current = {name: text for name, text in current.items() if name not in step["drop"]}
        current |= {name: texts[text_key] for name, text_key in step["set"].items()}
        states[step["state"]] = current
    return states


@contextmanager
def empty_database() -> Iterator[str]:
    """A new database on EMERGENT_MEMORY_TEST_DATABASE_URL's server or on an embedded one."""
    configured = os.environ.get("EMERGENT_MEMORY_TEST_DATABASE_URL")
    data_dir = Path(tempfile.mkdtemp(prefix="ems-", dir="/tmp"))
    try:
        with open_database(configured, data_dir) as db:
            name = f"ems_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(db.url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            try:
                yield with_database_name(db.url, name)
            finally:
                with psycopg.connect(db.url, autocommit=True) as conn:
                    conn.execute(
                        sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
                    )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    with empty_database() as url:
        stored = to_file(record(url), server_major_version(url))
    SNAPSHOT.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {SNAPSHOT} ({len(stored['steps'])} states, {len(stored['texts'])} texts)")


if __name__ == "__main__":
    main()
