"""`emergent-memory export` and `import`: everything the database holds, as JSON Lines."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
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
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True, exists=False))
@MIGRATE_OPTION
@JSON_OPTION
@click.pass_obj
@reports_errors
def import_command(settings: Settings, path: str, migrate: bool, as_json: bool) -> None:
    """Load an export (JSON Lines), keeping ids; importing twice changes nothing."""
    from emergent_memory.app import open_admin_services

    with (
        open_admin_services(settings, migrate=migrate) as admin,
        click.open_file(path, "r", encoding="utf-8") as source,
    ):
        counts = admin.maintenance.import_records(_json_lines(source))
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
