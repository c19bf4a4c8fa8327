"""`emergent-memory hook` and `emergent-memory hooks install|uninstall|status`: the Claude
Code hooks, and their entries in Claude Code's settings.

`hook EVENT` normally never gets here: the console script (emergent_memory/entry.py) sends it
to the standard-library runner before click loads. Through click (`--help`, or a caller of
`cli` itself) it runs the same runner.

One installation serves every repository: the hooks file holds one token of the local actor
with the scope memory:any-project, and each hook names the project of its session's
repository. The actor is the token's, so no other actor's memories can be reached.
"""

from __future__ import annotations

import difflib
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.auth.local_ids import local_user, project_root
from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.cli.common import JSON_OPTION, cli, emit, fail, identity, reports_errors
from emergent_memory.hooks import claude_settings
from emergent_memory.hooks.autostart import server_log_path
from emergent_memory.hooks.claude_settings import EVENTS, SettingsFileError
from emergent_memory.hooks.client import Server
from emergent_memory.hooks.config import (
    CONFIG_VARIABLE,
    DATA_DIR_VARIABLE,
    DEFAULT_URL,
    ConfigProblem,
    default_log_file,
    hooks_file_path,
    read_hooks_file,
    write_hooks_file,
)
from emergent_memory.hooks.state import remembered_capture, unsent_counts

if TYPE_CHECKING:
    from emergent_memory.settings import Settings

# The scopes of the hooks' token: injection reads, capture writes, each in its session's
# project.
HOOK_SCOPES = [READ, WRITE, ANY_PROJECT]
SCOPE_OPTION = click.option(
    "--scope",
    type=click.Choice(["project", "user"]),
    default="project",
    show_default=True,
    help="project: .claude/settings.json of the current git repository; user: "
    "~/.claude/settings.json (every project).",
)


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("event")
def hook(event: str) -> None:
    """Run one Claude Code hook: EVENT is SessionStart, UserPromptSubmit, Stop, PreCompact,
    SessionEnd or PostToolUse, and the hook's JSON comes on stdin.

    SessionStart and UserPromptSubmit print the memories to inject as Claude Code's
    {"hookSpecificOutput": {"hookEventName", "additionalContext"}}; Stop, PreCompact and
    SessionEnd send the new part of the transcript for capture; PostToolUse sends the files
    Claude wrote or deleted in its auto memory folder. Always exits 0, prints nothing else,
    and logs problems to <data dir>/logs/hooks.log. Installed by `hooks install`. (`hook
    Backlog` is the run SessionStart starts detached to send the turns that earlier runs
    left unsent; input {"project_id": ...}; `hook AutoMemorySync` the one that sends the
    auto memory folder's changes; input {"memory_folder": ..., "project_id": ...}.)
    """
    from emergent_memory.hooks.run import main as run_hook

    sys.exit(run_hook([event]))


@cli.group()
def hooks() -> None:
    """Install, remove and check the Claude Code hooks (docs/clients.md)."""


def _environ(settings: Settings) -> dict[str, str]:
    """The environment as the hooks read it, with the settings' values (one reading)."""
    environ = dict(os.environ)
    if settings.hook_config is not None:
        environ[CONFIG_VARIABLE] = str(settings.hook_config)
    environ[DATA_DIR_VARIABLE] = str(settings.data_dir)
    return environ


def settings_path(scope: str) -> Path:
    """Claude Code's settings file: the repository's (its root as the stdio server derives
    it) or the user's ($CLAUDE_CONFIG_DIR, else ~/.claude)."""
    if scope == "project":
        return project_root(Path.cwd()) / ".claude" / "settings.json"
    home = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(home).expanduser().absolute() / "settings.json"


def hook_program() -> str:
    """Our executable, absolute and quoted for a shell: the `emergent-memory` script beside
    this Python, else the one on PATH, else `python -m emergent_memory`."""
    beside = Path(sys.executable).with_name(
        "emergent-memory.exe" if os.name == "nt" else "emergent-memory"
    )
    if beside.is_file():
        return shlex.quote(str(beside))
    found = shutil.which("emergent-memory")
    if found:
        return shlex.quote(str(Path(found).absolute()))
    return f"{shlex.quote(sys.executable)} -m emergent_memory"


def _read(path: Path) -> dict[str, Any]:
    try:
        return claude_settings.read_settings(path)
    except SettingsFileError as error:
        fail(str(error))


def _diff(path: Path, before: dict[str, Any], after: dict[str, Any]) -> str:
    old = claude_settings.render(before).splitlines(keepends=True) if before else []
    new = claude_settings.render(after).splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, str(path), f"{path} (after)"))


