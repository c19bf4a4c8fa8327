"""What the capture worker writes for a window: its Episode, and the memories the rule kept,
saved through `MemoryService.save` exactly as a tool call would save them.

An Episode is a graph object of the window's owner, scoped to the project the conversation was
in, holding the session, the turn range, when it was read, the digest of its text, the
extractor's summary (secrets removed, at most SUMMARY_CHARS characters) and the text itself
(already cleaned when the turns were received). Each memory saved or reinforced from the window
is linked to it with DERIVED_FROM in the save's own transaction.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from psycopg import Connection

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings import jobs
from emergent_memory.errors import InvalidInput, PermissionDenied, SecretRejected
from emergent_memory.graph import Embedding
from emergent_memory.memory import capture_store, store
from emergent_memory.memory.capture_text import clean
from emergent_memory.memory.extraction import Decision
from emergent_memory.memory.models import SaveResult
from emergent_memory.memory.service import MemoryService, acting_for

SUMMARY_CHARS = 2000  # the Episode type's limit


def episode_summary(summary: str | None) -> str | None:
    """The extractor's summary as an Episode keeps it: cleaned like a turn (secrets, markers),
    at most SUMMARY_CHARS characters; None when there is none."""
    if summary is None:
        return None
    cleaned = clean("assistant", summary, tool_output_chars=SUMMARY_CHARS).content.strip()
    return cleaned[:SUMMARY_CHARS] or None


def keep_episode(
    conn: Connection[Any],
    memory: MemoryService,
    owner: Principal,
    *,
    client: str,
    key: dict[str, Any],
    text: str,
    summary: str | None,
    embedding: Embedding | None,
) -> UUID:
    """The window as an Episode (`key`: session_id, first_turn, last_turn, digest; `summary`
    from episode_summary, `embedding` its vector if it was computed), or the one already kept
    for the same key (another worker got there first). In a transaction acting for `owner`;
    `memory` installs the agent-memory pack if the project has not got it yet."""
    capture_store.lock_episode_key(conn, owner.actor_id, key)
    existing = capture_store.find_episode(conn, owner.actor_id, key)
    if existing is not None:
        return existing
    properties: dict[str, Any] = {
        **key,
        "client": client,
        "captured_at": datetime.now(UTC).isoformat(),
        "text": text,
    }
    if summary is not None:
        properties["summary"] = summary
    memory.ensure_pack(conn, owner.project_id)
    episode = graph.create_object(
        conn,
        project_id=owner.project_id,
        type=store.EPISODE,
        actor_id=owner.actor_id,
        scope="project",
        properties=properties,
        labels=["episode", client],
        embedding=embedding,
    )
    embedded = store.EMBEDDED_TEXT.get(store.EPISODE)
    if embedding is None and embedded is not None and properties.get(embedded):
        jobs.enqueue(conn, episode)  # searched by meaning: the worker computes its vector
    return episode.canonical_id


def save_decisions(
    memory: MemoryService, owner: Principal, decisions: list[Decision], episode: UUID
) -> dict[str, Any]:
    """Save what the rule kept, each through MemoryService.save, linked to the Episode; the
    window's outcome: ids, verdicts and notes, never text. A proposal save refuses (a secret,
    a text too long) is recorded by the refusal's kind and skipped; the others are saved. A
    proposal with dates save refuses (they conflict with those of the memory it repeats) is
    saved again without them, with a note."""
    saved: list[dict[str, Any]] = []
    not_saved: list[dict[str, Any]] = []
    for decision in decisions:
        entry: dict[str, Any] = {"index": decision.index, "verdict": decision.verdict}
        if decision.note:
            entry["note"] = decision.note
        if decision.target is not None:
            entry["target"] = str(decision.target.id)
        if decision.verdict in ("drop", "none"):
            not_saved.append(entry)
            continue
        if decision.verdict == "reinforce" and not _still_active(memory, owner, decision):
            not_saved.append({**entry, "note": "the memory to reinforce is no longer active"})
            continue
        try:
            try:
                result = _save(memory, owner, decision, episode)
            except InvalidInput as error:
                dated = decision.valid_from is not None or decision.valid_until is not None
                if not dated or isinstance(error, SecretRejected):
                    raise
                # dates extraction found sound may conflict with the memory this repeats
                decision = dataclasses.replace(decision, valid_from=None, valid_until=None)
                result = _save(memory, owner, decision, episode)
                entry["note"] = "; ".join(
                    [
                        *([decision.note] if decision.note else []),
                        "valid_from and valid_until dropped (they conflict with the memory)",
                    ]
                )
        except (InvalidInput, PermissionDenied) as error:  # e.g. SecretRejected
            not_saved.append({**entry, "refused": type(error).__name__})
            continue
        saved.append(
            {
                **entry,
                "memory_id": result["memory"]["id"],
                "status": result["status"],
                "superseded_ids": result["superseded_ids"],
            }
        )
    return {"result": "captured", "saved": saved, "not_saved": not_saved}


def _save(memory: MemoryService, owner: Principal, decision: Decision, episode: UUID) -> SaveResult:
    return memory.save(
        owner,
        decision.content,
        decision.category,
        source=decision.source,
        scope=decision.scope,
        importance=decision.importance,
        valid_from=decision.valid_from,
        valid_until=decision.valid_until,
        rationale=decision.rationale,
        derived_from=episode,
    )


def _still_active(memory: MemoryService, owner: Principal, decision: Decision) -> bool:
    """Whether the memory to reinforce is still active (not deleted or superseded since it was
    offered): reinforcing saves its text, which would bring a deleted memory back."""
    assert decision.target is not None
    with acting_for(memory.pool, owner) as conn:
        return capture_store.is_active_own(conn, owner, decision.target.id)
