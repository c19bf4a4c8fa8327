"""Forced tool calls to Claude through the `anthropic` SDK: the package's one LLM client.

`AnthropicClient.call_tool` sends one non-streaming Messages request that must answer by
calling the given tool, validates the tool's input against the tool's JSON schema and returns
it with the tokens spent. Failures are three kinds of `LLMError`: `LLMUnavailable` (worth
retrying later: rate limits, overload, 5xx, timeouts, connection errors; the SDK has already
retried `max_retries` times, honouring `retry-after`), `LLMRejected` (the request itself is
refused: bad key, unknown model, too long) and `MalformedOutput` (the model answered, tokens
were spent, but not with a valid call of the tool). Their `reason` is short and never holds the
prompt, the model's whole output or the API key.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from jsonschema import exceptions as schema_exceptions
from jsonschema import validators

# The SDK is imported when a client is made, not with this module: importing it costs about
# 2.5 s of CPU, which every command and hook would pay though most never call the API.
if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message, MessageParam, ToolParam

__all__ = [
    "AnthropicClient",
    "LLMError",
    "LLMRejected",
    "LLMUnavailable",
    "MalformedOutput",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

REASON_CHARS = 300  # the longest reason kept from an API error message
# statuses the SDK retries (request timeout, lock timeout, rate limit) besides every 5xx
RETRYABLE_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model is made to call; `input_schema` is a JSON schema of `type: object`.
    `answer_schema`, when given, is what the answer is checked against instead: a looser
    schema, for a caller that checks parts of the answer on its own (the extractor drops one
    proposal that does not fit and keeps the others)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    answer_schema: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: input_schema must have type 'object'")
        try:
            validators.validator_for(self.input_schema).check_schema(self.input_schema)
        except schema_exceptions.SchemaError as exc:
            raise ValueError(
                f"tool {self.name!r}: input_schema is not a valid JSON schema: {exc.message}"
            ) from None


@dataclass(frozen=True)
class Usage:
    """The tokens one call spent, and the model as the API named it in its answer."""

    model: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class ToolCall:
    """The validated input of the forced tool call, what it cost and why the model stopped."""

    input: dict[str, Any]
    usage: Usage
    stop_reason: str | None


class LLMError(Exception):
    """A call that gave no usable answer. `reason` is short enough for a dead-letter record and
    never holds the prompt or the key; `usage` is set when tokens were spent anyway."""

    retryable: bool = False

    def __init__(
        self, reason: str, *, retry_after: float | None = None, usage: Usage | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after  # seconds, when the API said how long to wait
        self.usage = usage


class LLMUnavailable(LLMError):
    """Rate limited, overloaded, a server error, a timeout or no connection: try again later
    (after `retry_after` seconds when the API said)."""

    retryable = True


class LLMRejected(LLMError):
    """The API refused the request (bad key, no permission, unknown model, too long): retrying
    the same request will not help."""


class MalformedOutput(LLMError):
    """The model answered without a valid call of the forced tool; nothing of it may be used."""


class AnthropicClient:
    """One `anthropic.Anthropic` client; thread-safe like the SDK's. Everything is given
    (the settings' values): nothing is read from the SDK's environment variables."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        max_retries: int,
    ) -> None:
        if not api_key:
            raise ValueError("an Anthropic API key is required")
        if timeout <= 0 or max_retries < 0:
            raise ValueError("timeout must be positive and max_retries not negative")
        import anthropic

        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def call_tool(
        self,
        *,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        tool: ToolSpec,
        max_tokens: int = 1024,
    ) -> ToolCall:
        """The input of the model's call of `tool`, which it is forced to call, once valid
        against `tool.input_schema`. Raises LLMUnavailable, LLMRejected or MalformedOutput."""
        import anthropic  # loaded by __init__ already

        tool_param: ToolParam = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
        try:
            message = self._client.messages.create(
                model=model,
                system=system,
                messages=cast("list[MessageParam]", messages),
                tools=[tool_param],
                tool_choice={"type": "tool", "name": tool.name},
                max_tokens=max_tokens,
            )
        except anthropic.APITimeoutError:
            raise LLMUnavailable(
                f"no answer within {self._timeout:g} s{self._attempts()}"
            ) from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__
            detail = f" ({type(cause).__name__})" if cause is not None else ""
            raise LLMUnavailable(
                f"could not connect to the API{detail}{self._attempts()}"
            ) from None
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from None
        except (anthropic.APIError, json.JSONDecodeError):  # a success whose body is no JSON
            raise LLMUnavailable("the API answered with a body that is not a Message") from None
        return tool_call(message, tool)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _attempts(self) -> str:
        attempts = self._max_retries + 1
        return f" (after {attempts} attempts)" if attempts > 1 else ""

    def _status_error(self, exc: anthropic.APIStatusError) -> LLMError:
        status = exc.status_code
        error_type = exc.type or "error"
        message = " ".join((exc.api_message or "").split())
        reason = self._scrub(f"HTTP {status} {error_type}" + (f": {message}" if message else ""))
        if len(reason) > REASON_CHARS:
            reason = reason[:REASON_CHARS] + "..."
        if status in RETRYABLE_STATUSES or status >= 500:
            retry_after = retry_after_seconds(exc.response.headers)
            return LLMUnavailable(reason + self._attempts(), retry_after=retry_after)
        return LLMRejected(reason)

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***")


