"""`emergent-memory show ID`: one memory in full, for a person.

The record is BrowseService.get's, the REST API's memory page (GET /api/v1/memories/{id}):
`--json` prints it as that endpoint answers it. For people: the content, then its fields
(status and why it is no longer active, category, scope, source, importance, confidence,
evidence, dates, validity, contexts, rationale, conflicts, the conversation it was captured
from), then its versions (what each changed, when), what replaced it and what it replaced,
its evidence (provenance) and its relationships. ID may be a short id (MemoryService's
resolve_memory_id: 8 to 31 hex digits that begin exactly one memory you see).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
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
from emergent_memory.cli.memory_rows import describe_episode, moment, status_text
from emergent_memory.cli.output import Cell, Screen, Styled, cell, output_options, screen
from emergent_memory.memory.lines import age, flags, short_ids

if TYPE_CHECKING:
    from emergent_memory.settings import Settings

INDENT = "  "  # a section's table, under its title
STATUS_COLOURS = {"active": "green", "superseded": "magenta", "archived": "magenta"}


@cli.command()
@click.argument("memory_id")
@ACTOR_OPTION
@PROJECT_OPTION
@JSON_OPTION
@output_options
@click.pass_obj
@reports_errors
def show(
    settings: Settings,
    memory_id: str,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    as_json: bool,
) -> None:
    """Show one memory in full: versions, why it was replaced, conflicts, provenance.

    MEMORY_ID is a whole id or a short one as `list` and `recall` show it (at least 8 hex
    digits). Any status: active, superseded, archived or deleted. --json prints the record of
    the REST API's GET /api/v1/memories/{id}.
    """
    from emergent_memory.app import browse_service

    principal = cli_principal(settings, actor, project)
    with memory_service(settings, embeds=False) as service:
        whole = whole_memory_id(service, principal, memory_id)
        detail = browse_service(service).get(principal, whole)

    def human() -> None:
        out = replace(screen(), wraps=True)  # a page is read whole: nothing is cut
        out.show(page(out, detail))

    emit(detail, as_json, human)


def page(out: Screen, memory: Mapping[str, Any]) -> list[str]:
    """The memory's page as lines: its content, its fields, then a section per history."""
    now = datetime.now(UTC)
    shown = short_ids(_named_ids(memory))
    lines = [
        out.style(Styled(memory["id"], "yellow")),
        out.style(cell(memory["content"], bold=True)),
        "",
    ]
    lines += out.table(None, [(Styled(k, dim=True), v) for k, v in _fields(memory, shown, now)])
    indented = replace(out, width=None if out.width is None else out.width - len(INDENT))
    for title, headers, rows, notes in _sections(memory, shown):
        if rows:
            lines += ["", out.style(Styled(title, bold=True))]
            table = indented.table(headers, rows, notes, note_column=2)
            lines += [INDENT + line.replace("\n", "\n" + INDENT) for line in table]
    return lines


def _fields(
    memory: Mapping[str, Any], shown: Mapping[str, str], now: datetime
) -> list[tuple[str, Cell]]:
    status = memory["status"]
    marks = [mark for mark in flags(memory, now) if mark != status]
    fields: list[tuple[str, Cell]] = [
        ("status", Styled(", ".join([status, *marks]), STATUS_COLOURS.get(status, "red"))),
    ]
    why_not_active = status_text(memory, shown)
    if why_not_active:
        fields.append(("", cell(why_not_active, "magenta")))
    fields += [
        ("category", cell(memory["category"], "green")),
        ("scope", cell(f"{memory['scope']} (saved in project {memory['project_id']})")),
        ("source", cell(memory["source"])),
        ("importance", cell(memory["importance"])),
        ("confidence", _confidence(memory)),
        ("created", _when(memory["created_at"], now)),
        ("changed", _when(memory["updated_at"], now)),
        ("used", f"{memory['use_count']} times, last {_when(memory['last_used'], now)}"),
    ]
    if memory.get("valid_from") or memory.get("valid_until"):
        fields.append(
            (
                "valid",
                f"from {memory['valid_from'] or '...'} until {memory['valid_until'] or '...'}",
            )
        )
    if memory["contexts"]:
        fields.append(("contexts", cell(", ".join(memory["contexts"]))))
    if memory.get("rationale"):
        fields.append(("why", cell(memory["rationale"])))
    if memory["conflicts_with"]:
        side = (
            "this one is outranked"
            if memory["conflict"] == "outranked"
            else "this one is the current value"
        )
        others = ", ".join(shown[str(other)] for other in memory["conflicts_with"])
        fields.append(("conflicts", Styled(f"with {others} ({side})", "red")))
    source = memory.get("derived_from")
    if source:
        fields.append(("captured", cell(f"from {describe_episode(source)}")))
    return fields


