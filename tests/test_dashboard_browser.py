"""The dashboard in a real browser: headless Chromium (tests/browser.py finds or installs it)
driven by Playwright against the real `serve --transport http` process on the test database.

One server and one browser for the module; each test opens its own browser context (its own
cookies). Every page a test visits is saved as a screenshot under tests/artifacts/dashboard/
(gitignored) to look at. Each test also fails on a JavaScript error, a refused
Content-Security-Policy or an unexpected dialog (see Watch).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Cookie,
    Dialog,
    Page,
    Response,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

from emergent_memory.auth.principal import READ, Principal
from tests.browser import chromium_executable, launch
from tests.dashboard_site import (
    ARTIFACTS,
    Site,
    dashboard_site,
    inject,
    new_principal,
    screenshot,
    seed_demo,
    sign_in,
)

# What the dashboard itself may ask (dashboard.js: a form's data-confirm, and the list's bulk
# actions with their count); any other dialog is a script that should not have run.
EXPECTED_CONFIRMATIONS = (
    "Delete this memory?",
    "Archive this memory?",
)
BULK_CONFIRMATION = re.compile(r"(Delete|Archive|Restore) [\d,]+ memor(y|ies)\?( .*)?")
SUBRESOURCES = {"stylesheet", "script", "image", "font", "media"}
# Two hostnames of the test server (it listens on 127.0.0.1): the dashboard's own, reached by
# name over plain HTTP as `make run HOST=0.0.0.0` serves it, and another site's.
OURS, ELSEWHERE = "memory.test", "evil.test"
HOSTNAMES = f"MAP {OURS} 127.0.0.1, MAP {ELSEWHERE} 127.0.0.1"


@dataclass
class Watch:
    """What happened in a browser context that a page should never cause: dialogs that are
    not the dashboard's own confirmations, uncaught JavaScript errors, console errors (a
    resource refused by the CSP is one)."""

    dialogs: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    decline: bool = False  # answer the dashboard's confirmations with no
    errors: list[str] = field(default_factory=list)

    def on_dialog(self, dialog: Dialog) -> None:
        expected = dialog.message.startswith(EXPECTED_CONFIRMATIONS) or BULK_CONFIRMATION.fullmatch(
            dialog.message
        )
        if dialog.type == "confirm" and expected:
            if self.decline:
                self.declined.append(dialog.message)
                dialog.dismiss()
            else:
                self.confirmed.append(dialog.message)
                dialog.accept()
            return
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(self, message: ConsoleMessage) -> None:
        # a response with an error status is logged too: on_response judges those
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(f"console: {message.text}")

    def on_response(self, response: Response) -> None:
        """A style sheet, script, image or font a page needs that did not load (a page or a
        fetch may be a refusal a test expects; the browser's own favicon request is not the
        page's)."""
        request = response.request
        needed = request.resource_type in SUBRESOURCES and not request.url.endswith("/favicon.ico")
        if response.status >= 400 and needed:
            self.errors.append(f"{response.status} for {request.url}")

    def on_page_error(self, error: PlaywrightError) -> None:
        self.errors.append(f"page error: {error}")

    def attach(self, page: Page) -> None:
        page.on("dialog", self.on_dialog)
        page.on("console", self.on_console)
        page.on("pageerror", self.on_page_error)
        page.on("response", self.on_response)

    def check(self) -> None:
        assert self.dialogs == [], "a dialog opened that the dashboard does not open"
        assert self.errors == [], "the browser reported errors"


@dataclass
class Writer:
    """The seeded actor: its principal, its demo memories' ids and a read-write token."""

    principal: Principal
    ids: dict[str, str]
    token: str


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(database_url: str, app_database_url: str) -> Iterator[Site]:
    with dashboard_site(database_url, app_database_url) as running:
        yield running


@pytest.fixture(scope="module")
def chromium(site: Site) -> Iterator[Browser]:
    """The browser, closed before the server stops (its open connections would hold the
    server's shutdown)."""
    executable = chromium_executable()
    playwright = sync_playwright().start()
    try:
        browser = launch(playwright, executable, [f"--host-resolver-rules={HOSTNAMES}"])
        yield browser
        browser.close()
    finally:
        playwright.stop()


@pytest.fixture(scope="module")
def writer(site: Site) -> Writer:
    principal = new_principal()
    ids = seed_demo(site.memory, principal)
    token = site.token(principal.actor_id, principal.project_id)
    injected = inject(site, token, "session-demo-1")  # the injection log's first session
    assert injected["memories"]
    return Writer(principal, ids, token)


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def context(chromium: Browser, watch: Watch) -> Iterator[BrowserContext]:
    """A fresh browser context (no cookies) at a laptop's size; `watch` sees its pages."""
    ctx = chromium.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(10_000)
    ctx.on("page", watch.attach)
    yield ctx
    ctx.close()
    watch.check()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@contextmanager
def page_at(chromium: Browser, watch: Watch, width: int) -> Iterator[Page]:
    """A page in a fresh context `width` pixels wide (a laptop's 1280, a phone's 390), seen
    by `watch`; the context is closed afterwards."""
    context = chromium.new_context(viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        watch.attach(page)
        yield page
    finally:
        context.close()


@pytest.fixture
def signed_in(page: Page, site: Site, writer_session: Cookie) -> Page:
    """A page of the writer's session (signed in once for the module; the sign-out test
    opens a session of its own)."""
    cookie = writer_session  # as the server set it: HttpOnly, SameSite=Strict, Path=/ui
    page.context.add_cookies(
        [
            {
                "name": cookie["name"],
                "value": cookie["value"],
                "domain": cookie["domain"],
                "path": cookie["path"],
                "httpOnly": cookie["httpOnly"],
                "secure": cookie["secure"],
                "sameSite": cookie["sameSite"],
            }
        ]
    )
    page.goto(site.ui)
    return page


@pytest.fixture(scope="module")
def writer_session(chromium: Browser, site: Site, writer: Writer) -> Cookie:
    """The cookie of a session signed in through the form with the writer's token."""
    ctx = chromium.new_context()
    try:
        sign_in(ctx.new_page(), site, writer.token)
        [cookie] = ctx.cookies()
        return cookie
    finally:
        ctx.close()


def own_memory(site: Site, writer: Writer, content: str, category: str = "fact") -> str:
    """A memory of the writer's that only this test changes; its id."""
    saved = site.memory.save(writer.principal, content, category, "explicit")  # type: ignore[arg-type]
    return saved["memory"]["id"]


def status_of(site: Site, writer: Writer, memory_id: str) -> str:
    """The memory's status as the service sees it: active, archived, deleted or superseded."""
    for status in (None, "archived", "deleted", "superseded"):
        listed = site.memory.list_memories(writer.principal, limit=100, status=status)
        if any(m["id"] == memory_id for m in listed["memories"]):
            return status or "active"
    raise AssertionError(f"memory {memory_id} is not listed at all")


def every_page(writer: Writer) -> dict[str, str]:
    """The dashboard's pages, by name, as the writer sees them (with its seeded memories):
    what the phone-width and the contrast checks visit (a new page is added here once)."""
    return {
        "search": "/ui/search?q=tests",
        "browse": "/ui/memories",
        "browse-archived": "/ui/memories?status=archived&importance=low",
        "deleted": "/ui/memories?status=deleted",
        "superseded": "/ui/memories?status=superseded",
        "memory": f"/ui/memories/{writer.ids['edited']}",
        "verify": "/ui/verify?claim=The+test+suite+runs+with+pytest",
        "duplicates": "/ui/duplicates",
        "contexts": "/ui/contexts",
        "stats": "/ui/stats",
        "injections": "/ui/injections",
        "capture": "/ui/capture",
        "add": "/ui/memories/new",
        "import": "/ui/import",
        "projects": "/ui/projects",
        "session": "/ui/injections?session=session-demo-1",
    }


def csrf_of(page: Page) -> str:
    """The CSRF token of the signed-in page's forms (the sign-out form holds one)."""
    value = page.locator("form.signout input[name=csrf_token]").get_attribute("value")
    assert value
    return value


# -- signing in ----------------------------------------------------------------------------


def test_sign_in_with_the_keyboard(page: Page, site: Site, writer: Writer) -> None:
    response = page.goto(site.ui)
    assert response is not None
    assert response.ok
    assert page.url == site.base + "/ui/signin"  # not signed in: the form
    screenshot(page, "sign-in")
    token = page.get_by_label("API token")
    expect(token).to_have_attribute("type", "password")
    expect(token).to_be_focused()  # autofocus: typing starts at once
    # The order of Tab: skip link, brand, token, Sign in.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(token).to_be_focused()
    page.keyboard.type("emt_not-a-token")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Sign in")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("unknown, revoked or expired")
    screenshot(page, "sign-in-refused")

    page.get_by_label("API token").fill(writer.token)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Search memories")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_the_session_cookie_holds_no_token(
    page: Page, site: Site, context: BrowserContext, writer: Writer
) -> None:
    sign_in(page, site, writer.token)  # the cookie as the server sets it
    signed_in = page
    [cookie] = context.cookies()
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/ui"
    assert writer.token not in cookie["value"]
    assert len(cookie["value"]) >= 40  # a random secret of its own
    assert signed_in.evaluate("document.cookie") == ""  # out of the scripts' reach


def test_sign_out_ends_the_session(
    page: Page, site: Site, writer: Writer, context: BrowserContext
) -> None:
    sign_in(page, site, writer.token)
    signed_in = page
    [cookie] = context.cookies()
    signed_in.get_by_role("button", name="Sign out").click()
    expect(signed_in.get_by_role("status")).to_have_text("You are signed out.")
    assert signed_in.url.startswith(site.base + "/ui/signin")
    screenshot(signed_in, "signed-out")
    assert context.cookies() == []
    signed_in.goto(site.base + "/ui/memories")
    assert signed_in.url == site.base + "/ui/signin?next=%2Fui%2Fmemories"
    # The old cookie, sent again, opens nothing: the session ended in the database.
    context.add_cookies([{"name": cookie["name"], "value": cookie["value"], "url": site.ui}])
    signed_in.goto(site.base + "/ui/memories")
    assert signed_in.url == site.base + "/ui/signin?next=%2Fui%2Fmemories"


def test_a_link_to_a_memory_opens_it_after_signing_in(
    page: Page, site: Site, writer: Writer
) -> None:
    memory_id = own_memory(site, writer, "The deep-link test memory lives on its own page.")
    page.goto(f"{site.base}/ui/memories/{memory_id}")
    expect(page.locator("#signin-then")).to_be_visible()  # the form says why it is shown
    page.get_by_label("API token").fill("emt_not-a-token")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("unknown, revoked or expired")
    page.get_by_label("API token").fill(writer.token)  # a failed try keeps the way back
    page.keyboard.press("Enter")
    expect(page.locator(".content")).to_have_text(
        "The deep-link test memory lives on its own page."
    )
    assert page.url == f"{site.base}/ui/memories/{memory_id}"


def test_a_sign_in_posted_from_another_site_over_plain_http_is_refused(
    page: Page, context: BrowserContext, site: Site, writer: Writer, watch: Watch
) -> None:
    """Login CSRF: a page of another site signs the visitor in as the attacker's token. Over
    plain HTTP on a hostname Chromium sends no Sec-Fetch-Site, and a page under a no-referrer
    policy makes its post send "Origin: null", which the server took for its own form's."""
    port = urlsplit(site.base).port
    ours, elsewhere = f"http://{OURS}:{port}", f"http://{ELSEWHERE}:{port}"
    attacker = site.token(uuid.uuid4(), uuid.uuid4())
    forged = (
        '<!doctype html><meta name="referrer" content="no-referrer">'
        f'<form method="post" action="{ours}/ui/signin">'
        f'<input name="token" value="{attacker}"></form>'
        "<script>document.forms[0].submit()</script>"
    )
    page.route(
        f"{elsewhere}/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=forged),
    )
    with page.expect_response(f"{ours}/ui/signin") as answered:
        page.goto(f"{elsewhere}/prize.html")
    refused = answered.value
    sent = refused.request.all_headers()
    assert sent.get("origin") == "null"  # what made it pass before
    assert "sec-fetch-site" not in sent
    assert refused.status == 403
    expect(page.get_by_role("alert")).to_contain_text("sent from another site")
    assert context.cookies(f"{ours}/ui/") == []

    # the real form, on the dashboard's own hostname, still signs in
    page.goto(f"{ours}/ui/signin")
    page.get_by_label("API token").fill(writer.token)
    with page.expect_request(f"{ours}/ui/signin") as posted:
        page.get_by_role("button", name="Sign in").click()
    assert posted.value.all_headers().get("origin") == ours
    expect(page.get_by_role("heading", name="Search memories")).to_be_visible()
    [cookie] = context.cookies(f"{ours}/ui/")
    assert cookie["domain"] == OURS
    # Chromium ignores Cross-Origin-Opener-Policy on an origin that is not potentially
    # trustworthy (plain HTTP by name) and says so on the console: expected here
    watch.errors = [e for e in watch.errors if "Cross-Origin-Opener-Policy" not in e]


# -- search, a memory's page, edit, delete, restore ---------------------------------------


def test_search_open_edit_delete_and_restore(
    signed_in: Page, site: Site, writer: Writer, watch: Watch
) -> None:
    page = signed_in
    memory_id = own_memory(site, writer, "The user's laptop runs Fedora with the GNOME desktop")
    page.get_by_label("Search", exact=True).fill("Fedora laptop")  # instant search, no submit
    result = page.locator("#search-results a.memory-link").first
    expect(result).to_have_text("The user's laptop runs Fedora with the GNOME desktop")
    expect(page.locator("#search-results .why").first).to_contain_text("words rank 1")
    assert "q=Fedora+laptop" in page.url  # the address follows the search
    screenshot(page, "search")

    result.click()
    assert page.url == f"{site.base}/ui/memories/{memory_id}"
    expect(page.locator("#memory-content")).to_have_text(
        "The user's laptop runs Fedora with the GNOME desktop"
    )
    screenshot(page, "memory")

    page.locator("#edit summary").click()
    page.get_by_label("Content").fill("The user's laptop runs Debian with the GNOME desktop")
    page.get_by_label("Category").select_option("preference")
    page.get_by_role("button", name="Save a new version").click()
    expect(page.get_by_role("status")).to_have_text("Saved: the memory has a new version.")
    expect(page.locator("#memory-content")).to_have_text(
        "The user's laptop runs Debian with the GNOME desktop"
    )
    expect(page.locator("#memory-category")).to_have_text("preference")
    expect(page.locator("#versions > li")).to_have_count(2)
    expect(page.locator("#versions del").first).to_have_text("Fedora")
    expect(page.locator("#versions ins").first).to_have_text("Debian")
    screenshot(page, "memory-edited")

    page.get_by_role("button", name="Delete").click()  # asks first (accepted by Watch)
    expect(page.get_by_role("status")).to_contain_text("Deleted.")
    assert watch.confirmed == ["Delete this memory? It stays in the history and can be restored."]
    expect(page.locator(".memory-page h1 .badge")).to_have_text("deleted")
    assert status_of(site, writer, memory_id) == "deleted"
    screenshot(page, "memory-deleted")

    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_have_text("Restored: the memory is active again.")
    expect(page.locator(".memory-page h1 .badge")).to_have_text("active")
    assert status_of(site, writer, memory_id) == "active"


def test_declining_the_confirmation_deletes_nothing(
    signed_in: Page, site: Site, writer: Writer, watch: Watch
) -> None:
    memory_id = own_memory(site, writer, "The user keeps their dotfiles in a git repository")
    signed_in.goto(f"{site.base}/ui/memories/{memory_id}")
    watch.decline = True  # a person answers no
    signed_in.get_by_role("button", name="Delete").click()
    signed_in.wait_for_load_state()
    assert watch.declined == ["Delete this memory? It stays in the history and can be restored."]
    assert signed_in.url == f"{site.base}/ui/memories/{memory_id}"
    expect(signed_in.locator(".memory-page h1 .badge")).to_have_text("active")
    assert status_of(site, writer, memory_id) == "active"


def test_every_page_renders(signed_in: Page, site: Site, writer: Writer) -> None:
    page = signed_in
    pages = {  # name: (path, its heading, a text the seeded history puts on it)
        "browse": ("/ui/memories", "Browse memories", "The user prefers tabs over spaces"),
        "browse-deleted": (
            "/ui/memories?status=deleted",
            "Browse memories",
            "The user reviews pull requests in the morning",
        ),
        "browse-by-page-number": (
            "/ui/memories?sort=oldest&page=1",
            "Browse memories",
            "memories match",
        ),
        "contexts": ("/ui/contexts", "Contexts", "infrastructure"),
        "stats": ("/ui/stats", "Stats", "Memories created per day"),
        "injections": ("/ui/injections", "Injection log", "session-demo-1"),
        "capture": ("/ui/capture", "Automatic capture", "Automatic capture is off"),
        "duplicates": (
            "/ui/duplicates",
            "Possible duplicates",
            "The staging database runs PostgreSQL 17 with pgvector 0.8",
        ),
        "memory-with-history": (
            f"/ui/memories/{writer.ids['edited']}",
            "Memory",
            "The API gateway times out requests after 60 seconds",
        ),
    }
    for name, (path, heading, text) in pages.items():
        response = page.goto(site.base + path)
        assert response is not None
        assert response.status == 200, path
        expect(page.locator("h1")).to_contain_text(heading)
        expect(page.locator("main").get_by_text(text).first).to_be_visible()
        screenshot(page, name)
    # a page that does not exist is the dashboard's own, not a bare error
    response = page.goto(site.base + "/ui/no-such-page")
    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("navigation", name="Dashboard")).to_be_visible()
    screenshot(page, "not-found")
    # each page is reachable from the navigation bar
    page.goto(site.ui)
    for link in (
        "Browse",
        "Verify",
        "Duplicates",
        "Contexts",
        "Stats",
        "Injections",
        "Capture",
        "Projects",
        "Search",
    ):
        page.get_by_role("navigation", name="Dashboard").get_by_role("link", name=link).click()
        expect(page.get_by_role("link", name=link)).to_have_attribute("aria-current", "page")


