"""Commands on your memories: save, recall, list, restore, forget, stats (verify, reinforce and
archive are in memory_lifecycle.py)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.cli.common import (
    ACTOR_OPTION,
    JSON_OPTION,
    MIGRATE_OPTION,
    PROJECT_OPTION,
    cli,
    cli_principal,
    emit,
    memory_service,
    reports_errors,
    whole_memory_id,
)
from emergent_memory.cli.memory_rows import describe_episode, memory_table
from emergent_memory.cli.output import Cell, Styled, cell, output_options, screen
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.models import (
    CATEGORIES,
    IMPORTANCES,
    LIST_STATUSES,
    SCOPES,
    SOURCES,
    Category,
    Importance,
    ListStatus,
    MemoryScope,
    Source,
)

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


@cli.command()
@click.argument("content")
@click.option("--category", "-c", required=True, type=click.Choice(list(CATEGORIES)))
@click.option("--source", type=click.Choice(list(SOURCES)), default="inferred", show_default=True)
@click.option("--scope", type=click.Choice(list(SCOPES)), default="user", show_default=True)
@click.option("--context", default=None, help="File it under this named context.")
@click.option("--related-to", "related_to", multiple=True, help="Id of a related object.")
@click.option(
    "--importance",
    type=click.Choice(list(IMPORTANCES)),
    default=None,
    help="normal when not given; core: given at every session start, never fades.",
)
@click.option("--evidence", default=None, help="A short quote or source that backs it.")
@click.option(
    "--valid-from", default=None, help="ISO 8601 date or date-time (UTC) from which it holds."
)
@click.option(
    "--valid-until", default=None, help="ISO 8601 date or date-time (UTC) when it stops holding."
)
@click.option("--rationale", default=None, help="Why (mainly for a decision).")
@click.option(
    "--supersede-reason",
    default=None,
    help="Why the fact changed, kept on the memory this one replaces (if it replaces one).",
)
@ACTOR_OPTION
@PROJECT_OPTION
@MIGRATE_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def save(
    settings: Settings,
    content: str,
    category: Category,
    source: Source,
    scope: MemoryScope,
    context: str | None,
    related_to: tuple[str, ...],
    importance: Importance | None,
    evidence: str | None,
    valid_from: str | None,
    valid_until: str | None,
    rationale: str | None,
    supersede_reason: str | None,
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
            importance=importance,
            evidence=evidence,
            valid_from=valid_from,
            valid_until=valid_until,
            rationale=rationale,
            supersede_reason=supersede_reason,
        )

    def human() -> None:
        restored = " (restored from the archive)" if result.get("restored") else ""
        click.echo(f"{result['status']}: {result['memory']['id']}{restored}")
        for old in result["superseded_ids"]:
            click.echo(f"  supersedes {old}")
        for close in result["possible_duplicates"]:
            what = "conflicts with" if close.get("conflict") else "kept beside"
            click.echo(
                f"  {what} {close['id']} (similarity {close['similarity']:.2f}): {close['content']}"
            )
            click.echo(f"    {close['why']}")
        if result["degraded"]:
            click.echo("  (stored without an embedding: the provider failed; a job is queued)")

    emit(result, as_json, human)


@cli.command()
@click.argument("query")
@click.option("--category", "-c", type=click.Choice(list(CATEGORIES)), default=None)
@click.option("--scope", type=click.Choice(list(SCOPES)), default=None)
@click.option("--limit", "-n", type=int, default=10, show_default=True)
@click.option(
    "--include-episodes",
    is_flag=True,
    help="Also search your captured conversations (episodes), listed apart.",
)
@click.option(
    "--session",
    "session_id",
    default=None,
    help="With --include-episodes: only the episodes of this client session.",
)
@click.option(
    "--include-archived", is_flag=True, help="Also search archived memories (left out by default)."
)
@click.option(
    "--as-of",
    default=None,
    help="ISO 8601 date or date-time: what was believed true then.",
)
@click.option("--min-relevance", type=float, help="Least relevance shown (0-1; lower: more).")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def recall(
    settings: Settings,
    query: str,
    category: Category | None,
    scope: MemoryScope | None,
    limit: int,
    include_episodes: bool,
    session_id: str | None,
    include_archived: bool,
    as_of: str | None,
    min_relevance: float | None,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Search memories by meaning and words (the recall_memories tool)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings) as service:
        result = service.recall(
            principal,
            query,
            category=category,
            scope=scope,
            limit=limit,
            include_episodes=include_episodes,
            session_id=session_id,
            include_archived=include_archived,
            as_of=as_of,
            min_relevance=min_relevance,
            # a one-shot process: checking the query for secrets would load the scanner's
            # patterns (about 0.1 s); its uses are recorded without the query
            keep_query=False,
        )

    def human() -> None:
        out = screen()
        lines = ["(full-text only: the embedding provider failed)"] if result["degraded"] else []
        if result["memories"]:
            ranks = {memory["id"]: rank for rank, memory in enumerate(result["memories"], 1)}
            ranked = (("#", "RELEVANCE"), lambda memory: _ranked(ranks[memory["id"]], memory))
            lines += memory_table(out, result["memories"], first=ranked)
        else:
            lines.append(
                f"nothing relevant (no memory reaches relevance {result['min_relevance']})"
            )
        if "episodes" in result:
            lines.append(f"{len(result['episodes'])} matching conversations")
            if result["episodes"]:
                lines += out.table(
                    ("#", "SCORE", "CONVERSATION"),
                    [
                        _episode_row(rank, episode)
                        for rank, episode in enumerate(result["episodes"], 1)
                    ],
                    [_episode_notes(episode) for episode in result["episodes"]],
                    note_column=2,
                )
        out.show(lines)

    emit(result, as_json, human)


@cli.command("list")
@click.option("--category", "-c", type=click.Choice(list(CATEGORIES)), default=None)
@click.option("--limit", "-n", type=int, default=20, show_default=True)
@click.option(
    "--status",
    type=click.Choice(list(LIST_STATUSES)),
    default="active",
    show_default=True,
    help="superseded, archived or deleted: the memories `restore` can bring back, newest first.",
)
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def list_command(
    settings: Settings,
    category: Category | None,
    limit: int,
    status: ListStatus,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """List your memories, most used first (manage_memory action list)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        result = service.list_memories(principal, category=category, limit=limit, status=status)

    def human() -> None:
        out = screen()
        lines = memory_table(out, result["memories"]) if result["memories"] else []
        lines.append(f"{result['count']} {'' if status == 'active' else status + ' '}memories")
        out.show(lines)

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
    """Make a superseded, archived or deleted memory active again (manage_memory restore).

    `emergent-memory list --status superseded` (or archived, or deleted) shows their ids;
    MEMORY_ID may be the short id it shows (at least 8 hex digits)."""
    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        result = service.restore(principal, whole_memory_id(service, principal, memory_id))

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
@click.option("--reason", default=None, help="Why it is deleted (kept with the memory).")
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
    reason: str | None,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Delete one memory, or with --all every memory you saved in this project.

    MEMORY_ID may be a short id, as `list` shows it (at least 8 hex digits)."""
    if (memory_id is None) == (not forget_all):
        raise InvalidInput("give either a memory id or --all")
    if forget_all and reason is not None:
        raise InvalidInput("--reason is kept with one deleted memory; give a memory id")
    principal = cli_principal(settings, actor, project)
    if forget_all and not yes:
        if not sys.stdin.isatty():
            raise InvalidInput("forget --all needs --yes when not run interactively")
        click.confirm(
            f"Delete every memory you saved in project {principal.project_id}?", abort=True
        )
    with memory_service(settings, embeds=False) as service:
        if memory_id is None:  # --all (checked above: one or the other)
            result: Any = service.forget_all(principal, confirm=True)
            message = f"deleted {result['deleted_count']} memories"
        else:
            whole = whole_memory_id(service, principal, memory_id)
            result = service.delete(principal, whole, reason=reason)
            message = f"deleted {result['deleted']}"
    emit(result, as_json, lambda: click.echo(message))


@cli.command()
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
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
        out = screen()
        lines = [
            f"actor {result['actor_id']}: {result['active']} active, {result['superseded']} "
            f"superseded, {result['archived']} archived, {result['deleted']} deleted"
        ]
        rows = [
            [
                Styled(row["project_id"], "yellow"),
                Styled("current", "green") if row["project_id"] == result["project_id"] else "",
                str(row["active"]),
                cell(", ".join(f"{n} {c}" for c, n in row["by_category"].items() if n)),
            ]
            for row in result["projects"]
        ]
        if rows:
            lines += out.table(("PROJECT", "", "ACTIVE", "BY CATEGORY"), rows)
        out.show(lines)

    emit(result, as_json, human)


def _ranked(rank: int, memory: Mapping[str, Any]) -> list[Cell]:
    return [str(rank), Styled(f"{memory['relevance']:.3f}", bold=True)]


def _episode_row(rank: int, episode: Mapping[str, Any]) -> list[Cell]:
    return [str(rank), f"{episode['score']:.4f}", cell(describe_episode(episode), "yellow")]


def _episode_notes(episode: Mapping[str, Any]) -> list[Cell]:
    said = [cell(episode["summary"])] if episode["summary"] else []
    return [*said, cell(f"> {' '.join(str(episode['excerpt']).split())}", dim=True)]
