"""The SQL of the auto memory import (CONVENTIONS 2): which memory a Claude Code memory file
made, by the file's key.

A memory made from files holds, in its properties, `imported_from`: one entry per file,
{"client": "claude-code", "folder": <project folder>, "file": <file name>, "sha256": <of the
file's text>}. Several files may name one memory (the same text in two projects' folders is
one memory, saved once). The entries are kept on the memory's head version in place, as the
record of where it came from, not as a new version: importing a file again writes no version
when its text is unchanged. A new version (an edited file, `update`) carries them over, as it
carries every property.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg import Connection, sql
from psycopg.rows import class_row
from psycopg.types.json import Jsonb
from typing_extensions import TypedDict

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
    folder: str
    file: str
    sha256: str


def entry(folder: str, file: str, sha256: str) -> ImportEntry:
    return {"client": CLIENT, "folder": folder, "file": file, "sha256": sha256}


def entries_of(memory: GraphObject) -> list[ImportEntry]:
    found = memory.properties.get(PROPERTY)
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, dict)]  # type: ignore[misc]


def entry_for(memory: GraphObject, folder: str, file: str) -> ImportEntry | None:
    """The memory's key for that folder's file, if it has one."""
    for item in entries_of(memory):
        if (item.get("folder"), item.get("file")) == (folder, file):
            return item
    return None


def find_imported(
    conn: Connection[Any], actor_id: UUID, folder: str, file: str | None = None
) -> list[GraphObject]:
    """The actor's memories made from the folder's files (from `file` alone, if given)."""
    wanted: dict[str, str] = {"client": CLIENT, "folder": folder}
    if file is not None:
        wanted["file"] = file
    statement = sql.SQL(FIND_IMPORTED).format(columns=select_list(GraphObject))
    with conn.cursor(row_factory=class_row(GraphObject)) as cur:
        cur.execute(statement, {"actor_id": actor_id, "probe": Jsonb({PROPERTY: [wanted]})})
        return cur.fetchall()


def set_entries(conn: Connection[Any], canonical_id: UUID, entries: list[ImportEntry]) -> None:
    """Keep these entries (none: the property goes) on the memory's head version."""
    if entries:
        conn.execute(
            SET_ENTRIES, {"canonical_id": canonical_id, "patch": Jsonb({PROPERTY: entries})}
        )
    else:
        conn.execute(REMOVE_ENTRIES, {"canonical_id": canonical_id})
