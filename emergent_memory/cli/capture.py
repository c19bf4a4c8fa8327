"""`emergent-memory capture`: try automatic capture on a conversation without saving
(--dry-run FILE), see the capture queue (status), revive dead windows (retry)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.cli.common import (
    ACTOR_OPTION,
    JSON_OPTION,
    PROJECT_OPTION,
    cli,
    cli_principal,
    emit,
    reports_errors,
)
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.memory.capture import CapturedMessage
    from emergent_memory.settings import Settings

SYMBOLS = {"add": "+", "reinforce": "=", "supersede": ">", "none": ".", "drop": "-"}


@cli.group(invoke_without_command=True)
@click.option(
    "--dry-run",
    "dry_run",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A Claude Code transcript (JSONL) or a JSON list of {role, content} messages: show "
    "what capture would save from it, saving and storing nothing.",
)
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@click.pass_context
@reports_errors
def capture(
    ctx: click.Context,
    dry_run: Path | None,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Automatic capture of conversations (docs/automatic-memory.md).

    The server captures what hooks and clients send it, once an Anthropic API key is set
    (EMERGENT_MEMORY_ANTHROPIC_API_KEY). --dry-run FILE runs the gate and extractor models on
    a conversation and prints what would be saved (and which existing memory it would
    reinforce or supersede) for the actor and project (--actor/--project, or the derived
    defaults); it saves nothing and stores nothing, but the models' tokens are spent.
    """
    from emergent_memory.app import open_capture_service

    if ctx.invoked_subcommand is not None:
        if dry_run is not None:
            raise InvalidInput("--dry-run runs on its own: drop the command after it")
        return
    if dry_run is None:
        raise InvalidInput(
            "say what to do: capture --dry-run FILE, capture status or capture retry"
        )
    settings: Settings = ctx.obj
    messages = read_conversation(dry_run)
    principal = cli_principal(settings, actor, project)
    with open_capture_service(settings) as service:
        result = service.dry_run(principal, messages)
    emit(result, as_json, lambda: _show_dry_run(result))


@capture.command("status")
@JSON_OPTION
@click.pass_obj
@reports_errors
def capture_status(settings: Settings, as_json: bool) -> None:
    """The capture queue of every actor: windows per status, dead windows with the reason,
    and today's (UTC) model calls and tokens per model."""
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings) as admin:
        status = admin.capture.status()
    data = {"capture": "on" if settings.anthropic_api_key is not None else "off", **status}
    emit(data, as_json, lambda: _show_status(data))


@capture.command("retry")
@JSON_OPTION
@click.pass_obj
@reports_errors
def capture_retry(settings: Settings, as_json: bool) -> None:
    """Give dead capture windows a new set of attempts (after fixing what killed them); not
    those whose turns were deleted after EMERGENT_MEMORY_CAPTURE_DEAD_RETENTION_DAYS."""
    from emergent_memory.app import open_admin_services

    with open_admin_services(settings) as admin:
        revived = admin.capture.retry_dead()
    emit({"revived": revived}, as_json, lambda: click.echo(f"{revived} dead windows revived"))


def read_conversation(path: Path) -> list[CapturedMessage]:
    """The messages of a file: a JSON list of {role, content}, or a Claude Code transcript
    (JSONL), converted as the hooks convert it; checked as capture checks what it receives."""
    from emergent_memory.hooks.transcript import entry_messages
    from emergent_memory.memory.capture import checked_messages

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    messages: list[object] = []
    if isinstance(whole, list):
        messages = whole
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise InvalidInput(
                    f"{path}: line {number} is not JSON; give a Claude Code transcript (JSONL) "
                    "or a JSON list of {role, content} messages"
                ) from None
            messages.extend(entry_messages(entry))
    if not messages:
        raise InvalidInput(f"{path}: no message found in it")
    try:
        return checked_messages(messages)
    except InvalidInput as error:
        raise InvalidInput(f"{path}: {error}") from None


def _show_dry_run(result: Mapping[str, Any]) -> None:
    for window in result["windows"]:
        span = f"turns {window['first_turn']}-{window['end_turn'] - 1}"
        if not window["worth_remembering"]:
            click.echo(f"{span}: nothing worth remembering ({window['gate_reason']})")
            continue
        click.echo(f"{span}: {window['summary']}")
        if not window["memories"]:
            click.echo("  (the extractor proposed nothing)")
        for memory in window["memories"]:
            _show_proposal(memory)
    click.echo(
        f"{result['turns']} turns ({result['secrets_removed']} secrets removed), "
        f"{len(result['windows'])} windows, {result['input_tokens']} input and "
        f"{result['output_tokens']} output tokens; nothing was saved"
    )


def _show_proposal(memory: Mapping[str, Any]) -> None:
    verdict = memory["verdict"]
    kind = f"{memory['category']}/{memory['scope']}, {memory['source']}"
    click.echo(f"  {SYMBOLS.get(verdict, '?')} {verdict} ({kind}): {memory['content']}")
    target = memory["target"]
    if target is not None and verdict in ("reinforce", "supersede"):
        click.echo(f"      {verdict}s {target['id']}: {target['content']}")
    if memory["note"]:
        click.echo(f"      ({memory['note']})")


def _show_status(data: Mapping[str, Any]) -> None:
    windows = data["windows"]
    click.echo(
        f"capture is {data['capture']}; windows: {windows['pending']} pending, "
        f"{windows['running']} running, {windows['done']} done, {windows['dead']} dead"
    )
    for dead in data["dead"]:
        deleted = dead["turns_deleted_at"]
        click.echo(
            f"  dead {dead['id']} (session {dead['session_id']}, turns {dead['first_turn']}-"
            f"{dead['end_turn'] - 1}, {dead['attempts']} attempts"
            + (f"; turns deleted {deleted}" if deleted else "")
            + f"): {dead['last_error']}"
        )
    if data["dead"]:
        click.echo("  emergent-memory capture retry gives them new attempts")
    if not data["tokens_today"]:
        click.echo("no model calls today (UTC)")
    for model in data["tokens_today"]:
        click.echo(
            f"today (UTC) {model['model']}: {model['calls']} calls ({model['errors']} failed), "
            f"{model['input_tokens']} input and {model['output_tokens']} output tokens"
        )
