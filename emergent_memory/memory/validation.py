"""Checks of the tools' arguments: each problem is its own clear error, raised before any write."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time
from typing import Any, TypeVar
from uuid import UUID

from emergent_memory.errors import InvalidInput, SecretRejected
from emergent_memory.memory.models import (
    ACTIONS,
    CATEGORIES,
    IMPORTANCES,
    LIST_STATUSES,
    SCOPES,
    SOURCES,
    Action,
    Category,
    Importance,
    ListStatus,
    MemoryScope,
    Source,
)

_SURROGATES = re.compile("[\ud800-\udfff]")

MAX_RELATED = 20
MAX_CONTEXT_NAME = 200
MAX_SESSION_ID = 200  # kb.agent_sessions' and the Episode type's limit
MAX_CLIENT = 100  # kb.agent_sessions' limit of a client's name
UPDATABLE_FIELDS = (
    "content",
    "category",
    "confidence",
    "importance",
    "valid_from",
    "valid_until",
    "rationale",
)
# Updates that a null removes (the memory goes back to having none: normal importance,
# unbounded validity, no rationale).
REMOVABLE_FIELDS = ("importance", "valid_from", "valid_until", "rationale")
MAX_RATIONALE = 1000  # the pack's maxLength
MAX_EVIDENCE = 500  # kb.memory_evidence's limit
MAX_REASON = 500  # the pack's maxLength of archive_reason and supersede_reason
EMPTY_ADVICE = {
    "content": "write the memory as one specific sentence",
    "query": "say what to look for in a few words",
}
# Control characters allowed in a memory: tab, newline, carriage return.
ALLOWED_CONTROLS = frozenset("\t\n\r")
# Invisible characters that make a text display as something other than what it holds
# ("Trojan Source"), hide words from the secret detector and the duplicate check, or smuggle
# instructions past a human reader: bidirectional embeddings, overrides and isolates,
# zero-width spaces, the word joiner and invisible operators, the byte order mark, soft
# hyphens, fillers, interlinear annotations and tag characters. Allowed because text needs
# them: ZWNJ and ZWJ (Persian, Indic scripts, emoji sequences), the LRM, RLM and ALM marks
# (right-to-left text), and tag characters inside an emoji flag sequence.
INVISIBLE = frozenset(
    [
        *(0x00AD, 0x180E, 0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x3164, 0xFEFF, 0xFFA0),
        *range(0x202A, 0x202F),  # embeddings and overrides
        *range(0x2066, 0x2070),  # isolates, and deprecated format characters
        *range(0xFFF9, 0xFFFC),  # interlinear annotations
    ]
)
TAGS = range(0xE0000, 0xE0080)
BLACK_FLAG, CANCEL_TAG = 0x1F3F4, 0xE007F
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")

Word = TypeVar("Word", bound=str)


def content(value: object, *, max_length: int, field: str = "content") -> str:
    """The trimmed text of a memory (or query); refuses empty, too long, NUL and controls."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {_json_type(value)}")
    text = value.strip()
    if not text:
        advice = EMPTY_ADVICE.get(field, "give it a value")
        raise InvalidInput(f"{field} is empty; {advice}")
    if len(text) > max_length:
        advice = ": keep one fact per memory" if field == "content" else ""
        raise InvalidInput(
            f"{field} is {len(text)} characters long; the limit is {max_length}{advice}"
        )
    if "\x00" in text:
        raise InvalidInput(f"{field} contains a NUL character (\\u0000); remove it")
    for char in text:
        if char not in ALLOWED_CONTROLS and unicodedata.category(char) in ("Cc", "Cs"):
            raise InvalidInput(
                f"{field} contains the control character U+{ord(char):04X}; remove it"
            )
    hidden = _invisible_character(text)
    if hidden is not None:
        name = unicodedata.name(hidden, "a format character")
        raise InvalidInput(
            f"{field} contains U+{ord(hidden):04X} ({name}), an invisible character that can "
            "make text display as something other than what it says; remove it"
        )
    return text


def _invisible_character(text: str) -> str | None:
    """The first character of INVISIBLE, or a tag character outside an emoji flag sequence
    (U+1F3F4, tags, U+E007F)."""
    in_flag = False
    for char in text:
        code = ord(char)
        if code == BLACK_FLAG:
            in_flag = True
            continue
        if code in TAGS:
            if not in_flag:
                return char
            in_flag = code != CANCEL_TAG
            continue
        in_flag = False
        if code in INVISIBLE:
            return char
    return None


