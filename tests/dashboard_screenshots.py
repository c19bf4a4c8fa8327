"""Regenerate the dashboard's screenshots in docs/images/ (docs/dashboard.md shows them):

    .venv/bin/python -m tests.dashboard_screenshots [--out docs/images]

It starts an embedded PostgreSQL in a temporary directory, migrates it, serves it with the real
`emergent-memory serve --transport http` (the fake embedding provider: no model to load),
seeds a small demo history (tests/dashboard_site.py: seed_demo), signs in with a token in
headless Chromium (tests/browser.py finds it) at a laptop's width, and writes one PNG per page.
Nothing is downloaded; it takes about half a minute.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database, with_role
from emergent_memory.db.roles import ensure_login_role
from tests.browser import chromium_executable, launch
from tests.dashboard_site import (
    DEMO_MEMORIES,
    REPOSITORY,
    dashboard_site,
    new_principal,
    seed_demo,
)

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect, Page, ViewportSize

OUT = REPOSITORY / "docs" / "images"
VIEWPORT: ViewportSize = {
    "width": 1024,
    "height": 640,
}  # a laptop's browser window, less its borders
MAX_BYTES = 100_000  # each image stays small: the documentation is read in the repository too


# (file name, the page's path, an element to scroll to the top of the picture or None)
def _pages(ids: dict[str, str]) -> list[tuple[str, str, str | None]]:
    memory = f"/ui/memories/{ids['edited']}"
    return [
        ("dashboard-search", "/ui/search?q=how+do+I+run+the+tests", None),
        ("dashboard-browse", "/ui/memories", None),
        ("dashboard-memory", memory, None),
        ("dashboard-memory-history", memory, "#h-versions"),
        (
            "dashboard-verify",
            "/ui/verify?claim=The+API+gateway+times+out+requests+after+30+seconds",
            None,
        ),
        ("dashboard-duplicates", "/ui/duplicates", None),
        ("dashboard-stats", "/ui/stats", None),
        ("dashboard-add", "/ui/memories/new", None),
        ("dashboard-session", "/ui/injections?session=session-demo-1", None),
    ]


def capture(out: Path) -> list[Path]:
    """Serve a seeded demo database and write the screenshots to `out`; their paths."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    data_dir = Path(tempfile.mkdtemp(prefix="emshots-", dir="/tmp"))  # short: a socket's path
    try:
        with open_database(None, data_dir) as db:
            migrate.upgrade(db.url)
            # the server connects as an application role, as `serve` does on the embedded server
            password = secrets.token_hex(16)
            ensure_login_role(db.url, "emergent_memory_screenshots", password=password)
            app_url = with_role(db.url, "emergent_memory_screenshots", password)
            with dashboard_site(db.url, app_url) as site, sync_playwright() as playwright:
                principal = new_principal()
                ids = seed_demo(site.memory, principal)
                _spread_over_a_week(db.url, ids)
                token = site.token(principal.actor_id, principal.project_id)
                browser = launch(playwright, chromium_executable())
                context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
                page = context.new_page()
                page.goto(site.ui)
                written.append(_shot(page, out / "dashboard-sign-in.png"))
                page.get_by_label("API token").fill(token)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_load_state("networkidle")
                for name, path, scroll_to in _pages(ids):
                    response = page.goto(site.base + path)
                    if response is None or response.status != 200:
                        status = None if response is None else response.status
                        raise SystemExit(
                            f"error: {path} answered {status}: {page.inner_text('main')}"
                        )
                    page.wait_for_load_state("networkidle")
                    if scroll_to is not None:
                        page.locator(scroll_to).evaluate("e => e.scrollIntoView()")
                    written.append(_shot(page, out / f"{name}.png"))
                # dark mode follows the system's setting: the list as it shows then
                dark = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
                dark.add_cookies(context.cookies())
                night = dark.new_page()
                night.goto(site.base + "/ui/memories")
                night.wait_for_load_state("networkidle")
                written.append(_shot(night, out / "dashboard-dark.png"))
                # the demo user's download imported by another user: what each memory became
                page.goto(site.base + "/ui/memories")
                with page.expect_download() as downloading:
                    page.get_by_role("link", name="Download your memories").click()
                file = data_dir / "export.jsonl"
                downloading.value.save_as(file)
                other = new_principal()
                mover = browser.new_context(viewport=VIEWPORT, color_scheme="light").new_page()
                mover.goto(site.ui)
                mover.get_by_label("API token").fill(site.token(other.actor_id, other.project_id))
                mover.get_by_role("button", name="Sign in").click()
                mover.goto(site.base + "/ui/import")
                mover.get_by_label("Export file (.jsonl)").set_input_files(file)
                mover.get_by_role("button", name="Import").click()
                mover.locator("#import-report").evaluate("e => e.scrollIntoView()")
                written.append(_shot(mover, out / "dashboard-import.png"))
                # the Projects page of a user with two named repositories
                from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
                from emergent_memory.memory.project_names import ProjectNames

                second = Principal(principal.actor_id, new_principal().project_id)
                site.memory.save(second, "Invoices are numbered per tenant", "convention",
                                 "explicit", "project")  # fmt: skip
                names = ProjectNames(site.memory.pool)
                names.rename(second, "billing-service", named_by="folder")
                names.rename(principal, "payments-api", named_by="folder")
                chooser = browser.new_context(viewport=VIEWPORT, color_scheme="light").new_page()
                chooser.goto(site.ui)
                chooser.get_by_label("API token").fill(
                    site.token(principal.actor_id, principal.project_id, READ, WRITE, ANY_PROJECT)
                )
                chooser.get_by_role("button", name="Sign in").click()
                chooser.goto(site.base + "/ui/projects")
                written.append(_shot(chooser, out / "dashboard-projects.png"))
                browser.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return written


def _spread_over_a_week(owner_url: str, ids: dict[str, str]) -> None:
    """Date the demo memories as if saved over a week, two a day (all of a memory's versions
    move together), so that the stats page's growth chart has a shape."""
    saved = [ids[content] for content, _, _ in DEMO_MEMORIES] + [ids["duplicate"]]
    with psycopg.connect(owner_url, autocommit=True) as conn:
        for age, memory_id in enumerate(reversed(saved)):
            conn.execute(
                "UPDATE kb.graph_objects SET created_at = created_at - %(shift)s, "
                "updated_at = updated_at - %(shift)s, deleted_at = deleted_at - %(shift)s "
                "WHERE canonical_id = %(id)s",
                {"shift": timedelta(days=age // 2), "id": memory_id},
            )


def _shot(page: Page, path: Path) -> Path:
    """The visible part of the page (not the whole scroll height), less of its bottom while
    the PNG is over MAX_BYTES."""
    height = VIEWPORT["height"]
    while True:
        clip: FloatRect = {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height}
        page.screenshot(path=str(path), clip=clip)
        if path.stat().st_size <= MAX_BYTES or height <= 300:
            return path
        height -= 80


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    args = parser.parse_args(argv)
    for path in capture(args.out):
        print(f"{path.relative_to(REPOSITORY) if path.is_relative_to(REPOSITORY) else path}: "
              f"{path.stat().st_size:,} bytes")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
