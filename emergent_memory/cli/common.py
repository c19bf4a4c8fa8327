"""What every command shares: the command group, its options, error reporting and output."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from functools import wraps
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from emergent_memory import __version__
from emergent_memory.app import (
    open_memory_service,
)
from emergent_memory.auth.identity import LocalIdentity, local_identity
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.db.connection import Database, open_database
from emergent_memory.errors import EmergentMemoryError
from emergent_memory.memory import MemoryService
from emergent_memory.settings import Settings, load_settings

logger = logging.getLogger("emergent_memory")


P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Domain errors become one clear line and exit status 1; others are logged, then masked."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except EmergentMemoryError as error:
            fail(str(error))
        except Exception as error:
            logger.debug("internal error", exc_info=True)
            fail(
                f"internal error ({type(error).__name__}: {error}); "
                "set EMERGENT_MEMORY_LOG_LEVEL=DEBUG for the traceback"
            )

    return run


@contextmanager
def database(settings: Settings) -> Iterator[Database]:
    with open_database(settings.database_url, settings.data_dir) as db:
        yield db


def describe(db: Database) -> str:
    if db.embedded:
        return f"embedded PostgreSQL in {db.pgdata}"
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", db.url)  # never print a password


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="emergent-memory")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Cross-session memory for AI agents, on PostgreSQL with pgvector.

    With EMERGENT_MEMORY_DATABASE_URL unset, commands use an embedded PostgreSQL kept in
    EMERGENT_MEMORY_DATA_DIR (default: the user data directory), started when needed.
    """
    try:
        settings = load_settings()
    except EmergentMemoryError as error:
        fail(str(error))
    _configure_logging(settings.log_level)
    ctx.obj = settings


def _configure_logging(level: str) -> None:
    """Everything logs to stderr, in one format, at EMERGENT_MEMORY_LOG_LEVEL; the libraries'
    loggers are tuned here, and only here."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    root = logging.getLogger().level
    # httpx logs every request's URL at INFO: noise, and an embedding URL may hold credentials
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root))
    # psycopg_pool warns on every failed connection attempt and logs each connection handed
    # out at INFO; the application's pool reports an outage once (DatabasePool, in db/pool.py)
    logging.getLogger("psycopg.pool").setLevel(
        logging.DEBUG if root <= logging.DEBUG else max(logging.ERROR, root)
    )
    # FastMCP logs through handlers of its own unless told not to when it is imported (it is
    # imported later, by `serve`): it then logs here, never below INFO (its DEBUG records hold
    # tool arguments: memories, queries)
    os.environ["FASTMCP_LOG_ENABLED"] = "false"
    logging.getLogger("fastmcp").setLevel(max(logging.INFO, root))


ACTOR_OPTION = click.option(
    "--actor",
    "actor",
    type=click.UUID,
    default=None,
    help="Actor id (default: EMERGENT_MEMORY_ACTOR_ID, else derived from the OS user).",
)
PROJECT_OPTION = click.option(
    "--project",
    "project",
    type=click.UUID,
    default=None,
    help="Project id (default: EMERGENT_MEMORY_PROJECT_ID, else derived from the git "
    "repository or directory).",
)
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
MIGRATE_OPTION = click.option(
    "--migrate", is_flag=True, help="Upgrade the database schema first if it is behind."
)


def identity(
    settings: Settings, actor: uuid.UUID | None, project: uuid.UUID | None
) -> LocalIdentity:
    return local_identity(actor or settings.actor_id, project or settings.project_id)


def cli_principal(
    settings: Settings, actor: uuid.UUID | None, project: uuid.UUID | None
) -> Principal:
    """The CLI acts with full rights: whoever runs it holds the database's credentials."""
    local = identity(settings, actor, project).principal
    return Principal(local.actor_id, local.project_id, frozenset({READ, WRITE, ADMIN}))


def memory_service(
    settings: Settings,
    *,
    migrate: bool | None = None,
    embeds: bool = True,
) -> AbstractContextManager[MemoryService]:
    """The service, as the application role. `migrate`: the command's --migrate flag, or
    None for commands without one."""
    return open_memory_service(settings, migrate=migrate, load_model="now" if embeds else "lazily")


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()


def show_memory(memory: Mapping[str, Any], prefix: str = "") -> None:
    contexts = f"  [{', '.join(memory['contexts'])}]" if memory["contexts"] else ""
    click.echo(f"{prefix}{memory['id']}  {memory['category']}/{memory['scope']}{contexts}")
    click.echo(f"{' ' * len(prefix)}  {memory['content']}")
    source = memory.get("derived_from")
    if source:
        click.echo(f"{' ' * len(prefix)}  captured from {describe_episode(source)}")


def describe_episode(episode: Mapping[str, Any]) -> str:
    """A captured conversation window in a few words: session, client, turns, when."""
    turns = episode["turns"]
    return (
        f"session {episode['session_id']} ({episode['client']}), turns {turns['first']}"
        f"-{turns['last']}, {episode['captured_at']}"
    )
