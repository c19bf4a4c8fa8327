"""The dashboard's other pages: stats with charts, the injection log, capture (queue, dead
letters, model usage and cost), contexts (rename, priority) and possible duplicates (decide)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard import charts
from emergent_memory.dashboard.site import Site, Visit, path_uuid, text
from emergent_memory.dashboard.views import counted
from emergent_memory.dashboard.web import UI
from emergent_memory.errors import InvalidInput

USAGE_DAYS = 30


LINES = ("chart-growth", "chart-deleted")  # the charts over days; the others are bars


async def stats(site: Site, request: Request, visit: Visit) -> Response:
    found = await site.call(lambda: site.browse.stats(visit.principal))
    growth = [(g["day"][:10], float(g["created"])) for g in found["growth"]]
    deleted = [(g["day"][:10], float(g["deleted"])) for g in found["growth"]]
    here = str(visit.principal.project_id)
    projects = [
        ("this project" if project == here else f"project {project[:8]}", float(count))
        for project, count in sorted(
            found["by_project"].items(), key=lambda item: (item[0] != here, -item[1])
        )
    ]
    wanted: list[tuple[str, str, list[tuple[str, float]]]] = [
        ("Memories created per day (last 90 days)", "chart-growth", growth),
        ("Memories deleted per day (last 90 days)", "chart-deleted", deleted),
        ("Active memories by project (the one saved in)", "chart-project", projects),
        ("Active memories by category", "chart-category", counted(found["by_category"])),
        ("Memories by status", "chart-status", counted(found["by_status"])),
        ("Active memories by scope", "chart-scope", counted(found["by_scope"])),
        ("Active memories by importance", "chart-importance", counted(found["by_importance"])),
    ]
    used = [m for m in found["most_used"] if m["use_count"]]
    if used:
        wanted.append(
            (
                "Most recalled by the tools (times a recall returned it)",
                "chart-use",
                [(m["content"], float(m["use_count"])) for m in used],
            )
        )
    drawn = [
        {
            "title": title,
            "svg": (charts.line_chart if ident in LINES else charts.bar_chart)(
                title, items, chart_id=ident
            ),
        }
        for title, ident, items in wanted
    ]
    return site.render(request, "stats.html", visit, stats=found, charts=drawn)


async def injections(site: Site, request: Request, visit: Visit) -> Response:
    cursor = request.query_params.get("cursor") or None
    session_id = request.query_params.get("session") or None
    found = await site.call(
        lambda: site.browse.injections(
            visit.principal, session_id=session_id, cursor=cursor, this_project=True
        )
    )
    # one session: what capture took from it too (the page is then that session's)
    captured = (
        None
        if session_id is None
        else await site.call(lambda: site.browse.session_capture(visit.principal, session_id))
    )
    return site.render(
        request,
        "injections.html",
        visit,
        found=found,
        session_id=session_id,
        captured=captured,
        capture_on=site.services.capture_on,
    )


async def capture(site: Site, request: Request, visit: Visit) -> Response:
    queue = await site.call(lambda: site.browse.capture_queue(visit.principal))
    usage = await site.call(lambda: site.browse.llm_usage(visit.principal, days=USAGE_DAYS))
    per_day: dict[str, float] = {}
    for row in usage["usage"]:
        day = row["day"][:10]
        per_day[day] = per_day.get(day, 0.0) + float(row["cost_usd"] or 0)
    chart = charts.bar_chart(
        "Model cost per day (USD, priced models)", sorted(per_day.items()), chart_id="chart-cost"
    )
    return site.render(
        request,
        "capture.html",
        visit,
        queue=queue,
        usage=usage["usage"],
        chart=chart,
        totals=usage["totals"],
        unpriced=usage["unpriced_models"],
        capture_on=site.services.capture_on,
        # anything capture did (while it was on): shown even when it is off now
        history=any(queue["counts"].values()) or bool(queue["dead_letters"] or usage["usage"]),
    )


async def contexts(site: Site, request: Request, visit: Visit) -> Response:
    found = await site.call(lambda: site.browse.contexts(visit.principal))
    return site.render(request, "contexts.html", visit, contexts=found)


async def change_context(site: Site, request: Request, visit: Visit) -> Response:
    context_id = path_uuid(request, "context_id", "context")
    form = await request.form()
    name = (text(form.get("name")) or "").strip() or None
    priority_text = (text(form.get("priority")) or "").strip()
    priority: int | None = None
    if priority_text:
        try:
            priority = int(priority_text)
        except ValueError:
            raise InvalidInput("priority must be a whole number from 0 to 100") from None
    browse: Any = site.browse
    if callable(getattr(browse, "update_context", None)):  # both in one transaction
        await site.call(
            lambda: browse.update_context(visit.principal, context_id, name=name, priority=priority)
        )
    else:
        if priority is not None:  # checked first: a bad priority leaves the name as it was
            await site.call(
                lambda: browse.set_context_priority(visit.principal, context_id, priority)
            )
        if name is not None:
            await site.call(lambda: browse.rename_context(visit.principal, context_id, name))
    return RedirectResponse(f"{UI}/contexts?done=context", status_code=303)


async def duplicates(site: Site, request: Request, visit: Visit) -> Response:
    cursor = request.query_params.get("cursor") or None
    found = await site.call(lambda: site.duplicates.open(visit.principal, cursor=cursor))
    # right after a keep-both or supersede decision: a button that takes it back
    params = request.query_params
    undo = _uuid_or_none(params.get("undo")) if params.get("done") == "decided" else None
    return site.render(request, "duplicates.html", visit, found=found, undo=undo)


def _uuid_or_none(value: str | None) -> str | None:
    try:
        return None if value is None else str(UUID(value))
    except ValueError:
        return None


async def decide(site: Site, request: Request, visit: Visit) -> Response:
    pair_id = path_uuid(request, "pair_id", "pair")
    form = await request.form()
    decision = text(form.get("decision")) or ""
    # the form always sends its radios and its text box: keep and the text count only for
    # the decisions that take them
    keep = None if decision == "keep_both" else text(form.get("keep")) or None
    content = text(form.get("content")) if decision == "merge" else None
    merged = None if content is None or not content.strip() else content.replace("\r\n", "\n")
    await site.call(
        lambda: site.duplicates.decide(
            visit.principal, pair_id, decision, keep=keep, content=merged
        )
    )
    if decision == "merge":  # undone on the memories' pages, not with one button
        return RedirectResponse(f"{UI}/duplicates?done=decided", status_code=303)
    return RedirectResponse(f"{UI}/duplicates?done=decided&undo={pair_id}", status_code=303)


async def undo(site: Site, request: Request, visit: Visit) -> Response:
    pair_id = path_uuid(request, "pair_id", "pair")
    await site.call(lambda: site.duplicates.undo(visit.principal, pair_id))
    return RedirectResponse(f"{UI}/duplicates?done=undone", status_code=303)
