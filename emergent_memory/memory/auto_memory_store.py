"""The SQL of the auto memory import (CONVENTIONS 2): which memory a Claude Code memory file
made, by the file's key.

A memory made from files holds, in its properties, `imported_from`: one entry per file,
{"client": "claude-code", "origin": <where the folder is>, "folder": <project folder>, "file":
<file name>, "sha256": <of the file's text>}. A file's key is (origin, folder, file): the
origin (hooks/auto_memory_files.origin: the machine and the `projects` directory holding the
folder) keeps apart folders of the same name on two machines; an entry without one (made by
a caller that sends none) is a key of its own, found only by a caller without one. Several
files may name one memory (the same text in two projects' folders, or in the same folder on
two machines, is one memory, saved once). The entries are kept on the memory's head version
in place, as the record of where it came from, not as a new version: importing a file again
writes no version when its text is unchanged. A new version (an edited file, `update`)
carries them over, as it carries every property.
"""

from __future__ import annotations

from typing import Any, NotRequired
from uuid import UUID

from psycopg import Connection, sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb
from typing_extensions import TypedDict

from emergent_memory.graph import get_head
from emergent_memory.graph.models import GraphObject, select_list

CLIENT = "claude-code"
PROPERTY = "imported_from"

# The actor's memories (any state: deleted and superseded ones too) made from a file of the
# folder (or, with `file`, from that file); the jsonb_path_ops index serves the @>.
FIND_IMPORTED = """
SELECT {columns} FROM kb.graph_objects o
WHERE o.type = 'Memory' AND o.is_head AND o.actor_id = %(actor_id)s
  AND o.properties @> %(probe)s
ORDER BY o.created_at, o.canonical_id
"""

SET_ENTRIES = """
UPDATE kb.graph_objects SET properties = properties || %(patch)s
WHERE canonical_id = %(canonical_id)s AND is_head
"""

REMOVE_ENTRIES = """
UPDATE kb.graph_objects SET properties = properties - 'imported_from'
WHERE canonical_id = %(canonical_id)s AND is_head
"""


class ImportEntry(TypedDict):
    client: str
    origin: NotRequired[str]
    folder: str
    file: str
    sha256: str


def entry(origin: str | None, folder: str, file: str, sha256: str) -> ImportEntry:
    made: ImportEntry = {"client": CLIENT, "folder": folder, "file": file, "sha256": sha256}
    if origin is not None:
        made["origin"] = origin
    return made


def entries_of(memory: GraphObject) -> list[ImportEntry]:
    found = memory.properties.get(PROPERTY)
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, dict)]  # type: ignore[misc]


def is_of(item: ImportEntry, origin: str | None, folder: str, file: str | None = None) -> bool:
    """Whether the entry is the key of that folder's file (of any file of it, without one)."""
    return (
        item.get("client") == CLIENT
        and item.get("origin") == origin
        and item.get("folder") == folder
        and (file is None or item.get("file") == file)
    )


def entry_for(
    memory: GraphObject, origin: str | None, folder: str, file: str
) -> ImportEntry | None:
    """The memory's key for that folder's file, if it has one."""
    for item in entries_of(memory):
        if is_of(item, origin, folder, file):
            return item
    return None


def find_imported(
    conn: Connection[Any],
    actor_id: UUID,
    origin: str | None,
    folder: str,
    file: str | None = None,
) -> list[GraphObject]:
    """The actor's memories made from the folder's files (from `file` alone, if given)."""
    wanted: dict[str, str] = {"client": CLIENT, "folder": folder}
    if origin is not None:
        wanted["origin"] = origin
    if file is not None:
        wanted["file"] = file
    statement = sql.SQL(FIND_IMPORTED).format(columns=select_list(GraphObject))
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(statement, {"actor_id": actor_id, "probe": Jsonb({PROPERTY: [wanted]})})
        found = cur.fetchall()
    # the probe finds entries of other origins too when it has none, and may match an
    # origin-less probe against an entry with one: the entries decide
    return [
        memory
        for memory in found
        if any(is_of(item, origin, folder, file) for item in entries_of(memory))
    ]


def attach(conn: Connection[Any], memory_id: UUID, item: ImportEntry) -> None:
    """Make the entry the memory's key for its file (replacing that file's older one)."""
    head = get_head(conn, memory_id, include_deleted=True)
    if head is None:
        return
    origin, folder, file = item.get("origin"), item["folder"], item["file"]
    kept = [old for old in entries_of(head) if not is_of(old, origin, folder, file)]
    set_entries(conn, memory_id, [*kept, item])


def detach(
    conn: Connection[Any], memory_id: UUID, origin: str | None, folder: str, file: str
) -> list[ImportEntry]:
    """Take the file's entry off the memory; the entries left (other files' keys)."""
    head = get_head(conn, memory_id, include_deleted=True)
    if head is None:
        return []
    kept = [old for old in entries_of(head) if not is_of(old, origin, folder, file)]
    set_entries(conn, memory_id, kept)
    return kept


def set_entries(conn: Connection[Any], canonical_id: UUID, entries: list[ImportEntry]) -> None:
    """Keep these entries (none: the property goes) on the memory's head version."""
    if entries:
        conn.execute(
            SET_ENTRIES, {"canonical_id": canonical_id, "patch": Jsonb({PROPERTY: entries})}
        )
    else:
        conn.execute(REMOVE_ENTRIES, {"canonical_id": canonical_id})
