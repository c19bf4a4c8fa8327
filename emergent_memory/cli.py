"""The `emergent-memory` command: a thin layer over the service, database and migrations."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta
from functools import wraps
from typing import Any, NoReturn, ParamSpec, TypeVar

import click
import psycopg
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel

from emergent_memory import __version__, graph
from emergent_memory.app import (
    open_embedding_worker,
    open_memory_service,
    open_memory_service_with_worker,
)
from emergent_memory.auth import tokens
from emergent_memory.auth.identity import LocalIdentity, local_identity
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.db import migrate as migrations
from emergent_memory.db.connection import Database, connect, open_database
from emergent_memory.db.embedded import psql_path
from emergent_memory.db.roles import ADMIN_ROLE, APP_ROLE, ensure_login_role
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.errors import EmergentMemoryError, InvalidInput
from emergent_memory.graph import transfer
from emergent_memory.memory import MemoryService
from emergent_memory.memory.models import CATEGORIES, LIST_STATUSES, SCOPES, SOURCES
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


@contextmanager
def migrated_connection(settings: Settings) -> Iterator[psycopg.Connection[Any]]:
    """One connection (committed at the end) to a database that is at the schema head."""
    with database(settings) as db:
        migrations.require_current_schema(db.url)
        with connect(db.url) as conn:
            yield conn


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
    # out at INFO; the application's pool reports an outage once (database.DatabasePool)
    logging.getLogger("psycopg.pool").setLevel(
        logging.DEBUG if root <= logging.DEBUG else max(logging.ERROR, root)
    )
    # FastMCP logs through handlers of its own unless told not to when it is imported (it is
    # imported later, by `serve`): it then logs here, never below INFO (its DEBUG records hold
    # tool arguments: memories, queries)
    os.environ["FASTMCP_LOG_ENABLED"] = "false"
    logging.getLogger("fastmcp").setLevel(max(logging.INFO, root))


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
            queue = jobs.counts(conn)
        click.echo(f"database:      {describe(db)}")
        click.echo(f"schema:        {state.current} (head)")
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
    _migrate(settings, migrations.upgrade, revision, "upgraded")


@db.command(context_settings={"ignore_unknown_options": True})
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


# -- identity and the service ---------------------------------------------------------------

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
    maintenance: bool = False,
) -> AbstractContextManager[MemoryService]:
    """The service; `maintenance` connects as the database owner (every row, no principal).
    `migrate`: the command's --migrate flag, or None for commands without one."""
    return open_memory_service(
        settings,
        migrate=migrate,
        load_model="now" if embeds else "lazily",
        role="owner" if maintenance else "app",
    )


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()


def show_memory(memory: Mapping[str, Any], prefix: str = "") -> None:
    contexts = f"  [{', '.join(memory['contexts'])}]" if memory["contexts"] else ""
    click.echo(f"{prefix}{memory['id']}  {memory['category']}/{memory['scope']}{contexts}")
    click.echo(f"{' ' * len(prefix)}  {memory['content']}")


# -- serve ----------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for one local user; http for a shared server with API tokens.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP: port.")
@click.option(
    "--worker/--no-worker",
    default=True,
    show_default=True,
    help="Also run the embedding worker, in a thread sharing the server's pool and model.",
)
@ACTOR_OPTION
@PROJECT_OPTION
@MIGRATE_OPTION
@click.pass_obj
@reports_errors
def serve(
    settings: Settings,
    transport: str,
    host: str,
    port: int,
    worker: bool,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    migrate: bool,
) -> None:
    """Run the MCP server (tools save_memory, recall_memories, manage_memory).

    stdio: acts for one local user (--actor / --project, or derived defaults, printed on
    stderr). http: streamable HTTP on --host/--port; every request needs
    `Authorization: Bearer <token>` (see `emergent-memory token create`).
    """
    from emergent_memory.mcp.server import create_server, stdin_with_marked_surrogates

    if transport == "http" and (actor is not None or project is not None):
        raise InvalidInput(
            "over http the actor and project come from each request's token; drop --actor/--project"
        )

    def open_service() -> AbstractContextManager[MemoryService]:
        """The service (the database, its schema checked or migrated, the pool), opened once
        before the transport starts, so that a failure is one line, and held until the server
        stops (one use of the embedded server)."""
        if worker:  # queued embeddings are computed here, not only by `emergent-memory worker`
            return open_memory_service_with_worker(
                settings, migrate=migrate, load_model="background"
            )
        return open_memory_service(settings, migrate=migrate, load_model="background")

    if transport == "http":
        _serve_http(settings, open_service, host, port)
        return
    local = identity(settings, actor, project)
    with open_service() as service:
        click.echo(f"emergent-memory: {local.describe()}", err=True)
        server = create_server(lambda: nullcontext(service), lambda: local.principal)
        # half a surrogate pair in a message gets a tool error, not silence (mcp/server.py)
        with stdin_with_marked_surrogates():
            server.run(transport="stdio", show_banner=False)


