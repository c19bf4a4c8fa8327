"""The `emergent-memory` command: a thin layer over the database, migration and graph modules."""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from emergent_memory import __version__, graph, migrations
from emergent_memory.database import Database, connect, open_database, psql_path
from emergent_memory.errors import EmergentMemoryError
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
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = settings


@cli.command()
@click.option("--migrate", is_flag=True, help="Upgrade the schema to head first if it is behind.")
@click.pass_obj
@reports_errors
def status(settings: Settings, migrate: bool) -> None:
    """Start the database if needed and show its schema revision, packs and contents.

    Refuses a database that is not at the schema head unless --migrate is given.
    """
    with database(settings) as db:
        state = migrations.require_current_schema(db.url, migrate=migrate)
        with connect(db.url) as conn:
            summary = graph.summarize(conn)
        click.echo(f"database:      {describe(db)}")
        click.echo(f"schema:        {state.current} (head)")
        click.echo(f"packs:         {', '.join(summary.published_packs) or 'none'}")
        click.echo(f"projects:      {summary.projects_with_packs} with packs installed")
        click.echo(
            f"graph:         {summary.live_objects} live objects, "
            f"{summary.live_relationships} live relationships"
        )


@cli.group()
def db() -> None:
    """Migrate the database and connect to it."""


@db.command()
@click.argument("revision", default="head")
@click.pass_obj
@reports_errors
def upgrade(settings: Settings, revision: str) -> None:
    """Upgrade the schema to REVISION (default: head)."""
    _migrate(settings, migrations.upgrade, revision, "upgraded")


@db.command()
@click.argument("revision")
@click.pass_obj
@reports_errors
def downgrade(settings: Settings, revision: str) -> None:
    """Downgrade the schema to REVISION ('base' removes everything emergent-memory created,
    except the database-wide `vector` extension)."""
    _migrate(settings, migrations.downgrade, revision, "downgraded")


def _migrate(
    settings: Settings, operation: Callable[[str, str], None], revision: str, done: str
) -> None:
    with database(settings) as db:
        before = migrations.database_revision(db.url) or "base"
        operation(db.url, revision)
        after = migrations.database_revision(db.url) or "base"
    if before == after:
        click.echo(f"database already at {after}; nothing to do")
    else:
        click.echo(f"{done} database from {before} to {after}")


@db.command()
@click.pass_obj
@reports_errors
def current(settings: Settings) -> None:
    """Show the schema revision of the database and whether it is the head."""
    with database(settings) as db:
        state = migrations.schema_state(db.url)
    if state.current is None:
        click.echo(f"base (not migrated; head is {state.head})")
    elif state.at_head:
        click.echo(f"{state.current} (head)")
    else:
        click.echo(f"{state.current} (behind head {state.head}: run `emergent-memory db upgrade`)")


@db.command()
@click.pass_obj
@reports_errors
def url(settings: Settings) -> None:
    """Print the database's connection URL."""
    with database(settings) as db:
        click.echo(db.url)
        if db.embedded:
            click.echo(
                "note: the embedded server runs only while an emergent-memory process uses it; "
                "use `emergent-memory db psql` to connect to it",
                err=True,
            )


@db.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
@reports_errors
def psql(settings: Settings, psql_args: tuple[str, ...]) -> None:
    """Open psql on the database; arguments after `--` go to psql.

    Example: emergent-memory db psql -- -At -c "select count(*) from kb.graph_objects"
    """
    with database(settings) as db:
        returncode = _run_foreground([str(psql_path()), db.url, *psql_args])
    sys.exit(returncode)


def _run_foreground(command: list[str]) -> int:
    # The child owns the terminal: Ctrl-C cancels its query, not this process.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call(command)  # noqa: S603 - our own psql, arguments from the user
    finally:
        signal.signal(signal.SIGINT, previous)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    # SystemExit unwinds the context managers, so an embedded server is stopped cleanly.
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    cli()
