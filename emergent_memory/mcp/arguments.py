"""Arguments the tools cannot take: one clear error each, and lone surrogates made visible to
the tools before the MCP SDK's parsers refuse the whole message."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp.types import CallToolRequestParams
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import ErrorDetails

from emergent_memory.memory.models import Importance, MemoryScope

logger = logging.getLogger(__name__)

# Half of a UTF-16 surrogate pair: JSON can carry one ("\ud800"), but it is not Unicode text.
# The MCP SDK's message parsers refuse the whole message that holds one (over HTTP a 400
# "Parse error" before any tool runs; over stdio no answer at all), so the transports first
# rewrite each escaped one into a marker those parsers accept (mark_lone_surrogates), which is
# found here like the surrogate itself: U+FDD0 (a noncharacter, never in text) followed by
# U+F0000 plus the surrogate's offset from U+D800.
SURROGATE_MARK = "\ufdd0"
MARK_BASE = 0xF0000
UNPAIRED_SURROGATE = re.compile("[\ud800-\udfff]|\ufdd0[\U000f0000-\U000f07ff]")
MAX_REPORTED_PROBLEMS = 5


class ArgumentErrors(Middleware):
    """One clear tool error for arguments that do not fit the tool's schema.

    Pydantic's report (`1 validation error for call[...]`, with a URL) is reworded as
    `invalid arguments for <tool>: <field> should ..., got ...`. Text holding an unpaired
    surrogate is refused here: FastMCP's strict validation cannot even encode it, and would
    fail with an internal error.
    """

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        problem = unpaired_surrogate(context.message.arguments or {})
        if problem is not None:
            raise ToolError(problem, log_level=logging.INFO)
        try:
            return await call_next(context)
        except ValidationError as error:
            if not isinstance(error.__cause__, PydanticValidationError):
                raise
            raise ToolError(
                describe_invalid_arguments(context.message.name, error.__cause__),
                log_level=logging.INFO,
            ) from error


# FastMCP logs each call whose arguments do not fit the tool's schema at WARNING, before
# ArgumentErrors answers it; it is the caller's mistake, which is INFO here (log_level_of).
FASTMCP_SERVER_LOGGER = "fastmcp.server.server"
INVALID_ARGUMENTS_RECORD = "Invalid arguments for tool"


class InvalidArgumentsAtInfo(logging.Filter):
    """A filter of FastMCP's server logger: its "Invalid arguments for tool ..." records (the
    tool's name and error counts, never the arguments) become INFO records, dropped where INFO
    is not logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.INFO or not str(record.msg).startswith(
            INVALID_ARGUMENTS_RECORD
        ):
            return True
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)


def log_invalid_arguments_at_info() -> None:
    """Install InvalidArgumentsAtInfo on FastMCP's server logger (once)."""
    fastmcp_server = logging.getLogger(FASTMCP_SERVER_LOGGER)
    if not any(isinstance(f, InvalidArgumentsAtInfo) for f in fastmcp_server.filters):
        fastmcp_server.addFilter(InvalidArgumentsAtInfo())


def unpaired_surrogate(arguments: Mapping[str, Any]) -> str | None:
    """What names the first string (argument, key or value, at any depth) that holds an
    unpaired surrogate, as an error message; None when there is none."""
    for name, value in arguments.items():
        if UNPAIRED_SURROGATE.search(name):
            return _surrogate_problem("an argument name", name)
        found = _surrogate_in(value, _cut(name))
        if found is not None:
            return found
    return None


