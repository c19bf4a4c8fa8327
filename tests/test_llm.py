"""The LLM client (emergent_memory/llm) drives the real `anthropic` SDK against the local fake
Messages API (tests/fake_anthropic.py): forced tool calls, its own bounded retries (the SDK's
are off) and deadline, the three kinds of failure and what they carry (never echoed text);
and the fake's SSE, JSON and other endpoints are what the SDK expects."""

from __future__ import annotations

import ast
import dataclasses
import email.utils
import logging
import re
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from emergent_memory.llm import (
    AnthropicClient,
    LLMError,
    LLMRejected,
    LLMUnavailable,
    MalformedOutput,
    ToolSpec,
)
from tests.fake_anthropic import (
    FakeAnthropic,
    RecordedRequest,
    Reply,
    dripped,
    error,
    message,
    raw,
    slow,
    text,
    tool_use,
)

KEY = "sk-ant-test-0123456789abcdef"
GATE = ToolSpec(
    name="gate",
    description="Whether anything in the conversation is worth remembering across sessions.",
    input_schema={
        "type": "object",
        "properties": {
            "worth_remembering": {"type": "boolean"},
            "reason": {"type": "string"},
        },
        "required": ["worth_remembering", "reason"],
        "additionalProperties": False,
    },
)
EXTRACT = ToolSpec(
    name="extract",
    description="The memories to save.",
    input_schema={
        "type": "object",
        "properties": {
            "memories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "action": {"enum": ["add", "reinforce", "supersede", "none"]},
                    },
                    "required": ["content", "action"],
                },
            }
        },
        "required": ["memories"],
    },
)
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "I always use tabs, never spaces."}]
SYSTEM = "Decide whether the conversation holds anything worth remembering."
GATE_INPUT = {"worth_remembering": True, "reason": "a stated preference"}
# Seconds a slow answer takes (the fake ends the wait when it stops): far beyond the 0.3 s
# timeout it is tested against, so that a client that waited for it fails however loaded the
# machine, rather than passing or failing by how fast the client's thread is scheduled.
SLOW = 60.0
REQUEST_ID = r"req_fake\d{6}"  # the fake's request-id header


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def client_of(fake: FakeAnthropic, **options: Any) -> AnthropicClient:
    settings: dict[str, Any] = {
        "api_key": KEY,
        "base_url": fake.url,
        "timeout": 10.0,
        "max_retries": 0,
    }
    return AnthropicClient(**(settings | options))


def call_gate(client: AnthropicClient, tool: ToolSpec = GATE) -> Any:
    return client.call_tool(model="claude-gate", system=SYSTEM, messages=MESSAGES, tool=tool)


def failure_of(fake: FakeAnthropic, *replies: Reply, **options: Any) -> LLMError:
    fake.enqueue(*replies)
    with client_of(fake, **options) as client, pytest.raises(LLMError) as caught:
        call_gate(client)
    return caught.value


# -- forced tool calls


def test_a_forced_tool_call_returns_its_input_usage_and_stop_reason(fake: FakeAnthropic) -> None:
    answer = tool_use("gate", GATE_INPUT, input_tokens=321, output_tokens=17)
    fake.enqueue(dataclasses.replace(answer, model="claude-gate-20260101"))
    with client_of(fake) as client:
        call = client.call_tool(
            model="claude-gate", system=SYSTEM, messages=MESSAGES, tool=GATE, max_tokens=300
        )
    assert call.input == GATE_INPUT
    assert (call.usage.model, call.usage.input_tokens, call.usage.output_tokens) == (
        "claude-gate-20260101",  # the model as the API answered it, not as asked
        321,
        17,
    )
    assert call.stop_reason == "tool_use"
    [request] = fake.requests
    assert (request.method, request.path, request.stream) == ("POST", "/v1/messages", False)
    assert request.json["tool_choice"] == {"type": "tool", "name": "gate"}
    assert request.json["tools"] == [
        {"name": "gate", "description": GATE.description, "input_schema": GATE.input_schema}
    ]
    assert request.json["model"] == "claude-gate"
    assert request.json["system"] == SYSTEM
    assert request.json["messages"] == MESSAGES
    assert request.json["max_tokens"] == 300
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_text_before_the_tool_call_is_ignored(fake: FakeAnthropic) -> None:
    fake.enqueue(tool_use("gate", GATE_INPUT, preamble="Let me look at this."))
    with client_of(fake) as client:
        assert call_gate(client).input == GATE_INPUT