def test_decide_a_possible_duplicate(signed_in: Page, site: Site, writer: Writer) -> None:
    page = signed_in
    older = own_memory(site, writer, "The build server compiles with GCC 13 and links with mold")
    newer = own_memory(site, writer, "The build server compiles with GCC 14 and links with mold")
    page.goto(site.base + "/ui/duplicates")
    pair = page.locator("section.pair").filter(has_text="GCC 14")
    expect(pair).to_have_count(1)
    expect(pair).to_contain_text("GCC 13")
    # another version of the same compiler, no change word: a conflict, said in the heading
    expect(pair.get_by_role("heading", level=2)).to_contain_text("Conflict")
    expect(pair.get_by_role("heading", level=2)).to_contain_text(
        "The same subject with another value"
    )
    expect(pair.locator(".why")).to_contain_text(
        "Why it is here: the same subject with another value, and neither says it changed"
    )
    # the navigation says how many pairs wait (other tests' pairs of this writer count too)
    waiting = page.locator("#pending-pairs")
    expect(waiting).to_be_visible()
    before = int(waiting.inner_text())
    assert before >= 1
    screenshot(page, "duplicates")
    page.goto(f"{site.base}/ui/memories/{older}")
    expect(page.locator("#memory-conflicts")).to_contain_text("outranked by a conflicting memory")
    screenshot(page, "memory-conflict")
    page.goto(site.base + "/ui/duplicates")
    pair = page.locator("section.pair").filter(has_text="GCC 14")
    pair.get_by_label("Supersede (keep one)").check()
    pair.get_by_label("the newer").check()
    pair.get_by_role("button", name="Decide").click()
    expect(page.get_by_role("status")).to_have_text("Decision recorded.")
    expect(page.locator("section.pair").filter(has_text="GCC 14")).to_have_count(0)
    assert status_of(site, writer, newer) == "active"
    assert status_of(site, writer, older) == "superseded"
    # one click undoes it: the older memory is back and the pair waits again
    screenshot(page, "duplicates-undo")
    page.get_by_role("button", name="Undo this decision").click()
    expect(page.get_by_role("status")).to_have_text(
        "Decision undone: the pair waits for a decision again."
    )
    expect(page.locator("section.pair").filter(has_text="GCC 14")).to_have_count(1)
    expect(page.locator("#pending-pairs")).to_have_text(str(before))
    assert status_of(site, writer, older) == "active"
    # and decided again, for good
    pair = page.locator("section.pair").filter(has_text="GCC 14")
    pair.get_by_label("Supersede (keep one)").check()
    pair.get_by_label("the newer").check()
    pair.get_by_role("button", name="Decide").click()
    expect(page.get_by_role("status")).to_have_text("Decision recorded.")
    assert status_of(site, writer, older) == "superseded"
    page.goto(f"{site.base}/ui/memories/{older}")
    expect(page.locator(".memory-page h1 .badge")).to_have_text("superseded")
    expect(page.locator("#supersede-reason")).to_contain_text("Replaced because someone chose")
    screenshot(page, "memory-superseded")


