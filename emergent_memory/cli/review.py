"""The review queue at the terminal: the pairs a save kept apart and asks a person about
(conflicts: another value of the same subject; possible duplicates), and a decision on each,
as the dashboard's duplicates page and the REST API's /duplicates do (DuplicateService).

A pair is named by its short id, as `review` shows it (at least 8 hex digits), or whole
(`--json`); `--keep` takes a memory's short id."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
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
from emergent_memory.cli.memory_rows import MEMORY_HEADERS, memory_cells
from emergent_memory.cli.output import Cell, Styled, cell, output_options, screen
from emergent_memory.memory.lines import short_ids

if TYPE_CHECKING:
    from emergent_memory.memory import MemoryService
    from emergent_memory.memory.duplicates import DuplicateService
    from emergent_memory.settings import Settings

KEEP_HELP = "The memory that stays: its short id (as `review` shows it) or whole id."


@cli.group(invoke_without_command=True)
@click.pass_context
def review(ctx: click.Context) -> None:
    """The conflicts and possible duplicates waiting for your decision, and a decision on
    each: keep-both, supersede, merge, undo.

    `review` alone is `review list`."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(review_list)


@review.command("list")
@click.option("--limit", "-n", type=int, default=None, help="Pairs per page (1 to 200; 50).")
@click.option("--cursor", default=None, help="The next page: the cursor --json gave.")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def review_list(
    settings: Settings,
    limit: int | None,
    cursor: str | None,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """The pairs waiting for your decision, newest first: each pair's two memories (the newer
    first), whether they conflict (another value of the same subject) or may say the same,
    and why the save kept both. Read-only."""
    principal = cli_principal(settings, actor, project)
    with queue(settings) as (_, duplicates):
        found = duplicates.open(principal, cursor=cursor, limit=limit)
    emit(found, as_json, lambda: _show(found["pairs"], found["next_cursor"]))


def _on_a_pair(name: str) -> Callable[[Callable[..., None]], click.Command]:
    """A decision's command: PAIR, the actor and project, --json, errors as one line."""

    def command(function: Callable[..., None]) -> click.Command:
        for option in (reports_errors, click.pass_obj, JSON_OPTION, PROJECT_OPTION, ACTOR_OPTION):
            function = option(function)
        return review.command(name)(click.argument("pair")(function))

    return command


@_on_a_pair("keep-both")
def keep_both(settings: Settings, pair: str, **common: Any) -> None:
    """Both memories are true: both stay active, and a conflict between them is removed, so
    neither is outranked any more. `review undo` takes it back.

    PAIR is a pair's short id, as `review` shows it (at least 8 hex digits), or whole."""
    _decide(settings, pair, "keep_both", **common)


@_on_a_pair("supersede")
@click.option("--keep", required=True, help=KEEP_HELP)
def supersede(settings: Settings, pair: str, keep: str, **common: Any) -> None:
    """The memory --keep names stays; the pair's other memory is superseded by it (newer
    wins or older wins). `review undo` restores the other.

    PAIR is a pair's short id, as `review` shows it (at least 8 hex digits), or whole."""
    _decide(settings, pair, "supersede", keep=keep, **common)


@_on_a_pair("merge")
@click.option("--keep", required=True, help=KEEP_HELP)
@click.option(
    "--content", default=None, help="The merged text, a new version of --keep (default: its own)."
)
def merge(settings: Settings, pair: str, keep: str, content: str | None, **common: Any) -> None:
    """The memory --keep names gets --content (the merged text, with an update's checks) as a
    new version, then supersedes the pair's other memory.

    PAIR is a pair's short id, as `review` shows it (at least 8 hex digits), or whole."""
    _decide(settings, pair, "merge", keep=keep, content=content, **common)


@_on_a_pair("undo")
def undo(
    settings: Settings,
    pair: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Take a keep-both or supersede decision back: the pair waits again (a conflict link
    keep-both removed is made again; the memory a supersede replaced is restored). A merge is
    not undone here: `restore` the memory it superseded, and restore the kept memory's earlier
    version on its page in the dashboard.

    PAIR is a pair's short id, as `review` shows it (at least 8 hex digits), or whole."""
    principal = cli_principal(settings, actor, project)
    with queue(settings) as (_, duplicates):
        undone = duplicates.undo(principal, duplicates.resolve_pair_id(principal, pair, "PAIR"))

    def human() -> None:
        done = f"pair {undone['id']} waits for a decision again ({undone['undone']} undone)"
        if undone["restored_id"]:
            done += f"; restored {undone['restored_id']}"
        if undone["relinked"]:
            done += "; the two conflict again"
        click.echo(done)

    emit(undone, as_json, human)


def _decide(
    settings: Settings,
    pair: str,
    decision: str,
    *,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
    keep: str | None = None,
    content: str | None = None,
) -> None:
    principal = cli_principal(settings, actor, project)
    with queue(settings, embeds=decision == "merge") as (memory, duplicates):
        pair_id = duplicates.resolve_pair_id(principal, pair, "PAIR")
        kept = None if keep is None else whole_memory_id(memory, principal, keep)
        decided = duplicates.decide(principal, pair_id, decision, kept, content)

    def human() -> None:
        if decision == "keep_both":
            click.echo(f"kept both of pair {decided['id']}")
            return
        gone = ", ".join(decided["superseded_ids"]) or "nothing"
        click.echo(f"{decision} pair {decided['id']}: kept {decided['kept_id']}, superseded {gone}")

    emit(decided, as_json, human)


@contextmanager
def queue(
    settings: Settings, *, embeds: bool = False
) -> Iterator[tuple[MemoryService, DuplicateService]]:
    """The memory service opened for the command, and the review queue's service on it."""
    from emergent_memory.app import duplicate_service

    with memory_service(settings, embeds=embeds) as memory:
        yield memory, duplicate_service(memory)


def _show(pairs: Sequence[Mapping[str, Any]], next_cursor: str | None) -> None:
    out = screen()
    if not pairs:
        click.echo("Nothing waits for a decision.")
        return
    now = datetime.now(UTC)
    pair_ids = short_ids([pair["id"] for pair in pairs])
    memories = short_ids(list(_memory_ids(pairs)))
    rows: list[list[Cell]] = []
    notes: list[list[Cell]] = []
    for pair in pairs:
        kind = Styled("conflict", "red") if pair["conflict"] else Styled("duplicate?", "yellow")
        newer, older = pair["memory"], pair["duplicate_of"]
        rows.append(
            [
                Styled(pair_ids[pair["id"]], "yellow", bold=True),
                kind,
                f"{pair['similarity']:.2f}",
                *memory_cells(newer, memories[newer["id"]], now),
            ]
        )
        notes.append([])
        rows.append(["", "", "", *memory_cells(older, memories[older["id"]], now)])
        notes.append([cell(f"why: {pair['why']}", dim=True)])
    headers = ["PAIR", "KIND", "SIMILARITY", "ID", *MEMORY_HEADERS]
    lines = out.table(headers, rows, notes, 3)
    more = "; more with --cursor (see --json)" if next_cursor else ""
    counted = f"{len(pairs)} pair{'' if len(pairs) == 1 else 's'}{more}"
    lines.append(
        f"{counted}. Decide: review keep-both PAIR, review supersede PAIR --keep ID, "
        "review merge PAIR --keep ID [--content TEXT]; review undo PAIR."
    )
    out.show(lines)


def _memory_ids(pairs: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for pair in pairs:
        yield str(pair["memory"]["id"])
        yield str(pair["duplicate_of"]["id"])