def test_a_tool_spec_must_take_an_object_and_be_a_valid_schema() -> None:
    with pytest.raises(ValueError, match="type 'object'"):
        ToolSpec(name="t", description="d", input_schema={"type": "array"})
    with pytest.raises(ValueError, match="not a valid JSON schema: 3 is not of type 'array'"):
        ToolSpec(name="t", description="d", input_schema={"type": "object", "required": 3})


# -- retries and unavailability


def test_a_rate_limit_is_retried_by_the_client_after_its_retry_after(fake: FakeAnthropic) -> None:
    fake.enqueue(
        error(429, "rate_limit_error", "Number of requests has exceeded your rate limit", 0.01),
        tool_use("gate", GATE_INPUT),
    )
    with client_of(fake, max_retries=2) as client:
        assert call_gate(client).input == GATE_INPUT
    # two requests, neither a retry of the SDK's (its retries are off)
    assert [r.headers["x-stainless-retry-count"] for r in fake.message_requests] == ["0", "0"]


def test_a_long_retry_after_ends_the_call_at_once_instead_of_sleeping(fake: FakeAnthropic) -> None:
    """The SDK would sleep a day inside the call (the only capture thread); the client gives
    the wait back to its caller. Run in a thread, so that a client that sleeps fails here
    instead of hanging the suite."""
    fake.enqueue(error(429, "rate_limit_error", "Too many", retry_after=86400))
    caught: list[BaseException] = []

    def call() -> None:
        with client_of(fake, max_retries=2) as client:
            try:
                call_gate(client)
            except LLMError as failure:
                caught.append(failure)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(SLOW)
    assert not thread.is_alive(), "the client slept the API's retry-after"
    [failure] = caught
    assert isinstance(failure, LLMUnavailable)
    assert failure.retry_after == 86400
    assert failure.rate_limited
    assert len(fake.message_requests) == 1


def test_a_wait_that_does_not_fit_in_the_deadline_ends_the_call(fake: FakeAnthropic) -> None:
    busy = error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "5000"})
    failure = failure_of(fake, busy, busy, max_retries=2, deadline=1.0)
    assert isinstance(failure, LLMUnavailable)
    assert failure.retry_after == 5.0  # short enough to wait, but not within 1 s
    assert len(fake.message_requests) == 1


def test_the_deadline_bounds_the_whole_call_not_each_attempt(fake: FakeAnthropic) -> None:
    failure = failure_of(
        fake, slow(SLOW, tool_use("gate", GATE_INPUT)), timeout=30.0, max_retries=2, deadline=0.3
    )
    assert isinstance(failure, LLMUnavailable)
    assert failure.reason == "no answer within the call's deadline of 0.3 s"
    assert len(fake.message_requests) == 1


def test_the_deadline_bounds_an_answer_that_drips_in_without_pause(fake: FakeAnthropic) -> None:
    """A byte every 0.2 s never trips the SDK's read timeout (10 s): the body would take
    minutes. The call gives up on it after its deadline."""
    failure = failure_of(
        fake, dripped(0.2, tool_use("gate", GATE_INPUT)), max_retries=0, deadline=0.5
    )
    assert isinstance(failure, LLMUnavailable)
    assert failure.reason == "no answer within the call's deadline of 0.5 s"


def test_overload_is_retried_by_the_client(fake: FakeAnthropic) -> None:
    fake.enqueue(
        error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "10"}),
        tool_use("gate", GATE_INPUT),
    )
    with client_of(fake, max_retries=1) as client:
        assert call_gate(client).input == GATE_INPUT
    assert len(fake.message_requests) == 2


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
        ({"retry-after": "soon"}, None),
    ],
)
def test_a_rate_limit_without_retries_left_is_unavailable_with_its_retry_after(
    fake: FakeAnthropic, headers: dict[str, str], expected: float | None
) -> None:
    failure = failure_of(fake, error(429, "rate_limit_error", "Too many", headers=headers))
    assert isinstance(failure, LLMUnavailable)
    assert failure.retryable
    assert failure.retry_after == expected
    assert re.fullmatch(f"HTTP 429 rate_limit_error, request {REQUEST_ID}", failure.reason)
    assert failure.request_id is not None
    assert failure.request_id in failure.reason
    assert failure.usage is None