def test_bulk_delete_and_restore_from_the_list(
    signed_in: Page, site: Site, writer: Writer, watch: Watch
) -> None:
    page = signed_in
    marker = uuid.uuid4().hex[:8]
    first = own_memory(site, writer, f"The user mirrors repository bulk{marker} nightly")
    second = own_memory(site, writer, f"The user archives bulk{marker} logs every Friday")
    kept = own_memory(site, writer, f"The user keeps bulk{marker} notes in a wiki")
    page.goto(f"{site.base}/ui/memories?text=bulk{marker}")
    expect(page.locator("#memory-list > li")).to_have_count(3)
    # each box is named after its memory, so a screen reader tells them apart
    page.get_by_role("checkbox", name=f"Select The user mirrors repository bulk{marker}").check()
    page.get_by_role("checkbox", name=f"Select The user archives bulk{marker}").check()
    expect(page.locator(f"#select-{first}")).to_be_checked()
    expect(page.locator(f"#select-{second}")).to_be_checked()
    screenshot(page, "bulk-selected")
    page.get_by_role("button", name="Delete selected").click()
    expect(page.locator("#notice-text")).to_have_text("Deleted 2 memories.")
    assert watch.confirmed == ["Delete 2 memories? They stay in the history and can be restored."]
    assert [status_of(site, writer, i) for i in (first, second, kept)] == [
        "deleted",
        "deleted",
        "active",
    ]
    expect(page.locator("#memory-list > li")).to_have_count(1)  # back on the same filters
    screenshot(page, "bulk-deleted-with-undo")
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#notice-text")).to_have_text("Undone: 2 memories restored.")
    expect(page.locator("#memory-list > li")).to_have_count(3)
    assert [status_of(site, writer, i) for i in (first, second)] == ["active", "active"]

    site.memory.bulk_delete(writer.principal, [first, second])
    page.goto(f"{site.base}/ui/memories?text=bulk{marker}&status=deleted")
    page.locator(f"#select-{first}").check()
    page.locator(f"#select-{second}").check()
    page.get_by_role("button", name="Restore selected").click()
    expect(page.locator("#notice-text")).to_have_text("Restored 2 memories.")
    expect(page.locator("#undo")).to_have_count(0)  # a restore offers no undo
    assert [status_of(site, writer, i) for i in (first, second)] == ["active", "active"]


