"""tests/browser.py: which Chromium the browser tests use, and what it says when there is none."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests import browser


def _fake_chromium(folder: Path, name: str, says: str, status: int = 0) -> Path:
    """An executable that answers --version like a browser (or fails)."""
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{says}'\nexit {status}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH with only a folder of our own, no Playwright download and no configured browser."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv(browser.ENVIRONMENT, raising=False)
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    return folder


def test_a_system_chromium_on_path_is_used(empty_path: Path) -> None:
    chromium = _fake_chromium(empty_path, "chromium", "Chromium 156.0.8078.79 built on Debian")
    assert browser.chromium_executable(install=False) == chromium


def test_a_leftover_that_does_not_run_is_skipped(empty_path: Path) -> None:
    _fake_chromium(empty_path, "chromium", "error while loading shared libraries", status=127)
    chrome = _fake_chromium(empty_path, "google-chrome", "Google Chrome 140.0")
    assert browser.chromium_executable(install=False) == chrome


def test_the_configured_browser_comes_first(
    empty_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_chromium(empty_path, "chromium", "Chromium 156.0")
    mine = _fake_chromium(tmp_path, "my-chrome", "Chromium 150.0")
    monkeypatch.setenv(browser.ENVIRONMENT, str(mine))
    assert browser.chromium_executable(install=False) == mine
    monkeypatch.setenv(browser.ENVIRONMENT, str(tmp_path / "missing"))
    with pytest.raises(browser.ChromiumUnavailable, match="does not run"):
        browser.chromium_executable(install=False)


def test_without_a_browser_it_says_what_to_install(empty_path: Path) -> None:
    with pytest.raises(browser.ChromiumUnavailable) as raised:
        browser.chromium_executable(install=False)
    said = str(raised.value)
    assert "apt-get install chromium" in said
    assert "playwright install --with-deps chromium" in said
    assert browser.ENVIRONMENT in said


def test_installing_tries_apt_then_playwright_and_says_why_both_failed(
    empty_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []

    def refuse(command: list[str], *, env: dict[str, str] | None = None) -> str:
        ran.append(command)
        return "exit 100: E: Unable to locate package chromium"

    monkeypatch.setattr(browser, "_can_apt", lambda: True)
    monkeypatch.setattr(browser, "_quiet", refuse)
    with pytest.raises(browser.ChromiumUnavailable) as raised:
        browser.chromium_executable()
    assert [c[:2] for c in ran] == [
        ["apt-get", "install"],
        ["apt-get", "update"],
        [ran[2][0], "-m"],
    ]
    assert ran[2][1:] == ["-m", "playwright", "install", "chromium"]
    said = str(raised.value)
    assert "Unable to locate package chromium" in said
    assert "`playwright install chromium` failed" in said


def test_installing_with_apt_finds_the_installed_browser(
    empty_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def apt(command: list[str], *, env: dict[str, str] | None = None) -> str | None:
        assert command[:2] == ["apt-get", "install"]
        assert env is not None
        assert env["DEBIAN_FRONTEND"] == "noninteractive"
        _fake_chromium(empty_path, "chromium", "Chromium 156.0")
        return None

    monkeypatch.setattr(browser, "_can_apt", lambda: True)
    monkeypatch.setattr(browser, "_quiet", apt)
    assert browser.chromium_executable() == empty_path / "chromium"


def test_main_drives_the_real_browser(capsys: pytest.CaptureFixture[str]) -> None:
    """What `make browser` runs: this machine's Chromium opens a page through Playwright."""
    assert browser.main() == 0
    said = capsys.readouterr().out
    assert said.startswith("Chromium ")
    assert os.path.exists(said.rsplit(": ", 1)[1].strip())