def test_a_retry_after_as_an_http_date_becomes_seconds(fake: FakeAnthropic) -> None:
    sent = time.time()
    when = email.utils.formatdate(sent + 60, usegmt=True)  # whole seconds: up to 1 s earlier
    failure = failure_of(fake, error(429, "rate_limit_error", "Too many", retry_after=when))
    took = time.time() - sent  # the date was read during the call
    assert failure.retry_after is not None
    assert 60 - 1 - took < failure.retry_after <= 60


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(529, "overloaded_error"), (500, "api_error"), (503, "api_error"), (408, "timeout_error")],
)
def test_server_errors_are_unavailable(fake: FakeAnthropic, status: int, error_type: str) -> None:
    failure = failure_of(fake, error(status, error_type, "Something went wrong"))
    assert isinstance(failure, LLMUnavailable)
    assert failure.retryable
    assert re.fullmatch(f"HTTP {status} {error_type}, request {REQUEST_ID}", failure.reason)
    assert failure.retry_after is None


def test_exhausted_retries_say_how_many_attempts_and_the_last_retry_after(
    fake: FakeAnthropic,
) -> None:
    busy = error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "20"})
    failure = failure_of(fake, busy, busy, busy, max_retries=2)
    assert isinstance(failure, LLMUnavailable)
    assert re.fullmatch(
        f"HTTP 529 overloaded_error, request {REQUEST_ID} \\(after 3 attempts\\)", failure.reason
    )
    assert failure.retry_after == 0.02
    assert len(fake.message_requests) == 3


def test_an_answer_slower_than_the_timeout_is_unavailable(fake: FakeAnthropic) -> None:
    failure = failure_of(fake, slow(SLOW, tool_use("gate", GATE_INPUT)), timeout=0.3)
    assert isinstance(failure, LLMUnavailable)
    assert failure.reason == "no answer within 0.3 s"


def test_a_server_that_is_not_there_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the call
    client = AnthropicClient(
        api_key=KEY, base_url=f"http://127.0.0.1:{port}", timeout=10.0, max_retries=0
    )
    with client, pytest.raises(LLMUnavailable) as caught:
        call_gate(client)
    assert caught.value.reason.startswith("could not connect to the API")


@pytest.mark.parametrize("body", ["<html>Bad gateway</html>", '{"unexpected": true}'])
def test_a_success_that_is_not_a_message_is_unavailable(fake: FakeAnthropic, body: str) -> None:
    failure = failure_of(fake, raw(200, body))
    assert isinstance(failure, LLMUnavailable)
    assert failure.reason == "the API answered with a body that is not a Message"


# -- rejections


def test_a_wrong_key_is_rejected_without_retrying_and_never_shown() -> None:
    with FakeAnthropic(api_key="the-right-key") as fake:
        failure = failure_of(fake, max_retries=2)
        assert len(fake.requests) == 1
    assert isinstance(failure, LLMRejected)
    assert not failure.retryable
    assert re.fullmatch(
        f"HTTP 401 authentication_error, request {REQUEST_ID}: the API key was refused",
        failure.reason,
    )
    assert KEY not in "".join(traceback.format_exception(failure)) + repr(failure)


@pytest.mark.parametrize(
    ("status", "error_type", "detail"),
    [
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        (403, "permission_error", "Your API key does not have permission to use this model"),
        (404, "not_found_error", "model: claude-gate"),
        (413, "request_too_large", "Request exceeds the maximum allowed number of bytes"),
    ],
)
def test_refused_requests_are_rejected_and_not_retried(
    fake: FakeAnthropic, status: int, error_type: str, detail: str
) -> None:
    failure = failure_of(fake, error(status, error_type, detail), max_retries=2)
    assert isinstance(failure, LLMRejected)
    assert failure.reason.startswith(f"HTTP {status} {error_type}, request req_fake")
    assert detail not in failure.reason  # the API's message may quote the request
    assert failure.status == status
    assert len(fake.message_requests) == 1