def test_pages_of_a_long_list_select_all_matching_and_undo(
    chromium: Browser, context: BrowserContext, site: Site, watch: Watch
) -> None:
    """55 memories: counted, two numbered pages walked both ways, the bulk bar reachable
    without scrolling (and still in view at the bottom), all on the page ticked, all 55
    matching deleted after a dialog that says so, and undone; on a phone too."""
    owner = new_principal()
    marker = uuid.uuid4().hex[:8]
    ids = [
        site.memory.save(owner, f"Paged note {n} pages{marker} {uuid.uuid4().hex[:12]}", "fact")[
            "memory"
        ]["id"]
        for n in range(55)
    ]
    token = site.token(owner.actor_id, owner.project_id)
    page = context.new_page()
    sign_in(page, site, token)
    page.goto(f"{site.base}/ui/memories?text=pages{marker}")
    expect(page.locator("#match-count")).to_have_text("55 memories match · page 1 of 2")
    expect(page.locator("#memory-list > li")).to_have_count(50)
    bar = page.locator("#bulk-bar")
    expect(bar.get_by_role("button", name="Delete selected")).to_be_in_viewport()
    screenshot(page, "browse-paged")
    page.locator("#memory-list > li").last.scroll_into_view_if_needed()
    expect(bar.get_by_role("button", name="Delete selected")).to_be_in_viewport()  # sticky
    bar.get_by_label("All 50 on this page").check()
    expect(page.locator("#memory-list input.select:checked")).to_have_count(50)
    bar.get_by_label("All 50 on this page").uncheck()
    expect(page.locator("#memory-list input.select:checked")).to_have_count(0)
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Next").click()
    expect(page.locator("#match-count")).to_have_text("55 memories match · page 2 of 2")
    expect(page.locator("#memory-list > li")).to_have_count(5)
    assert f"text=pages{marker}" in page.url
    screenshot(page, "browse-paged-2")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Previous").click()
    expect(page.locator("#match-count")).to_have_text("55 memories match · page 1 of 2")
    page.get_by_role("link", name="Page 2").click()
    expect(page.locator("#current-page")).to_have_text("2")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="First").click()
    expect(page.locator("#current-page")).to_have_text("1")
    bar.get_by_label("All 55 matching").check()
    bar.get_by_role("button", name="Delete selected").click()
    expect(page.locator("#notice-text")).to_have_text("Deleted 55 memories.")
    assert watch.confirmed == ["Delete 55 memories? They stay in the history and can be restored."]
    expect(page.locator("#no-memories")).to_be_visible()
    assert site.memory.list_memories(owner)["count"] == 0
    screenshot(page, "browse-bulk-undo")
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#notice-text")).to_have_text("Undone: 55 memories restored.")
    assert site.memory.list_memories(owner, limit=100)["count"] == len(ids)

    phone = chromium.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    try:
        small = phone.new_page()
        watch.attach(small)
        sign_in(small, site, token)
        small.goto(f"{site.base}/ui/memories?text=pages{marker}")
        screenshot(small, "phone-browse-paged")
        assert small.evaluate("document.documentElement.scrollWidth") <= 390
        small.locator("#memory-list > li").last.scroll_into_view_if_needed()
        # below the filters at first; in view once the list scrolls (sticky)
        expect(
            small.locator("#bulk-bar").get_by_role("button", name="Delete selected")
        ).to_be_in_viewport()
        # what the phone shows there (not the whole page): the bar stuck to the top
        small.screenshot(path=str(ARTIFACTS / "dashboard" / "phone-browse-paged-bottom.png"))
        assert small.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        phone.close()


def test_without_javascript_a_bulk_change_asks_on_a_page_of_its_own(
    chromium: Browser, site: Site, watch: Watch
) -> None:
    owner = new_principal()
    marker = uuid.uuid4().hex[:8]
    ids = [
        site.memory.save(owner, f"Scriptless {n} nojs{marker} {uuid.uuid4().hex[:12]}", "fact")[
            "memory"
        ]["id"]
        for n in range(3)
    ]
    token = site.token(owner.actor_id, owner.project_id)
    for name, viewport in (
        ("", {"width": 1280, "height": 800}),
        ("phone-", {"width": 390, "height": 844}),
    ):
        ctx = chromium.new_context(java_script_enabled=False, viewport=viewport)
        try:
            page = ctx.new_page()
            watch.attach(page)
            sign_in(page, site, token)
            page.goto(f"{site.base}/ui/memories?text=nojs{marker}")
            page.locator(f"#select-{ids[0]}").check()
            page.locator(f"#select-{ids[1]}").check()
            page.get_by_role("button", name="Archive selected").click()
            expect(page.locator("h1")).to_have_text("Archive 2 memories?")
            screenshot(page, f"{name}bulk-confirm")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390 or not name
            assert site.memory.list_memories(owner)["count"] == 3  # nothing yet
            if name:  # on the phone: cancel
                page.get_by_role("link", name="Cancel").click()
                expect(page.locator("#memory-list > li")).to_have_count(3)
                continue
            page.get_by_role("button", name="Archive 2 memories").click()
            expect(page.locator("#notice-text")).to_have_text("Archived 2 memories.")
            assert site.memory.list_memories(owner)["count"] == 1
            page.get_by_role("button", name="Undo").click()
            expect(page.locator("#notice-text")).to_have_text("Undone: 2 memories restored.")
            assert site.memory.list_memories(owner)["count"] == 3
        finally:
            ctx.close()
    assert watch.confirmed == []  # no dialog without JavaScript


def test_a_superseded_row_names_what_replaced_it_and_a_refused_edit_keeps_the_text(
    chromium: Browser, context: BrowserContext, site: Site, watch: Watch
) -> None:
    owner = new_principal()
    marker = uuid.uuid4().hex[:8]
    old = site.memory.save(owner, f"The build runs on Jenkins rep{marker}", "fact")["memory"]["id"]
    new = site.memory.save(owner, f"The build runs on GitHub Actions now {marker}", "fact")[
        "memory"
    ]["id"]
    site.memory.supersede(owner, new, old)
    twin = site.memory.save(owner, f"The cache is warm twin{marker}", "fact")["memory"]["id"]
    token = site.token(owner.actor_id, owner.project_id)
    page = context.new_page()
    sign_in(page, site, token)
    page.goto(f"{site.base}/ui/memories?status=superseded")
    replaced = page.locator(f"#replaced-{old}")
    expect(replaced).to_contain_text("Replaced by The build runs on GitHub Actions now")
    replaced.get_by_role("link").click()
    assert page.url.endswith(f"/ui/memories/{new}")
    page.go_back()
    screenshot(page, "browse-superseded")
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    typed = f"The build token is {key} <b>keep me</b>"
    for name, viewport in (("", None), ("phone-", {"width": 390, "height": 844})):
        if viewport:
            page.set_viewport_size(viewport)
        page.goto(f"{site.base}/ui/memories/{new}")
        page.locator("#edit summary").click()
        page.get_by_label("Content").fill(typed)
        page.get_by_label("Rationale (why; optional)").fill("because <i>CI</i> moved")
        with page.expect_response(f"**/ui/memories/{new}/edit") as answer:
            page.get_by_role("button", name="Save a new version").click()
        assert answer.value.status == 422
        expect(page.locator("#edit-error")).to_contain_text("GitHub token")
        expect(page.locator("#edit-refused")).to_be_in_viewport()
        page.locator("#edit-refused").get_by_role("link").click()
        expect(page.locator("#edit-error")).to_be_in_viewport()
        expect(page.get_by_label("Content")).to_have_value(typed)
        expect(page.get_by_label("Rationale (why; optional)")).to_have_value(
            "because <i>CI</i> moved"
        )
        screenshot(page, f"{name}memory-edit-refused")
        assert page.evaluate("document.documentElement.scrollWidth") <= (390 if viewport else 1280)
    page.get_by_label("Content").fill(f"The cache is warm twin{marker}")
    page.get_by_role("button", name="Save a new version").click()
    expect(page.locator("#edit-error")).to_contain_text("already says exactly this")
    # an id in the message is a link to that memory
    page.locator("#edit-error").get_by_role("link", name=twin).click()
    assert page.url.endswith(f"/ui/memories/{twin}")
    contents = {m["id"]: m["content"] for m in site.memory.list_memories(owner)["memories"]}
    assert contents[new] == f"The build runs on GitHub Actions now {marker}"  # never changed


