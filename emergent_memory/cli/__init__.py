"""The `emergent-memory` command: a thin layer over the services that `app.py` builds.

One module per command group; importing them registers their commands on `cli`.
"""

from __future__ import annotations

import signal
from typing import Any

from emergent_memory.cli import (
    capture,
    db,
    demo,
    hooks,
    lifecycle,
    memory,
    memory_lifecycle,
    serve,
    tokens,
    transfer,
    ui,
    worker,
)
from emergent_memory.cli.common import cli

__all__ = [
    "capture",
    "cli",
    "db",
    "demo",
    "hooks",
    "lifecycle",
    "main",
    "memory",
    "memory_lifecycle",
    "serve",
    "tokens",
    "transfer",
    "ui",
    "worker",
]


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    # SystemExit unwinds the context managers, so an embedded server is stopped cleanly.
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    cli()
