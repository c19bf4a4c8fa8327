"""Migrations: reversible, repeatable, and the head check that guards start-up."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg import sql

from emergent_memory.auth import tokens
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_role
from emergent_memory.errors import InvalidInput, SchemaNotCurrent

# Everything in schema kb that a migration creates, as comparable text.
SCHEMA_SNAPSHOT = """
SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' '
       || coalesce(udt_name, '') || ' null=' || is_nullable
       || ' default=' || coalesce(column_default, '')
       || ' gen=' || coalesce(generation_expression, '')
FROM information_schema.columns WHERE table_schema = 'kb'
UNION ALL
SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'kb'
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'kb'::regnamespace
UNION ALL
SELECT 'function ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid)
FROM pg_proc p WHERE pronamespace = 'kb'::regnamespace
UNION ALL
SELECT 'comment ' || c.relname || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c WHERE relnamespace = 'kb'::regnamespace
ORDER BY 1
"""


def snapshot(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute(SCHEMA_SNAPSHOT)]


def kb_schema_exists(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regnamespace('kb') IS NOT NULL").fetchone()
        return bool(row and row[0])


def test_upgrade_downgrade_upgrade_leaves_the_same_schema(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url)
    first = snapshot(url)
    assert any("graph_objects_embedding_hnsw_idx" in line for line in first)

    migrate.downgrade(url, "base")
    assert migrate.database_revision(url) is None
    assert not kb_schema_exists(url)

    migrate.upgrade(url)
    assert snapshot(url) == first
    assert migrate.database_revision(url) == migrate.head_revision()


def test_every_revision_downgrades_one_step_at_a_time(make_database: Callable[[], str]) -> None:
    url = make_database()
    migrate.upgrade(url)
    seen = []
    while (revision := migrate.database_revision(url)) is not None:
        seen.append(revision)
        migrate.downgrade(url, "-1")
    assert seen == [
        "0025_identifier_words",
        "0024_memory_use_counts",
        "0023_project_names",
        "0022_all_projects_view",
        "0021_memory_count",
        "0020_recall_queries",
        "0019_injection_answers",
        "0018_capture_waiting",
        "0017_pair_judgments",
        "0016_conflicts",
        "0015_lookalike_skeleton",
        "0014_finite_similarity",
        "0013_lifecycle",
        "0012_dashboard",
        "0011_automatic_memory",
        "0010_visibility_rule",
        "0009_token_verification",
        "0008_recall_rare_words",
        "0007_vectors_in_row",
        "0006_row_level_security",
        "0005_api_tokens",
        "0004_memory_sql",
        "0003_seed_agent_memory_pack",
        "0002_versioned_graph",
        "0001_kb_schema_and_packs",
    ]
    assert not kb_schema_exists(url)


INSERT_MEMORY_WITH_VECTOR = """
INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, type,
                              properties, embedding, embedding_model)
SELECT gen_random_uuid(), 1, gen_random_uuid(), gen_random_uuid(), 'user', 'Memory',
       jsonb_build_object('content', (SELECT string_agg(md5(i || '-' || w), ' ')
                                      FROM generate_series(1, 8) w),
                          'category', 'fact'),
       (SELECT array_agg(sin(i * 384 + d))::vector FROM generate_series(1, 384) d), 'm'
