"""Commands of a memory's lifecycle: verify a claim against your memories, reinforce a memory
with evidence, archive one (restore and forget are in memory.py)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.cli.common import (
    ACTOR_OPTION,
    JSON_OPTION,
    PROJECT_OPTION,
    cli,
    cli_principal,
    emit,
    memory_service,
    reports_errors,
    whole_memory_id,
)
from emergent_memory.cli.memory_rows import memory_notes, memory_table
from emergent_memory.cli.output import Cell, cell, output_options, screen
from emergent_memory.memory.models import CATEGORIES, SCOPES, Category, MemoryScope
from emergent_memory.memory.verify_result import VERIFY_DEFAULT_LIMIT

VERDICT_COLOURS = {"confirmed": "green", "related": "yellow", "conflict": "red", "new": "cyan"}

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


@cli.command()
@click.argument("claim")
@click.option("--category", "-c", type=click.Choice(list(CATEGORIES)), default=None)
@click.option("--scope", type=click.Choice(list(SCOPES)), default=None)
@click.option("--limit", "-n", type=int, default=VERIFY_DEFAULT_LIMIT, show_default=True)
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def verify(
    settings: Settings,
    claim: str,
    category: Category | None,
    scope: MemoryScope | None,
    limit: int,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Check a claim against your memories: confirmed, related, conflict or new (the
    verify_memory tool). Read-only."""
    from emergent_memory.app import verify_service

    principal = cli_principal(settings, actor, project)
    with memory_service(settings) as memory, verify_service(settings, memory) as service:
        result = service.verify(principal, claim, category=category, scope=scope, limit=limit)

    def human() -> None:
        out = screen()
        judge = (
            " (degraded: the embedding model was unavailable, only words were compared)"
            if result["degraded"]
            else ""
        )
        verdict = cell(
            f"{result['verdict']}: {result['why']}{judge}",
            VERDICT_COLOURS.get(result["verdict"]),
            bold=True,
        )
        lines = [out.style(verdict)]
        if result["matches"]:
            lines += memory_table(
                out,
                result["matches"],
                first=(("RELATION", "SIMILARITY"), _relation),
                notes=_match_notes,
            )
        out.show(lines)

    emit(result, as_json, human)


@cli.command()
@click.argument("memory_id")
@click.option("--evidence", required=True, help="A short quote, or where you saw it confirmed.")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def reinforce(
    settings: Settings,
    memory_id: str,
    evidence: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Record evidence that a memory is still true (manage_memory action reinforce).

    MEMORY_ID may be a short id, as `list` shows it (at least 8 hex digits)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        whole = whole_memory_id(service, principal, memory_id)
        result = service.reinforce(principal, whole, evidence)

    def human() -> None:
        change = (
            f"confidence {result['confidence_before']:.3f} -> {result['confidence_after']:.3f}"
            if result["independent"]
            else f"confidence stays {result['confidence_after']:.3f}: this evidence was "
            "already recorded"
        )
        restored = " (restored from the archive)" if result["restored"] else ""
        click.echo(
            f"reinforced {result['memory']['id']}{restored}: {change}; "
            f"{result['evidence_count']} pieces of evidence"
        )

    emit(result, as_json, human)


@cli.command()
@click.argument("memory_id")
@click.option("--reason", default=None, help="Why it is archived (kept with the memory).")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def archive(
    settings: Settings,
    memory_id: str,
    reason: str | None,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Take a memory out of recall without deleting it (manage_memory action archive);
    `restore` brings it back.

    MEMORY_ID may be a short id, as `list` shows it (at least 8 hex digits)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        whole = whole_memory_id(service, principal, memory_id)
        result = service.archive(principal, whole, reason=reason)
    emit(result, as_json, lambda: click.echo(f"archived {result['memory']['id']}"))


def _relation(match: Mapping[str, Any]) -> list[Cell]:
    return [cell(match["relation"], bold=True), f"{match['similarity']:.2f}"]


def _match_notes(match: Mapping[str, Any], shown: Mapping[str, str]) -> list[Cell]:
    return [cell(match["why"], dim=True), *memory_notes(match, shown)]