def test_the_apis_message_is_never_shown_only_what_classifies_it(fake: FakeAnthropic) -> None:
    """An error envelope that echoes the prompt (or the key) keeps none of it; an error type
    or a request id that does not look like one is left out too."""
    echo = f"prompt was: {MESSAGES[0]['content']} with key {KEY}"
    failure = failure_of(fake, error(400, "invalid_request_error", echo))
    assert re.fullmatch(
        f"HTTP 400 invalid_request_error, request {REQUEST_ID}: the API refused the request "
        "\\(too long, or an option it does not accept\\)",
        failure.reason,
    )
    odd = error(429, "tabs, never spaces", echo, headers={"request-id": "I always use tabs"})
    failure = failure_of(fake, odd)
    assert failure.reason == "HTTP 429 error"
    assert failure.request_id is None


# -- malformed output


def test_text_instead_of_the_tool_call_is_malformed_and_counts_its_tokens(
    fake: FakeAnthropic,
) -> None:
    said = "I think the user prefers tabs."
    failure = failure_of(fake, text(said, input_tokens=55, output_tokens=9))
    assert isinstance(failure, MalformedOutput)
    assert not failure.retryable
    assert failure.reason == "no call of tool 'gate': the answer held text"
    assert failure.usage is not None
    assert (failure.usage.model, failure.usage.input_tokens) == ("claude-gate", 55)
    assert failure.usage.output_tokens == 9


def test_a_call_of_another_tool_is_malformed(fake: FakeAnthropic) -> None:
    failure = failure_of(fake, tool_use("extract", {"memories": []}))
    assert isinstance(failure, MalformedOutput)
    assert failure.reason == "no call of tool 'gate': the answer held tool_use"


def test_a_tool_input_that_is_not_an_object_is_malformed(fake: FakeAnthropic) -> None:
    failure = failure_of(fake, tool_use("gate", ["worth_remembering", True]))
    assert isinstance(failure, MalformedOutput)
    assert failure.reason == "the input of tool 'gate' is an array, not an object"
    assert failure.usage is not None


def test_a_tool_input_against_the_schema_names_the_path_but_not_the_value(
    fake: FakeAnthropic,
) -> None:
    secret_ish = "the user's private project codename is BLUEBIRD"
    memories = [{"content": "ok", "action": "add"}, {"content": secret_ish, "action": "maybe"}]
    fake.enqueue(tool_use("extract", {"memories": memories}))
    with client_of(fake) as client, pytest.raises(MalformedOutput) as caught:
        call_gate(client, EXTRACT)
    reason = caught.value.reason
    assert reason.startswith("the input of tool 'extract' does not match its schema at ")
    assert "$.memories[1].action: a string fails enum" in reason
    assert "maybe" not in reason
    assert "BLUEBIRD" not in reason
    assert caught.value.usage is not None


def test_a_missing_property_is_named(fake: FakeAnthropic) -> None:
    failure = failure_of(fake, tool_use("gate", {"worth_remembering": False}))
    assert failure.reason == (
        "the input of tool 'gate' does not match its schema at $: 'reason' is a required property"
    )


def test_a_property_the_model_invented_is_never_named(fake: FakeAnthropic) -> None:
    invented = {**GATE_INPUT, "my password is Zx9!qLmP": "Zx9!qLmP"}
    failure = failure_of(fake, tool_use("gate", invented))
    assert isinstance(failure, MalformedOutput)
    assert failure.reason == (
        "the input of tool 'gate' does not match its schema at $: an unexpected property"
    )
    nested = {"memories": [{"content": "ok", "action": "add"}], "Zx9!qLmP": {"action": 1}}
    schema = {**EXTRACT.input_schema, "additionalProperties": {"type": "object"}}
    loose = ToolSpec("extract", "", {**schema, "properties": {**schema["properties"]}})
    fake.enqueue(tool_use("extract", {**nested, "Zx9!qLmP": [1]}))
    with client_of(fake) as client, pytest.raises(MalformedOutput) as caught:
        call_gate(client, loose)
    where = "the input of tool 'extract' does not match its schema at $.*"
    assert caught.value.reason == f"{where}: an array fails type 'object'"


def test_an_answer_naming_a_strange_model_is_recorded_as_the_model_asked(
    fake: FakeAnthropic,
) -> None:
    reply = dataclasses.replace(tool_use("gate", GATE_INPUT), model="I always use tabs")
    fake.enqueue(reply)
    with client_of(fake) as client:
        assert call_gate(client).usage.model == "claude-gate"


