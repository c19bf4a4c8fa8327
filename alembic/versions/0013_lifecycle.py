"""The memory lifecycle: the agent-memory pack 1.2.0 (importance, validity in time, rationale,
archive and supersession reasons, the categories decision, lesson and risk), evidence that
reinforces a memory, decay and recency in recall, archived memories, and recall as of a date.

Revision ID: 0013_lifecycle
Revises: 0012_dashboard
Create Date: 2026-11-24

- The agent-memory pack 1.2.0: Memory gains the optional properties importance (low, normal,
  high, core; absent means normal), valid_from and valid_until (ISO 8601 date-times in UTC),
  rationale, archived_at and archive_reason (set by archiving, removed by restore) and
  supersede_reason; its categories gain decision, lesson and risk. Every project that has
  1.1.0 installed moves to 1.2.0. Existing memories stay as they are: they simply lack the new
  optional properties, which means importance normal, valid always, never archived.
- kb.memory_evidence: one row per piece of evidence that a memory holds (a save, an exact
  repeat, a reinforcement, a capture): the evidence (a short quote or source, or none), where
  it came from (session, episode), whether it was independent (its text new for this memory)
  and the confidence before and after. Row-level security as kb.memory_recalls: a row is
  visible to, and insertable by, the actor it belongs to (and emergent_memory_admin).
- kb.is_active_memory also excludes archived memories (a head with archived_at): they leave
  recall, lists, the duplicate checks and the view kb.memories; kb.memory_stats counts them
  apart (column archived) and counts the new categories.
- Functions of the lifecycle, each one SQL expression (the planner inlines the first two):
  kb.memory_validity(properties) (the range [valid_from, valid_until) a memory holds in),
  kb.memory_recallable(o, include_archived, as_of) (what recall may return: the live head of a
  memory, not superseded, not archived unless asked, not expired; or, as of a time, whether a
  version taken as the memory's head then was believed true then: written and recorded by
  then, not deleted, superseded or archived, valid then by its own dates),
  kb.memory_half_life(category), kb.memory_recency(category, last_active, now),
  kb.memory_importance_value(importance) and kb.memory_effective_confidence(stored,
  importance, last_active, now, floor, grace_days, half_life_days) (the stored confidence
  decayed since the memory was last used, reinforced or changed; core memories never decay;
  never below the floor). emergent_memory/memory/store.py holds their Python mirror
  (tests/test_lifecycle_memory.py holds them equal).
- kb.recall_memories_for is written out whole in 0013_lifecycle/recall_memories_for.sql: the
  branches filter with kb.memory_recallable, the new parameters p_include_archived, p_as_of,
  p_recency_weight, p_importance_weight and the decay parameters come last (with defaults),
  the score is multiplied by effective confidence, recency and importance, and the result
  gains the columns effective_confidence, recency and importance_factor. With p_as_of each
  memory is judged, and answers, by the version that was its head then (the latest written
  by then), never when its current head is deleted; those versions are matched without the
  indexes (which hold live heads only), and without p_as_of that part is skipped. kb.recall_memories,
  its checked wrapper (0006), is written again with the same check and the new parameters.
- kb.capture_queue_depth(): how many capture windows of every actor are pending, running or
  dead (counts only), a SECURITY DEFINER function like kb.claim_capture_windows (0011), for
  the metrics endpoint, which reads with the application's role.

The downgrade puts back what 0012 had, byte for byte (tests/test_schema_definitions.py), and
moves projects back to the pack 1.1.0. It refuses, changing nothing, while a live memory (its
head neither deleted nor superseded; archived ones count, they become active again) is in one
of the new categories (1.1.0 does not know them: re-categorise or delete those memories
first). Deleted and superseded memories in those categories are history and are left as they
are: the 1.1 code never validates a stored version against the pack when it reads, lists,
exports or shows the history of memories; it validates only a new version. So under 1.1 its
restore of such a superseded memory is refused by the pack (the category is not one it knows:
save it again in a category it knows), and its restore of such a deleted memory (the one
path that writes a version without validating it) brings it back in that category, counted by
kb.memory_stats as active but in no category column: give it a known category then
(manage_memory update validates the new version). What it cannot keep: the evidence rows (kb.memory_evidence is dropped; the confidence
they raised stays in the memories' versions); archived memories become active again and
expired ones are recalled again (their properties stay, 1.1.0 ignores them).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0013_lifecycle"
down_revision: str | None = "0012_dashboard"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
PREVIOUS_VERSION = "1.1.0"
NEW_CATEGORIES = ("decision", "lesson", "risk")

VERSIONS = Path(__file__).resolve().parent
RECALL_FOR = VERSIONS / "0013_lifecycle" / "recall_memories_for.sql"
# what the downgrade writes back: kb.recall_memories_for as 0010 made it
RECALL_FOR_BEFORE = VERSIONS / "0010_visibility_rule" / "recall_memories_for.sql"

PACK: dict[str, Any] = json.loads(
    r"""
{
  "name": "agent-memory",
  "version": "1.2.0",
  "description": "Cross-session memory for AI agents: what an agent learns about a user and a project (preferences, corrections, conventions, facts, instructions, decisions, lessons, risks), saved through the save_memory tool or captured from conversations, recalled by meaning in later sessions and injected into them; reinforced with evidence, ranked by importance and recency, archived when stale, and valid in time.",
  "author": "emergent-memory",
  "license": "MIT",
  "source": "builtin",
  "object_type_schemas": {
    "Memory": {
      "type": "object",
      "description": "One self-contained thing an agent learned about a user or a project, written in the present tense, that should shape its behaviour in later sessions.",
      "required": [
        "content",
        "category"
      ],
      "properties": {
        "content": {
          "type": "string",
          "minLength": 1,
          "description": "The memory itself: one specific, self-contained fact, preference or instruction, e.g. 'The user prefers pnpm over npm in this repository'."
        },
        "category": {
          "type": "string",
          "enum": [
            "preference",
            "pattern",
            "correction",
            "fact",
            "instruction",
            "convention",
            "decision",
            "lesson",
            "risk"
          ],
          "description": "What kind of memory this is: a preference of the user, a recurring pattern, a correction of an earlier mistake, a fact, a standing instruction, a project convention, a decision made (with its rationale), a lesson learned (what went wrong and what to do instead), or a known risk or pitfall."
        },
        "confidence": {
          "type": "number",
          "minimum": 0,
          "maximum": 1,
          "description": "How sure the agent is that the memory is true: 1.0 when the user said it explicitly, 0.9 when it corrects an earlier memory, 0.7 when inferred."
        },
        "source": {
          "type": "string",
          "enum": [
            "explicit",
            "inferred",
            "corrected"
          ],
          "description": "How the memory was learned: stated explicitly by the user, inferred by the agent, or given as a correction."
        },
        "scope": {
          "type": "string",
          "enum": [
            "user",
            "project",
            "global"
          ],
          "description": "Who the memory applies to: the user in every project, the user in one project, or everyone (global memories are written only by administrators)."
        },
        "last_used": {
          "type": "string",
          "format": "date-time",
          "description": "When the memory was last returned by a recall (ISO 8601)."
        },
        "use_count": {
          "type": "integer",
          "minimum": 0,
          "description": "How many times the memory has been returned by a recall."
        },
        "superseded_by": {
          "type": "string",
          "format": "uuid",
          "description": "Id of the newer memory that replaced this one; a superseded memory is kept for history and never recalled."
        },
        "importance": {
          "type": "string",
          "enum": [
            "low",
            "normal",
            "high",
            "core"
          ],
          "description": "How much the memory matters: low, normal (the default when absent), high, or core (always injected at a session's start within the budget, never decays, never archived)."
        },
        "valid_from": {
          "type": "string",
          "format": "date-time",
          "description": "When the fact starts to hold (ISO 8601, UTC); absent: since always."
        },
        "valid_until": {
          "type": "string",
          "format": "date-time",
          "description": "When the fact stops holding (ISO 8601, UTC), after valid_from; absent: no known end. An expired memory leaves recall (as_of still finds it)."
        },
        "rationale": {
          "type": "string",
          "maxLength": 1000,
          "description": "Why: the reason behind a decision (or any memory), in a sentence or two."
        },
        "archived_at": {
          "type": "string",
          "format": "date-time",
          "description": "When the memory was archived (ISO 8601): an archived memory leaves recall unless asked for, and restore brings it back."
        },
        "archive_reason": {
          "type": "string",
          "maxLength": 500,
          "description": "Why the memory was archived, e.g. 'unused for 200 days, confidence 0.41'."
        },
        "supersede_reason": {
          "type": "string",
          "maxLength": 500,
          "description": "Why the memory was superseded (on the version that sets superseded_by)."
        }
      }
    },
    "MemoryContext": {
      "type": "object",
      "description": "A named group of memories (for example a topic, a codebase area or a workflow) that an agent files memories under; created on first use.",
      "required": [
        "name"
      ],
      "properties": {
        "name": {
          "type": "string",
          "minLength": 1,
          "maxLength": 200,
          "description": "The context's name as the agent refers to it, e.g. 'frontend' or 'release process'."
        },
        "description": {
          "type": "string",
          "description": "What the memories in this context are about."
        },
        "priority": {
          "type": "integer",
          "minimum": 0,
          "maximum": 100,
          "description": "How strongly memories in this context are preferred in recall (higher first); 50 when not set."
        }
      }
    },
    "Episode": {
      "type": "object",
      "description": "A window of a conversation that automatic capture read: which session and turns, when, and the text it read (with injected memories, secrets and the middle of long tool output removed). Memories extracted from it are linked to it with DERIVED_FROM.",
      "required": [
        "session_id",
        "client",
        "first_turn",
        "last_turn",
        "digest"
      ],
      "properties": {
        "session_id": {
          "type": "string",
          "minLength": 1,
          "maxLength": 200,
          "description": "The client's session id (e.g. Claude Code's session_id)."
        },
        "client": {
          "type": "string",
          "minLength": 1,
          "maxLength": 100,
          "description": "Which client sent the conversation, e.g. 'claude-code', 'opencode' or 'api'."
        },
        "first_turn": {
          "type": "integer",
          "minimum": 0,
          "description": "Index of the window's first turn in the session (0 = the session's first message)."
        },
        "last_turn": {
          "type": "integer",
          "minimum": 0,
          "description": "Index of the window's last turn in the session."
        },
        "captured_at": {
          "type": "string",
          "format": "date-time",
          "description": "When the window was read (ISO 8601)."
        },
        "digest": {
          "type": "string",
          "pattern": "^[0-9a-f]{64}$",
          "description": "sha256 of the window's text as read: the same text captured again is recognised."
        },
        "summary": {
          "type": "string",
          "maxLength": 2000,
          "description": "What the window is about, in a sentence or two (from the capture models)."
        },
        "text": {
          "type": "string",
          "description": "The turns as read, one per line with its role ('user:', 'assistant:', 'tool:')."
        }
      }
    }
  },
  "relationship_type_schemas": {
    "BELONGS_TO_CONTEXT": {
      "description": "The memory is filed under this context.",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "MemoryContext"
      ]
    },
    "SUPERSEDES": {
      "description": "The source memory replaces the target memory (a reworded or corrected version of the same fact); the target is kept for history.",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "Memory"
      ]
    },
    "DERIVED_FROM": {
      "description": "The source memory was inferred from the target: another memory, or the conversation window (Episode) automatic capture extracted it from.",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "Memory",
        "Episode"
      ]
    },
    "RELEVANT_TO": {
      "description": "The memory is relevant to another object in the project's graph (a document, an issue, a component...).",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "*"
      ]
    }
  },
  "extraction_prompts": {
    "guidelines": "Memory and MemoryContext objects are never extracted from documents. They are written by an agent through the save_memory tool, or by emergent-memory's automatic capture from a conversation (an Episode, linked with DERIVED_FROM), always through the same save path. Document extraction pipelines must skip these types.",
    "extract": false
  }
}
"""
)

OWN_ROWS = (
    "(SELECT kb.current_actor_id()) IS NOT NULL AND actor_id = (SELECT kb.current_actor_id())"
)

EVIDENCE = """
CREATE TABLE kb.memory_evidence (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    canonical_id uuid NOT NULL,
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    evidence text CHECK (evidence IS NULL OR (evidence <> '' AND length(evidence) <= 500)),
    origin text NOT NULL CHECK (origin IN ('save', 'repeat', 'reinforce', 'capture')),
    session_id text CHECK (session_id IS NULL OR (session_id <> '' AND length(session_id) <= 200)),
    episode_id uuid,
    independent boolean NOT NULL,
    confidence_before double precision NOT NULL
        CHECK (confidence_before >= 0 AND confidence_before <= 1),
    confidence_after double precision NOT NULL
        CHECK (confidence_after >= 0 AND confidence_after <= 1),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_evidence_memory_idx ON kb.memory_evidence (canonical_id, created_at);
"""

EVIDENCE_COMMENT = (
    "One row per piece of evidence a memory got: at its save, an exact repeat, a "
    "reinforcement or a capture; the evidence (a short quote or source), its session or "
    "episode, whether it was independent (new for this memory) and the confidence before and "
    "after."
)

# The range of time a memory holds in, [valid_from, valid_until): unbounded where absent;
# empty if the bounds are crossed (never written by the application, but never an error).
MEMORY_VALIDITY = """
CREATE FUNCTION kb.memory_validity(p_properties jsonb)
RETURNS tstzrange
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
    WHEN (p_properties ->> 'valid_from')::timestamptz
         > (p_properties ->> 'valid_until')::timestamptz THEN 'empty'::tstzrange
    ELSE tstzrange((p_properties ->> 'valid_from')::timestamptz,
                   (p_properties ->> 'valid_until')::timestamptz)
END
"""

# What recall may return (besides kb.visible_to). Without p_as_of: a live head of a memory
# that nothing superseded, not archived (unless p_include_archived) and not expired. With
# p_as_of: whether the version o, taken as the memory's head at p_as_of (the caller picks the
# latest version written by then: kb.recall_memories_for's as_of_versions), was believed true
# then: written and first recorded by then, not deleted, not superseded, not archived (unless
# p_include_archived), and valid then by its own valid_from and valid_until.
MEMORY_RECALLABLE = """
CREATE FUNCTION kb.memory_recallable(
    o kb.graph_objects, p_include_archived boolean, p_as_of timestamptz)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN o.type = 'Memory' AND o.deleted_at IS NULL
   AND NOT (o.properties ? 'superseded_by')
   AND (p_include_archived OR NOT (o.properties ? 'archived_at'))
   AND CASE
       WHEN p_as_of IS NULL THEN
           o.is_head
           AND coalesce((o.properties ->> 'valid_until')::timestamptz > now(), true)
       ELSE
           o.created_at <= p_as_of
           AND o.updated_at <= p_as_of
           AND kb.memory_validity(o.properties) @> p_as_of
   END
"""

# Days after which a category's recency halves.
MEMORY_HALF_LIFE = """
CREATE FUNCTION kb.memory_half_life(p_category text)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE p_category
    WHEN 'fact' THEN 90
    WHEN 'pattern' THEN 180
    ELSE 365
END
"""

# 1 when used or changed now, halving every half-life of the category.
MEMORY_RECENCY = """
CREATE FUNCTION kb.memory_recency(
    p_category text, p_last_active timestamptz, p_now timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN power(0.5::double precision,
             greatest(0, coalesce(extract(epoch FROM p_now - p_last_active)::double precision,
                                  0)) / 86400 / kb.memory_half_life(p_category))
"""

MEMORY_IMPORTANCE_VALUE = """
CREATE FUNCTION kb.memory_importance_value(p_importance text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE p_importance WHEN 'low' THEN -1 WHEN 'high' THEN 1 WHEN 'core' THEN 2 ELSE 0 END
"""

# The stored confidence decayed at read time: unchanged for core memories; otherwise halved
# every p_half_life_days of idleness beyond p_grace_days (idle since p_last_active: the last
# use, evidence or change), never below p_floor (nor above the stored value).
MEMORY_EFFECTIVE_CONFIDENCE = """
CREATE FUNCTION kb.memory_effective_confidence(
    p_stored double precision,
    p_importance text,
    p_last_active timestamptz,
    p_now timestamptz,
    p_floor double precision DEFAULT 0.3,
    p_grace_days double precision DEFAULT 30,
    p_half_life_days double precision DEFAULT 180)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN p_importance = 'core' THEN p_stored
    ELSE greatest(
        least(p_stored, p_floor),
        p_stored * power(0.5::double precision,
                         greatest(0, coalesce(extract(epoch FROM p_now - p_last_active)
                                                  ::double precision, 0) / 86400
                                     - p_grace_days) / p_half_life_days))
END
"""

FUNCTION_COMMENTS = {
    "kb.memory_validity(jsonb)": "The time range a memory holds in, [valid_from, "
    "valid_until), from its properties; unbounded where absent.",
    "kb.memory_recallable(kb.graph_objects, boolean, timestamptz)": "Whether recall may "
    "return the object (visibility apart): without p_as_of an active memory (archived ones "
    "only with p_include_archived) that has not expired; with p_as_of whether this version, "
    "taken as the memory head at p_as_of (the latest version written by then), was believed "
    "true then: recorded by then, not deleted, superseded or archived, valid then. Inlined "
    "by the planner.",
    "kb.memory_half_life(text)": "Days after which the recency of a memory of this "
    "category halves: fact 90, pattern 180, every other category 365.",
    "kb.memory_recency(text, timestamptz, timestamptz)": "Recency of a memory last used or "
    "changed at p_last_active: 1 then, halving every half-life of its category.",
    "kb.memory_importance_value(text)": "An importance as a number for ranking: low -1, "
    "normal (or none) 0, high 1, core 2.",
    "kb.memory_effective_confidence(double precision, text, timestamptz, timestamptz, "
    "double precision, double precision, double precision)": "The stored confidence "
    "decayed at read time: unchanged for core memories, else halved every p_half_life_days "
    "of idleness beyond p_grace_days, never below p_floor (or the stored value if lower).",
}

IS_ACTIVE_MEMORY = """
CREATE OR REPLACE FUNCTION kb.is_active_memory(o kb.graph_objects)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
       AND NOT (o.properties ? 'superseded_by') AND NOT (o.properties ? 'archived_at')
"""

IS_ACTIVE_MEMORY_COMMENT = (
    "COMMENT ON FUNCTION kb.is_active_memory(kb.graph_objects) IS "
    "'Whether the object is an active memory: the live head version of a Memory that "
    "nothing superseded and that is not archived. Inlined by the planner.'"
)

# As 0010 made them.
IS_ACTIVE_MEMORY_BEFORE = """
CREATE OR REPLACE FUNCTION kb.is_active_memory(o kb.graph_objects)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN o.type = 'Memory' AND o.is_head AND o.deleted_at IS NULL
       AND NOT (o.properties ? 'superseded_by')
"""

IS_ACTIVE_MEMORY_COMMENT_BEFORE = (
    "COMMENT ON FUNCTION kb.is_active_memory(kb.graph_objects) IS "
    "'Whether the object is an active memory: the live head version of a Memory that "
    "nothing superseded. Inlined by the planner.'"
)

# kb.memory_stats with archived memories apart and the new categories (new columns last).
MEMORY_STATS = """
CREATE OR REPLACE VIEW kb.memory_stats WITH (security_invoker = true) AS
SELECT actor_id,
       project_id,
       count(*) FILTER (WHERE state = 'active') AS active,
       count(*) FILTER (WHERE state = 'superseded') AS superseded,
       count(*) FILTER (WHERE state = 'deleted') AS deleted,
       count(*) FILTER (WHERE state = 'active' AND category = 'preference') AS preferences,
       count(*) FILTER (WHERE state = 'active' AND category = 'pattern') AS patterns,
       count(*) FILTER (WHERE state = 'active' AND category = 'correction') AS corrections,
       count(*) FILTER (WHERE state = 'active' AND category = 'fact') AS facts,
       count(*) FILTER (WHERE state = 'active' AND category = 'instruction') AS instructions,
       count(*) FILTER (WHERE state = 'active' AND category = 'convention') AS conventions,
       count(*) FILTER (WHERE state = 'archived') AS archived,
       count(*) FILTER (WHERE state = 'active' AND category = 'decision') AS decisions,
       count(*) FILTER (WHERE state = 'active' AND category = 'lesson') AS lessons,
       count(*) FILTER (WHERE state = 'active' AND category = 'risk') AS risks
FROM (
    SELECT actor_id, project_id, properties ->> 'category' AS category,
           CASE WHEN deleted_at IS NOT NULL THEN 'deleted'
                WHEN properties ? 'superseded_by' THEN 'superseded'
                WHEN properties ? 'archived_at' THEN 'archived'
                ELSE 'active' END AS state
    FROM kb.graph_objects
    WHERE type = 'Memory' AND is_head
) m
GROUP BY actor_id, project_id
"""

MEMORY_STATS_COMMENT = (
    "COMMENT ON VIEW kb.memory_stats IS "
    "'Per actor and project (where the memory was saved): memories by state (active, "
    "superseded, deleted, archived) and, for active ones, by category.'"
)

# As 0004 made it (0006 made it security_invoker).
MEMORY_STATS_BEFORE = """
        CREATE VIEW kb.memory_stats AS
        SELECT actor_id,
               project_id,
               count(*) FILTER (WHERE state = 'active') AS active,
               count(*) FILTER (WHERE state = 'superseded') AS superseded,
               count(*) FILTER (WHERE state = 'deleted') AS deleted,
               count(*) FILTER (WHERE state = 'active' AND category = 'preference') AS preferences,
               count(*) FILTER (WHERE state = 'active' AND category = 'pattern') AS patterns,
               count(*) FILTER (WHERE state = 'active' AND category = 'correction') AS corrections,
               count(*) FILTER (WHERE state = 'active' AND category = 'fact') AS facts,
               count(*) FILTER (WHERE state = 'active' AND category = 'instruction')
                   AS instructions,
               count(*) FILTER (WHERE state = 'active' AND category = 'convention') AS conventions
        FROM (
            SELECT actor_id, project_id, properties ->> 'category' AS category,
                   CASE WHEN deleted_at IS NOT NULL THEN 'deleted'
                        WHEN properties ? 'superseded_by' THEN 'superseded'
                        ELSE 'active' END AS state
            FROM kb.graph_objects
            WHERE type = 'Memory' AND is_head
        ) m
        GROUP BY actor_id, project_id
        """

MEMORY_STATS_COMMENT_BEFORE = (
    "COMMENT ON VIEW kb.memory_stats IS "
    "'Per actor and project (where the memory was saved): memories by state and, for "
    "active ones, by category.'"
)

OLD_RECALL_SIGNATURE = """(
    uuid, uuid, text, vector, text, text, text, integer, integer, integer,
    double precision, double precision, double precision, double precision
)"""
NEW_RECALL_SIGNATURE = """(
    uuid, uuid, text, vector, text, text, text, integer, integer, integer,
    double precision, double precision, double precision, double precision,
    boolean, timestamptz, double precision, double precision, double precision,
    double precision, double precision
)"""

# The checked wrapper of 0006, with the new parameters passed on.
RECALL_WRAPPER = """
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
    p_min_similarity double precision DEFAULT 0.15,
    p_include_archived boolean DEFAULT false,
    p_as_of timestamptz DEFAULT NULL,
    p_recency_weight double precision DEFAULT 0.05,
    p_importance_weight double precision DEFAULT 0.0,
    p_decay_floor double precision DEFAULT 0.3,
    p_decay_grace_days double precision DEFAULT 30,
    p_decay_half_life_days double precision DEFAULT 180
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
    score double precision,
    effective_confidence double precision,
    recency double precision,
    importance_factor double precision
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
        p_vector_weight, p_confidence_weight, p_min_similarity, p_include_archived, p_as_of,
        p_recency_weight, p_importance_weight, p_decay_floor, p_decay_grace_days,
        p_decay_half_life_days);
END
$$
"""

RECALL_WRAPPER_COMMENT = (
    "COMMENT ON FUNCTION kb.recall_memories IS "
    "'Hybrid recall (full text + vector, fused) of the memories visible to p_actor_id in "
    "p_project_id. A role subject to row-level security may ask only for the principal "
    "set in its transaction (emergent_memory.actor_id / .project_id); members of "
    "emergent_memory_admin may ask for anyone.'"
)

RECALL_FOR_COMMENT = (
    "COMMENT ON FUNCTION kb.recall_memories_for IS "
    "'Hybrid recall for one actor in one project: full-text and vector candidates, each "
    "filtered by visibility and kb.memory_recallable (archived only when asked, expired "
    "never, or as of p_as_of), fused by weighted reciprocal rank and multiplied by effective "
    "confidence, recency and importance. The vector branch answers nothing when its best "
    "match is below p_min_similarity, and drops candidates below half of it. Without a query "
    "embedding it is full-text only.'"
)

# As 0004 wrote it.
RECALL_FOR_COMMENT_BEFORE = (
    "COMMENT ON FUNCTION kb.recall_memories_for IS "
    "'Hybrid recall for one actor in one project: full-text and vector candidates, each "
    "filtered by visibility, fused by weighted reciprocal rank and nudged by confidence. "
    "The vector branch answers nothing when its best match is below p_min_similarity, "
    "and drops candidates below half of it. "
    "Without a query embedding it "
    "is full-text only.'"
)

# kb.recall_memories as 0006 made it.
RECALL_WRAPPER_BEFORE = """
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

# How many capture windows wait, run or died, over every actor (the queue's depth for
# /metrics, which reads it from the application's pool: kb.capture_windows shows each actor
# only its own rows). Counts only, no ids.
CAPTURE_QUEUE_DEPTH = """
CREATE FUNCTION kb.capture_queue_depth()
RETURNS TABLE (status text, windows bigint)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, kb
AS $$
    SELECT w.status, count(*) FROM kb.capture_windows w
    WHERE w.status IN ('pending', 'running', 'dead')
    GROUP BY w.status
$$
"""

REFUSE_NEW_CATEGORIES = """
DO $$
DECLARE
    found bigint;
BEGIN
    -- live memories only (archived ones included: the downgrade makes them active again);
    -- deleted and superseded ones are history and stay as they are
    SELECT count(*) INTO found FROM kb.graph_objects
    WHERE type = 'Memory' AND is_head AND deleted_at IS NULL
      AND NOT (properties ? 'superseded_by')
      AND properties ->> 'category' IN ('decision', 'lesson', 'risk');
    IF found > 0 THEN
        RAISE EXCEPTION 'cannot downgrade below 0013_lifecycle: % memories are in the categories decision, lesson or risk, which the agent-memory pack 1.1.0 does not know', found
        USING HINT = 'Give them another category (manage_memory update) or delete them, then downgrade again.';
    END IF;
END
$$
"""


def _checksum(pack: dict[str, Any]) -> str:
    canonical = json.dumps(pack, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def upgrade() -> None:
    op.execute(
        sa.text(
            """
            INSERT INTO kb.template_packs (
                name, version, description, author, license, source,
                object_type_schemas, relationship_type_schemas, extraction_prompts, checksum
            ) VALUES (
                :name, :version, :description, :author, :license, :source,
                :object_type_schemas, :relationship_type_schemas, :extraction_prompts, :checksum
            )
            """
        ).bindparams(
            sa.bindparam("object_type_schemas", type_=JSONB),
            sa.bindparam("relationship_type_schemas", type_=JSONB),
            sa.bindparam("extraction_prompts", type_=JSONB),
            name=PACK["name"],
            version=PACK["version"],
            description=PACK["description"],
            author=PACK["author"],
            license=PACK["license"],
            source=PACK["source"],
            object_type_schemas=PACK["object_type_schemas"],
            relationship_type_schemas=PACK["relationship_type_schemas"],
            extraction_prompts=PACK["extraction_prompts"],
            checksum=_checksum(PACK),
        )
    )
    _move_installations(PREVIOUS_VERSION, PACK["version"])

    op.execute(EVIDENCE)
    op.execute(f"COMMENT ON TABLE kb.memory_evidence IS '{EVIDENCE_COMMENT}'")
    op.execute("ALTER TABLE kb.memory_evidence ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE kb.memory_evidence FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY memory_evidence_admin ON kb.memory_evidence FOR ALL TO {ADMIN} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(
        f"CREATE POLICY memory_evidence_read ON kb.memory_evidence FOR SELECT USING ({OWN_ROWS})"
    )
    op.execute(
        "CREATE POLICY memory_evidence_insert ON kb.memory_evidence FOR INSERT "
        f"WITH CHECK ({OWN_ROWS})"
    )
    op.execute(f"GRANT SELECT, INSERT ON kb.memory_evidence TO {APP}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.memory_evidence TO {ADMIN}")

    for function in (
        MEMORY_VALIDITY,
        MEMORY_RECALLABLE,
        MEMORY_HALF_LIFE,
        MEMORY_RECENCY,
        MEMORY_IMPORTANCE_VALUE,
        MEMORY_EFFECTIVE_CONFIDENCE,
    ):
        op.execute(function)
    for signature, comment in FUNCTION_COMMENTS.items():
        assert "'" not in comment
        op.execute(f"COMMENT ON FUNCTION {signature} IS '{comment}'")
    op.execute(IS_ACTIVE_MEMORY)
    op.execute(IS_ACTIVE_MEMORY_COMMENT)
    op.execute(MEMORY_STATS)
    op.execute(MEMORY_STATS_COMMENT)

    op.execute(f"DROP FUNCTION kb.recall_memories{OLD_RECALL_SIGNATURE}")
    op.execute(f"DROP FUNCTION kb.recall_memories_for{OLD_RECALL_SIGNATURE}")
    op.execute(RECALL_FOR.read_text())
    op.execute(
        f"REVOKE EXECUTE ON FUNCTION kb.recall_memories_for{NEW_RECALL_SIGNATURE} FROM PUBLIC"
    )
    op.execute(RECALL_FOR_COMMENT)
    op.execute(RECALL_WRAPPER)
    op.execute(RECALL_WRAPPER_COMMENT)

    op.execute(CAPTURE_QUEUE_DEPTH)
    op.execute(
        "COMMENT ON FUNCTION kb.capture_queue_depth() IS 'How many capture windows of every "
        "actor are pending, running or dead (for the metrics endpoint): counts only.'"
    )
    op.execute("REVOKE ALL ON FUNCTION kb.capture_queue_depth() FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION kb.capture_queue_depth() TO {APP}, {ADMIN}")


def downgrade() -> None:
    op.execute(REFUSE_NEW_CATEGORIES)
    op.execute("DROP FUNCTION kb.capture_queue_depth()")
    op.execute(f"DROP FUNCTION kb.recall_memories{NEW_RECALL_SIGNATURE}")
    op.execute(f"DROP FUNCTION kb.recall_memories_for{NEW_RECALL_SIGNATURE}")
    op.execute(RECALL_FOR_BEFORE.read_text())
    op.execute(
        f"REVOKE EXECUTE ON FUNCTION kb.recall_memories_for{OLD_RECALL_SIGNATURE} FROM PUBLIC"
    )
    op.execute(RECALL_FOR_COMMENT_BEFORE)
    op.execute(RECALL_WRAPPER_BEFORE)
    op.execute(RECALL_WRAPPER_COMMENT)

    op.execute("DROP VIEW kb.memory_stats")
    op.execute(MEMORY_STATS_BEFORE)
    op.execute("ALTER VIEW kb.memory_stats SET (security_invoker = true)")
    op.execute(MEMORY_STATS_COMMENT_BEFORE)
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON kb.memory_stats TO {APP}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.memory_stats TO {ADMIN}")
    op.execute(IS_ACTIVE_MEMORY_BEFORE)
    op.execute(IS_ACTIVE_MEMORY_COMMENT_BEFORE)
    for signature in reversed(FUNCTION_COMMENTS):
        op.execute(f"DROP FUNCTION {signature}")
    op.execute("DROP TABLE kb.memory_evidence")

    _move_installations(PACK["version"], PREVIOUS_VERSION)
    op.execute(
        sa.text(
            "DELETE FROM kb.template_packs WHERE name = :name AND version = :version"
        ).bindparams(name=PACK["name"], version=PACK["version"])
    )


def _move_installations(from_version: str, to_version: str) -> None:
    op.execute(
        sa.text(
            """
            UPDATE kb.project_template_packs i
            SET template_pack_id = target.id, updated_at = now()
            FROM kb.template_packs source, kb.template_packs target
            WHERE i.template_pack_id = source.id
              AND source.name = :name AND source.version = :from_version
              AND target.name = :name AND target.version = :to_version
            """
        ).bindparams(name=PACK["name"], from_version=from_version, to_version=to_version)
    )
