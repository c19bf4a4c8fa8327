"""Commands on the database: status, and the `db` group (migrate, connect, create roles)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from emergent_memory.cli.common import (
    cli,
    database,
    describe,
    reports_errors,
)
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


@cli.command()
@click.option("--migrate", is_flag=True, help="Upgrade the schema to head first if it is behind.")
@click.pass_obj
@reports_errors
def status(settings: Settings, migrate: bool) -> None:
    """Start the database if needed and show its schema revision, packs and contents.

    Refuses a database that is not at the schema head unless --migrate is given.
    """
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings, migrate=migrate) as admin:
        status = admin.maintenance.status()
    summary, queue = status.graph, status.jobs
    click.echo(f"database:      {describe(admin.database)}")
    click.echo(f"schema:        {admin.schema.current} (head)")
    click.echo(f"packs:         {', '.join(summary.published_packs) or 'none'}")
    click.echo(f"projects:      {summary.projects_with_packs} with packs installed")
    click.echo(
        f"graph:         {summary.live_objects} live objects, "
        f"{summary.live_relationships} live relationships"
    )
    click.echo(
        f"embedding jobs: {queue['pending'] + queue['running']} waiting, {queue['dead']} dead"
        + (" (emergent-memory worker --retry-dead)" if queue["dead"] else "")
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
    from emergent_memory.db import migrate as migrations

    _migrate(settings, migrations.upgrade, revision, "upgraded")


@db.command(context_settings={"ignore_unknown_options": True})
@click.argument("revision")
@click.pass_obj
@reports_errors
def downgrade(settings: Settings, revision: str) -> None:
    """Downgrade the schema to REVISION ('base' removes everything emergent-memory created,
    except the database-wide `vector` extension)."""
    from emergent_memory.db import migrate as migrations

    _migrate(settings, migrations.downgrade, revision, "downgraded")


def _migrate(
    settings: Settings, operation: Callable[[str, str], None], revision: str, done: str
) -> None:
    from emergent_memory.db import migrate as migrations

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
    from emergent_memory.db import migrate as migrations

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
    from emergent_memory.db.embedded import psql_path

    with database(settings) as db:
        returncode = _run_foreground([str(psql_path()), db.url, *psql_args])
    sys.exit(returncode)


@db.command("create-role")
@click.argument("name")
@click.option(
    "--admin",
    is_flag=True,
    help="Make it an administrator (emergent_memory_admin: every row) instead of an "
    "application role (emergent_memory_app: row-level security).",
)
@click.option(
    "--password-env",
    metavar="VARIABLE",
    default=None,
    help="Set the role's password from this environment variable (never from an argument).",
)
@click.pass_obj
@reports_errors
def create_role(settings: Settings, name: str, admin: bool, password_env: str | None) -> None:
    """Create (or update) the login role NAME for the server (or an administrator).

    Run it as a role that may create roles, on a migrated database. The server should connect
    as an application role: the database then shows it only the rows of the principal of each
    transaction (docs/security.md).
    """
    from emergent_memory.db import migrate as migrations
    from emergent_memory.db.roles import ADMIN_ROLE, APP_ROLE, ensure_login_role

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise InvalidInput(
            f"role name {name!r}: use lower-case letters, digits and underscores (at most 63)"
        )
    password = None
    if password_env is not None:
        password = os.environ.get(password_env)
        if not password:
            raise InvalidInput(f"--password-env {password_env}: that variable is unset or empty")
    group = ADMIN_ROLE if admin else APP_ROLE
    with database(settings) as db:
        migrations.require_current_schema(db.url)  # the group roles come with migration 0006
        ensure_login_role(db.url, name, group=group, password=password)
    click.echo(f"role {name} can log in as a member of {group}")


def _run_foreground(command: list[str]) -> int:
    # The child owns the terminal: Ctrl-C cancels its query, not this process.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call(command)  # noqa: S603 - our own psql, arguments from the user
    finally:
        signal.signal(signal.SIGINT, previous)
