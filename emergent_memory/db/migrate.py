"""Schema migrations: Alembic run from code, and the check that a database is at head.

Alembic is imported only to migrate: the check reads the head from the revision files' headers
(`_revision_files`), so a command on a database at head starts without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from emergent_memory.db.connection import connect
from emergent_memory.errors import InvalidInput, SchemaNotCurrent
from emergent_memory.resources import migrations_dir

if TYPE_CHECKING:
    from alembic.config import Config

# Our own name, so the database can hold other Alembic-managed applications too.
VERSION_TABLE = "emergent_memory_alembic_version"

# Held while migrating, so two processes started with --migrate do not race (any 64-bit key
# unique to this purpose; it spells "emmigrat").
MIGRATION_LOCK_KEY = 0x656D6D6967726174


def alembic_config(database_url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["database_url"] = database_url
    return config


# A revision file's own header, as every file in alembic/versions/ writes it.
_REVISION = re.compile(r'^revision: str = "([^"]+)"$', re.MULTILINE)
_DOWN_REVISION = re.compile(r'^down_revision: str \| None = (?:"([^"]+)"|None)$', re.MULTILINE)


def _revision_files() -> dict[str, str | None] | None:
    """Each revision and the one it follows, read from the revision files' headers without
    importing Alembic (about half a second of every command's start); None when a file does
    not say it in the usual form (then Alembic reads them)."""
    revisions: dict[str, str | None] = {}
    for path in sorted((migrations_dir() / "versions").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or down is None:
            return None
        revisions[revision.group(1)] = down.group(1)
    return revisions or None


def head_revision() -> str:
    revisions = _revision_files()
    if revisions is not None:
        heads = set(revisions) - {down for down in revisions.values() if down is not None}
        if len(heads) == 1:
            return heads.pop()
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(migrations_dir())).get_current_head()
    assert head is not None, "the migration scripts have no head"
    return head


def known_revisions() -> set[str]:
    revisions = _revision_files()
    if revisions is not None:
        return set(revisions)
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory(str(migrations_dir())).walk_revisions()}


def current_revision(conn: psycopg.Connection[Any]) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    table = conn.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()
    if table is None or table[0] is None:
        return None
    row = conn.execute(
        psycopg.sql.SQL("SELECT version_num FROM {}").format(psycopg.sql.Identifier(VERSION_TABLE))
    ).fetchone()
    return None if row is None else str(row[0])


def database_revision(database_url: str) -> str | None:
    with connect(database_url) as conn:
        return current_revision(conn)


def upgrade(database_url: str, revision: str = "head") -> None:
    from alembic import command

    _run(command.upgrade, database_url, revision)


def downgrade(database_url: str, revision: str) -> None:
    from alembic import command

    _run(command.downgrade, database_url, revision)


def _run(operation: Callable[[Config, str], None], database_url: str, revision: str) -> None:
    from alembic.util import CommandError

    try:
        operation(alembic_config(database_url), revision)
    except CommandError as error:
        raise InvalidInput(f"cannot migrate to {revision!r}: {error}") from error


@dataclass(frozen=True)
class SchemaState:
    current: str | None
    head: str

    @property
    def at_head(self) -> bool:
        return self.current == self.head


def schema_state(database_url: str) -> SchemaState:
    return SchemaState(current=database_revision(database_url), head=head_revision())


def require_current_schema(database_url: str, *, migrate: bool | None = None) -> SchemaState:
    """Make sure the database is at head: migrate it when asked, otherwise refuse clearly.

    `migrate`: True migrates; False means the caller could have been asked to (it has a
    --migrate option, which the refusal then suggests); None, it has none.
    """
    state = schema_state(database_url)
    if state.at_head:
        return state
    if state.current is not None and state.current not in known_revisions():
        raise SchemaNotCurrent(
            f"the database is at revision {state.current}, which this version of "
            f"emergent-memory does not know (its newest is {state.head}); the database was "
            "migrated by a newer emergent-memory: upgrade emergent-memory"
        )
    if migrate:
        upgrade(database_url)
        return schema_state(database_url)
    where = "not migrated yet" if state.current is None else f"at revision {state.current}"
    alternative = " (or add --migrate)" if migrate is False else ""
    raise SchemaNotCurrent(
        f"the database is {where}, but this version of emergent-memory needs revision "
        f"{state.head}: run `emergent-memory db upgrade` first{alternative}"
    )