def _surrogate_in(value: object, field: str) -> str | None:
    if isinstance(value, str):
        return _surrogate_problem(field, value) if UNPAIRED_SURROGATE.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and UNPAIRED_SURROGATE.search(key):
                return _surrogate_problem(f"a key of {field}", key)
            found = _surrogate_in(item, f"{field}.{_cut(str(key))}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _surrogate_in(item, f"{field}[{index}]")
            if found is not None:
                return found
    return None


def _surrogate_problem(field: str, text: str) -> str:
    match = UNPAIRED_SURROGATE.search(text)
    assert match is not None
    found = match.group()
    code = ord(found) if len(found) == 1 else 0xD800 + ord(found[1]) - MARK_BASE
    return (
        f"{field} contains U+{code:04X}, half of a UTF-16 surrogate pair, which "
        "is not valid Unicode text; remove it or send the whole character"
    )


# Scanned left to right in a JSON message: an escaped backslash (what follows it is text, not
# an escape), a whole escaped pair (high half then low half), or an escaped half alone (group 1).
_ESCAPED_SURROGATES = re.compile(
    rb"\\\\"
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u([dD][89a-fA-F][0-9a-fA-F]{2})"
)


def mark_lone_surrogates(message: bytes) -> bytes:
    """A JSON message (UTF-8) with each escaped half of a surrogate pair that is not part of
    a pair ("\\ud83d" alone) replaced by its marker (UTF-8); anything else is unchanged."""
    return _ESCAPED_SURROGATES.sub(_marker, message)


def _marker(match: re.Match[bytes]) -> bytes:
    half = match.group(1)
    if half is None:  # an escaped backslash or a whole pair: kept
        return match.group()
    return (SURROGATE_MARK + chr(MARK_BASE + int(half, 16) - 0xD800)).encode("utf-8")


def describe_invalid_arguments(
    tool: str, error: PydanticValidationError, *, within: str | None = None
) -> str:
    """Pydantic's errors for a tool's arguments (`within`: for the fields of that argument)
    as one line naming each field and the fix."""
    details = error.errors(include_url=False, include_context=False)
    if within is not None:
        details = [{**detail, "loc": (within, *detail["loc"])} for detail in details]
    problems = [_describe_problem(tool, detail) for detail in details[:MAX_REPORTED_PROBLEMS]]
    if len(details) > MAX_REPORTED_PROBLEMS:
        problems.append(f"and {len(details) - MAX_REPORTED_PROBLEMS} more")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def _describe_problem(tool: str, detail: ErrorDetails) -> str:
    if not detail["loc"]:  # the arguments as a whole, e.g. a number JSON cannot hold
        if "number out of range" in detail["msg"]:
            return "a number in the arguments is too large"
        return detail["msg"]
    field = _field_path(detail["loc"])
    kind = detail["type"]
    if kind in ("missing_argument", "missing"):
        return f"{field} is required"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        options = OPTIONS.get(tool)
        if len(detail["loc"]) == 1 and options is not None and field in options.model_fields:
            return f'{field} goes in options: {{"options": {{"{field}": ...}}}}'
        return f"{field} is not a parameter of {tool}"
    message = detail["msg"]
    if message.startswith("Input should "):
        message = f"{field} should {message.removeprefix('Input should ')}"
    else:
        message = f"{field}: {message}"
    return f"{message}, got {_shown(detail.get('input'))}"


def _field_path(location: tuple[int | str, ...]) -> str:
    """`related_to[0]`, `updates.content`: names a client chose are cut short."""
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else (f".{_cut(part)}" if path else _cut(part))
    return path


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown(value: object) -> str:
    """The offending value, short, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(_cut(value))
    if isinstance(value, int):
        return str(value) if abs(value) < 10**30 else "a number too large to show"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "a list"
    return "an object"


@contextmanager
def stdin_with_marked_surrogates() -> Iterator[None]:
    """For the stdio transport: file descriptor 0 becomes a pipe fed, line by line (one
    message a line), from the real standard input through mark_lone_surrogates, so that a
    message holding half a surrogate pair gets a tool error instead of no answer at all. End
    of input is passed on; the copying thread is a daemon and never delays exit. At the end
    of the block, file descriptor 0 is the real standard input again."""
    saved = os.dup(0)
    source = os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)

    def pump() -> None:
        # the pipe's reader is gone once the block has ended (BrokenPipeError)
        with (
            contextlib.suppress(BrokenPipeError),
            open(source, "rb") as lines,
            open(write_end, "wb") as sink,
        ):
            for line in iter(lines.readline, b""):
                sink.write(mark_lone_surrogates(line))
                sink.flush()

    threading.Thread(target=pump, name="stdin-surrogates", daemon=True).start()
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


# -- options: the tools' rarely used arguments, in one object -------------------------------


class SaveOptions(BaseModel):
    """save_memory's `options` (what each means: memory_guidelines and docs/memory.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    importance: Importance | None = None
    evidence: str | None = None
    rationale: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    context: str | None = None
    related_to: list[str] | None = None
    supersede_reason: str | None = None


class RecallOptions(BaseModel):
    """recall_memories' `options`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    include_episodes: bool = False
    include_archived: bool = False
    as_of: str | None = None
    scope: MemoryScope | None = None
    min_relevance: float | None = Field(default=None, ge=0, le=1)


OPTIONS: dict[str, type[BaseModel]] = {
    "save_memory": SaveOptions,
    "recall_memories": RecallOptions,
}

Options = TypeVar("Options", bound=BaseModel)


def parse_options(model: type[Options], tool: str, options: Mapping[str, Any] | None) -> Options:
    """A tool's `options` object, or one clear tool error naming each field to fix."""
    try:
        return model.model_validate(options or {})
    except PydanticValidationError as error:
        raise ToolError(
            describe_invalid_arguments(tool, error, within="options"), log_level=logging.INFO
        ) from None


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as clients are told it, in fewer tokens: an optional argument's
    `anyOf [X, null]` with `default: null` becomes X (null is still accepted: leaving the
    argument out says the same); titles and an object's `additionalProperties: true` go.
    What the tool accepts is unchanged."""
    properties = {}
    for name, spec in schema.get("properties", {}).items():
        spec = {key: value for key, value in spec.items() if key != "title"}
        variants = spec.get("anyOf")
        if isinstance(variants, list) and {"type": "null"} in variants and len(variants) == 2:
            [kept] = [variant for variant in variants if variant != {"type": "null"}]
            spec = {key: value for key, value in spec.items() if key != "anyOf"} | kept
            if spec.get("default", ...) is None:
                del spec["default"]
        if spec.get("additionalProperties") is True:  # an object's default
            del spec["additionalProperties"]
        properties[name] = spec
    return {**schema, "properties": properties}