def test_the_sdks_debug_log_never_holds_the_prompt(
    fake: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    fake.enqueue(error(529, "overloaded_error", "Overloaded"), tool_use("gate", GATE_INPUT))
    with caplog.at_level(logging.DEBUG), client_of(fake, max_retries=1) as client:
        call_gate(client)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert MESSAGES[0]["content"] not in logged
    assert SYSTEM not in logged


def test_an_answer_cut_at_max_tokens_says_so(fake: FakeAnthropic) -> None:
    cut = {"type": "tool_use", "id": "toolu_cut", "name": "gate", "input": {}}
    failure = failure_of(fake, message(cut, stop_reason="max_tokens"))
    assert isinstance(failure, MalformedOutput)
    assert failure.reason.endswith("(the answer stopped at max_tokens)")


@pytest.mark.parametrize(
    "reply",
    [
        text(f"Your key is {KEY}"),
        error(401, "authentication_error", "invalid x-api-key"),
        error(529, "overloaded_error", "Overloaded"),
        slow(SLOW, tool_use("gate", GATE_INPUT)),
        error(400, "invalid_request_error", f"{SYSTEM} {MESSAGES[0]['content']} {KEY}"),
        error(429, "rate_limit_error", f"{SYSTEM} {MESSAGES[0]['content']}", retry_after=9),
    ],
    ids=["malformed", "rejected", "unavailable", "timeout", "echoed", "echoed-rate-limit"],
)
def test_no_failure_shows_the_key_or_the_prompt(fake: FakeAnthropic, reply: Reply) -> None:
    failure = failure_of(fake, reply, timeout=0.3)
    shown = "".join(traceback.format_exception(failure)) + repr(failure) + failure.reason
    assert KEY not in shown
    assert MESSAGES[0]["content"] not in shown
    assert SYSTEM not in shown


# -- the fake itself, as the SDK and Claude Code see it


def sdk_client(fake: FakeAnthropic) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0, timeout=30)


@pytest.mark.parametrize(
    "reply",
    [
        tool_use("gate", {"worth_remembering": True, "reason": "é " * 40}, preamble="Checking"),
        text("A longer answer, streamed in several pieces, with “quotes” and\nlines."),
    ],
    ids=["tool_use", "text"],
)
def test_the_stream_gives_the_sdk_the_same_message_as_json(
    fake: FakeAnthropic, reply: Reply
) -> None:
    fake.enqueue(reply, reply)
    arguments: dict[str, Any] = {"model": "claude-x", "max_tokens": 100, "messages": MESSAGES}
    with sdk_client(fake) as client:
        whole = client.messages.create(**arguments)
        with client.messages.stream(**arguments, extra_query={"beta": "true"}) as stream:
            kinds = [event.type for event in stream]
            streamed = stream.get_final_message()
    assert streamed.model_dump(exclude={"id"}) == whole.model_dump(exclude={"id"})
    assert streamed.usage.output_tokens == reply.output_tokens
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "content_block_delta" in kinds
    first, second = fake.requests
    assert (first.stream, first.query) == (False, {})
    assert (second.stream, second.query) == (True, {"beta": "true"})


