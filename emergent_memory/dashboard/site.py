"""What every dashboard page shares: the services, the visit (a live session found from its
cookie), rendering, and the wrapper that signs a page in and checks a change (Origin, the
session's CSRF token, the write scope) and turns domain errors into an error page."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from emergent_memory.auth.dashboard import DashboardSession, DashboardSessions, StartedSession
from emergent_memory.auth.principal import Principal
from emergent_memory.dashboard.web import (
    COOKIE,
    CSRF_FIELD,
    UI,
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
from emergent_memory.memory.service import MemoryService
from emergent_memory.memory.verify import VerifyService

logger = logging.getLogger(__name__)

# What a redirect after a change may announce (?done=...): fixed texts, never user input.
NOTICES = {
    "updated": "Saved: the memory has a new version.",
    "deleted": "Deleted. It stays in the history and can be restored.",
    "archived": "Archived: recall and injection leave it out until it is restored.",
    "reinforced": "Evidence recorded.",
    "restored": "Restored: the memory is active again.",
    "signed_out": "You are signed out.",
    "decided": "Decision recorded.",
    "undone": "Decision undone: the pair waits for a decision again.",
    "context": "Context saved.",
}
# What a redirect after a bulk change may announce with its count (?done=...&n=...): fixed
# texts for one memory and for several; the count must be a whole number (else no notice).
COUNTED_NOTICES = {
    "bulk_delete": ("Deleted {n} memory.", "Deleted {n} memories."),
    "bulk_archive": ("Archived {n} memory.", "Archived {n} memories."),
    "bulk_restore": ("Restored {n} memory.", "Restored {n} memories."),
    "bulk_undone": ("Undone: {n} memory restored.", "Undone: {n} memories restored."),
}
MAX_COUNTED = 1_000_000
UNDOABLE = {"bulk_delete": "delete", "bulk_archive": "archive"}  # changes offered an undo


def notice_of(params: Mapping[str, str]) -> str | None:
    """The notice a page's ?done= (and ?n=) asks for: one of the fixed texts, with a count."""
    done = params.get("done", "")
    if done in NOTICES:
        return NOTICES[done]
    if done not in COUNTED_NOTICES:
        return None
    raw = params.get("n", "")
    if not raw.isdigit() or len(raw) > 7 or int(raw) > MAX_COUNTED:
        return None
    n = int(raw)
    one, several = COUNTED_NOTICES[done]
    return (one if n == 1 else several).format(n=f"{n:,}")


def undo_of(params: Mapping[str, str]) -> dict[str, str] | None:
    """The undo a page offers after a bulk delete or archive (?done=, ?change=): the action
    and the change's id, a UUID (else none)."""
    action = UNDOABLE.get(params.get("done", ""))
    if action is None or notice_of(params) is None:
        return None
    try:
        change = str(uuid.UUID(params.get("change", "")))
    except ValueError:
        return None
    return {"action": action, "change": change}


@dataclass(frozen=True)
class DashboardServices:
    """What the dashboard calls: the memory service (search, edits, evidence, archive, bulk
    changes), browsing (lists, a memory's page, contexts, stats, the injection log, capture),
    possible duplicates, verify, and the sign-in sessions."""

    memory: MemoryService
    browse: BrowseService
    duplicates: DuplicateService
    verify: VerifyService
    sessions: DashboardSessions


@dataclass(frozen=True)
class Visit:
    """A signed-in request: its session and the CSRF token of its forms."""

    secret: str
    session: DashboardSession
    pending_pairs: int = 0  # possible duplicates waiting for a decision (the navigation's)

    @property
    def principal(self) -> Principal:
        return self.session.principal

    @property
    def csrf(self) -> str:
        return csrf_token(self.secret)


class Refused(Exception):
    """A request the dashboard refuses before any service runs (status and message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


Handler = Callable[["Site", Request, Visit], Awaitable[Response]]


class Site:
    def __init__(self, services: DashboardServices) -> None:
        self.services = services
        self.memory = services.memory
        self.browse = services.browse
        self.duplicates = services.duplicates
        self.verify = services.verify
        self.sessions = services.sessions
        self.env = environment()

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
        secret = request.cookies.get(COOKIE)
        if not secret:
            return None
        count = request.method == "GET"  # a page shows it; a form's POST redirects

        def look() -> tuple[DashboardSession | None, int]:
            session = self.sessions.live(secret)
            if session is None or not count:
                return session, 0
            return session, self.duplicates.pending(session.principal)

        session, pending = await self.call(look)
        return None if session is None else Visit(secret, session, pending)

    def signed_in(self, started: StartedSession, request: Request) -> Response:
        """To the search page with the new session's cookie: HttpOnly, SameSite=Strict, for
        /ui only, Secure over HTTPS, lasting as long as the session may."""
        response = RedirectResponse(f"{UI}/", status_code=303)
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
        self, handler: Handler, *, change: bool = False, writes: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        """A signed-in page: without a live session a GET goes to the sign-in form and a POST
        is refused; a POST (`change`) must come from this site with the session's CSRF token,
        and with `writes` from a principal that may change memories."""

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
                    return RedirectResponse(f"{UI}/signin", status_code=303)
                if change:
                    form = await request.form()
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
                return await handler(self, request, visit)
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

        return endpoint


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