def _serve_http(
    settings: Settings,
    open_service: Callable[[], AbstractContextManager[MemoryService]],
    host: str,
    port: int,
) -> None:
    """The streamable HTTP server. Its port is taken first, then the service is opened (a
    failure of either is one line, not uvicorn's traceback), then it prints its banner and
    serves."""
    from emergent_memory.mcp.auth import DatabaseTokenVerifier, token_principal
    from emergent_memory.mcp.http_server import http_app, listening_socket, serve_http
    from emergent_memory.mcp.server import ServiceHolder, create_server

    with listening_socket(host, port) as sock:
        if not _is_loopback(host):
            click.echo(
                f"warning: listening on {host}, reachable from other machines; put TLS in "
                "front of it (a reverse proxy) and hand out tokens with care",
                err=True,
            )
        with open_service() as service:
            holder = ServiceHolder()
            server = create_server(
                lambda: nullcontext(service),
                token_principal,
                auth=DatabaseTokenVerifier(holder),
                holder=holder,
            )
            app = http_app(
                server,
                max_request_bytes=settings.max_request_bytes,
                max_sessions=settings.http_max_sessions,
                session_idle_timeout=settings.http_session_idle_timeout,
            )
            click.echo(
                f"emergent-memory: MCP over streamable HTTP at http://{host}:{port}/mcp\n"
                "  every request needs a token:  emergent-memory token create --name my-laptop\n"
                "  then send it as the header    Authorization: Bearer <token>\n"
                "  docs/clients.md shows the configuration of Claude Code, Claude Desktop, "
                "OpenCode",
                err=True,
            )
            serve_http(app, sock)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- the embedding worker -------------------------------------------------------------------


@cli.command("worker")
@click.option("--once", is_flag=True, help="Process the jobs that are due, then exit.")
@click.option("--retry-dead", is_flag=True, help="First give dead jobs a new set of attempts.")
@JSON_OPTION
@click.pass_obj
@reports_errors
def worker_command(settings: Settings, once: bool, retry_dead: bool, as_json: bool) -> None:
    """Compute the embeddings still queued (memories saved while the provider failed).

    Runs until SIGINT or SIGTERM (the round in progress is finished; a second signal stops
    at once), or with --once until no job is due. Any number of workers, and servers started
    with --worker, can share the queue.
    """
    with open_embedding_worker(settings) as worker:
        revived = worker.retry_dead() if retry_dead else 0
        if once:
            counts = worker.drain()
            data = {"revived": revived, **counts.as_dict(), "queue": worker.queue_counts()}

            def human() -> None:
                if retry_dead:
                    click.echo(f"{revived} dead jobs revived")
                click.echo(_describe_round(data))

            emit(data, as_json, human)
            return
        stop = threading.Event()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def request_stop(signum: int, frame: Any) -> None:
            if stop.is_set():
                raise SystemExit(128 + signum)
            click.echo("emergent-memory worker: stopping after the current round", err=True)
            stop.set()

        for sig in previous:
            signal.signal(sig, request_stop)
        click.echo(
            f"emergent-memory worker {worker.worker_id}: computing queued embeddings"
            + (f" ({revived} dead jobs revived)" if retry_dead else "")
            + "; Ctrl-C to stop",
            err=True,
        )
        # The rounds run in a thread; this one only waits, so the signal handler never runs
        # while the worker holds a lock it needs.
        thread = threading.Thread(
            target=worker.run_forever,
            args=(stop, settings.worker_poll_interval_seconds),
            name="embedding-worker",
            daemon=True,
        )
        try:
            thread.start()
            while thread.is_alive():
                thread.join(0.5)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _describe_round(data: Mapping[str, Any]) -> str:
    queue = data["queue"]
    return (
        f"claimed {data['claimed']} jobs: {data['embedded']} embedded, {data['done']} done, "
        f"{data['retried']} to retry, {data['dead']} dead; queue: {queue['pending']} pending, "
        f"{queue['running']} running, {queue['dead']} dead"
    )