def tool_call(message: Message, tool: ToolSpec) -> ToolCall:
    """The checked input of the message's call of `tool`; raises MalformedOutput (or
    LLMUnavailable when the answer is not a Message at all)."""
    from anthropic.types import ToolUseBlock

    usage = message_usage(message)
    stopped = " (the answer stopped at max_tokens)" if message.stop_reason == "max_tokens" else ""
    calls = [
        block
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.name == tool.name
    ]
    if not calls:
        kinds = ", ".join(block.type for block in message.content) or "nothing"
        raise MalformedOutput(
            f"no call of tool {tool.name!r}: the answer held {kinds}{stopped}", usage=usage
        )
    arguments: object = calls[0].input
    if not isinstance(arguments, dict):
        raise MalformedOutput(
            f"the input of tool {tool.name!r} is {json_type(arguments)}, not an object{stopped}",
            usage=usage,
        )
    schema = tool.input_schema if tool.answer_schema is None else tool.answer_schema
    validator = validators.validator_for(schema)(schema)
    error = schema_exceptions.best_match(validator.iter_errors(arguments))
    if error is not None:
        raise MalformedOutput(
            f"the input of tool {tool.name!r} does not match its schema at "
            f"{error.json_path}: {schema_failure(error)}{stopped}",
            usage=usage,
        )
    return ToolCall(input=arguments, usage=usage, stop_reason=message.stop_reason)


def message_usage(message: Message) -> Usage:
    """The usage of a Message; the SDK does not check the answer's shape, so this does."""
    counts = getattr(message, "usage", None)
    model: object = getattr(message, "model", None)
    input_tokens: object = getattr(counts, "input_tokens", None)
    output_tokens: object = getattr(counts, "output_tokens", None)
    content: object = getattr(message, "content", None)
    if (
        not isinstance(model, str)
        or not isinstance(content, list)
        or type(input_tokens) is not int
        or type(output_tokens) is not int
    ):
        raise LLMUnavailable("the API answered with a body that is not a Message")
    return Usage(model=model, input_tokens=input_tokens, output_tokens=output_tokens)


def schema_failure(error: schema_exceptions.ValidationError) -> str:
    """What the value failed, in words that name the schema's rule but never quote the value
    (which is the model's output, possibly the prompt's text)."""
    if error.validator in ("required", "additionalProperties"):
        return error.message  # names properties only
    rule = repr(error.validator_value)
    if len(rule) > 120:
        rule = rule[:120] + "..."
    return f"{json_type(error.instance)} fails {error.validator} {rule}"


def json_type(value: object) -> str:
    """The JSON type of a decoded value, with its article: 'a string', 'an array'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """How long the API asked to wait: `retry-after-ms`, else `retry-after` in seconds or as an
    HTTP date; None when absent or unreadable, never negative."""
    try:
        seconds = float(headers["retry-after-ms"]) / 1000
    except (KeyError, ValueError):
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            seconds = float(value)
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                return None
            seconds = email.utils.mktime_tz(parsed) - time.time()
    return max(seconds, 0.0) if math.isfinite(seconds) else None
