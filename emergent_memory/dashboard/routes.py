"""The dashboard at /ui: server-rendered pages over the memory services, signed in with an API
token (or a one-time link from `emergent-memory ui`), on the same HTTP app as MCP and the REST
API.

Each handler is thin: the site's wrapper finds the session (cookie -> kb.dashboard_session)
and checks a change (POST: the Origin, the session's CSRF token, the write scope); the handler
calls one service method in a worker thread and renders a template. Templates escape
everything (autoescape); user text goes through `shown`, which also makes direction-changing
characters visible and inert. Every /ui response carries the security headers (web.py).
"""

from __future__ import annotations

from functools import partial

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from emergent_memory.dashboard import (
    adding,
    bulk,
    export,
    importing,
    memories,
    overview,
    projects,
)
from emergent_memory.dashboard.site import DashboardServices, Site, Visit, after_signin, text
from emergent_memory.dashboard.web import (
    COOKIE,
    HERE,
    UI,
    Refused,
    SecurityHeaders,
    is_https,
    same_origin,
)
from emergent_memory.errors import DatabaseUnavailable, NotFound, ServiceBusy

NOT_LIVE = (
    "That token is unknown, revoked or expired. Create one with: "
    "emergent-memory token create --name browser"
)
USED_LINK = (
    "This sign-in link was already used or has expired. Run `emergent-memory ui` again for a "
    "new one, or sign in with a token."
)


async def signin_form(site: Site, request: Request) -> Response:
    then = after_signin(request.query_params.get("next"))
    try:
        signed_in = await site.find_visit(request) is not None
    except Refused:  # a project it may not choose: it is signed in all the same
        signed_in = True
    if signed_in:
        return RedirectResponse(then or f"{UI}/", status_code=303)
    return site.render(request, "signin.html", None, then=then)


async def signin(site: Site, request: Request) -> Response:
    """A session for the token in the form. Login CSRF: the form must come from this site."""
    if not same_origin(request):
        error = "Refused: the sign-in form was sent from another site."
        return site.render(request, "signin.html", None, status=403, error=error)
    form = await request.form()
    token = text(form.get("token")) or ""
    then = after_signin(text(form.get("next")))
    try:
        started = await site.call(lambda: site.sessions.start(token))
    except (DatabaseUnavailable, ServiceBusy) as error:
        return site.render(request, "signin.html", None, status=503, error=str(error), then=then)
    if started is None:
        return site.render(request, "signin.html", None, status=401, error=NOT_LIVE, then=then)
    await end_the_previous_session(site, request)
    return site.signed_in(started, request, then)


async def redeem_link(site: Site, request: Request) -> Response:
    """A one-time link: a session, then the search page (the secret does not stay in the
    address bar or the history)."""
    secret = str(request.path_params["secret"])
    started = await site.call(lambda: site.sessions.redeem(secret))
    if started is None:
        return site.render(request, "signin.html", None, status=401, error=USED_LINK)
    await end_the_previous_session(site, request)
    return site.signed_in(started, request)


async def end_the_previous_session(site: Site, request: Request) -> None:
    """A browser that signs in again replaces its cookie: the session it held ends too, so
    that no live session is left behind whose secret the browser no longer has."""
    previous = request.cookies.get(COOKIE)
    if previous:
        await site.call(lambda: site.sessions.end(previous))


async def signout(site: Site, request: Request, visit: Visit) -> Response:
    await site.call(lambda: site.sessions.end(visit.secret))
    response = RedirectResponse(f"{UI}/signin?done=signed_out", status_code=303)
    response.delete_cookie(
        COOKIE, path=UI, httponly=True, samesite="strict", secure=is_https(request)
    )
    return response


async def no_such_page(site: Site, request: Request, visit: Visit) -> Response:
    raise NotFound(f"the dashboard has no page {request.url.path}")


async def to_the_dashboard(request: Request) -> Response:
    return RedirectResponse(f"{UI}/", status_code=307)


def dashboard_routes(services: DashboardServices) -> list[BaseRoute]:
    """The /ui routes (a Mount with the security headers) to add to the HTTP app."""
    site = Site(services)
    page, change = site.page, partial(site.page, change=True, writes=True)
    routes: list[BaseRoute] = [
        Route("/", page(memories.search), methods=["GET"]),
        Route("/signin", partial(signin_form, site), methods=["GET"]),
        Route("/signin", partial(signin, site), methods=["POST"]),
        Route("/signout", page(signout, change=True), methods=["POST"]),
        Route("/link/{secret}", partial(redeem_link, site), methods=["GET"]),
        Route("/search", page(memories.search), methods=["GET"]),
        Route("/search/results", page(memories.search_results), methods=["GET"]),
        Route("/memories", page(memories.browse, all_projects=True), methods=["GET"]),
        Route("/memories/bulk", change(bulk.bulk), methods=["POST"]),
        Route("/memories/bulk/undo", change(bulk.undo), methods=["POST"]),
        Route("/memories/new", page(adding.add_form), methods=["GET"]),
        Route("/memories/new", change(adding.add), methods=["POST"]),
        Route("/memories/{memory_id}", page(memories.memory_page), methods=["GET"]),
        Route("/memories/{memory_id}/edit", change(memories.edit), methods=["POST"]),
        Route("/memories/{memory_id}/delete", change(memories.delete), methods=["POST"]),
        Route("/memories/{memory_id}/restore", change(memories.restore), methods=["POST"]),
        Route("/memories/{memory_id}/archive", change(memories.archive), methods=["POST"]),
        Route("/memories/{memory_id}/reinforce", change(memories.reinforce), methods=["POST"]),
        Route("/verify", page(memories.verify), methods=["GET"]),
        Route("/global", page(memories.global_memories), methods=["GET"]),
        Route("/export", page(export.download), methods=["GET"]),
        Route("/import", page(importing.import_form), methods=["GET"]),
        Route("/import", change(importing.import_file), methods=["POST"]),
        Route("/stats", page(overview.stats), methods=["GET"]),
        Route("/injections", page(overview.injections), methods=["GET"]),
        Route("/capture", page(overview.capture), methods=["GET"]),
        Route("/contexts", page(overview.contexts), methods=["GET"]),
        Route("/projects", page(projects.projects_page, all_projects=True), methods=["GET"]),
        Route("/projects/name", change(projects.rename), methods=["POST"]),
        Route("/contexts/{context_id}", change(overview.change_context), methods=["POST"]),
        Route("/duplicates", page(overview.duplicates), methods=["GET"]),
        Route("/duplicates/{pair_id}", change(overview.decide), methods=["POST"]),
        Route("/duplicates/{pair_id}/undo", change(overview.undo), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="dashboard-static"),
        Route("/{rest:path}", page(no_such_page), methods=["GET", "POST"]),
    ]
    return [
        Route(UI, to_the_dashboard, methods=["GET"]),
        Mount(UI, routes=routes, middleware=[Middleware(SecurityHeaders)]),
    ]
