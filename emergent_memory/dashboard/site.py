"""What every dashboard page shares: the services, the visit (a live session found from its
cookie), rendering, and the wrapper that signs a page in and checks a change (Origin, the
session's CSRF token, the write scope) and turns domain errors into an error page."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio.to_thread
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from emergent_memory.auth.dashboard import DashboardSession, DashboardSessions, StartedSession
from emergent_memory.auth.principal import Principal
from emergent_memory.dashboard.neighbours import neighbour_graph
from emergent_memory.dashboard.notices import notice_of, undo_of
from emergent_memory.dashboard.projects import (
    ALL,
    ALL_PROJECTS_PAGE,
    USER_SCOPE_PAGE,
    asks_user_scope,
    chosen_project,
    remember_project,
)
from emergent_memory.dashboard.web import (
    COOKIE,
    CSRF_FIELD,
    UI,
    Refused,
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
from emergent_memory.memory.own_import import MAX_BYTES
from emergent_memory.memory.service import MemoryService
from emergent_memory.memory.verify import VerifyService

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DashboardServices:
    """What the dashboard calls: the memory service (search, edits, evidence, archive, bulk
    changes), browsing (lists, a memory's page, contexts, stats, the injection log, capture),
    possible duplicates, verify, and the sign-in sessions; `capture_on`: whether automatic
    capture is on (an Anthropic API key is configured), which the capture page says."""

    memory: MemoryService
    browse: BrowseService
    duplicates: DuplicateService
    verify: VerifyService
    sessions: DashboardSessions
    capture_on: bool = False


@dataclass(frozen=True)
class Visit:
    """A signed-in request: its session, the project it acts in (the session's unless one was
    chosen: `project`) and the CSRF token of its forms."""

    secret: str
    session: DashboardSession
    pending_pairs: int = 0  # possible duplicates waiting for a decision (the navigation's)
    project: uuid.UUID | None = None  # the project chosen (PROJECT_COOKIE, ?project=)
    # the projects it may choose (the header's selector), each with the actor's name of it
    projects: tuple[tuple[str, str | None], ...] = ()
    project_name: str | None = None  # the actor's name of the project shown, if it gave one
    remember_project: bool = False  # chosen with ?project=: the answer sets PROJECT_COOKIE
    all_projects: bool = False  # ?project=all: the Browse page reads every project

    @property
    def principal(self) -> Principal:
        own = self.session.principal
        if self.all_projects:
            return Principal(own.actor_id, own.project_id, own.scopes, all_projects=True)
        if self.project is None or self.project == own.project_id:
            return own
        return Principal(own.actor_id, self.project, own.scopes)

    @property
    def csrf(self) -> str:
        return csrf_token(self.secret)

    def label(self, project: object) -> str:
        """A project as the pages name it: the actor's name of it, else its id's start."""
        named = dict(self.projects).get(str(project))
        if named is None and str(project) == self.chosen:
            named = self.project_name
        return named or str(project)[:8]

    @property
    def chosen(self) -> str:
        """The project acted in, as the header names it (projects.ALL: every project)."""
        return ALL if self.all_projects else str(self.principal.project_id)


ALL_PROJECTS_READ_ONLY = (
    "All projects is a view for reading: choose a project in the header to change its memories"
)

Handler = Callable[["Site", Request, Visit], Awaitable[Response]]


class Site:
    def __init__(self, services: DashboardServices) -> None:
        self.services = services
        self.memory = services.memory
        self.browse = services.browse
        self.duplicates = services.duplicates
        self.verify = services.verify
        self.sessions = services.sessions
        self.names = services.browse.names
        self.env = environment()
        self.env.globals["neighbour_graph"] = neighbour_graph

    @staticmethod
    async def call(function: Callable[[], Any]) -> Any:
        """A service call in a worker thread (the services are synchronous)."""
        return await anyio.to_thread.run_sync(function)

    def render(
        self, request: Request, template: str, visit: Visit | None, status: int = 200, **values: Any
    ) -> HTMLResponse:
        principal = None if visit is None else visit.principal
        html = self.env.get_template(template).render(
            request=request,
            visit=visit,
            principal=principal,
            can_write=principal is not None and principal.can_write,
            is_admin=principal is not None and principal.is_admin,
            csrf=None if visit is None else visit.csrf,
            notice=notice_of(request.query_params),
            bulk_undo=undo_of(request.query_params) if principal and principal.can_write else None,
            path=request.url.path,
            **values,
        )
        return HTMLResponse(html, status_code=status)

    def problem(self, request: Request, visit: Visit | None, status: int, message: str) -> Response:
        return self.render(
            request,
            "error.html",
            visit,
            status=status,
            status_code=status,
            message=message,
            back=_back(request),
        )

    async def find_visit(self, request: Request) -> Visit | None:
        """The live session of the request's cookie, acting in the project chosen (see
        chosen_project), or None; a project the session may not act in is Refused."""
        secret = request.cookies.get(COOKIE)
        if not secret:
            return None
        page = request.method == "GET"  # a page shows the counts; a form's POST redirects

        def look() -> Visit | None:
            session = self.sessions.live(secret)
            if session is None:
                return None
            chosen = chosen_project(request, session.principal)
            visit = Visit(
                secret,
                session,
                project=chosen.project,
                remember_project=chosen.remember,
                all_projects=chosen.all_projects,
            )
            if not page:
                return visit
            principal = visit.principal
            if principal.may_choose_project:  # the session's own project always among them
                found = dict(self.browse.projects(principal))
                found.setdefault(str(session.principal.project_id), None)
                visit = replace(visit, projects=tuple(found.items()))
                visit = replace(visit, project_name=found.get(visit.chosen))
            else:
                visit = replace(visit, project_name=self.names.name_of(principal))
            return replace(visit, pending_pairs=self.duplicates.pending(principal))

        found: Visit | None = await self.call(look)
        return found

    def signed_in(
        self, started: StartedSession, request: Request, then: str | None = None
    ) -> Response:
        """To the page asked for before signing in (`then`, if a page of the dashboard: see
        after_signin), else the search page, with the new session's cookie: HttpOnly,
        SameSite=Strict, for /ui only, Secure over HTTPS, lasting as long as the session may."""
        response = RedirectResponse(after_signin(then) or f"{UI}/", status_code=303)
        response.set_cookie(
            COOKIE,
            started.secret,
            max_age=self.sessions.lifetime_seconds,
            path=UI,
            httponly=True,
            samesite="strict",
            secure=is_https(request),
        )
        return response

    def page(
        self,
        handler: Handler,
        *,
        change: bool = False,
        writes: bool = False,
        all_projects: bool = False,
    ) -> Callable[[Request], Awaitable[Response]]:
        """A signed-in page: without a live session a GET goes to the sign-in form and a POST
        is refused; a POST (`change`) must come from this site with the session's CSRF token,
        and with `writes` from a principal that may change memories. Only a page that reads
        every project (`all_projects`: Browse) is shown for ?project=all; another goes to
        Browse's view of all projects, and a change is refused there."""

        async def endpoint(request: Request) -> Response:
            visit: Visit | None = None
            try:
                visit = await self.find_visit(request)
                if visit is None:
                    if change:
                        raise Refused(
                            403,
                            "no signed-in session came with this request (signed out, expired, "
                            "or sent from another site); sign in and try again",
                        )
                    return RedirectResponse(signin_address(request), status_code=303)
                if asks_user_scope(request) and not change:
                    return RedirectResponse(USER_SCOPE_PAGE, status_code=303)
                if visit.all_projects and not all_projects:
                    if change:
                        raise Refused(409, ALL_PROJECTS_READ_ONLY)
                    return RedirectResponse(ALL_PROJECTS_PAGE, status_code=303)
                if change:
                    form = await _form(request)
                    if not same_origin(request):
                        raise Refused(403, "refused: the request came from another site")
                    if not csrf_valid(visit.secret, text(form.get(CSRF_FIELD))):
                        raise Refused(
                            403,
                            "refused: the form's security token is missing or wrong; "
                            "reload the page and try again",
                        )
                    if writes and not visit.principal.can_write:
                        raise Refused(403, "this token may only read memories (memory:read)")
                response = await handler(self, request, visit)
                if visit.remember_project:
                    remember_project(
                        response,
                        request,
                        visit.principal.project_id,
                        self.sessions.lifetime_seconds,
                    )
                return response
            except Refused as refused:
                return self.problem(request, visit, refused.status, refused.message)
            except EmergentMemoryError as error:
                status = _status_of(error)
                level = logging.WARNING if status >= 500 else logging.INFO
                logger.log(level, "%s %s: %s", request.method, request.url.path, error)
                return self.problem(request, visit, status, str(error))
            except Exception:
                logger.exception("%s %s failed", request.method, request.url.path)
                return self.problem(
                    request, visit, 500, "internal error; the server's log has details"
                )
            finally:
                await request.close()  # an uploaded file's spooled copy goes too

        return endpoint