def test_rename_a_context_and_set_its_priority(signed_in: Page, site: Site, writer: Writer) -> None:
    page = signed_in
    marker = uuid.uuid4().hex[:8]
    site.memory.save(
        writer.principal,
        f"The user's ctx{marker} runbooks live in docs/",
        "fact",
        context=f"old-{marker}",
    )
    page.goto(site.base + "/ui/contexts")
    row = page.locator("#contexts tbody tr").filter(has_text=f"old-{marker}")
    row.get_by_label("New name").fill(f"new-{marker}")
    row.get_by_label("Priority").fill("80")
    row.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("Context saved.")
    renamed = page.locator("#contexts tbody tr").filter(has_text=f"new-{marker}")
    expect(renamed.locator("td[data-label=Priority]")).to_have_text("80")
    expect(page.locator("#contexts tbody tr").filter(has_text=f"old-{marker}")).to_have_count(0)
    renamed.get_by_role("link", name=f"new-{marker}").click()
    expect(page.get_by_text(f"The user's ctx{marker} runbooks live in docs/")).to_be_visible()


# -- the lifecycle: evidence, importance, rationale, archive, restore, verify ---------------


def test_reinforce_edit_archive_restore_and_verify(
    signed_in: Page, site: Site, writer: Writer, watch: Watch
) -> None:
    page = signed_in
    marker = uuid.uuid4().hex[:8]
    content = f"The team's CI for project life{marker} runs on Buildkite agents"
    memory_id = own_memory(site, writer, content)
    page.goto(f"{site.base}/ui/memories/{memory_id}")

    # evidence, with a payload that must stay text
    evidence = "<img src=x onerror=\"window.__xss = 'evidence'\"> buildkite.yml at the root"
    page.locator("#reinforce summary").click()
    page.get_by_label("Evidence (a quote or where you saw it)").fill(evidence)
    page.get_by_role("button", name="Add evidence").click()
    expect(page.get_by_role("status")).to_have_text("Evidence recorded.")
    newest = page.locator("#evidence > li").first
    expect(newest.locator("blockquote")).to_have_text(evidence)
    expect(newest).to_contain_text("reinforce")
    expect(newest).to_contain_text("new evidence")
    assert page.locator("img[src=x], [onerror]").count() == 0
    assert page.evaluate("window.__xss") is None
    screenshot(page, "memory-reinforced")

    # importance, validity and a rationale with a payload, through the edit form
    rationale = "Chosen over <script>window.__xss = 'rationale'</script> Jenkins for speed"
    page.locator("#edit summary").click()
    page.get_by_label("Importance").select_option("high")
    page.get_by_label("Valid until (UTC date)").fill("2031-12-31")
    page.get_by_label("Rationale (why; optional)").fill(rationale)
    page.get_by_role("button", name="Save a new version").click()
    expect(page.get_by_role("status")).to_have_text("Saved: the memory has a new version.")
    expect(page.locator("#memory-importance")).to_have_text("high")
    expect(page.locator("#memory-rationale")).to_have_text(rationale)
    expect(page.locator("#memory-validity")).to_contain_text("until 2031-12-31 00:00 (UTC)")
    assert page.locator("main script").count() == 0
    assert page.evaluate("window.__xss") is None

    # archive (asks first), then restore
    page.get_by_label("Reason for archiving (optional)").fill("the team moved to GitHub Actions")
    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_role("status")).to_contain_text("Archived")
    assert watch.confirmed == [
        "Archive this memory? Recall and injection leave it out until it is restored."
    ]
    expect(page.locator(".memory-page h1 .badge")).to_have_text("archived")
    expect(page.locator("#archive-reason")).to_have_text("the team moved to GitHub Actions")
    assert status_of(site, writer, memory_id) == "archived"
    screenshot(page, "memory-archived")
    page.goto(f"{site.base}/ui/memories?status=archived&text=life{marker}")
    expect(page.locator("#memory-list > li")).to_have_count(1)
    expect(page.locator("#memory-list .importance-high")).to_have_text("high importance")
    screenshot(page, "browse-archived")
    page.locator("#memory-list a.memory-link").click()
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_have_text("Restored: the memory is active again.")
    expect(page.locator(".memory-page h1 .badge")).to_have_text("active")
    assert status_of(site, writer, memory_id) == "active"

    # verify a claim from the navigation bar
    page.get_by_role("navigation", name="Dashboard").get_by_role("link", name="Verify").click()
    page.get_by_label("Claim").fill(content)
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("#verdict")).to_have_text("confirmed")
    expect(page.locator("#verify-matches a.memory-link").first).to_have_text(content)
    expect(page.locator("#verify-matches .badge").first).to_have_text("confirms")
    screenshot(page, "verify")


# -- what a user or an agent wrote is inert text -------------------------------------------

XSS_PAYLOADS = {
    "script": "Note <script>window.__xss = 'script'; alert('script')</script> end",
    "img": "Avatar <img src=x onerror=\"window.__xss = 'img'; alert('img')\"> end",
    "link": "Docs [here](javascript:alert('link')) and <a href=\"javascript:alert('a')\">here</a>",
    "svg": "Chart <svg onload=\"window.__xss = 'svg'\"></svg> end",
}
BIDI = "invoice\u202egpj.exe is the attachment the user opened"


def test_xss_payloads_render_as_inert_text(
    signed_in: Page, site: Site, writer: Writer, database_url: str, watch: Watch
) -> None:
    page = signed_in
    marker = uuid.uuid4().hex[:8]
    ids = {
        name: own_memory(site, writer, f"{payload} xsscase{marker}")
        for name, payload in XSS_PAYLOADS.items()
    }
    # The service refuses direction-changing characters; one already in the database (written
    # before that rule, or with SQL) must still show as a visible marker, not reorder the text.
    bidi_id = own_memory(site, writer, f"invoice gpj.exe is the attachment xsscase{marker}")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET properties = jsonb_set(properties, '{content}', "
            "to_jsonb(%s::text)) WHERE canonical_id = %s AND is_head",
            (f"{BIDI} xsscase{marker}", bidi_id),
        )

    def inert(where: str) -> None:
        assert page.evaluate("window.__xss") is None, where
        # nothing the payloads wrote became an element of the page
        assert page.locator("img[src=x], main script, main svg[onload]").count() == 0, where
        assert page.locator("a[href^='javascript:' i]").count() == 0, where
        assert page.locator("[onerror], [onload]").count() == 0, where

    page.goto(f"{site.base}/ui/memories?text=xsscase{marker}")
    for payload in XSS_PAYLOADS.values():
        expect(page.get_by_text(f"{payload} xsscase{marker}", exact=True)).to_be_visible()
    expect(page.locator(".ctl").first).to_have_text("⟪U+202E⟫")
    inert("browse")
    screenshot(page, "xss-browse")

    # a superseded memory's row names what replaced it: a payload there is text too
    older = own_memory(site, writer, f"Superseded note xsscase{marker} before")
    site.memory.supersede(writer.principal, ids["script"], older)
    page.goto(f"{site.base}/ui/memories?text=xsscase{marker}&status=superseded")
    expect(page.locator(f"#replaced-{older}")).to_contain_text(f"{XSS_PAYLOADS['script']}")
    inert("browse-superseded")
    screenshot(page, "xss-browse-superseded")
    # a refused edit gives back what was typed, as text
    page.goto(f"{site.base}/ui/memories/{ids['img']}")
    page.locator("#edit summary").click()
    typed = XSS_PAYLOADS["img"] + " ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    page.get_by_label("Content").fill(typed)
    page.get_by_role("button", name="Save a new version").click()
    expect(page.locator("#edit-error")).to_be_visible()
    expect(page.get_by_label("Content")).to_have_value(typed)
    inert("edit-refused")
    screenshot(page, "xss-edit-refused")

    page.goto(f"{site.base}/ui/search?q=xsscase{marker}")
    results = page.locator("#search-results")
    for payload in XSS_PAYLOADS.values():
        expect(results.get_by_text(f"{payload} xsscase{marker}", exact=True)).to_be_visible()
    expect(results.locator(".ctl").first).to_have_text("⟪U+202E⟫")
    inert("search")
    screenshot(page, "xss-search")

    for name, memory_id in ids.items():
        page.goto(f"{site.base}/ui/memories/{memory_id}")
        expect(page.locator("#memory-content")).to_have_text(
            f"{XSS_PAYLOADS[name]} xsscase{marker}"
        )
        # the edit form's textarea holds the text too, as text
        expect(page.get_by_label("Content")).to_have_value(f"{XSS_PAYLOADS[name]} xsscase{marker}")
        inert(name)
    # an agent's session id and client name are text from outside too
    inject(site, writer.token, f"<img src=x onerror=alert(1)>{marker}", client="<script>x</script>")
    prompt = f"<img src=x onerror=alert(1)> and <script>alert(2)</script> prompt {marker}"
    inject(site, writer.token, f"xss-prompt-{marker}", prompt=prompt)
    page.goto(f"{site.base}/ui/injections")
    expect(page.get_by_text(f"<img src=x onerror=alert(1)>{marker}").first).to_be_visible()
    expect(page.get_by_text(prompt, exact=True)).to_be_visible()
    inert("injections")
    screenshot(page, "xss-injections")

    # the new pages: a session's page, a memory's uses (a recall's query), the add form
    # refused with what was typed, the neighbours drawing
    page.goto(f"{site.base}/ui/injections?session=xss-prompt-{marker}")
    expect(page.get_by_text(prompt, exact=True)).to_be_visible()
    inert("session")
    site.memory.recall(writer.principal, f"{XSS_PAYLOADS['img']} xsscase{marker}")
    page.goto(f"{site.base}/ui/memories/{ids['img']}")
    expect(page.locator("#recalls")).to_contain_text(XSS_PAYLOADS["img"])
    expect(page.locator("svg#neighbours")).to_have_count(0)  # no relationship: no drawing
    inert("uses")
    page.goto(f"{site.base}/ui/memories/new")
    page.get_by_label("What to remember").fill(XSS_PAYLOADS["svg"])
    page.get_by_label("Why (optional)").fill(XSS_PAYLOADS["script"])
    page.get_by_label("Valid from (optional)").fill("2026-03-01")
    page.get_by_label("Valid until (optional)").fill("2026-02-01")
    page.get_by_role("button", name="Save memory").click()
    expect(page.get_by_role("alert")).to_contain_text("Not saved")
    expect(page.get_by_label("What to remember")).to_have_value(XSS_PAYLOADS["svg"])
    expect(page.get_by_label("Why (optional)")).to_have_value(XSS_PAYLOADS["script"])
    inert("add")

    page.goto(f"{site.base}/ui/memories/{bidi_id}")
    shown = page.locator("#memory-content").inner_text()
    assert shown == f"invoice⟪U+202E⟫gpj.exe is the attachment the user opened xsscase{marker}"
    inert("bidi")
    screenshot(page, "xss-memory-bidi")
    assert watch.dialogs == []


