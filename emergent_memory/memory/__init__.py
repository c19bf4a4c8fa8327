"""The memory layer: save, recall and manage memories on the graph, scoped by principal."""

from emergent_memory.memory.service import MemoryConfig, MemoryService

__all__ = ["MemoryConfig", "MemoryService"]
