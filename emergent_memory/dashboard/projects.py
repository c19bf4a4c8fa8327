"""Which project a dashboard request shows: the session's own, one chosen in the header (a
token with memory:any-project, remembered in a cookie), every project at once (the Browse
page's All projects view, for reading) or the user-scope memories (the Browse page filtered
to them, the same in every project)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.auth.principal import Principal
from emergent_memory.dashboard.web import UI, Refused, is_https
from emergent_memory.errors import InvalidInput, SecretRejected
from emergent_memory.memory.project_names import MAX_NAME

if TYPE_CHECKING:
    from emergent_memory.dashboard.site import Site, Visit

# The project a browser chose to look at (a project id; the session's own when absent): with
# the scope memory:any-project a session acts in any project of its actor
PROJECT_COOKIE = "em_project"
# ?project=all: the actor's memories of every project on the Browse page (never remembered:
# the other pages show one project); ?project=user: its user-scope memories there
ALL = "all"
USER_SCOPE = "user"
ALL_PROJECTS_PAGE = f"{UI}/memories?project={ALL}"
USER_SCOPE_PAGE = f"{UI}/memories?scope=user"
NEEDS_ANY_PROJECT = (
    "sign in with a token that has the scope memory:any-project (emergent-memory ui opens "
    "such a session for the local user)"
)


@dataclass(frozen=True, slots=True)
class Choice:
    """What a request asked to show: a project (None: the session's own or the remembered
    one), whether to remember it, all projects, or the user-scope memories."""

    project: uuid.UUID | None = None
    remember: bool = False
    all_projects: bool = False
    user_scope: bool = False


def chosen_project(request: Request, own: Principal) -> Choice:
    """The project this request acts in: ?project=ID chooses one (remembered in
    PROJECT_COOKIE), ?project=all every project and ?project=user the user-scope memories,
    else the cookie's. A project other than the session's, or all of them, needs
    memory:any-project: asked for, it is Refused (403); remembered from before (another
    session's cookie), it is ignored. An id that is not one is Refused (400) when asked for,
    ignored in the cookie."""
    asked = request.query_params.get("project")
    if asked is not None:
        word = asked.strip().lower()
        if word == USER_SCOPE:
            return Choice(user_scope=True)
        if word == ALL:
            if not own.may_choose_project:
                raise Refused(403, f"this sign-in reads only project {own.project_id}: "
                              + NEEDS_ANY_PROJECT)  # fmt: skip
            return Choice(all_projects=True)
        try:
            project = uuid.UUID(word)
        except ValueError:
            raise Refused(400, "project must be a project id (a UUID), all or user") from None
        if project != own.project_id and not own.may_choose_project:
            raise Refused(
                403, f"this sign-in acts only in project {own.project_id}: " + NEEDS_ANY_PROJECT
            )
        return Choice(project, remember=True)
    try:
        remembered = uuid.UUID(request.cookies.get(PROJECT_COOKIE) or "")
    except ValueError:
        return Choice()
    if remembered != own.project_id and not own.may_choose_project:
        return Choice()
    return Choice(remembered)


def asks_user_scope(request: Request) -> bool:
    """Whether the request chose the user-scope memories (?project=user): Browse shows them."""
    return (request.query_params.get("project") or "").strip().lower() == USER_SCOPE


def remember_project(
    response: Response, request: Request, project: uuid.UUID, lifetime_seconds: int
) -> None:
    response.set_cookie(
        PROJECT_COOKIE,
        str(project),
        max_age=lifetime_seconds,
        path=UI,
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )


# -- the Projects page: the actor's projects, and the name of the one shown -------------------


async def projects_page(site: Site, request: Request, visit: Visit) -> Response:
    return _projects(site, request, visit)


async def rename(site: Site, request: Request, visit: Visit) -> Response:
    form = await request.form()
    shown = form.get("project")
    typed = form.get("name")
    if shown is not None and shown != visit.chosen:  # another tab switched the project since
        error = (
            f"the form was for project {str(shown)[:8]}, and this browser now shows project "
            f"{visit.chosen[:8]} (switched in another tab): check the project and name it again"
        )
        return _projects(site, request, visit, error=error, typed=typed, status=409)
    try:
        await site.call(lambda: site.names.rename(visit.principal, typed))
    except SecretRejected as error:  # nothing written; the secret is not sent back either
        return _projects(site, request, visit, error=str(error), status=400)
    except InvalidInput as error:
        return _projects(site, request, visit, error=str(error), typed=typed, status=400)
    return RedirectResponse(f"{UI}/projects?done=project_named", status_code=303)


def _projects(
    site: Site,
    request: Request,
    visit: Visit,
    *,
    error: str | None = None,
    typed: object = None,
    status: int = 200,
) -> Response:
    return site.render(
        request,
        "projects.html",
        visit,
        status=status,
        error=error,
        typed=typed if isinstance(typed, str) else (visit.project_name or ""),
        max_name=MAX_NAME,
    )
