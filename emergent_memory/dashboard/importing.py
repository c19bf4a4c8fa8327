"""The dashboard's import of an export file (the page's download, or `emergent-memory export`'s
output): its current memories saved as the tool `save_memory` saves them, into the project
shown, with a page that says what happened to each (memory/own_import.py)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from emergent_memory.dashboard.site import MAX_BODY, Site, Visit, text
from emergent_memory.dashboard.web import UI, Refused
from emergent_memory.errors import InvalidInput
from emergent_memory.memory.own_import import (
    LEFT_OUT,
    MAX_BYTES,
    MAX_MEMORIES,
    OUTCOMES,
    ImportReport,
    import_own,
    read_export,
)

# The page's upload, larger than the server's other requests may be (mcp/http.py's guard)
UPLOADS = {f"{UI}/import": MAX_BODY}


async def import_form(site: Site, request: Request, visit: Visit) -> Response:
    if not visit.principal.can_write:
        raise Refused(403, "this token may only read memories (memory:read)")
    return _page(site, request, visit)


async def import_file(site: Site, request: Request, visit: Visit) -> Response:
    form = await request.form()
    shown = text(form.get("project"))
    if shown is not None and shown != visit.chosen:  # another tab switched the project since
        error = (
            f"the form was for project {shown[:8]}, and this browser now shows project "
            f"{visit.chosen[:8]} (switched in another tab): check the project and import again"
        )
        return _page(site, request, visit, error=error, status=409)
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        return _page(site, request, visit, error="choose an export file to import", status=400)
    data = await upload.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        error = (
            f"the file is larger than {MAX_BYTES // (1024 * 1024)} MB: split it, or have an "
            "operator run emergent-memory import"
        )
        return _page(site, request, visit, error=error, status=413)
    try:
        memories, left_out = read_export(data.splitlines())
    except InvalidInput as error:  # nothing was written
        return _page(site, request, visit, error=str(error), status=400)
    done = await site.call(lambda: import_own(site.memory, visit.principal, memories))
    report = ImportReport(tuple(done), dict(left_out))
    return _page(site, request, visit, report=report, filename=upload.filename)


def _page(
    site: Site,
    request: Request,
    visit: Visit,
    *,
    report: ImportReport | None = None,
    filename: str | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    values: dict[str, Any] = {
        "report": report,
        "filename": filename,
        "error": error,
        "outcomes": OUTCOMES,
        "left_out_reasons": LEFT_OUT,
        "max_memories": MAX_MEMORIES,
        "max_megabytes": MAX_BYTES // (1024 * 1024),
    }
    return site.render(request, "import.html", visit, status=status, **values)
