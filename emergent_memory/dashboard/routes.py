"""The dashboard at /ui: server-rendered pages over the memory services, signed in with an API
token (or a one-time link from `emergent-memory ui`), on the same HTTP app as MCP and the REST
API.

Each handler is thin: it finds the session (cookie -> kb.dashboard_session), checks a change
(POST: the Origin, the session's CSRF token, the write scope), calls one service method in a
worker thread and renders a template. Templates escape everything (autoescape); user text goes
through `shown`, which also makes direction-changing characters visible and inert.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from emergent_memory.auth.dashboard import DashboardSession, DashboardSessions, StartedSession
from emergent_memory.auth.principal import Principal
from emergent_memory.dashboard import charts
from emergent_memory.dashboard.views import counted, versions_with_diffs
from emergent_memory.dashboard.web import (
    COOKIE,
    CSRF_FIELD,
    HERE,
    UI,
    SecurityHeaders,
    csrf_token,
    csrf_valid,
    environment,
    is_https,
    same_origin,
)
from emergent_memory.errors import (
    DatabaseUnavailable,
    EmergentMemoryError,
    InvalidInput,
    MemoryNotFound,
    NotFound,
    PermissionDenied,
    ServiceBusy,
)
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.models import CATEGORIES, SCOPES
from emergent_memory.memory.service import MemoryService

logger = logging.getLogger(__name__)

STATUSES = ("active", "superseded", "deleted", "all")
SORTS = ("recent", "oldest", "most_used", "least_used", "last_used", "confidence")
PAGE_SIZE = 50

# What a redirect after a change may announce (?done=...): fixed texts, never user input.
NOTICES = {
    "updated": "Saved: the memory has a new version.",
    "deleted": "Deleted. It stays in the history and can be restored.",
    "restored": "Restored: the memory is active again.",
    "signed_out": "You are signed out.",
    "decided": "Decision recorded.",
    "context": "Context saved.",
    "bulk": "Done: every selected memory was changed.",
}


@dataclass(frozen=True)
class DashboardServices:
    """What the dashboard calls: the memory service, the sessions, and (when present) the
    browse and duplicates services of memory/browse.py and memory/duplicates.py."""

    memory: MemoryService
    sessions: DashboardSessions
    browse: BrowseService | None = None
    duplicates: DuplicateService | None = None


@dataclass(frozen=True)
class Visit:
    """A signed-in request: its session and the CSRF token of its forms."""

    secret: str
    session: DashboardSession

    @property
    def principal(self) -> Principal:
        return self.session.principal

    @property
    def csrf(self) -> str:
        return csrf_token(self.secret)


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


Handler = Callable[[Request, Visit], Awaitable[Response]]


def dashboard_routes(services: DashboardServices) -> list[BaseRoute]:
    """The /ui routes (a Mount with the security headers) to add to the HTTP app."""
    env = environment()
    memory = services.memory
    browser: Any = services.browse  # memory/browse.py's BrowseService, when present
    dups: Any = services.duplicates  # memory/duplicates.py's DuplicateService
    recall_counts_use = "record_use" not in inspect.signature(memory.recall).parameters

    async def call(function: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(function)

    def render(
        request: Request, template: str, visit: Visit | None, status: int = 200, **values: Any
    ) -> HTMLResponse:
        principal = None if visit is None else visit.principal
        html = env.get_template(template).render(
            request=request,
            visit=visit,
            principal=principal,
            can_write=principal is not None and principal.can_write,
            is_admin=principal is not None and principal.is_admin,
            csrf=None if visit is None else visit.csrf,
            notice=NOTICES.get(request.query_params.get("done", "")),
            path=request.url.path,
            has_browse=browser is not None,
            has_duplicates=dups is not None,
            **values,
        )
        return HTMLResponse(html, status_code=status)

    def problem(request: Request, visit: Visit | None, status: int, message: str) -> Response:
        return render(
            request, "error.html", visit, status=status, status_code=status, message=message
        )

    async def find_visit(request: Request) -> Visit | None:
        secret = request.cookies.get(COOKIE)
        if not secret:
            return None
        session = await call(lambda: services.sessions.live(secret))
        return None if session is None else Visit(secret, session)

    def page(handler: Handler, *, change: bool = False, writes: bool = False) -> Callable[..., Any]:
        """A signed-in page: without a live session a GET goes to the sign-in form and a POST
        is refused; a POST must come from this site with the session's CSRF token, and with
        `writes` from a principal that may change memories."""

        async def endpoint(request: Request) -> Response:
            visit: Visit | None = None
            try:
                visit = await find_visit(request)
                if visit is None:
                    if change:
                        raise _Refused(403, "sign in first: this session has ended")
                    return RedirectResponse(f"{UI}/signin", status_code=303)
                if change:
                    form = await request.form()
                    if not same_origin(request):
                        raise _Refused(403, "refused: the request came from another site")
                    if not csrf_valid(visit.secret, _text(form.get(CSRF_FIELD))):
                        raise _Refused(
                            403,
                            "refused: the form's security token is missing or wrong; "
                            "reload the page and try again",
                        )
                    if writes and not visit.principal.can_write:
                        raise _Refused(403, "this token may only read memories (memory:read)")
                return await handler(request, visit)
            except _Refused as refused:
                return problem(request, visit, refused.status, refused.message)
            except EmergentMemoryError as error:
                status = _status_of(error)
                level = logging.WARNING if status >= 500 else logging.INFO
                logger.log(level, "%s %s: %s", request.method, request.url.path, error)
                return problem(request, visit, status, str(error))
            except Exception:
                logger.exception("%s %s failed", request.method, request.url.path)
                return problem(request, visit, 500, "internal error; the server's log has details")

        return endpoint

    # -- sign in and out -------------------------------------------------------------------

    def signed_in(started: StartedSession, request: Request) -> Response:
        response = RedirectResponse(f"{UI}/", status_code=303)
        response.set_cookie(
            COOKIE,
            started.secret,
            max_age=services.sessions.lifetime_seconds,
            path=UI,
            httponly=True,
            samesite="strict",
            secure=is_https(request),
        )
        return response

    async def signin_form(request: Request) -> Response:
        if await find_visit(request) is not None:
            return RedirectResponse(f"{UI}/", status_code=303)
        return render(request, "signin.html", None)

    async def signin(request: Request) -> Response:
        if not same_origin(request):
            return render(
                request,
                "signin.html",
                None,
                status=403,
                error="Refused: the sign-in form was sent from another site.",
            )
        form = await request.form()
        token = _text(form.get("token")) or ""
        try:
            started = await call(lambda: services.sessions.start(token))
        except (DatabaseUnavailable, ServiceBusy) as error:
            return render(request, "signin.html", None, status=503, error=str(error))
        if started is None:
            return render(
                request,
                "signin.html",
                None,
                status=401,
                error="That token is unknown, revoked or expired. Create one with: "
                "emergent-memory token create --name browser",
            )
        return signed_in(started, request)

    async def redeem_link(request: Request) -> Response:
        secret = str(request.path_params["secret"])
        started = await call(lambda: services.sessions.redeem(secret))
        if started is None:
            return render(
                request,
                "signin.html",
                None,
                status=401,
                error="This sign-in link was already used or has expired. Run "
                "`emergent-memory ui` again for a new one, or sign in with a token.",
            )
        return signed_in(started, request)

    async def signout(request: Request, visit: Visit) -> Response:
        await call(lambda: services.sessions.end(visit.secret))
        response = RedirectResponse(f"{UI}/signin?done=signed_out", status_code=303)
        response.delete_cookie(
            COOKIE, path=UI, httponly=True, samesite="strict", secure=is_https(request)
        )
        return response

    # -- search ----------------------------------------------------------------------------

    async def search_values(request: Request, visit: Visit) -> dict[str, Any]:
        params = request.query_params
        text = (params.get("q") or "").strip()
        category = _choice(params.get("category"), CATEGORIES)
        scope = _choice(params.get("scope"), SCOPES)
        values: dict[str, Any] = {
            "q": text,
            "category": category,
            "scope": scope,
            "results": None,
            "degraded": False,
            "counts_use": recall_counts_use,
        }
        if text:
            options: dict[str, Any] = {} if recall_counts_use else {"record_use": False}
            found = await call(
                lambda: memory.recall(
                    visit.principal, text, category=category, scope=scope, limit=20, **options
                )
            )
            values["results"] = found["memories"]
            values["degraded"] = found["degraded"]
        return values

    async def search(request: Request, visit: Visit) -> Response:
        return render(request, "search.html", visit, **await search_values(request, visit))

    async def search_results(request: Request, visit: Visit) -> Response:
        return render(request, "_results.html", visit, **await search_values(request, visit))

    # -- browse ----------------------------------------------------------------------------

    async def browse(request: Request, visit: Visit, *, scope: str | None = None) -> Response:
        params = request.query_params
        filters: dict[str, Any] = {
            "status": _choice(params.get("status"), STATUSES) or "active",
            "category": _choice(params.get("category"), CATEGORIES),
            "scope": scope or _choice(params.get("scope"), SCOPES),
            "context": (params.get("context") or "").strip() or None,
            "text": (params.get("text") or "").strip() or None,
            "sort": _choice(params.get("sort"), SORTS) or "recent",
        }
        cursor = params.get("cursor") or None
        if has("list"):
            page_ = await call(
                lambda: browser.list(visit.principal, cursor=cursor, limit=PAGE_SIZE, **filters)
            )
            memories, next_cursor = page_["memories"], page_.get("next_cursor")
        else:  # until memory/browse.py lands: manage_memory's list
            status = filters["status"]
            listed = await call(
                lambda: memory.list_memories(
                    visit.principal,
                    category=filters["category"],
                    limit=100,
                    status=None if status in ("active", "all") else status,
                )
            )
            memories, next_cursor = listed["memories"], None
        shown_filters = {k: v for k, v in filters.items() if v}
        return render(
            request,
            "browse.html",
            visit,
            memories=memories,
            next_cursor=next_cursor,
            filters=filters,
            params=shown_filters,
            categories=CATEGORIES,
            scopes=SCOPES,
            statuses=STATUSES,
            sorts=SORTS,
            fixed_scope=scope,
        )

    async def global_memories(request: Request, visit: Visit) -> Response:
        if not visit.principal.is_admin:
            raise _Refused(403, "global memories are managed with an admin token (memory:admin)")
        return await browse(request, visit, scope="global")

    # -- one memory ------------------------------------------------------------------------

    async def memory_page(request: Request, visit: Visit) -> Response:
        memory_id = _memory_id(request)
        if has("get"):
            detail = await call(lambda: browser.get(visit.principal, memory_id))
        else:
            detail = await call(lambda: _find(memory, visit.principal, memory_id))
        versions = versions_with_diffs(detail.get("versions") or [])
        return render(
            request,
            "memory.html",
            visit,
            memory=detail,
            versions=versions,
            categories=CATEGORIES,
        )

    async def edit(request: Request, visit: Visit) -> Response:
        memory_id = _memory_id(request)
        form = await request.form()
        updates: dict[str, Any] = {}
        content = _text(form.get("content"))
        if content is not None:
            updates["content"] = content.replace("\r\n", "\n")
        category = _text(form.get("category"))
        if category:
            updates["category"] = category
        confidence = _text(form.get("confidence"))
        if confidence:
            try:
                updates["confidence"] = float(confidence)
            except ValueError:
                raise InvalidInput("confidence must be a number between 0 and 1") from None
        await call(lambda: memory.update(visit.principal, memory_id, updates))
        return RedirectResponse(f"{UI}/memories/{memory_id}?done=updated", status_code=303)

    async def delete(request: Request, visit: Visit) -> Response:
        memory_id = _memory_id(request)
        await call(lambda: memory.delete(visit.principal, memory_id))
        return RedirectResponse(f"{UI}/memories/{memory_id}?done=deleted", status_code=303)

    async def restore(request: Request, visit: Visit) -> Response:
        memory_id = _memory_id(request)
        await call(lambda: memory.restore(visit.principal, memory_id))
        return RedirectResponse(f"{UI}/memories/{memory_id}?done=restored", status_code=303)

    # -- the rest, over memory/browse.py and memory/duplicates.py --------------------------

    def has(method: str) -> bool:
        return browser is not None and callable(getattr(browser, method, None))

    def browse_service(method: str) -> Any:
        if not has(method):
            raise _Refused(404, f"this page needs BrowseService.{method}, which this server lacks")
        return browser

    async def stats(request: Request, visit: Visit) -> Response:
        if not has("stats"):
            basic = await call(lambda: memory.stats(visit.principal))
            by_category: dict[str, int] = {}
            for project in basic["projects"]:
                for name, count in project["by_category"].items():
                    by_category[name] = by_category.get(name, 0) + count
            status_counts = {k: basic[k] for k in ("active", "superseded", "deleted")}
            found: Mapping[str, Any] = {"by_category": by_category, "by_status": status_counts}
        else:
            found = await call(lambda: browser.stats(visit.principal))
        growth = found.get("growth") or []
        wanted = [
            (
                "Memories created per day (last 90 days)",
                "chart-growth",
                [(str(g.get("day", ""))[:10], float(g.get("created", 0))) for g in growth],
            ),
            ("Active memories by category", "chart-category", counted(found.get("by_category"))),
            ("Memories by status", "chart-status", counted(found.get("by_status"))),
            ("Active memories by scope", "chart-scope", counted(found.get("by_scope"))),
        ]
        used = [m for m in found.get("most_used") or [] if m.get("use_count")]
        if used:
            wanted.append(
                (
                    "Most used memories (times recalled)",
                    "chart-use",
                    [(str(m.get("content", "")), float(m.get("use_count", 0))) for m in used],
                )
            )
        chart_list = [
            {
                "title": title,
                "svg": (charts.line_chart if ident == "chart-growth" else charts.bar_chart)(
                    title, items, chart_id=ident
                ),
            }
            for title, ident, items in wanted
        ]
        return render(request, "stats.html", visit, stats=found, charts=chart_list)

    async def injections(request: Request, visit: Visit) -> Response:
        service = browse_service("injections")
        cursor = request.query_params.get("cursor") or None
        session_id = request.query_params.get("session") or None
        found = await call(
            lambda: service.injections(visit.principal, session_id=session_id, cursor=cursor)
        )
        return render(request, "injections.html", visit, found=found, session_id=session_id)

    async def capture(request: Request, visit: Visit) -> Response:
        service = browse_service("capture_queue")
        queue = await call(lambda: service.capture_queue(visit.principal))
        usage = await call(lambda: service.llm_usage(visit.principal, days=30))
        rows = list(usage.get("usage") or [])
        per_day: dict[str, float] = {}
        for row in rows:
            day = str(row.get("day", ""))[:10]
            per_day[day] = per_day.get(day, 0.0) + float(row.get("cost_usd") or 0)
        chart = charts.bar_chart(
            "Model cost per day (USD, priced models)",
            sorted(per_day.items()),
            chart_id="chart-cost",
        )
        return render(
            request,
            "capture.html",
            visit,
            queue=queue,
            usage=rows,
            chart=chart,
            totals=usage.get("totals"),
            unpriced=usage.get("unpriced_models") or [],
        )

    async def contexts(request: Request, visit: Visit) -> Response:
        service = browse_service("contexts")
        found = await call(lambda: service.contexts(visit.principal))
        return render(request, "contexts.html", visit, contexts=found)

    async def change_context(request: Request, visit: Visit) -> Response:
        service = browse_service("contexts")
        context_id = _uuid(request.path_params["context_id"], "context")
        form = await request.form()
        name = (_text(form.get("name")) or "").strip() or None
        priority_text = (_text(form.get("priority")) or "").strip()
        priority: int | None = None
        if priority_text:
            try:
                priority = int(priority_text)
            except ValueError:
                raise InvalidInput("priority must be a whole number from 0 to 100") from None
        if hasattr(service, "update_context"):
            await call(
                lambda: service.update_context(
                    visit.principal, context_id, name=name, priority=priority
                )
            )
        else:
            if name is not None:
                await call(lambda: service.rename_context(visit.principal, context_id, name))
            if priority is not None:
                await call(
                    lambda: service.set_context_priority(visit.principal, context_id, priority)
                )
        return RedirectResponse(f"{UI}/contexts?done=context", status_code=303)

    async def duplicates(request: Request, visit: Visit) -> Response:
        if dups is None:
            raise _Refused(404, "this page needs the duplicates service, which this server lacks")
        cursor = request.query_params.get("cursor") or None
        found = await call(lambda: dups.open(visit.principal, cursor=cursor))
        return render(request, "duplicates.html", visit, found=found)

    async def decide(request: Request, visit: Visit) -> Response:
        if dups is None:
            raise _Refused(404, "this page needs the duplicates service, which this server lacks")
        pair_id = _uuid(request.path_params["pair_id"], "pair")
        form = await request.form()
        decision = _text(form.get("decision")) or ""
        # the form always sends its radios and its text box: keep and content count only for
        # the decisions that take them
        keep = None if decision == "keep_both" else _text(form.get("keep")) or None
        content = _text(form.get("content")) if decision == "merge" else None
        content = None if content is None or not content.strip() else content.replace("\r\n", "\n")
        await call(
            lambda: dups.decide(visit.principal, pair_id, decision, keep=keep, content=content)
        )
        return RedirectResponse(f"{UI}/duplicates?done=decided", status_code=303)

    async def bulk(request: Request, visit: Visit) -> Response:
        form = await request.form()
        action = _text(form.get("action"))
        ids = [value for value in form.getlist("ids") if isinstance(value, str)]
        if not ids:
            raise InvalidInput("select at least one memory first")
        if action == "delete":
            result = await call(lambda: memory.bulk_delete(visit.principal, ids))
        elif action == "restore":
            result = await call(lambda: memory.bulk_restore(visit.principal, ids))
        else:
            raise InvalidInput("the action must be delete or restore")
        failed = [item for item in result["results"] if not item["ok"]]
        back = _text(form.get("back")) or ""
        if not failed:
            target = back if back.startswith(f"{UI}/memories") else f"{UI}/memories"
            joiner = "&" if "?" in target else "?"
            return RedirectResponse(f"{target}{joiner}done=bulk", status_code=303)
        return render(
            request, "bulk.html", visit, action=action, changed=result["changed"], failed=failed
        )

    async def home(request: Request) -> Response:
        return RedirectResponse(f"{UI}/", status_code=307)

    routes: list[BaseRoute] = [
        Route("/", page(search), methods=["GET"]),
        Route("/signin", signin_form, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", page(signout, change=True), methods=["POST"]),
        Route("/link/{secret}", redeem_link, methods=["GET"]),
        Route("/search", page(search), methods=["GET"]),
        Route("/search/results", page(search_results), methods=["GET"]),
        Route("/memories", page(browse), methods=["GET"]),
        Route("/memories/bulk", page(bulk, change=True, writes=True), methods=["POST"]),
        Route("/memories/{memory_id}", page(memory_page), methods=["GET"]),
        Route("/memories/{memory_id}/edit", page(edit, change=True, writes=True), methods=["POST"]),
        Route(
            "/memories/{memory_id}/delete", page(delete, change=True, writes=True), methods=["POST"]
        ),
        Route(
            "/memories/{memory_id}/restore",
            page(restore, change=True, writes=True),
            methods=["POST"],
        ),
        Route("/global", page(global_memories), methods=["GET"]),
        Route("/stats", page(stats), methods=["GET"]),
        Route("/injections", page(injections), methods=["GET"]),
        Route("/capture", page(capture), methods=["GET"]),
        Route("/contexts", page(contexts), methods=["GET"]),
        Route(
            "/contexts/{context_id}",
            page(change_context, change=True, writes=True),
            methods=["POST"],
        ),
        Route("/duplicates", page(duplicates), methods=["GET"]),
        Route("/duplicates/{pair_id}", page(decide, change=True, writes=True), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="dashboard-static"),
    ]
    return [
        Route(UI, home, methods=["GET"]),
        Mount(UI, routes=routes, middleware=[_middleware()]),
    ]


def _middleware() -> Any:
    from starlette.middleware import Middleware

    return Middleware(SecurityHeaders)


def _status_of(error: EmergentMemoryError) -> int:
    if isinstance(error, InvalidInput):
        return 400
    if isinstance(error, PermissionDenied):
        return 403
    if isinstance(error, NotFound):
        return 404
    if isinstance(error, ServiceBusy | DatabaseUnavailable):
        return 503
    return 500


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _choice(value: str | None, allowed: tuple[str, ...]) -> Any:
    return value if value in allowed else None


def _uuid(value: Any, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFound(f"{what} {value} not found") from None


def _memory_id(request: Request) -> str:
    raw = str(request.path_params["memory_id"])
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise MemoryNotFound(f"memory {raw} not found") from None


def _find(memory: MemoryService, principal: Principal, memory_id: str) -> dict[str, Any]:
    """Until memory/browse.py lands: the memory among those manage_memory's list shows."""
    for status in (None, "superseded", "deleted"):
        listed = memory.list_memories(principal, limit=100, status=status)
        for found in listed["memories"]:
            if found["id"] == memory_id:
                return {"status": status or "active", **found}
    raise MemoryNotFound(f"memory {memory_id} not found")