FROM generate_series(1, 20) i
"""
# NULL when the value is stored in the row, the TOAST chunk id when it was moved out of it
OUT_OF_LINE = "SELECT count(pg_column_toast_chunk_id(embedding)) FROM kb.graph_objects"


def test_0007_moves_existing_vectors_into_their_rows(make_database: Callable[[], str]) -> None:
    """Before 0007 a memory's vector lives in the TOAST table (two more lookups per read);
    the upgrade rewrites it into the row, with its value unchanged, and new rows keep it
    there."""
    url = make_database()
    migrate.upgrade(url, "0006_row_level_security")
    with psycopg.connect(url) as conn:
        conn.execute(INSERT_MEMORY_WITH_VECTOR)
        assert conn.execute(OUT_OF_LINE).fetchone() == (20,)
        before = conn.execute("SELECT id, embedding::text FROM kb.graph_objects").fetchall()
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        assert conn.execute(OUT_OF_LINE).fetchone() == (0,)
        after = conn.execute("SELECT id, embedding::text FROM kb.graph_objects").fetchall()
        assert sorted(after) == sorted(before)
        conn.execute(INSERT_MEMORY_WITH_VECTOR)
        assert conn.execute(OUT_OF_LINE).fetchone() == (0,)
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'graph_objects_embedding_hnsw_idx'"
        ).fetchone()
        assert index is not None
        assert "ef_construction='400'" in index[0]
        config = conn.execute(
            "SELECT proconfig FROM pg_proc WHERE proname = 'recall_memories_for'"
        ).fetchone()
        assert config is not None
        assert "hnsw.ef_search=200" in config[0]


def test_0007_runs_as_a_database_owner_that_is_not_a_superuser(
    make_database: Callable[[], str], server_url: str
) -> None:
    """The way operators deploy (docs/operations.md): the owner role, subject to the forced
    policies, migrates. On PostgreSQL 16+ a CREATEROLE owner that created the group roles is
    their member with ADMIN OPTION but without their rights (0006 left it so, seeing no row);
    0007 gives it the admin role's rights, then rewrites every live vector."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if not row.fetchone()[0]:  # type: ignore[index]
            pytest.skip("needs a superuser on the test server to create the owner role")
    role = f"emt_owner_{uuid.uuid4().hex[:8]}"
    url = make_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEROLE").format(sql.Identifier(role)))
        database = conn.info.dbname
        conn.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(database), sql.Identifier(role)
            )
        )
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(sql.Identifier(role)))
        for group in ("emergent_memory_app", "emergent_memory_admin"):
            conn.execute(
                "DO $$ BEGIN CREATE ROLE " + group + " NOLOGIN; "
                "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
            )
            # what CREATE ROLE by a CREATEROLE role gives its creator on PostgreSQL 16+
            conn.execute(
                sql.SQL("GRANT {} TO {} WITH ADMIN TRUE, INHERIT FALSE, SET FALSE").format(
                    sql.Identifier(group), sql.Identifier(role)
                )
            )
    owner_url = with_role(url, role)
    try:
        migrate.upgrade(owner_url, "0006_row_level_security")
        with psycopg.connect(url) as conn:  # the superuser writes what the owner cannot
            conn.execute(INSERT_MEMORY_WITH_VECTOR)
        with psycopg.connect(owner_url) as conn:  # 0006 left the owner blind
            assert conn.execute("SELECT count(*) FROM kb.graph_objects").fetchone() == (0,)
        migrate.upgrade(owner_url)
        with psycopg.connect(owner_url) as conn:
            assert conn.execute("SELECT count(*) FROM kb.graph_objects").fetchone() == (20,)
            assert conn.execute(OUT_OF_LINE).fetchone() == (0,)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_downgrade_of_the_seed_removes_installations_of_the_pack(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO kb.project_template_packs (project_id, pack_name, template_pack_id) "
            "SELECT gen_random_uuid(), name, id FROM kb.template_packs"
        )
    migrate.downgrade(url, "0002_versioned_graph")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM kb.project_template_packs").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM kb.template_packs").fetchone() == (0,)


PACK_OF_PROJECT = """
SELECT p.version FROM kb.project_template_packs i JOIN kb.template_packs p
  ON p.id = i.template_pack_id
WHERE i.project_id = %s
"""


def test_0011_moves_installed_projects_to_the_pack_1_1_0_and_back(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url, "0010_visibility_rule")
    project = uuid.uuid4()
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO kb.project_template_packs (project_id, pack_name, template_pack_id) "
            "SELECT %s, name, id FROM kb.template_packs WHERE version = '1.0.0'",
            (project,),
        )
    migrate.upgrade(url, "0011_automatic_memory")
    with psycopg.connect(url) as conn:
        assert conn.execute(PACK_OF_PROJECT, (project,)).fetchall() == [("1.1.0",)]
        both = tokens.create_token(
            conn,
            name="hooks",
            actor_id=uuid.uuid4(),
            project_id=project,
            scopes=["memory:read", "memory:any-project"],
        )
        only = tokens.create_token(
            conn,
            name="odd",
            actor_id=uuid.uuid4(),
            project_id=project,
            scopes=["memory:any-project"],
        )
    migrate.downgrade(url, "0010_visibility_rule")
    with psycopg.connect(url) as conn:
        assert conn.execute(PACK_OF_PROJECT, (project,)).fetchall() == [("1.0.0",)]
        versions = conn.execute("SELECT version FROM kb.template_packs").fetchall()
        assert versions == [("1.0.0",)]
        rows = {
            row[0]: (row[1], row[2])
            for row in conn.execute("SELECT id, scopes, revoked_at IS NOT NULL FROM kb.api_tokens")
        }
        # the scope goes; a token that had nothing else is left harmless: revoked, read only
        assert rows[both.info.id] == (["memory:read"], False)
        assert rows[only.info.id] == (["memory:read"], True)
        assert conn.execute("SELECT to_regclass('kb.capture_windows')").fetchone() == (None,)