def no_secrets(text: str) -> None:
    from emergent_memory.memory.secrets import describe_secret, find_secrets

    findings = find_secrets(text)
    if findings:
        raise SecretRejected(
            f"refusing to store this memory: {describe_secret(findings[0])}. Memories never "
            "hold credentials; save where the secret lives instead (for example 'the deploy "
            "token is in the DEPLOY_TOKEN environment variable')"
        )


def choice(value: object, allowed: Sequence[Word], field: str) -> Word:
    """`value` if it is one of `allowed`, as the vocabulary's type (a Literal of models.py)."""
    for word in allowed:
        if isinstance(value, str) and value == word:
            return word
    shown = _quoted(value) if isinstance(value, str) else _json_type(value)
    raise InvalidInput(f"{field} must be one of {', '.join(allowed)}; got {shown}")


def category(value: object) -> Category:
    return choice(value, CATEGORIES, "category")


def source(value: object) -> Source:
    return choice(value, SOURCES, "source")


def scope(value: object) -> MemoryScope:
    return choice(value, SCOPES, "scope")


def action(value: object) -> Action:
    return choice(value, ACTIONS, "action")


def list_status(value: object) -> ListStatus:
    return choice(value, LIST_STATUSES, "status")


def importance(value: object) -> Importance:
    return choice(value, IMPORTANCES, "importance")


def moment(value: object, field: str) -> datetime:
    """A point in time given as ISO 8601: a date-time (without a zone: UTC) or a date alone
    (midnight UTC), as an aware datetime in UTC."""
    example = "e.g. '2026-03-01' or '2026-03-01T09:30:00Z'"
    if not isinstance(value, str) or not value.strip():
        shown = _json_type(value) if not isinstance(value, str) else "an empty string"
        raise InvalidInput(
            f"{field} must be an ISO 8601 date or date-time ({example}); got {shown}"
        )
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
        else:
            parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"{field} {_quoted(text)} is not an ISO 8601 date or date-time ({example})"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{field} {_quoted(text)} is out of range") from None


def iso_utc(moment_: datetime) -> str:
    """A moment as stored in a memory's properties: ISO 8601 in UTC with a Z
    ('2026-03-01T00:00:00Z'; microseconds only when it has some)."""
    utc = moment_.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds") + "Z"


def validity(valid_from: datetime | None, valid_until: datetime | None) -> None:
    """valid_until must come after valid_from (both given)."""
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise InvalidInput(
            f"valid_until ({iso_utc(valid_until)}) must be after valid_from "
            f"({iso_utc(valid_from)}): a memory holds from valid_from until valid_until"
        )


def note(value: object, field: str, maximum: int) -> str:
    """A short text that goes with a memory (rationale, evidence, a reason): checked like a
    memory's content (controls, invisible characters, secrets), at most `maximum` characters."""
    from emergent_memory.memory.secrets import describe_secret, find_secrets

    text = content(value, max_length=maximum, field=field)
    findings = find_secrets(text)
    if findings:
        raise SecretRejected(
            f"refusing to store this {field}: {describe_secret(findings[0])}. Memories never "
            "hold credentials; name where the secret lives instead"
        )
    return text


def optional_note(value: object, field: str, maximum: int) -> str | None:
    return None if value is None else note(value, field, maximum)


