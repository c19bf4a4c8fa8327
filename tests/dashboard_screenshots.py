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
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database
from tests.browser import chromium_executable, launch
from tests.dashboard_site import REPOSITORY, Site, dashboard_site, new_principal, seed_demo

if TYPE_CHECKING:
    from playwright.sync_api import Page

OUT = REPOSITORY / "docs" / "images"
VIEWPORT = {"width": 1100, "height": 720}  # a laptop's browser window, less its borders
MAX_BYTES = 100_000  # each image stays small: the documentation is read in the repository too


def _pages(site: Site, ids: dict[str, str]) -> list[tuple[str, Callable[[Page], None]]]:
    """(file name, what to do on the signed-in page before the screenshot), in order."""

    def go(path: str) -> Callable[[Page], None]:
        def visit(page: Page) -> None:
            page.goto(site.base + path)
            page.wait_for_load_state("networkidle")

        return visit

    return [
        ("dashboard-search", go("/ui/search?q=how+do+I+run+the+tests")),
        ("dashboard-browse", go("/ui/memories")),
        ("dashboard-memory", go(f"/ui/memories/{ids['edited']}")),
        ("dashboard-duplicates", go("/ui/duplicates")),
        ("dashboard-stats", go("/ui/stats")),
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
            with dashboard_site(db.url) as site, sync_playwright() as playwright:
                principal = new_principal()
                ids = seed_demo(site.memory, principal)
                token = site.token(principal.actor_id, principal.project_id)
                browser = launch(playwright, chromium_executable())
                context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
                page = context.new_page()
                page.goto(site.ui)
                written.append(_shot(page, out / "dashboard-sign-in.png"))
                page.get_by_label("Token").fill(token)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_load_state("networkidle")
                for name, prepare in _pages(site, ids):
                    prepare(page)
                    written.append(_shot(page, out / f"{name}.png"))
                browser.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return written


def _shot(page: Page, path: Path) -> Path:
    """The visible part of the page (not the whole scroll height: the images stay small)."""
    page.screenshot(path=str(path), full_page=False)
    size = path.stat().st_size
    if size > MAX_BYTES:
        print(f"warning: {path} is {size:,} bytes (more than {MAX_BYTES:,})", file=sys.stderr)
    return path


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
