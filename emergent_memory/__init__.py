"""emergent-memory: cross-session memory for AI agents on PostgreSQL with pgvector."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("emergent-memory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