# -- tokens ---------------------------------------------------------------------------------


@cli.group()
def token() -> None:
    """Create, list and revoke API tokens of the HTTP server."""


@token.command("create")
@click.option("--name", required=True, help="What the token is for, e.g. 'laptop' or 'ci'.")
@ACTOR_OPTION
@PROJECT_OPTION
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(list(tokens.SCOPES)),
    help="Repeat for several (default: memory:read and memory:write).",
)
@click.option("--expires-in-days", type=click.IntRange(min=1), default=None)
@JSON_OPTION
@click.pass_obj
@reports_errors
def token_create(
    settings: Settings,
    name: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    scopes: tuple[str, ...],
    expires_in_days: int | None,
    as_json: bool,
) -> None:
    """Create a token; it is shown once and only its hash is stored."""
    local = identity(settings, actor, project).principal
    with migrated_connection(settings) as conn:
        new = tokens.create_token(
            conn,
            name=name,
            actor_id=local.actor_id,
            project_id=local.project_id,
            scopes=list(scopes) or [READ, WRITE],
            expires_in=None if expires_in_days is None else timedelta(days=expires_in_days),
        )
    data = {"token": new.token, **_token_json(new.info)}

    def human() -> None:
        click.echo(new.token)
        click.echo(
            f"token {new.info.id} ({new.info.name}) for actor {new.info.actor_id} in project "
            f"{new.info.project_id}, scopes {' '.join(new.info.scopes)}; it is shown only "
            "once: store it now",
            err=True,
        )

    emit(data, as_json, human)


@token.command("list")
@JSON_OPTION
@click.pass_obj
@reports_errors
def token_list(settings: Settings, as_json: bool) -> None:
    """List tokens (never the tokens themselves)."""
    with migrated_connection(settings) as conn:
        infos = tokens.list_tokens(conn)

    def human() -> None:
        for info in infos:
            state = "revoked" if info.revoked_at else "active"
            expiry = f", expires {info.expires_at:%Y-%m-%d}" if info.expires_at else ""
            click.echo(
                f"{info.id}  {info.token_prefix}...  {info.name}  {state}{expiry}  "
                f"actor {info.actor_id} project {info.project_id}  {' '.join(info.scopes)}"
            )
        if not infos:
            click.echo("no tokens")

    emit([_token_json(info) for info in infos], as_json, human)


@token.command("revoke")
@click.argument("token_id", type=click.UUID)
@click.pass_obj
@reports_errors
def token_revoke(settings: Settings, token_id: uuid.UUID) -> None:
    """Revoke a token at once, for good."""
    with migrated_connection(settings) as conn:
        info = tokens.revoke_token(conn, token_id)
    click.echo(f"revoked token {info.id} ({info.name})")


def _token_json(info: tokens.TokenInfo) -> dict[str, Any]:
    return {
        "id": str(info.id),
        "name": info.name,
        "prefix": info.token_prefix,
        "actor_id": str(info.actor_id),
        "project_id": str(info.project_id),
        "scopes": list(info.scopes),
        "created_at": info.created_at.isoformat(),
        "expires_at": None if info.expires_at is None else info.expires_at.isoformat(),
        "revoked_at": None if info.revoked_at is None else info.revoked_at.isoformat(),
        "last_used_at": None if info.last_used_at is None else info.last_used_at.isoformat(),
    }


