"""The package as a user installs it in one line: the wheel built from this tree, run by `uvx`
in an isolated environment of its own, offline, from uv's cache under `.cache/uv/`.

    wheel = build_wheel(directory)              # hatchling, from this tree, about a second
    done = run_uvx(wheel, "--version")          # uvx --offline --from <wheel> emergent-memory ...

`make test` fills the cache before pytest runs (`python -m tests.uvx_install`: the same run
once with the network, which downloads the wheel's dependencies, at the versions
requirements/lock.txt pins); a test that finds the cache empty fills it the same way before
its offline run. uv is the one the lock pins (beside this Python); the run environment's
Python is this one's base interpreter, so nothing of this virtual environment (its editable
install of the package above all) is in it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
CACHE = REPOSITORY / ".cache" / "uv"
LOCK = REPOSITORY / "requirements" / "lock.txt"
DOWNLOAD_TIMEOUT = 600  # seconds: the first run downloads every dependency
RUN_TIMEOUT = 300  # seconds: a hang guard, not a budget (offline, it takes a second or two)


class UvxUnavailable(RuntimeError):
    """uv is not installed, or the wheel's dependencies cannot be had."""


def uvx_executable() -> Path:
    """`uvx` beside this Python (requirements/lock.txt pins uv), else the one on PATH."""
    beside = Path(sys.executable).parent / "uvx"
    if beside.exists():
        return beside
    found = shutil.which("uvx")
    if found is None:
        raise UvxUnavailable(
            "uvx is not installed: run `make test` (uv is in requirements/lock.txt), or install uv"
        )
    return Path(found)


def build_wheel(directory: Path) -> Path:
    """The wheel of this tree, built into `directory` by the build backend (hatchling,
    installed by the lock), without build isolation: nothing is downloaded."""
    built = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "-d", str(directory)],
        cwd=REPOSITORY,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    wheels = sorted(directory.glob("emergent_memory-*.whl"))
    if built.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"building the wheel failed (exit {built.returncode}):\n{built.stderr}")
    return wheels[0]


def uvx_env() -> dict[str, str]:
    """This process's environment without what would leak this checkout or this virtual
    environment into the run (PYTHONPATH, VIRTUAL_ENV) or keep uv from its cache, with uv's
    cache under `.cache/uv/` and no Python downloads. uv's index settings (a mirror) stay."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "UV_NO_CACHE", "UV_OFFLINE", "UV_PYTHON"}
    env = {name: value for name, value in os.environ.items() if name not in dropped}
    env["UV_CACHE_DIR"] = str(CACHE)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def uvx_command(wheel: Path, command: str, *arguments: str, offline: bool) -> list[str]:
    """`uvx --from <wheel> <command> <arguments>` in an environment of its own, the wheel's
    dependencies at the lock's versions."""
    return [
        str(uvx_executable()),
        "--no-config",
        "--isolated",
        "--quiet",
        *(["--offline"] if offline else []),
        "--python",
        sys.executable,
        "--constraints",
        str(LOCK),
        "--from",
        str(wheel),
        command,
        *arguments,
    ]


def run_uvx(
    wheel: Path, *arguments: str, command: str = "emergent-memory", offline: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run the wheel's `command` (its console script, or a program of its environment such as
    `python`) through uvx, from a directory outside this checkout."""
    with tempfile.TemporaryDirectory(prefix="uvx-run-") as directory:
        return subprocess.run(
            uvx_command(wheel, command, *arguments, offline=offline),
            cwd=directory,
            env=uvx_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DOWNLOAD_TIMEOUT if not offline else RUN_TIMEOUT,
            check=False,
        )


def fill_cache(wheel: Path) -> None:
    """Have uv's cache hold what `wheel` needs: nothing to do when an offline run works, else
    one run with the network (the package index, or a mirror set in uv's environment)."""
    if run_uvx(wheel, "--version").returncode == 0:
        return
    online = run_uvx(wheel, "--version", offline=False)
    if online.returncode != 0:
        raise UvxUnavailable(
            f"`uvx --from {wheel.name} emergent-memory --version` failed (exit "
            f"{online.returncode}) offline and again with the network (which fills uv's cache "
            f"at {CACHE}):\n{online.stderr[-2000:]}"
        )


def prune_cache() -> None:
    """Drop what each run leaves in the cache (the wheel of this tree unpacked, and the
    environment uvx made: some MB of links and scripts), keeping the dependencies' wheels.
    uv waits for runs that are using the cache; a prune that fails or takes too long is left
    for the next one."""
    uv = str(uvx_executable().with_name("uv"))
    for command in (
        [uv, "cache", "clean", "--quiet", "emergent-memory"],
        [uv, "cache", "prune", "--quiet"],
    ):
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                command,
                env=uvx_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="uvx-wheel-") as directory:
        wheel = build_wheel(Path(directory))
        fill_cache(wheel)
        prune_cache()
        print(f"uv's cache at {CACHE} holds what {wheel.name} needs")


if __name__ == "__main__":
    main()
