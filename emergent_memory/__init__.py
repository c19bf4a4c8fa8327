"""emergent-memory: cross-session memory for AI agents on PostgreSQL with pgvector."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # __version__ is looked up on first use: importlib.metadata takes tens of milliseconds to
    # import, which every Claude Code hook run (emergent_memory.hooks) would otherwise pay.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("emergent-memory")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0"
    globals()["__version__"] = found
    return found
