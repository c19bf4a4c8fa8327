"""POST /api/v1/context over HTTP: the same bearer tokens, scopes and isolation as MCP, the
project a token may act in, and errors a client can act on. The app is the server's own
(mcp/http.py http_app with the API's routes) on the real database, driven in process."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.memory import MemoryService
from tests.helpers import make_token
from tests.test_rest_api import api_client, api_services

CONTEXT = "/api/v1/context"


@pytest.fixture
def app_client(service: MemoryService) -> Iterator[TestClient]:
    with api_client(service, api_services(service), max_request_bytes=4096) as client:
        yield client


@pytest.fixture
def token_for(database_url: str) -> Callable[..., str]:
    def make(principal: Principal, *scopes: str) -> str:
        return make_token(database_url, principal.actor_id, principal.project_id, *scopes)[0]

    return make


def post(client: TestClient, token: str | None, body: Any, path: str = CONTEXT) -> Any:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return client.post(path, json=body, headers=headers)


def test_the_context_of_a_session_start_over_http(
    app_client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    saved = service.save(principal, "The user prefers pnpm over npm", "preference")
    token = token_for(principal)
    response = post(app_client, token, {"session_id": "s-1", "event": "session_start"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"context", "memories", "estimated_tokens", "budget_tokens", "capture"}
    assert body["capture"] == "off"  # these services have no Anthropic key
    assert [m["id"] for m in body["memories"]] == [saved["memory"]["id"]]
    assert body["context"].startswith("<emergent-memory>")
    assert "The user prefers pnpm over npm" in body["context"]
    assert body["budget_tokens"] == 500
    # a prompt in the same session does not bring it again
    again = post(
        app_client,
        token,
        {"session_id": "s-1", "event": "prompt", "prompt": "pnpm or npm for installs"},
    )
    assert again.json()["memories"] == []


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic dXNlcjpwYXNz", "Bearer "])
def test_without_a_live_token_the_api_answers_401(
    app_client: TestClient, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    response = app_client.post(
        CONTEXT, json={"session_id": "s", "event": "session_start"}, headers=headers
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert "Authorization: Bearer" in response.json()["error"]["message"]


def test_a_token_acts_in_its_own_project_unless_it_may_choose(
    app_client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    elsewhere = uuid.uuid4()
    there = service.save(
        Principal(principal.actor_id, elsewhere),
        "Use yarn in this repo",
        "convention",
        scope="project",
    )["memory"]["id"]
    here = {"session_id": "s-2", "event": "session_start", "project_id": str(elsewhere)}

    bound = post(app_client, token_for(principal), here)
    assert bound.status_code == 403
    assert "memory:any-project" in bound.json()["error"]["message"]

    free = post(app_client, token_for(principal, READ, WRITE, ANY_PROJECT), here)
    assert free.status_code == 200
    assert [m["id"] for m in free.json()["memories"]] == [there]

    # its own project named explicitly is always allowed
    own = post(
        app_client,
        token_for(principal),
        {"session_id": "s-3", "event": "session_start", "project_id": str(principal.project_id)},
    )
    assert own.status_code == 200
    assert own.json()["memories"] == []


def test_any_project_never_reaches_another_actors_memories(
    app_client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    victim = Principal(uuid.uuid4(), uuid.uuid4())
    service.save(victim, "The victim's deploy key lives in vault path ops/deploy", "fact")
    service.save(victim, "Victim project convention: squash merges", "convention", scope="project")
    token = token_for(principal, READ, WRITE, ANY_PROJECT)
    for body in (
        {"session_id": "s", "event": "session_start", "project_id": str(victim.project_id)},
        {
            "session_id": "s",
            "event": "prompt",
            "prompt": "where does the deploy key live, squash merges?",
            "project_id": str(victim.project_id),
        },
    ):
        response = post(app_client, token, body)
        assert response.status_code == 200
        assert response.json()["memories"] == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"event": "session_start"}, "session_id: Field required"),
        ({"session_id": "s", "event": "boot"}, "event: Input should be"),
        ({"session_id": "s", "event": "session_start", "extra": 1}, "extra: is not a field"),
        ({"session_id": 5, "event": "session_start"}, "session_id: Input should be a valid string"),
        ({"session_id": "s", "event": "session_start", "project_id": "nope"}, "project_id"),
        ({"session_id": "s", "event": "session_start", "budget_tokens": "9"}, "budget_tokens"),
        ({"session_id": "s", "event": "session_start", "budget_tokens": 0}, "budget_tokens"),
        ({"session_id": "s", "event": "prompt"}, "prompt is required"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_bodies_get_400_naming_the_field(
    app_client: TestClient,
    principal: Principal,
    token_for: Callable[..., str],
    body: Any,
    fragment: str,
) -> None:
    response = post(app_client, token_for(principal), body)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["error"]["message"]


def test_a_body_that_is_not_json_or_too_large_gets_a_rest_error(
    app_client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    headers = {"Authorization": f"Bearer {token_for(principal)}"}
    broken = app_client.post(
        CONTEXT, content=b"{not json", headers=headers | {"Content-Type": "application/json"}
    )
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "invalid_json"
    large = app_client.post(
        CONTEXT,
        json={"session_id": "s", "event": "prompt", "prompt": "x " * 5000},
        headers=headers,
    )
    assert large.status_code == 413
    assert large.json()["error"]["code"] == "too_large"
    latin1 = app_client.post(
        CONTEXT,
        content=b'{"session_id": "\xe9"}',
        headers=headers | {"Content-Type": "application/json"},
    )
    assert latin1.status_code == 400
    assert "UTF-8" in latin1.json()["error"]["message"]


def test_a_token_without_read_gets_403(
    app_client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    # a token may hold only memory:any-project: it may act in any project, but not read
    response = post(
        app_client,
        token_for(principal, ANY_PROJECT),
        {"session_id": "s", "event": "session_start"},
    )
    assert response.status_code == 403
    assert "memory:read" in response.json()["error"]["message"]


def documented_requests(path: str) -> list[dict[str, Any]]:
    """The JSON request examples of an endpoint's section in docs/automatic-memory.md."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "automatic-memory.md").read_text()
    section = text.split(f"### POST {path}")[1].split("\n### ")[0]
    request_part = section.split("Answer")[0]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", request_part, re.S)]


