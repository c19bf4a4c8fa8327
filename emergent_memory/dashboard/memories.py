"""The dashboard's memory pages: search, the list (filters, sort, pages, bulk changes), global
memories for admin tokens, one memory's page with its changes (edit, reinforce, archive,
delete, restore), and verify (a claim against what the memories say)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard.site import Refused, Site, Visit, choice, path_uuid, text
from emergent_memory.dashboard.views import versions_with_diffs
from emergent_memory.dashboard.web import UI
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.browse import BROWSE_STATUSES, expired
from emergent_memory.memory.models import CATEGORIES, IMPORTANCES, SCOPES

STATUSES = BROWSE_STATUSES
SORTS = ("recent", "oldest", "most_used", "least_used", "last_used", "confidence")
DATES = ("created_after", "created_before", "used_after", "used_before")
PAGE_SIZE = 50
SEARCH_LIMIT = 20


async def _search_values(site: Site, request: Request, visit: Visit) -> dict[str, Any]:
    params = request.query_params
    query = (params.get("q") or "").strip()
    category = choice(params.get("category"), CATEGORIES)
    scope = choice(params.get("scope"), SCOPES)
    include_archived = params.get("archived") == "1"
    # a date as the browser's date field sends it (YYYY-MM-DD); the service checks it
    as_of = (params.get("as_of") or "").strip() or None
    values: dict[str, Any] = {
        "q": query,
        "category": category,
        "scope": scope,
        "categories": CATEGORIES,
        "include_archived": include_archived,
        "as_of": as_of,
        "results": None,
        "degraded": False,
    }
    if query:
        # a person looking is not an agent using a memory: no use is recorded
        found = await site.call(
            lambda: site.memory.recall(
                visit.principal,
                query,
                category=category,
                scope=scope,
                limit=SEARCH_LIMIT,
                record_use=False,
                include_archived=include_archived,
                as_of=as_of,
            )
        )
        # as of a past day a result may be one whose validity has ended since: marked
        values["results"] = [
            {**m, "expired": expired(m.get("valid_until"))} for m in found["memories"]
        ]
        values["degraded"] = found["degraded"]
        values["min_relevance"] = found["min_relevance"]
    return values


async def search(site: Site, request: Request, visit: Visit) -> Response:
    return site.render(request, "search.html", visit, **await _search_values(site, request, visit))


async def search_results(site: Site, request: Request, visit: Visit) -> Response:
    """The results alone: what the search page's script puts in place as the user types."""
    values = await _search_values(site, request, visit)
    return site.render(request, "_results.html", visit, **values)


async def browse(
    site: Site, request: Request, visit: Visit, *, scope: str | None = None
) -> Response:
    params = request.query_params
    filters: dict[str, Any] = {
        "status": choice(params.get("status"), STATUSES) or "active",
        "category": choice(params.get("category"), CATEGORIES),
        "scope": scope or choice(params.get("scope"), SCOPES),
        "importance": choice(params.get("importance"), IMPORTANCES),
        "context": (params.get("context") or "").strip() or None,
        "text": (params.get("text") or "").strip() or None,
        "sort": choice(params.get("sort"), SORTS) or "recent",
        # dates as the browser's date fields send them (YYYY-MM-DD); the service checks them
        **{name: (params.get(name) or "").strip() or None for name in DATES},
    }
    cursor = params.get("cursor") or None
    found = await site.call(
        lambda: site.browse.list(visit.principal, cursor=cursor, limit=PAGE_SIZE, **filters)
    )
    shown = {k: v for k, v in filters.items() if v and not (scope and k == "scope")}
    return site.render(
        request,
        "browse.html",
        visit,
        memories=found["memories"],
        next_cursor=found["next_cursor"],
        filters=filters,
        params=shown,
        categories=CATEGORIES,
        scopes=SCOPES,
        importances=IMPORTANCES,
        statuses=STATUSES,
        sorts=SORTS,
        fixed_scope=scope,
    )


async def global_memories(site: Site, request: Request, visit: Visit) -> Response:
    if not visit.principal.is_admin:
        raise Refused(403, "global memories are managed with an admin token (memory:admin)")
    return await browse(site, request, visit, scope="global")


