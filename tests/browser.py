"""A real Chromium for the dashboard's browser tests, driven by Playwright (a dev dependency).

    executable = chromium_executable()      # finds it, installs it on first use where it can
    with sync_playwright() as playwright:
        browser = launch(playwright, executable)

No browser is downloaded at test time unless nothing else works. In order, the first that runs:
1. the browser named by EMERGENT_MEMORY_CHROMIUM (a path), when set;
2. a system Chromium on PATH (Debian's `chromium` package: /usr/bin/chromium);
3. Playwright's own Chromium, if `playwright install chromium` put it there;
4. as root with apt-get (CI here): `apt-get install -y chromium`, then 2 again;
5. `python -m playwright install chromium` (where downloads work), then 3 again;
else ChromiumUnavailable says exactly what to install.

`make test` runs this first (`python -m tests.browser`), so that a fresh clone's CI has the
browser before pytest starts; a test that finds none installs it the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

# Names a system Chromium goes by on PATH (Debian: chromium; others: chromium-browser, or Chrome).
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")
ENVIRONMENT = "EMERGENT_MEMORY_CHROMIUM"
APT_PACKAGE = "chromium"
INSTALL_TIMEOUT = 900  # seconds: apt's chromium and its libraries are about 100 MB
# Chromium refuses to run as root without --no-sandbox, and containers rarely allow its
# sandbox's namespaces; the tests only open pages of their own local server.
LAUNCH_ARGS = ["--no-sandbox", "--disable-dev-shm-usage"]

WHAT_TO_INSTALL = (
    "the dashboard's browser tests need Chromium and the Playwright package: install Debian's "
    "or Ubuntu's Chromium (`sudo apt-get install chromium`, or `chromium-browser`), or let "
    "Playwright download its own (`.venv/bin/python -m playwright install --with-deps "
    f"chromium`), or set {ENVIRONMENT} to a Chromium or Chrome executable; then run the tests "
    "again"
)


class ChromiumUnavailable(RuntimeError):
    """No Chromium that runs is installed, and none could be installed here."""


def _runs(executable: str | Path) -> bool:
    """`executable --version` answers (a leftover wrapper of a removed package does not)."""
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and ("Chromium" in done.stdout or "Chrome" in done.stdout)


def system_chromium() -> Path | None:
    """A Chromium or Chrome on PATH that runs, or None."""
    for name in SYSTEM_NAMES:
        found = shutil.which(name)
        if found is not None and _runs(found):
            return Path(found)
    return None


def playwright_chromium() -> Path | None:
    """The Chromium that `playwright install chromium` put in Playwright's cache, or None."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as playwright:
        path = Path(playwright.chromium.executable_path)
    return path if path.exists() and _runs(path) else None


def _quiet(command: list[str], *, env: dict[str, str] | None = None) -> str | None:
    """Run an install command; None when it succeeded, else the end of what it said."""
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
            env=env,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    said = (done.stdout + done.stderr).strip().splitlines()
    errors = [line for line in said if line.lstrip().startswith(("E:", "Error:"))]
    return f"exit {done.returncode}: " + "; ".join(dict.fromkeys((errors or said)[-3:]))[-1000:]


def _apt_install() -> str | None:
    """`apt-get install -y chromium` (after `apt-get update` when the package lists are
    missing or stale); None when it worked, else why not."""
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    # with its recommended packages: fonts (fonts-liberation), so that pages render text
    install = ["apt-get", "install", "-y", APT_PACKAGE]
    if _quiet(install, env=env) is None:
        return None
    failed = _quiet(["apt-get", "update"], env=env)
    if failed is not None:
        return f"`apt-get update` failed ({failed})"
    failed = _quiet(install, env=env)
    return None if failed is None else f"`apt-get install -y {APT_PACKAGE}` failed ({failed})"


def _can_apt() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def chromium_executable(*, install: bool = True) -> Path:
    """A Chromium that runs (see the module's docstring for where it is looked for), installed
    first when there is none and `install`; else ChromiumUnavailable saying what to install."""
    try:
        import playwright  # noqa: F401
    except ImportError as exc:
        raise ChromiumUnavailable(
            "the Playwright package is missing: install the dev extra "
            "(`.venv/bin/python -m pip install -e '.[dev]'`, which `make test` does); "
            + WHAT_TO_INSTALL
        ) from exc
    configured = os.environ.get(ENVIRONMENT)
    if configured:
        if _runs(configured):
            return Path(configured)
        raise ChromiumUnavailable(f"{ENVIRONMENT}={configured} does not run (`--version`)")
    found = system_chromium() or playwright_chromium()
    if found is not None:
        return found
    if not install:
        raise ChromiumUnavailable(
            "no Chromium found: run `make test` or `.venv/bin/python -m tests.browser`, which "
            "install one where they can; " + WHAT_TO_INSTALL
        )
    reasons: list[str] = []
    if _can_apt():
        failed = _apt_install()
        if failed is None and (found := system_chromium()) is not None:
            return found
        reasons.append(failed or f"`apt-get install {APT_PACKAGE}` installed no Chromium that runs")
    failed = _quiet([sys.executable, "-m", "playwright", "install", "chromium"])
    if failed is None and (found := playwright_chromium()) is not None:
        return found
    reasons.append(f"`playwright install chromium` failed ({failed or 'no browser after it'})")
    raise ChromiumUnavailable(WHAT_TO_INSTALL + "\n" + "\n".join(reasons))


def launch(
    playwright: Playwright, executable: Path | None = None, extra_args: Sequence[str] = ()
) -> Browser:
    """A headless Chromium (the one chromium_executable finds, unless given), with
    `extra_args` on its command line."""
    return playwright.chromium.launch(
        executable_path=str(executable or chromium_executable()),
        args=[*LAUNCH_ARGS, *extra_args],
        headless=True,
    )


def check_launches(executable: Path) -> str:
    """Open a page in `executable` through Playwright; the browser's version."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright, executable)
        try:
            page = browser.new_page()
            page.set_content("<p id=ok>ok</p>")
            if page.inner_text("#ok") != "ok":
                raise ChromiumUnavailable(f"{executable} opened a page but did not render it")
            return browser.version
        finally:
            browser.close()


def main() -> int:
    """Find or install Chromium and check that Playwright drives it (what `make test` runs)."""
    try:
        executable = chromium_executable()
        version = check_launches(executable)
    except ChromiumUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # Playwright's own errors: the browser did not start
        print(
            f"error: Playwright could not start Chromium: {exc}\n{WHAT_TO_INSTALL}",
            file=sys.stderr,
        )
        return 1
    print(f"Chromium {version}: {executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
