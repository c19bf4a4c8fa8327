"""The dashboard's memory pages: search, the list (filters, sort, numbered pages; its bulk
changes are bulk.py's), global memories for admin tokens, one memory's page with its changes
(edit, reinforce, archive, delete, restore), and verify (a claim against what the memories
say)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard.projects import ALL
from emergent_memory.dashboard.site import Site, Visit, choice, path_uuid, text
from emergent_memory.dashboard.views import versions_with_diffs, with_memory_links
from emergent_memory.dashboard.web import UI, Refused
from emergent_memory.errors import InvalidInput, SameContent, SecretRejected
from emergent_memory.memory.browse import BROWSE_STATUSES, expired
from emergent_memory.memory.models import CATEGORIES, IMPORTANCES, SCOPES

STATUSES = BROWSE_STATUSES
SORTS = ("recent", "oldest", "most_used", "least_used", "last_used", "confidence")
DATES = ("created_after", "created_before", "used_after", "used_before")
PAGE_SIZE = 50
# memories one bulk change of the list ("all matching", or its undo) changes at most: each is
# changed in its own transaction, as a ticked one is
SELECT_ALL_MAX = 500
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


def list_filters(params: Mapping[str, Any], scope: str | None = None) -> dict[str, Any]:
    """The list's filters and sort from a query (the page's, or a bulk form's copy of it):
    a value the page does not offer is ignored; dates as the browser's date fields send them
    (YYYY-MM-DD), checked by the service."""
    return {
        "status": choice(params.get("status"), STATUSES) or "active",
        "category": choice(params.get("category"), CATEGORIES),
        "scope": scope or choice(params.get("scope"), SCOPES),
        "importance": choice(params.get("importance"), IMPORTANCES),
        "context": (params.get("context") or "").strip() or None,
        "text": (params.get("text") or "").strip() or None,
        "sort": choice(params.get("sort"), SORTS) or "recent",
        **{name: (params.get(name) or "").strip() or None for name in DATES},
    }


def page_number(raw: str | None) -> int | None:
    """The page number a jump asks for (None: none asked)."""
    if raw is None or not raw.strip():
        return None
    if not raw.strip().isdigit() or not 1 <= int(raw) <= 10**7:
        raise InvalidInput(f"page must be a whole number from 1; got {raw[:20]!r}")
    return int(raw)


async def browse(
    site: Site, request: Request, visit: Visit, *, scope: str | None = None
) -> Response:
    params = request.query_params
    filters = list_filters(params, scope)
    cursor = params.get("cursor") or None
    page = None if cursor else page_number(params.get("page"))
    found = await site.call(
        lambda: site.browse.numbered_page(
            visit.principal, cursor=cursor, page=page, limit=PAGE_SIZE, **filters
        )
    )
    shown = {k: v for k, v in filters.items() if v and not (scope and k == "scope")}
    if visit.all_projects:  # every link of the page stays in the view of all projects
        shown["project"] = ALL
    # whether a filter narrows the list (the default status and sort do not): an empty list
    # is then "nothing matches", else "nothing yet"
    narrowed = filters["status"] != "active" or any(
        v for k, v in shown.items() if k not in ("status", "sort")
    )
    return site.render(
        request,
        "browse.html",
        visit,
        found=found,
        memories=found["memories"],
        filters=filters,
        params=shown,
        categories=CATEGORIES,
        scopes=SCOPES,
        importances=IMPORTANCES,
        statuses=STATUSES,
        sorts=SORTS,
        fixed_scope=scope,
        select_all_max=SELECT_ALL_MAX,
        narrowed=narrowed,
    )


async def global_memories(site: Site, request: Request, visit: Visit) -> Response:
    if not visit.principal.is_admin:
        raise Refused(403, "global memories are managed with an admin token (memory:admin)")
    return await browse(site, request, visit, scope="global")


async def memory_page(
    site: Site,
    request: Request,
    visit: Visit,
    *,
    status: int = 200,
    refused: InvalidInput | None = None,
    typed: Mapping[str, str] | None = None,
) -> Response:
    """A memory's page; after a refused edit (`refused`), with the refusal beside the edit
    form and the form holding what was typed (`typed`)."""
    memory_id = path_uuid(request, "memory_id", "memory")
    detail = await site.call(lambda: site.browse.get(visit.principal, memory_id))
    return site.render(
        request,
        "memory.html",
        visit,
        status=status,
        memory=detail,
        versions=versions_with_diffs(detail.get("versions") or []),
        categories=CATEGORIES,
        importances=IMPORTANCES,
        edit_error=None if refused is None else with_memory_links(str(refused).rstrip(".")),
        typed=typed,
    )


EDIT_FIELDS = (
    "content",
    "category",
    "importance",
    "confidence",
    "valid_from",
    "valid_until",
    "rationale",
)


def refusal_status(error: InvalidInput) -> int:
    """An edit refused: 422 for a secret in the text, 409 when another memory already says
    it, 400 for any other value to fix."""
    if isinstance(error, SecretRejected):
        return 422
    if isinstance(error, SameContent):
        return 409
    return 400


async def edit(site: Site, request: Request, visit: Visit) -> Response:
    """A new version from the edit form; refused, the memory's page again with why beside
    the form and what was typed still in it."""
    form = await request.form()
    try:
        return await save_edit(site, request, visit, form)
    except InvalidInput as refused:
        typed = {name: value for name in EDIT_FIELDS if (value := text(form.get(name))) is not None}
        return await memory_page(
            site, request, visit, status=refusal_status(refused), refused=refused, typed=typed
        )


async def save_edit(site: Site, request: Request, visit: Visit, form: Any) -> Response:
    memory_id = path_uuid(request, "memory_id", "memory")
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