# -- memories -------------------------------------------------------------------------------


@cli.command()
@click.argument("content")
@click.option("--category", "-c", required=True, type=click.Choice(list(CATEGORIES)))
@click.option("--source", type=click.Choice(list(SOURCES)), default="inferred", show_default=True)
@click.option("--scope", type=click.Choice(list(SCOPES)), default="user", show_default=True)
@click.option("--context", default=None, help="File it under this named context.")
@click.option("--related-to", "related_to", multiple=True, help="Id of a related object.")
@ACTOR_OPTION
@PROJECT_OPTION
@MIGRATE_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def save(
    settings: Settings,
    content: str,
    category: str,
    source: str,
    scope: str,
    context: str | None,
    related_to: tuple[str, ...],
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    migrate: bool,
    as_json: bool,
) -> None:
    """Save a memory (the save_memory tool)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, migrate=migrate) as service:
        result = service.save(
            principal,
            content,
            category,
            source=source,
            scope=scope,
            context=context,
            related_to=list(related_to) or None,
        )

    def human() -> None:
        click.echo(f"{result['status']}: {result['memory']['id']}")
        for old in result["superseded_ids"]:
            click.echo(f"  supersedes {old}")
        for close in result["possible_duplicates"]:
            click.echo(
                f"  possibly the same fact as {close['id']} (similarity "
                f"{close['similarity']:.2f}): {close['content']}"
            )
        if result["degraded"]:
            click.echo("  (stored without an embedding: the provider failed; a job is queued)")

    emit(result, as_json, human)


@cli.command()
@click.argument("query")
@click.option("--category", "-c", type=click.Choice(list(CATEGORIES)), default=None)
@click.option("--scope", type=click.Choice(list(SCOPES)), default=None)
@click.option("--limit", "-n", type=int, default=10, show_default=True)
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def recall(
    settings: Settings,
    query: str,
    category: str | None,
    scope: str | None,
    limit: int,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Search memories by meaning and words (the recall_memories tool)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings) as service:
        result = service.recall(principal, query, category=category, scope=scope, limit=limit)

    def human() -> None:
        if result["degraded"]:
            click.echo("(full-text only: the embedding provider failed)")
        for rank, memory in enumerate(result["memories"], 1):
            scores = memory["scores"]
            similarity = scores["similarity"]
            click.echo(
                f"{rank}. score {memory['score']:.4f}  (text rank {scores['lexical_rank'] or '-'}"
                f", vector rank {scores['vector_rank'] or '-'}"
                + (f", similarity {similarity:.2f}" if similarity is not None else "")
                + ")"
            )
            show_memory(memory, prefix="   ")
        if not result["memories"]:
            click.echo("nothing remembered about that")

    emit(result, as_json, human)


@cli.command("list")
@click.option("--category", "-c", type=click.Choice(list(CATEGORIES)), default=None)
@click.option("--limit", "-n", type=int, default=20, show_default=True)
@click.option(
    "--status",
    type=click.Choice(list(LIST_STATUSES)),
    default="active",
    show_default=True,
    help="superseded or deleted: the memories `restore` can bring back, newest first.",
)
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def list_command(
    settings: Settings,
    category: str | None,
    limit: int,
    status: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """List your memories, most used first (manage_memory action list)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        result = service.list_memories(principal, category=category, limit=limit, status=status)

    def human() -> None:
        for memory in result["memories"]:
            show_memory(memory)
            replaced_by = memory.get("superseded_by")
            if memory.get("deleted_at"):
                click.echo(f"  deleted {memory.get('deleted_at')}")
            elif replaced_by:
                click.echo(f"  superseded by {replaced_by}")
        click.echo(f"{result['count']} {'' if status == 'active' else status + ' '}memories")

    emit(result, as_json, human)


