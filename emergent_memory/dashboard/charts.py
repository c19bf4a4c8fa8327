"""Charts as SVG drawn on the server: bars (a label and a value each) and a line over days.
Every label is escaped; the SVG has a title and a description for screen readers and no
script or inline style (the page's CSP)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

WIDTH = 520
BAR_HEIGHT = 24
# room for a label of 19 characters at 15 px (about 9 px a character), clipped to that
LABEL_WIDTH = 190


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def bar_chart(title: str, items: Sequence[tuple[str, float]], *, chart_id: str) -> Markup:
    """Horizontal bars, one per (label, value), longest for the largest value."""
    top = max((value for _, value in items), default=0) or 1
    height = max(1, len(items)) * (BAR_HEIGHT + 6) + 10
    room = WIDTH - LABEL_WIDTH - 70
    rows = []
    for index, (label, value) in enumerate(items):
        y = 5 + index * (BAR_HEIGHT + 6)
        width = max(1.0, room * value / top) if value else 0
        rows.append(
            f'<text class="chart-label" x="{LABEL_WIDTH - 8}" y="{y + 16}" '
            f'text-anchor="end">{escape(_clip(label))}</text>'
            f'<rect class="chart-bar" x="{LABEL_WIDTH}" y="{y}" width="{width:.1f}" '
            f'height="{BAR_HEIGHT}"><title>{escape(label)}: {_number(value)}</title></rect>'
            f'<text class="chart-value" x="{LABEL_WIDTH + width + 6:.1f}" y="{y + 16}">'
            f"{_number(value)}</text>"
        )
    if not items:
        rows.append('<text class="chart-label" x="10" y="20">no data yet</text>')
    return _svg(title, chart_id, height, "".join(rows), _describe(items))


def line_chart(title: str, points: Sequence[tuple[str, float]], *, chart_id: str) -> Markup:
    """A line over (day, value) points, in order, with the first and last day labelled."""
    height = 200
    left, right, top_pad, bottom = 50, 15, 15, 35
    inner_w, inner_h = WIDTH - left - right, height - top_pad - bottom
    top = max((value for _, value in points), default=0) or 1
    parts = [
        f'<line class="chart-axis" x1="{left}" y1="{top_pad + inner_h}" x2="{WIDTH - right}" '
        f'y2="{top_pad + inner_h}"/>',
        f'<text class="chart-value" x="{left - 6}" y="{top_pad + 5}" text-anchor="end">'
        f"{_number(top)}</text>",
        f'<text class="chart-value" x="{left - 6}" y="{top_pad + inner_h}" text-anchor="end">'
        "0</text>",
    ]
    if points:
        step = inner_w / max(1, len(points) - 1)
        coords = [
            (left + i * step, top_pad + inner_h - inner_h * value / top)
            for i, (_, value) in enumerate(points)
        ]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<polyline class="chart-line" points="{path}"/>')
        for (x, y), (label, value) in zip(coords, points, strict=True):
            parts.append(
                f'<circle class="chart-dot" cx="{x:.1f}" cy="{y:.1f}" r="3">'
                f"<title>{escape(label)}: {_number(value)}</title></circle>"
            )
        for x, label, anchor in (
            (left, points[0][0], "start"),
            (WIDTH - right, points[-1][0], "end"),
        ):
            parts.append(
                f'<text class="chart-label" x="{x}" y="{height - 10}" '
                f'text-anchor="{anchor}">{escape(label)}</text>'
            )
    else:
        parts.append(
            f'<text class="chart-label" x="{left + 10}" y="{top_pad + 20}">no data yet</text>'
        )
    return _svg(title, chart_id, height, "".join(parts), _describe(points))


def _clip(label: str, length: int = 19) -> str:
    return label if len(label) <= length else label[: length - 1] + "…"


def _describe(items: Sequence[tuple[str, float]]) -> str:
    shown = "; ".join(f"{label}: {_number(value)}" for label, value in items[:30])
    return shown or "no data"


def _svg(title: str, chart_id: str, height: int, body: str, description: str) -> Markup:
    ident = escape(chart_id)
    return Markup(  # noqa: S704 - every text above is escaped
        f'<svg class="chart" id="{ident}" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(description)}</desc>{body}</svg>'
    )
