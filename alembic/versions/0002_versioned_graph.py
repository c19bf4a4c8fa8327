"""The versioned graph: objects, relationships, the embedding job queue and their indexes.

Revision ID: 0002_versioned_graph
Revises: 0001_kb_schema_and_packs
Create Date: 2026-11-22

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002_versioned_graph"
down_revision: str | None = "0001_kb_schema_and_packs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # sha256 of the canonical text of a JSONB value (jsonb's output is canonical: keys sorted,
    # duplicates removed, fixed spacing). Declared IMMUTABLE so a generated column can use it;
    # convert_to() is only STABLE because encodings could in theory change, which they cannot
    # for an existing database.
    op.execute(
        """
        CREATE FUNCTION kb.jsonb_sha256(value jsonb) RETURNS bytea
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN sha256(convert_to(value::text, 'UTF8'))
        """
    )
    # The embedding column has the dimension of the default local model (all-MiniLM-L6-v2,
    # 384). Vectors always carry the name of the model that produced them.
    op.execute(
        """
        CREATE TABLE kb.graph_objects (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            canonical_id uuid NOT NULL,
            version integer NOT NULL CHECK (version >= 1),
            is_head boolean NOT NULL DEFAULT true,
            project_id uuid NOT NULL,
            actor_id uuid,
            scope text NOT NULL DEFAULT 'project'
                CHECK (scope IN ('user', 'project', 'global')),
            type text NOT NULL CHECK (type <> ''),
            key text CHECK (key <> ''),
            status text,
            properties jsonb NOT NULL DEFAULT '{}'
                CHECK (jsonb_typeof(properties) = 'object'),
            labels text[] NOT NULL DEFAULT '{}',
            content_hash bytea NOT NULL GENERATED ALWAYS AS (kb.jsonb_sha256(properties)) STORED,
            fts tsvector NOT NULL GENERATED ALWAYS AS (
                setweight(to_tsvector('english'::regconfig, coalesce(key, '')), 'A')
                || setweight(to_tsvector('english'::regconfig,
                       coalesce(properties ->> 'content', '') || ' '
                       || coalesce(properties ->> 'name', '') || ' '
                       || coalesce(properties ->> 'title', '')), 'A')
                || setweight(to_tsvector('english'::regconfig,
                       coalesce(properties ->> 'description', '')), 'B')
            ) STORED,
            embedding vector(384),
            embedding_model text,
            deleted_at timestamptz,
            delete_reason text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT graph_objects_canonical_version_key UNIQUE (canonical_id, version),
            CONSTRAINT graph_objects_embedding_has_model
                CHECK ((embedding IS NULL) = (embedding_model IS NULL)),
            CONSTRAINT graph_objects_reason_needs_delete
                CHECK (delete_reason IS NULL OR deleted_at IS NOT NULL)
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE kb.graph_objects IS "
        "'One row per version of a typed object. canonical_id is the stable identity; the row "
        "with is_head is the live version; a tombstone head (deleted_at set) means deleted.'"
    )
    op.execute(
        "COMMENT ON COLUMN kb.graph_objects.created_at IS "
        "'When the object (version 1) was created; carried unchanged into every version.'"
    )
    op.execute("COMMENT ON COLUMN kb.graph_objects.updated_at IS 'When this version was written.'")
    op.execute(
        "COMMENT ON COLUMN kb.graph_objects.scope IS "
        "'Visibility: user = the actor in every project, project = the actor in project_id, "
        "global = every actor.'"
    )
    for statement in (
        # exactly one head per object, and one live head per (project, type, key)
        "CREATE UNIQUE INDEX graph_objects_one_head_idx "
        "ON kb.graph_objects (canonical_id) WHERE is_head",
        "CREATE UNIQUE INDEX graph_objects_live_key_idx "
        "ON kb.graph_objects (project_id, type, key) "
        "WHERE is_head AND deleted_at IS NULL AND key IS NOT NULL",
        # search: vectors of live heads, full text, labels, property containment. The GIN
        # indexes write through (fastupdate off): a pending list would make every search scan
        # it until the next vacuum, trading predictable read latency for cheaper inserts.
        "CREATE INDEX graph_objects_embedding_hnsw_idx "
        "ON kb.graph_objects USING hnsw (embedding vector_cosine_ops) "
        "WHERE is_head AND deleted_at IS NULL",
        "CREATE INDEX graph_objects_fts_idx ON kb.graph_objects USING gin (fts) "
        "WITH (fastupdate = off)",
        "CREATE INDEX graph_objects_labels_idx ON kb.graph_objects USING gin (labels) "
        "WITH (fastupdate = off)",
        "CREATE INDEX graph_objects_properties_idx "
        "ON kb.graph_objects USING gin (properties jsonb_path_ops) WITH (fastupdate = off)",
        # scope columns
        "CREATE INDEX graph_objects_project_type_idx ON kb.graph_objects (project_id, type)",
        "CREATE INDEX graph_objects_actor_scope_idx "
        "ON kb.graph_objects (actor_id, scope, project_id, type)",
        "CREATE INDEX graph_objects_global_idx ON kb.graph_objects (type) WHERE scope = 'global'",
    ):
        op.execute(statement)

    op.execute(
        """
        CREATE TABLE kb.graph_relationships (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            canonical_id uuid NOT NULL,
            version integer NOT NULL CHECK (version >= 1),
            is_head boolean NOT NULL DEFAULT true,
            project_id uuid NOT NULL,
            actor_id uuid,
            type text NOT NULL CHECK (type <> ''),
            src_id uuid NOT NULL,
            dst_id uuid NOT NULL,
            properties jsonb NOT NULL DEFAULT '{}'
                CHECK (jsonb_typeof(properties) = 'object'),
            deleted_at timestamptz,
            delete_reason text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT graph_relationships_canonical_version_key UNIQUE (canonical_id, version),
            CONSTRAINT graph_relationships_reason_needs_delete
                CHECK (delete_reason IS NULL OR deleted_at IS NOT NULL)
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE kb.graph_relationships IS "
        "'Typed edges between canonical object ids (they survive new versions of either end), "
        "versioned like kb.graph_objects.'"
    )
    for statement in (
        "CREATE UNIQUE INDEX graph_relationships_one_head_idx "
        "ON kb.graph_relationships (canonical_id) WHERE is_head",
        "CREATE UNIQUE INDEX graph_relationships_live_edge_idx "
        "ON kb.graph_relationships (project_id, type, src_id, dst_id) "
        "WHERE is_head AND deleted_at IS NULL",
        "CREATE INDEX graph_relationships_src_idx "
        "ON kb.graph_relationships (src_id, type) WHERE is_head",
        "CREATE INDEX graph_relationships_dst_idx "
        "ON kb.graph_relationships (dst_id, type) WHERE is_head",
        "CREATE INDEX graph_relationships_actor_idx "
        "ON kb.graph_relationships (actor_id, project_id)",
    ):
        op.execute(statement)

    op.execute(
        """
        CREATE TABLE kb.graph_embedding_jobs (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            object_id uuid NOT NULL REFERENCES kb.graph_objects (id) ON DELETE CASCADE,
            canonical_id uuid NOT NULL,
            project_id uuid NOT NULL,
            status text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'done', 'dead')),
            attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            last_error text,
            run_after timestamptz NOT NULL DEFAULT now(),
            locked_at timestamptz,
            locked_by text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE kb.graph_embedding_jobs IS "
        "'Object versions whose embedding could not be computed inline; workers claim pending "
        "jobs with FOR UPDATE SKIP LOCKED, retry with backoff, and mark them dead after the "
        "last attempt.'"
    )
    for statement in (
        "CREATE UNIQUE INDEX graph_embedding_jobs_open_idx "
        "ON kb.graph_embedding_jobs (object_id) WHERE status IN ('pending', 'running')",
        "CREATE INDEX graph_embedding_jobs_due_idx "
        "ON kb.graph_embedding_jobs (run_after) WHERE status = 'pending'",
        "CREATE INDEX graph_embedding_jobs_project_idx "
        "ON kb.graph_embedding_jobs (project_id, status)",
    ):
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE kb.graph_embedding_jobs")
    op.execute("DROP TABLE kb.graph_relationships")
    op.execute("DROP TABLE kb.graph_objects")
    op.execute("DROP FUNCTION kb.jsonb_sha256(jsonb)")
