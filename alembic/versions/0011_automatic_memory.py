"""Automatic memory: the agent-memory pack 1.1.0 (Episode), sessions, the injection log, the
capture queue, the LLM call log, and tokens that choose their project per request.

Revision ID: 0011_automatic_memory
Revises: 0010_visibility_rule
Create Date: 2026-11-24

- The agent-memory pack 1.1.0 adds the Episode type (a captured conversation window) and lets
  DERIVED_FROM point from a Memory to an Episode. Every project that has 1.0.0 installed is
  moved to 1.1.0 (the types of 1.0.0 are unchanged, so every existing object stays valid).
- kb.agent_sessions: one row per (actor, client session id): the project it last worked in,
  since when memories count as not yet shown (reset on /clear and compaction), how many turns
  were received and how many were cut into capture windows.
- kb.injections: every injection (session, event, memory ids, estimated tokens, budget).
- kb.capture_turns: the turns received for capture, secrets already removed, in session order.
- kb.capture_windows: the capture queue, one row per window of turns, with the embedding
  queue's retries, backoff and dead letter (status dead, last_error). It holds ids and ranges,
  never text; workers claim due windows of every actor through kb.claim_capture_windows, a
  SECURITY DEFINER function (FOR UPDATE SKIP LOCKED), and kb.cut_idle_capture_windows queues the
  rest of sessions that went quiet; everything else they do acting as the window's owner.
- kb.llm_calls: model, input and output tokens, purpose and outcome of every LLM call (never
  its text).
- The scope memory:any-project: a token with it acts for its own actor in the project the
  request names (hooks installed for a whole user account serve every repository with one
  token, and never reach another actor's memories); without it, a token acts only in its own
  project, as before.

Every new table has row-level security like kb.memory_recalls: a row is visible to, and
writable by, the actor it belongs to (and emergent_memory_admin).

The downgrade drops what this revision made, moves projects back to the pack 1.0.0 and
deletes 1.1.0; Episode objects stay in kb.graph_objects (nothing is deleted from the graph),
and tokens with the new scope lose it (a token left with no scope at all is revoked).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0011_automatic_memory"
down_revision: str | None = "0010_visibility_rule"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP = "emergent_memory_app"
ADMIN = "emergent_memory_admin"
PREVIOUS_VERSION = "1.0.0"

PACK: dict[str, Any] = json.loads(
    r"""
{
  "name": "agent-memory",
  "version": "1.1.0",
  "description": "Cross-session memory for AI agents: what an agent learns about a user and a project (preferences, corrections, conventions, facts, instructions), saved through the save_memory tool or captured from conversations, recalled by meaning in later sessions and injected into them.",
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
            "convention"
          ],
          "description": "What kind of memory this is: a preference of the user, a recurring pattern, a correction of an earlier mistake, a fact, a standing instruction, or a project convention."
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

TABLES = """
CREATE TABLE kb.agent_sessions (
    actor_id uuid NOT NULL,
    session_id text NOT NULL CHECK (session_id <> '' AND length(session_id) <= 200),
    project_id uuid NOT NULL,
    client text NOT NULL CHECK (client <> '' AND length(client) <= 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    shown_since timestamptz NOT NULL DEFAULT now(),
    turns_received integer NOT NULL DEFAULT 0 CHECK (turns_received >= 0),
    turns_windowed integer NOT NULL DEFAULT 0
        CHECK (turns_windowed >= 0 AND turns_windowed <= turns_received),
    PRIMARY KEY (actor_id, session_id)
);
CREATE INDEX agent_sessions_idle_idx ON kb.agent_sessions (last_seen_at)
    WHERE turns_windowed < turns_received;

CREATE TABLE kb.injections (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    session_id text NOT NULL,
    client text NOT NULL,
    event text NOT NULL CHECK (event IN ('session_start', 'prompt')),
    memory_ids uuid[] NOT NULL,
    estimated_tokens integer NOT NULL CHECK (estimated_tokens >= 0),
    budget_tokens integer NOT NULL CHECK (budget_tokens > 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX injections_session_idx ON kb.injections (actor_id, session_id, created_at);

CREATE TABLE kb.capture_turns (
    actor_id uuid NOT NULL,
    session_id text NOT NULL,
    turn_index integer NOT NULL CHECK (turn_index >= 0),
    role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (actor_id, session_id, turn_index)
);

CREATE TABLE kb.capture_windows (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    actor_id uuid NOT NULL,
    project_id uuid NOT NULL,
    session_id text NOT NULL,
    client text NOT NULL,
    first_turn integer NOT NULL CHECK (first_turn >= 0),
    end_turn integer NOT NULL CHECK (end_turn > first_turn),
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'dead')),
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_after timestamptz NOT NULL DEFAULT now(),
    locked_at timestamptz,
    last_error text,
    episode_id uuid,
    outcome jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (actor_id, session_id, first_turn, end_turn)
);
CREATE INDEX capture_windows_due_idx ON kb.capture_windows (run_after) WHERE status = 'pending';
CREATE INDEX capture_windows_actor_idx ON kb.capture_windows (actor_id, status, created_at);

CREATE TABLE kb.llm_calls (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    actor_id uuid NOT NULL,
    window_id uuid,
    purpose text NOT NULL CHECK (purpose <> ''),
    model text NOT NULL,
    input_tokens integer NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens integer NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    outcome text NOT NULL CHECK (outcome IN ('ok', 'error')),
    error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_calls_actor_day_idx ON kb.llm_calls (actor_id, created_at);
"""

