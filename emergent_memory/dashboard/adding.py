"""The dashboard's page for adding a memory by hand: the same save as the tool `save_memory`
(the same checks, dedup, conflicts and authority), with `explicit` as its source (a person
typed it), and a page that says what the save did."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from emergent_memory.dashboard.site import Site, Visit, text
from emergent_memory.dashboard.web import UI, Refused
from emergent_memory.errors import InvalidInput, SecretRejected
from emergent_memory.memory.models import CATEGORIES, IMPORTANCES, SaveResult, save_outcome

# The scopes a person adds a memory in from the page: global memories are an admin's
SCOPES = ("user", "project")
FIELDS = ("content", "category", "scope", "importance", "context", "rationale", "evidence")
DATES = ("valid_from", "valid_until")


async def add_form(site: Site, request: Request, visit: Visit) -> Response:
    _may_add(visit)
    blank = dict.fromkeys((*FIELDS, *DATES), "")
    return _form(site, request, visit, {**blank, "category": "fact", "scope": "user"})


async def add(site: Site, request: Request, visit: Visit) -> Response:
    form = await request.form()
    typed = {name: (text(form.get(name)) or "").replace("\r\n", "\n") for name in (*FIELDS, *DATES)}
    shown = text(form.get("project"))
    if shown is not None and shown != visit.chosen:  # another tab switched the project since
        error = (
            f"the form was for project {shown[:8]}, and this browser now shows project "
            f"{visit.chosen[:8]} (switched in another tab): check the project and save again"
        )
        return _form(site, request, visit, typed, error=error, status=409)
    try:
        saved = await site.call(lambda: _save(site, visit, typed))
    except SecretRejected as error:  # nothing written; the secret is not sent back either
        return _form(site, request, visit, {**typed, "content": ""}, error=str(error), status=400)
    except InvalidInput as error:  # nothing was written: the form again, as it was typed
        return _form(site, request, visit, typed, error=str(error), status=400)
    return RedirectResponse(
        f"{UI}/memories/{saved['memory']['id']}?done={outcome(saved)}", status_code=303
    )


def outcome(saved: SaveResult) -> str:
    """Which of notices.NOTICES says what the save did."""
    done = save_outcome(saved)
    return "added" if done == "added" else f"added_{done}"


def _save(site: Site, visit: Visit, typed: dict[str, str]) -> SaveResult:
    if typed["category"] not in CATEGORIES:
        raise InvalidInput(f"category must be one of {', '.join(CATEGORIES)}")
    if typed["scope"] not in SCOPES:
        raise InvalidInput("scope must be user or project (global memories need an admin token)")
    importance = typed["importance"] or None
    if importance is not None and importance not in IMPORTANCES:
        raise InvalidInput(f"importance must be one of {', '.join(IMPORTANCES)}")

    def optional(name: str) -> str | None:
        return typed[name].strip() or None

    return site.memory.save(
        visit.principal,
        typed["content"],
        typed["category"],
        "explicit",
        typed["scope"],  # type: ignore[arg-type]
        optional("context"),
        importance=importance,
        evidence=optional("evidence"),
        valid_from=optional("valid_from"),
        valid_until=optional("valid_until"),
        rationale=optional("rationale"),
    )


def _may_add(visit: Visit) -> None:
    if not visit.principal.can_write:
        raise Refused(403, "this token may only read memories (memory:read)")


def _form(
    site: Site,
    request: Request,
    visit: Visit,
    typed: dict[str, str],
    *,
    error: str | None = None,
    status: int = 200,
) -> Response:
    values: dict[str, Any] = {
        "typed": typed,
        "categories": CATEGORIES,
        "scopes": SCOPES,
        "importances": IMPORTANCES,
        "max_length": site.memory.config.max_content_length,
        "error": error,
    }
    return site.render(request, "add.html", visit, status=status, **values)