# -- a read-only token, forged requests and CSRF -------------------------------------------


def post_form(
    page: Page, path: str, form: dict[str, str | float | bool], **headers: str
) -> tuple[int, str]:
    """A POST from the browser context (its cookies), not through a form on the page."""
    response = page.request.post(page.url.split("/ui/")[0] + path, form=form, headers=headers)
    return response.status, response.text()


def test_a_read_only_token_sees_no_edit_controls_and_its_posts_are_refused(
    page: Page, site: Site, writer: Writer
) -> None:
    reader = site.token(writer.principal.actor_id, writer.principal.project_id, READ)
    memory_id = own_memory(site, writer, "The user runs the linters before pushing a branch")
    sign_in(page, site, reader)
    expect(page.locator(".who .badge")).to_have_text("read only")
    page.goto(f"{site.base}/ui/memories/{memory_id}")
    expect(page.locator("#memory-content")).to_have_text(
        "The user runs the linters before pushing a branch"
    )
    expect(page.locator("form[action*='/edit'], form[action*='/delete']")).to_have_count(0)
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    expect(page.get_by_text("Edit", exact=True)).to_have_count(0)
    screenshot(page, "read-only-memory")
    page.goto(site.base + "/ui/duplicates")
    expect(page.locator("form.decide")).to_have_count(0)
    screenshot(page, "read-only-duplicates")

    # Forged: the session's own CSRF token and this site's Origin, so only the scope refuses.
    csrf = csrf_of(page)
    origin = {"Origin": site.base}
    for action, form in (
        ("delete", {}),
        ("edit", {"content": "The user never runs the linters"}),
    ):
        status, body = post_form(
            page, f"/ui/memories/{memory_id}/{action}", {"csrf_token": csrf, **form}, **origin
        )
        assert status == 403, action
        assert "may only read" in body
    # and the same from a script in the page (fetch with the cookie)
    status = page.evaluate(
        """async ([url, csrf]) => {
            const body = new FormData(); body.append("csrf_token", csrf);
            return (await fetch(url, {method: "POST", body, credentials: "same-origin"})).status;
        }""",
        [f"/ui/memories/{memory_id}/delete", csrf],
    )
    assert status == 403
    assert status_of(site, writer, memory_id) == "active"
    detail = site.memory.list_memories(writer.principal, limit=100)
    [kept] = [m for m in detail["memories"] if m["id"] == memory_id]
    assert kept["content"] == "The user runs the linters before pushing a branch"


def test_changes_without_the_csrf_token_or_from_another_site_are_refused(
    signed_in: Page, site: Site, writer: Writer, context: BrowserContext
) -> None:
    page = signed_in
    memory_id = own_memory(site, writer, "The user pairs with Sam on Thursdays")
    page.goto(f"{site.base}/ui/memories/{memory_id}")
    csrf = csrf_of(page)
    path = f"/ui/memories/{memory_id}/delete"
    origin = {"Origin": site.base}
    status, body = post_form(page, path, {}, **origin)
    assert (status, "security token is missing or wrong" in body) == (403, True)
    status, body = post_form(page, path, {"csrf_token": "x" + csrf[1:]}, **origin)
    assert (status, "security token is missing or wrong" in body) == (403, True)
    status, body = post_form(page, path, {"csrf_token": csrf}, Origin="http://evil.example")
    assert (status, "another site" in body) == (403, True)
    assert status_of(site, writer, memory_id) == "active"

    # A page of another site that posts a form to the dashboard: the browser sends no cookie
    # (SameSite=Strict) and the server refuses it.
    evil = "http://evil.example/"
    context.route(
        evil,
        lambda route: route.fulfill(
            content_type="text/html",
            body=(
                f'<form id=f method=post action="{site.base}{path}">'
                f'<input name=csrf_token value="{csrf}"></form>'
                "<script>document.getElementById('f').submit()</script>"
            ),
        ),
    )
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.goto(evil)
    assert posted.value.url == site.base + path
    assert posted.value.status == 403
    page.wait_for_load_state()
    # no cookie came with it: the server saw no session at all
    expect(page.get_by_role("alert")).to_contain_text("no signed-in session came with this request")
    screenshot(page, "cross-site-post-refused")
    assert status_of(site, writer, memory_id) == "active"
    # and the genuine form still works
    page.goto(f"{site.base}/ui/memories/{memory_id}")
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_contain_text("Deleted.")
    assert status_of(site, writer, memory_id) == "deleted"


# -- the injection log and capture ---------------------------------------------------------

SECRET_PROMPT = "deploy it with the token ghp_abcdefghijklmnopqrstuvwxyzABCDEF123456 please"