@hooks.command("install")
@SCOPE_OPTION
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option(
    "--no-settings",
    is_flag=True,
    help="Write the hooks file (URL, token) only and leave Claude Code's settings alone: "
    "what the Claude Code plugin's first session start does, its hooks coming from the plugin.",
)
@click.option(
    "--url",
    default=None,
    help="The server's URL (default: EMERGENT_MEMORY_HOOK_URL, else the hooks file's, "
    f"else {DEFAULT_URL}).",
)
@click.option(
    "--token",
    default=None,
    help="A token to use instead of creating one (e.g. of a remote server); default: the "
    "hooks file's while it is valid, else a new one for the local actor.",
)
@click.option(
    "--migrate/--no-migrate",
    default=None,
    help="Migrate the database to the current schema before creating the token (default: "
    "yes for the embedded database, which is this user's own; no for a configured "
    "EMERGENT_MEMORY_DATABASE_URL).",
)
@click.pass_obj
@reports_errors
def hooks_install(
    settings: Settings,
    scope: str,
    dry_run: bool,
    no_settings: bool,
    url: str | None,
    token: str | None,
    migrate: bool | None,
) -> None:
    """Add the hooks to Claude Code's settings and write the hooks file (URL, token).

    Idempotent: a second install changes nothing. Keeps every other setting and hook,
    backs the previous settings file up beside it, and refuses a file that is not valid
    JSON.
    """
    path = settings_path(scope)
    before = {} if no_settings else _read(path)
    after = before if no_settings else claude_settings.with_our_hooks(before, hook_program())
    environ = _environ(settings)
    hooks_file = hooks_file_path(environ)
    try:
        stored = read_hooks_file(hooks_file) or {}
    except ConfigProblem as problem:
        click.echo(f"note: {problem}; it is rewritten", err=True)
        stored = {}
    url = url or settings.hook_url or _text(stored.get("url")) or DEFAULT_URL
    if not url.startswith(("http://", "https://")):
        fail(f"--url must start with http:// or https:// (got {url!r})")
    url = url.rstrip("/")
    if dry_run:
        if not no_settings:
            changes = _diff(path, before, after) if after != before else ""
            click.echo(changes or f"{path}: no change (the hooks are installed)")
        how = (
            "the given token"
            if token
            else (
                "its token if it is still valid, else a new token"
                if stored.get("token")
                else "a new token"
            )
        )
        click.echo(f"would write {hooks_file} (mode 0600): url {url}, {how}")
        return
    local = identity(settings, None, None).principal
    token_note = "given"  # noqa: S105 - a description, not a secret
    if token is None:
        if migrate is None:
            migrate = settings.database_url is None
        token, token_note = _hook_token(settings, _text(stored.get("token")), local, migrate)
    content = {
        "url": url,
        "token": token,
        "start_command": stored.get("start_command"),
        "log_file": stored.get("log_file"),
    }
    if content != stored:
        write_hooks_file(hooks_file, content)
    backup = None
    if after != before:
        backup = claude_settings.write_settings(path, after)
    if not no_settings:
        where = f" (the previous file is kept as {backup})" if backup else ""
        done = "installed" if after != before else "already installed (nothing changed)"
        click.echo(f"hooks {done} in {path}{where}: {', '.join(EVENTS)}")
    click.echo(f"hooks file {hooks_file}: server {url}, token {token[:12]}... ({token_note})")
    click.echo(
        "start the server with `emergent-memory serve --transport http` (SessionStart "
        "starts it when it is not running on this machine)"
    )


def _capture_status(settings: Settings, url: str) -> dict[str, Any]:
    """What the server at `url` last told the hooks of capture ("on", "off"; None: no hook
    has heard it yet) and since when, and the sessions whose turns wait to be sent."""
    said = remembered_capture(settings.data_dir)
    known = said is not None and said["url"] == url
    since = said["since"] if known and said is not None else None
    waiting = unsent_counts(settings.data_dir)
    return {
        "capture": said["capture"] if known and said is not None else None,
        "capture_since": None
        if not isinstance(since, int | float)
        else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since)),
        "unsent_sessions": sum(waiting.values()),
        "unsent_projects": len(waiting),
    }


def _capture_line(data: dict[str, Any]) -> str:
    if data["capture"] == "off":
        return (
            f"off (the server has said so since {data['capture_since']}): memories are saved "
            "only when the agent calls save_memory; the hooks keep the turns and send them "
            "once capture is on"
        )
    if data["capture"] == "on":
        return f"on (the server has said so since {data['capture_since']})"
    return "not known yet (no hook has heard the server say)"


