"""The dashboard's memory pages: search, the list (filters, sort, pages, bulk changes), global
memories for admin tokens, and one memory's page with its changes (edit, delete, restore)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard.site import Refused, Site, Visit, choice, path_uuid, text
from emergent_memory.dashboard.views import versions_with_diffs
from emergent_memory.dashboard.web import UI
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.models import CATEGORIES, SCOPES

STATUSES = ("active", "superseded", "deleted", "all")
SORTS = ("recent", "oldest", "most_used", "least_used", "last_used", "confidence")
DATES = ("created_after", "created_before", "used_after", "used_before")
PAGE_SIZE = 50
SEARCH_LIMIT = 20


async def _search_values(site: Site, request: Request, visit: Visit) -> dict[str, Any]:
    params = request.query_params
    query = (params.get("q") or "").strip()
    category = choice(params.get("category"), CATEGORIES)
    scope = choice(params.get("scope"), SCOPES)
    values: dict[str, Any] = {
        "q": query,
        "category": category,
        "scope": scope,
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
            )
        )
        values["results"] = found["memories"]
        values["degraded"] = found["degraded"]
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
    await site.call(lambda: site.memory.update(visit.principal, memory_id, updates))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=updated", status_code=303)


async def delete(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    await site.call(lambda: site.memory.delete(visit.principal, memory_id))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=deleted", status_code=303)


async def restore(site: Site, request: Request, visit: Visit) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
    await site.call(lambda: site.memory.restore(visit.principal, memory_id))
    return RedirectResponse(f"{UI}/memories/{memory_id}?done=restored", status_code=303)


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