@cli.command()
@click.argument("memory_id")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def restore(
    settings: Settings,
    memory_id: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Make a superseded or deleted memory active again (manage_memory action restore).

    `emergent-memory list --status superseded` (or deleted) shows their ids.
    """
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        result = service.restore(principal, memory_id)

    def human() -> None:
        click.echo(f"restored {result['memory']['id']} (it was {result['restored_from']})")
        if result["broken_supersession"]:
            click.echo(
                f"  {result['broken_supersession']} no longer supersedes it; both are active"
            )

    emit(result, as_json, human)


@cli.command()
@click.argument("memory_id", required=False)
@click.option("--all", "forget_all", is_flag=True, help="Every memory you saved in this project.")
@click.option("--yes", is_flag=True, help="With --all: do not ask for confirmation.")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def forget(
    settings: Settings,
    memory_id: str | None,
    forget_all: bool,
    yes: bool,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Delete one memory, or with --all every memory you saved in this project."""
    if (memory_id is None) == (not forget_all):
        raise InvalidInput("give either a memory id or --all")
    principal = cli_principal(settings, actor, project)
    if forget_all and not yes:
        if not sys.stdin.isatty():
            raise InvalidInput("forget --all needs --yes when not run interactively")
        click.confirm(
            f"Delete every memory you saved in project {principal.project_id}?", abort=True
        )
    with memory_service(settings, embeds=False) as service:
        if forget_all:
            result: Any = service.forget_all(principal, confirm=True)
            message = f"deleted {result['deleted_count']} memories"
        else:
            result = service.delete(principal, memory_id)
            message = f"deleted {result['deleted']}"
    emit(result, as_json, lambda: click.echo(message))


@cli.command()
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def stats(
    settings: Settings, actor: uuid.UUID | None, project: uuid.UUID | None, as_json: bool
) -> None:
    """How many memories you saved, per project."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        result = service.stats(principal)

    def human() -> None:
        click.echo(
            f"actor {result['actor_id']}: {result['active']} active, {result['superseded']} "
            f"superseded, {result['deleted']} deleted"
        )
        for row in result["projects"]:
            here = " (current)" if row["project_id"] == result["project_id"] else ""
            categories = ", ".join(f"{n} {c}" for c, n in row["by_category"].items() if n)
            click.echo(
                f"  project {row['project_id']}{here}: {row['active']} active"
                + (f" ({categories})" if categories else "")
            )

    emit(result, as_json, human)


@cli.command()
@click.option("--model", default=None, help="The model to re-embed with (default: configured).")
@click.option("--batch-size", type=click.IntRange(1, 1024), default=64, show_default=True)
@JSON_OPTION
@click.pass_obj
@reports_errors
def reembed(settings: Settings, model: str | None, batch_size: int, as_json: bool) -> None:
    """Give every memory a vector from the configured (or given) embedding model."""
    if model is not None:
        if settings.embedding_provider == "local":
            if model != LOCAL_MODEL_NAME:
                raise InvalidInput(
                    f"the local provider has one model, {LOCAL_MODEL_NAME}; for another, set "
                    "EMERGENT_MEMORY_EMBEDDING_PROVIDER=openai and its settings"
                )
        else:
            settings = settings.model_copy(update={"embedding_model": model})
    with memory_service(settings, maintenance=True) as service:
        result = service.reembed(batch_size=batch_size)
    emit(
        result,
        as_json,
        lambda: click.echo(
            f"re-embedded {result['reembedded']} memories with {result['model']}; "
            f"{result['remaining']} left"
        ),
    )


# -- export / import ------------------------------------------------------------------------


@cli.command("export")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option("--project", "project", type=click.UUID, default=None, help="Only this project.")
@click.option("--actor", "actor", type=click.UUID, default=None, help="Only this actor.")
@click.pass_obj
@reports_errors
def export_command(
    settings: Settings, path: str, project: uuid.UUID | None, actor: uuid.UUID | None
) -> None:
    """Write everything (every version, relationship, context, embedding) as JSON Lines."""
    count = 0
    with database(settings) as db:
        migrations.require_current_schema(db.url)
        with connect(db.url) as conn, click.open_file(path, "w", encoding="utf-8") as out:
            # one consistent snapshot of every table, even while a server writes
            conn.isolation_level = IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            register_vector(conn)
            for record in transfer.export_records(conn, project_id=project, actor_id=actor):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
    if path != "-":
        click.echo(f"exported {count} records to {path}", err=True)


@cli.command("import")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True, exists=False))
@MIGRATE_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def import_command(settings: Settings, path: str, migrate: bool, as_json: bool) -> None:
    """Load an export (JSON Lines), keeping ids; importing twice changes nothing."""
    with database(settings) as db:
        migrations.require_current_schema(db.url, migrate=migrate)
        with (
            connect(db.url) as conn,
            click.open_file(path, "r", encoding="utf-8") as source,
            conn.transaction(),
        ):
            register_vector(conn)
            counts = transfer.import_records(conn, _json_lines(source))
    data = dataclasses.asdict(counts)
    emit(data, as_json, lambda: click.echo(_describe_counts(data)))


def _json_lines(source: Iterable[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(source, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInput(f"line {number} is not JSON: {error.msg}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"line {number} is not a JSON object")
        yield record


def _describe_counts(counts: Mapping[str, Any]) -> str:
    return "imported: " + ", ".join(f"{name} {value}" for name, value in counts.items())


# -- demo -----------------------------------------------------------------------------------


@cli.command()
@MIGRATE_OPTION
@click.pass_obj
@reports_errors
def demo(settings: Settings, migrate: bool) -> None:
    """A short scripted session: save, dedup and supersede, a different fact kept apart,
    recall with scores, update, restore, forget.

    It runs as a throw-away actor in a throw-away project and forgets everything at the end.
    """
    me = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE}))

    def step(title: str) -> None:
        click.echo(click.style(f"\n== {title}", bold=True))

    with memory_service(settings, migrate=migrate) as service:
        step("save three memories")
        for content, category in (
            ("The user prefers pnpm over npm", "preference"),
            ("Integration tests need Docker running", "fact"),
            ("Error ERR_4471 means the licence server is unreachable", "fact"),
        ):
            result = service.save(me, content, category, source="explicit")
            click.echo(f"{result['status']:9} {content}")

        step("save the same fact again, and a reworded one")
        again = service.save(me, "the user prefers PNPM over npm", "preference")
        click.echo(f"{again['status']:9} (exact duplicate: nothing new stored)")
        reworded = service.save(me, "The user likes using pnpm instead of npm", "preference")
        click.echo(
            f"{reworded['status']:9} similarity {reworded['similarity']}: supersedes "
            f"{', '.join(reworded['superseded_ids']) or 'nothing'}"
        )

        step("save a different fact in almost the same words")
        service.save(me, "Service A listens on port 9001", "fact")
        other = service.save(me, "Service B listens on port 9002", "fact")
        for close in other["possible_duplicates"]:
            click.echo(
                f"{other['status']:9} similarity {close['similarity']}: kept apart from "
                f"{close['content']!r} (another service, another port), reported as a "
                "possible duplicate"
            )

        for query in ("which package manager should I use?", "ERR_4471"):
            step(f"recall {query!r}")
            for memory in service.recall(me, query, limit=3)["memories"]:
                scores = memory["scores"]
                click.echo(
                    f"{memory['score']:.4f} (text rank {scores['lexical_rank'] or '-'}, vector "
                    f"rank {scores['vector_rank'] or '-'})  {memory['content']}"
                )

        step("update a memory (same id, new content)")
        target = service.recall(me, "Docker", limit=1)["memories"][0]
        updated = service.update(
            me, target["id"], {"content": "Integration tests need Docker or Podman running"}
        )["memory"]
        click.echo(f"{updated['id']}  {updated['content']}")

        step("restore the superseded memory (a supersession can be undone)")
        for old_id in reworded["superseded_ids"]:
            restored = service.restore(me, old_id)
            click.echo(f"{restored['memory']['id']}  {restored['memory']['content']}")

        step("forget everything")
        forgotten = service.forget_all(me, confirm=True)
        click.echo(f"deleted {forgotten['deleted_count']} memories")
        left = service.recall(me, "pnpm")["memories"]
        click.echo(f"recall 'pnpm' now finds {len(left)} memories")


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
