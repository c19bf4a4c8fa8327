"""The rule "visible to this principal and active" gets one home in SQL, which the read policy,
the recall function, the kb.memories view and the application's queries use.

Revision ID: 0010_visibility_rule
Revises: 0009_token_verification
Create Date: 2026-11-23

Until now the rule was written out in each place that needed it: the policy on
kb.graph_objects (0006), the recall function twice (0004, then 0008's template), the view
kb.memories (0004), and the application's SQL and Python (emergent_memory/memory/store.py).
Now it is two functions:

- kb.visible_to(o, p_actor_id, p_project_id): whether the actor, working in the project, may
  see the object (DESIGN.md 5): its own user-scope objects in every project, its own
  project-scope objects in this project, and global objects;
- kb.is_active_memory(o): whether the object is an active memory, a live head version of a
  Memory that nothing superseded.

Each is one SQL expression, IMMUTABLE, neither STRICT nor SECURITY DEFINER and without
settings, so the planner inlines it: a query, a policy or a function that calls it is planned
as if the expression were written in its place, and the same indexes serve it (with the
principal's functions still evaluated once per statement in the policy;
tests/test_visibility_rule.py checks that the planner inlines them, tests/test_indexes.py
that the recall and the duplicate checks keep their indexes). At 100,000 memories the plans
of the recall and of the application's queries are the same as before, node for node
(benchmarks/README.md, section 1).

- The read policy graph_objects_read allows, with a principal set, what kb.visible_to allows
  plus the objects without an owner in the current project (generic graph data, never a
  memory), as before.
- kb.recall_memories_for is written out whole in 0010_visibility_rule/recall_memories_for.sql:
  0008's function, each branch filtering with the two functions instead of its own copy of
  the rule. Its signature, settings, grants and comment are unchanged.
- kb.memories selects WHERE kb.is_active_memory(o); its columns, options
  (security_invoker), grants and comment are unchanged.
- emergent_memory/memory/store.py filters with the functions; its Python mirror of the rule
  (visible_to, is_active) is held equal to them by tests/test_visibility_rule.py.

Nothing is rewritten, but changing the policy takes an ACCESS EXCLUSIVE lock on
kb.graph_objects for a moment (and so does its downgrade): the migration waits for the
transactions that read the table to end, and new ones wait for it.

The downgrade puts back what 0009 had, byte for byte: the recall function of 0008 (its own
file), the policy of 0006 and the view of 0004 (tests/test_schema_definitions.py).
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0010_visibility_rule"
down_revision: str | None = "0009_token_verification"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERSIONS = Path(__file__).resolve().parent
RECALL_FOR = VERSIONS / "0010_visibility_rule" / "recall_memories_for.sql"
# what the downgrade writes back: kb.recall_memories_for as 0008 made it
RECALL_FOR_BEFORE = VERSIONS / "0008_recall_rare_words" / "recall_memories_for.sql"

VISIBLE_TO = """
CREATE FUNCTION kb.visible_to(o kb.graph_objects, p_actor_id uuid, p_project_id uuid)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (o.actor_id = p_actor_id
        AND (o.scope = 'user' OR (o.scope = 'project' AND o.project_id = p_project_id)))
       OR o.scope = 'global'
"""

IS_ACTIVE_MEMORY = """
CREATE FUNCTION kb.is_active_memory(o kb.graph_objects)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
       AND NOT (o.properties ? 'superseded_by')
"""

# Who may read a row of kb.graph_objects: with a principal set, what kb.visible_to allows,
# and objects without an owner in the current project (generic graph data, never a memory).
# The principal's functions are scalar subqueries: evaluated once per statement.
READ_POLICY = """
ALTER POLICY graph_objects_read ON kb.graph_objects USING (
    (SELECT kb.current_actor_id()) IS NOT NULL AND (
        kb.visible_to(graph_objects, (SELECT kb.current_actor_id()),
                      (SELECT kb.current_project_id()))
        OR (actor_id IS NULL AND scope = 'project'
            AND project_id = (SELECT kb.current_project_id()))
    )
)
"""

# The policy as 0006 made it.
READ_POLICY_BEFORE = """
ALTER POLICY graph_objects_read ON kb.graph_objects USING (
    (SELECT kb.current_actor_id()) IS NOT NULL AND (
        (actor_id = (SELECT kb.current_actor_id())
         AND (scope = 'user' OR (scope = 'project' AND project_id = (SELECT kb.current_project_id()))))
        OR scope = 'global'
        OR (actor_id IS NULL AND scope = 'project' AND project_id = (SELECT kb.current_project_id()))
    )
)
"""

# Active memories, one row each, with usage and contexts. CREATE OR REPLACE VIEW sets the
# options it is given and drops the others: security_invoker is given again.
MEMORIES_VIEW = """
CREATE OR REPLACE VIEW kb.memories WITH (security_invoker = true) AS
SELECT o.canonical_id AS id,
       o.actor_id,
       o.project_id,
       o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category,
       o.scope,
       o.properties ->> 'source' AS source,
       (o.properties ->> 'confidence')::double precision AS confidence,
       coalesce(u.use_count, 0) AS use_count,
       u.last_used,
       coalesce(ctx.names, '{}') AS contexts,
       o.embedding_model,
       o.created_at,
       o.updated_at
