"""What a person sees of a command's answer: aligned tables, colour on a terminal, a pager.

A command that prints for people builds its lines (`Screen.table`, `Screen.style`) and hands
them to `Screen.show`. On a terminal (stdout a tty) a table's last column is cut to the
terminal's width (wrapped, on a page read whole) and the output is coloured; colour is off
with --no-color, with NO_COLOR set to anything but the empty string (no-color.org) and with
TERM=dumb. Output longer than the terminal goes through the pager, as git does it: PAGER
(empty or `cat`: no pager), else `less`, with LESS=FRX and LV=-c when they are unset;
--no-pager prints it all at once. Piped (stdout not a tty), the same lines come out without
colour, uncut and never paged; --json output never passes here.

Cells are text a user, an agent or a model may have written: `cell` puts it on one line with
every control character made visible (memory.lines.one_line), so no memory can move the
cursor or colour the terminal.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from emergent_memory.memory.lines import one_line

NO_COLOR = "emergent_memory.no_color"  # ctx.meta: --no-color was given
NO_PAGER = "emergent_memory.no_pager"  # ctx.meta: --no-pager was given
GAP = "  "  # between two columns
ELLIPSIS = "…"
FEWEST_CUT = 10  # a cut column keeps at least this many characters, however narrow the screen

F = TypeVar("F", bound=Callable[..., Any])


def _remember(flag: str) -> Callable[[click.Context, click.Parameter, bool], None]:
    def store(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        ctx.meta[flag] = ctx.meta.get(flag, False) or value

    return store


def output_options(command: F) -> F:
    """--no-color and --no-pager, for a command that prints tables for people."""
    command = click.option(
        "--no-pager",
        is_flag=True,
        expose_value=False,
        callback=_remember(NO_PAGER),
        help="Print everything at once, even when it is longer than the terminal.",
    )(command)
    return click.option(
        "--no-color",
        is_flag=True,
        expose_value=False,
        callback=_remember(NO_COLOR),
        help="No colour on a terminal (as NO_COLOR or TERM=dumb).",
    )(command)


@dataclass(frozen=True)
class Styled:
    """A cell's text and how it is coloured on a terminal (click.style's arguments)."""

    text: str
    fg: str | None = None
    bold: bool = False
    dim: bool = False


Cell = str | Styled


def cell(text: object, fg: str | None = None, *, bold: bool = False, dim: bool = False) -> Styled:
    """Text anyone may have written, as a cell: on one line, control characters visible."""
    return Styled(one_line(str(text)).replace("\t", " "), fg, bold, dim)


def width_of(text: str) -> int:
    """Columns `text` takes on a terminal: wide (East Asian) characters take two, combining
    marks none."""
    return sum(
        0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
        for char in text
    )


def cut(text: str, columns: int) -> str:
    """`text` within `columns` columns, ending in an ellipsis when it was cut."""
    if width_of(text) <= columns:
        return text
    kept, used = [], 0
    for char in text:
        used += width_of(char)
        if used > columns - 1:
            break
        kept.append(char)
    return "".join(kept) + ELLIPSIS


@dataclass(frozen=True)
class Screen:
    """Where the output goes: `colour` whether to colour it; `width` and `height` the
    terminal's (None: piped, so nothing is cut or paged); `pager` whether a long output may
    be paged; `wraps` whether a last column too long for the width is wrapped (a page that
    must be read whole, as `show`) rather than cut (a list)."""

    colour: bool
    width: int | None
    height: int | None
    pager: bool
    wraps: bool = False

    def style(self, value: Cell) -> str:
        if isinstance(value, str):
            return value
        if not self.colour:
            return value.text
        return click.style(value.text, fg=value.fg, bold=value.bold or None, dim=value.dim or None)

    def table(
        self,
        headers: Sequence[str] | None,
        rows: Sequence[Sequence[Cell]],
        notes: Sequence[Sequence[Cell]] = (),
        note_column: int = 1,
    ) -> list[str]:
        """The rows under their headers (None: no header line), columns aligned; the last
        column is cut to the terminal's width. `notes[i]`: lines shown under row i, indented
        to the column `note_column` (cut the same way)."""
        texts = [
            [_text(value) for value in row] for row in [*([headers] if headers else []), *rows]
        ]
        widths = [max(width_of(row[i]) for row in texts) for i in range(len(texts[0]))]
        indent = sum(widths[:note_column]) + len(GAP) * min(note_column, len(widths) - 1)
        lines = [self._line([Styled(h, bold=True) for h in headers], widths)] if headers else []
        for i, row in enumerate(rows):
            lines.append(self._line(row, widths))
            for note in notes[i] if i < len(notes) else ():
                lines.append(" " * indent + self._fit(note, indent))
        return lines

    def _line(self, row: Sequence[Cell], widths: Sequence[int]) -> str:
        parts = []
        for value, width in zip(row[:-1], widths, strict=False):
            padding = " " * (width - width_of(_text(value)))
            parts.append(self.style(value) + padding)
        start = sum(widths[:-1]) + len(GAP) * (len(widths) - 1)
        return GAP.join([*parts, self._fit(row[-1], start)]).rstrip()

    def _fit(self, value: Cell, start: int) -> str:
        """The cell as the rest of a line that begins at column `start`."""
        if self.width is None:
            return self.style(value)
        room = max(self.width - start, FEWEST_CUT)
        text = _text(value)
        if width_of(text) <= room:
            return self.style(value)
        parts = textwrap.wrap(text, room, break_on_hyphens=False) if self.wraps else []
        parts = parts or [cut(text, room)]
        if isinstance(value, Styled):
            parts = [self.style(Styled(part, value.fg, value.bold, value.dim)) for part in parts]
        return ("\n" + " " * start).join(parts)

    def show(self, lines: Sequence[str]) -> None:
        """Print the lines; through the pager when it may page and they do not fit."""
        rows = sum(line.count("\n") + 1 for line in lines)
        if self.pager and self.height is not None and rows >= self.height:
            _set_pager_defaults()
            click.echo_via_pager("\n".join(lines), color=self.colour)
            return
        for line in lines:
            click.echo(line, color=self.colour)


def _text(value: Cell) -> str:
    return value if isinstance(value, str) else value.text


def _set_pager_defaults() -> None:
    """less's options as git sets them when the user has not: quit when the text fits, pass
    colours through, do not clear the screen."""
    os.environ.setdefault("LESS", "FRX")
    os.environ.setdefault("LV", "-c")


def screen() -> Screen:
    """The screen of the command being run, from its options and the environment."""
    meta = click.get_current_context().meta
    terminal = sys.stdout.isatty()
    dumb = os.environ.get("TERM") == "dumb"
    colour = terminal and not dumb and not meta.get(NO_COLOR) and not os.environ.get("NO_COLOR")
    if not terminal:
        return Screen(colour=False, width=None, height=None, pager=False)
    size = shutil.get_terminal_size()
    pager = os.environ.get("PAGER")
    pages = (
        sys.stdin.isatty()
        and not meta.get(NO_PAGER)
        and pager not in ("", "cat")
        and not (dumb and pager is None)
    )
    return Screen(colour=colour, width=size.columns, height=size.lines, pager=pages)
