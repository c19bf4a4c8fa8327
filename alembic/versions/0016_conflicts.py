"""Conflicts: the agent-memory pack 1.3.0 (CONFLICTS_WITH, and what replaced a memory).

Revision ID: 0016_conflicts
Revises: 0015_lookalike_skeleton
Create Date: 2026-11-29

- The pack gains the relationship CONFLICTS_WITH (Memory to Memory): a save that states another
  value of the same subject as the memory nearest to it, without saying that it changed, keeps
  both and links them; recall puts the stronger source, then the newer, first and marks the
  other; injection shows only that one; a person or agent resolves the conflict.
- Memory gains two documented properties on the version that sets superseded_by:
  supersede_rule (the save rule's reason, or "decided") and supersede_similarity.
- Every project with the pack installed moves to 1.3.0 (1.2.0 stays published).

The downgrade refuses while live CONFLICTS_WITH edges exist (the pack 1.2.0 does not know the
type; deleting them would silently forget which values disagree): resolve the conflicts (the
dashboard's duplicates page, or POST /api/v1/duplicates/{id}/decision) or delete the edges
first. It leaves the two properties on the versions that have them (1.2.0 ignores properties
it does not declare).

Released revisions are frozen: change the schema with a new revision, never by editing this one.
"""

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0016_conflicts"
down_revision: str | None = "0015_lookalike_skeleton"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PREVIOUS_VERSION = "1.2.0"

PACK: dict[str, Any] = json.loads(
    r"""
{
  "name": "agent-memory",
  "version": "1.3.0",
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
        },
        "supersede_rule": {
          "type": "string",
          "maxLength": 100,
          "description": "What replaced the memory (on the version that sets superseded_by): the save rule's reason ('similar', 'says it changed', 'keeps every word', 'names the change') or 'decided' (a person or agent chose with supersede)."
        },
        "supersede_similarity": {
          "type": "number",
          "minimum": -1,
          "maximum": 1,
          "description": "The cosine similarity of the memory and the one that replaced it, when the save rule replaced it."
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
    },
    "CONFLICTS_WITH": {
      "description": "The two memories state different values of the same subject and neither says it replaces the other (or a weaker source was kept beside a stronger one): both stay active; recall ranks the stronger source, then the newer, first and marks the other; injection shows only that one; a person or agent resolves it (newer wins, older wins, both true).",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "Memory"
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

REFUSE_CONFLICTS = """
DO $$
DECLARE
    found bigint;
BEGIN
    SELECT count(*) INTO found FROM kb.graph_relationships
    WHERE type = 'CONFLICTS_WITH' AND is_head AND deleted_at IS NULL;
    IF found > 0 THEN
        RAISE EXCEPTION 'cannot downgrade below 0016_conflicts: % CONFLICTS_WITH relationships are live, which the agent-memory pack 1.2.0 does not know', found
        USING HINT = 'Resolve the conflicts (the dashboard duplicates page, or POST /api/v1/duplicates/{id}/decision: keep both, or supersede one) or delete the relationships, then downgrade again.';
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


def downgrade() -> None:
    op.execute(REFUSE_CONFLICTS)
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
