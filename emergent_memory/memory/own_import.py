"""A principal's own import, for the dashboard's upload: the current memories of a file in
`emergent-memory export`'s format (the dashboard's download, or the CLI's export) saved as the
tool `save_memory` saves them, one by one, into the project the principal acts in.

What it carries of each memory: its content, category, source, scope (user, or project: the
project shown, whichever project the file's memory came from), importance, validity,
rationale, contexts (by name) and its first piece of evidence. It never writes a row with the
file's ids, owners or history: each memory goes through the same checks, dedup, conflicts and
authority as a save, under row-level security as the principal, so nobody else's rows can be
written or named, whatever the file says. A memory this scope already holds word for word (an
active exact repeat) is left untouched, so importing a file twice writes nothing the second
time. Earlier versions, superseded, deleted and archived memories, global memories, episodes,
recalls and pack installations are counted and left out: `emergent-memory import` (the
operator's) restores a whole export with its history and ids.

The whole file is read and checked before anything is written: a file that is not an export,
or holds a malformed record, is refused with the line to fix. A memory the save refuses (a
secret found in it, content over this server's limit) is listed with why, and the rest are
saved."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args
from uuid import UUID

from emergent_memory import transfer
from emergent_memory.auth.principal import Principal
from emergent_memory.errors import InvalidInput, PermissionDenied, SecretRejected
from emergent_memory.memory import store
from emergent_memory.memory.models import SaveOutcome, SaveResult, save_outcome
from emergent_memory.memory.service import MemoryService, acting_for

MAX_MEMORIES = 1000  # current memories one upload saves at most (each is a save: ~30 ms)
MAX_BYTES = 64 * 1024 * 1024  # the largest file the page takes

# What the import did with each memory of the file (the page counts and lists them): what
# the save did (models.SaveOutcome; "unchanged" also when this scope already held it word for
# word, and nothing was written), or "refused" (`problem` says why; nothing written).
Outcome = SaveOutcome | Literal["refused"]
OUTCOMES: tuple[Outcome, ...] = (*get_args(SaveOutcome), "refused")

# Why a record of the file is not imported, as the page words it, by key.
LEFT_OUT = {
    "earlier_version": "earlier versions of memories (history)",
    "superseded": "superseded memories",
    "deleted": "deleted memories",
    "archived": "archived memories",
    "global": "global memories (an operator imports them with emergent-memory import)",
    "other_object": "other objects (episodes of automatic capture)",
    "relationship": "relationships other than contexts (supersessions, conflicts, links)",
    "recall": "recall history",
    "evidence": "further pieces of evidence (each memory keeps its first)",
}


@dataclass(frozen=True, slots=True)
class FileMemory:
    """One current memory of the file, as it will be saved."""

    line: int  # the line of its head version
    changed_at: datetime  # when its head version was written (saves go oldest first)
    content: str
    category: str
    source: str
    scope: str
    properties: Mapping[str, Any]
    contexts: tuple[str, ...] = ()
    evidence: str | None = None


@dataclass(frozen=True, slots=True)
class Imported:
    """What the import did with one memory of the file."""

    line: int
    content: str  # as the file has it; empty when it held a secret (never shown)
    outcome: Outcome
    memory_id: UUID | None = None  # the memory that holds it now
    problem: str | None = None  # why it was refused


@dataclass(frozen=True, slots=True)
class ImportReport:
    memories: tuple[Imported, ...]
    left_out: Mapping[str, int] = field(default_factory=dict)  # LEFT_OUT's keys: how many

    def count(self, outcome: Outcome) -> int:
        return sum(1 for memory in self.memories if memory.outcome == outcome)

    @property
    def written(self) -> int:
        return sum(1 for memory in self.memories if memory.outcome not in ("unchanged", "refused"))


def read_export(lines: Iterable[bytes | str]) -> tuple[list[FileMemory], Counter[str]]:
    """The current memories of an export file (oldest change first) and what is left out, by
    reason; InvalidInput names the line of the first record that is not a valid export record."""
    heads: dict[UUID, tuple[int, transfer.ObjectRecord]] = {}
    contexts: dict[UUID, str] = {}  # a context object's canonical id -> its name
    belongs: list[transfer.RelationshipRecord] = []
    evidence: dict[UUID, str] = {}
    left_out: Counter[str] = Counter()
    line = 0
    for number, record in _records(lines):
        kind = record.get("kind")
        if line == 0 or kind == "header":  # the first record is the header
            line = number
            transfer.check_header(record, line)
            continue
        line = number
        parsed = transfer.parse_record(record, line)
        if isinstance(parsed, transfer.ObjectRecord):
            if not parsed.is_head:
                if parsed.type == store.MEMORY:
                    left_out["earlier_version"] += 1
            elif parsed.type == store.MEMORY:
                heads[parsed.canonical_id] = (line, parsed)
            elif parsed.type == store.CONTEXT and parsed.deleted_at is None:
                contexts[parsed.canonical_id] = str(parsed.properties.get("name") or "")
            elif parsed.type != store.CONTEXT:
                left_out["other_object"] += 1
        elif isinstance(parsed, transfer.RelationshipRecord):
            if parsed.type == store.BELONGS_TO_CONTEXT:
                if parsed.is_head and parsed.deleted_at is None:
                    belongs.append(parsed)
            elif parsed.is_head:
                left_out["relationship"] += 1
        elif isinstance(parsed, transfer.EvidenceRecord):
            if parsed.evidence and parsed.canonical_id not in evidence:
                evidence[parsed.canonical_id] = parsed.evidence
            elif parsed.evidence:  # a record without a text has nothing to carry
                left_out["evidence"] += 1
        elif isinstance(parsed, transfer.RecallRecord):
            left_out["recall"] += 1
        # a pack installation: the save installs the pack where it is needed
    if line == 0:
        raise InvalidInput("the file is empty: an export starts with its header line")
    named: dict[UUID, list[str]] = {}
    for edge in belongs:
        name = contexts.get(edge.dst_id)
        if name and name not in named.setdefault(edge.src_id, []):
            named[edge.src_id].append(name)
    memories = []
    for canonical_id, (head_line, head) in heads.items():
        why = _left_out(head)
        if why is not None:
            left_out[why] += 1
            continue
        properties = head.properties
        memories.append(
            FileMemory(
                line=head_line,
                changed_at=head.created_at,
                content=str(properties.get("content") or ""),
                category=str(properties.get("category") or ""),
                source=str(properties.get("source") or "inferred"),
                scope=head.scope,
                properties=properties,
                contexts=tuple(named.get(canonical_id, ())),
                evidence=evidence.get(canonical_id),
            )
        )
    # as they were written: a value that replaced another is saved after it, so that it is
    # the newer side of a conflict here too (an export orders objects by id, not by time)
    memories.sort(key=lambda memory: (memory.changed_at, memory.line))
    if len(memories) > MAX_MEMORIES:
        raise InvalidInput(
            f"the file holds {len(memories)} current memories; the page imports at most "
            f"{MAX_MEMORIES} at once: split the file, or have an operator run emergent-memory "
            "import"
        )
    return memories, left_out


def import_own(
    service: MemoryService, principal: Principal, memories: Iterable[FileMemory]
) -> list[Imported]:
    """Save each memory of the file as the principal (see the module docstring), in order."""
    if not principal.can_write:
        raise PermissionDenied("this credential may not change memories (needs memory:write)")
    done = []
    for memory in memories:
        done.append(_import_one(service, principal, memory))
    return done


def _import_one(service: MemoryService, principal: Principal, memory: FileMemory) -> Imported:
    shown = memory.content
    try:
        held = _held(service, principal, memory)
        if held is not None:
            return Imported(memory.line, shown, "unchanged", held)
        saved = _save(service, principal, memory, memory.contexts[:1])
        for context in memory.contexts[1:]:  # a repeat adds each further context
            _save(service, principal, memory, (context,))
    except SecretRejected as error:
        return Imported(memory.line, "", "refused", problem=str(error))
    except (InvalidInput, PermissionDenied) as error:
        return Imported(memory.line, shown, "refused", problem=str(error))
    return Imported(memory.line, shown, save_outcome(saved), UUID(saved["memory"]["id"]))


def _held(service: MemoryService, principal: Principal, memory: FileMemory) -> UUID | None:
    """The active memory of this scope that already says exactly this text, if any."""
    if memory.scope not in ("user", "project") or not memory.content.strip():
        return None
    with acting_for(service.pool, principal) as conn:
        found = store.find_repeat(conn, principal, memory.scope, memory.content)
    return None if found is None or found[1] else found[0]


def _save(
    service: MemoryService, principal: Principal, memory: FileMemory, context: tuple[str, ...]
) -> SaveResult:
    properties = memory.properties
    return service.save(
        principal,
        memory.content,
        memory.category,  # type: ignore[arg-type]  # checked by the save
        memory.source,  # type: ignore[arg-type]
        memory.scope,  # type: ignore[arg-type]
        context[0] if context else None,
        importance=_optional(properties, "importance"),  # type: ignore[arg-type]
        evidence=memory.evidence,
        valid_from=_optional(properties, "valid_from"),
        valid_until=_optional(properties, "valid_until"),
        rationale=_optional(properties, "rationale"),
    )


def _left_out(head: transfer.ObjectRecord) -> str | None:
    if head.deleted_at is not None:
        return "deleted"
    if "superseded_by" in head.properties:
        return "superseded"
    if head.properties.get("archived_at"):
        return "archived"
    if head.scope == "global":
        return "global"
    return None


def _optional(properties: Mapping[str, Any], name: str) -> str | None:
    value = properties.get(name)
    return None if value is None else str(value)


def _records(lines: Iterable[bytes | str]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Each record of the file with its line number (blank lines are skipped, and counted)."""
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            raise InvalidInput(f"line {number}: not UTF-8 text: is this an export file?") from None
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidInput(
                f"line {number}: not a JSON record ({error.msg}): is this an export file?"
            ) from None
        if not isinstance(record, dict):
            raise InvalidInput(f"line {number}: a record must be a JSON object")
        yield number, record
