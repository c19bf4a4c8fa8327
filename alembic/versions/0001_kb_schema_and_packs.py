"""Extensions, the kb schema, template packs and their installation per project.

Revision ID: 0001_kb_schema_and_packs
Revises:
Create Date: 2026-11-22

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0001_kb_schema_and_packs"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Extensions are database-wide objects: created when missing, and left in place by the
    # downgrade because other schemas in the same database may use them (docs/operations.md).
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE SCHEMA kb")
    op.execute(
        """
        CREATE TABLE kb.template_packs (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]*$'),
            version text NOT NULL CHECK (version ~ '^[0-9]+\\.[0-9]+\\.[0-9]+$'),
            description text,
            author text,
            license text,
            source text NOT NULL DEFAULT 'builtin',
            object_type_schemas jsonb NOT NULL
                CHECK (jsonb_typeof(object_type_schemas) = 'object'),
            relationship_type_schemas jsonb NOT NULL DEFAULT '{}'
                CHECK (jsonb_typeof(relationship_type_schemas) = 'object'),
            extraction_prompts jsonb NOT NULL DEFAULT '{}'
                CHECK (jsonb_typeof(extraction_prompts) = 'object'),
            checksum text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT template_packs_name_version_key UNIQUE (name, version),
            -- target of the installation table's (id, name) foreign key
            CONSTRAINT template_packs_id_name_key UNIQUE (id, name)
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE kb.template_packs IS "
        "'Published template packs: the object and relationship types a project can install. "
        "A (name, version) row never changes; a new pack version is a new row.'"
    )
    op.execute(
        """
        CREATE TABLE kb.project_template_packs (
            project_id uuid NOT NULL,
            pack_name text NOT NULL,
            template_pack_id uuid NOT NULL,
            installed_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (project_id, pack_name),
            -- the installed row must be a version of the pack it is filed under
            FOREIGN KEY (template_pack_id, pack_name) REFERENCES kb.template_packs (id, name)
        )
        """
    )
    op.execute(
        "CREATE INDEX project_template_packs_pack_idx "
        "ON kb.project_template_packs (template_pack_id)"
    )
    op.execute(
        "COMMENT ON TABLE kb.project_template_packs IS "
        "'The packs installed in each project: one version of each pack name per project.'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE kb.project_template_packs")
    op.execute("DROP TABLE kb.template_packs")
    op.execute("DROP SCHEMA kb")
