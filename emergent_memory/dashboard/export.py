"""The dashboard's download of the signed-in user's own memories, in the format of
`emergent-memory export` (JSON Lines; memory/own_export.py says what it holds)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from emergent_memory.dashboard.site import Site, Visit

MEDIA_TYPE = "application/x-ndjson"


async def download(site: Site, request: Request, visit: Visit) -> Response:
    records = site.browse.export(visit.principal)
    # the first record opens the snapshot: a database that does not answer is an error page,
    # not a download cut short
    first = await site.call(lambda: next(records))
    day = datetime.now(UTC).date().isoformat()
    return StreamingResponse(
        _lines(first, records),
        media_type=MEDIA_TYPE,
        headers={
            "Content-Disposition": f'attachment; filename="emergent-memory-export-{day}.jsonl"',
            "Cache-Control": "no-store",
        },
    )


def _lines(first: dict[str, Any], rest: Iterator[dict[str, Any]]) -> Iterator[str]:
    yield json.dumps(first, ensure_ascii=False) + "\n"
    for record in rest:
        yield json.dumps(record, ensure_ascii=False) + "\n"
