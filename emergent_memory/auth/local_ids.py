"""The ids of a single-user install derived from the OS user, the machine and the repository.

Standard library only: `auth.identity` (the CLI, the stdio server) and the Claude Code hooks
(`emergent_memory.hooks`, which must start fast) both call these functions, so a repository
gets the same project id whichever of them asks. The ids are UUID version 5, computed here
with SHA-1 rather than with the `uuid` module, which would cost a hook a few ms to import
(it imports `platform`); `tests/test_hooks.py` holds the results equal to `uuid.uuid5`'s.
The same SHA-1 names the hooks' per-session state files (`text_digest`).
"""

from __future__ import annotations

from pathlib import Path

try:  # CPython's own SHA-1: hashlib would load OpenSSL first (a few ms of every hook's start)
    from _sha1 import sha1  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - a Python built without its own hash modules
    from hashlib import sha1

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    import uuid

# Namespace of the derived default ids: the same user, machine and repository always give
# the same ids, so memories follow them from session to session.
DEFAULT_ID_NAMESPACE = "6f1c2d3e-9b8a-4c5d-8e7f-0a1b2c3d4e5f"


def uuid5_text(namespace: str, name: str) -> str:
    """`str(uuid.uuid5(uuid.UUID(namespace), name))`: the first 16 bytes of the SHA-1 of the
    namespace's bytes and the name's UTF-8, with version 5 and RFC 4122's variant set."""
    hashed = sha1(_uuid_bytes(namespace) + name.encode("utf-8"))  # noqa: S324 - UUID v5's hash
    digest = bytearray(hashed.digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # variant: RFC 4122
    return _hyphenated(digest.hex())


def text_digest(text: str) -> str:
    """The SHA-1 of the text's UTF-8 (a lone surrogate encoded as it is), in hex: a name that
    stays the same for the same text (the hooks name a session's state file with it)."""
    digest: str = sha1(text.encode("utf-8", "surrogatepass")).hexdigest()  # noqa: S324 - a name
    return digest


def canonical_uuid(text: str) -> str:
    """`str(uuid.UUID(text))`: the UUID in its lowercase hyphenated form, from any form
    `uuid.UUID` takes (braces, a urn:uuid: prefix, no hyphens, upper case). Raises ValueError
    for text it refuses."""
    digits = text.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
    if len(digits) != 32:
        raise ValueError("badly formed hexadecimal UUID string")
    return _hyphenated(f"{int(digits, 16):032x}")


def _uuid_bytes(text: str) -> bytes:
    return bytes.fromhex(canonical_uuid(text).replace("-", ""))


def _hyphenated(digits: str) -> str:
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def local_user() -> str:
    """The OS user and machine the actor id is derived from: `user@host`."""
    import getpass  # not on a hook's path
    import socket

    return f"{getpass.getuser()}@{socket.gethostname()}"


def derived_actor_id_text(who: str) -> str:
    """The actor id of `user@host` (local_user()), as text."""
    return uuid5_text(DEFAULT_ID_NAMESPACE, f"actor:{who}")


def derived_actor_id(who: str) -> uuid.UUID:
    import uuid  # the hooks use the text and spare importing uuid

    return uuid.UUID(derived_actor_id_text(who))


def project_root(cwd: Path, timeout: float = 5) -> Path:
    """The top of the git repository holding `cwd`, else `cwd` itself; resolved."""
    import subprocess  # a hook needs it only for a session's first project

    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],  # noqa: S607 - git from PATH, fixed args
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return cwd.resolve()
    return Path(top).resolve() if top else cwd.resolve()


def derived_project_id_text(root: Path) -> str:
    """The project id of a repository (or directory) given by its `project_root`, as text:
    what the hooks send, equal to str(derived_project_id(root))."""
    return uuid5_text(DEFAULT_ID_NAMESPACE, f"project:{root}")


def derived_project_id(root: Path) -> uuid.UUID:
    """The project id of a repository (or directory) given by its `project_root`."""
    import uuid  # the hooks use the text and spare importing uuid

    return uuid.UUID(derived_project_id_text(root))
