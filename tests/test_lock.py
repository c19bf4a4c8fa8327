"""The lock files make installs from (requirements/): they pin every requirement of
pyproject.toml with hashes, the environment make built holds exactly what they pin, and make
refuses, before installing anything, a machine they do not cover."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import distributions
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "requirements"))
import lock  # noqa: E402  (requirements/lock.py, a script beside the files it writes)

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)==(?P<version>\S+)(?: ; (?P<marker>[^\\]+?))? \\$")
# What make installed this environment from: "locked" or "latest" (Makefile, $(INSTALLED)).
STAMP = Path(sys.prefix) / ".installed"


def pins(path: Path) -> list[tuple[str, Version, Marker | None, list[str]]]:
    """(name, version, marker, hashes) of each entry of a lock file."""
    found: list[tuple[str, Version, Marker | None, list[str]]] = []
    for line in path.read_text().splitlines():
        entry = ENTRY.match(line)
        if entry:
            marker = Marker(entry["marker"]) if entry["marker"] else None
            found.append((canonicalize_name(entry["name"]), Version(entry["version"]), marker, []))
        elif line.strip().startswith("--hash=sha256:"):
            found[-1][3].append(line.strip().removeprefix("--hash=sha256:").rstrip(" \\"))
    return found


def here(marker: Marker | None) -> bool:
    return marker is None or marker.evaluate()


LOCKED = pins(lock.LOCK)
TORCH_CPU = pins(lock.TORCH_LOCK)


def test_every_entry_is_pinned_with_hashes() -> None:
    assert len(LOCKED) > 100
    for name, version, _, hashes in LOCKED + TORCH_CPU:
        assert hashes, f"{name}=={version} has no hash"
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name


def test_every_requirement_of_the_project_is_locked_within_its_range() -> None:
    """A requirement added to pyproject.toml (or a range that excludes the locked version)
    fails here until make lock is run."""
    requirements = [*PROJECT["dependencies"]]
    for extra in ("offline", "dev"):
        requirements += PROJECT["optional-dependencies"][extra]
    for environment in ({"sys_platform": "linux", "platform_machine": "x86_64"},
                        {"sys_platform": "darwin", "platform_machine": "arm64"}):  # fmt: skip
        for text in requirements:
            requirement = Requirement(text)
            name = canonicalize_name(requirement.name)
            versions = [
                version
                for pinned, version, marker, _ in LOCKED + TORCH_CPU
                if pinned == name and (marker is None or marker.evaluate(environment))
            ]
            assert versions, f"{name} is not locked for {environment}: run make lock"
            for version in versions:
                assert requirement.specifier.contains(version, prereleases=True), (
                    f"{name}=={version} is locked, but pyproject.toml asks for {requirement}"
                )


def test_torch_is_the_cpu_build_of_the_locked_release_on_linux_and_pypi_s_on_macos() -> None:
    assert TORCH_CPU
    linux = {"sys_platform": "linux", "platform_machine": "x86_64"}
    macos = {"sys_platform": "darwin", "platform_machine": "arm64"}
    for name, version, marker, _ in TORCH_CPU:
        assert (name, str(version)) == ("torch", f"{lock.TORCH}+cpu")
        assert marker is not None
        assert marker.evaluate(linux)
        assert not marker.evaluate(macos)
    [(_, version, marker, _)] = [pin for pin in LOCKED if pin[0] == "torch"]
    assert str(version) == lock.TORCH
    assert marker is not None
    assert marker.evaluate(macos)
    assert not marker.evaluate(linux)
    assert not [name for name, *_ in LOCKED if name.startswith(("nvidia-", "cuda-"))]
    assert "triton" not in {name for name, *_ in LOCKED}


def test_the_environment_holds_what_make_installed() -> None:
    """Installed by make from the lock: every package of the lock for this machine, at its
    version, and nothing the lock does not name. By make test-latest: at least those versions
    (the newest the ranges allow), torch at the locked release."""
    mode = STAMP.read_text().strip() if STAMP.exists() else None
    assert mode in ("locked", "latest"), f"{STAMP} should say how make installed this"
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version) for d in distributions()}
    wanted = {name: version for name, version, marker, _ in LOCKED + TORCH_CPU if here(marker)}
    assert installed["torch"].public == lock.TORCH
    if mode == "locked":
        assert {name: installed.get(name) for name in wanted} == wanted
        extra = set(installed) - set(wanted) - {"emergent-memory"}
        assert not extra, f"installed but not in the lock: {sorted(extra)}"
    else:
        older = {n: (installed.get(n), v) for n, v in wanted.items() if installed.get(n, v) < v}
        assert not older, f"older than the lock in make test-latest: {older}"


@pytest.mark.parametrize(
    ("system", "machine", "python", "refused"),
    [
        ("Linux", "x86_64", (3, 11), None),
        ("Linux", "x86_64", (3, 10), "needs Python 3.11 or newer"),
        ("Linux", "x86_64", (3, 12), "CPU build for Python 3.11 on Linux x86_64, not for 3.12"),
        ("Linux", "aarch64", (3, 11), "not Linux aarch64"),
        ("Darwin", "arm64", (3, 12), None),
        ("Darwin", "arm64", (3, 14), "not 3.14"),
        ("Darwin", "x86_64", (3, 12), "not Darwin x86_64"),
        ("Windows", "AMD64", (3, 12), "not Windows amd64"),
    ],
)
def test_make_refuses_a_machine_the_lock_does_not_cover(
    monkeypatch: pytest.MonkeyPatch,
    system: str,
    machine: str,
    python: tuple[int, int],
    refused: str | None,
) -> None:
    monkeypatch.setattr(lock, "covered_pythons_on_linux", lambda text: ["3.11"])
    found = lock.problem(system, machine, python)
    if refused is None:
        assert found is None
    else:
        assert found is not None
        assert refused in found


def test_the_refusal_says_what_to_do_and_installs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(lock.platform, "system", lambda: "Windows")
    assert lock.check() == 1
    said = capsys.readouterr().err
    assert said.startswith("make: the lock covers Linux x86_64 and macOS arm64")
    assert "pip install -e '.[offline,dev]'" in said  # what to do instead


def test_a_linux_python_without_a_locked_cpu_build_of_torch_is_refused() -> None:
    covered = lock.covered_pythons_on_linux(lock.TORCH_LOCK.read_text())
    assert "3.11" in covered  # the Python CI runs
    assert covered == sorted(covered)


def test_the_check_runs_on_the_machine_s_python_before_any_install() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "requirements" / "lock.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