def limit(value: object, *, default: int, maximum: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        shown = _quoted(value) if isinstance(value, str) else _json_type(value)
        raise InvalidInput(f"limit must be a whole number from 1 to {maximum}; got {shown}")
    if not 1 <= value <= maximum:
        raise InvalidInput(f"limit must be from 1 to {maximum}; got {_number(value)}")
    return value


def confidence(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        shown = _number(value) if isinstance(value, int | float) else _json_type(value)
        raise InvalidInput(f"confidence must be a number from 0 to 1; got {shown}")
    return float(value)


def context_name(value: object) -> str | None:
    """A context's name: one line; runs of spaces and tabs become one space."""
    from emergent_memory.memory.secrets import describe_secret, find_secrets

    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("context must be a non-empty name, e.g. 'frontend'")
    if any(char in LINE_BREAKS for char in value.strip()):
        raise InvalidInput("context is a name on one line, e.g. 'frontend'; remove the line break")
    name = content(" ".join(value.split()), max_length=MAX_CONTEXT_NAME, field="context")
    findings = find_secrets(name)
    if findings:
        raise SecretRejected(
            f"context: the context name {describe_secret(findings[0]).removeprefix('it ')}; a "
            "context is a short label such as 'frontend' or 'deploy', never a credential: "
            "choose a name without it"
        )
    return name


def memory_id(value: object, field: str = "memory_id") -> UUID:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} is required: the id of a memory, as save_memory returns it")
    try:
        return UUID(value)
    except ValueError:
        raise InvalidInput(
            f"{field} {_quoted(value)} is not a memory id (ids look like "
            "'0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d21')"
        ) from None


def related_ids(value: object) -> list[UUID]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput("related_to must be a list of object ids")
    if len(value) > MAX_RELATED:
        raise InvalidInput(f"related_to holds {len(value)} ids; the limit is {MAX_RELATED}")
    ids = [memory_id(item, "related_to id") for item in value]
    return list(dict.fromkeys(ids))  # without repeats, in order


def bulk_ids(value: object, *, maximum: int) -> list[str]:
    """The ids of a bulk change, each once, in order: a list of 1 to `maximum` strings (each
    is checked on its own, so that one bad id does not stop the others)."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput("ids must be a list of memory ids")
    if not value:
        raise InvalidInput("ids is empty; give the ids of the memories to change")
    if len(value) > maximum:
        raise InvalidInput(f"ids holds {len(value)} ids; the limit is {maximum} at a time")
    if not all(isinstance(item, str) for item in value):
        raise InvalidInput("ids must be a list of memory ids (strings)")
    return list(dict.fromkeys(str(item) for item in value))


def flag(value: object, field: str) -> bool:
    """A yes/no argument: the boolean itself, never a string or a number that looks like one."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false; got {_json_type(value)}")
    return value


def session_id(value: object) -> str | None:
    """A client's session id to filter by, or None for every session (session_name)."""
    return None if value is None else session_name(value)


def session_name(value: object) -> str:
    """A client's session id (Claude Code's session_id), exact, not trimmed: 1 to
    MAX_SESSION_ID characters, no control or format character."""
    return _name(value, "session_id", MAX_SESSION_ID)


def client_name(value: object) -> str:
    """Which client speaks, e.g. 'claude-code': 1 to MAX_CLIENT characters, no control or
    format character."""
    return _name(value, "client", MAX_CLIENT)


def _name(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string")
    if len(value) > limit:
        raise InvalidInput(f"{field} is {len(value)} characters long; the limit is {limit}")
    if any(unicodedata.category(char) in ("Cc", "Cs", "Cf") for char in value):
        raise InvalidInput(f"{field} contains a control or format character; remove it")
    return value


def storable(text: str) -> str:
    """Text PostgreSQL can store and search: no NUL (text and jsonb refuse it), no lone
    surrogate (not encodable as UTF-8); both become U+FFFD."""
    return _SURROGATES.sub("\ufffd", text.replace("\x00", "\ufffd"))


def updates(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not value:
        raise InvalidInput(
            "updates must be an object with at least one of: " + ", ".join(UPDATABLE_FIELDS)
        )
    unknown = sorted(_cut(str(name)) for name in value if name not in UPDATABLE_FIELDS)
    if unknown:
        if len(unknown) > 5:
            unknown[5:] = [f"and {len(unknown) - 5} more"]
        raise InvalidInput(
            f"updates cannot change {', '.join(unknown)}; only "
            + ", ".join(UPDATABLE_FIELDS)
            + " can be updated"
        )
    return dict(value)


def _cut(text: str, limit: int = 60) -> str:
    """A caller's string, cut short for an error message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quoted(text: str) -> str:
    """A caller's string in an error message: quoted, escaped, and cut short if long."""
    return repr(_cut(text))


def _number(value: float) -> str:
    """A caller's number in an error message (Python refuses to print huge integers)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf
    return str(value) if abs(value) < 1e30 else "a number too large to show"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object"