async def memory_page(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    detail = await site.call(lambda: site.browse.get(visit.principal, memory_id))
    return site.render(
        request,
        "memory.html",
        visit,
        memory=detail,
        versions=versions_with_diffs(detail.get("versions") or []),
        categories=CATEGORIES,
        importances=IMPORTANCES,
    )


async def edit(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    form = await request.form()
    updates: dict[str, Any] = {}
    content = text(form.get("content"))
    if content is not None:
        updates["content"] = content.replace("\r\n", "\n")
    category = text(form.get("category"))
    if category:
        updates["category"] = category
    confidence = text(form.get("confidence"))
    if confidence:
        try:
            updates["confidence"] = float(confidence)
        except ValueError:
            raise InvalidInput("confidence must be a number from 0 to 1") from None
    # the lifecycle's fields only when the form changed them (an empty date or rationale
    # removes it): a date box shows only the day of a stored time, which stays as it was
    current = await site.call(lambda: site.browse.get(visit.principal, memory_id))
    updates.update(lifecycle_changes(form, current))
    await site.call(lambda: site.memory.update(visit.principal, memory_id, updates))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=updated", status_code=303)


def lifecycle_changes(form: Any, current: Any) -> dict[str, Any]:
    """The importance, validity and rationale the edit form changed from `current` (a field
    the form does not send is not a change)."""
    changes: dict[str, Any] = {}
    importance = text(form.get("importance"))
    if importance and importance != (current.get("importance") or "normal"):
        changes["importance"] = importance
    for name in ("valid_from", "valid_until"):
        value = text(form.get(name))
        if value is None:
            continue
        value = value.strip()
        if value != (current.get(name) or "")[:10]:
            changes[name] = value or None
    rationale = text(form.get("rationale"))
    if rationale is not None:
        rationale = rationale.replace("\r\n", "\n").strip()
        if rationale != (current.get("rationale") or ""):
            changes["rationale"] = rationale or None
    return changes


def _reason(form: Any) -> str | None:
    """A form's optional reason (empty: none)."""
    reason = (text(form.get("reason")) or "").strip()
    return reason or None


async def delete(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    reason = _reason(await request.form())
    await site.call(lambda: site.memory.delete(visit.principal, memory_id, reason=reason))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=deleted", status_code=303)


async def archive(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    reason = _reason(await request.form())
    await site.call(lambda: site.memory.archive(visit.principal, memory_id, reason=reason))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=archived", status_code=303)


async def reinforce(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    form = await request.form()
    evidence = (text(form.get("evidence")) or "").replace("\r\n", "\n")
    await site.call(lambda: site.memory.reinforce(visit.principal, memory_id, evidence))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=reinforced", status_code=303)


async def restore(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    await site.call(lambda: site.memory.restore(visit.principal, memory_id))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=restored", status_code=303)


async def verify(site: Site, request: Request, visit: Visit) -> Response:
    """A claim checked against the memories (read-only: a GET, and no use is counted)."""
    params = request.query_params
    claim = (params.get("claim") or "").strip()
    category = choice(params.get("category"), CATEGORIES)
    scope = choice(params.get("scope"), SCOPES)
    result = None
    if claim:
        result = await site.call(
            lambda: site.verify.verify(visit.principal, claim, category=category, scope=scope)
        )
    return site.render(
        request,
        "verify.html",
        visit,
        claim=claim,
        category=category,
        scope=scope,
        categories=CATEGORIES,
        scopes=SCOPES,
        result=result,
    )


async def bulk(site: Site, request: Request, visit: Visit) -> Response:
    """Delete or restore the memories ticked in the list, each on its own: those refused are
    listed with the reason, the others are changed."""
    form = await request.form()
    action = text(form.get("action"))
    ids = [value for value in form.getlist("ids") if isinstance(value, str)]
    if not ids:
        raise InvalidInput("select at least one memory first")
    if action == "delete":
        result = await site.call(lambda: site.memory.bulk_delete(visit.principal, ids))
    elif action == "restore":
        result = await site.call(lambda: site.memory.bulk_restore(visit.principal, ids))
    else:
        raise InvalidInput("the action must be delete or restore")
    failed = [item for item in result["results"] if not item["ok"]]
    if failed:
        return site.render(
            request, "bulk.html", visit, action=action, changed=result["changed"], failed=failed
        )
    back = text(form.get("back")) or ""
    # back only to a list of this dashboard (never a URL the form could point elsewhere)
    target = back if back.startswith((f"{UI}/memories", f"{UI}/global")) else f"{UI}/memories"
    target = target.rstrip("?&")
    joiner = "&" if "?" in target else "?"
    return RedirectResponse(f"{target}{joiner}done=bulk", status_code=303)
