"""Forced tool calls to Claude through the `anthropic` SDK: the package's one LLM client.

`AnthropicClient.call_tool` sends one non-streaming Messages request that must answer by
calling the given tool, validates the tool's input against the tool's JSON schema and returns
it with the tokens spent. Failures are three kinds of `LLMError`: `LLMUnavailable` (worth
retrying later: rate limits, overload, 5xx, timeouts, connection errors), `LLMRejected` (the
request itself is refused: bad key, unknown model, too long) and `MalformedOutput` (the model
answered, tokens were spent, but not with a valid call of the tool).

Waiting is bounded. The SDK never retries (its own retries would sleep any `retry-after`,
a day if the API says so); this client retries an unavailable answer up to `max_retries`
times, waiting the API's `retry-after` (else 0.5 s doubling) only when that wait is at most
RETRY_WAIT_MAX seconds and fits in what is left of the call's `deadline`; otherwise it gives
up at once with the `retry_after`, for the caller to schedule. `timeout` bounds each attempt
and `deadline` the whole call: every attempt is given at most the time left. The SDK's
timeout bounds each wait for the server's next bytes, not an answer dripped slowly; so each
attempt runs in a daemon thread that the call stops waiting for once the time left (and
ATTEMPT_GRACE) has passed, leaving it to end by itself.

A failure's `reason` is built from what the API's envelope classifies, never from text it
echoes: the HTTP status, the error type (`rate_limit_error`), the `request-id` header and the
number of attempts; a malformed answer names the schema's rule and where it failed, with any
key the model chose shown as "an unexpected property". It never holds the prompt, the model's
output, or the API key. The SDK's debug log, which holds the request, is dropped.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

# The SDK is imported when a client is made, not with this module: importing it costs about
# 2.5 s of CPU, which every command and hook would pay though most never call the API.
if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message, MessageParam, ToolParam
    from jsonschema import exceptions as schema_exceptions

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

# statuses worth retrying (request timeout, lock timeout, rate limit) besides every 5xx
RETRYABLE_STATUSES = frozenset({408, 409, 429})
RETRY_WAIT_MAX = 8.0  # seconds: the longest wait between two attempts inside one call
FIRST_RETRY_WAIT = 0.5  # seconds before the second attempt when the API said nothing
# seconds an attempt's thread is waited for beyond the time left, so that the SDK's own
# timeout (a clearer reason) normally ends it first
ATTEMPT_GRACE = 1.0
# what the API's own vocabulary looks like; anything else in these places is not shown
ERROR_TYPE = re.compile(r"[a-z][a-z_]{0,59}")
REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}")
# what a refusal usually means, by status (the API's message is not shown: it may quote the
# request)
REFUSALS = {
    400: "the API refused the request (too long, or an option it does not accept)",
    401: "the API key was refused",
    403: "the API key may not do this (the model, or the organisation's limits)",
    404: "the model or the endpoint is unknown: check the model's name",
    413: "the request is too large",
}
# loggers of the SDK whose debug records hold the request (the prompt) or the response
SDK_LOGGERS = ("anthropic._base_client", "anthropic._response", "anthropic._tracing")


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
        from jsonschema import exceptions as schema_exceptions
        from jsonschema import validators

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
    never holds the prompt, the model's output or the key; `status` and `request_id` are the
    API's answer's when there was one; `usage` is set when tokens were spent anyway."""

    retryable: bool = False

    def __init__(
        self,
        reason: str,
        *,
        retry_after: float | None = None,
        usage: Usage | None = None,
        status: int | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after  # seconds, when the API said how long to wait
        self.usage = usage
        self.status = status
        self.request_id = request_id

    @property
    def rate_limited(self) -> bool:
        """Whether the API answered 429: the caller should slow down, not only retry."""
        return self.status == 429


class LLMUnavailable(LLMError):
    """Rate limited, overloaded, a server error, a timeout or no connection: try again later
    (after `retry_after` seconds when the API said)."""

    retryable = True


class LLMRejected(LLMError):
    """The API refused the request (bad key, no permission, unknown model, too long): retrying
    the same request will not help."""


class MalformedOutput(LLMError):
    """The model answered without a valid call of the forced tool; nothing of it may be used."""


class _DropDebug(logging.Filter):
    """Drops the SDK's debug records: they hold the request's body (the prompt)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG


_DROP_DEBUG = _DropDebug()


class AnthropicClient:
    """One `anthropic.Anthropic` client; thread-safe like the SDK's. Everything is given
    (the settings' values): nothing is read from the SDK's environment variables.

    `timeout` bounds each attempt, `deadline` the whole call with its retries and waits
    (default: `timeout` times the attempts); `max_retries` is how many more attempts an
    unavailable answer may get within the deadline."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        max_retries: int,
        deadline: float | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("an Anthropic API key is required")
        if timeout <= 0 or max_retries < 0:
            raise ValueError("timeout must be positive and max_retries not negative")
        if deadline is not None and deadline <= 0:
            raise ValueError("deadline must be positive")
        import anthropic

        for name in SDK_LOGGERS:
            logging.getLogger(name).addFilter(_DROP_DEBUG)  # once: a filter is added once
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._deadline = deadline if deadline is not None else timeout * (max_retries + 1)
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,  # this client retries, within the deadline
            open_telemetry=False,  # our telemetry records the call, never its text
        )

    @property
    def deadline(self) -> float:
        """Seconds one call may take at most, retries and waits included."""
        return self._deadline

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
        tool_param: ToolParam = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
        request: dict[str, Any] = {
            "model": model,
            "system": system,
            "messages": cast("list[MessageParam]", messages),
            "tools": [tool_param],
            "tool_choice": {"type": "tool", "name": tool.name},
            "max_tokens": max_tokens,
        }
        ends = time.monotonic() + self._deadline
        attempts = 0
        while True:
            attempts += 1
            left = ends - time.monotonic()
            try:
                if left <= 0:
                    raise LLMUnavailable(
                        f"no answer within the call's deadline of {self._deadline:g} s"
                        + _after(attempts - 1)
                    )
                # the first attempt starts at once: it has the whole timeout if the deadline
                # allows it, which only later attempts cut short
                first = attempts == 1 and self._deadline >= self._timeout
                timeout = self._timeout if first else min(self._timeout, left)
                message = self._attempt(request, timeout, max(left, timeout), attempts)
            except LLMUnavailable as failure:
                wait = _retry_wait(failure, attempts)
                if (
                    attempts > self._max_retries
                    or wait > RETRY_WAIT_MAX
                    or time.monotonic() + wait >= ends
                ):
                    raise
                time.sleep(wait)
                continue
            return tool_call(message, tool, asked=model)

    def _attempt(
        self, request: dict[str, Any], timeout: float, left: float, attempt: int
    ) -> Message:
        """One request with `timeout` seconds, given up after `left` seconds (and the grace)
        however the server answers; a failure as an LLMError of its kind."""
        import anthropic  # loaded by __init__ already

        def create() -> Message:
            return cast("Message", self._client.messages.create(**request, timeout=timeout))

        try:
            return _within(create, left + ATTEMPT_GRACE)
        except TimeoutError:
            raise LLMUnavailable(
                f"no answer within the call's deadline of {self._deadline:g} s{_after(attempt)}"
            ) from None
        except anthropic.APITimeoutError:
            within = (
                f"{timeout:g} s"
                if timeout >= self._timeout
                else f"the call's deadline of {self._deadline:g} s"
            )
            raise LLMUnavailable(f"no answer within {within}{_after(attempt)}") from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__
            detail = f" ({type(cause).__name__})" if cause is not None else ""
            raise LLMUnavailable(f"could not connect to the API{detail}{_after(attempt)}") from None
        except anthropic.APIStatusError as exc:
            raise _status_error(exc, attempt) from None
        except (anthropic.APIError, json.JSONDecodeError):  # a success whose body is no JSON
            raise LLMUnavailable("the API answered with a body that is not a Message") from None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _within(call: Callable[[], Message], seconds: float) -> Message:
    """`call()` in a daemon thread, its answer or its exception; TimeoutError when it has not
    ended after `seconds` (the thread is left to end by itself)."""
    outcome: list[Message | BaseException] = []
    ended = threading.Event()

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # handed to the caller's thread
            outcome.append(error)
        finally:
            ended.set()

    threading.Thread(target=run, name="llm-attempt", daemon=True).start()
    if not ended.wait(seconds):
        raise TimeoutError
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def _after(attempts: int) -> str:
    return f" (after {attempts} attempts)" if attempts > 1 else ""


def _retry_wait(failure: LLMUnavailable, attempts: int) -> float:
    """Seconds before the next attempt: the API's retry-after, else 0.5 s doubling, with up to
    25% less so that calls that failed together spread out."""
    if failure.retry_after is not None:
        return failure.retry_after
    wait = min(RETRY_WAIT_MAX, FIRST_RETRY_WAIT * 2.0 ** (attempts - 1))
    return wait * (1 - 0.25 * random.random())  # noqa: S311 - spreading retries


def _status_error(exc: anthropic.APIStatusError, attempts: int) -> LLMError:
    """The failure of an answer with an error status: its status, the type the API's envelope
    names (when it looks like one), the request id, never the envelope's message."""
    status = exc.status_code
    error_type = exc.type if exc.type and ERROR_TYPE.fullmatch(exc.type) else "error"
    request_id = exc.response.headers.get("request-id")
    if request_id is not None and not REQUEST_ID.fullmatch(request_id):
        request_id = None
    reason = f"HTTP {status} {error_type}" + (f", request {request_id}" if request_id else "")
    if status in RETRYABLE_STATUSES or status >= 500:
        return LLMUnavailable(
            reason + _after(attempts),
            retry_after=retry_after_seconds(exc.response.headers),
            status=status,
            request_id=request_id,
        )
    hint = REFUSALS.get(status)
    return LLMRejected(reason + (f": {hint}" if hint else ""), status=status, request_id=request_id)


def tool_call(message: Message, tool: ToolSpec, *, asked: str | None = None) -> ToolCall:
    """The checked input of the message's call of `tool`; raises MalformedOutput (or
    LLMUnavailable when the answer is not a Message at all). `asked`: the model requested,
    recorded instead of the answer's when the answer names it strangely."""
    from anthropic.types import ToolUseBlock

    usage = message_usage(message, asked)
    stopped = " (the answer stopped at max_tokens)" if message.stop_reason == "max_tokens" else ""
    calls = [
        block
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.name == tool.name
    ]
    if not calls:
        kinds = ", ".join(_block_kind(block) for block in message.content) or "nothing"
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
    from jsonschema import exceptions as schema_exceptions
    from jsonschema import validators

    validator = validators.validator_for(schema)(schema)
    error = schema_exceptions.best_match(validator.iter_errors(arguments))
    if error is not None:
        raise MalformedOutput(
            f"the input of tool {tool.name!r} does not match its schema at "
            f"{schema_path(error, tool.input_schema)}: {schema_failure(error)}{stopped}",
            usage=usage,
        )
    return ToolCall(input=arguments, usage=usage, stop_reason=message.stop_reason)


def _block_kind(block: object) -> str:
    kind = getattr(block, "type", None)
    return kind if isinstance(kind, str) and ERROR_TYPE.fullmatch(kind) else "an unknown block"


def message_usage(message: Message, asked: str | None = None) -> Usage:
    """The usage of a Message; the SDK does not check the answer's shape, so this does. A
    model name that does not look like one (it is the answer's, and becomes a metric's label)
    is replaced by `asked`, the model requested."""
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
    if asked is not None and not MODEL_NAME.fullmatch(model):
        model = asked
    return Usage(model=model, input_tokens=input_tokens, output_tokens=output_tokens)


def schema_failure(error: schema_exceptions.ValidationError) -> str:
    """What the value failed, in words that name the schema's rule but never quote the value
    (which is the model's output, possibly the prompt's text) nor a key the model chose."""
    if error.validator == "required":
        return error.message  # names a property of the schema
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        return "an unexpected property"
    rule = repr(error.validator_value)
    if len(rule) > 120:
        rule = rule[:120] + "..."
    return f"{json_type(error.instance)} fails {error.validator} {rule}"


def schema_path(error: schema_exceptions.ValidationError, schema: Mapping[str, Any]) -> str:
    """Where the value failed, as a JSON path (`$.memories[1].action`) that names only the
    properties the schema declares: a key the model chose is shown as `*`."""
    declared = set(_declared_properties(schema))
    path = "$"
    for part in error.absolute_path:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if part in declared else ".*"
    return path


def _declared_properties(schema: object) -> Iterator[str]:
    """Every property name a schema declares, at any depth."""
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            yield from (name for name in properties if isinstance(name, str))
        for value in schema.values():
            yield from _declared_properties(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _declared_properties(value)


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
