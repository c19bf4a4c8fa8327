"""The generic versioned graph store: typed objects, relationships and template packs.

It knows nothing about memories. Functions take a psycopg connection, never commit, and raise
the domain errors of `emergent_memory.errors`.
"""

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
