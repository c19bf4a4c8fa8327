"""What every command shares: the command group, its options, error reporting and output.

The group loads its commands lazily: COMMANDS names each command's module and its one-line
help, so that `emergent-memory --help` and `--version` import no command module, and a
command's module (with what it imports: the application, the database layers, the models)
is imported only when that command runs or its own help is asked for. A command's module
imports the heavy layers inside its functions, so that its `--help` stays quick as well.
tests/test_cli.py keeps COMMANDS equal to the commands the modules define.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import wraps
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from emergent_memory import __version__
from emergent_memory.errors import EmergentMemoryError

if TYPE_CHECKING:
    from emergent_memory.auth.identity import LocalIdentity
    from emergent_memory.auth.principal import Principal
    from emergent_memory.db.connection import Database
    from emergent_memory.memory import MemoryService
    from emergent_memory.settings import Settings

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
    from emergent_memory.db.connection import open_database

    with open_database(settings.database_url, settings.data_dir) as db:
        yield db


def describe(db: Database) -> str:
    if db.embedded:
        return f"embedded PostgreSQL in {db.pgdata}"
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", db.url)  # never print a password


HELP_OPTIONS = ("-h", "--help")
HELP_ONLY = "emergent_memory.help_only"  # ctx.meta: the command line only asks for help

# command -> (its module in emergent_memory.cli, its one-line help as the command gives it)
COMMANDS: dict[str, tuple[str, str]] = {
    "archive": (
        "memory_lifecycle",
        "Take a memory out of recall without deleting it (manage_memory action archive); "
        "`restore` brings it back.",
    ),
    "capture": ("capture", "Automatic capture of conversations (docs/automatic-memory.md)."),
    "db": ("db", "Migrate the database and connect to it."),
    "demo": (
        "demo",
        "A short scripted session: save, dedup and supersede, a different fact kept apart, "
        "recall with scores, update, restore, forget.",
    ),
    "export": (
        "transfer",
        "Write everything (every version, relationship, context, embedding) as JSON Lines.",
    ),
    "forget": (
        "memory",
        "Delete one memory, or with --all every memory you saved in this project.",
    ),
    "hook": (
        "hooks",
        "Run one Claude Code hook: EVENT is SessionStart, UserPromptSubmit, Stop, PreCompact, "
        "SessionEnd or PostToolUse, and the hook's JSON comes on stdin.",
    ),
    "hooks": (
        "hooks",
        "Install, remove and check the Claude Code hooks (docs/clients.md).",
    ),
    "import": (
        "transfer",
        "Load an export (JSON Lines, ids kept), or Claude Code's auto memory (--from claude-code).",
    ),
    "lifecycle": (
        "lifecycle",
        "The memory lifecycle's jobs, as an administrator (every actor's memories).",
    ),
    "list": ("memory", "List your memories, most used first (manage_memory action list)."),
    "recall": ("memory", "Search memories by meaning and words (the recall_memories tool)."),
    "reembed": (
        "worker",
        "Give every memory a vector from the configured (or given) embedding model: those "
        "without one from it (no vector, or another model's) are embedded; a vector already "
        "from it is kept, so a second run, or a run with the model in use, embeds nothing, and "
        "an interrupted run goes on where it stopped.",
    ),
    "reinforce": (
        "memory_lifecycle",
        "Record evidence that a memory is still true (manage_memory action reinforce).",
    ),
    "restore": (
        "memory",
        "Make a superseded, archived or deleted memory active again (manage_memory restore).",
    ),
    "review": (
        "review",
        "The conflicts and possible duplicates waiting for your decision, and a decision on "
        "each: keep-both, supersede, merge, undo.",
    ),
    "save": ("memory", "Save a memory (the save_memory tool)."),
    "serve": (
        "serve",
        "Run the MCP server (tools save_memory, recall_memories, manage_memory, verify_memory).",
    ),
    "show": (
        "show",
        "Show one memory in full: versions, why it was replaced, conflicts, provenance.",
    ),
    "stats": ("memory", "How many memories you saved, per project."),
    "status": (
        "db",
        "Start the database if needed and show its schema revision, packs and contents.",
    ),
    "token": ("tokens", "Create, list and revoke API tokens of the HTTP server."),
    "ui": ("ui", "Open the dashboard, signed in as the local user."),
    "verify": (
        "memory_lifecycle",
        "Check a claim against your memories: confirmed, related, conflict or new (the "
        "verify_memory tool).",
    ),
    "worker": (
        "worker",
        "Compute the embeddings still queued (memories saved while the provider failed), and, "
        "when capture is on (EMERGENT_MEMORY_ANTHROPIC_API_KEY), capture queued conversations; "
        "every EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS (24; 0: never), archive the memories "
        "nobody used for long (`emergent-memory lifecycle archive`; not with --once).",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported from their modules (COMMANDS) when asked for."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[HELP_ONLY] = asks_for_help(args)  # the callback runs after args are consumed
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            # importing the module registers its commands on this group
            import_module(f"emergent_memory.cli.{COMMANDS[cmd_name][0]}")
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list as click writes it, from COMMANDS: no module is imported."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None and loaded.hidden:
                continue
            text = (
                COMMANDS[name][1]
                if name in COMMANDS
                else (loaded.get_short_help_str(10**6) if loaded is not None else "")
            )
            rows.append((name, click.Command(name, help=text).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def asks_for_help(arguments: list[str]) -> bool:
    """Whether a command's own --help is among its arguments (before any `--`)."""
    before = arguments[: arguments.index("--")] if "--" in arguments else arguments
    return any(argument in HELP_OPTIONS for argument in before)


@click.group(cls=LazyGroup, context_settings={"help_option_names": list(HELP_OPTIONS)})
@click.version_option(__version__, prog_name="emergent-memory")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Cross-session memory for AI agents, on PostgreSQL with pgvector.

    With EMERGENT_MEMORY_DATABASE_URL unset, commands use an embedded PostgreSQL kept in
    EMERGENT_MEMORY_DATA_DIR (default: the user data directory), started when needed.
    """
    from emergent_memory.settings import load_settings

    try:
        settings = load_settings()
    except EmergentMemoryError as error:
        # a command's help is printed even when the settings are wrong; the guess that it was
        # asked for (a -h anywhere, perhaps an option's value) never skips the settings
        if ctx.meta.get(HELP_ONLY):
            return
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
    from emergent_memory.auth.identity import local_identity

    return local_identity(actor or settings.actor_id, project or settings.project_id)


def cli_principal(
    settings: Settings, actor: uuid.UUID | None, project: uuid.UUID | None
) -> Principal:
    """The CLI acts with full rights: whoever runs it holds the database's credentials."""
    from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal

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
    from emergent_memory.app import open_memory_service

    return open_memory_service(settings, migrate=migrate, load_model="now" if embeds else "lazily")


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()


def whole_memory_id(service: MemoryService, principal: Principal, memory_id: str) -> str:
    """MEMORY_ID as a command takes it: a whole id or a short one, as the tables show it
    (MemoryService.resolve_memory_id: at least 8 hex digits that begin exactly one memory
    the principal sees; another user's memory is not found)."""
    return service.resolve_memory_id(principal, memory_id, "MEMORY_ID", "--json shows whole ids")
