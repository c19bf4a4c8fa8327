"""`emergent-memory token`: create, list and revoke the HTTP server's API tokens."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.auth.principal import READ, SCOPES, WRITE
from emergent_memory.cli.common import (
    ACTOR_OPTION,
    JSON_OPTION,
    PROJECT_OPTION,
    cli,
    emit,
    identity,
    reports_errors,
)
from emergent_memory.cli.output import Cell, Styled, cell, output_options, screen
from emergent_memory.memory.lines import SHORT_ID, one_line

if TYPE_CHECKING:
    from emergent_memory.auth.service import TokenInfo
    from emergent_memory.settings import Settings


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
    type=click.Choice(list(SCOPES)),
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
    from emergent_memory.app import open_admin_services

    local = identity(settings, actor, project).principal
    with open_admin_services(settings) as admin:
        new = admin.tokens.create(
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
            f"token {new.info.id} ({one_line(new.info.name)}) for actor {new.info.actor_id} in "
            f"project {new.info.project_id}, scopes {' '.join(new.info.scopes)}; it is shown only "
            "once: store it now",
            err=True,
        )

    emit(data, as_json, human)


@token.command("list")
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def token_list(settings: Settings, as_json: bool) -> None:
    """List tokens (never the tokens themselves): each token's id (what `token revoke`
    takes), the first characters of the token, whether it is active, when it expires, the
    first characters of its actor's and project's ids, its scopes and its name."""
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings) as admin:
        infos = admin.tokens.list()

    def human() -> None:
        if not infos:
            click.echo("no tokens")
            return
        out = screen()
        rows: list[list[Cell]] = [
            [
                Styled(str(info.id), "yellow"),
                f"{info.token_prefix}...",
                Styled("revoked", "red") if info.revoked_at else Styled("active", "green"),
                f"{info.expires_at:%Y-%m-%d}" if info.expires_at else "never",
                str(info.actor_id)[:SHORT_ID],
                str(info.project_id)[:SHORT_ID],
                " ".join(info.scopes),
                cell(info.name),
            ]
            for info in infos
        ]
        headers = ("ID", "PREFIX", "STATE", "EXPIRES", "ACTOR", "PROJECT", "SCOPES", "NAME")
        out.show(out.table(headers, rows))

    emit([_token_json(info) for info in infos], as_json, human)


@token.command("revoke")
@click.argument("token_id", type=click.UUID)
@click.pass_obj
@reports_errors
def token_revoke(settings: Settings, token_id: uuid.UUID) -> None:
    """Revoke a token at once, for good."""
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings) as admin:
        info = admin.tokens.revoke(token_id)
    click.echo(f"revoked token {info.id} ({one_line(info.name)})")


def _token_json(info: TokenInfo) -> dict[str, Any]:
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
