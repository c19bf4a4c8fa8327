"""Row-level security: the database itself keeps each actor to the memories it may see.

Revision ID: 0006_row_level_security
Revises: 0005_api_tokens
Create Date: 2026-11-22

The principal (actor, project, admin right) is read from transaction-local settings that the
application sets at the start of every transaction (`set_config(..., true)`, i.e. SET LOCAL):
`emergent_memory.actor_id`, `emergent_memory.project_id`, `emergent_memory.admin`. With no
principal set, a role subject to the policies sees no row.

Two group roles (NOLOGIN) are created if missing; roles belong to the whole server, so the
downgrade leaves them in place:
- emergent_memory_app: what the server's login role is granted. Reads and writes only the
  principal's rows; cannot delete rows (deletes are soft: tombstone versions).
- emergent_memory_admin: SQL-level administration and maintenance (export, import, re-embed):
  every row. The role running this migration is made a member, since FORCE makes the tables'
  owner subject to the policies too.

Under row-level security PostgreSQL uses an index only for conditions it can prove leak no
row data (leakproof operators). Two hot searches had indexes on non-leakproof expressions:
- full text (`@@`): kb.recall_memories becomes a SECURITY DEFINER function that takes the
  principal from the same settings and refuses any other actor unless its caller is an
  administrator;
- the exact-duplicate fingerprint (an expression index on kb.memory_fingerprint(...)): it
  becomes a stored generated column compared with `=` on text, which is leakproof, so the
  duplicate check stays an index scan under the policies. (Adding the column rewrites
  kb.graph_objects once.)

Released revisions are frozen: change the schema with a new revision, never by editing this one.
This one was rewritten since, for reading only (SQL written out instead of assembled from
templates): what it creates and drops is byte for byte the same (tests/test_schema_definitions.py).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006_row_level_security"
down_revision: str | None = "0005_api_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
VERSION_TABLE = "emergent_memory_alembic_version"

# The principal functions are wrapped in scalar subqueries: evaluated once per statement (an
# InitPlan) instead of once per row, and still usable as index conditions.
#
# Who may see a row of kb.graph_objects (DESIGN.md 5): own user-scope objects in every
# project, own project-scope objects in the current project, global objects, and objects
# without an owner in the current project (generic graph data, never a memory).
OBJECT_VISIBLE = """
(SELECT kb.current_actor_id()) IS NOT NULL AND (
    (actor_id = (SELECT kb.current_actor_id())
     AND (scope = 'user' OR (scope = 'project' AND project_id = (SELECT kb.current_project_id()))))
    OR scope = 'global'
    OR (actor_id IS NULL AND scope = 'project' AND project_id = (SELECT kb.current_project_id()))
)
"""

# Who may write one: the owner (project scope: only in its project); global objects only
# with the admin right.
OBJECT_WRITABLE = """
(SELECT kb.current_actor_id()) IS NOT NULL AND (
    (scope = 'global' AND (SELECT kb.current_principal_is_admin()))
    OR (scope <> 'global' AND actor_id = (SELECT kb.current_actor_id())
        AND (scope = 'user' OR project_id = (SELECT kb.current_project_id())))
)
"""

EDGE_VISIBLE = """
(SELECT kb.current_actor_id()) IS NOT NULL AND (
    actor_id = (SELECT kb.current_actor_id())
    OR (actor_id IS NULL AND project_id = (SELECT kb.current_project_id()))
)
"""

EDGE_WRITABLE = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

OWN_RECALLS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

PROTECTED_TABLES = ("graph_objects", "graph_relationships", "memory_recalls")
VIEWS = ("memories", "memory_supersessions", "memory_stats")


def upgrade() -> None:
    # Jobs carry their object's owner: a worker acts for it (RLS) to read and embed the object.
    op.execute(
        "ALTER TABLE kb.graph_embedding_jobs ADD COLUMN actor_id uuid, "
        "ADD COLUMN scope text CHECK (scope IN ('user', 'project', 'global'))"
    )
    op.execute(
        "UPDATE kb.graph_embedding_jobs j SET actor_id = o.actor_id, scope = o.scope "
        "FROM kb.graph_objects o WHERE o.id = j.object_id"
    )
    op.execute("ALTER TABLE kb.graph_embedding_jobs ALTER COLUMN scope SET NOT NULL")

    op.execute("DROP INDEX kb.memories_fingerprint_idx")
    op.execute(
        "ALTER TABLE kb.graph_objects ADD COLUMN content_fingerprint text "
        "GENERATED ALWAYS AS (kb.memory_fingerprint(properties ->> 'content')) STORED"
    )
    op.execute(
        "COMMENT ON COLUMN kb.graph_objects.content_fingerprint IS "
        "'kb.memory_fingerprint of the content property: finds exact repeats by index.'"
    )
    op.execute(
        "CREATE INDEX graph_objects_content_fingerprint_idx "
        "ON kb.graph_objects (content_fingerprint) WHERE is_head AND deleted_at IS NULL"
    )

    op.execute(
        """
        CREATE FUNCTION kb.current_actor_id() RETURNS uuid
        LANGUAGE sql STABLE PARALLEL SAFE
        RETURN nullif(current_setting('emergent_memory.actor_id', true), '')::uuid
        """
    )
    op.execute(
        """
        CREATE FUNCTION kb.current_project_id() RETURNS uuid
        LANGUAGE sql STABLE PARALLEL SAFE
        RETURN nullif(current_setting('emergent_memory.project_id', true), '')::uuid
        """
    )
    op.execute(
        """
        CREATE FUNCTION kb.current_principal_is_admin() RETURNS boolean
        LANGUAGE sql STABLE PARALLEL SAFE
        RETURN coalesce(current_setting('emergent_memory.admin', true), '') = 'on'
        """
    )
    op.execute(
        "COMMENT ON FUNCTION kb.current_actor_id() IS "
        "'The actor the current transaction acts for (SET LOCAL emergent_memory.actor_id); "
        "NULL when none is set.'"
    )

    # The group roles (server-wide), created once; a concurrent creator is not an error.
    op.execute(
        f"""
        DO $$
        DECLARE
            name text;
        BEGIN
            FOREACH name IN ARRAY ARRAY['{APP}', '{ADMIN}'] LOOP
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = name) THEN
                    BEGIN
                        EXECUTE format('CREATE ROLE %I NOLOGIN', name);
                    EXCEPTION
                        WHEN duplicate_object OR unique_violation THEN NULL;
                        WHEN insufficient_privilege THEN
                            RAISE EXCEPTION 'the role % does not exist and % may not create it',
                                name, current_user
                            USING HINT = 'Ask a superuser to run: CREATE ROLE {APP} NOLOGIN; '
                                'CREATE ROLE {ADMIN} NOLOGIN; then migrate again.';
                    END;
                END IF;
            END LOOP;
            -- FORCE makes the owner subject to the policies: it administers through the
            -- admin role (a superuser or BYPASSRLS role bypasses them anyway)
            IF NOT (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
               AND NOT pg_has_role(current_user, '{ADMIN}', 'MEMBER') THEN
                EXECUTE format('GRANT {ADMIN} TO %I', current_user);
            END IF;
        END
        $$
        """  # noqa: S608 (module constants, no input)
    )

    op.execute(f"GRANT USAGE ON SCHEMA kb TO {APP}, {ADMIN}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA kb TO {APP}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA kb TO {ADMIN}")
    op.execute(f"GRANT SELECT ON {VERSION_TABLE} TO {APP}, {ADMIN}")

    for table in PROTECTED_TABLES:
        op.execute(f"ALTER TABLE kb.{table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE kb.{table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY {table}_admin ON kb.{table} FOR ALL TO {ADMIN} "
            "USING (true) WITH CHECK (true)"
        )
    op.execute(
        f"CREATE POLICY graph_objects_read ON kb.graph_objects FOR SELECT USING ({OBJECT_VISIBLE})"
    )
    op.execute(
        f"CREATE POLICY graph_objects_insert ON kb.graph_objects FOR INSERT WITH CHECK ({OBJECT_WRITABLE})"
    )
    op.execute(
        f"CREATE POLICY graph_objects_update ON kb.graph_objects FOR UPDATE "
        f"USING ({OBJECT_WRITABLE}) WITH CHECK ({OBJECT_WRITABLE})"
    )
    op.execute(
        f"CREATE POLICY graph_relationships_read ON kb.graph_relationships FOR SELECT USING ({EDGE_VISIBLE})"
    )
    op.execute(
        f"CREATE POLICY graph_relationships_insert ON kb.graph_relationships FOR INSERT WITH CHECK ({EDGE_WRITABLE})"
    )
    op.execute(
        f"CREATE POLICY graph_relationships_update ON kb.graph_relationships FOR UPDATE "
        f"USING ({EDGE_WRITABLE}) WITH CHECK ({EDGE_WRITABLE})"
    )
    op.execute(
        f"CREATE POLICY memory_recalls_read ON kb.memory_recalls FOR SELECT USING ({OWN_RECALLS})"
    )
    op.execute(
        f"CREATE POLICY memory_recalls_insert ON kb.memory_recalls FOR INSERT WITH CHECK ({OWN_RECALLS})"
    )

    # Views read their tables with the querying role's rights, so its policies apply.
    for view in VIEWS:
        op.execute(f"ALTER VIEW kb.{view} SET (security_invoker = true)")

    # The recall: the 0004 function, renamed and callable only from the checked wrapper.
    op.execute(
        """
        ALTER FUNCTION kb.recall_memories(
            uuid, uuid, text, vector, text, text, text, integer, integer, integer,
            double precision, double precision, double precision, double precision
        ) RENAME TO recall_memories_for
        """
    )
    op.execute(
        """
        REVOKE EXECUTE ON FUNCTION kb.recall_memories_for(
            uuid, uuid, text, vector, text, text, text, integer, integer, integer,
            double precision, double precision, double precision, double precision
        ) FROM PUBLIC
        """
    )
    op.execute(
        """
        CREATE FUNCTION kb.recall_memories(
            p_actor_id uuid,
            p_project_id uuid,
            p_query text,
            p_query_embedding vector DEFAULT NULL,
            p_embedding_model text DEFAULT NULL,
            p_category text DEFAULT NULL,
            p_scope text DEFAULT NULL,
            p_limit integer DEFAULT 10,
            p_candidates integer DEFAULT 50,
            p_rrf_k integer DEFAULT 10,
            p_lexical_weight double precision DEFAULT 1.0,
            p_vector_weight double precision DEFAULT 1.5,
            p_confidence_weight double precision DEFAULT 0.2,
            p_min_similarity double precision DEFAULT 0.15
        ) RETURNS TABLE (
            id uuid,
            content text,
            category text,
            scope text,
            source text,
            confidence double precision,
            contexts text[],
            use_count bigint,
            last_used timestamptz,
            created_at timestamptz,
            updated_at timestamptz,
            lexical_rank integer,
            lexical_score real,
            vector_rank integer,
            similarity double precision,
            fused double precision,
            score double precision
        )
        LANGUAGE plpgsql STABLE SECURITY DEFINER
        SET search_path = pg_catalog, public
        AS $$
        BEGIN
            IF NOT EXISTS (
                SELECT FROM pg_roles r
                WHERE r.rolname = session_user
                  AND (r.rolsuper OR r.rolbypassrls
                       OR pg_has_role(session_user, 'emergent_memory_admin', 'USAGE'))
            ) THEN
                IF kb.current_actor_id() IS NULL THEN
                    RETURN;  -- no principal: nothing is visible
                END IF;
                IF p_actor_id IS DISTINCT FROM kb.current_actor_id()
                   OR p_project_id IS DISTINCT FROM kb.current_project_id() THEN
                    RAISE EXCEPTION 'kb.recall_memories answers only for the transaction''s '
                        'principal (emergent_memory.actor_id, emergent_memory.project_id)'
                    USING ERRCODE = 'insufficient_privilege',
                          HINT = 'Recalling for another actor needs the emergent_memory_admin role.';
                END IF;
            END IF;
            RETURN QUERY SELECT * FROM kb.recall_memories_for(
                p_actor_id, p_project_id, p_query, p_query_embedding, p_embedding_model,
                p_category, p_scope, p_limit, p_candidates, p_rrf_k, p_lexical_weight,
                p_vector_weight, p_confidence_weight, p_min_similarity);
        END
        $$
        """
    )
    op.execute(
        "COMMENT ON FUNCTION kb.recall_memories IS "
        "'Hybrid recall (full text + vector, fused) of the memories visible to p_actor_id in "
        "p_project_id. A role subject to row-level security may ask only for the principal "
        "set in its transaction (emergent_memory.actor_id / .project_id); members of "
        "emergent_memory_admin may ask for anyone.'"
    )


def downgrade() -> None:
    op.execute(
        """
        DROP FUNCTION kb.recall_memories(
            uuid, uuid, text, vector, text, text, text, integer, integer, integer,
            double precision, double precision, double precision, double precision
        )
        """
    )
    op.execute(
        """
        GRANT EXECUTE ON FUNCTION kb.recall_memories_for(
            uuid, uuid, text, vector, text, text, text, integer, integer, integer,
            double precision, double precision, double precision, double precision
        ) TO PUBLIC
        """
    )
    op.execute(
        """
        ALTER FUNCTION kb.recall_memories_for(
            uuid, uuid, text, vector, text, text, text, integer, integer, integer,
            double precision, double precision, double precision, double precision
        ) RENAME TO recall_memories
        """
    )
    for view in VIEWS:
        op.execute(f"ALTER VIEW kb.{view} RESET (security_invoker)")
    for table in PROTECTED_TABLES:
        op.execute(
            f"""
            DO $$
            DECLARE
                policy text;
            BEGIN
                FOR policy IN SELECT policyname FROM pg_policies
                              WHERE schemaname = 'kb' AND tablename = '{table}' LOOP
                    EXECUTE format('DROP POLICY %I ON kb.{table}', policy);
                END LOOP;
            END
            $$
            """  # noqa: S608 (module constants, no input)
        )
        op.execute(f"ALTER TABLE kb.{table} NO FORCE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE kb.{table} DISABLE ROW LEVEL SECURITY")
    op.execute(f"REVOKE ALL ON {VERSION_TABLE} FROM {APP}, {ADMIN}")
    op.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA kb FROM {APP}, {ADMIN}")
    op.execute(f"REVOKE ALL ON SCHEMA kb FROM {APP}, {ADMIN}")
    op.execute("DROP FUNCTION kb.current_principal_is_admin()")
    op.execute("DROP FUNCTION kb.current_project_id()")
    op.execute("DROP FUNCTION kb.current_actor_id()")
    op.execute("ALTER TABLE kb.graph_objects DROP COLUMN content_fingerprint")
    op.execute(
        """
        CREATE INDEX memories_fingerprint_idx
        ON kb.graph_objects (actor_id, kb.memory_fingerprint(properties ->> 'content'))
        WHERE type = 'Memory' AND is_head AND deleted_at IS NULL
        """
    )
    op.execute("ALTER TABLE kb.graph_embedding_jobs DROP COLUMN scope, DROP COLUMN actor_id")