# The largest form body a change takes: an import's file and the form's few fields
MAX_BODY = MAX_BYTES + 1024 * 1024


async def _form(request: Request) -> FormData:
    """A change's form, read once (handlers get the same one); a body over MAX_BODY is refused
    before it is read, and one that cannot be parsed is a 400, not an internal error."""
    length = request.headers.get("content-length") or "0"
    if not length.isdigit() or int(length) > MAX_BODY:
        raise Refused(
            413, f"the request is over {MAX_BODY // (1024 * 1024)} MB, larger than any form here"
        )
    try:
        return await request.form()
    except HTTPException as error:
        raise Refused(
            400, f"the form could not be read ({error.detail}); reload the page and try again"
        ) from None


# The longest page address the sign-in form carries back (a search's query included)
MAX_NEXT = 2000


def signin_address(request: Request) -> str:
    """The sign-in form, told the page that was asked for (its path and query), so that
    signing in leads back to it; the first page needs no telling."""
    asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if asked in (UI, f"{UI}/") or after_signin(asked) is None:
        return f"{UI}/signin"
    return f"{UI}/signin?{urlencode({'next': asked})}"


def after_signin(then: str | None) -> str | None:
    """`then` if it is a page of this dashboard to go to after signing in, else None: a
    path under /ui/ on this site (no scheme, host or backslash, no control character), not
    the sign-in, sign-out or one-time link pages, at most MAX_NEXT characters. Anything else
    (another site's address, "//host", "/ui/../api") is ignored: no open redirect."""
    if not then or len(then) > MAX_NEXT or not then.startswith(f"{UI}/"):
        return None
    if "\\" in then or any(ord(c) < 0x20 or ord(c) == 0x7F for c in then):
        return None
    parts = urlsplit(then)
    if parts.scheme or parts.netloc or parts.fragment:
        return None
    segments = parts.path.split("/")
    if "." in segments or ".." in segments or "" in segments[2:-1]:
        return None
    if parts.path in (f"{UI}/signin", f"{UI}/signout") or parts.path.startswith(f"{UI}/link/"):
        return None
    return then


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


def _back(request: Request) -> str | None:
    """Where an error page of a form leads back to: the page the form was on."""
    if request.method != "POST":
        return None
    path = request.url.path
    if path.startswith(f"{UI}/memories/") and path.count("/") == 4:
        return path.rsplit("/", 1)[0]  # /ui/memories/<id>
    for page in ("memories", "contexts", "duplicates"):
        if path.startswith(f"{UI}/{page}"):
            return f"{UI}/{page}"
    return None


def text(value: Any) -> str | None:
    """A form field's text (None for a missing field or an uploaded file)."""
    return value if isinstance(value, str) else None


def choice(value: str | None, allowed: tuple[str, ...]) -> Any:
    """`value` if it is one of `allowed`, else None (a filter the page ignores)."""
    return value if value in allowed else None


def path_uuid(request: Request, name: str, what: str) -> str:
    """A path parameter as a UUID; anything else is not found, like an id nobody has."""
    raw = str(request.path_params[name])
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        if what == "memory":
            raise MemoryNotFound(f"memory {raw} not found") from None
        raise NotFound(f"{what} {raw} not found") from None