COMMENTS = {
    "agent_sessions": "A client session (Claude Code, OpenCode, the API) of an actor: its "
    "project, since when memories count as not yet shown in it, and how far its turns were "
    "received and cut into capture windows.",
    "injections": "Every injection of memories into a session: which memories, how many "
    "estimated tokens, under which budget.",
    "capture_turns": "Turns of conversations received for automatic capture, in session order, "
    "with secrets removed.",
    "capture_windows": "The capture queue: windows of turns for the capture worker, with "
    "attempts, backoff and dead letters (status dead, last_error). Ids and ranges, never text.",
    "llm_calls": "Every LLM call of automatic capture: model, tokens, purpose and outcome, "
    "never its text.",
}
NEW_TABLES = tuple(COMMENTS)

# The due windows of every actor, oldest first, claimed without waiting for a window another
# worker holds; windows left running by a worker that died are due again after lock_timeout.
CLAIM = """
CREATE FUNCTION kb.claim_capture_windows(p_limit integer, p_lock_timeout double precision)
RETURNS TABLE (
    id uuid, actor_id uuid, project_id uuid, session_id text, client text,
    first_turn integer, end_turn integer, attempts integer
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
BEGIN
    UPDATE kb.capture_windows w
    SET status = 'pending', locked_at = NULL, updated_at = now()
    WHERE w.status = 'running'
      AND w.locked_at < now() - make_interval(secs => p_lock_timeout);
    RETURN QUERY
    WITH due AS (
        SELECT w.id FROM kb.capture_windows w
        WHERE w.status = 'pending' AND w.run_after <= now()
        ORDER BY w.run_after
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    )
    UPDATE kb.capture_windows w
    SET status = 'running', locked_at = now(), attempts = w.attempts + 1, updated_at = now()
    FROM due WHERE w.id = due.id
    RETURNING w.id, w.actor_id, w.project_id, w.session_id, w.client, w.first_turn,
              w.end_turn, w.attempts;
END
$$
"""

# Sessions quiet for p_idle seconds with turns not yet in a window: the rest becomes a window.
CUT_IDLE = """
CREATE FUNCTION kb.cut_idle_capture_windows(p_idle double precision)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    cut integer;
BEGIN
    WITH idle AS (
        SELECT s.actor_id, s.session_id, s.project_id, s.client, s.turns_windowed,
               s.turns_received
        FROM kb.agent_sessions s
        WHERE s.turns_windowed < s.turns_received
          AND s.last_seen_at < now() - make_interval(secs => p_idle)
        FOR UPDATE SKIP LOCKED
    ), windowed AS (
        UPDATE kb.agent_sessions s SET turns_windowed = idle.turns_received
        FROM idle WHERE s.actor_id = idle.actor_id AND s.session_id = idle.session_id
        RETURNING idle.*
    )
    INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, first_turn,
                                    end_turn)
    SELECT actor_id, project_id, session_id, client, turns_windowed, turns_received
    FROM windowed
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS cut = ROW_COUNT;
    RETURN cut;
END
$$
"""

SCOPES_BEFORE = "ARRAY['memory:read', 'memory:write', 'memory:admin']"
SCOPES_AFTER = "ARRAY['memory:read', 'memory:write', 'memory:admin', 'memory:any-project']"


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

    op.execute(TABLES)
    for table, comment in COMMENTS.items():
        assert "'" not in comment
        op.execute(f"COMMENT ON TABLE kb.{table} IS '{comment}'")
    for table in NEW_TABLES:
        op.execute(f"ALTER TABLE kb.{table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE kb.{table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY {table}_admin ON kb.{table} FOR ALL TO {ADMIN} "
            "USING (true) WITH CHECK (true)"
        )
        op.execute(
            f"CREATE POLICY {table}_own ON kb.{table} FOR ALL TO {APP} "
            f"USING ({OWN_ROWS}) WITH CHECK ({OWN_ROWS})"
        )
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON kb.{table} TO {APP}, {ADMIN}")

    for function in (CLAIM, CUT_IDLE):
        op.execute(function)
    for signature in (
        "kb.claim_capture_windows(integer, double precision)",
        "kb.cut_idle_capture_windows(double precision)",
    ):
        op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
        op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO {APP}, {ADMIN}")

    op.execute("ALTER TABLE kb.api_tokens DROP CONSTRAINT api_tokens_scopes_check")
    op.execute(
        "ALTER TABLE kb.api_tokens ADD CONSTRAINT api_tokens_scopes_check "
        f"CHECK (cardinality(scopes) > 0 AND scopes <@ {SCOPES_AFTER})"
    )


def downgrade() -> None:
    # a token that had only the new scope keeps memory:read to satisfy the check, revoked
    op.execute(
        """
        UPDATE kb.api_tokens
        SET scopes = CASE WHEN scopes = ARRAY['memory:any-project']
                          THEN ARRAY['memory:read']
                          ELSE array_remove(scopes, 'memory:any-project') END,
            revoked_at = CASE WHEN scopes = ARRAY['memory:any-project']
                              THEN coalesce(revoked_at, now()) ELSE revoked_at END
        WHERE 'memory:any-project' = ANY (scopes)
        """
    )
    op.execute("ALTER TABLE kb.api_tokens DROP CONSTRAINT api_tokens_scopes_check")
    op.execute(
        "ALTER TABLE kb.api_tokens ADD CONSTRAINT api_tokens_scopes_check "
        f"CHECK (cardinality(scopes) > 0 AND scopes <@ {SCOPES_BEFORE})"
    )
    op.execute("DROP FUNCTION kb.cut_idle_capture_windows(double precision)")
    op.execute("DROP FUNCTION kb.claim_capture_windows(integer, double precision)")
    for table in reversed(NEW_TABLES):
        op.execute(f"DROP TABLE kb.{table}")
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
