"""The dashboard's web plumbing: security headers, the session cookie, CSRF and Origin checks,
and the Jinja2 environment (autoescape on; user text made inert by `shown`)."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from emergent_memory.auth.dashboard import derived

UI = "/ui"
HERE = Path(__file__).resolve().parent
COOKIE = "em_dashboard"
CSRF_FIELD = "csrf_token"
CSRF_LABEL = "emergent-memory dashboard csrf v1"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
    "object-src 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" on the
    # pages' own form posts, which over plain HTTP on a hostname (no Sec-Fetch-Site there)
    # cannot be told from another site's post; other sites still get no Referer
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}


class SecurityHeaders:
    """ASGI middleware of every /ui response: CSP without inline scripts, nosniff, no
    referrer to other sites, no framing; pages are never cached (static files are revalidated)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith(f"{UI}/static/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                headers["cache-control"] = "no-cache" if static else "no-store"
            await send(message)

        await self.app(scope, receive, with_headers)


def csrf_token(secret: str) -> str:
    return derived(secret, CSRF_LABEL)


def csrf_valid(secret: str, presented: str | None) -> bool:
    """Whether `presented` is the session's CSRF token (compared in constant time, as bytes:
    compare_digest refuses str with non-ASCII characters, which a forged form may hold)."""
    if not presented:
        return False
    return hmac.compare_digest(csrf_token(secret).encode(), str(presented).encode("utf-8"))


def same_origin(request: Request) -> bool:
    """Whether a POST comes from a page of this server, as the browser tells it.

    A browser sends Origin on every POST. It proves the post same-origin with an Origin that is
    this server's, or, when it sends "Origin: null", with Sec-Fetch-Site: same-origin or a
    Referer of this server; "null" alone proves nothing, since a page of any site can make its
    posts send it (a no-referrer policy, a sandboxed frame), and over plain HTTP on a hostname
    browsers send no Sec-Fetch-Site. (The dashboard's pages use Referrer-Policy same-origin,
    so their own posts carry their Origin.) Sec-Fetch-Site cross-site or same-site refuses the
    post whatever else it says. A client that is not a browser sends neither Origin nor
    Sec-Fetch-Site: it is let through, and needs the session's CSRF token (or, to sign in, a
    token) anyway."""
    headers = request.headers
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in {"same-origin", "none"}:
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin != "null":
        return origin in _origins_of(request)
    referer = headers.get("referer", "")
    return fetch_site == "same-origin" or any(
        referer.startswith(ours + "/") for ours in _origins_of(request)
    )


def _origins_of(request: Request) -> set[str]:
    """This server's origin, as the browser names it (the Host it was reached by)."""
    host = request.headers.get("host", "")
    return {f"{request.url.scheme}://{host}", f"http://{host}", f"https://{host}"}


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


# Characters that change the direction or visibility of the text around them (bidi overrides
# and isolates, marks, zero-width characters): shown as a visible, inert marker instead.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\u061c\ufeff]")


def shown(value: object) -> Markup:
    """User or agent text as inert HTML: escaped, and each direction-changing or invisible
    character replaced by a visible marker (⟪U+202E⟫) so that it neither reorders nor hides
    the text around it."""
    text = str(escape("" if value is None else value))

    def marker(match: re.Match[str]) -> str:
        code = f"U+{ord(match.group(0)):04X}"
        return f'<span class="ctl" title="invisible character {code}">⟪{code}⟫</span>'

    return Markup(INVISIBLE.sub(marker, text))  # noqa: S704 - escaped above; markers are ours


def without_invisible(value: object) -> str:
    """The text without its direction-changing and invisible characters (the edit box's
    starting text: the services refuse them, so saving removes them)."""
    return INVISIBLE.sub("", "" if value is None else str(value))


def has_invisible(value: object) -> bool:
    return INVISIBLE.search("" if value is None else str(value)) is not None


def short(value: object, length: int = 160) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= length else text[: length - 1] + "…"


def day(value: object) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' (UTC as stored)."""
    text = "" if value is None else str(value)
    return text[:16].replace("T", " ") if text else "—"


def query(params: Mapping[str, Any], **changes: Any) -> str:
    """A query string of `params` with `changes` (None drops a key)."""
    merged = {k: v for k, v in {**params, **changes}.items() if v not in (None, "")}
    return urlencode(merged)


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        auto_reload=False,  # templates are package files: no stat of each one per page
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shown"] = shown
    env.filters["short"] = short
    env.filters["without_invisible"] = without_invisible
    env.tests["with_invisible"] = has_invisible
    env.filters["day"] = day
    env.globals["query"] = query
    env.globals["UI"] = UI
    env.globals["CSRF_FIELD"] = CSRF_FIELD
    return env


class Refused(Exception):
    """A request the dashboard refuses before any service runs (status and message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message
