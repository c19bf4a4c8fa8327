"""`emergent-memory import --from claude-code [DIR]`: Claude Code's auto memory as memories.

Without DIR, every project folder under `<Claude's config dir>/projects/` that has a
`memory/` folder; with DIR (relative to the working directory, or absolute), that memory
folder (or the project folder holding it). Each folder is imported whole
(AutoMemoryImport.import_folder with `complete` and the folder's `origin`: a file imported
before from this machine's folder and gone now forgets its memory; the same folder's files
imported on another machine are not this folder's), as the local user, in the folder's
project: the project id is derived from the directory its session transcripts record (`cwd`), as the
stdio server and the hooks derive it for a session there, unless EMERGENT_MEMORY_PROJECT_ID
sets one project for every session, as it does for them. A folder whose directory no
transcript records has its project-typed files skipped (or given with --project-dir).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.auth.local_ids import derived_project_id, project_root
from emergent_memory.cli.common import cli_principal, emit
from emergent_memory.errors import InvalidInput
from emergent_memory.hooks import auto_memory_files as files_on_disk

if TYPE_CHECKING:
    from emergent_memory.auth.principal import Principal
    from emergent_memory.memory.auto_memory_import import AutoMemoryImport, FolderReport
    from emergent_memory.settings import Settings

AUTO_MEMORY_SETTING = "autoMemoryEnabled"
# Claude Code has git ignore the file when it creates it; when we create it, nothing does
NEW_SETTINGS_FILE = "a new file: add .claude/settings.local.json to .gitignore"
UNKNOWN_PROJECT = (
    "project-typed, and the folder's project is unknown: no session transcript beside it "
    "records the project's directory (give it: import --from claude-code DIR --project-dir PATH)"
)


def import_claude_code(
    settings: Settings,
    path: str | None,
    dry_run: bool,
    project_dir: Path | None,
    migrate: bool,
    as_json: bool,
    *,
    replace: bool = False,
) -> None:
    from emergent_memory.app import open_auto_memory_import

    folders = memory_folders(path)
    if project_dir is not None and path is None:
        raise InvalidInput("--project-dir needs DIR: the one memory folder it is the project of")
    base = cli_principal(settings, None, None)
    with open_auto_memory_import(settings, migrate=migrate) as importer:
        reports = [
            import_folder(importer, settings, base, project, memory, project_dir, dry_run)
            for project, memory in folders
        ]
    if replace:
        for report in reports:
            report["auto_memory"] = replace_auto_memory(report)
    emit(reports, as_json, lambda: show(reports))


def memory_folders(path: str | None) -> list[tuple[Path, Path]]:
    """(project folder, memory folder) pairs to import. Raises InvalidInput."""
    if path is not None:
        found = files_on_disk.locate(resolved(path))
        if found is None:
            raise InvalidInput(
                f"{path} is neither a Claude Code memory folder (a folder named memory) nor a "
                "project folder holding one (~/.claude/projects/<project>/)"
            )
        return [found]
    config_dir = files_on_disk.claude_config_dir(os.environ)
    folders = files_on_disk.project_folders(config_dir)
    if not folders:
        raise InvalidInput(
            f"no Claude Code memory folder under {config_dir / 'projects'} (set "
            "CLAUDE_CONFIG_DIR, or give the folder: import --from claude-code DIR)"
        )
    return [(folder, folder / files_on_disk.MEMORY_FOLDER) for folder in folders]


def resolved(path: str) -> Path:
    """The absolute path DIR names (`.`, `memory`, `~/...` and `..` resolved), its last part
    kept as it is: a memory folder that is a symbolic link stays one (read_note skips it)."""
    given = Path(os.path.abspath(Path(path).expanduser()))
    return given.parent.resolve() / given.name if given.name else given


def import_folder(
    importer: AutoMemoryImport,
    settings: Settings,
    base: Principal,
    project_folder: Path,
    memory_folder: Path,
    project_dir: Path | None,
    dry_run: bool,
) -> dict[str, Any]:
    """Import one folder; its report, with the directory its project came from."""
    from emergent_memory.auth.principal import Principal
    from emergent_memory.memory.auto_memory_import import FolderFile

    directory = str(project_dir.resolve()) if project_dir else None
    directory = directory or files_on_disk.recorded_cwd(project_folder)
    problem = None
    if settings.project_id is not None:
        project = settings.project_id
    elif directory is not None:
        project = derived_project_id(project_root(Path(directory)))
    else:
        project, problem = base.project_id, UNKNOWN_PROJECT
    files = []
    for name in files_on_disk.note_names(memory_folder):
        text, unreadable = files_on_disk.read_note(memory_folder / name)
        files.append(FolderFile(name, text, unreadable))
    report: FolderReport = importer.import_folder(
        Principal(base.actor_id, project, base.scopes),
        project_folder.name,
        files,
        origin=files_on_disk.origin(project_folder),
        complete=True,
        project_problem=problem,
        dry_run=dry_run,
    )
    return {**report, "directory": directory, "memory_folder": str(memory_folder)}


def show(reports: list[dict[str, Any]]) -> None:
    """The reports for a person: per folder, one line per file and the totals."""
    for report in reports:
        where = report["directory"] or "directory unknown"
        click.echo(f"{plain(report['folder'])}  project {report['project_id']} ({plain(where)})")
        for outcome in report["files"]:
            kind = (
                f"{outcome['category']}/{outcome['scope']}"
                if "category" in outcome and outcome["status"] != "skipped"
                else ""
            )
            memory = outcome.get("memory_id", "")[:8]
            line = f"  {outcome['status']:<9} {plain(outcome['file']):<32} {kind:<20} {memory}"
            click.echo(line.rstrip())
            if "reason" in outcome:
                click.echo(f"            {plain(outcome['reason'])}")
        counts = report["counts"]
        total = ", ".join(f"{counts[status]} {status}" for status in counts)
        click.echo(f"  {total}; {report['links']} links")
        replaced = report.get("auto_memory")
        if replaced is not None:
            click.echo(f"  Claude Code's auto memory: {plain(replaced['note'])}")
    if reports and reports[0]["dry_run"]:
        click.echo("dry run: nothing was written")


def replace_auto_memory(report: dict[str, Any]) -> dict[str, Any]:
    """--replace-auto-memory for one imported folder: autoMemoryEnabled false in the project's
    .claude/settings.local.json (everything else kept, the previous file backed up), only
    when every file of the folder was imported (none skipped: its note would be lost from
    both memories) and the project's directory is known. {"turned_off", "settings", "backup",
    "note"}."""
    from emergent_memory.hooks.claude_settings import (
        SettingsFileError,
        read_settings,
        write_settings,
    )

    directory = report["directory"]
    result: dict[str, Any] = {"turned_off": False, "settings": None, "backup": None}
    skipped = report["counts"]["skipped"]
    if directory is None or not Path(directory).is_dir():
        return result | {"note": "left on: the project's directory is unknown or gone"}
    path = Path(directory) / ".claude" / "settings.local.json"
    result["settings"] = str(path)
    if skipped:
        return result | {"note": f"left on: {skipped} file(s) skipped; fix them and import again"}
    try:
        current = read_settings(path)
    except SettingsFileError as error:
        return result | {"note": f"left on: {error}"}
    if current.get(AUTO_MEMORY_SETTING) is False:
        return result | {"turned_off": True, "note": f"off already in {path}"}
    if report["dry_run"]:
        return result | {"note": f"would be turned off in {path}"}
    backup = write_settings(path, current | {AUTO_MEMORY_SETTING: False})
    result |= {"turned_off": True, "backup": None if backup is None else str(backup)}
    kept = f" (previous file: {backup})" if backup is not None else f" ({NEW_SETTINGS_FILE})"
    return result | {"note": f"turned off in {path}{kept}"}


def plain(text: str) -> str:
    """Text as a terminal may show it: control characters as `?`."""
    return "".join(character if character.isprintable() else "?" for character in text)