def test_the_head_read_without_alembic_is_alembics_and_a_check_at_head_imports_none() -> None:
    """The head check reads the revision files' headers (a command's start skips importing
    Alembic); what it reads is what Alembic reads, and it falls back to Alembic otherwise."""
    from alembic.script import ScriptDirectory

    from emergent_memory.resources import migrations_dir

    scripts = ScriptDirectory(str(migrations_dir()))
    assert migrate._revision_files() is not None
    assert migrate.head_revision() == scripts.get_current_head()
    assert migrate.known_revisions() == {s.revision for s in scripts.walk_revisions()}
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from emergent_memory.db import migrate; "
         "migrate.head_revision(); migrate.known_revisions(); print('alembic' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert loaded.stdout.strip() == "False"


def test_head_check_refuses_an_unmigrated_database_and_says_what_to_run(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    with pytest.raises(SchemaNotCurrent, match=r"not migrated yet.*emergent-memory db upgrade"):
        migrate.require_current_schema(url)
    assert migrate.database_revision(url) is None  # the refusal changed nothing


def test_head_check_refuses_a_database_behind_head(make_database: Callable[[], str]) -> None:
    url = make_database()
    migrate.upgrade(url, "0002_versioned_graph")
    # a command with a --migrate option is told about it; one without is not
    with pytest.raises(SchemaNotCurrent, match=r"at revision 0002_versioned_graph.*--migrate"):
        migrate.require_current_schema(url, migrate=False)
    with pytest.raises(SchemaNotCurrent, match=r"db upgrade` first$"):
        migrate.require_current_schema(url)


def test_head_check_migrates_when_asked(make_database: Callable[[], str]) -> None:
    url = make_database()
    state = migrate.require_current_schema(url, migrate=True)
    assert state.at_head
    assert migrate.database_revision(url) == migrate.head_revision()


def test_head_check_refuses_a_database_from_a_newer_version(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        conn.execute(f"UPDATE {migrate.VERSION_TABLE} SET version_num = '0099_from_future'")
    with pytest.raises(SchemaNotCurrent, match="newer emergent-memory"):
        migrate.require_current_schema(url, migrate=True)


def test_unknown_revision_is_a_clear_error(database_url: str) -> None:
    with pytest.raises(InvalidInput, match="Can't locate revision identified by 'nope'"):
        migrate.downgrade(database_url, "nope")
    assert migrate.database_revision(database_url) == migrate.head_revision()


def test_concurrent_migrations_from_several_processes_do_not_race(
    make_database: Callable[[], str],
) -> None:
    # e.g. several servers started with --migrate at once; Alembic is per process
    url = make_database()
    script = "import sys; from emergent_memory.db import migrate; migrate.upgrade(sys.argv[1])"
    processes = [
        subprocess.Popen([sys.executable, "-c", script, url], stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outcomes = [(p.communicate()[1], p.returncode) for p in processes]
    assert [stderr for stderr, returncode in outcomes if returncode != 0] == []
    assert migrate.database_revision(url) == migrate.head_revision()


def test_extensions_are_installed(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        rows: list[Any] = conn.execute(
            "SELECT extname FROM pg_extension WHERE extname = 'vector'"
        ).fetchall()
    assert rows == [("vector",)]


# Memories as the pack 1.1.0 knows them (saved before 0013): each with a vector and a use;
# one superseded and one deleted.
INSERT_1_1_MEMORIES = """
INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, type,
                              properties, labels, embedding, embedding_model, deleted_at,
                              delete_reason)
SELECT gen_random_uuid(), 1, %(project)s, %(actor)s, 'user', 'Memory',
       jsonb_build_object('content', 'ledger rounding rule number ' || i,
                          'category', 'fact', 'source', 'explicit', 'scope', 'user',
                          'confidence', 1.0)
       || CASE WHEN i = 2 THEN jsonb_build_object('superseded_by', gen_random_uuid()::text)
               ELSE '{}' END,
       ARRAY['memory', 'fact', 'user'],
       (SELECT array_agg(sin(i * 384 + d))::vector FROM generate_series(1, 384) d), 'm',
       CASE WHEN i = 3 THEN now() END, CASE WHEN i = 3 THEN 'deleted by its owner' END
FROM generate_series(1, 5) i
"""
EVERY_ROW = """
SELECT row_to_json(o)::text FROM (
    SELECT id, canonical_id, version, is_head, project_id, actor_id, scope, type, properties,
           labels, embedding::text, embedding_model, deleted_at, delete_reason, created_at,
           updated_at
    FROM kb.graph_objects ORDER BY id
) o
"""
ACTIVE_FOUND = """
SELECT count(*) FROM kb.recall_memories_for(%s, %s, 'ledger rounding rule', p_limit => 50)
"""


def test_0013_keeps_every_memory_of_the_pack_1_1_0_up_down_and_up(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url, "0012_dashboard")
    project, actor = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO kb.project_template_packs (project_id, pack_name, template_pack_id) "
            "SELECT %s, name, id FROM kb.template_packs WHERE version = '1.1.0'",
            (project,),
        )
        conn.execute(INSERT_1_1_MEMORIES, {"project": project, "actor": actor})
        conn.execute(
            "INSERT INTO kb.memory_recalls (canonical_id, actor_id, project_id) "
            "SELECT canonical_id, actor_id, project_id FROM kb.graph_objects"
        )
        before = [row[0] for row in conn.execute(EVERY_ROW)]
        stats_before = conn.execute(
            "SELECT active, superseded, deleted, facts FROM kb.memory_stats"
        ).fetchall()
        found_before = conn.execute(ACTIVE_FOUND, (actor, project)).fetchone()
    assert stats_before == [(3, 1, 1, 3)]
    assert found_before == (3,)

    for target in ("head", "0012_dashboard", "head"):
        if target == "head":
            migrate.upgrade(url)
        else:
            migrate.downgrade(url, target)
        with psycopg.connect(url) as conn:
            assert [row[0] for row in conn.execute(EVERY_ROW)] == before, target
            assert conn.execute("SELECT count(*) FROM kb.memory_recalls").fetchone() == (5,)
            assert conn.execute(ACTIVE_FOUND, (actor, project)).fetchone() == (3,), target
            stats = conn.execute(
                "SELECT active, superseded, deleted, facts FROM kb.memory_stats"
            ).fetchall()
            assert stats == stats_before, target
            version = "1.3.0" if target == "head" else "1.1.0"
            assert conn.execute(PACK_OF_PROJECT, (project,)).fetchall() == [(version,)]


def test_0013_downgrade_refuses_memories_in_the_new_categories_and_changes_nothing(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, "
            "type, properties) VALUES (gen_random_uuid(), 1, gen_random_uuid(), "
            "gen_random_uuid(), 'user', 'Memory', "
            """'{"content": "We chose Postgres", "category": "decision"}')"""
        )
    with pytest.raises(Exception, match=r"1 memories are in the categories decision"):
        migrate.downgrade(url, "0012_dashboard")
    assert migrate.database_revision(url) == migrate.head_revision()  # nothing undone
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('kb.memory_evidence')").fetchone() != (None,)
        conn.execute(
            'UPDATE kb.graph_objects SET properties = properties || \'{"category": "fact"}\''
        )
    migrate.downgrade(url, "0012_dashboard")
    assert migrate.database_revision(url) == "0012_dashboard"


def test_0013_archived_memories_leave_the_active_ones_and_come_back_after_a_downgrade(
    make_database: Callable[[], str],
) -> None:
    """Archived memories are not active at 0013 (kb.is_active_memory, kb.memories,
    kb.memory_stats); 1.1.0 knows no archive: after a downgrade they are active again, their
    archived_at kept among their properties."""
    url = make_database()
    migrate.upgrade(url)
    archived = (
        """'{"content": "old", "category": "fact", "archived_at": "2026-01-01T00:00:00Z", """
        """"archive_reason": "unused for 200 days, confidence 0.41"}'"""
    )
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, "
            "type, properties) VALUES (gen_random_uuid(), 1, gen_random_uuid(), "
            f"gen_random_uuid(), 'user', 'Memory', {archived})"
        )
        assert conn.execute("SELECT count(*) FROM kb.memories").fetchone() == (0,)
        assert conn.execute("SELECT active, archived FROM kb.memory_stats").fetchone() == (0, 1)
    migrate.downgrade(url, "0012_dashboard")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM kb.memories").fetchone() == (1,)
        assert conn.execute("SELECT active FROM kb.memory_stats").fetchone() == (1,)
        row = conn.execute("SELECT properties ->> 'archived_at' FROM kb.graph_objects").fetchone()
        assert row == ("2026-01-01T00:00:00Z",)


def test_0013_downgrade_counts_only_live_memories_in_the_new_categories(
    make_database: Callable[[], str],
) -> None:
    """A deleted or superseded decision is history: it does not block the downgrade (deleting
    is what the refusal's hint asks for) and is left as it is; a live one, archived or not,
    does block it."""
    url = make_database()
    migrate.upgrade(url)
    insert = (
        "INSERT INTO kb.graph_objects (canonical_id, version, project_id, actor_id, scope, "
        "type, properties, deleted_at) VALUES (gen_random_uuid(), 1, gen_random_uuid(), "
        "gen_random_uuid(), 'user', 'Memory', %s::jsonb, %s)"
    )
    deleted = '{"content": "We chose Postgres", "category": "decision"}'
    superseded = (
        '{"content": "Friday deploys broke", "category": "lesson", '
        f'"superseded_by": "{uuid.uuid4()}"}}'
    )
    archived = (
        '{"content": "The cache may go stale", "category": "risk", '
        '"archived_at": "2026-01-01T00:00:00Z"}'
    )
    with psycopg.connect(url) as conn:
        conn.execute(insert, (deleted, "2026-01-01T00:00:00Z"))
        conn.execute(insert, (superseded, None))
        conn.execute(insert, (archived, None))
    with pytest.raises(Exception, match=r"1 memories are in the categories decision"):
        migrate.downgrade(url, "0012_dashboard")
    assert migrate.database_revision(url) == migrate.head_revision()  # nothing undone
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET deleted_at = now() WHERE properties ? 'archived_at'"
        )
        history = [row[0] for row in conn.execute(EVERY_ROW)]
    migrate.downgrade(url, "0012_dashboard")
    assert migrate.database_revision(url) == "0012_dashboard"
    with psycopg.connect(url) as conn:
        assert [row[0] for row in conn.execute(EVERY_ROW)] == history
        assert conn.execute(
            "SELECT active, superseded, deleted FROM kb.memory_stats ORDER BY 1, 2, 3"
        ).fetchall() == [(0, 0, 1), (0, 0, 1), (0, 1, 0)]


def test_0016_downgrade_refuses_live_conflicts_and_changes_nothing(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    migrate.upgrade(url)
    edge = (
        "INSERT INTO kb.graph_relationships (canonical_id, version, project_id, type, src_id, "
        "dst_id) VALUES (gen_random_uuid(), 1, gen_random_uuid(), 'CONFLICTS_WITH', "
        "gen_random_uuid(), gen_random_uuid())"
    )
    with psycopg.connect(url) as conn:
        conn.execute(edge)
    with pytest.raises(Exception, match=r"1 CONFLICTS_WITH relationships are live"):
        migrate.downgrade(url, "0015_lookalike_skeleton")
    assert migrate.database_revision(url) == migrate.head_revision()  # nothing undone
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE kb.graph_relationships SET deleted_at = now()")
    migrate.downgrade(url, "0015_lookalike_skeleton")
    assert migrate.database_revision(url) == "0015_lookalike_skeleton"