def test_the_injection_log_shows_what_each_prompt_got(
    chromium: Browser, site: Site, watch: Watch
) -> None:
    """A prompt that got nothing says so, a prompt is shown as text, a prompt that held a
    secret is withheld, and a memory edited since shows as the agent received it; at a
    laptop's width and a phone's, with no sideways scroll on the phone."""
    principal = new_principal()
    token = site.token(principal.actor_id, principal.project_id)
    saved = site.memory.save(
        principal, "The staging database listens on port 5432", "fact", "explicit"
    )
    memory_id = saved["memory"]["id"]
    session = f"session-{uuid.uuid4().hex[:8]}"
    assert inject(site, token, session)["memories"]
    payload = '<img src=x onerror="window.__xss = 1"> what is the weather in Lisbon tomorrow'
    assert inject(site, token, session, prompt=payload)["context"] == ""
    assert inject(site, token, session, prompt=SECRET_PROMPT)["context"] == ""
    site.memory.update(
        principal, memory_id, {"content": "The staging database listens on port 6543"}
    )
    for width, name in ((1280, "injections-prompts"), (390, "phone-injections-prompts")):
        ctx = chromium.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            watch.attach(page)
            sign_in(page, site, token)
            page.goto(f"{site.base}/ui/injections")
            rows = page.locator("table.injections tbody tr")
            expect(rows).to_have_count(3)
            withheld, nothing, start = rows.nth(0), rows.nth(1), rows.nth(2)
            expect(withheld).to_contain_text("Prompt withheld: it held a secret.")
            expect(nothing.get_by_text(payload, exact=True)).to_be_visible()
            expect(nothing).to_contain_text(
                "Nothing relevant: no memory reached the relevance floor."
            )
            expect(start).to_contain_text("The staging database listens on port 5432")
            expect(start.locator(".badge.changed")).to_have_text("edited since")
            expect(page.locator("main")).not_to_contain_text("ghp_")
            expect(page.locator("main")).not_to_contain_text("port 6543")
            assert page.evaluate("window.__xss") is None
            assert page.locator("main img, [onerror]").count() == 0
            screenshot(page, name)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            ctx.close()
    watch.check()


def test_the_capture_page_says_capture_is_off_and_how_to_turn_it_on(
    chromium: Browser, site: Site, writer: Writer, watch: Watch
) -> None:
    for width, name in ((1280, "capture-off"), (390, "phone-capture-off")):
        ctx = chromium.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            watch.attach(page)
            sign_in(page, site, writer.token)
            page.goto(f"{site.base}/ui/capture")
            off = page.locator("#capture-off")
            expect(off.get_by_role("heading")).to_have_text("Automatic capture is off")
            expect(off).to_contain_text("EMERGENT_MEMORY_ANTHROPIC_API_KEY")
            expect(page.locator("#capture-counts")).to_have_count(0)  # no row of zeros
            screenshot(page, name)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            ctx.close()
    watch.check()


def test_the_capture_page_off_still_shows_what_capture_did(
    chromium: Browser, site: Site, database_url: str, watch: Watch
) -> None:
    principal = new_principal()
    token = site.token(principal.actor_id, principal.project_id)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO kb.llm_calls (actor_id, purpose, model, input_tokens, output_tokens, "
            "outcome) VALUES (%s, 'gate', 'claude-haiku-4-5', 1200, 30, 'ok')",
            (principal.actor_id,),
        )
        conn.execute(
            "INSERT INTO kb.capture_windows (actor_id, project_id, session_id, client, "
            "first_turn, end_turn, status, attempts, last_error) VALUES "
            "(%s, %s, 'session-dead', 'claude-code', 0, 4, 'dead', 6, 'gate: HTTP 401')",
            (principal.actor_id, principal.project_id),
        )
    for width, name in ((1280, "capture-off-history"), (390, "phone-capture-off-history")):
        ctx = chromium.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            watch.attach(page)
            sign_in(page, site, token)
            page.goto(f"{site.base}/ui/capture")
            expect(page.locator("#capture-off")).to_contain_text(
                "What capture did while it was on is below."
            )
            expect(page.locator("#dead-letters")).to_contain_text("session-dead")
            expect(page.locator("#llm-usage")).to_contain_text("claude-haiku-4-5")
            screenshot(page, name)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            ctx.close()
    watch.check()


# -- a phone -------------------------------------------------------------------------------


def test_pages_fit_a_phone(chromium: Browser, site: Site, writer: Writer, watch: Watch) -> None:
    """At a phone's width (390 CSS pixels) no page scrolls sideways: the navigation, the
    filters, tables and long words wrap or scroll inside themselves."""
    phone = chromium.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    try:
        page = phone.new_page()
        watch.attach(page)
        sign_in(page, site, writer.token)
        paths = every_page(writer)
        wide: dict[str, int] = {}
        for name, path in paths.items():
            page.goto(site.base + path)
            screenshot(page, f"phone-{name}")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                wide[name] = width
        assert wide == {}, "pages wider than the phone's 390 px"
    finally:
        phone.close()
    watch.check()


# -- light and dark ------------------------------------------------------------------------

