"""Where the hooks find their server, token and files: the environment, else the hooks file.

The environment variables are settings of the application (EMERGENT_MEMORY_HOOK_URL,
EMERGENT_MEMORY_HOOK_TOKEN, EMERGENT_MEMORY_HOOK_CONFIG, EMERGENT_MEMORY_DATA_DIR in
settings.py), read here with `os.environ` because a hook may not import pydantic. The hooks
file is JSON written by `emergent-memory hooks install`: {"url", "token", "start_command",
"log_file"}; one readable by group or others is refused.
"""

from __future__ import annotations

import json
import os
import posixpath
import sys
from collections.abc import Mapping
from pathlib import Path

from emergent_memory.hooks.state import write_atomically

APP_NAME = "emergent-memory"
CLIENT = "claude-code"  # the client the context and capture requests name
DEFAULT_URL = "http://127.0.0.1:8765"
HOOKS_FILE_NAME = "hooks.json"

URL_VARIABLE = "EMERGENT_MEMORY_HOOK_URL"
TOKEN_VARIABLE = "EMERGENT_MEMORY_HOOK_TOKEN"  # noqa: S105 - a variable's name
CONFIG_VARIABLE = "EMERGENT_MEMORY_HOOK_CONFIG"
DATA_DIR_VARIABLE = "EMERGENT_MEMORY_DATA_DIR"


def _xdg(environ: Mapping[str, str], variable: str) -> str | None:
    # platformdirs takes an XDG variable only when it holds an absolute path
    value = environ.get(variable, "")
    return value if posixpath.isabs(value) else None


def _windows_local_app_data(environ: Mapping[str, str]) -> str:
    return environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")


def user_config_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    """platformdirs.user_config_path("emergent-memory", appauthor=False), without importing
    it: $XDG_CONFIG_HOME (Linux and macOS), else ~/.config (Linux), ~/Library/Application
    Support (macOS), %LOCALAPPDATA% (Windows)."""
    if platform == "win32":
        return Path(_windows_local_app_data(environ), APP_NAME)
    base = _xdg(environ, "XDG_CONFIG_HOME") or os.path.expanduser(
        "~/Library/Application Support" if platform == "darwin" else "~/.config"
    )
    return Path(base, APP_NAME)


def user_data_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    """platformdirs.user_data_path("emergent-memory", appauthor=False), as settings.py's
    default data directory, without importing it."""
    if platform == "win32":
        return Path(_windows_local_app_data(environ), APP_NAME)
    base = _xdg(environ, "XDG_DATA_HOME") or os.path.expanduser(
        "~/Library/Application Support" if platform == "darwin" else "~/.local/share"
    )
    return Path(base, APP_NAME)


def data_dir(environ: Mapping[str, str]) -> Path:
    """EMERGENT_MEMORY_DATA_DIR as settings.py reads it, else the user data directory."""
    configured = environ.get(DATA_DIR_VARIABLE, "")
    if configured:
        return Path(configured).expanduser().absolute()
    return user_data_dir(environ)


def hooks_file_path(environ: Mapping[str, str]) -> Path:
    """EMERGENT_MEMORY_HOOK_CONFIG, else hooks.json in the user's config directory."""
    configured = environ.get(CONFIG_VARIABLE, "")
    if configured:
        return Path(configured).expanduser().absolute()
    return user_config_dir(environ) / HOOKS_FILE_NAME


def default_log_file(environ: Mapping[str, str]) -> Path:
    return data_dir(environ) / "logs" / "hooks.log"


class ConfigProblem(Exception):
    """The hooks' configuration cannot be used; the message says why and what to do, and
    holds no secret."""


class HookConfig:
    """What a hook run uses (a plain class: dataclasses would cost every hook several ms to
    import)."""

    __slots__ = ("data_dir", "hooks_file", "log_file", "start_command", "token", "url")

    def __init__(
        self,
        *,
        url: str,
        token: str | None,
        start_command: tuple[str, ...] | None,
        log_file: Path,
        data_dir: Path,
        hooks_file: Path,
    ) -> None:
        self.url = url
        self.token = token
        # the command that starts a local server (None: `emergent-memory serve` on the URL's
        # port)
        self.start_command = start_command
        self.log_file = log_file
        self.data_dir = data_dir
        self.hooks_file = hooks_file


def read_hooks_file(path: Path) -> dict[str, object] | None:
    """The hooks file's content, None when there is none. Raises ConfigProblem for a file
    that others may read, that another user owns, or that is not a JSON object."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigProblem(f"cannot read the hooks file {path}: {error.strerror}") from None
    if os.name == "posix":
        if status.st_mode & 0o077:
            raise ConfigProblem(
                f"the hooks file {path} is open to group or others (mode "
                f"{status.st_mode & 0o777:o}) and holds a token: it is not used; "
                f"run: chmod 600 {path}"
            )
        if status.st_uid != os.getuid():
            raise ConfigProblem(f"the hooks file {path} belongs to another user: it is not used")
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        raise ConfigProblem(f"cannot read the hooks file {path}: {error.strerror}") from None
    except ValueError:
        raise ConfigProblem(
            f"the hooks file {path} is not valid JSON; run emergent-memory hooks install again"
        ) from None
    if not isinstance(data, dict):
        raise ConfigProblem(f"the hooks file {path} is not a JSON object")
    return data


def load_config(environ: Mapping[str, str]) -> HookConfig:
    """The configuration of this hook run. Raises ConfigProblem when it cannot be used."""
    path = hooks_file_path(environ)
    stored = read_hooks_file(path) or {}
    url = environ.get(URL_VARIABLE) or stored.get("url") or DEFAULT_URL
    token = environ.get(TOKEN_VARIABLE) or stored.get("token")
    start = stored.get("start_command")
    log_file = stored.get("log_file")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigProblem(f"the hooks' URL must start with http:// or https:// (see {path})")
    if token is not None and not isinstance(token, str):
        raise ConfigProblem(f"the token in {path} must be a string")
    if token and not _sendable(token):  # it could not go in an Authorization header
        where = TOKEN_VARIABLE if environ.get(TOKEN_VARIABLE) else f"the token in {path}"
        raise ConfigProblem(
            f"{where} holds a line break, a space, or a control or non-ASCII character, which "
            "no token has; run emergent-memory hooks install again (or set it right)"
        )
    if start is not None and not (
        isinstance(start, list) and start and all(isinstance(part, str) for part in start)
    ):
        raise ConfigProblem(f"start_command in {path} must be a list of strings, or null")
    if log_file is not None and not isinstance(log_file, str):
        raise ConfigProblem(f"log_file in {path} must be a path, or null")
    return HookConfig(
        url=url.rstrip("/"),
        token=token or None,
        start_command=None if start is None else tuple(start),
        log_file=(Path(log_file).expanduser() if log_file else default_log_file(environ)),
        data_dir=data_dir(environ),
        hooks_file=path,
    )


def _sendable(token: str) -> bool:
    """Whether a token can be sent as it is: visible ASCII characters only."""
    return token.isascii() and token.isprintable() and " " not in token


def write_hooks_file(path: Path, content: dict[str, object]) -> None:
    """Write the hooks file with mode 0600; a folder made for it gets 0700 (as does the
    user's emergent-memory config folder, the default one)."""
    folder = path.parent
    if not folder.exists() or folder == user_config_dir(os.environ):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    write_atomically(path, (json.dumps(content, indent=2) + "\n").encode(), mode=0o600)
    os.chmod(path, 0o600)
