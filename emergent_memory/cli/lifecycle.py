"""`emergent-memory lifecycle archive`: the archive job of every actor's memories, run now
(what the worker runs every EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS), or a dry run of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from emergent_memory.cli.common import JSON_OPTION, cli, emit, reports_errors

if TYPE_CHECKING:
    from emergent_memory.memory.lifecycle import ArchiveReport
    from emergent_memory.settings import Settings


@cli.group()
def lifecycle() -> None:
    """The memory lifecycle's jobs, as an administrator (every actor's memories)."""


@lifecycle.command("archive")
@click.option("--dry-run", is_flag=True, help="Report what would be archived; change nothing.")
@click.option(
    "--after-days",
    "--older-than",
    "after_days",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Unused for at least this many days (default: EMERGENT_MEMORY_ARCHIVE_AFTER_DAYS).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Archive at most this many."
)
@JSON_OPTION
@click.pass_obj
@reports_errors
def archive(
    settings: Settings,
    dry_run: bool,
    after_days: float | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Archive the memories of low importance and low confidence that nobody used for long
    (never high or core ones, never global ones, never a deletion: restore brings them back).

    Runs as the database's owner (or a member of emergent_memory_admin), like the worker's
    job. Prints each memory's id, owner, category, importance, effective confidence and idle
    days, never its content.
    """
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings) as admin:
        report = admin.lifecycle.archive(dry_run=dry_run, after_days=after_days, limit=limit)
    emit(report, as_json, lambda: _show(report))


def _show(report: ArchiveReport) -> None:
    from emergent_memory.memory.lifecycle import summary

    memories = report["memories"]
    if not memories:
        click.echo("nothing to archive" + (" (dry run)" if report["dry_run"] else ""))
        return
    click.echo(f"{'memory':36}  {'actor':36}  {'category':11}  importance  confidence  idle")
    for memory in memories:
        click.echo(
            f"{memory['id']:36}  {memory['actor_id']:36}  {memory['category']:11}  "
            f"{memory['importance']:10}  {memory['effective_confidence']:10.2f}  "
            f"{memory['idle_days']:>4}d"
        )
    click.echo(summary(report))
