"""`emergent-memory ui`: open the dashboard with a fresh one-time sign-in link for the local
user."""

from __future__ import annotations

import contextlib
import uuid
import webbrowser
from typing import TYPE_CHECKING

import click

from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.cli.common import ACTOR_OPTION, PROJECT_OPTION, cli, identity, reports_errors
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.memory.project_names import ProjectNames
    from emergent_memory.settings import Settings

DEFAULT_URL = "http://127.0.0.1:8765"
LINK_SECONDS = 120


@cli.command()
@click.option(
    "--url",
    default=DEFAULT_URL,
    show_default=True,
    help="Where `emergent-memory serve --transport http` listens.",
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=True,
    show_default=True,
    help="Open the link in the default browser (--no-open: only print it).",
)
@click.option("--read-only", is_flag=True, help="A session that may only read (scope memory:read).")
@ACTOR_OPTION
@PROJECT_OPTION
@click.pass_obj
@reports_errors
def ui(
    settings: Settings,
    url: str,
    open_browser: bool,
    read_only: bool,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
) -> None:
    """Open the dashboard, signed in as the local user.

    Makes a sign-in link that works once, within two minutes (only its hash is stored),
    prints it and opens it in the browser. The server must be running:
    `emergent-memory serve --transport http`.
    """
    from emergent_memory.app import open_admin_services

    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise InvalidInput(f"--url must start with http:// or https://; got {url!r}")
    found = identity(settings, actor, project)
    local = found.principal
    # the local user's own projects are all theirs to look at: the header switches between them
    scopes = frozenset({READ, ANY_PROJECT} if read_only else {READ, WRITE, ANY_PROJECT})
    with open_admin_services(settings) as admin:
        if found.folder is not None and found.folder.name:
            _name_after_folder(admin.project_names, local, found.folder.name)
        link = admin.dashboard_links.create(
            Principal(local.actor_id, local.project_id, scopes),
            label="local user (emergent-memory ui)",
            lifetime_seconds=LINK_SECONDS,
        )
    address = f"{base}/ui/link/{link.secret}"
    click.echo(address)
    click.echo(
        f"a one-time sign-in link for actor {local.actor_id} in project {local.project_id}; "
        f"it works once, until {link.expires_at:%H:%M:%S %Z}",
        err=True,
    )
    if not _answers(base):
        click.echo(
            f"warning: no emergent-memory server answers at {base}; start it with "
            "`emergent-memory serve --transport http` (or pass its address with --url)",
            err=True,
        )
    if open_browser and not webbrowser.open(address):
        click.echo("could not open a browser: open the link above yourself", err=True)


def _name_after_folder(names: ProjectNames, local: Principal, folder: str) -> None:
    """Record the repository folder's name as the project's (a name the user gave on the
    dashboard stays); a folder name that cannot be one (too long, a credential) is left out."""
    with contextlib.suppress(InvalidInput):
        names.rename(local, folder, named_by="folder")


def _answers(base: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
