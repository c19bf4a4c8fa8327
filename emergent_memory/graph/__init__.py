"""The generic versioned graph store: typed objects, relationships and template packs.

It knows nothing about memories. Functions take a psycopg connection, never commit, and raise
the domain errors of `emergent_memory.errors`.

Its names are imported on first use (PEP 562), so that a module that needs only the graph's
models (the CLI's option lists, the MCP server's tool types) does not import the store modules
(the secret scanner's compiled patterns, the pack validator's JSON Schema).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emergent_memory.graph.models import (
        UNSET,
        Embedding,
        GraphObject,
        GraphRelationship,
        PackInstallation,
        TemplatePack,
    )
    from emergent_memory.graph.objects import (
        create_object,
        delete_object,
        get_head,
        get_version,
        list_heads,
        list_versions,
        lock_object,
        restore_object,
        try_lock_object,
        update_object,
    )
    from emergent_memory.graph.packs import (
        PackDefinition,
        get_pack,
        install_pack,
        installed_packs,
        load_pack_file,
        pack_checksum,
        publish_pack,
        validate_object,
        validate_relationship,
    )
    from emergent_memory.graph.relationships import (
        create_relationship,
        delete_relationship,
        get_relationship,
        list_relationship_versions,
        list_relationships,
        update_relationship,
    )
    from emergent_memory.graph.rls import act_as, bypasses_row_security
    from emergent_memory.graph.summary import GraphSummary, summarize
    from emergent_memory.graph.vectors import set_embedding

# name -> the module that defines it
_EXPORTS = {
    "Embedding": "emergent_memory.graph.models",
    "GraphObject": "emergent_memory.graph.models",
    "GraphRelationship": "emergent_memory.graph.models",
    "GraphSummary": "emergent_memory.graph.summary",
    "PackDefinition": "emergent_memory.graph.packs",
    "PackInstallation": "emergent_memory.graph.models",
    "TemplatePack": "emergent_memory.graph.models",
    "UNSET": "emergent_memory.graph.models",
    "act_as": "emergent_memory.graph.rls",
    "bypasses_row_security": "emergent_memory.graph.rls",
    "create_object": "emergent_memory.graph.objects",
    "create_relationship": "emergent_memory.graph.relationships",
    "delete_object": "emergent_memory.graph.objects",
    "delete_relationship": "emergent_memory.graph.relationships",
    "get_head": "emergent_memory.graph.objects",
    "get_pack": "emergent_memory.graph.packs",
    "get_relationship": "emergent_memory.graph.relationships",
    "get_version": "emergent_memory.graph.objects",
    "install_pack": "emergent_memory.graph.packs",
    "installed_packs": "emergent_memory.graph.packs",
    "list_heads": "emergent_memory.graph.objects",
    "list_relationship_versions": "emergent_memory.graph.relationships",
    "list_relationships": "emergent_memory.graph.relationships",
    "list_versions": "emergent_memory.graph.objects",
    "load_pack_file": "emergent_memory.graph.packs",
    "lock_object": "emergent_memory.graph.objects",
    "pack_checksum": "emergent_memory.graph.packs",
    "publish_pack": "emergent_memory.graph.packs",
    "restore_object": "emergent_memory.graph.objects",
    "set_embedding": "emergent_memory.graph.vectors",
    "summarize": "emergent_memory.graph.summary",
    "try_lock_object": "emergent_memory.graph.objects",
    "update_object": "emergent_memory.graph.objects",
    "update_relationship": "emergent_memory.graph.relationships",
    "validate_object": "emergent_memory.graph.packs",
    "validate_relationship": "emergent_memory.graph.packs",
}

__all__ = [
    "UNSET",
    "Embedding",
    "GraphObject",
    "GraphRelationship",
    "GraphSummary",
    "PackDefinition",
    "PackInstallation",
    "TemplatePack",
    "act_as",
    "bypasses_row_security",
    "create_object",
    "create_relationship",
    "delete_object",
    "delete_relationship",
    "get_head",
    "get_pack",
    "get_relationship",
    "get_version",
    "install_pack",
    "installed_packs",
    "list_heads",
    "list_relationship_versions",
    "list_relationships",
    "list_versions",
    "load_pack_file",
    "lock_object",
    "pack_checksum",
    "publish_pack",
    "restore_object",
    "set_embedding",
    "summarize",
    "try_lock_object",
    "update_object",
    "update_relationship",
    "validate_object",
    "validate_relationship",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
