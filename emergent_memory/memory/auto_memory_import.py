"""AutoMemoryImport: a Claude Code memory folder's files into memories, through save.

One call takes one folder's files (as text: the CLI reads them from disk, the PostToolUse hook
sends them over the REST API) and, for each, says what became of it:

- `saved`: a new memory, made by MemoryService.save as save_memory makes one (validation,
  secrets, dedup, authority), in the context `claude-code`, with the caller's source:
  `explicit` for `import --from claude-code` (the user's own notes, imported by the user),
  `inferred` for the hooks' sync (the agent wrote them in a session: a page it read may have
  put the words there);
- `updated`: the file changed since it was imported: a new version of its memory
  (MemoryService.update, with update's checks), the same memory id;
- `unchanged`: the file's text is the one imported last time (or the save found the same
  text remembered already): nothing written. A memory the user deleted or that a later one
  superseded stays so while its file is unchanged;
- `forgotten`: the file is gone (`deleted`, or absent from a `complete` folder): its memory
  is deleted (soft, restorable) unless another file still holds it;
- `skipped`, with the reason: unreadable, not UTF-8, an unknown type, empty, too long, a
  secret, a project-typed file whose project is unknown. Nothing of it is written.

Authority holds as for saves (memory/authority.py): a file from a weaker source than its
memory's never changes or deletes it; its new text is saved beside it, and its deletion only
drops the file's key.

A file is found again by its key (auto_memory_store): where its folder is (`origin`: the
machine and the `projects` directory holding it), the folder's name and the file's. A folder
of the same name elsewhere (another machine, another config dir) is another folder: its
files never change or forget this one's memories, and `complete` forgets only the files of
this origin. The key is the actor's, so another actor's files and memories are never touched
or seen.
`[[name]]` links become RELEVANT_TO relationships between the memories of the linked files.
With `dry_run` the answer is the same, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired
from uuid import UUID

from psycopg import Connection
from typing_extensions import TypedDict

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.errors import InvalidInput, ObjectNotFound, PermissionDenied
from emergent_memory.graph import GraphObject
from emergent_memory.memory import authority, store, validation
from emergent_memory.memory import auto_memory_store as keys
from emergent_memory.memory.auto_memory import (
    Note,
    NoteProblem,
    check_file_name,
    check_folder_name,
    check_origin,
    parse_note,
    shown_name,
)
from emergent_memory.memory.models import Source
from emergent_memory.memory.service import MemoryService, acting_for

Status = Literal["saved", "updated", "unchanged", "forgotten", "skipped"]
STATUSES: tuple[Status, ...] = ("saved", "updated", "unchanged", "forgotten", "skipped")
CONTEXT = "claude-code"
FORGET_REASON = "its Claude Code memory file was deleted"
MAX_FILES = 500  # files one call takes at most


@dataclass(frozen=True, slots=True)
class FolderFile:
    """One file of a memory folder: its name, and its text or why it could not be read."""

    name: str
    text: str | None = None
    problem: str | None = None


class FileOutcome(TypedDict):
    file: str
    status: Status
    reason: NotRequired[str]
    memory_id: NotRequired[str]
    category: NotRequired[str]
    scope: NotRequired[str]


class FolderReport(TypedDict):
    """What became of a folder's files; `links`: the [[links]] kept as relationships (with
    dry_run: that would be)."""

    folder: str
    origin: str | None
    project_id: str
    dry_run: bool
    files: list[FileOutcome]
    links: int
    counts: dict[str, int]


class AutoMemoryImport:
    def __init__(self, pool: DatabasePool, memory: MemoryService) -> None:
        self._pool = pool
        self._memory = memory

    def import_folder(
        self,
        principal: Principal,
        folder: str,
        files: Sequence[FolderFile],
        *,
        origin: str | None = None,
        deleted: Sequence[str] = (),
        complete: bool = False,
        project_problem: str | None = None,
        dry_run: bool = False,
        source: Source = "explicit",
    ) -> FolderReport:
        """Import a folder's files for the principal (in its project). `deleted`: files
        gone since the last import; `complete`: `files` is the whole folder, so a file
        imported before (from this origin) and absent now is gone too. `origin`: where the
        folder is (hooks/auto_memory_files.origin). `project_problem`: why the folder's
        project is not known (its project-typed files are skipped with it). `source`: who
        wrote the files (the module's docstring)."""
        if not principal.can_write:  # a dry run too: it answers what only a writer may do
            raise PermissionDenied("this credential may not change memories (needs memory:write)")
        folder = check_folder_name(folder)
        origin = check_origin(origin)
        where = (origin, folder)
        if len(files) + len(deleted) > MAX_FILES:
            raise InvalidInput(f"too many files: at most {MAX_FILES} in one import")
        names = [file.name for file in files]
        if len(set(names)) != len(names):
            raise InvalidInput("files: each file name once")
        outcomes: list[FileOutcome] = []
        notes: dict[str, tuple[Note, UUID | None]] = {}
        for file in files:
            outcome, note, memory_id = self._one(
                principal, where, file, project_problem, dry_run, source
            )
            outcomes.append(outcome)
            if note is not None:
                notes[file.name] = (note, memory_id)
        gone = [name for name in deleted if name not in set(names)]
        if complete:
            with acting_for(self._pool, principal) as conn:
                known = keys.find_imported(conn, principal.actor_id, origin, folder)
            present = set(names)
            for memory in known:
                for item in keys.entries_of(memory):
                    if keys.is_of(item, origin, folder) and item["file"] not in present:
                        gone.append(item["file"])
        for name in dict.fromkeys(gone):
            outcomes.append(self._forget(principal, where, name, dry_run, source))
        links = self._link(principal, where, notes, dry_run)
        counts: dict[str, int] = {status: 0 for status in STATUSES}
        for outcome in outcomes:
            counts[outcome["status"]] += 1
        return {
            "folder": folder,
            "origin": origin,
            "project_id": str(principal.project_id),
            "dry_run": dry_run,
            "files": outcomes,
            "links": links,
            "counts": counts,
        }

    # -- one file -------------------------------------------------------------------------------

    def _one(
        self,
        principal: Principal,
        where: tuple[str | None, str],
        file: FolderFile,
        project_problem: str | None,
        dry_run: bool,
        source: Source,
    ) -> tuple[FileOutcome, Note | None, UUID | None]:
        try:
            note = self._note(file, project_problem)
        except (NoteProblem, InvalidInput) as problem:
            return (
                {"file": shown_name(file.name), "status": "skipped", "reason": str(problem)},
                None,
                None,
            )
        outcome: FileOutcome = {
            "file": file.name,
            "status": "saved",
            "category": note.category,
            "scope": note.scope,
        }
        with acting_for(self._pool, principal) as conn:
            found = keys.find_imported(conn, principal.actor_id, *where, file.name)
        memory = found[0] if found else None
        entry = keys.entry_for(memory, *where, file.name) if memory is not None else None
        if memory is not None and entry is not None and entry["sha256"] == note.sha256:
            outcome["status"] = "unchanged"
            outcome["memory_id"] = str(memory.canonical_id)
            return outcome, note, memory.canonical_id
        # a weaker source than the memory's never changes it: the new text goes beside it
        outranked = memory is not None and authority.refusal(memory.properties, source)
        if dry_run:
            return self._dry_run(principal, note, memory, outcome, source)
        try:
            if memory is not None and _editable(memory, note, source):
                memory_id = self._update(principal, memory, note)
                outcome["status"] = "updated"
            else:
                memory_id, repeated = self._save(principal, note, source)
                if repeated:
                    outcome["status"] = "unchanged"
                    outcome["reason"] = "the same text is remembered already"
        except InvalidInput as problem:  # a secret, a twin an update would make, ...
            return {"file": file.name, "status": "skipped", "reason": str(problem)}, None, None
        with acting_for(self._pool, principal) as conn:
            if memory is not None and memory.canonical_id != memory_id:
                keys.detach(conn, memory.canonical_id, *where, file.name)
            keys.attach(conn, memory_id, keys.entry(*where, file.name, note.sha256))
        if memory is not None and memory.canonical_id != memory_id and outranked:
            outcome["reason"] = f"{outranked}; that memory is kept as it was"
        elif memory is not None and memory.canonical_id != memory_id:
            self._forget_if_unheld(principal, memory.canonical_id)
        outcome["memory_id"] = str(memory_id)
        return outcome, note, memory_id

    def _dry_run(
        self,
        principal: Principal,
        note: Note,
        memory: GraphObject | None,
        outcome: FileOutcome,
        source: Source,
    ) -> tuple[FileOutcome, Note, UUID | None]:
        """What the import would do with a new or changed file: update its memory, or save
        it (unchanged when the same text is remembered already, as save would find)."""
        if memory is not None and _editable(memory, note, source):
            outcome["status"] = "updated"
            outcome["memory_id"] = str(memory.canonical_id)
            return outcome, note, memory.canonical_id
        with acting_for(self._pool, principal) as conn:
            repeated = store.find_repeat(conn, principal, note.scope, note.text)
        if repeated is not None:
            outcome["status"] = "unchanged"
            outcome["reason"] = "the same text is remembered already"
            outcome["memory_id"] = str(repeated[0])
            return outcome, note, repeated[0]
        return outcome, note, memory.canonical_id if memory is not None else None

    def _note(self, file: FolderFile, project_problem: str | None) -> Note:
        check_file_name(file.name)
        if file.problem is not None or file.text is None:
            raise NoteProblem(file.problem or "unreadable")
        note = parse_note(file.name, file.text)
        if note.scope == "project" and project_problem is not None:
            raise NoteProblem(project_problem)
        # save's own checks, here too so that a dry run skips what the import would
        validation.content(note.text, max_length=self._memory.config.max_content_length)
        validation.no_secrets(note.text)
        return note

    def _save(self, principal: Principal, note: Note, source: Source) -> tuple[UUID, bool]:
        saved = self._memory.save(
            principal,
            note.text,
            note.category,
            source=source,
            scope=note.scope,
            context=CONTEXT,
        )
        return UUID(saved["memory"]["id"]), saved["status"] == "unchanged"

    def _update(self, principal: Principal, memory: GraphObject, note: Note) -> UUID:
        owner = Principal(principal.actor_id, memory.project_id, principal.scopes)
        changes = {"content": note.text, "category": note.category}
        self._memory.update(owner, str(memory.canonical_id), changes)
        return memory.canonical_id

    # -- keys -----------------------------------------------------------------------------------

    def _forget(
        self,
        principal: Principal,
        where: tuple[str | None, str],
        name: str,
        dry_run: bool,
        source: Source,
    ) -> FileOutcome:
        outcome: FileOutcome = {"file": shown_name(name), "status": "forgotten"}
        try:
            check_file_name(name)
        except NoteProblem as problem:
            return {"file": shown_name(name), "status": "skipped", "reason": str(problem)}
        with acting_for(self._pool, principal) as conn:
            found = keys.find_imported(conn, principal.actor_id, *where, name)
            if not found:
                return {"file": name, "status": "skipped", "reason": "no memory came from it"}
            memory = found[0]
            outcome["memory_id"] = str(memory.canonical_id)
            outranked = store.is_active(memory) and authority.refusal(memory.properties, source)
            if outranked:
                kept = outranked.replace("kept beside it", "its memory is kept")
                outcome |= {"status": "skipped", "reason": f"{kept}: delete it if it is wrong"}
            if dry_run:
                return outcome
            left = keys.detach(conn, memory.canonical_id, *where, name)
        if outranked:
            return outcome
        if left:
            outcome["reason"] = "another file still holds its memory: kept"
        elif not self._forget_if_unheld(principal, memory.canonical_id):
            outcome["reason"] = "its memory was deleted or replaced already"
        return outcome

    def _forget_if_unheld(self, principal: Principal, memory_id: UUID) -> bool:
        """Delete the memory when no file holds it any more and it is active; whether it
        was deleted."""
        with acting_for(self._pool, principal) as conn:
            head = graph.get_head(conn, memory_id)
        if head is None or keys.entries_of(head) or not store.is_active(head):
            return False
        owner = Principal(principal.actor_id, head.project_id, principal.scopes)
        self._memory.delete(owner, str(memory_id), reason=FORGET_REASON)
        return True

    # -- links ----------------------------------------------------------------------------------

    def _link(
        self,
        principal: Principal,
        where: tuple[str | None, str],
        notes: dict[str, tuple[Note, UUID | None]],
        dry_run: bool,
    ) -> int:
        """Keep each note's [[links]] as RELEVANT_TO from its memory to the linked file's
        (found in this folder: `<name>.md`, or the file whose frontmatter name it is)."""
        by_name = {note.name: memory_id for note, memory_id in notes.values()}
        made = 0
        with acting_for(self._pool, principal) as conn:
            for note, source in notes.values():
                for name in note.links:
                    target = self._linked(conn, principal, where, name, notes, by_name)
                    if target is None or target == source:
                        continue
                    if source is None or dry_run:
                        made += 1
                        continue
                    try:
                        graph.create_relationship(
                            conn,
                            project_id=principal.project_id,
                            type=store.RELEVANT_TO,
                            src_id=source,
                            dst_id=target,
                            actor_id=principal.actor_id,
                        )
                    except (ObjectNotFound, InvalidInput):
                        continue  # an end deleted meanwhile, or of another project
                    made += 1
        return made

    @staticmethod
    def _linked(
        conn: Connection[Any],
        principal: Principal,
        where: tuple[str | None, str],
        name: str,
        notes: dict[str, tuple[Note, UUID | None]],
        by_name: dict[str, UUID | None],
    ) -> UUID | None:
        file = name if name.endswith(".md") else f"{name}.md"
        if file in notes:
            return notes[file][1]
        if name in by_name:
            return by_name[name]
        found = keys.find_imported(conn, principal.actor_id, *where, file)
        return found[0].canonical_id if found else None


def _editable(memory: GraphObject, note: Note, source: Source) -> bool:
    """Whether an edited file changes its memory in place (a new version): the memory is
    active, the file keeps its scope, and its source may change the memory (authority).
    Otherwise the edited file is saved anew."""
    return (
        store.is_active(memory)
        and memory.scope == note.scope
        and authority.refusal(memory.properties, source) is None
    )
