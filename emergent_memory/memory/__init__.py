"""The memory layer: save, recall and manage memories on the graph, scoped by principal.

MemoryService and MemoryConfig are imported on first use (PEP 562): a module that needs only
the memory models (the CLI's option lists, the MCP server's tool types) does not import the
service and the store beneath it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emergent_memory.memory.service import MemoryConfig, MemoryService

__all__ = ["MemoryConfig", "MemoryService"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from emergent_memory.memory import service

    value = getattr(service, name)
    globals()[name] = value
    return value
