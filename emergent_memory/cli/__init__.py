"""The `emergent-memory` command: a thin layer over the services that `app.py` builds.

One module per command group; the group (cli.common.cli) imports a command's module only when
that command is run or its help is asked for (cli.common.COMMANDS).
"""

from __future__ import annotations

import signal
from typing import Any

from emergent_memory.cli.common import cli

__all__ = ["cli", "main"]


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    # SystemExit unwinds the context managers, so an embedded server is stopped cleanly.
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    cli()