def test_the_documented_context_requests_work_and_the_answer_has_the_documented_fields(
    app_client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    saved = service.save(
        principal, "The user prefers pnpm over npm as the package manager", "preference"
    )["memory"]["id"]
    examples = documented_requests(CONTEXT)
    assert [e["event"] for e in examples] == ["session_start", "prompt"]
    token = token_for(principal)
    answers = []
    for example in examples:
        response = post(app_client, token, example)
        assert response.status_code == 200, response.text
        assert set(response.json()) == {
            "context",
            "memories",
            "estimated_tokens",
            "budget_tokens",
            "capture",
        }
        answers.append(response.json())
    start, prompt = answers
    assert [m["id"] for m in start["memories"]] == [saved]
    assert prompt["memories"] == []  # the same session: already shown at its start
    assert prompt["budget_tokens"] == examples[1]["budget_tokens"]


@pytest.mark.parametrize("prompt", ["pnpm or npm\u0000 for installs", "pnpm or npm \ud800 here"])
def test_a_prompt_with_a_nul_or_a_lone_surrogate_is_read_not_refused(
    app_client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
    prompt: str,
) -> None:
    """A pasted file may hold bytes a query cannot: they are read as U+FFFD (a 500 before)."""
    service.save(principal, "The user prefers pnpm over npm for installs", "preference")
    body = json.dumps({"session_id": "s-nul", "event": "prompt", "prompt": prompt})
    response = app_client.post(
        CONTEXT,
        content=body.encode(),
        headers={
            "Authorization": f"Bearer {token_for(principal)}",
            "Content-Type": "application/json",
        },
    )
    assert response.status_code == 200, response.text
    assert len(response.json()["memories"]) == 1