FROM kb.graph_objects o
LEFT JOIN LATERAL (
    SELECT count(*) AS use_count, max(m.recalled_at) AS last_used
    FROM kb.memory_recalls m WHERE m.canonical_id = o.canonical_id
) u ON true
LEFT JOIN LATERAL (
    SELECT array_agg(c.properties ->> 'name' ORDER BY c.properties ->> 'name') AS names
    FROM kb.graph_relationships e
    JOIN kb.graph_objects c
      ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
    WHERE e.src_id = o.canonical_id AND e.type = 'BELONGS_TO_CONTEXT'
      AND e.is_head AND e.deleted_at IS NULL
) ctx ON true
WHERE kb.is_active_memory(o)
"""

# The view as 0004 made it (and 0006 made security_invoker).
MEMORIES_VIEW_BEFORE = """
CREATE OR REPLACE VIEW kb.memories WITH (security_invoker = true) AS
SELECT o.canonical_id AS id,
       o.actor_id,
       o.project_id,
       o.properties ->> 'content' AS content,
       o.properties ->> 'category' AS category,
       o.scope,
       o.properties ->> 'source' AS source,
       (o.properties ->> 'confidence')::double precision AS confidence,
       coalesce(u.use_count, 0) AS use_count,
       u.last_used,
       coalesce(ctx.names, '{}') AS contexts,
       o.embedding_model,
       o.created_at,
       o.updated_at
FROM kb.graph_objects o
LEFT JOIN LATERAL (
    SELECT count(*) AS use_count, max(m.recalled_at) AS last_used
    FROM kb.memory_recalls m WHERE m.canonical_id = o.canonical_id
) u ON true
LEFT JOIN LATERAL (
    SELECT array_agg(c.properties ->> 'name' ORDER BY c.properties ->> 'name') AS names
    FROM kb.graph_relationships e
    JOIN kb.graph_objects c
      ON c.canonical_id = e.dst_id AND c.is_head AND c.deleted_at IS NULL
    WHERE e.src_id = o.canonical_id AND e.type = 'BELONGS_TO_CONTEXT'
      AND e.is_head AND e.deleted_at IS NULL
) ctx ON true
WHERE o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
  AND NOT (o.properties ? 'superseded_by')
"""


def upgrade() -> None:
    op.execute(VISIBLE_TO)
    op.execute(
        "COMMENT ON FUNCTION kb.visible_to(kb.graph_objects, uuid, uuid) IS "
        "'Whether the actor p_actor_id, working in the project p_project_id, may see the "
        "object: its own user-scope objects in every project, its own project-scope objects "
        "in this project, and global objects. Inlined by the planner.'"
    )
    op.execute(IS_ACTIVE_MEMORY)
    op.execute(
        "COMMENT ON FUNCTION kb.is_active_memory(kb.graph_objects) IS "
        "'Whether the object is an active memory: the live head version of a Memory that "
        "nothing superseded. Inlined by the planner.'"
    )
    op.execute(READ_POLICY)
    op.execute(RECALL_FOR.read_text())
    op.execute(MEMORIES_VIEW)


def downgrade() -> None:
    op.execute(MEMORIES_VIEW_BEFORE)
    op.execute(RECALL_FOR_BEFORE.read_text())
    op.execute(READ_POLICY_BEFORE)
    op.execute("DROP FUNCTION kb.is_active_memory(kb.graph_objects)")
    op.execute("DROP FUNCTION kb.visible_to(kb.graph_objects, uuid, uuid)")
