"""The `emergent-memory` command's entry point: hooks first, before anything heavy loads.

`emergent-memory hook EVENT` runs for every prompt of every Claude Code session, so it goes
straight to the standard-library hook runner (emergent_memory.hooks.run) without importing
click, pydantic or the database layers; `emergent-memory hook --help` and every other command
go to the click CLI (emergent_memory.cli).
"""

from __future__ import annotations

import sys


def main() -> None:
    arguments = sys.argv[1:]
    if arguments[:1] == ["hook"] and not {"-h", "--help"} & set(arguments[1:]):
        from emergent_memory.hooks.run import main as run_hook

        sys.exit(run_hook(arguments[1:]))
    from emergent_memory.cli import main as run_cli

    run_cli()
