"""`emergent-memory export` and `import`: everything the database holds, as JSON Lines."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.cli.common import (
    JSON_OPTION,
    MIGRATE_OPTION,
    cli,
    emit,
    reports_errors,
)
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


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
    from emergent_memory.app import open_admin_services

    count = 0
    with (
        open_admin_services(settings) as admin,
        click.open_file(path, "w", encoding="utf-8") as out,
    ):
        for record in admin.maintenance.export(project_id=project, actor_id=actor):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    if path != "-":
        click.echo(f"exported {count} records to {path}", err=True)


@cli.command("import")
@click.argument("path", required=False, type=click.Path(allow_dash=True, exists=False))
@click.option(
    "--from",
    "source",
    type=click.Choice(["export", "claude-code"]),
    default="export",
    show_default=True,
    help="What PATH is: an export (JSON Lines), or Claude Code's auto memory (PATH: one "
    "memory folder or project folder; none: every project under ~/.claude/projects).",
)
@click.option(
    "--dry-run", is_flag=True, help="With --from claude-code: say what would happen, write nothing."
)
@click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="With --from claude-code and a PATH: the project's directory, when no session "
    "transcript beside the folder records it.",
)
@click.option(
    "--replace-auto-memory",
    is_flag=True,
    help="With --from claude-code: once a project's folder is imported whole, turn Claude "
    "Code's auto memory off for that project (autoMemoryEnabled false in its "
    ".claude/settings.local.json, with a backup), so that there is one memory.",
)
@MIGRATE_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def import_command(
    settings: Settings,
    path: str | None,
    source: str,
    dry_run: bool,
    project_dir: Path | None,
    replace_auto_memory: bool,
    migrate: bool,
    as_json: bool,
) -> None:
    """Load an export (JSON Lines, ids kept), or Claude Code's auto memory (--from claude-code).

    An export imported twice changes nothing. With --from claude-code, PATH is one memory
    folder or the project folder holding it (none: every project's), imported as
    docs/clients.md says.
    """
    if source == "claude-code":
        from emergent_memory.cli.auto_memory import import_claude_code

        import_claude_code(
            settings, path, dry_run, project_dir, migrate, as_json, replace=replace_auto_memory
        )
        return
    if dry_run or project_dir is not None or replace_auto_memory:
        raise InvalidInput(
            "--dry-run, --project-dir and --replace-auto-memory go with --from claude-code only"
        )
    if path is None:
        raise InvalidInput(
            "give the export to import (a JSON Lines file, - for stdin), or --from claude-code"
        )
    if path != "-" and Path(path).is_dir():
        raise InvalidInput(
            f"{path} is a folder: an export is one JSON Lines file; to import Claude Code's "
            "memory folder, add --from claude-code"
        )
    from emergent_memory.app import open_admin_services

    with (
        open_admin_services(settings, migrate=migrate) as admin,
        click.open_file(path, "r", encoding="utf-8") as source_file,
    ):
        counts = admin.maintenance.import_records(_json_lines(source_file))
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