def _confidence(memory: Mapping[str, Any]) -> str:
    effective = memory["effective_confidence"]
    now = f" (now {effective:.2f})" if effective != memory["confidence"] else ""
    return f"{memory['confidence']:.2f}{now}, {memory['evidence_count']} evidence"


def _sections(
    memory: Mapping[str, Any], shown: Mapping[str, str]
) -> list[tuple[str, Sequence[str], list[list[Cell]], list[list[Cell]]]]:
    """Each history of the memory: its title, headers, rows and the notes under them."""

    def link(other: Mapping[str, Any]) -> list[Cell]:
        return [Styled(shown[other["id"]], "yellow"), other["status"], cell(other["content"])]

    return [
        (
            "versions (oldest first)",
            ("V", "WHEN", "CHANGE"),
            [
                [str(v["version"]), moment(v["created_at"]), cell(_shorten(v["change"], shown))]
                for v in memory["versions"]
            ],
            [
                [cell(v["content"], dim=True)]
                if v["version"] == 1 or "content" in v["changed"]
                else []
                for v in memory["versions"]
            ],
        ),
        (
            "replaced by (nearest first)",
            ("ID", "STATUS", "CONTENT"),
            [link(other) for other in memory["superseded_by_chain"]],
            [],
        ),
        (
            "replaces (nearest first)",
            ("ID", "STATUS", "CONTENT"),
            [link(other) for other in memory["supersedes"]],
            [],
        ),
        (
            "evidence (newest first)",
            ("WHEN", "ORIGIN", "CONFIDENCE", "SESSION", "EVIDENCE"),
            [
                [
                    moment(e["at"]),
                    cell(e["origin"]),
                    _change(e["confidence_before"], e["confidence_after"]),
                    cell(e["session_id"] or "-"),
                    cell(e["evidence"] if e["evidence"] is not None else "-"),
                ]
                for e in memory["evidence"]
            ],
            [],
        ),
        (
            "relationships",
            ("TYPE", "", "ID", "KIND", "WHAT"),
            [
                [
                    cell(r["type"]),
                    "->" if r["direction"] == "out" else "<-",
                    Styled(shown[r["other_id"]], "yellow"),
                    cell(r["other_type"]),
                    cell(r["other_label"] or ""),
                ]
                for r in memory["relationships"]
            ],
            [],
        ),
    ]


def _named_ids(memory: Mapping[str, Any]) -> list[str]:
    ids = [str(memory["id"]), *(str(other) for other in memory["conflicts_with"])]
    if memory.get("superseded_by"):
        ids.append(str(memory["superseded_by"]))
    ids += [other["id"] for other in (*memory["superseded_by_chain"], *memory["supersedes"])]
    ids += [r["other_id"] for r in memory["relationships"]]
    return list(dict.fromkeys(ids))


def _shorten(text: str, shown: Mapping[str, str]) -> str:
    """`text` with each whole id it names written as its short id."""
    for whole, short in shown.items():
        text = text.replace(whole, short)
    return text


def _change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "-"
    return f"{before:.2f} -> {after:.2f}"


def _when(iso: str | None, now: datetime) -> str:
    """A moment as a person reads it: date and time in UTC, and how long ago."""
    if not iso:
        return "never"
    ago = age(iso, now)
    return f"{moment(iso)} ({'just now' if ago == 'now' else ago + ' ago'})"
