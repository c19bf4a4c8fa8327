"""The dashboard at /ui over HTTP: sign-in with a token or a one-time link, the session cookie,
sign-out and expiry, CSRF and Origin checks, a read-only token, isolation between actors,
security headers, and user text rendered inert on every page it reaches. The app is the
server's own (mcp/http.py http_app with the dashboard's routes) on the real database, driven
in process with starlette's TestClient."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from psycopg_pool import ConnectionPool
from starlette.testclient import TestClient

from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY
from emergent_memory.auth.dashboard import DashboardLinks, DashboardSessions, digest
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.auth.service import TokenService
from emergent_memory.cli import cli
from emergent_memory.dashboard import UPLOADS, DashboardServices, dashboard_routes
from emergent_memory.dashboard.web import COOKIE, CSRF_FIELD
from emergent_memory.mcp.http import DatabaseTokenVerifier, http_app, token_principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.verify import VerifyConfig, VerifyService
from tests.helpers import make_token

BASE = "http://testserver"
SAME_ORIGIN = {"Origin": BASE}


def build_app(service: MemoryService, sessions: DashboardSessions, **extra: Any) -> Any:
    server = create_server(
        lambda: nullcontext(service),
        token_principal,
        auth=DatabaseTokenVerifier(TokenService(service.pool).verify),
    )
    return http_app(
        server,
        max_request_bytes=1_048_576,
        max_sessions=10,
        session_idle_timeout=60,
        uploads=UPLOADS,
        routes=dashboard_routes(
            DashboardServices(
                memory=service,
                sessions=sessions,
                **(
                    {
                        "browse": BrowseService(service.pool),
                        "duplicates": DuplicateService(service.pool, service),
                        "verify": VerifyService(
                            service, None, VerifyConfig(UNCALIBRATED_VERIFY_POLICY)
                        ),
                    }
                    | extra
                ),
            )
        ),
    )


@pytest.fixture
def sessions(service: MemoryService) -> DashboardSessions:
    return DashboardSessions(service.pool, 3600)


@pytest.fixture
def client(service: MemoryService, sessions: DashboardSessions) -> Iterator[TestClient]:
    with TestClient(build_app(service, sessions), base_url=BASE) as test_client:
        yield test_client


@pytest.fixture
def token_for(database_url: str) -> Callable[..., str]:
    def make(principal: Principal, *scopes: str) -> str:
        return make_token(database_url, principal.actor_id, principal.project_id, *scopes)[0]

    return make


def sign_in(client: TestClient, token: str) -> Any:
    return client.post(
        "/ui/signin", data={"token": token}, headers=SAME_ORIGIN, follow_redirects=False
    )


def csrf_of(html: str) -> str:
    """The CSRF token of the page's forms: every form carries the same, non-empty one (each
    test then posts what a form of the page would send)."""
    values = re.findall(rf'name="{CSRF_FIELD}" value="([^"]*)"', html)
    assert values, "no CSRF field on the page"
    assert values[0], "an empty CSRF field"
    assert set(values) == {values[0]}, f"the page's forms carry different tokens: {set(values)}"
    return values[0]


def test_sign_in_with_a_token_sets_a_strict_http_only_cookie(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    response = sign_in(client, token_for(principal))
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "Path=/ui" in cookie
    assert "Secure" not in cookie  # plain http here
    assert "emt_" not in cookie  # the token is never in the cookie
    page = client.get("/ui/")
    assert page.status_code == 200
    assert 'id="signout"' in page.text


@pytest.fixture
def signed_in(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> TestClient:
    assert sign_in(client, token_for(principal)).status_code == 303
    return client


def test_a_page_without_a_session_goes_to_the_sign_in_form(client: TestClient) -> None:
    response = client.get("/ui/memories", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/signin?next=%2Fui%2Fmemories"
    form = client.get("/ui/signin")
    assert form.status_code == 200
    assert '<label for="token">API token</label>' in form.text


def test_signing_in_leads_back_to_the_page_asked_for(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    asked = "/ui/memories?category=preference&status=active"
    response = client.get(asked, follow_redirects=False)
    assert response.status_code == 303
    form = client.get(response.headers["location"])
    assert 'id="signin-then"' in form.text
    # the form carries the page back (escaped), and a failed sign-in keeps it
    assert 'name="next" value="/ui/memories?category=preference&amp;status=active"' in form.text
    refused = client.post("/ui/signin", data={"token": "nope", "next": asked}, headers=SAME_ORIGIN)
    assert refused.status_code == 401
    assert 'name="next" value="/ui/memories?category=preference&amp;status=active"' in refused.text
    signed = client.post(
        "/ui/signin",
        data={"token": token_for(principal), "next": asked},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert signed.status_code == 303
    assert signed.headers["location"] == asked
    assert client.get(asked).status_code == 200
    # signed in, the form itself goes on to the page
    again = client.get("/ui/signin?next=%2Fui%2Fstats", follow_redirects=False)
    assert again.headers["location"] == "/ui/stats"


def test_the_first_page_needs_no_way_back(client: TestClient) -> None:
    response = client.get("/ui/", follow_redirects=False)
    assert response.headers["location"] == "/ui/signin"


@pytest.mark.parametrize(
    "then",
    [
        "https://evil.example/ui/",
        "//evil.example/ui/",
        "/\\evil.example/ui/",
        "/ui/\\evil.example",
        "/api/v1/memories",
        "/ui/../api/v1/memories",
        "/ui/./memories",
        "/ui//evil.example",
        "/ui/signout",
        "/ui/signin",
        "/ui/link/abc",
        "javascript:alert(1)",
        "/ui/memories\r\nSet-Cookie: x=1",
        "/ui/memories#frag",
        "/ui/" + "a" * 2001,
        "",
    ],
)
def test_signing_in_never_leads_off_the_dashboard(
    client: TestClient, principal: Principal, token_for: Callable[..., str], then: str
) -> None:
    form = client.get("/ui/signin", params={"next": then})
    assert 'name="next"' not in form.text
    signed = client.post(
        "/ui/signin",
        data={"token": token_for(principal), "next": then},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert signed.status_code == 303
    assert signed.headers["location"] == "/ui/"


@pytest.mark.parametrize("token", ["", "nope", "emt_unknown", "emt_" + "x" * 43])
def test_a_token_that_is_not_live_does_not_sign_in(client: TestClient, token: str) -> None:
    response = sign_in(client, token)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers
    assert "unknown, revoked or expired" in response.text


def test_a_revoked_token_ends_its_sessions(
    client: TestClient, principal: Principal, database_url: str, owner_pool: ConnectionPool
) -> None:
    token, token_id = make_token(database_url, principal.actor_id, principal.project_id)
    assert sign_in(client, token).status_code == 303
    assert client.get("/ui/memories", follow_redirects=False).status_code == 200
    TokenService(owner_pool).revoke(token_id)
    response = client.get("/ui/memories", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/signin?next=%2Fui%2Fmemories"


def test_sign_out_ends_the_session_in_the_database(
    signed_in: TestClient, sessions: DashboardSessions
) -> None:
    secret = signed_in.cookies.get(COOKIE)
    assert secret
    assert sessions.live(secret) is not None
    page = signed_in.get("/ui/memories")
    response = signed_in.post(
        "/ui/signout",
        data={CSRF_FIELD: csrf_of(page.text)},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/signin?done=signed_out"
    assert sessions.live(secret) is None
    # the old cookie, sent again by hand, opens nothing
    signed_in.cookies.set(COOKIE, secret, path="/ui")
    assert signed_in.get("/ui/memories", follow_redirects=False).status_code == 303


def test_a_session_expires(
    service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    short = DashboardSessions(service.pool, 1)
    with TestClient(build_app(service, short), base_url=BASE) as client:
        assert sign_in(client, token_for(principal)).status_code == 303
        secret = client.cookies.get(COOKIE)
        assert secret
        assert short.live(secret) is not None
        time.sleep(1.2)
        assert short.live(secret) is None
        response = client.get("/ui/memories", follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"] == "/ui/signin?next=%2Fui%2Fmemories"


def test_the_database_holds_only_the_hash_of_the_session_secret(
    signed_in: TestClient, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    secret = signed_in.cookies.get(COOKIE)
    assert secret
    with connect() as conn:
        rows = conn.execute(
            "SELECT row_to_json(s)::text FROM kb.dashboard_sessions s WHERE session_hash = %s",
            (digest(secret),),
        ).fetchall()
    assert len(rows) == 1
    assert secret not in rows[0][0]


def test_the_sign_in_form_refuses_a_foreign_origin(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    token = token_for(principal)
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        response = client.post(
            "/ui/signin", data={"token": token}, headers=headers, follow_redirects=False
        )
        assert response.status_code == 403
        assert "set-cookie" not in response.headers


# -- one-time sign-in links ---------------------------------------------------------------------


def test_a_sign_in_link_works_once(
    client: TestClient, principal: Principal, owner_pool: ConnectionPool
) -> None:
    link = DashboardLinks(owner_pool).create(principal, label="local user")
    response = client.get(f"/ui/link/{link.secret}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/"  # the secret is not kept in the URL
    assert f"{COOKIE}=" in response.headers["set-cookie"]
    assert client.get("/ui/memories", follow_redirects=False).status_code == 200
    client.cookies.clear()
    again = client.get(f"/ui/link/{link.secret}", follow_redirects=False)
    assert again.status_code == 401
    assert "already used or has expired" in again.text
    assert "set-cookie" not in again.headers


def test_an_expired_sign_in_link_opens_nothing(
    client: TestClient, principal: Principal, owner_pool: ConnectionPool
) -> None:
    link = DashboardLinks(owner_pool).create(principal, lifetime_seconds=1)
    time.sleep(1.2)
    response = client.get(f"/ui/link/{link.secret}", follow_redirects=False)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers


# -- CSRF and Origin ----------------------------------------------------------------------------


def test_a_change_without_the_csrf_token_or_from_another_site_is_refused(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    saved = service.save(principal, "The deploy script lives in ops/deploy.sh", "fact")
    memory_id = saved["memory"]["id"]
    page = signed_in.get(f"/ui/memories/{memory_id}")
    token = csrf_of(page.text)
    delete = f"/ui/memories/{memory_id}/delete"
    attempts = [
        ({}, SAME_ORIGIN),  # no token
        ({CSRF_FIELD: "0" * 64}, SAME_ORIGIN),  # a wrong one
        ({CSRF_FIELD: "é" * 64}, SAME_ORIGIN),  # a wrong one, not ASCII (a 403, not a 500)
        ({CSRF_FIELD: token}, {"Origin": "https://evil.example"}),  # the right one, elsewhere
        ({CSRF_FIELD: token}, {"Sec-Fetch-Site": "cross-site"}),
    ]
    changes = [
        (delete, {"reason": "forged"}),
        (f"/ui/memories/{memory_id}/archive", {"reason": "forged"}),
        (f"/ui/memories/{memory_id}/reinforce", {"evidence": "forged evidence"}),
        (f"/ui/memories/{memory_id}/edit", {"importance": "core", "rationale": "forged"}),
    ]
    for url, fields in changes:
        for data, headers in attempts:
            response = signed_in.post(
                url, data=data | fields, headers=headers, follow_redirects=False
            )
            assert response.status_code == 403, (url, data, headers)
            assert "Content-Security-Policy" in response.headers
    assert service.list_memories(principal)["count"] == 1  # still there
    [record] = service.list_memories(principal)["memories"]
    assert (record["importance"], record["rationale"], record["evidence_count"]) == (
        "normal",
        None,
        1,  # the save's own
    )
    done = signed_in.post(
        delete, data={CSRF_FIELD: token}, headers=SAME_ORIGIN, follow_redirects=False
    )
    assert done.status_code == 303
    assert service.list_memories(principal)["count"] == 0


def test_the_csrf_token_of_one_session_is_refused_in_another(
    client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    saved = service.save(principal, "Tests run with make test", "convention")
    memory_id = saved["memory"]["id"]
    assert sign_in(client, token_for(principal)).status_code == 303
    first = csrf_of(client.get(f"/ui/memories/{memory_id}").text)
    client.cookies.clear()
    assert sign_in(client, token_for(principal)).status_code == 303
    response = client.post(
        f"/ui/memories/{memory_id}/delete",
        data={CSRF_FIELD: first},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert response.status_code == 403
    assert service.list_memories(principal)["count"] == 1


def test_a_change_without_a_session_is_refused(
    client: TestClient, service: MemoryService, principal: Principal
) -> None:
    saved = service.save(principal, "Use ruff for linting", "convention")
    response = client.post(
        f"/ui/memories/{saved['memory']['id']}/delete",
        data={CSRF_FIELD: "x"},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert response.status_code == 403
    assert service.list_memories(principal)["count"] == 1


# -- a read-only token ---------------------------------------------------------------------------


def test_a_read_only_token_sees_no_edit_controls_and_its_forged_posts_are_refused(
    client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    saved = service.save(principal, "The staging database is called stage-db", "fact")
    memory_id = saved["memory"]["id"]
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    page = client.get(f"/ui/memories/{memory_id}")
    assert page.status_code == 200
    assert "The staging database is called stage-db" in page.text
    assert "read only" in page.text
    for control in (
        "/edit",
        "/delete",
        "/restore",
        "/reinforce",
        "/archive",
        'id="edit-form"',
        'id="delete"',
    ):
        assert control not in page.text
    token = csrf_of(page.text)  # the sign-out form's
    for action, data in (
        ("edit", {"content": "changed by a reader"}),
        ("delete", {"reason": "a reader's"}),
        ("restore", {}),
        ("reinforce", {"evidence": "a reader saw it"}),
        ("archive", {"reason": "a reader's"}),
    ):
        response = client.post(
            f"/ui/memories/{memory_id}/{action}",
            data={CSRF_FIELD: token, **data},
            headers=SAME_ORIGIN,
            follow_redirects=False,
        )
        assert response.status_code == 403, action
        assert "memory:read" in response.text
    assert service.list_memories(principal)["memories"][0]["content"] == (
        "The staging database is called stage-db"
    )
    # nor on the list, the contexts or the duplicates
    service.save(principal, "Another memory in a context", "fact", context="ops")
    assert client.get("/ui/verify?claim=staging+database").status_code == 200  # reads only
    for path in (
        "/ui/memories",
        "/ui/memories?status=all",
        "/ui/memories?status=archived",
        "/ui/contexts",
        "/ui/duplicates",
        "/ui/verify?claim=staging+database",
    ):
        html = client.get(path).text
        forms = re.findall(r'<form[^>]* method="post" action="([^"]+)"', html)
        assert forms == ["/ui/signout"], (path, forms)
        assert 'name="ids"' not in html


# -- isolation -----------------------------------------------------------------------------------


def test_another_actors_memory_is_a_404_like_a_missing_one(
    signed_in: TestClient, service: MemoryService
) -> None:
    other = Principal(uuid.uuid4(), uuid.uuid4())
    theirs = service.save(other, "Another actor's private note", "fact")["memory"]["id"]
    missing = str(uuid.uuid4())
    answers = [signed_in.get(f"/ui/memories/{memory_id}") for memory_id in (theirs, missing)]
    assert [answer.status_code for answer in answers] == [404, 404]
    assert answers[0].text.replace(theirs, "ID") == answers[1].text.replace(missing, "ID")
    assert "Another actor" not in answers[0].text
    page = signed_in.get(f"/ui/memories/{theirs}")
    token = csrf_of(page.text)
    for action in ("delete", "restore", "edit", "reinforce", "archive"):
        response = signed_in.post(
            f"/ui/memories/{theirs}/{action}",
            data={CSRF_FIELD: token, "content": "hijacked", "evidence": "mine", "reason": "x"},
            headers=SAME_ORIGIN,
            follow_redirects=False,
        )
        assert response.status_code == 404, action
    assert service.list_memories(other)["memories"][0]["content"] == "Another actor's private note"
    assert signed_in.get("/ui/memories/not-a-uuid").status_code == 404


# -- user text is inert, every page has the security headers ------------------------------------

PAYLOADS = [
    "<script>alert('xss')</script> deploys with make",
    '<img src=x onerror="alert(1)"> prefers tabs',
    "[docs](javascript:alert(2)) javascript:alert(2) links",
    '"><svg onload=alert(3)> quoting',
]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)


def assert_inert(html: str) -> None:
    """No markup of a payload came through: no inline script, no element with an event
    handler, no javascript: link, no inline style (CSP refuses those anyway)."""
    assert INLINE_SCRIPT.search(html) is None
    assert EVENT_HANDLER.search(html) is None
    assert "<img" not in html
    assert "<svg onload" not in html
    assert 'href="javascript:' not in html.lower()
    assert "style=" not in html


def assert_secure_headers(response: Any, *, page: bool = True) -> None:
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "script-src 'self';" in csp
    assert "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    if page:
        assert response.headers["cache-control"] == "no-store"


def test_payloads_render_as_text_on_every_page_they_reach(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    ids = [
        service.save(principal, text, "fact", context="<b>ctx</b> <script>x()</script>")["memory"][
            "id"
        ]
        for text in PAYLOADS
    ]
    # a version history whose diff holds a payload
    service.update(principal, ids[0], {"content": "<script>alert('v2')</script> deploys"})
    pages = [
        "/ui/search?q=deploys+tabs+links+quoting",
        "/ui/search/results?q=deploys+tabs+links+quoting",
        "/ui/memories",
        "/ui/memories?status=all&text=%3Cscript%3E",
        *(f"/ui/memories/{memory_id}" for memory_id in ids),
    ]
    for path in pages:
        response = signed_in.get(path)
        assert response.status_code == 200, path
        assert_inert(response.text)
        assert_secure_headers(response)
    search = signed_in.get("/ui/search/results?q=deploys+tabs+links+quoting").text
    assert "&lt;img src=x onerror=" in search
    memory = signed_in.get(f"/ui/memories/{ids[0]}").text
    assert "&lt;script&gt;alert(&#39;v2&#39;)&lt;/script&gt;" in memory
    assert "&lt;b&gt;ctx&lt;/b&gt;" in memory  # the context's name


def test_direction_overrides_in_stored_text_are_shown_as_inert_markers(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """The services refuse bidirectional overrides, but a database may hold older text with
    them (an import, a manual edit): the page neither reorders text with them nor hides them."""
    memory_id = service.save(principal, "The file is named harmless", "fact")["memory"]["id"]
    planted = "The file is named \u202egnp.exe\u202c harmless \u2066x\u2069"
    with connect() as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET properties = jsonb_set(properties, '{content}', "
            "to_jsonb(%s::text)) WHERE canonical_id = %s",
            (planted, memory_id),
        )
    for path in (f"/ui/memories/{memory_id}", "/ui/memories"):
        html = signed_in.get(path).text
        for char in "\u202e\u202c\u2066\u2069":
            assert char not in html, path
        assert "⟪U+202E⟫" in html
        assert "<bdi" in html


def test_every_page_has_the_security_headers(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "A memory to look at", "fact")["memory"]["id"]
    paths = [
        "/ui/",
        "/ui/search",
        "/ui/memories",
        f"/ui/memories/{memory_id}",
        f"/ui/memories/{uuid.uuid4()}",  # the 404 page
        "/ui/stats",
        "/ui/signin",
        "/ui/duplicates",
        "/ui/contexts",
        "/ui/injections",
        "/ui/capture",
        "/ui/global",  # 403 for this token
        "/ui/verify",
        "/ui/verify?claim=a+memory",
        "/ui/memories?status=archived&importance=high",
        "/ui/no-such-page",  # 404
    ]
    for path in paths:
        response = signed_in.get(path, follow_redirects=False)
        assert response.status_code in (200, 303, 403, 404), path
        assert_secure_headers(response)
        assert_inert(response.text)
    for static in ("/ui/static/dashboard.css", "/ui/static/dashboard.js"):
        response = signed_in.get(static)
        assert response.status_code == 200
        assert_secure_headers(response, page=False)
    signed_out = TestClient(signed_in.app, base_url=BASE).get("/ui/signin")
    assert_secure_headers(signed_out)


# -- emergent-memory ui ------------------------------------------------------------------------


def test_the_ui_command_prints_a_one_time_link_for_the_local_user(
    client: TestClient, service: MemoryService, database_url: str
) -> None:
    local = Principal(uuid.uuid4(), uuid.uuid4())
    service.save(local, "The local user's own memory", "fact")
    env = {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_ACTOR_ID": str(local.actor_id),
        "EMERGENT_MEMORY_PROJECT_ID": str(local.project_id),
    }
    result = CliRunner().invoke(cli, ["ui", "--no-open", "--url", "http://127.0.0.1:1/"], env=env)
    assert result.exit_code == 0, result.output
    link = result.stdout.strip()
    match = re.fullmatch(r"http://127\.0\.0\.1:1/ui/link/([A-Za-z0-9_-]{43})", link)
    assert match, link
    assert "works once" in result.stderr
    assert "no emergent-memory server answers at http://127.0.0.1:1" in result.stderr
    redeemed = client.get(f"/ui/link/{match.group(1)}", follow_redirects=False)
    assert redeemed.status_code == 303
    page = client.get("/ui/memories")
    assert "The local user&#39;s own memory" in page.text
    assert (
        'id="delete"'
        in client.get("/ui/memories/" + service.list_memories(local)["memories"][0]["id"]).text
    )
    assert client.get(f"/ui/link/{match.group(1)}").status_code == 401  # once only
    # the local user's other projects are theirs to look at: the header offers them
    elsewhere = Principal(local.actor_id, uuid.uuid4())
    service.save(elsewhere, "The local user's memory saved in another repository", "preference")
    page = client.get("/ui/memories")
    assert f'<option value="{elsewhere.project_id}"' in page.text
    assert client.get(f"/ui/memories?project={elsewhere.project_id}").status_code == 200


def test_the_ui_command_makes_a_read_only_link_when_asked(
    client: TestClient, service: MemoryService, database_url: str
) -> None:
    local = Principal(uuid.uuid4(), uuid.uuid4())
    memory_id = service.save(local, "A memory to read only", "fact")["memory"]["id"]
    env = {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_ACTOR_ID": str(local.actor_id),
        "EMERGENT_MEMORY_PROJECT_ID": str(local.project_id),
    }
    result = CliRunner().invoke(cli, ["ui", "--no-open", "--read-only"], env=env)
    assert result.exit_code == 0, result.output
    secret = result.stdout.strip().rsplit("/", 1)[1]
    assert result.stdout.startswith("http://127.0.0.1:8765/ui/link/")
    assert client.get(f"/ui/link/{secret}", follow_redirects=False).status_code == 303
    page = client.get(f"/ui/memories/{memory_id}").text
    assert "A memory to read only" in page
    assert 'id="delete"' not in page


# -- possible duplicates and bulk changes --------------------------------------------------------

FRIDAYS = "Deploys to production happen on Fridays"
THURSDAYS = "Deploys to production happen on Thursdays"


@pytest.fixture
def close_service(make_service: Callable[..., MemoryService]) -> MemoryService:
    """A service whose duplicate check flags FRIDAYS / THURSDAYS as a possible duplicate."""
    return make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)


@pytest.fixture
def dup_client(close_service: MemoryService, sessions: DashboardSessions) -> Iterator[TestClient]:
    app = build_app(close_service, sessions)
    with TestClient(app, base_url=BASE) as test_client:
        yield test_client


def open_pair(client: TestClient) -> tuple[str, str, str]:
    """The first open pair on the page: (pair id, newer memory id, existing memory id)."""
    page = client.get("/ui/duplicates").text
    pair = re.search(r'action="/ui/duplicates/([0-9a-f-]{36})"', page)
    keeps = re.findall(r'name="keep" value="([0-9a-f-]{36})"', page)
    assert pair, page
    return pair.group(1), keeps[0], keeps[1]


def test_a_possible_duplicate_is_decided_from_its_page(
    dup_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    old = close_service.save(principal, FRIDAYS, "fact")["memory"]["id"]
    new = close_service.save(principal, THURSDAYS, "fact")["memory"]["id"]
    assert sign_in(dup_client, token_for(principal)).status_code == 303
    page = dup_client.get("/ui/duplicates")
    assert FRIDAYS in page.text
    assert THURSDAYS in page.text
    pair_id, newer, existing = open_pair(dup_client)
    assert (newer, existing) == (new, old)
    decided = dup_client.post(
        f"/ui/duplicates/{pair_id}",
        data={
            CSRF_FIELD: csrf_of(page.text),
            "decision": "supersede",
            "keep": new,
            "content": "ignored unless merging",
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert decided.status_code == 303, decided.text
    assert decided.headers["location"] == f"/ui/duplicates?done=decided&undo={pair_id}"
    assert [m["id"] for m in close_service.list_memories(principal)["memories"]] == [new]
    after = dup_client.get(decided.headers["location"]).text
    assert 'id="no-duplicates"' in after
    assert 'id="pending-pairs"' not in after  # nothing waits: no count in the navigation
    assert "Decision recorded." in after
    # one click takes it back: the superseded memory is active again, the pair waits again
    undo = re.search(r'action="(/ui/duplicates/[0-9a-f-]{36}/undo)"', after)
    assert undo is not None, after
    assert undo.group(1) == f"/ui/duplicates/{pair_id}/undo"
    undone = dup_client.post(
        undo.group(1),
        data={CSRF_FIELD: csrf_of(after)},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert undone.status_code == 303, undone.text
    assert undone.headers["location"] == "/ui/duplicates?done=undone"
    again = dup_client.get(undone.headers["location"]).text
    assert "Decision undone" in again
    assert 'id="undo-decision"' not in again
    assert open_pair(dup_client)[0] == pair_id
    assert {m["id"] for m in close_service.list_memories(principal)["memories"]} == {new, old}
    # the count in every page's navigation, and why the pair waits
    assert re.search(r'id="pending-pairs"[^>]*>1</span>', again), again
    assert 'Why it is here: <bdi dir="auto">the same subject with another value' in again
    # an undo of what is no longer decided says so, and changes nothing
    twice = dup_client.post(undo.group(1), data={CSRF_FIELD: csrf_of(again)}, headers=SAME_ORIGIN)
    assert twice.status_code == 400
    assert "nothing to undo" in twice.text


def test_keep_both_closes_the_pair_whatever_the_form_sends_along(
    dup_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    close_service.save(principal, FRIDAYS, "fact")
    close_service.save(principal, THURSDAYS, "fact")
    assert sign_in(dup_client, token_for(principal)).status_code == 303
    page = dup_client.get("/ui/duplicates").text
    pair_id, newer, _ = open_pair(dup_client)
    decided = dup_client.post(
        f"/ui/duplicates/{pair_id}",
        data={CSRF_FIELD: csrf_of(page), "decision": "keep_both", "keep": newer, "content": ""},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert decided.status_code == 303, decided.text
    assert close_service.list_memories(principal)["count"] == 2


def test_a_read_only_token_cannot_decide_a_duplicate(
    dup_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    close_service.save(principal, FRIDAYS, "fact")
    close_service.save(principal, THURSDAYS, "fact")
    assert sign_in(dup_client, token_for(principal, READ)).status_code == 303
    page = dup_client.get("/ui/duplicates").text
    assert FRIDAYS in page
    assert "/ui/duplicates/" not in page  # no decision form
    duplicates = DuplicateService(close_service.pool, close_service)
    [pair] = duplicates.open(principal)["pairs"]
    forged = dup_client.post(
        f"/ui/duplicates/{pair['id']}",
        data={CSRF_FIELD: csrf_of(page), "decision": "keep_both"},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert forged.status_code == 403
    assert [p["id"] for p in duplicates.open(principal)["pairs"]] == [pair["id"]]


def test_bulk_delete_and_restore_change_only_the_callers_memories(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    mine = [
        service.save(principal, f"Bulk memory number {i}", "fact")["memory"]["id"] for i in "ab"
    ]
    other = Principal(uuid.uuid4(), uuid.uuid4())
    theirs = service.save(other, "Someone else's memory", "fact")["memory"]["id"]
    page = signed_in.get("/ui/memories")
    assert f'value="{mine[0]}"' in page.text  # a checkbox per memory
    token = csrf_of(page.text)
    deleted = signed_in.post(
        "/ui/memories/bulk",
        data={
            CSRF_FIELD: token,
            "action": "delete",
            "ids": mine,
            "back": "/ui/memories",
            "confirmed": "yes",
            "expected": "2",
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert deleted.status_code == 303
    assert deleted.headers["location"].startswith("/ui/memories?done=bulk_delete&n=2&change=")
    assert service.list_memories(principal)["count"] == 0
    mixed = signed_in.post(
        "/ui/memories/bulk",
        data={
            CSRF_FIELD: token,
            "action": "restore",
            "ids": [mine[0], theirs],
            "confirmed": "yes",
            "expected": "2",
        },
        headers=SAME_ORIGIN,
    )
    assert mixed.status_code == 200
    assert "Restored 1 memory; 1 not:" in mixed.text
    assert theirs in mixed.text
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [mine[0]]
    assert service.list_memories(other)["count"] == 1  # untouched
    forged = signed_in.post(
        "/ui/memories/bulk",
        data={"action": "delete", "ids": [mine[0]]},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert forged.status_code == 403
    assert service.list_memories(principal)["count"] == 1


# -- contexts, the injection log, stats, capture -------------------------------------------------


def test_contexts_are_listed_inert_and_renamed_and_reprioritized(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The frontend uses Svelte", "fact", context="<i>front</i>end")
    page = signed_in.get("/ui/contexts")
    assert page.status_code == 200
    assert_inert(page.text)
    assert "&lt;i&gt;front&lt;/i&gt;end" in page.text
    context_id = re.search(r'action="/ui/contexts/([0-9a-f-]{36})"', page.text)
    assert context_id
    changed = signed_in.post(
        f"/ui/contexts/{context_id.group(1)}",
        data={CSRF_FIELD: csrf_of(page.text), "name": "web-ui", "priority": "90"},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert changed.status_code == 303, changed.text
    [context] = BrowseService(service.pool).contexts(principal)
    assert (context["name"], context["priority"], context["memory_count"]) == ("web-ui", 90, 1)
    bad = signed_in.post(
        f"/ui/contexts/{context_id.group(1)}",
        data={CSRF_FIELD: csrf_of(page.text), "priority": "101"},
        headers=SAME_ORIGIN,
    )
    assert bad.status_code == 400
    assert "priority" in bad.text


def test_the_injection_log_shows_what_went_into_a_session_inert(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    from tests.test_injection import make_injection

    service.save(principal, "<script>alert(1)</script> The user prefers pnpm", "preference")
    make_injection(service).context(
        principal, session_id="session-<img src=x onerror=alert(1)>", event="session_start"
    )
    page = signed_in.get("/ui/injections")
    assert page.status_code == 200
    assert_inert(page.text)
    assert "session-&lt;img src=x onerror=alert(1)&gt;" in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; The user prefers pnpm" in page.text
    assert ">session start<" in page.text


def test_the_injection_log_shows_prompts_that_got_nothing_and_what_was_injected(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
) -> None:
    from tests.test_injection import make_injection

    injection = make_injection(service)
    memory = service.save(principal, "The staging database listens on port 5432", "fact")
    memory_id = memory["memory"]["id"]
    sid = "session-log"
    injection.context(principal, session_id=sid, event="session_start")
    payload = "<img src=x onerror=alert(1)> what is the weather in Lisbon tomorrow"
    injection.context(principal, session_id=sid, event="prompt", prompt=payload)
    secret = "deploy with the token ghp_abcdefghijklmnopqrstuvwxyzABCDEF123456 please"
    injection.context(principal, session_id=sid, event="prompt", prompt=secret)
    long_prompt = "Explain the staging rollout step " + "again and again " * 400
    injection.context(principal, session_id=sid, event="prompt", prompt=long_prompt)
    service.update(principal, memory_id, {"content": "The staging database listens on port 6543"})
    other = Principal(uuid.uuid4(), principal.project_id)
    injection.context(other, session_id=sid, event="prompt", prompt="their own words here")
    page = signed_in.get("/ui/injections", params={"session": sid})
    assert page.status_code == 200
    assert_inert(page.text)
    html = page.text
    assert "&lt;img src=x onerror=alert(1)&gt; what is the weather in Lisbon" in html
    assert "Nothing relevant: no memory reached the relevance floor." in html
    assert "Prompt withheld: it held a secret." in html
    assert "ghp_" not in html
    assert hashlib.sha256(secret.encode()).hexdigest()[:16] in html
    assert "listens on port 5432" in html  # what the agent received
    assert "port 6543" not in html
    assert "edited since" in html
    assert "their own words" not in html
    # a long prompt: its start, and the part the log keeps behind a disclosure
    assert f"(its first 2000 of {len(long_prompt)} characters are kept)" in html
    assert html.count("again and again") > 100


def test_a_log_row_of_before_the_prompt_was_recorded_says_so(
    signed_in: TestClient, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    with connect() as conn:
        conn.execute(
            "INSERT INTO kb.injections (actor_id, project_id, session_id, client, event, "
            "memory_ids, estimated_tokens, budget_tokens) "
            "VALUES (%s, %s, 'session-old', 'api', 'prompt', ARRAY[gen_random_uuid()], 30, 500)",
            (principal.actor_id, principal.project_id),
        )
    page = signed_in.get("/ui/injections")
    assert "not recorded (before this version)" in page.text
    assert "1 no longer visible" in page.text


def test_stats_draw_svg_charts_with_escaped_labels(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "<script>x</script> most used memory", "fact")
    service.save(principal, "A preference that nobody used", "preference")
    service.recall(principal, "most used memory")
    page = signed_in.get("/ui/stats")
    assert page.status_code == 200
    assert_inert(page.text)
    for chart in (
        "chart-growth",
        "chart-deleted",
        "chart-project",
        "chart-category",
        "chart-status",
        "chart-scope",
        "chart-use",
    ):
        assert f'<svg class="chart" id="{chart}"' in page.text, chart
    assert "&lt;script&gt;x&lt;/script&gt; most used" in page.text


def test_stats_count_deletions_per_day_and_memories_per_project(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    gone = service.save(principal, "A memory deleted for the stats test", "fact")
    service.delete(principal, gone["memory"]["id"])
    service.save(principal, "A memory of this project for the stats test", "fact")
    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    service.save(elsewhere, "A user-wide memory saved in another project", "preference")
    page = signed_in.get("/ui/stats").text
    deleted = page[page.index('id="chart-deleted"') :]
    deleted = deleted[: deleted.index("</svg>")]
    assert "Memories deleted per day (last 90 days)" in deleted
    assert ">1</text>" in deleted  # the day's one deletion is the top of the scale
    projects = page[page.index('id="chart-project"') :]
    projects = projects[: projects.index("</svg>")]
    assert "this project: 1" in projects
    assert f"project {str(elsewhere.project_id)[:8]}: 1" in projects


def test_the_capture_page_shows_the_queue_and_usage(
    service: MemoryService, sessions: DashboardSessions, principal: Principal, token_for: Any
) -> None:
    app = build_app(service, sessions, capture_on=True)
    with TestClient(app, base_url=BASE) as client:
        assert sign_in(client, token_for(principal)).status_code == 303
        page = client.get("/ui/capture")
    assert page.status_code == 200
    assert 'id="capture-counts"' in page.text
    assert '<svg class="chart" id="chart-cost"' in page.text
    assert "capture is off" not in page.text


def test_the_capture_page_says_capture_is_off_and_how_to_turn_it_on(
    signed_in: TestClient,
) -> None:
    page = signed_in.get("/ui/capture")
    assert page.status_code == 200
    assert "Automatic capture is off" in page.text
    assert "<code>EMERGENT_MEMORY_ANTHROPIC_API_KEY</code>" in page.text
    assert 'id="capture-no-history"' in page.text
    assert 'id="capture-counts"' not in page.text  # no row of zeros


def test_the_capture_page_off_still_shows_what_capture_did(
    signed_in: TestClient, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    with connect() as conn:
        conn.execute(
            "INSERT INTO kb.llm_calls (actor_id, purpose, model, input_tokens, output_tokens, "
            "outcome) VALUES (%s, 'gate', 'claude-haiku-4-5', 1200, 30, 'ok')",
            (principal.actor_id,),
        )
        conn.execute(
            "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
            "first_turn, end_turn, status, attempts, last_error) "
            "VALUES (%s, %s, 'session-dead', 'claude-code', 0, 4, 'dead', 6, 'gate: HTTP 401')",
            (principal.actor_id, principal.project_id),
        )
    page = signed_in.get("/ui/capture")
    assert "Automatic capture is off" in page.text
    assert 'id="capture-no-history"' not in page.text
    assert "What capture did while it was on is below." in page.text
    assert 'id="capture-counts"' in page.text
    assert "session-dead" in page.text
    assert 'id="llm-usage"' in page.text


@pytest.mark.usefixtures("global_memories_cleanup")
def test_global_memories_have_a_page_for_admin_tokens_only(
    client: TestClient, service: MemoryService, token_for: Callable[..., str]
) -> None:
    admin = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))
    memory_id = service.save(
        admin, "Every team deploys with the release bot", "convention", scope="global"
    )["memory"]["id"]
    reader = Principal(uuid.uuid4(), uuid.uuid4())
    assert sign_in(client, token_for(reader)).status_code == 303
    assert client.get("/ui/global").status_code == 403
    page = client.get(f"/ui/memories/{memory_id}").text
    assert "Every team deploys with the release bot" in page
    assert 'id="delete"' not in page  # a global memory is changed by admins only
    client.cookies.clear()
    assert sign_in(client, token_for(admin, READ, WRITE, ADMIN)).status_code == 303
    listed = client.get("/ui/global")
    assert listed.status_code == 200
    assert "Every team deploys with the release bot" in listed.text
    assert 'href="/ui/global"' in listed.text
    assert 'id="delete"' in client.get(f"/ui/memories/{memory_id}").text


# -- a memory's page: edit, delete, restore, history, supersession -------------------------------


def test_edit_delete_and_restore_from_the_memory_page(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The API listens on port 8080", "fact")["memory"]["id"]
    url = f"/ui/memories/{memory_id}"
    page = signed_in.get(url).text
    assert 'id="edit-form"' in page
    token = csrf_of(page)
    edited = signed_in.post(
        f"{url}/edit",
        data={
            CSRF_FIELD: token,
            "content": "The API listens on port <b>9090</b>",
            "category": "convention",
            "confidence": "0.8",
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert edited.status_code == 303
    assert edited.headers["location"] == f"{url}?done=updated"
    page = signed_in.get(f"{url}?done=updated").text
    assert "Saved: the memory has a new version." in page
    assert "<del>8080</del><ins>&lt;b&gt;9090&lt;/b&gt;</ins>" in page.replace("\n", "")
    assert 'id="memory-category">convention<' in page
    [record] = service.list_memories(principal)["memories"]
    assert (record["content"], record["confidence"]) == ("The API listens on port <b>9090</b>", 0.8)
    bad = signed_in.post(
        f"{url}/edit", data={CSRF_FIELD: token, "content": "  "}, headers=SAME_ORIGIN
    )
    assert bad.status_code == 400  # the memory's page again, with why beside the form
    assert 'id="edit-error"' in bad.text
    assert f'action="{url}/edit"' in bad.text
    deleted = signed_in.post(
        f"{url}/delete", data={CSRF_FIELD: token}, headers=SAME_ORIGIN, follow_redirects=False
    )
    assert deleted.status_code == 303
    page = signed_in.get(url).text
    assert "status-deleted" in page
    assert 'id="restore"' in page
    assert 'id="edit-form"' not in page
    assert service.list_memories(principal)["count"] == 0
    restored = signed_in.post(
        f"{url}/restore", data={CSRF_FIELD: token}, headers=SAME_ORIGIN, follow_redirects=False
    )
    assert restored.status_code == 303
    assert service.list_memories(principal)["count"] == 1


def test_the_supersession_chain_is_shown_both_ways(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    old = service.save(principal, "CI runs on <Jenkins>", "fact")["memory"]["id"]
    new = service.save(principal, "CI runs on GitHub Actions", "fact")["memory"]["id"]
    service.supersede(principal, new, old)
    newer = signed_in.get(f"/ui/memories/{new}").text
    assert 'id="supersedes"' in newer
    assert f'href="/ui/memories/{old}"' in newer
    assert "CI runs on &lt;Jenkins&gt;" in newer
    older = signed_in.get(f"/ui/memories/{old}").text
    assert 'id="superseded-by"' in older
    assert f'href="/ui/memories/{new}"' in older
    assert "status-superseded" in older
    listed = signed_in.get("/ui/memories?status=superseded").text
    assert f'id="link-{old}"' in listed
    assert f'id="link-{new}"' not in listed  # not a row: named as what replaced the old one
    replaced = listed.split(f'id="replaced-{old}"', 1)[1].split("</p>", 1)[0]
    assert f'href="/ui/memories/{new}"' in replaced
    assert "CI runs on GitHub Actions" in replaced
    assert "because someone chose the newer memory" in replaced


def test_over_https_the_session_cookie_is_secure(
    service: MemoryService,
    sessions: DashboardSessions,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    base = "https://dashboard.example"
    with TestClient(build_app(service, sessions), base_url=base) as client:
        response = client.post(
            "/ui/signin",
            data={"token": token_for(principal)},
            headers={"Origin": base},
            follow_redirects=False,
        )
        assert response.status_code == 303
        cookie = response.headers["set-cookie"]
        assert "Secure" in cookie
        assert "HttpOnly" in cookie
        assert client.get("/ui/memories").status_code == 200


def test_a_search_in_the_dashboard_is_not_a_use(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The release branch is called stable", "fact")["memory"][
        "id"
    ]
    for path in ("/ui/search?q=release+branch", "/ui/search/results?q=release+branch"):
        page = signed_in.get(path)
        assert f'href="/ui/memories/{memory_id}"' in page.text
        assert "words rank 1" in page.text
    [record] = service.list_memories(principal)["memories"]
    assert (record["use_count"], record["last_used"]) == (0, None)


def test_a_search_with_nothing_relevant_says_so_and_a_result_shows_its_relevance(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The release branch is called stable", "fact")
    found = signed_in.get("/ui/search/results?q=release+branch").text
    assert re.search(r"relevance 0\.\d{3}", found)
    nothing = signed_in.get("/ui/search/results?q=zebra+quantum+paint").text
    assert 'Nothing relevant to <q><bdi dir="auto">zebra quantum paint</bdi></q>' in nothing
    assert "no memory reaches the relevance floor (0.000)" in nothing


def test_signing_in_again_ends_the_session_the_browser_held(
    signed_in: TestClient,
    principal: Principal,
    token_for: Callable[..., str],
    sessions: DashboardSessions,
) -> None:
    """The browser's new cookie replaces the old one, and the old session ends with it: its
    secret, sent again, opens nothing."""
    first = signed_in.cookies.get(COOKIE)
    assert first
    assert sign_in(signed_in, token_for(principal)).status_code == 303
    second = signed_in.cookies.get(COOKIE)
    assert second
    assert second != first
    assert sessions.live(first) is None
    assert sessions.live(second) is not None
    assert signed_in.get("/ui/memories", follow_redirects=False).status_code == 200
    signed_in.cookies.clear()  # the old cookie, sent again by hand, opens nothing
    signed_in.cookies.set(COOKIE, first, path="/ui")
    assert signed_in.get("/ui/memories", follow_redirects=False).status_code == 303


# -- the lifecycle: importance, validity, evidence, archive, verify -----------------------------


def post(client: TestClient, url: str, token: str, **data: str) -> Any:
    return client.post(
        url, data={CSRF_FIELD: token, **data}, headers=SAME_ORIGIN, follow_redirects=False
    )


def test_the_memory_page_shows_importance_validity_rationale_and_confidences(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(
        principal,
        "The freeze lasts until the release",
        "decision",
        importance="high",
        valid_from="2020-01-01",
        valid_until="2020-02-01",
        rationale="<b>QA</b> asked for it",
    )["memory"]["id"]
    page = signed_in.get(f"/ui/memories/{memory_id}").text
    assert_inert(page)
    assert 'class="badge importance-high"' in page
    assert 'class="badge expired"' in page
    validity = re.search(r'id="memory-validity">(.*?)</dd>', page)
    assert validity
    assert "from 2020-01-01 00:00 until 2020-02-01 00:00 (UTC)" in validity.group(1)
    assert "no longer valid" in validity.group(1)
    assert "&lt;b&gt;QA&lt;/b&gt; asked for it" in page
    assert 'id="memory-effective-confidence"' in page
    assert 'value="2020-01-01"' in page  # the edit form's dates
    assert '<option value="high" selected>' in page
    listed = signed_in.get("/ui/memories?importance=high").text
    assert f'href="/ui/memories/{memory_id}"' in listed
    assert "expired" in listed
    assert (
        f'href="/ui/memories/{memory_id}"' not in signed_in.get("/ui/memories?importance=low").text
    )


def test_edit_changes_importance_validity_and_rationale_only_when_changed(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(
        principal, "Payments use the v1 API", "fact", valid_from="2026-01-01T08:30:00Z"
    )["memory"]["id"]
    url = f"/ui/memories/{memory_id}"
    token = csrf_of(signed_in.get(url).text)
    form = {
        "content": "Payments use the v1 API",
        "category": "fact",
        "confidence": "0.70",
        "importance": "core",
        "valid_from": "2026-01-01",  # the day of the stored time: unchanged
        "valid_until": "2030-03-01",
        "rationale": "v2 ships in <i>March</i>",
    }
    assert post(signed_in, f"{url}/edit", token, **form).status_code == 303
    record = BrowseService(service.pool).get(principal, memory_id)
    assert record["importance"] == "core"
    assert record["valid_from"].startswith("2026-01-01T08:30:00")  # kept its time
    assert record["valid_until"].startswith("2030-03-01T00:00:00")
    assert record["rationale"] == "v2 ships in <i>March</i>"
    cleared = post(signed_in, f"{url}/edit", token, **(form | {"valid_until": "", "rationale": ""}))
    assert cleared.status_code == 303
    record = BrowseService(service.pool).get(principal, memory_id)
    assert (record["valid_until"], record["rationale"]) == (None, None)
    bad = post(signed_in, f"{url}/edit", token, **(form | {"valid_until": "2025-01-01"}))
    assert bad.status_code == 400
    assert "valid_until" in bad.text


def test_reinforce_archive_restore_and_delete_with_a_reason(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The user prefers pnpm", "preference")["memory"]["id"]
    url = f"/ui/memories/{memory_id}"
    page = signed_in.get(url).text
    for form in ('id="reinforce-form"', 'id="archive-form"', 'id="delete-form"'):
        assert form in page
    token = csrf_of(page)
    payload = "<img src=x onerror=alert(1)> pnpm-lock.yaml"
    reinforced = post(signed_in, f"{url}/reinforce", token, evidence=payload)
    assert reinforced.status_code == 303
    assert reinforced.headers["location"] == f"{url}?done=reinforced"
    page = signed_in.get(f"{url}?done=reinforced").text
    assert "Evidence recorded." in page
    assert_inert(page)
    assert "&lt;img src=x onerror=alert(1)&gt; pnpm-lock.yaml" in page
    assert "new evidence" in page
    empty = post(signed_in, f"{url}/reinforce", token, evidence="  ")
    assert empty.status_code == 400
    assert "evidence" in empty.text

    archived = post(signed_in, f"{url}/archive", token, reason="<script>x()</script> moved")
    assert archived.status_code == 303
    page = signed_in.get(f"{url}?done=archived").text
    assert_inert(page)
    assert "status-archived" in page
    assert "&lt;script&gt;x()&lt;/script&gt; moved" in page
    assert 'id="restore"' in page
    assert 'id="reinforce-form"' not in page
    assert service.list_memories(principal, status="archived")["count"] == 1
    assert f'href="{url}"' in signed_in.get("/ui/memories?status=archived").text
    assert f'href="{url}"' not in signed_in.get("/ui/memories").text

    assert post(signed_in, f"{url}/restore", token).status_code == 303
    assert "status-active" in signed_in.get(url).text
    deleted = post(signed_in, f"{url}/delete", token, reason="a duplicate")
    assert deleted.status_code == 303
    page = signed_in.get(url).text
    assert 'id="delete-reason"' in page
    assert "a duplicate" in page
    assert "deleted (a duplicate)" in page


def test_archived_memories_are_restored_in_bulk_from_the_list(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    ids = [
        service.save(principal, f"Archived bulk memory {n}", "fact")["memory"]["id"] for n in "ab"
    ]
    for memory_id in ids:
        service.archive(principal, memory_id)
    page = signed_in.get("/ui/memories?status=archived").text
    assert 'id="bulk-restore"' in page
    restored = signed_in.post(
        "/ui/memories/bulk",
        data={
            CSRF_FIELD: csrf_of(page),
            "action": "restore",
            "ids": ids,
            "confirmed": "yes",
            "expected": "2",
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert restored.status_code == 303
    assert service.list_memories(principal, status="archived")["count"] == 0
    assert service.list_memories(principal)["count"] == 2


def test_a_core_memory_offers_no_archive(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(
        principal, "Never push to main directly", "instruction", importance="core"
    )["memory"]["id"]
    page = signed_in.get(f"/ui/memories/{memory_id}").text
    assert 'id="archive-form"' not in page
    refused = post(signed_in, f"/ui/memories/{memory_id}/archive", csrf_of(page))
    assert refused.status_code == 400
    assert service.list_memories(principal)["count"] == 1


def test_the_verify_page_gives_a_verdict_with_its_matches_inert(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(
        principal, "The staging database listens on port 5433 <b>bold</b>", "fact"
    )["memory"]["id"]
    empty = signed_in.get("/ui/verify")
    assert empty.status_code == 200
    assert 'id="verify-result"' not in empty.text
    assert 'href="/ui/verify" aria-current="page"' in empty.text
    page = signed_in.get(
        "/ui/verify",
        params={"claim": "The staging database listens on port 5433 <b>bold</b>"},
    )
    assert page.status_code == 200
    assert_inert(page.text)
    assert 'id="verdict">confirmed<' in page.text
    assert f'href="/ui/memories/{memory_id}"' in page.text
    assert "&lt;b&gt;bold&lt;/b&gt;" in page.text
    assert "relation-confirms" in page.text
    assert BrowseService(service.pool).get(principal, memory_id)["use_count"] == 0
    bad = signed_in.get("/ui/verify", params={"claim": "x" * 5000})
    assert bad.status_code == 400
    assert "claim" in bad.text


def test_search_includes_archived_memories_only_when_asked_and_answers_as_of(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The old build server is called hudson", "fact")["memory"][
        "id"
    ]
    service.archive(principal, memory_id)
    link = f'href="/ui/memories/{memory_id}"'
    assert link not in signed_in.get("/ui/search/results?q=hudson+build").text
    page = signed_in.get("/ui/search?q=hudson+build&archived=1").text
    assert link in page
    assert 'id="search-archived" name="archived" type="checkbox" value="1" checked' in page
    assert 'class="badge status-archived"' in page  # the result says it is archived
    assert re.search(r"Weighed by: confidence now [01]\.\d\d · recency [01]\.\d\d", page)
    then = signed_in.get("/ui/search?q=hudson+build&as_of=2001-01-01").text
    assert 'id="as-of-note"' in then
    assert link not in then  # recorded after that day
    bad = signed_in.get("/ui/search?q=hudson&as_of=someday")
    assert bad.status_code == 400
    assert "as_of" in bad.text


def test_stats_show_archived_memories_and_importance(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "Always run the tests first", "instruction", importance="core")
    gone = service.save(principal, "The coffee machine is on floor 2", "fact")["memory"]["id"]
    service.archive(principal, gone)
    page = signed_in.get("/ui/stats").text
    assert '<svg class="chart" id="chart-importance"' in page
    archived = re.search(r'<p id="stats-archived">(.*?)</p>', page, re.S)
    assert archived
    assert archived.group(1).startswith("1 archived (by importance: 1 normal)")


def test_an_archived_memory_can_be_deleted_with_a_reason(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The old wiki lives on Confluence", "fact")["memory"]["id"]
    service.archive(principal, memory_id, reason="unused")
    url = f"/ui/memories/{memory_id}"
    page = signed_in.get(url).text
    assert 'id="delete-form"' in page
    assert 'id="archive-form"' not in page
    assert post(signed_in, f"{url}/delete", csrf_of(page), reason="wiki retired").status_code == 303
    deleted = BrowseService(service.pool).get(principal, memory_id)
    assert (deleted["status"], deleted["delete_reason"]) == ("deleted", "wiki retired")


# -- adding a memory by hand ---------------------------------------------------------------


def add_memory(client: TestClient, **fields: str) -> Any:
    """Post the add form as the page would (its CSRF token), with `fields`."""
    token = csrf_of(client.get("/ui/memories/new").text)
    form = {"category": "fact", "scope": "user", **fields}
    return client.post(
        "/ui/memories/new",
        data={CSRF_FIELD: token, **form},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )


def test_add_a_memory_from_the_page(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    page = signed_in.get("/ui/memories/new")
    assert page.status_code == 200
    assert 'id="add-form"' in page.text
    added = add_memory(
        signed_in,
        content="The release <b>train</b> leaves every second Tuesday",
        category="convention",
        scope="project",
        importance="high",
        context="release process",
        rationale="agreed at the retro",
        evidence="retro notes, March",
        valid_from="2026-01-05",
    )
    assert added.status_code == 303
    location = added.headers["location"]
    memory_id = location.removeprefix("/ui/memories/").removesuffix("?done=added")
    [record] = service.list_memories(principal)["memories"]
    assert record["id"] == memory_id
    assert record["content"] == "The release <b>train</b> leaves every second Tuesday"
    assert (record["category"], record["scope"], record["source"]) == (
        "convention",
        "project",
        "explicit",  # a person typed it
    )
    assert (record["importance"], record["rationale"]) == ("high", "agreed at the retro")
    assert record["contexts"] == ["release process"]
    assert record["valid_from"].startswith("2026-01-05")
    shown = signed_in.get(location).text
    assert "Added: a new memory." in shown
    assert "&lt;b&gt;train&lt;/b&gt;" in shown
    assert "<b>train</b>" not in shown
    # the same again: already remembered, the same memory, nothing new
    again = add_memory(
        signed_in,
        content="The release <b>train</b> leaves every second Tuesday",
        category="convention",
        scope="project",
    )
    assert again.headers["location"] == f"/ui/memories/{memory_id}?done=added_unchanged"
    assert "Already remembered" in signed_in.get(again.headers["location"]).text
    assert len(service.list_memories(principal)["memories"]) == 1


def test_adding_a_correction_says_what_it_replaced(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    old = service.save(principal, "The billing service is owned by Sven", "fact")
    added = add_memory(signed_in, content="Correction: the billing service is owned by Jun")
    location = added.headers["location"]
    assert location.endswith("?done=added_replaced")
    page = signed_in.get(location).text
    assert "Added in place of a memory" in page
    assert old["memory"]["id"] in page  # what it superseded, linked
    [active] = service.list_memories(principal)["memories"]
    assert active["content"] == "Correction: the billing service is owned by Jun"


def test_adding_another_value_says_it_was_kept_beside_a_conflict(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    old = service.save(principal, "The orders staging database listens on port 5432", "fact")
    added = add_memory(signed_in, content="The orders staging database listens on port 5433")
    location = added.headers["location"]
    assert location.endswith("?done=added_conflict")
    page = signed_in.get(location).text
    assert "linked as a conflict" in page
    assert old["memory"]["id"] in page  # the memory page names the other side
    ids = {m["id"] for m in service.list_memories(principal)["memories"]}
    assert old["memory"]["id"] in ids
    assert len(ids) == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"content": "   "}, "content"),
        ({"content": "x" * 2001}, "2000"),
        ({"content": "A fine memory", "category": "gossip"}, "category must be one of"),
        ({"content": "A fine memory", "scope": "global"}, "scope must be user or project"),
        ({"content": "A fine memory", "importance": "urgent"}, "importance must be one of"),
        ({"content": "A fine memory", "valid_from": "next week"}, "valid_from"),
        (
            {"content": "A fine memory", "valid_from": "2026-02-01", "valid_until": "2026-01-01"},
            "valid_until",
        ),
    ],
)
def test_a_refused_addition_keeps_what_was_typed_and_writes_nothing(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    fields: dict[str, str],
    message: str,
) -> None:
    refused = add_memory(signed_in, rationale="kept <i>as typed</i>", **fields)
    assert refused.status_code == 400
    assert 'id="add-error"' in refused.text
    assert message in refused.text
    assert "kept &lt;i&gt;as typed&lt;/i&gt;</textarea>" in refused.text  # kept, escaped
    if fields["content"].strip() and len(fields["content"]) <= 2000:
        assert f">{fields['content']}</textarea>" in refused.text
    assert service.list_memories(principal)["memories"] == []


def test_a_secret_is_refused_and_not_sent_back(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    secret = "AKIA" + "Q7RN4XW2ZB5TLM3P"
    refused = add_memory(signed_in, content=f"The deploy key is {secret}", rationale="for CI")
    assert refused.status_code == 400
    assert secret not in refused.text
    assert ">for CI</textarea>" in refused.text
    assert service.list_memories(principal)["memories"] == []


def test_a_reader_cannot_add(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    page = client.get("/ui/memories/new")
    assert page.status_code == 403
    assert 'id="add-form"' not in page.text
    forged = client.post(
        "/ui/memories/new",
        data={CSRF_FIELD: csrf_of(page.text), "content": "a reader's", "category": "fact"},
        headers=SAME_ORIGIN,
    )
    assert forged.status_code == 403
    assert service.list_memories(principal)["memories"] == []


# -- downloading one's own memories --------------------------------------------------------


@pytest.mark.usefixtures("global_memories_cleanup")
def test_export_downloads_only_the_users_own_memories_in_the_cli_format(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    owner_pool: ConnectionPool,
) -> None:
    from emergent_memory.transfer import FORMAT_NAME, import_records

    mine = service.save(principal, "The export test's own memory <b>here</b>", "fact")
    elsewhere = Principal(principal.actor_id, uuid.uuid4())  # the same user, another project
    service.save(elsewhere, "The export test's user-wide preference", "preference")
    service.save(elsewhere, "The export test's other-project fact", "fact", scope="project")
    stranger = Principal(uuid.uuid4(), principal.project_id)
    service.save(stranger, "A stranger's memory in the same project", "fact", scope="project")
    admin = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))
    service.save(admin, "A global memory everyone reads", "convention", scope="global")

    response = signed_in.get("/ui/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert response.headers["content-disposition"].startswith(
        'attachment; filename="emergent-memory-export-'
    )
    records = [json.loads(line) for line in response.text.splitlines()]
    assert records[0]["kind"] == "header"
    assert records[0]["format"] == FORMAT_NAME
    objects = [r for r in records if r["kind"] == "object"]
    assert {r["actor_id"] for r in objects} == {str(principal.actor_id)}
    contents = {r["properties"].get("content") for r in objects}
    assert "The export test's own memory <b>here</b>" in contents
    assert "The export test's user-wide preference" in contents  # user scope: every project
    assert "The export test's other-project fact" not in contents  # not seen from here
    assert "A stranger's memory in the same project" not in contents
    assert "A global memory everyone reads" not in contents
    assert any(r["canonical_id"] == mine["memory"]["id"] for r in objects)
    # the file is what `emergent-memory import` reads: this database already holds every row
    with owner_pool.connection() as conn, conn.transaction(force_rollback=True):
        counts = import_records(conn, records)
    assert counts.inserted == 0
    assert counts.already_present == len(records) - 1  # all but the header


def test_a_reader_may_export_and_nobody_signed_out_can(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    assert client.get("/ui/export", follow_redirects=False).status_code == 303  # to sign in
    service.save(principal, "A reader's own memory to download", "fact")
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    response = client.get("/ui/export")
    assert response.status_code == 200
    assert "A reader's own memory to download" in response.text


def test_the_neighbour_drawing_names_each_relation_and_draws_twelve_at_most() -> None:
    from emergent_memory.dashboard.neighbours import MAX_DRAWN, neighbour_graph

    assert neighbour_graph({"content": "alone", "relationships": []}) is None
    relationships = [
        {"type": "SUPERSEDES", "direction": "out", "other_id": "a", "other_type": "Memory",
         "other_label": "old value"},
        {"type": "SUPERSEDES", "direction": "in", "other_id": "b", "other_type": "Memory",
         "other_label": "newer value"},
        {"type": "CONFLICTS_WITH", "direction": "in", "other_id": "c", "other_type": "Memory",
         "other_label": "another value"},
        {"type": "DERIVED_FROM", "direction": "out", "other_id": "d", "other_type": "Episode",
         "other_label": "session x, turns 1-4"},
        {"type": "BELONGS_TO_CONTEXT", "direction": "out", "other_id": "e",
         "other_type": "Context", "other_label": "release & ops"},
        {"type": "MENTIONS", "direction": "in", "other_id": "f", "other_type": "Memory",
         "other_label": "hidden\u202eevil"},
    ]  # fmt: skip
    drawing = neighbour_graph({"content": "x " * 40, "relationships": relationships})
    assert drawing is not None
    assert [n.relation for n in drawing.nodes] == [
        "supersedes",
        "superseded by",
        "conflicts with",
        "derived from",
        "in context",
        "mentions (to it)",
    ]
    assert [n.href for n in drawing.nodes] == [
        "/ui/memories/a",
        "/ui/memories/b",
        "/ui/memories/c",
        None,  # an episode has no page
        "/ui/memories?context=release+%26+ops",
        "/ui/memories/f",
    ]
    assert drawing.nodes[-1].label == "hiddenevil"  # no direction-changing character drawn
    assert all(len(line) <= 30 for line in drawing.lines)
    crowded = neighbour_graph({"content": "c", "relationships": relationships * 3})
    assert crowded is not None
    assert (len(crowded.nodes), crowded.more) == (MAX_DRAWN, 18 - MAX_DRAWN)


# -- the project a page shows --------------------------------------------------------------


def test_a_single_project_sign_in_names_its_project_and_refuses_another(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    assert sign_in(client, token_for(principal)).status_code == 303
    page = client.get("/ui/memories").text
    assert f'title="project {principal.project_id}">Project <code>' in page
    assert 'id="project-choice"' not in page
    assert client.get(f"/ui/memories?project={principal.project_id}").status_code == 200
    other = client.get(f"/ui/memories?project={uuid.uuid4()}")
    assert other.status_code == 403
    assert "memory:any-project" in other.text
    assert client.get("/ui/memories?project=not-an-id").status_code == 400
    # a project remembered by another session's cookie is not this one's to choose
    client.cookies.set("em_project", str(uuid.uuid4()), path="/ui")
    page = client.get("/ui/memories").text
    assert f'title="project {principal.project_id}"' in page


def test_switch_projects_with_an_any_project_sign_in(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    from emergent_memory.auth.principal import ANY_PROJECT

    there = Principal(principal.actor_id, uuid.uuid4(), principal.scopes)
    service.save(principal, "A project memory of the first project", "fact", scope="project")
    service.save(there, "A project memory of the second project", "fact", scope="project")
    service.save(there, "A user memory saved in the second project", "preference")
    stranger = Principal(uuid.uuid4(), there.project_id)
    service.save(stranger, "A stranger's memory of the second project", "fact", scope="project")
    assert sign_in(client, token_for(principal, READ, WRITE, ANY_PROJECT)).status_code == 303

    home = client.get("/ui/memories").text
    assert 'id="project-choice"' in home  # both projects offered
    assert f'<option value="{there.project_id}"' in home
    assert f'<option value="{principal.project_id}" selected>' in home
    assert "A project memory of the first project" in home
    assert "A project memory of the second project" not in home
    # a user-scope memory saved elsewhere says where, in the list and on its page
    assert f'title="saved in project {there.project_id}">from project' in home
    habit = next(
        m["id"]
        for m in service.list_memories(principal, limit=50)["memories"]
        if m["content"] == "A user memory saved in the second project"
    )
    assert "(another project: a user-scope memory" in client.get(f"/ui/memories/{habit}").text

    switched = client.get(f"/ui/memories?project={there.project_id}")
    assert switched.status_code == 200
    assert f'<option value="{there.project_id}" selected>' in switched.text
    assert "A project memory of the second project" in switched.text
    assert "A user memory saved in the second project" in switched.text
    assert "A project memory of the first project" not in switched.text
    assert "A stranger's memory" not in switched.text  # the actor is still the token's
    # remembered: the next page (no ?project=) and a form's change act there too
    assert "A project memory of the second project" in client.get("/ui/memories").text
    added = add_memory(client, content="Added while looking at the second project", scope="project")
    assert added.status_code == 303
    seen_there = {m["content"] for m in service.list_memories(there, limit=50)["memories"]}
    assert "Added while looking at the second project" in seen_there
    seen_home = {m["content"] for m in service.list_memories(principal, limit=50)["memories"]}
    assert "Added while looking at the second project" not in seen_home
    # back home
    back = client.get(f"/ui/memories?project={principal.project_id}").text
    assert "A project memory of the first project" in back


def test_all_projects_lists_the_actors_memories_of_every_project_for_reading(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    from emergent_memory.auth.principal import ANY_PROJECT

    there = Principal(principal.actor_id, uuid.uuid4(), principal.scopes)
    third = Principal(principal.actor_id, uuid.uuid4(), principal.scopes)
    service.save(principal, "All-projects test: the first project fact", "fact", scope="project")
    other = service.save(there, "All-projects test: the second project fact", "fact",
                         scope="project")  # fmt: skip
    service.save(third, "All-projects test: the third project <b>fact</b>", "fact",
                 scope="project")  # fmt: skip
    service.save(there, "All-projects test: a user-wide habit", "preference")
    stranger = Principal(uuid.uuid4(), there.project_id)
    service.save(stranger, "All-projects test: a stranger fact", "fact", scope="project")
    strangers_own = Principal(stranger.actor_id, uuid.uuid4())
    service.save(strangers_own, "All-projects test: a stranger elsewhere", "fact", scope="project")
    assert sign_in(client, token_for(principal, READ, WRITE, ANY_PROJECT)).status_code == 303

    every = client.get("/ui/memories?project=all")
    assert every.status_code == 200
    page = every.text
    assert '<option value="all" selected>All projects</option>' in page
    # a project where the actor holds only project-scope memories (and no session) is listed
    assert f'<option value="{third.project_id}"' in page
    assert f'<option value="{there.project_id}"' in page
    assert f'<option value="{strangers_own.project_id}"' not in page  # another actor's project
    assert 'id="all-projects"' in page
    for text in ("the first project fact", "the second project fact", "a user-wide habit",
                 "the third project &lt;b&gt;fact&lt;/b&gt;"):  # fmt: skip
        assert f"All-projects test: {text}" in page, text
    assert "a stranger fact" not in page
    assert "<strong>4</strong> memories match" in page
    # each project-scope memory says its project, and its link opens that project
    badge = f'title="saved in project {there.project_id}">project <bdi dir="auto">'
    assert f"{badge}{str(there.project_id)[:8]}</bdi>" in page
    assert f'/ui/memories/{other["memory"]["id"]}?project={there.project_id}"' in page
    # for reading: no change controls, no add or import link, and a change is refused
    assert 'id="bulk-form"' not in page
    assert 'id="add-link"' not in page
    filtered = client.get("/ui/memories?project=all&text=second").text
    assert "second project fact" in filtered
    assert "first project fact" not in filtered
    assert '<input type="hidden" name="project" value="all">' in filtered
    # not remembered: the next page shows the project the browser was in
    assert "second project fact" not in client.get("/ui/memories").text
    # another page asked for all projects goes to Browse's view of them
    moved = client.get("/ui/stats?project=all", follow_redirects=False)
    assert moved.status_code == 303
    assert moved.headers["location"] == "/ui/memories?project=all"
    form = client.get("/ui/memories/new").text
    refused = client.post(
        "/ui/memories/new?project=all",
        data={CSRF_FIELD: csrf_of(form), "content": "Saved from all projects?", "category": "fact"},
        headers=SAME_ORIGIN,
    )
    assert refused.status_code == 409
    assert "All projects is a view for reading" in refused.text
    assert all(
        m["content"] != "Saved from all projects?"
        for m in service.list_memories(principal, limit=50)["memories"]
    )
    # the user-scope choice: Browse filtered to them (the same in every project)
    mine = client.get("/ui/stats?project=user", follow_redirects=False)
    assert mine.status_code == 303
    assert mine.headers["location"] == "/ui/memories?scope=user"
    shown = client.get("/ui/memories?scope=user").text
    assert '<option value="user" selected>User scope</option>' in shown
    assert "a user-wide habit" in shown
    assert "first project fact" not in shown


def test_all_projects_needs_a_sign_in_that_may_choose_projects(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    there = Principal(principal.actor_id, uuid.uuid4())
    service.save(there, "Only-one-project test: another project fact", "fact", scope="project")
    assert sign_in(client, token_for(principal)).status_code == 303
    refused = client.get("/ui/memories?project=all")
    assert refused.status_code == 403
    assert "memory:any-project" in refused.text
    assert "another project fact" not in refused.text
    assert client.get("/ui/memories?project=everything").status_code == 400


def test_a_memory_page_says_what_each_use_was(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    from tests.test_injection import make_injection

    memory_id = service.save(principal, "The release train leaves every Tuesday", "convention")[
        "memory"
    ]["id"]
    service.recall(principal, "when does the <b>release</b> train leave")
    service.recall(principal, "release train token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    make_injection(service).context(
        principal, session_id="session-<i>seven</i>", event="session_start"
    )
    page = signed_in.get(f"/ui/memories/{memory_id}").text
    assert "recalled by a tool 2 times · injected 1 time" in page
    asked = "when does the &lt;b&gt;release&lt;/b&gt; train leave"
    assert f'<q><bdi dir="auto">{asked}</bdi></q>' in page
    assert "query withheld: it held a secret" in page
    assert "ghp_" not in page
    assert "Injected into a session (1 in all)" in page
    assert "session-&lt;i&gt;seven&lt;/i&gt;" in page
    assert "/ui/injections?session=session-%3Ci%3Eseven%3C%2Fi%3E" in page


def test_the_injection_log_shows_the_project_shown(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    from emergent_memory.auth.principal import ANY_PROJECT
    from tests.test_injection import make_injection

    there = Principal(principal.actor_id, uuid.uuid4(), principal.scopes)
    service.save(there, "The second project's own convention: tabs", "convention", scope="project")
    injection = make_injection(service)
    injection.context(principal, session_id="session-of-the-first", event="session_start")
    injection.context(there, session_id="session-of-the-second", event="session_start")
    assert sign_in(client, token_for(principal, READ, WRITE, ANY_PROJECT)).status_code == 303
    home = client.get("/ui/injections").text
    assert "session-of-the-first" in home
    assert "session-of-the-second" not in home
    second = client.get(f"/ui/injections?project={there.project_id}").text
    assert "session-of-the-second" in second
    assert "The second project&#39;s own convention: tabs" in second  # visible there
    assert "session-of-the-first" not in second


def test_a_session_page_shows_what_capture_took_from_it_and_at_what_cost(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    kept = service.save(principal, "The user wants <em>short</em> commit messages", "preference")
    session = "session-captured-1"
    stranger = Principal(uuid.uuid4(), principal.project_id)
    windows = [
        (principal, 0, 8, {"result": "nothing worth remembering"}, [("claude-haiku-4-5", 900, 20)]),
        (
            principal,
            8,
            16,
            {
                "result": "captured",
                "saved": [{"index": 0, "verdict": "save", "memory_id": kept["memory"]["id"],
                           "status": "created", "superseded_ids": []}],
                "not_saved": [{"index": 1, "verdict": "save", "refused": "SecretRejected"},
                              {"index": 2, "verdict": "drop", "note": "a <b>one-off</b> remark"}],
            },
            [("claude-haiku-4-5", 1000, 40), ("claude-haiku-4-5", 3000, 200)],
        ),
        (stranger, 0, 8, {"result": "captured", "saved": [], "not_saved": []}, []),
    ]  # fmt: skip
    with connect() as conn:
        for owner, first, end, outcome, calls in windows:
            window = conn.execute(
                "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
                "first_turn, end_turn, status, outcome) VALUES (%s, %s, %s, 'claude-code', %s, "
                "%s, 'done', %s) RETURNING id",
                (owner.actor_id, owner.project_id, session, first, end, json.dumps(outcome)),
            ).fetchone()
            assert window is not None
            for model, given, taken in calls:
                conn.execute(
                    "INSERT INTO kb.llm_calls (actor_id, window_id, purpose, model, "
                    "input_tokens, output_tokens, outcome) VALUES (%s, %s, 'gate', %s, %s, %s, "
                    "'ok')",
                    (owner.actor_id, window[0], model, given, taken),
                )
    page = signed_in.get(f"/ui/injections?session={session}").text
    section = page[page.index('id="session-capture"') :]
    assert "The gate found nothing worth remembering." in section
    assert "0–7" in section
    assert "8–15" in section
    assert f'href="/ui/memories/{kept["memory"]["id"]}"' in section
    assert "The user wants &lt;em&gt;short&lt;/em&gt; commit messages" in section
    assert "refused (SecretRejected)" in section
    assert "a &lt;b&gt;one-off&lt;/b&gt; remark" in section
    # 1 call of 900 + 20 tokens at $1 / $5 per million; 2 calls of 4,000 + 240
    assert "1 call, 900 + 20 tokens, $0.0010" in section
    assert "2 calls, 4000 + 240 tokens, $0.0052" in section
    assert section.count("<tr>") == 3  # a header and the two windows: not the stranger's


# -- the list: count, numbered pages, select all, confirmations, undo, edits refused ------------


def distinct(label: str) -> str:
    """A memory text of words no other has (the duplicate check keeps every one)."""
    return f"{label} {uuid.uuid4().hex[:10]} {uuid.uuid4().hex[:10]} {uuid.uuid4().hex[:10]}"


def row_ids(html: str) -> list[str]:
    return re.findall(r'id="link-([0-9a-f-]{36})"', html)


def link(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*href="([^"]+)"', html)
    assert found, f"no #{element_id} link"
    return found.group(1).replace("&amp;", "&")


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> int:
    """Pages of 3 memories (the page's real size is 50)."""
    from emergent_memory.dashboard import memories as pages

    monkeypatch.setattr(pages, "PAGE_SIZE", 3)
    return 3


def test_the_list_counts_its_matches_and_walks_numbered_pages_both_ways(
    signed_in: TestClient, service: MemoryService, principal: Principal, small_pages: int
) -> None:
    facts = [service.save(principal, distinct("Fact"), "fact")["memory"]["id"] for _ in range(8)]
    service.save(principal, distinct("A preference"), "preference")
    other = Principal(uuid.uuid4(), uuid.uuid4())
    for _ in range(4):  # another actor's facts are neither listed nor counted
        service.save(other, distinct("Their fact"), "fact")
    first = signed_in.get("/ui/memories?category=fact").text
    assert "<strong>8</strong> memories match · page 1 of 3" in first
    assert 'id="previous-page"' not in first
    assert 'id="first-page"' not in first
    # forward by Next, every link keeping the filter
    seen, page, html = [], 1, first
    while True:
        seen += row_ids(html)
        assert f'id="current-page">{page}<' in html
        if 'id="next-page"' not in html:
            break
        href = link(html, "next-page")
        assert "category=fact" in href
        html, page = signed_in.get(href).text, page + 1
    assert page == 3
    assert seen == list(reversed(facts))  # newest first, each once
    assert "page 3 of 3" in html
    assert 'id="last-page"' not in html
    # and back by Previous, to the first page
    back = []
    while 'id="previous-page"' in html:
        href = link(html, "previous-page")
        assert "category=fact" in href
        html = signed_in.get(href).text
        back = row_ids(html) + back
    assert back == seen[:6]
    assert "page 1 of 3" in html
    # nearby pages and the last one, by number
    numbers = dict(re.findall(r'href="([^"]+)" aria-label="Page (\d+)"', first)[::-1])
    assert set(numbers.values()) == {"2", "3"}
    third = next(href for href, n in numbers.items() if n == "3").replace("&amp;", "&")
    assert row_ids(signed_in.get(third).text) == seen[6:]
    last = link(first, "last-page")
    assert "page=3" in last
    assert "category=fact" in last
    assert row_ids(signed_in.get(last).text) == seen[6:]
    jumped = signed_in.get("/ui/memories?category=fact&page=2").text
    assert row_ids(jumped) == seen[3:6]
    assert "page 2 of 3" in jumped
    beyond = signed_in.get("/ui/memories?category=fact&page=99").text
    assert "page 3 of 3" in beyond  # past the last page: the last page
    bad = signed_in.get("/ui/memories?page=two")
    assert bad.status_code == 400
    assert "page must be a whole number" in bad.text


def test_a_page_far_from_both_ends_is_reached_by_next_and_previous_not_by_number(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    small_pages: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from emergent_memory.memory import browse

    monkeypatch.setattr(browse, "JUMP_ROWS", 3)  # one page from each end by number
    ids = [service.save(principal, distinct("Note"), "fact")["memory"]["id"] for _ in range(13)]
    newest_first = list(reversed(ids))
    assert row_ids(signed_in.get("/ui/memories?page=2").text) == newest_first[3:6]
    # 13 memories, 5 pages: page 4 is 1 memory from the end, read backwards
    assert row_ids(signed_in.get("/ui/memories?page=4").text) == newest_first[9:12]
    assert row_ids(signed_in.get("/ui/memories?page=5").text) == newest_first[12:]
    far = signed_in.get("/ui/memories?page=3")
    assert far.status_code == 400
    assert "more than 3 memories from both ends" in far.text
    second = signed_in.get("/ui/memories?page=2").text
    third = signed_in.get(link(second, "next-page")).text
    assert row_ids(third) == newest_first[6:9]
    assert "page 3 of 5" in third


def bulk_post(client: TestClient, token: str, **data: Any) -> Any:
    return client.post(
        "/ui/memories/bulk",
        data={CSRF_FIELD: token, "back": "/ui/memories", **data},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )


def test_a_bulk_delete_asks_with_its_count_then_says_what_it_did_and_undoes_it(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    chosen = [service.save(principal, distinct("Chosen"), "fact")["memory"]["id"] for _ in "abc"]
    apart = service.save(principal, distinct("Deleted on its own"), "fact")["memory"]["id"]
    kept = service.save(principal, distinct("Kept"), "fact")["memory"]["id"]
    page = signed_in.get("/ui/memories").text
    token = csrf_of(page)
    assert page.index('id="bulk-delete"') < page.index('id="memory-list"')  # above the rows
    asked = bulk_post(signed_in, token, action="delete", ids=chosen)
    assert asked.status_code == 200
    assert '<h1 id="bulk-question">Delete 3 memories?</h1>' in asked.text
    assert "Delete 3 memories</button>" in asked.text
    assert service.list_memories(principal)["count"] == 5  # nothing changed yet
    service.delete(principal, apart)
    confirmed = signed_in.post(
        "/ui/memories/bulk",
        data={
            CSRF_FIELD: token,
            "action": "delete",
            "back": "/ui/memories",
            "confirmed": "yes",
            "expected": "3",
            "ids": re.findall(r'name="ids" value="([^"]+)"', asked.text),
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert confirmed.status_code == 303
    location = confirmed.headers["location"]
    assert location.startswith("/ui/memories?done=bulk_delete&n=3&change=")
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [kept]
    after = signed_in.get(location).text
    assert '<span id="notice-text">Deleted 3 memories.</span>' in after
    undo_token = re.search(r'name="change" value="([^"]+)"', after)
    assert undo_token
    assert 'id="undo"' in after
    undone = signed_in.post(
        "/ui/memories/bulk/undo",
        data={
            CSRF_FIELD: token,
            "action": "delete",
            "change": undo_token.group(1),
            "back": "/ui/memories",
        },
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert undone.status_code == 303
    assert undone.headers["location"] == "/ui/memories?done=bulk_undone&n=3"
    assert "Undone: 3 memories restored." in signed_in.get(undone.headers["location"]).text
    active = {m["id"] for m in service.list_memories(principal)["memories"]}
    assert active == {*chosen, kept}  # the one deleted on its own stays deleted
    again = signed_in.post(
        "/ui/memories/bulk/undo",
        data={CSRF_FIELD: token, "action": "delete", "change": undo_token.group(1)},
        headers=SAME_ORIGIN,
    )
    assert again.status_code == 400
    assert "nothing to undo" in again.text


def test_an_undo_restores_only_the_callers_memories_that_its_change_changed(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
    sessions: DashboardSessions,
) -> None:
    mine = [service.save(principal, distinct("Mine"), "fact")["memory"]["id"] for _ in "ab"]
    token = csrf_of(signed_in.get("/ui/memories").text)
    done = bulk_post(signed_in, token, action="delete", ids=mine, confirmed="yes", expected="2")
    change = re.search(r"change=([0-9a-f-]{36})", done.headers["location"])
    assert change
    # another actor presenting the same change id restores nothing of this actor's
    other = Principal(uuid.uuid4(), uuid.uuid4())
    with TestClient(build_app(service, sessions), base_url=BASE) as theirs:
        assert sign_in(theirs, token_for(other)).status_code == 303
        their_token = csrf_of(theirs.get("/ui/memories").text)
        refused = theirs.post(
            "/ui/memories/bulk/undo",
            data={CSRF_FIELD: their_token, "action": "delete", "change": change.group(1)},
            headers=SAME_ORIGIN,
        )
    assert refused.status_code == 400
    assert "nothing to undo" in refused.text
    assert service.list_memories(principal)["count"] == 0
    # an archive's change id does not undo the delete
    wrong = signed_in.post(
        "/ui/memories/bulk/undo",
        data={CSRF_FIELD: token, "action": "archive", "change": change.group(1)},
        headers=SAME_ORIGIN,
    )
    assert wrong.status_code == 400
    assert service.list_memories(principal)["count"] == 0


def test_notices_are_fixed_texts_with_whole_number_counts(signed_in: TestClient) -> None:
    for query in (
        "done=bulk_delete&n=<script>alert(1)</script>",
        "done=bulk_delete&n=-3",
        "done=bulk_delete&n=3.5",
        "done=<b>hi</b>&n=3",
    ):
        page = signed_in.get(f"/ui/memories?{query}").text
        assert 'id="notice-text"' not in page, query
        assert "<script>alert" not in page
        assert "<b>hi" not in page
    page = signed_in.get("/ui/memories?done=bulk_delete&n=1&change=not-a-uuid").text
    assert '<span id="notice-text">Deleted 1 memory.</span>' in page
    assert 'id="undo"' not in page  # no change id: no undo


def test_select_all_on_the_page_and_all_matching_the_filters(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    small_pages: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    facts = [service.save(principal, distinct("Fact"), "fact")["memory"]["id"] for _ in range(7)]
    other = service.save(principal, distinct("An instruction"), "instruction")["memory"]["id"]
    page = signed_in.get("/ui/memories?category=fact").text
    assert 'id="select-page"' in page
    assert "All 3 on this page" in page
    assert "All 7 matching" in page
    token = csrf_of(page)
    on_page = re.findall(r'name="page_ids" value="([^"]+)"', page)
    assert on_page == row_ids(page)
    asked = bulk_post(
        signed_in, token, action="archive", all_on_page="1", page_ids=on_page, back=""
    )
    assert "Archive 3 memories?" in asked.text
    back = "/ui/memories?category=fact"
    asked = bulk_post(signed_in, token, action="delete", all_matching="1", back=back)
    assert '<h1 id="bulk-question">Delete 7 memories?</h1>' in asked.text
    assert sorted(re.findall(r'name="ids" value="([^"]+)"', asked.text)) == sorted(facts)
    stale = bulk_post(
        signed_in,
        token,
        action="delete",
        all_matching="1",
        back=back,
        confirmed="yes",
        expected="6",
    )  # the dialog showed another count: asked again with the count now
    assert stale.status_code == 200
    assert 'id="bulk-changed-since"' in stale.text
    assert service.list_memories(principal)["count"] == 8
    done = bulk_post(
        signed_in,
        token,
        action="delete",
        all_matching="1",
        back=back,
        confirmed="yes",
        expected="7",
    )
    assert done.status_code == 303
    assert done.headers["location"].startswith("/ui/memories?category=fact&done=bulk_delete&n=7")
    assert [m["id"] for m in service.list_memories(principal)["memories"]] == [other]
    from emergent_memory.dashboard import bulk
    from emergent_memory.dashboard import memories as pages

    monkeypatch.setattr(bulk, "SELECT_ALL_MAX", 1)
    monkeypatch.setattr(pages, "SELECT_ALL_MAX", 1)
    service.save(principal, distinct("Another instruction"), "instruction")
    capped = bulk_post(signed_in, token, action="delete", all_matching="1", back="/ui/memories")
    assert capped.status_code == 400
    assert "2 memories match these filters" in capped.text
    assert "at most 1" in capped.text
    assert service.list_memories(principal)["count"] == 2
    listed = signed_in.get("/ui/memories").text
    assert 'id="select-matching"' not in listed  # 2 match, 2 on the page (of 3): no need


def test_a_bulk_archive_says_its_count_and_is_undone(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    ids = [service.save(principal, distinct("Old"), "fact")["memory"]["id"] for _ in "ab"]
    core = service.save(principal, distinct("Core"), "fact", importance="core")["memory"]["id"]
    token = csrf_of(signed_in.get("/ui/memories").text)
    result = bulk_post(
        signed_in, token, action="archive", ids=[*ids, core], confirmed="yes", expected="3"
    )
    assert result.status_code == 200  # one was refused: listed with why
    assert "Archived 2 memories; 1 not:" in result.text
    assert f'<a href="/ui/memories/{core}"><code>{core}</code></a>' in result.text
    assert "core memories are never archived" in result.text
    assert service.list_memories(principal, status="archived")["count"] == 2
    change = re.search(r'name="change" value="([^"]+)"', result.text)
    assert change
    undone = signed_in.post(
        "/ui/memories/bulk/undo",
        data={CSRF_FIELD: token, "action": "archive", "change": change.group(1)},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )
    assert undone.status_code == 303
    assert "n=2" in undone.headers["location"]
    assert service.list_memories(principal, status="archived")["count"] == 0
    assert service.list_memories(principal)["count"] == 3


def test_a_read_only_token_gets_no_bulk_controls_and_cannot_undo(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    memory_id = service.save(principal, distinct("Looked at"), "fact")["memory"]["id"]
    service.bulk_delete(principal, [memory_id], reason="x")
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    page = client.get(
        "/ui/memories?status=deleted&done=bulk_delete&n=1&change=" + str(uuid.uuid4())
    )
    assert "Deleted 1 memory." in page.text
    assert 'id="bulk-bar"' not in page.text
    assert 'id="undo"' not in page.text
    forged = client.post(
        "/ui/memories/bulk/undo",
        data={CSRF_FIELD: csrf_of(page.text), "action": "delete", "change": str(uuid.uuid4())},
        headers=SAME_ORIGIN,
    )
    assert forged.status_code == 403


def test_a_refused_edit_shows_why_beside_the_form_and_keeps_what_was_typed(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, "The cache holds 100 entries", "fact")["memory"]["id"]
    twin = service.save(principal, "The queue holds <b>7</b> jobs", "fact")["memory"]["id"]
    url = f"/ui/memories/{memory_id}"
    token = csrf_of(signed_in.get(url).text)
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    typed = f"The key is {key} <script>alert(1)</script>"
    secret = post(
        signed_in, f"{url}/edit", token, content=typed, rationale="<i>why</i>", confidence="0.4"
    )
    assert secret.status_code == 422
    assert 'id="edit-error"' in secret.text
    assert '<details class="edit" id="edit" open>' in secret.text
    assert f"{key} &lt;script&gt;alert(1)&lt;/script&gt;</textarea>" in secret.text
    assert "GitHub token" in secret.text.split('id="edit-error">', 1)[1].split("</p>", 1)[0]
    assert "&lt;i&gt;why&lt;/i&gt;</textarea>" in secret.text
    assert 'value="0.4"' in secret.text
    assert "<script>alert(1)" not in secret.text
    same = post(signed_in, f"{url}/edit", token, content="The queue holds <b>7</b> jobs")
    assert same.status_code == 409
    error = same.text.split('id="edit-error">', 1)[1].split("</p>", 1)[0]
    assert f'<a href="/ui/memories/{twin}"><code>{twin}</code></a>' in error
    assert "The queue holds &lt;b&gt;7&lt;/b&gt; jobs</textarea>" in same.text
    bad = post(signed_in, f"{url}/edit", token, content="The cache holds 200", confidence="lots")
    assert bad.status_code == 400
    assert "confidence must be a number" in bad.text
    assert "The cache holds 200</textarea>" in bad.text
    assert 'value="lots"' in bad.text
    [record] = [m for m in service.list_memories(principal)["memories"] if m["id"] == memory_id]
    assert record["content"] == "The cache holds 100 entries"  # nothing was written


def test_a_forged_id_in_a_bulk_change_is_refused_as_inert_text(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    memory_id = service.save(principal, distinct("Real"), "fact")["memory"]["id"]
    token = csrf_of(signed_in.get("/ui/memories").text)
    payload = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    for confirmed in ("", "yes"):
        refused = bulk_post(
            signed_in,
            token,
            action="delete",
            ids=[memory_id, payload],
            confirmed=confirmed,
            expected="2",
        )
        assert refused.status_code == 400
        assert "is not a memory id" in refused.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in refused.text
        assert_inert(refused.text)
    assert service.list_memories(principal)["count"] == 1  # nothing was written


def test_an_empty_list_says_why_it_is_empty(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    assert sign_in(client, token_for(principal, READ, WRITE, ADMIN)).status_code == 303
    page = client.get("/ui/memories").text
    assert "No memories in this project yet." in page
    assert 'href="/ui/memories/new">Add one</a>' in page
    assert 'id="export-link"' in page
    assert "No memories match these filters." in client.get("/ui/memories?category=risk").text
    assert "No memories match" in client.get("/ui/memories?status=deleted").text
    # (other tests' global memories may be there: empty or not, no filter set never says
    # "no match")
    assert "No memories match" not in client.get("/ui/global").text
    nothing = client.get(f"/ui/global?text={uuid.uuid4().hex}").text
    assert "No memories match these filters." in nothing


def test_an_addition_from_a_form_of_another_project_is_refused(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    from emergent_memory.auth.principal import ANY_PROJECT

    there = uuid.uuid4()
    assert sign_in(client, token_for(principal, READ, WRITE, ANY_PROJECT)).status_code == 303
    token = csrf_of(client.get("/ui/memories/new").text)  # a form of the token's project
    assert client.get(f"/ui/memories?project={there}").status_code == 200  # another tab
    refused = client.post(
        "/ui/memories/new",
        data={
            CSRF_FIELD: token,
            "project": str(principal.project_id),
            "content": "Saved from a stale tab",
            "category": "fact",
            "scope": "project",
        },
        headers=SAME_ORIGIN,
    )
    assert refused.status_code == 409
    assert "switched in another tab" in refused.text
    assert ">Saved from a stale tab</textarea>" in refused.text
    for project in (principal.project_id, there):
        seen = Principal(principal.actor_id, project)
        assert service.list_memories(seen)["memories"] == []
