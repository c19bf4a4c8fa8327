"""The list's bulk changes: delete, archive or restore the memories ticked, every one on the
page, or every one matching the list's filters (at most SELECT_ALL_MAX); asked first, with the
action and the count (the confirmation page without JavaScript, a dialog with it); then a
notice with the count and, after a delete or archive, a one-click undo that restores the
memories that change changed, found again by the reason it wrote on each."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard.memories import SELECT_ALL_MAX, list_filters
from emergent_memory.dashboard.site import Site, Visit, text
from emergent_memory.dashboard.views import with_memory_links
from emergent_memory.dashboard.web import UI
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.models import BulkResult
from emergent_memory.memory.service import BULK_MAX_IDS

ACTIONS = ("delete", "archive", "restore")
VERBS = {"delete": "Delete", "archive": "Archive", "restore": "Restore"}
DONE = {"delete": "Deleted", "archive": "Archived", "restore": "Restored"}
# What a bulk delete or archive writes as each memory's reason: how its undo finds them again.
CHANGE_REASON = {
    "delete": "deleted with others from the dashboard's list (change {change})",
    "archive": "archived with others from the dashboard's list (change {change})",
}


def back_to(form: Any) -> str:
    """The list the form was on (path and query), never another site's address."""
    back = text(form.get("back")) or ""
    if not back.startswith((f"{UI}/memories", f"{UI}/global")) or "//" in back:
        return f"{UI}/memories"
    return back.rstrip("?&")


def with_notice(back: str, **params: str | int) -> str:
    """`back` with the notice's parameters (its own notice parameters dropped first)."""
    path, _, query = back.partition("?")
    kept = [
        (name, value)
        for name, values in parse_qs(query, keep_blank_values=False).items()
        if name not in ("done", "n", "change")
        for value in values
    ]
    return f"{path}?{urlencode([*kept, *params.items()])}"


def plural(n: int) -> str:
    return f"{n:,} memory" if n == 1 else f"{n:,} memories"


async def targets(site: Site, visit: Visit, form: Any, back: str) -> tuple[list[str], bool]:
    """The ids the bulk change is for, and whether they are every memory matching the list's
    filters (the list's query, from `back`)."""
    if form.get("all_matching") == "1":
        path, _, query = back.partition("?")
        params = {name: values[0] for name, values in parse_qs(query).items()}
        scope = "global" if path.startswith(f"{UI}/global") else None
        filters = list_filters(params, scope)
        filters.pop("sort")
        ids = await site.call(
            lambda: site.browse.matching_ids(visit.principal, SELECT_ALL_MAX, **filters)
        )
        return ids, True
    field = "page_ids" if form.get("all_on_page") == "1" else "ids"
    ids = list(dict.fromkeys(v for v in form.getlist(field) if isinstance(v, str)))
    if len(ids) > SELECT_ALL_MAX:
        raise InvalidInput(f"a bulk change takes at most {SELECT_ALL_MAX:,} memories")
    for value in ids:  # the list's boxes hold memory ids: anything else was not sent by it
        try:
            uuid.UUID(value)
        except ValueError:
            raise InvalidInput(
                f"{value[:60]!r} is not a memory id; tick memories in the list"
            ) from None
    return ids, False


async def apply(
    site: Site, visit: Visit, action: str, ids: list[str], reason: str | None
) -> BulkResult:
    """The change to each memory of `ids`, BULK_MAX_IDS at a time: the results of all."""
    memory, principal = site.memory, visit.principal

    def change(chunk: list[str]) -> BulkResult:
        if action == "delete":
            return memory.bulk_delete(principal, chunk, reason=reason)
        if action == "archive":
            return memory.bulk_archive(principal, chunk, reason=reason)
        return memory.bulk_restore(principal, chunk)

    total: BulkResult = {"results": [], "changed": 0}
    for start in range(0, len(ids), BULK_MAX_IDS):
        chunk = ids[start : start + BULK_MAX_IDS]
        result = await site.call(partial(change, chunk))
        total["results"].extend(result["results"])
        total["changed"] += result["changed"]
    return total


async def bulk(site: Site, request: Request, visit: Visit) -> Response:
    """Delete, archive or restore the memories chosen in the list, each on its own. Unless
    the form says it was confirmed (the dialog adds that, with the count it showed), the
    confirmation page first: the action and how many memories it will change."""
    form = await request.form()
    action = text(form.get("action"))
    if action not in ACTIONS:
        raise InvalidInput("the action must be delete, archive or restore")
    back = back_to(form)
    ids, matching = await targets(site, visit, form, back)
    if not ids:
        raise InvalidInput(
            "no memory matches these filters" if matching else "select at least one memory first"
        )
    expected = text(form.get("expected")) or ""
    confirmed = form.get("confirmed") == "yes" and expected == str(len(ids))
    if not confirmed:
        return site.render(
            request,
            "bulk.html",
            visit,
            stage="confirm",
            action=action,
            verb=VERBS[action],
            count=len(ids),
            counted=plural(len(ids)),
            ids=ids,
            back=back,
            changed_since=form.get("confirmed") == "yes",
        )
    change = str(uuid.uuid4())
    reason = CHANGE_REASON[action].format(change=change) if action in CHANGE_REASON else None
    result = await apply(site, visit, action, ids, reason)
    return finished(site, request, visit, action, result, back, change if reason else None)


def finished(
    site: Site,
    request: Request,
    visit: Visit,
    action: str,
    result: Any,
    back: str,
    change: str | None,
    done: str | None = None,
) -> Response:
    """After a bulk change: back to the list with the count (and the undo's change), or, when
    some were not changed, a page that lists them with why (and the undo of the others)."""
    done = done or f"bulk_{action}"
    failed = [item for item in result["results"] if not item["ok"]]
    if not failed:
        params: dict[str, str | int] = {"done": done, "n": result["changed"]}
        if change is not None:
            params["change"] = change
        return RedirectResponse(with_notice(back, **params), status_code=303)
    return site.render(
        request,
        "bulk.html",
        visit,
        stage="result",
        action=action,
        done_verb=DONE[action] if done != "bulk_undone" else "Restored",
        changed=result["changed"],
        counted=plural(result["changed"]),
        failed=[
            {
                "id": with_memory_links(item["id"]),
                "message": with_memory_links(
                    item["error"]["message"] if item.get("error") else "not changed"
                ),
            }
            for item in failed
        ],
        back=back,
        offered_undo=(
            {"action": action, "change": change} if change and result["changed"] else None
        ),
    )


async def undo(site: Site, request: Request, visit: Visit) -> Response:
    """Restore the memories one bulk delete or archive changed (the principal's own, still
    deleted or archived with the reason that change wrote); nothing else."""
    form = await request.form()
    action = text(form.get("action"))
    if action not in CHANGE_REASON:
        raise InvalidInput("only a bulk delete or archive can be undone")
    try:
        change = str(uuid.UUID(text(form.get("change")) or ""))
    except ValueError:
        raise InvalidInput("the change to undo is not one this dashboard made") from None
    back = back_to(form)
    reason = CHANGE_REASON[action].format(change=change)
    ids = await site.call(
        lambda: site.browse.changed_together(visit.principal, action, reason, SELECT_ALL_MAX)
    )
    if not ids:
        raise InvalidInput(
            "nothing to undo: the memories of that change were restored already (or changed since)"
        )
    result = await apply(site, visit, "restore", ids, None)
    return finished(site, request, visit, "restore", result, back, None, done="bulk_undone")