def test_the_raw_stream_follows_the_documented_event_order(fake: FakeAnthropic) -> None:
    fake.enqueue(tool_use("gate", GATE_INPUT, preamble="One moment"))
    with sdk_client(fake) as client:
        events = list(
            client.messages.create(model="m", max_tokens=50, messages=MESSAGES, stream=True)
        )
    names = [event.type for event in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    for index in (0, 1):
        block = [e for e in events if getattr(e, "index", None) == index]
        assert block[0].type == "content_block_start"
        assert block[-1].type == "content_block_stop"
        assert {e.type for e in block[1:-1]} == {"content_block_delta"}
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert {d.type for d in deltas} == {"text_delta", "input_json_delta"}
    assert "".join(d.partial_json for d in deltas if d.type == "input_json_delta") == (
        '{"worth_remembering": true, "reason": "a stated preference"}'
    )


def test_a_handler_answers_by_content_before_the_queue(fake: FakeAnthropic) -> None:
    def answer(request: RecordedRequest) -> Reply | None:
        if request.forced_tool == "gate":
            return tool_use("gate", {"worth_remembering": "tabs" in request.text, "reason": "."})
        return None

    fake.handler = answer
    fake.enqueue(text("from the queue"))
    with client_of(fake) as client, sdk_client(fake) as sdk:
        assert call_gate(client).input["worth_remembering"] is True
        plain = sdk.messages.create(model="m", max_tokens=10, messages=MESSAGES)
        again = sdk.messages.create(model="m", max_tokens=10, messages=MESSAGES)
    assert [block.model_dump()["text"] for block in plain.content] == ["from the queue"]
    assert [block.model_dump()["text"] for block in again.content] == ["OK."]  # the default
    assert fake.handler_errors == []


def test_a_failing_handler_answers_500_and_is_recorded(fake: FakeAnthropic) -> None:
    def broken(request: RecordedRequest) -> Reply | None:
        raise RuntimeError("scripted bug")

    fake.handler = broken
    failure = failure_of(fake)
    assert isinstance(failure, LLMUnavailable)
    assert failure.reason.startswith("HTTP 500 api_error")  # the message is never shown
    assert [str(e) for e in fake.handler_errors] == ["scripted bug"]


def test_other_endpoints_are_recorded_and_answered(fake: FakeAnthropic) -> None:
    with sdk_client(fake) as client:
        counted = client.messages.count_tokens(model="m", messages=MESSAGES)
    assert counted.input_tokens > 0
    probe = httpx.head(fake.url + "/")
    assert (probe.status_code, probe.content) == (404, b"")
    models = httpx.get(fake.url + "/v1/models?limit=5")
    assert models.status_code == 404
    assert models.json()["error"] == {
        "type": "not_found_error",
        "message": "Not found: GET /v1/models",
    }
    assert [(r.method, r.path) for r in fake.requests] == [
        ("POST", "/v1/messages/count_tokens"),
        ("HEAD", "/"),
        ("GET", "/v1/models"),
    ]
    assert fake.requests[-1].query == {"limit": "5"}
    assert fake.message_requests == []


def test_concurrent_requests_each_get_one_reply_and_are_all_recorded(
    fake: FakeAnthropic,
) -> None:
    fake.enqueue(
        *(tool_use("gate", {"worth_remembering": True, "reason": str(n)}) for n in range(8))
    )
    reasons: list[str] = []
    with client_of(fake) as client:
        threads = [
            threading.Thread(target=lambda: reasons.append(call_gate(client).input["reason"]))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(reasons, key=int) == [str(n) for n in range(8)]
    assert len(fake.requests) == 8
    assert fake.pending == 0


def test_the_llm_package_imports_nothing_else_of_emergent_memory() -> None:
    package = Path(__file__).parent.parent / "emergent_memory" / "llm"
    imported: set[str] = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "anthropic" in imported  # the walk sees the imports
    ours = {name for name in imported if name.split(".")[0] == "emergent_memory"}
    assert {name for name in ours if not name.startswith("emergent_memory.llm.")} == set()


def test_the_sdk_is_imported_only_when_a_client_is_made() -> None:
    """Every command and hook imports the application; the SDK alone took half of that
    (about 2.5 s of CPU), for the few processes that ever call the API."""
    code = (
        "import sys\n"
        "import emergent_memory.app, emergent_memory.cli\n"
        "from emergent_memory.llm import AnthropicClient\n"
        "assert 'anthropic' not in sys.modules, 'imported with the application'\n"
        "AnthropicClient(api_key='k', base_url='http://127.0.0.1:9', timeout=1, max_retries=0)\n"
        "assert 'anthropic' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_default_capture_models_are_not_deprecated() -> None:
    """The SDK warns on every call with a model near its end of life (and lists the date)."""
    from anthropic.resources.messages.messages import DEPRECATED_MODELS

    from emergent_memory.settings import Settings

    settings = Settings()
    defaults = {settings.capture_gate_model, settings.capture_extractor_model}
    assert not defaults & set(DEPRECATED_MODELS)


def test_capture_never_takes_its_url_from_the_sdks_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server the hooks start inherits Claude Code's environment, ANTHROPIC_BASE_URL
    included; capture calls the URL of its own setting only."""
    from emergent_memory.app import build_llm
    from emergent_memory.settings import load_settings

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/claude-codes-proxy")
    settings = load_settings({"EMERGENT_MEMORY_ANTHROPIC_API_KEY": "sk-test"})
    client = build_llm(settings)
    assert client is not None
    assert str(client._client.base_url).rstrip("/") == "https://api.anthropic.com"
    client.close()
    assert load_settings({}).anthropic_base_url == "https://api.anthropic.com"
