"""The real Claude Code CLI for the end-to-end tests: pinned, installed once from npm under
`.cache/claude-code/`, and run headless (`claude -p`) offline against a fake Messages API.

    claude = claude_executable()            # installs it on first use (needs npm)
    with FakeAnthropic() as fake:
        session = run_session(claude, "hello", home=home, project=project, base_url=fake.url)
        session.session_id, session.result, session.transcript_path

`make test` installs it before pytest runs (`python -m tests.claude_code`), so that a fresh
clone's CI has it; a test that finds it missing installs it the same way. The version is
pinned because the tests check the CLI's exact hook and transcript shapes (recorded for this
version in tests/data/claude_code/).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.197"
REPOSITORY = Path(__file__).resolve().parents[1]
CACHE = REPOSITORY / ".cache" / "claude-code"
INSTALL_TIMEOUT = 600  # seconds: about 235 MB from the registry

# What a headless session needs offline besides HOME and the API's address: no update
# checks, telemetry or other traffic that is not the conversation itself.
OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}


class ClaudeCodeUnavailable(RuntimeError):
    """The pinned Claude Code CLI is not installed and cannot be installed here."""


def install_dir(version: str = VERSION) -> Path:
    """The npm prefix of this version (one per version, so a new pin installs beside it)."""
    return CACHE / version


def executable_path(prefix: Path) -> Path:
    return prefix / "node_modules" / ".bin" / "claude"


def installed_version(prefix: Path) -> str | None:
    """The version npm installed under `prefix`, or None when there is none."""
    manifest = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        version = json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, str) else None


def claude_executable(*, install: bool = True) -> Path:
    """The `claude` executable of the pinned version, installed first if it is not there yet
    (with `install`), else ClaudeCodeUnavailable saying what to do."""
    prefix = install_dir()
    claude = executable_path(prefix)
    if installed_version(prefix) == VERSION and claude.exists():
        return claude
    if not install:
        raise ClaudeCodeUnavailable(
            f"{PACKAGE}@{VERSION} is not installed under {prefix}: run `make test` or "
            "`.venv/bin/python -m tests.claude_code`, which install it with npm"
        )
    return _install(prefix)


def _install(prefix: Path) -> Path:
    """npm-install the pinned version into a new directory beside `prefix`, check that it runs,
    then move it into place (a concurrent installer's copy wins; ours is dropped)."""
    npm = shutil.which("npm")
    if npm is None:
        raise ClaudeCodeUnavailable(
            f"the end-to-end tests drive the real Claude Code CLI ({PACKAGE}@{VERSION}), which "
            "installs with npm, and npm is not on PATH: install Node.js 20 or newer with npm "
            "(e.g. `apt-get install nodejs npm`), then run the tests again"
        )
    prefix.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{prefix.name}-", dir=prefix.parent))
    staging.chmod(0o755)
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
             "--loglevel", "error", f"{PACKAGE}@{VERSION}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ClaudeCodeUnavailable(
                f"`npm install {PACKAGE}@{VERSION}` failed (exit {done.returncode}); it needs "
                f"the npm registry (or a mirror set in npm's configuration):\n{done.stderr[-2000:]}"
            )
        _check_runs(executable_path(staging))
        try:
            staging.rename(prefix)
        except OSError:  # another process installed it meanwhile
            if installed_version(prefix) != VERSION:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return executable_path(prefix)


def _check_runs(claude: Path) -> None:
    """`claude --version` says the pinned version (npm may have skipped the package's
    postinstall, which puts the native binary in place)."""
    try:
        answer = subprocess.run(
            [str(claude), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        said = (answer.stdout + answer.stderr).strip()
    except OSError as exc:
        said = str(exc)
    if not said.startswith(f"{VERSION} "):
        raise ClaudeCodeUnavailable(
            f"{PACKAGE}@{VERSION} installed but `claude --version` said {said[:500]!r}: npm "
            "must run the package's install script (check npm's ignore-scripts and "
            "allow-scripts configuration)"
        )


def session_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """The whole environment of a headless session: a HOME of its own, the fake API, no
    traffic beyond it, and `extra`. Nothing else of this process's environment (its hooks
    inherit this environment too)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        **OFFLINE,
        **extra,
    }


def project_folder(project: Path) -> str:
    """The name of a project's folder under ~/.claude/projects/: its path with every character
    other than an ASCII letter or digit made a `-`."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))


def transcript_path(home: Path, project: Path, session_id: str) -> Path:
    """Where Claude Code writes a session's transcript (`project` as the session's cwd)."""
    return home / ".claude" / "projects" / project_folder(project) / f"{session_id}.jsonl"


@dataclass(frozen=True)
class Session:
    """One finished `claude -p` run: its exit status, output and transcript."""

    returncode: int
    output: dict[str, Any]  # the `--output-format json` result ({} when it wrote none)
    stdout: str
    stderr: str
    transcript_path: Path

    @property
    def session_id(self) -> str:
        return str(self.output["session_id"])

    @property
    def result(self) -> str:
        """The answer the session printed."""
        return str(self.output.get("result", ""))

    def transcript(self) -> list[dict[str, Any]]:
        """The transcript's entries, one JSON object per line."""
        lines = self.transcript_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]


def run_session(
    claude: Path,
    prompt: str,
    *,
    home: Path,
    project: Path,
    base_url: str,
    resume: str | None = None,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Session:
    """A whole headless session (`claude -p PROMPT --output-format json`) in `project`, with
    `home` as HOME and the Messages API at `base_url`; `resume` continues a session by id;
    `env` adds to the session's environment."""
    command = [str(claude), "-p", prompt, "--output-format", "json", *args]
    if resume is not None:
        command += ["--resume", resume]
    done = subprocess.run(
        command,
        cwd=project,
        env=session_env(home, base_url, **(env or {})),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    try:
        output = json.loads(done.stdout)
    except ValueError:
        output = {}
    if not isinstance(output, dict):
        output = {}
    session_id = str(output.get("session_id", resume or ""))
    return Session(
        returncode=done.returncode,
        output=output,
        stdout=done.stdout,
        stderr=done.stderr,
        transcript_path=transcript_path(home, project.resolve(), session_id),
    )


def main() -> int:
    """Install the pinned CLI if it is not there yet (what `make test` runs first)."""
    try:
        claude = claude_executable()
    except ClaudeCodeUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{PACKAGE}@{VERSION}: {claude}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