def _unsent_line(data: dict[str, Any]) -> str:
    sessions, projects = data["unsent_sessions"], data["unsent_projects"]
    if not sessions:
        return "none: every session's turns were sent"
    return (
        f"{sessions} session(s) of {projects} project(s) wait to be sent: the next session "
        "start (capture on) or Stop in their project sends them"
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _hook_token(
    settings: Settings, stored: str | None, local: Principal, migrate: bool
) -> tuple[str, str]:
    """The hooks file's token while it is live, of the local actor, with the hooks' scopes;
    else a new one."""
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings, migrate=migrate) as admin:
        if stored is not None:
            info = admin.tokens.verify(stored)
            if (
                info is not None
                and info.actor_id == local.actor_id
                and set(HOOK_SCOPES) <= set(info.scopes)
            ):
                return stored, f"kept, token {info.id}"
        new = admin.tokens.create(
            name=f"claude-code hooks ({local_user()})",
            actor_id=local.actor_id,
            project_id=local.project_id,
            scopes=HOOK_SCOPES,
        )
    return new.token, (
        f"new token {new.info.id} of actor {local.actor_id}, scopes {' '.join(HOOK_SCOPES)}"
    )


@hooks.command("uninstall")
@SCOPE_OPTION
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@reports_errors
def hooks_uninstall(scope: str, dry_run: bool) -> None:
    """Remove our hooks (and only ours) from Claude Code's settings, with a backup.

    The hooks file and its token stay (another scope may use them): `emergent-memory token
    revoke` ends the token.
    """
    path = settings_path(scope)
    before = _read(path)
    after = claude_settings.without_our_hooks(before)
    if after == before:
        click.echo(f"{path}: no emergent-memory hooks; nothing changed")
        return
    if dry_run:
        click.echo(_diff(path, before, after))
        return
    backup = claude_settings.write_settings(path, after)
    click.echo(
        f"removed the emergent-memory hooks from {path} (the previous file is kept as {backup})"
    )


@hooks.command("status")
@JSON_OPTION
@click.pass_obj
@reports_errors
def hooks_status(settings: Settings, as_json: bool) -> None:
    """Where the hooks are installed, the hooks file, whether the server answers, whether
    capture is on (as the server last told the hooks), the turns waiting to be sent, the
    logs."""
    environ = _environ(settings)
    hooks_file = hooks_file_path(environ)
    problem = None
    try:
        stored = read_hooks_file(hooks_file)
    except ConfigProblem as error:
        stored, problem = None, str(error)
    url = settings.hook_url or _text((stored or {}).get("url")) or DEFAULT_URL
    token = (settings.hook_token.get_secret_value() if settings.hook_token else None) or _text(
        (stored or {}).get("token")
    )
    try:
        answering = Server.from_url(url).healthy(2.0)
    except ValueError:
        answering = False
    installed = {}
    for scope in ("project", "user"):
        path = settings_path(scope)
        try:
            events = claude_settings.our_events(claude_settings.read_settings(path))
        except SettingsFileError as error:
            events, problem = {}, problem or str(error)
        installed[scope] = {"settings": str(path), "events": sorted(events)}
    data = {
        "installed": installed,
        "hooks_file": str(hooks_file),
        "hooks_file_exists": stored is not None,
        "problem": problem,
        "url": url,
        "token": None if token is None else token[:12] + "...",
        "server_answering": answering,
        **_capture_status(settings, url),
        "hooks_log": _text((stored or {}).get("log_file")) or str(default_log_file(environ)),
        "server_log": str(server_log_path(settings.data_dir)),
    }

    def human() -> None:
        for scope, found in installed.items():
            events = ", ".join(found["events"]) or "not installed"
            click.echo(f"{scope:8} {found['settings']}: {events}")
        state = "present" if stored is not None else "missing (run emergent-memory hooks install)"
        click.echo(f"hooks file {hooks_file}: {state}")
        if problem:
            click.echo(f"problem: {problem}")
        click.echo(f"server   {url}: {'answering' if answering else 'not answering'}")
        click.echo(f"token    {data['token'] or 'none'}")
        click.echo(f"capture  {_capture_line(data)}")
        click.echo(f"unsent   {_unsent_line(data)}")
        click.echo(
            f"logs     {data['hooks_log']} (hooks), {data['server_log']} (a server the "
            "hooks started)"
        )

    emit(data, as_json, human)