# For every visible element with text of its own: its colour, the colour behind it (the first
# ancestor's with a background, over white or the page's), the contrast ratio (WCAG 2) and
# whether it is large text (18.66 px bold or 24 px), for the elements under 4.5:1 (3:1 large).
LOW_CONTRAST = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return rgb(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3);
  };
  const low = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!own || box.width < 2 || box.height < 2 || style.visibility === "hidden") continue;
    if (el.closest(".visually-hidden") || box.right < 0) continue;
    const [a, b] = [lum(rgb(style.color)), lum(behind(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      const words = el.textContent.trim().slice(0, 30);
      low.push(`${el.tagName.toLowerCase()}.${el.className} "${words}" ${ratio.toFixed(2)}`);
    }
  }
  return low;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_is_readable_in_light_and_dark(
    chromium: Browser, site: Site, writer: Writer, watch: Watch, scheme: str
) -> None:
    """The dashboard follows the system's colour scheme; in both, every text has a contrast
    of at least 4.5:1 with what is behind it (3:1 for large text), badges and notices too."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
    try:
        page = context.new_page()
        watch.attach(page)
        page.goto(site.ui)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == ("rgb(255, 255, 255)" if scheme == "light" else "rgb(20, 23, 27)")
        low = {"sign-in": page.evaluate(LOW_CONTRAST)}
        sign_in(page, site, writer.token)
        for name, path in every_page(writer).items():
            page.goto(site.base + path)
            screenshot(page, f"{scheme}-{name}")
            low[name] = page.evaluate(LOW_CONTRAST)
        assert {name: found for name, found in low.items() if found} == {}
    finally:
        context.close()
    watch.check()


def test_slash_goes_to_search(signed_in: Page, site: Site) -> None:
    """ "/" focuses the search box, from any page (elsewhere it opens the search page), and
    is typed as itself in a field."""
    page = signed_in
    page.goto(site.base + "/ui/search")
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    expect(page.locator("#q")).to_have_value("")  # the key only moves the focus
    page.keyboard.type("a/b")
    expect(page.locator("#q")).to_have_value("a/b")
    page.goto(site.base + "/ui/verify")
    page.get_by_label("Claim").fill("paths like a/b")  # typed in a field, a slash is a slash
    expect(page.get_by_label("Claim")).to_have_value("paths like a/b")
    page.locator("h1").click()
    page.keyboard.press("/")
    page.wait_for_url(f"{site.base}/ui/search")
    expect(page.locator("#q")).to_be_focused()


def test_add_a_memory_and_see_what_happened(signed_in: Page, site: Site, writer: Writer) -> None:
    page = signed_in
    page.goto(f"{site.base}/ui/memories/new")
    expect(page.get_by_role("heading", name="Add a memory")).to_be_visible()
    page.get_by_label("What to remember").fill("The on-call handbook lives in the ops wiki")
    page.get_by_label("Category").select_option("fact")
    page.get_by_label("Scope").select_option("project")
    page.get_by_label("Importance").select_option("high")
    page.get_by_label("Why (optional)").fill("people could not find it during incidents")
    screenshot(page, "add")
    page.get_by_role("button", name="Save memory").click()
    expect(page.get_by_role("status")).to_have_text("Added: a new memory.")
    expect(page.locator(".content")).to_have_text("The on-call handbook lives in the ops wiki")
    expect(page.locator("main")).to_contain_text("people could not find it during incidents")
    screenshot(page, "added")
    # refused: the error beside the form, what was typed still there
    page.goto(f"{site.base}/ui/memories/new")
    page.get_by_label("What to remember").fill("The on-call rotation changes on Mondays")
    page.get_by_label("Valid from (optional)").fill("2026-03-01")
    page.get_by_label("Valid until (optional)").fill("2026-02-01")
    page.get_by_role("button", name="Save memory").click()
    expect(page.get_by_role("alert")).to_contain_text("Not saved")
    expect(page.get_by_label("What to remember")).to_have_value(
        "The on-call rotation changes on Mondays"
    )
    screenshot(page, "add-refused")


def test_a_memory_page_draws_its_neighbours(signed_in: Page, site: Site, writer: Writer) -> None:
    page = signed_in
    old = site.memory.save(
        writer.principal, "The neighbours test queue is called jobs-v1", "fact", "explicit"
    )["memory"]["id"]
    current = site.memory.save(
        writer.principal,
        "Correction: the neighbours test queue is called jobs-v2",
        "fact",
        "explicit",
        context="<img src=x onerror=alert(1)> queues",
    )["memory"]["id"]
    port = site.memory.save(
        writer.principal, "The neighbours test database listens on port 5432", "fact", "explicit"
    )["memory"]["id"]
    rival = site.memory.save(
        writer.principal, "The neighbours test database listens on port 5433", "fact", "explicit"
    )
    assert rival["possible_duplicates"][0]["conflict"] is True
    page.goto(f"{site.base}/ui/memories/{current}")
    drawing = page.locator("svg#neighbours")
    expect(drawing).to_be_visible()
    relations = drawing.locator("text.relation").all_text_contents()
    assert "supersedes" in relations
    assert "in context" in relations
    # the context's name is text, not markup, in the drawing too
    expect(drawing.locator("text").filter(has_text="<img src=x onerror=alert(1)>")).to_have_count(1)
    assert drawing.locator("img").count() == 0
    screenshot(page, "memory-neighbours")
    # a memory it leads to is a link
    drawing.locator(f'a[href="/ui/memories/{old}"]').click()
    page.wait_for_url(f"{site.base}/ui/memories/{old}")
    expect(page.locator("svg#neighbours text.relation")).to_contain_text(["superseded by"])
    page.goto(f"{site.base}/ui/memories/{port}")
    expect(page.locator("svg#neighbours text.relation")).to_contain_text(["conflicts with"])
    expect(page.locator("svg#neighbours .node-conflicts")).to_contain_text("port 5433")


def test_switch_project_from_the_header(
    chromium: Browser, site: Site, writer: Writer, watch: Watch
) -> None:
    from emergent_memory.auth.principal import ANY_PROJECT, WRITE

    actor = uuid.uuid4()
    home, there = Principal(actor, uuid.uuid4()), Principal(actor, uuid.uuid4())
    site.memory.save(home, "The header test's memory of the first repository", "fact",
                     "explicit", "project")  # fmt: skip
    site.memory.save(there, "The header test's memory of the second repository", "fact",
                     "explicit", "project")  # fmt: skip
    site.memory.save(there, "The header test's user-wide habit", "preference", "explicit")
    token = site.token(actor, home.project_id, READ, WRITE, ANY_PROJECT)
    for width in (1280, 390):
        with page_at(chromium, watch, width) as page:
            sign_in(page, site, token)
            page.goto(f"{site.base}/ui/memories")
            choice = page.get_by_label("Project")
            expect(choice).to_have_value(str(home.project_id))
            expect(page.locator("main")).to_contain_text("memory of the first repository")
            choice.select_option(str(there.project_id))  # sent on change (no button needed)
            page.wait_for_url(f"{site.base}/ui/memories?project={there.project_id}")
            expect(page.locator("main")).to_contain_text("memory of the second repository")
            expect(page.locator("main")).not_to_contain_text("memory of the first repository")
            # remembered from page to page
            navigation = page.get_by_role("navigation", name="Dashboard")
            navigation.get_by_role("link", name="Browse").click()
            expect(page.get_by_label("Project")).to_have_value(str(there.project_id))
            screenshot(page, f"project-switched-{width}")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            # every project at once, for reading; each project-scope memory names its project
            page.get_by_label("Project").select_option("all")
            page.wait_for_url(f"{site.base}/ui/memories?project=all")
            main = page.locator("main")
            expect(main).to_contain_text("memory of the first repository")
            expect(main).to_contain_text("memory of the second repository")
            expect(main).to_contain_text(f"project {str(there.project_id)[:8]}")
            expect(page.locator("#bulk-form")).to_have_count(0)
            screenshot(page, f"all-projects-{width}")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.get_by_role(
                "link", name="The header test's memory of the first repository"
            ).click()
            expect(page.get_by_label("Project")).to_have_value(str(home.project_id))
            # the user-scope memories: Browse filtered to them
            page.get_by_label("Project").select_option("user")
            page.wait_for_url(f"{site.base}/ui/memories?scope=user")
            expect(main).to_contain_text("user-wide habit")
            expect(main).not_to_contain_text("memory of the first repository")
    watch.check()


def test_import_a_downloaded_file_and_see_what_each_memory_became(
    chromium: Browser, site: Site, watch: Watch, tmp_path: Path
) -> None:
    """A user downloads their memories on one page and imports them as another user (or on
    another machine): the report says what happened to each, markup in the file stays text,
    and it fits a phone."""
    from emergent_memory.auth.principal import WRITE

    source, target = Principal(uuid.uuid4(), uuid.uuid4()), Principal(uuid.uuid4(), uuid.uuid4())
    habit = 'The import test\'s <img src=x onerror="alert(1)"> habit'
    site.memory.save(source, habit, "preference", "explicit")
    site.memory.save(source, "The import test's deploy window is Tuesday 10:00", "decision",
                     "explicit", "project", importance="high")  # fmt: skip
    site.memory.save(target, "The import test's deploy window is Tuesday 10:00", "decision",
                     "explicit", "project")  # fmt: skip
    for width in (1280, 390):
        with page_at(chromium, watch, width) as page:
            sign_in(page, site, site.token(source.actor_id, source.project_id, READ, WRITE))
            page.goto(f"{site.base}/ui/memories")
            with page.expect_download() as downloading:
                page.get_by_role("link", name="Download your memories").click()
            file = tmp_path / f'export-<img src=x onerror="alert({width})">.jsonl'
            downloading.value.save_as(file)
            page.locator("#signout").click()
            sign_in(page, site, site.token(target.actor_id, target.project_id, READ, WRITE))
            page.goto(f"{site.base}/ui/memories")
            page.get_by_role("link", name="Import memories").click()
            expect(page.get_by_role("heading", name="Import memories")).to_be_visible()
            page.get_by_label("Export file (.jsonl)").set_input_files(file)
            page.get_by_role("button", name="Import").click()
            summary = page.locator("#import-summary")
            written = 1 if width == 1280 else 0  # the second time, both are held already
            expect(summary).to_have_text(f"2 current memories in the file; {written} written.")
            expect(page.locator("#import-report h2")).to_contain_text("export-<img src=x onerror")
            expect(page.get_by_role("link", name=habit)).to_be_visible()  # the markup is text
            screenshot(page, f"import-{width}")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
    watch.check()


def test_name_a_project_and_see_it_in_the_header(
    chromium: Browser, site: Site, watch: Watch
) -> None:
    """The Projects page names the project shown; the name (markup in it is text) then
    stands in the header and the selector, at desktop and phone widths."""
    from emergent_memory.auth.principal import ANY_PROJECT, WRITE

    actor = uuid.uuid4()
    home, there = Principal(actor, uuid.uuid4()), Principal(actor, uuid.uuid4())
    site.memory.save(there, "The naming test's memory of another repository", "fact",
                     "explicit", "project")  # fmt: skip
    token = site.token(actor, home.project_id, READ, WRITE, ANY_PROJECT)
    for width in (1280, 390):
        with page_at(chromium, watch, width) as page:
            sign_in(page, site, token)
            page.get_by_role("navigation", name="Dashboard").get_by_role(
                "link", name="Projects"
            ).click()
            expect(page.get_by_role("heading", name="Projects", exact=True)).to_be_visible()
            name = f'<img src=x onerror="alert({width})"> billing'
            page.get_by_label("Name", exact=True).fill(name)
            page.get_by_role("button", name="Save name").click()
            expect(page.get_by_role("status")).to_contain_text("Saved")
            choice = page.get_by_label("Project")
            expect(choice.locator("option:checked")).to_contain_text(name)
            expect(page.locator("#projects-table")).to_contain_text(name)
            screenshot(page, f"projects-{width}")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
    watch.check()
