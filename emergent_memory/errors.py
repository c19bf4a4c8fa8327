"""Domain errors: each carries a message a user or an agent can act on.

The MCP and CLI layers turn these into tool errors and one-line messages; anything that is not
an `EmergentMemoryError` is an internal error, logged and never shown as is.
"""

from __future__ import annotations


class EmergentMemoryError(Exception):
    """Base of every error whose message is meant for the person or agent that caused it."""


class SettingsError(EmergentMemoryError):
    """A configuration value (environment variable) is unknown or malformed."""


class DatabaseUnavailable(EmergentMemoryError):
    """The database could not be reached (it is down or unreachable) or the embedded server
    could not be started. Not "busy": waiting for a connection would not help."""


class AddressUnavailable(EmergentMemoryError):
    """The HTTP server cannot listen where it was told to (the port is in use, the address is
    not this machine's, the port needs privileges)."""


class ServiceBusy(EmergentMemoryError):
    """Every database connection stayed busy for the whole wait: retry in a moment."""


class SchemaNotCurrent(EmergentMemoryError):
    """The database schema is not at the revision this version of the code needs."""


class EmbeddingUnavailable(EmergentMemoryError):
    """The embedding provider could not embed (down, slow, misconfigured).

    Callers degrade (store without a vector, search full-text only); they never lose data.
    """


class LLMFailed(EmergentMemoryError):
    """A call to the LLM of automatic capture gave no usable answer (unavailable, refused, or
    malformed output); the message says why, never quoting the prompt or the key."""


class EmbeddingMismatch(EmergentMemoryError):
    """The configured embedding model does not fit the vectors the database stores."""


class PermissionDenied(EmergentMemoryError):
    """The caller's credential does not allow this operation."""


class InvalidInput(EmergentMemoryError):
    """The request itself is wrong; nothing was written."""


class UnknownType(InvalidInput):
    """An object or relationship type that no pack installed in the project defines."""


class PropertyValidationError(InvalidInput):
    """Properties that do not satisfy the installed pack's schema for their type."""

    def __init__(self, type_name: str, problems: list[str]) -> None:
        self.type_name = type_name
        self.problems = problems
        super().__init__(f"invalid {type_name} properties: " + "; ".join(problems))


class KeyConflict(InvalidInput):
    """Another live object of the same type already has this key in the project."""


class RelationshipConflict(InvalidInput):
    """A live relationship of this type already joins these objects, with other properties."""


class NotFound(EmergentMemoryError):
    """The thing asked for does not exist (or is not visible to the caller)."""


class ObjectNotFound(NotFound):
    """No live graph object with this canonical id."""


class RelationshipNotFound(NotFound):
    """No live relationship with this canonical id."""


class MemoryNotFound(NotFound):
    """No memory with this id that the caller can see: unknown, deleted or someone else's."""


class SecretRejected(InvalidInput):
    """The content holds a credential; memories never store secrets."""


class SameContent(InvalidInput):
    """Another active memory of the scope already says exactly this text."""


class PackNotFound(NotFound):
    """No template pack with this name (and version)."""
