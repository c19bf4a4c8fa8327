"""Seed the agent-memory template pack, version 1.0.0.

Revision ID: 0003_seed_agent_memory_pack
Revises: 0002_versioned_graph
Create Date: 2026-11-22

Released revisions are frozen: change the schema with a new revision, never by editing this one.
The pack is written out here rather than read from packs/agent-memory.json so that this
revision seeds the same rows forever; a new pack version is a new revision
(tests/test_packs.py keeps the file equal to what the head revision seeds).
"""

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0003_seed_agent_memory_pack"
down_revision: str | None = "0002_versioned_graph"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PACK: dict[str, Any] = json.loads(
    r"""
{
  "name": "agent-memory",
  "version": "1.0.0",
  "description": "Cross-session memory for AI agents: what an agent learns about a user and a project (preferences, corrections, conventions, facts, instructions), saved through the save_memory tool and recalled by meaning in later sessions.",
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
      "description": "The source memory was inferred from the target memory.",
      "sourceTypes": [
        "Memory"
      ],
      "targetTypes": [
        "Memory"
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
    "guidelines": "Memory and MemoryContext objects are never extracted from documents. They are written only by an agent through the save_memory tool, from what a user said or did in a conversation. Document extraction pipelines must skip these types.",
    "extract": false
  }
}
"""
)


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


def downgrade() -> None:
    # Projects that installed this version lose the installation with it.
    pack = {"name": PACK["name"], "version": PACK["version"]}
    op.execute(
        sa.text(
            """
            DELETE FROM kb.project_template_packs
            WHERE template_pack_id IN (
                SELECT id FROM kb.template_packs WHERE name = :name AND version = :version
            )
            """
        ).bindparams(**pack)
    )
    op.execute(
        sa.text(
            "DELETE FROM kb.template_packs WHERE name = :name AND version = :version"
        ).bindparams(**pack)
    )
