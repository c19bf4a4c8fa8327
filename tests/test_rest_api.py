"""The REST API's memory endpoints over HTTP (/api/v1): each endpoint, its scopes, isolation
(another actor's ids answer exactly like missing ones; bulk operations mixing two actors' ids
change nothing of the other's), bad input (refused naming the field, nothing written),
pagination, and the OpenAPI document. The app is the server's own (mcp/http.py http_app with
the API's routes) on the real database, driven in process."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import shlex
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter
from starlette.routing import Route
from starlette.testclient import TestClient

from emergent_memory.api import ApiServices, api_routes
from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY, VERIFY_POLICIES
from emergent_memory.auth.principal import ADMIN, ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.auth.service import TokenService
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.mcp.compact import answer_schema
from emergent_memory.mcp.http import DatabaseTokenVerifier, http_app, token_principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from emergent_memory.memory.auto_memory_import import AutoMemoryImport
from emergent_memory.memory.browse import BrowseService
from emergent_memory.memory.capture import CaptureConfig, CaptureService
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.memory.models import SaveResult
from emergent_memory.memory.verify import VerifyConfig, VerifyService
from tests.embedders import EmbeddingServer
from tests.helpers import make_token, running_http_server
from tests.test_injection import make_injection

API = "/api/v1"


def api_services(service: MemoryService, capture: CaptureService | None = None) -> ApiServices:
    """The API's services on the test's memory service (capture off unless given)."""
    return ApiServices(
        injection=make_injection(service),
        capture=capture
        or CaptureService(service, None, CaptureConfig(gate_model="gate", extractor_model="x")),
        memory=service,
        browse=BrowseService(service.pool),
        duplicates=DuplicateService(service.pool, service),
        verify=VerifyService(service, None, VerifyConfig(UNCALIBRATED_VERIFY_POLICY)),
        auto_memory=AutoMemoryImport(service.pool, service),
    )


def api_client(
    service: MemoryService, services: ApiServices, *, max_request_bytes: int = 65_536
) -> TestClient:
    """A client of the HTTP app as serve builds it (build_http_app), on these services."""
    server = create_server(
        lambda: nullcontext(service),
        token_principal,
        auth=DatabaseTokenVerifier(TokenService(service.pool).verify),
    )
    app = http_app(
        server,
        max_request_bytes=max_request_bytes,
        max_sessions=10,
        session_idle_timeout=60,
        routes=api_routes(services),
    )
    return TestClient(app)


@pytest.fixture
def client(service: MemoryService) -> Iterator[TestClient]:
    with api_client(service, api_services(service)) as connected:
        yield connected


@pytest.fixture
def token_for(database_url: str) -> Callable[..., str]:
    def make(principal: Principal, *scopes: str) -> str:
        return make_token(database_url, principal.actor_id, principal.project_id, *scopes)[0]

    return make


class Api:
    """Requests with one token."""

    def __init__(self, client: TestClient, token: str | None) -> None:
        self.client = client
        self.headers = {} if token is None else {"Authorization": f"Bearer {token}"}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(API + path, params=params, headers=self.headers)

    def post(self, path: str, body: Any = None) -> Any:
        return self.client.post(API + path, content=_json(body), headers=self._json_headers)

    def patch(self, path: str, body: Any) -> Any:
        return self.client.patch(API + path, content=_json(body), headers=self._json_headers)

    @property
    def _json_headers(self) -> dict[str, str]:
        return self.headers | {"Content-Type": "application/json"}

    def delete(self, path: str, **params: Any) -> Any:
        return self.client.delete(API + path, params=params, headers=self.headers)


def _json(body: Any) -> bytes:
    """JSON as a client sends it: ASCII, a lone surrogate escaped (\\ud83d)."""
    return b"" if body is None else json.dumps(body).encode()


@pytest.fixture
def api(client: TestClient, principal: Principal, token_for: Callable[..., str]) -> Api:
    return Api(client, token_for(principal))


@pytest.fixture
def as_(client: TestClient, token_for: Callable[..., str]) -> Callable[..., Api]:
    def make(principal: Principal, *scopes: str) -> Api:
        return Api(client, token_for(principal, *scopes))

    return make


def saved(service: MemoryService, who: Principal, content: str, **options: Any) -> str:
    category = options.pop("category", "fact")
    return str(service.save(who, content, category, **options)["memory"]["id"])


def error_of(response: Any, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    return dict(body["error"])


WRITES = """
SELECT
  (SELECT count(*) FROM kb.graph_objects WHERE actor_id = ANY(%(actors)s)),
  (SELECT count(*) FROM kb.graph_relationships WHERE actor_id = ANY(%(actors)s)),
  (SELECT count(*) FROM kb.memory_recalls WHERE actor_id = ANY(%(actors)s))
"""


@pytest.fixture
def writes(connect: Callable[[], psycopg.Connection[Any]]) -> Callable[..., tuple[int, ...]]:
    """Rows (every version) of the actors in the tables a change writes."""
    conn = connect()

    def count(*who: Principal) -> tuple[int, ...]:
        row = conn.execute(WRITES, {"actors": [p.actor_id for p in who]}).fetchone()
        assert row is not None
        return tuple(int(n) for n in row)

    return count


# -- search ---------------------------------------------------------------------------------


def test_search_finds_by_words_with_the_score_breakdown_and_counts_no_use(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    tabs = saved(service, principal, "The user prefers tabs over spaces", category="preference")
    saved(service, principal, "The staging database runs on port 5433")
    response = api.get("/memories/search", query="tabs or spaces", limit="5")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["degraded"] is False
    assert body["memories"][0]["id"] == tabs
    first = body["memories"][0]
    assert set(first["scores"]) == {
        "lexical_rank",
        "lexical_score",
        "vector_rank",
        "similarity",
        "fused",
        "effective_confidence",
        "recency",
        "importance_factor",
        "score",
    }
    assert first["scores"]["lexical_rank"] == 1
    filtered = api.get("/memories/search", query="tabs", category="fact").json()
    assert tabs not in [m["id"] for m in filtered["memories"]]
    # a person's search is not a use: nothing recorded, the counts as stored
    assert first["use_count"] == 0
    assert first["last_used"] is None
    assert api.get(f"/memories/{tabs}").json()["use_count"] == 0
    service.recall(principal, "tabs or spaces")  # an agent's recall is one
    again = api.get("/memories/search", query="tabs or spaces").json()["memories"][0]
    assert (again["use_count"], again["last_used"] is not None) == (1, True)


def test_search_says_when_nothing_is_relevant_and_min_relevance_sets_the_floor(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    tabs = saved(service, principal, "The user prefers tabs over spaces", category="preference")
    found = api.get("/memories/search", query="tabs or spaces", min_relevance="0.2").json()
    assert [m["id"] for m in found["memories"]] == [tabs]
    assert found["memories"][0]["relevance"] >= 0.2
    assert (found["nothing_relevant"], found["min_relevance"]) == (False, 0.2)
    nothing = api.get("/memories/search", query="tabs or spaces", min_relevance="1").json()
    assert nothing["memories"] == []
    assert (nothing["nothing_relevant"], nothing["min_relevance"]) == (True, 1.0)


def test_search_sees_only_the_tokens_memories(
    as_: Callable[..., Api], service: MemoryService, principal: Principal
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    saved(service, other, "Bob deploys the billing service on Fridays", scope="project")
    mine = saved(service, principal, "The billing service is deployed by CI")
    found = as_(principal).get("/memories/search", query="billing service deploys").json()
    assert [m["id"] for m in found["memories"]] == [mine]


# -- update, delete, restore ----------------------------------------------------------------


def test_patch_makes_a_new_version_with_the_same_id(
    api: Api, service: MemoryService, principal: Principal, connect: Callable[..., Any]
) -> None:
    memory = saved(service, principal, "The user prefers tabs")
    response = api.patch(f"/memories/{memory}", {"content": "The user prefers 4 spaces"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["memory"]["id"] == memory
    assert body["memory"]["content"] == "The user prefers 4 spaces"
    assert body["possible_duplicates"] == []
    changed = api.patch(f"/memories/{memory}", {"category": "preference", "confidence": 1})
    assert changed.json()["memory"]["category"] == "preference"
    assert changed.json()["memory"]["confidence"] == 1.0
    with connect() as conn:
        versions = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (memory,)
        ).fetchone()
    assert versions == (3,)


def test_delete_then_restore(api: Api, service: MemoryService, principal: Principal) -> None:
    memory = saved(service, principal, "The user prefers tabs")
    deleted = api.delete(f"/memories/{memory}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"deleted": memory}
    assert api.get("/memories/search", query="tabs").json()["memories"] == []
    again = error_of(api.delete(f"/memories/{memory}"), 400)  # its owner may know it
    assert f"memory {memory} is already deleted" in again["message"]
    restored = api.post(f"/memories/{memory}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["restored_from"] == "deleted"
    assert restored.json()["memory"]["id"] == memory
    again = error_of(api.post(f"/memories/{memory}/restore"), 400)
    assert "is active; there is nothing to restore" in again["message"]
    found = api.get("/memories/search", query="tabs").json()["memories"]
    assert [m["id"] for m in found] == [memory]


# -- scopes ---------------------------------------------------------------------------------


def test_a_read_only_token_reads_but_cannot_change(
    as_: Callable[..., Api],
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
) -> None:
    memory = saved(service, principal, "The user prefers tabs")
    reader = as_(principal, READ)
    assert reader.get("/memories/search", query="tabs").status_code == 200
    before = writes(principal)
    assert reader.post("/verify", {"claim": "The user prefers tabs"}).status_code == 200
    for response in (
        reader.patch(f"/memories/{memory}", {"content": "spaces"}),
        reader.delete(f"/memories/{memory}"),
        reader.post(f"/memories/{memory}/restore"),
        reader.post(f"/memories/{memory}/reinforce", {"evidence": "seen in .editorconfig"}),
        reader.post(f"/memories/{memory}/archive", {"reason": "stale"}),
    ):
        error = error_of(response, 403)
        assert error["code"] == "forbidden"
        assert "memory:write" in error["message"]
    assert writes(principal) == before


def test_a_token_without_read_cannot_search(as_: Callable[..., Api], principal: Principal) -> None:
    error = error_of(as_(principal, ANY_PROJECT).get("/memories/search", query="x"), 403)
    assert "memory:read" in error["message"]


def test_global_memories_need_an_admin_token_to_change(
    as_: Callable[..., Api],
    service: MemoryService,
    principal: Principal,
    global_memories_cleanup: None,
) -> None:
    admin = Principal(principal.actor_id, principal.project_id, frozenset({READ, WRITE, ADMIN}))
    memory = saved(service, admin, "Every repository uses conventional commits", scope="global")
    plain = as_(principal)
    assert [
        m["id"] for m in plain.get("/memories/search", query="conventional").json()["memories"]
    ] == [memory]
    error = error_of(plain.patch(f"/memories/{memory}", {"confidence": 0.5}), 403)
    assert "administrator" in error["message"]
    assert error_of(plain.delete(f"/memories/{memory}"), 403)["code"] == "forbidden"
    assert as_(principal, READ, WRITE, ADMIN).delete(f"/memories/{memory}").status_code == 200


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic dXNlcjpwYXNz"])
def test_every_endpoint_needs_a_live_token(client: TestClient, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    routes = served(client) - {("GET", API + "/openapi.json")}
    assert len(routes) == 23
    for method, path in routes:
        url = re.sub(r"\{\w+\}", str(uuid.uuid4()), path)
        response = client.request(method, url, headers=headers, json={})
        assert error_of(response, 401)["code"] == "unauthorized", (method, path)


# -- isolation ------------------------------------------------------------------------------


def test_another_actors_id_answers_exactly_like_a_missing_one(
    api: Api,
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    foreign = saved(service, other, "Bob deploys the billing service", scope="project")
    service.delete(other, saved(service, other, "Bob's old deploy notes", scope="project"))
    missing = str(uuid.uuid4())
    before = writes(principal, other)
    for use in (
        lambda id_: api.patch(f"/memories/{id_}", {"content": "mine now"}),
        lambda id_: api.patch(f"/memories/{id_}", {"importance": "core"}),
        lambda id_: api.delete(f"/memories/{id_}", reason="not yours"),
        lambda id_: api.post(f"/memories/{id_}/restore"),
        lambda id_: api.post(f"/memories/{id_}/reinforce", {"evidence": "I saw it too"}),
        lambda id_: api.post(f"/memories/{id_}/archive", {"reason": "stale"}),
        lambda id_: api.post(f"/memories/{id_}/archive"),
    ):
        hidden, unknown = use(foreign), use(missing)
        assert hidden.status_code == unknown.status_code == 404
        assert hidden.json()["error"]["message"].replace(foreign, "<id>") == unknown.json()[
            "error"
        ]["message"].replace(missing, "<id>")
    assert writes(principal, other) == before


# -- bad input ------------------------------------------------------------------------------

MINE = "{mine}"
BAD_INPUT = [
    # the tools' table (tests/test_bad_input.py), as the REST API takes it
    ("patch", MINE, {"content": "   "}, "content is empty"),
    ("patch", MINE, {"content": "word " * 1000}, "content is 4999 characters long; the limit"),
    ("patch", MINE, {"content": "tabs\x00"}, "content contains a NUL character"),
    ("patch", MINE, {"content": "red \x1b[31m"}, "content contains the control character U+001B"),
    (
        "patch",
        MINE,
        {"content": "half \ud83d pair"},
        "content contains the control character U+D83D",
    ),
    ("patch", MINE, {"category": "colour"}, "category: Input should be 'preference'"),
    ("patch", MINE, {"owner": "someone"}, "owner: is not a field of this request"),
    ("patch", MINE, {"scope": "global"}, "scope: is not a field of this request"),
    ("patch", MINE, {}, "the body must set at least one of: content, category, confidence"),
    ("patch", MINE, {"confidence": 1.5}, "confidence must be a number from 0 to 1; got 1.5"),
    ("patch", MINE, {"confidence": "high"}, "confidence: Input should be a valid number"),
    ("patch", MINE, {"confidence": True}, "confidence: Input should be a valid number"),
    ("patch", MINE, {"content": 42}, "content: Input should be a valid string"),
    ("patch", MINE, {"content": ["tabs"]}, "content: Input should be a valid string"),
    ("patch", MINE, [1, 2], "the body must be a JSON object"),
    ("patch", MINE, {"content": "password=hunter2xyz"}, "refusing to store"),
    ("patch", "tabs", {"content": "ok"}, "memory_id 'tabs' is not a memory id"),
    ("delete", "0b6e4c1e-5f0a-4d61-9a44-2f4a8f4e7d2", None, "is not a memory id"),
    ("post", "x" * 300 + "/restore", None, "is not a memory id"),
    ("get", "search", {"query": " \n "}, "query is empty"),
    ("get", "search", {"query": "tabs\x00"}, "query contains a NUL character"),
    ("get", "search", {"query": "q" * 3000}, "query is 3000 characters long; the limit is"),
    ("get", "search", {}, "query: Field required"),
    ("get", "search", {"query": "x", "scope": "team"}, "scope: Input should be 'user'"),
    ("get", "search", {"query": "x", "category": "Fact"}, "category: Input should be"),
    ("get", "search", {"query": "x", "limit": "0"}, "limit must be from 1 to 50; got 0"),
    ("get", "search", {"query": "x", "limit": "-5"}, "limit must be from 1 to 50; got -5"),
    ("get", "search", {"query": "x", "limit": "51"}, "limit must be from 1 to 50; got 51"),
    ("get", "search", {"query": "x", "limit": "5.5"}, "limit: Input should be a valid integer"),
    ("get", "search", {"query": "x", "limit": "ten"}, "limit: Input should be a valid integer"),
    ("get", "search", {"query": "x", "user": "bob"}, "user: is not a field of this request"),
    ("get", "search", {"query": "x", "min_relevance": "2"}, "min_relevance must be a number"),
    ("get", "search", {"query": "x", "min_relevance": "high"}, "min_relevance: Input should be"),
    ("get", "", {"status": "archive"}, "status: Input should be 'active'"),
    ("get", "", {"importance": "urgent"}, "importance: Input should be 'low'"),
    ("patch", MINE, {"importance": "urgent"}, "importance: Input should be 'low'"),
    ("patch", MINE, {"importance": 3}, "importance: Input should be 'low'"),
    ("patch", MINE, {"valid_from": "soon"}, "valid_from 'soon' is not an ISO 8601 date"),
    ("patch", MINE, {"valid_until": 20260101}, "valid_until: Input should be a valid string"),
    (
        "patch",
        MINE,
        {"valid_from": "2026-03-01", "valid_until": "2026-02-01"},
        "valid_until (2026-02-01T00:00:00Z) must be after valid_from",
    ),
    (
        "patch",
        MINE,
        {"rationale": "why " * 300},
        "rationale is 1199 characters long; the limit is 1000",
    ),
    ("patch", MINE, {"rationale": "token=hunter2xyz"}, "refusing to store"),
    ("post", MINE + "/reinforce", {}, "evidence: Field required"),
    ("post", MINE + "/reinforce", None, "evidence: Field required"),
    ("post", MINE + "/reinforce", {"evidence": 5}, "evidence: Input should be a valid string"),
    ("post", MINE + "/reinforce", {"evidence": "  "}, "evidence is empty"),
    ("post", MINE + "/reinforce", {"evidence": "e" * 501}, "evidence is 501 characters long"),
    ("post", MINE + "/reinforce", {"evidence": "password=hunter2xyz"}, "refusing to store"),
    ("post", MINE + "/reinforce", {"evidence": "ok", "why": "x"}, "why: is not a field"),
    ("post", MINE + "/archive", {"reason": 5}, "reason: Input should be a valid string"),
    ("post", MINE + "/archive", {"why": "stale"}, "why: is not a field of this request"),
    ("delete", MINE, {"reason": "r" * 501}, "reason is 501 characters long"),
    ("delete", MINE, {"why": "x"}, "why: is not a field of this request"),
    (
        "get",
        "search",
        {"query": "x", "as_of": "last week"},
        "as_of 'last week' is not an ISO 8601 date",
    ),
    (
        "get",
        "search",
        {"query": "x", "include_archived": "maybe"},
        "include_archived: Input should be a valid boolean",
    ),
    ("get", "", {"sort": "random"}, "sort: Input should be 'recent'"),
    ("get", "", {"limit": "201"}, "limit must be from 1 to 200; got 201"),
    ("get", "", {"limit": "0"}, "limit must be from 1 to 200; got 0"),
    ("get", "", {"created_after": "yesterday"}, "created_after must be an ISO 8601 date"),
    ("get", "", {"used_before": "2026-13-01"}, "used_before must be an ISO 8601 date"),
    (
        "get",
        "",
        {"created_after": "2026-02-01", "created_before": "2026-01-01"},
        "created_after must be earlier than created_before",
    ),
    ("get", "", {"project_id": "mine"}, "project_id must be an id"),
    ("get", "", {"text": "  "}, "text must be some words to look for"),
    ("get", "", {"text": "w" * 501}, "text is 501 characters long; the limit is 500"),
    ("get", "", {"context": "front\nend"}, "context is a name on one line"),
    ("get", "", {"cursor": "bm9wZQ"}, "cursor is not one this list gave"),
    ("get", "", {"category": "colour"}, "category: Input should be 'preference'"),
    ("get", "", {"owner": "bob"}, "owner: is not a field of this request"),
]


@pytest.mark.parametrize(
    ("method", "target", "body", "fragment"),
    [pytest.param(*case, id=f"{case[0]}-{case[3][:40]}") for case in BAD_INPUT],
)
def test_bad_input_is_refused_naming_the_field_and_writes_nothing(
    api: Api,
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
    method: str,
    target: str,
    body: Any,
    fragment: str,
) -> None:
    mine = saved(service, principal, "The user prefers tabs over spaces")
    before = writes(principal)
    path = "/memories" + (f"/{target}" if target else "").replace(MINE, mine)
    if method == "get":
        response = api.get(path, **body)
    elif method == "patch":
        response = api.patch(path, body)
    elif method == "post":
        response = api.post(path, body)
    else:
        response = api.delete(path, **(body or {}))
    error = error_of(response, 400)
    assert error["code"] == "invalid_input"
    assert fragment in error["message"]
    assert writes(principal) == before


def test_a_query_parameter_given_twice_is_refused(api: Api) -> None:
    response = api.client.get(API + "/memories/search?query=a&query=b", headers=api.headers)
    assert "query: give each query parameter once" in error_of(response, 400)["message"]


# -- the OpenAPI document -------------------------------------------------------------------


def test_the_openapi_document_describes_every_route_without_a_token(client: TestClient) -> None:
    response = client.get(API + "/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    described = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    assert described == served(client)
    assert ("PATCH", API + "/memories/{memory_id}") in described
    schemas = document["components"]["schemas"]
    patch = document["paths"][API + "/memories/{memory_id}"]["patch"]
    body = patch["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert set(schemas[body.rsplit("/", 1)[1]]["properties"]) == {
        "content",
        "category",
        "confidence",
        "importance",
        "valid_from",
        "valid_until",
        "rationale",
    }
    # each field optional, yet the body is required (an empty one is refused)
    assert patch["requestBody"]["required"] is True
    archive = document["paths"][API + "/memories/{memory_id}/archive"]["post"]
    assert archive["requestBody"]["required"] is False  # the reason may be left out
    answer = patch["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert schemas[answer.rsplit("/", 1)[1]]["title"] == "UpdateResult"
    assert set(patch["responses"]) >= {"200", "400", "401", "403", "404"}
    search = document["paths"][API + "/memories/search"]["get"]
    assert {p["name"] for p in search["parameters"]} == {
        "query",
        "category",
        "scope",
        "limit",
        "include_archived",
        "as_of",
        "min_relevance",
    }
    delete = document["paths"][API + "/memories/{memory_id}"]["delete"]
    assert {p["name"] for p in delete["parameters"]} == {"memory_id", "reason"}
    verify = document["paths"][API + "/verify"]["post"]
    verify_body = verify["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert schemas[verify_body.rsplit("/", 1)[1]]["required"] == ["claim"]
    verify_answer = verify["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert "verdict" in schemas[verify_answer.rsplit("/", 1)[1]]["properties"]
    assert [p["name"] for p in search["parameters"] if p["required"]] == ["query"]
    for ref in _refs(document):  # every reference resolves
        assert ref.rsplit("/", 1)[1] in schemas, ref
    for schema in schemas.values():  # OpenAPI 3.1's schemas are JSON Schema 2020-12
        Draft202012Validator.check_schema(schema)
    operations = [op for item in document["paths"].values() for op in item.values()]
    assert len({op["operationId"] for op in operations}) == len(operations)
    for operation in operations:
        public = operation is document["paths"][API + "/openapi.json"]["get"]
        assert public or re.match(r"Needs the scope memory:(read|write)", operation["description"])


def test_building_the_app_again_derives_no_json_schema(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenAPI document's schemas and the tools' output schemas are those of fixed types:
    derived once per process, not at every build of the app (about 0.3 s each: the tests
    build it hundreds of times); each build still gets a document and schemas of its own.
    (FastMCP derives each tool's input schema from its function when it is registered.)"""
    first = api_client(service, api_services(service))  # derives what is not derived yet
    derived: list[object] = []
    original = TypeAdapter.json_schema

    def counted(self: TypeAdapter[Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        if not inspect.isfunction(self._type):
            derived.append(self._type)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "json_schema", counted)
    second = api_client(service, api_services(service))
    assert derived == []
    with first, second:
        documents = [c.get(API + "/openapi.json").json() for c in (first, second)]
    assert documents[0] == documents[1]
    # each build's schema is its own: changing one leaves the next as derived
    changed = answer_schema(SaveResult)
    name = next(key for key in changed["properties"] if key != "text")
    pristine = json.dumps(changed["properties"][name], sort_keys=True)
    changed["properties"][name]["changed"] = True
    assert json.dumps(answer_schema(SaveResult)["properties"][name], sort_keys=True) == pristine


def served(client: TestClient) -> set[tuple[str, str]]:
    """(method, path) of the app's API routes (its catch-all for other paths aside)."""
    return {
        (method, route.path)
        for route in client.app.routes  # type: ignore[attr-defined]
        if isinstance(route, Route) and route.path.startswith(API) and route.include_in_schema
        for method in (route.methods or ()) - {"HEAD"}
    }


def test_other_paths_and_methods_get_json_errors(client: TestClient, api: Api) -> None:
    missing = error_of(client.get(API + "/memorie"), 404)
    assert missing["code"] == "not_found"
    assert "/api/v1/openapi.json lists every endpoint" in missing["message"]
    wrong = client.put(API + f"/memories/{uuid.uuid4()}", headers=api.headers)
    error = error_of(wrong, 405)
    assert error["code"] == "method_not_allowed"
    assert wrong.headers["allow"] == "DELETE, GET, HEAD, PATCH"
    assert error_of(client.post(API + "/memories/search"), 405)["message"].endswith("not POST")


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref":
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


# -- the list and one memory ----------------------------------------------------------------


def test_the_list_filters_by_status_category_and_text(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    tabs = saved(service, principal, "The user prefers tabs", category="preference")
    port = saved(service, principal, "The staging database listens on port 5433")
    gone = saved(service, principal, "The old CI ran on Jenkins")
    service.delete(principal, gone)
    other = Principal(uuid.uuid4(), principal.project_id)
    saved(service, other, "Bob prefers spaces", scope="project")

    def ids(**params: Any) -> list[str]:
        response = api.get("/memories", **params)
        assert response.status_code == 200, response.text
        assert response.json()["next_cursor"] is None
        return [m["id"] for m in response.json()["memories"]]

    assert ids() == [port, tabs]
    assert ids(category="preference") == [tabs]
    assert ids(text="staging database") == [port]
    assert ids(status="deleted") == [gone]
    assert ids(status="all", sort="oldest") == [tabs, port, gone]
    listed = api.get("/memories", status="all").json()["memories"]
    assert {m["id"]: m["status"] for m in listed} == {
        tabs: "active",
        port: "active",
        gone: "deleted",
    }
    # a total only when asked for: every page's memories that the filters match, not another
    # actor's
    assert "total" not in api.get("/memories").json()
    assert api.get("/memories", count="true", limit="1").json()["total"] == 2
    assert api.get("/memories", count="true", status="all").json()["total"] == 3
    assert api.get("/memories", count="true", category="preference").json()["total"] == 1
    refused = api.get("/memories", count="maybe")
    assert refused.status_code == 400
    assert "count" in refused.text


def test_a_memory_page_has_its_versions_and_chain(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    memory = saved(service, principal, "The user prefers tabs")
    api.patch(f"/memories/{memory}", {"content": "The user prefers tabs, 4 wide"})
    response = api.get(f"/memories/{memory}")
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["id"] == memory
    assert page["status"] == "active"
    assert [v["content"] for v in page["versions"]] == [
        "The user prefers tabs",
        "The user prefers tabs, 4 wide",
    ]
    assert page["supersedes"] == page["superseded_by_chain"] == []
    for key in ("relationships", "recalls", "derived_from", "use_count", "contexts"):
        assert key in page


def test_another_actors_memory_page_is_not_found_like_a_missing_one(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    foreign = saved(service, other, "Bob deploys the billing service", scope="project")
    missing = str(uuid.uuid4())
    hidden, unknown = api.get(f"/memories/{foreign}"), api.get(f"/memories/{missing}")
    assert error_of(hidden, 404)["message"].replace(foreign, "<id>") == error_of(unknown, 404)[
        "message"
    ].replace(missing, "<id>")
    assert error_of(api.get("/memories/nope"), 400)["message"].startswith("memory_id 'nope'")


BULK_INSERT = """
INSERT INTO kb.graph_objects (canonical_id, version, is_head, project_id, actor_id, scope, type,
                              properties, labels, created_at, updated_at)
SELECT gen_random_uuid(), 1, true, %(project)s, %(actor)s, 'user', 'Memory',
       jsonb_build_object('content', 'memory number ' || i, 'category', 'fact',
                          'source', 'inferred', 'scope', 'user', 'confidence', 0.7),
       ARRAY['memory', 'fact', 'user'],
       now() - i * interval '1 second', now() - i * interval '1 second'
FROM generate_series(1, %(count)s) AS i
RETURNING canonical_id
"""


def test_pages_walk_10000_memories_once_each_in_order(
    api: Api, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    with connect() as conn:
        inserted = [
            str(row[0])
            for row in conn.execute(
                BULK_INSERT,
                {"project": principal.project_id, "actor": principal.actor_id, "count": 10_000},
            ).fetchall()
        ]
        conn.commit()
    try:
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            params: dict[str, Any] = {"limit": "200"}
            if cursor is not None:
                params["cursor"] = cursor
            response = api.get("/memories", **params)
            assert response.status_code == 200, response.text
            page = response.json()
            assert len(page["memories"]) == 200
            seen.extend(m["id"] for m in page["memories"])
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert pages == 50
        assert seen == inserted  # newest first: memory number 1, 2, ...
        oldest = api.get("/memories", sort="oldest", limit="3").json()
        assert [m["id"] for m in oldest["memories"]] == inserted[::-1][:3]
        error = error_of(api.get("/memories", cursor="not-a-cursor"), 400)
        assert "cursor" in error["message"]
    finally:
        # the session's database is shared: 10,000 memories without a vector would slow the
        # tests of re-embedding, and crowd the SQL examples' "who has the most memories"
        with connect() as conn:
            conn.execute(
                "DELETE FROM kb.graph_objects WHERE canonical_id = ANY(%s)",
                ([uuid.UUID(i) for i in inserted],),
            )
            conn.commit()


# -- docs/api.md ----------------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"
EXAMPLE_SERVER = "http://127.0.0.1:8765"


def documented_sections() -> list[tuple[str, str, str]]:
    """(method, path, text) of each endpoint's section of docs/api.md, in order."""
    sections = []
    for part in DOC.read_text().split("\n### ")[1:]:
        heading, _, text = part.partition("\n")
        method, path = heading.split()
        sections.append((method, path, text.split("\n## ")[0]))
    return sections


def curl_commands(text: str) -> list[list[str]]:
    blocks = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    joined = [block.replace("\\\n", " ") for block in blocks]
    return [
        shlex.split(line)
        for block in joined
        for line in block.splitlines()
        if line.startswith("curl")
    ]


def _shape(path: str) -> str:
    return re.sub(r"\{\w+\}", "{}", path)


def test_the_doc_has_a_section_for_every_endpoint(client: TestClient) -> None:
    documented = {(method, _shape(path)) for method, path, _ in documented_sections()}
    routes = {(method, _shape(path)) for method, path in served(client)}
    assert documented | {("GET", API + "/openapi.json")} == routes


def test_every_curl_example_of_the_doc_runs(
    close_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    client = close_client
    memory = close_service.save(
        principal,
        "The user prefers pnpm over npm as package manager",
        "preference",
        context="frontend",
    )["memory"]["id"]
    _, newer = a_pair(close_service, principal)
    api = Api(client, token_for(principal))
    (pair,) = api.get("/duplicates").json()["pairs"]
    (context,) = api.get("/contexts").json()["contexts"]
    variables = {
        "$API": EXAMPLE_SERVER + API,
        "$TOKEN": token_for(principal),
        "$ID": memory,
        "$PAIR": pair["id"],
        "$KEEP": newer,
        "$CONTEXT": context["id"],
    }
    ran = 0
    head = DOC.read_text().split("\n### ")[0]
    for method, path, text in [("GET", API + "/openapi.json", head), *documented_sections()]:
        for argv in curl_commands(text):
            for name, value in variables.items():
                argv = [arg.replace(name, value) for arg in argv]
            response = run_curl(client, argv)
            assert response.status_code < 300, (argv, response.text)
            assert response.request.method == method
            assert re.fullmatch(
                re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(path)), response.request.url.path
            ), (path, response.request.url.path)
            ran += 1
    assert ran >= len(documented_sections()) - 2  # two hooks' endpoints are in another doc


def test_the_doc_examples_run_with_curl_against_serve(
    database_url: str,
    embedding_server: EmbeddingServer,
    service: MemoryService,
    principal: Principal,
) -> None:
    """The examples as a person runs them: the real curl in a shell, against the real
    `serve --transport http` process, each answering JSON that is not an error."""
    memory = service.save(principal, "The user prefers pnpm", "preference", context="web")
    old = saved(service, principal, FRIDAYS)
    new = service.save(principal, THURSDAYS, "fact")  # a possible duplicate of the first
    assert [d["id"] for d in new["possible_duplicates"]] == [old]
    (pair,) = DuplicateService(service.pool, service).open(principal)["pairs"]
    (context,) = BrowseService(service.pool).contexts(principal)
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    commands = [
        command.replace("\\\n", " ")
        for text in (DOC.read_text().split("\n### ")[0], *(t for _, _, t in documented_sections()))
        for block in re.findall(r"```sh\n(.*?)\n```", text, re.S)
        for command in re.split(r"\n(?=curl )", block)
        if command.startswith("curl ")
    ]
    # the OpenAPI document, 21 endpoints (the Claude Code import; not the hooks' other two)
    # and search with min_relevance
    assert len(commands) == 23
    with running_http_server(database_url, embedding_server) as server:
        env = os.environ | {
            "API": server.base + API,
            "TOKEN": token,
            "ID": memory["memory"]["id"],
            "PAIR": pair["id"],
            "KEEP": new["memory"]["id"],
            "CONTEXT": context["id"],
        }
        for command in commands:
            done = subprocess.run(
                ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 0, (command, done.stderr)
            answer = json.loads(done.stdout)
            assert not (isinstance(answer, dict) and "error" in answer), (command, answer)


def run_curl(client: TestClient, argv: list[str]) -> Any:
    """A curl command of the doc, sent to the app: the options the doc uses, and no other."""
    assert argv[0] == "curl", argv
    method, headers, data, url = None, {}, None, None
    words = iter(argv[1:])
    for word in words:
        if word == "-s":
            continue
        if word == "-X":
            method = next(words)
        elif word == "-H":
            name, value = next(words).split(": ", 1)
            headers[name] = value
        elif word == "-d":
            data = next(words).encode()
        elif word.startswith(EXAMPLE_SERVER):
            url = word
        else:
            raise AssertionError(f"the test does not know curl's {word}")
    assert url is not None
    return client.request(
        method or ("POST" if data is not None else "GET"), url, headers=headers, content=data
    )


# -- bulk changes ---------------------------------------------------------------------------


def test_bulk_delete_and_restore_change_each_id_on_its_own(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    one = saved(service, principal, "The user prefers tabs")
    two = saved(service, principal, "The staging database listens on port 5433")
    missing = str(uuid.uuid4())
    deleted = api.post("/memories/bulk-delete", {"ids": [one, missing, two]})
    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert body["changed"] == 2
    assert [(r["id"], r["ok"]) for r in body["results"]] == [
        (one, True),
        (missing, False),
        (two, True),
    ]
    assert body["results"][1]["error"]["code"] == "not_found"
    assert api.get("/memories").json()["memories"] == []
    restored = api.post("/memories/bulk-restore", {"ids": [one, two]}).json()
    assert restored["changed"] == 2
    assert {m["id"] for m in api.get("/memories").json()["memories"]} == {one, two}


def test_bulk_changes_mixing_two_actors_ids_change_nothing_of_the_other(
    api: Api,
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    theirs = saved(service, other, "Bob deploys the billing service", scope="project")
    their_deleted = saved(service, other, "Bob's old runbook", scope="project")
    service.delete(other, their_deleted)
    mine = saved(service, principal, "The user prefers tabs")
    missing = str(uuid.uuid4())
    before = writes(other)
    deleted = api.post("/memories/bulk-delete", {"ids": [theirs, mine, missing]}).json()
    restored = api.post("/memories/bulk-restore", {"ids": [their_deleted, missing]}).json()
    assert writes(other) == before
    assert service.list_memories(other)["memories"][0]["id"] == theirs
    assert deleted["changed"] == 1
    for result in (deleted, restored):
        by_id = {r["id"]: r for r in result["results"]}
        hidden = by_id[theirs if result is deleted else their_deleted]
        assert hidden["ok"] is False
        assert hidden["error"]["message"].replace(hidden["id"], "<id>") == by_id[missing]["error"][
            "message"
        ].replace(missing, "<id>")
        assert hidden["error"]["code"] == by_id[missing]["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"ids": []}, "ids is empty"),
        ({"ids": "one"}, "ids: Input should be a valid list"),
        ({"ids": [1]}, "ids.0: Input should be a valid string"),
        ({"ids": [str(uuid.uuid4()) for _ in range(201)]}, "ids holds 201 ids; the limit is 200"),
        ({}, "ids: Field required"),
    ],
)
def test_bulk_bad_input_is_refused(
    api: Api, principal: Principal, writes: Callable[..., tuple[int, ...]], body: Any, fragment: str
) -> None:
    before = writes(principal)
    for path in ("/memories/bulk-delete", "/memories/bulk-restore"):
        assert fragment in error_of(api.post(path, body), 400)["message"]
    assert writes(principal) == before


def test_bulk_changes_need_write(as_: Callable[..., Api], principal: Principal) -> None:
    reader = as_(principal, READ)
    error = error_of(reader.post("/memories/bulk-delete", {"ids": [str(uuid.uuid4())]}), 403)
    assert "memory:write" in error["message"]


# -- possible duplicates --------------------------------------------------------------------

FRIDAYS = "Deploys to production happen on Fridays"
THURSDAYS = "Deploys to production happen on Thursdays"


@pytest.fixture
def close_service(make_service: Callable[..., MemoryService]) -> MemoryService:
    """The band where a close memory that does not say it changed is a possible duplicate."""
    return make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)


@pytest.fixture
def close_client(close_service: MemoryService) -> Iterator[TestClient]:
    with api_client(close_service, api_services(close_service)) as connected:
        yield connected


def a_pair(service: MemoryService, principal: Principal) -> tuple[str, str]:
    """(older, newer): two memories the duplicate check found close."""
    old = saved(service, principal, FRIDAYS)
    new = service.save(principal, THURSDAYS, "fact")
    assert [d["id"] for d in new["possible_duplicates"]] == [old]
    return old, new["memory"]["id"]


def test_duplicates_are_listed_and_decided(
    close_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    api = Api(close_client, token_for(principal))
    old, new = a_pair(close_service, principal)
    listed = api.get("/duplicates")
    assert listed.status_code == 200, listed.text
    (pair,) = listed.json()["pairs"]
    assert (pair["memory"]["id"], pair["duplicate_of"]["id"]) == (new, old)
    assert listed.json()["next_cursor"] is None
    reader = Api(close_client, token_for(principal, READ))
    assert error_of(
        reader.post(f"/duplicates/{pair['id']}/decision", {"decision": "keep_both"}), 403
    )
    decided = api.post(f"/duplicates/{pair['id']}/decision", {"decision": "supersede", "keep": new})
    assert decided.status_code == 200, decided.text
    assert decided.json()["superseded_ids"] == [old]
    assert api.get(f"/memories/{old}").json()["status"] == "superseded"
    assert api.get("/duplicates").json()["pairs"] == []
    again = error_of(api.post(f"/duplicates/{pair['id']}/decision", {"decision": "keep_both"}), 400)
    assert "decided already" in again["message"]


def test_another_actors_pair_is_not_found_like_a_missing_one(
    close_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
    writes: Callable[..., tuple[int, ...]],
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    a_pair(close_service, other)
    (theirs,) = Api(close_client, token_for(other)).get("/duplicates").json()["pairs"]
    api = Api(close_client, token_for(principal))
    assert api.get("/duplicates").json()["pairs"] == []
    missing = str(uuid.uuid4())
    before = writes(other)
    hidden = error_of(
        api.post(f"/duplicates/{theirs['id']}/decision", {"decision": "keep_both"}), 404
    )
    unknown = error_of(api.post(f"/duplicates/{missing}/decision", {"decision": "keep_both"}), 404)
    assert hidden["message"].replace(theirs["id"], "<id>") == unknown["message"].replace(
        missing, "<id>"
    )
    assert writes(other) == before


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"decision": "delete_both"}, "decision: Input should be 'keep_both'"),
        ({"decision": "supersede"}, "supersede needs keep"),
        ({"decision": "keep_both", "keep": "{old}"}, "do not name one in keep"),
        ({"decision": "supersede", "content": "x", "keep": "{old}"}, "only merge takes it"),
        ({"decision": "merge", "keep": "nope"}, "keep must be an id"),
        ({"decision": "merge", "keep": "{other}"}, "keep must be one of the pair"),
        ({"decision": "merge", "keep": "{old}", "content": " "}, "content is empty"),
        ({"decision": "keep_both", "why": "x"}, "why: is not a field of this request"),
    ],
)
def test_bad_decisions_are_refused_and_change_nothing(
    close_client: TestClient,
    close_service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
    writes: Callable[..., tuple[int, ...]],
    body: dict[str, Any],
    fragment: str,
) -> None:
    old, _ = a_pair(close_service, principal)
    other = saved(close_service, principal, "The office cat is called Miso")
    api = Api(close_client, token_for(principal))
    (pair,) = api.get("/duplicates").json()["pairs"]
    before = writes(principal)
    filled = {k: v.format(old=old, other=other) for k, v in body.items()}
    error = error_of(api.post(f"/duplicates/{pair['id']}/decision", filled), 400)
    assert fragment in error["message"]
    assert error_of(api.post("/duplicates/nope/decision", {"decision": "keep_both"}), 400)
    assert writes(principal) == before


# -- contexts, stats, logs ------------------------------------------------------------------


def test_contexts_are_listed_renamed_and_prioritised(
    api: Api, as_: Callable[..., Api], service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The frontend uses pnpm", "convention", context="frontend")
    listed = api.get("/contexts")
    assert listed.status_code == 200, listed.text
    (context,) = listed.json()["contexts"]
    assert (context["name"], context["memory_count"]) == ("frontend", 1)
    one = f"/contexts/{context['id']}"
    renamed = api.patch(one, {"name": "web frontend"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "web frontend"
    assert api.patch(one, {"priority": 80}).json()["priority"] == 80
    assert [c["name"] for c in api.get("/contexts").json()["contexts"]] == ["web frontend"]
    assert (
        "memory:write" in error_of(as_(principal, READ).patch(one, {"priority": 1}), 403)["message"]
    )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"name": "a", "priority": 1}, "send one of name or priority"),
        ({}, "send one of name or priority"),
        ({"priority": 101}, "priority must be a whole number from 0 to 100; got 101"),
        ({"priority": "9"}, "priority: Input should be a valid integer"),
        ({"name": "  "}, "must be a non-empty name"),
        ({"name": "two\nlines"}, "on one line"),
        ({"label": "x"}, "label: is not a field of this request"),
    ],
)
def test_bad_context_changes_are_refused(
    api: Api,
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
    body: dict[str, Any],
    fragment: str,
) -> None:
    service.save(principal, "The frontend uses pnpm", "convention", context="frontend")
    (context,) = api.get("/contexts").json()["contexts"]
    before = writes(principal)
    assert fragment in error_of(api.patch(f"/contexts/{context['id']}", body), 400)["message"]
    assert writes(principal) == before


def test_another_actors_context_is_not_found_like_a_missing_one(
    api: Api,
    as_: Callable[..., Api],
    service: MemoryService,
    principal: Principal,
    writes: Callable[..., tuple[int, ...]],
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    service.save(other, "Bob's frontend uses yarn", "convention", context="bobs")
    (theirs,) = as_(other).get("/contexts").json()["contexts"]
    assert api.get("/contexts").json()["contexts"] == []
    missing = str(uuid.uuid4())
    before = writes(other)
    hidden = error_of(api.patch(f"/contexts/{theirs['id']}", {"name": "mine"}), 404)
    unknown = error_of(api.patch(f"/contexts/{missing}", {"name": "mine"}), 404)
    assert hidden["message"].replace(theirs["id"], "<id>") == unknown["message"].replace(
        missing, "<id>"
    )
    assert writes(other) == before
    assert "context_id" in error_of(api.patch("/contexts/nope", {"name": "x"}), 400)["message"]


def test_stats_count_the_tokens_memories_only(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    saved(service, principal, "The user prefers tabs", category="preference")
    service.delete(principal, saved(service, principal, "The old CI ran on Jenkins"))
    saved(service, Principal(uuid.uuid4(), principal.project_id), "Bob's", scope="project")
    response = api.get("/stats")
    assert response.status_code == 200, response.text
    stats = response.json()
    assert stats["by_status"] == {"active": 1, "archived": 0, "superseded": 0, "deleted": 1}
    assert stats["by_importance"] == {"low": 0, "normal": 1, "high": 0, "core": 0}
    assert stats["by_category"]["preference"] == 1
    assert stats["by_project"] == {str(principal.project_id): 1}
    assert stats["growth"][-1]["created"] == 2


def test_the_injection_log_shows_what_a_session_got(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    memory = saved(service, principal, "The user prefers pnpm over npm", category="preference")
    started = api.post("/context", {"session_id": "s-log", "event": "session_start"})
    assert started.status_code == 200, started.text
    log = api.get("/injections", session_id="s-log")
    assert log.status_code == 200, log.text
    (session,) = log.json()["sessions"]
    assert session["session_id"] == "s-log"
    (injection,) = session["injections"]
    assert [m["id"] for m in injection["memories"]] == [memory]
    assert injection["estimated_tokens"] == started.json()["estimated_tokens"]
    assert api.get("/injections", session_id="other").json()["sessions"] == []
    assert "limit" in error_of(api.get("/injections", limit="0"), 400)["message"]


def test_the_injection_log_returns_prompts_outcomes_and_the_text_as_injected(
    api: Api,
    as_: Callable[..., Api],
    service: MemoryService,
    principal: Principal,
) -> None:
    memory = saved(service, principal, "The staging database listens on port 5432")
    started = api.post("/context", {"session_id": "s-new", "event": "session_start"})
    assert started.json()["memories"][0]["id"] == memory
    prompts = [
        "<script>alert(1)</script> tell me about the weather in Lisbon",
        "deploy with the token ghp_abcdefghijklmnopqrstuvwxyzABCDEF123456 please",
    ]
    for prompt in prompts:
        answered = api.post(
            "/context", {"session_id": "s-new", "event": "prompt", "prompt": prompt}
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["context"] == ""
    service.update(principal, memory, {"content": "The staging database listens on port 6543"})
    other = Principal(uuid.uuid4(), principal.project_id)
    as_(other).post("/context", {"session_id": "s-new", "event": "prompt", "prompt": "their words"})
    (session,) = api.get("/injections", session_id="s-new").json()["sessions"]
    withheld, nothing, start = session["injections"]
    assert (start["outcome"], start["prompt_state"], start["prompt"]) == ("injected", "none", None)
    (shown,) = start["memories"]
    assert "port 5432" in shown["injected_text"]
    assert shown["content"] == "The staging database listens on port 6543"
    assert shown["changed_since"] is True
    assert shown["estimated_tokens"] > 0
    assert nothing["outcome"] == "nothing_relevant"
    assert (nothing["prompt_state"], nothing["prompt"]) == ("recorded", prompts[0])
    assert nothing["prompt_length"] == len(prompts[0])
    assert nothing["memories"] == []
    assert withheld["prompt_state"] == "withheld"
    assert withheld["prompt"] is None
    assert withheld["prompt_sha256"] == hashlib.sha256(prompts[1].encode()).hexdigest()
    assert "ghp_" not in str(session)
    assert "their words" not in str(session)  # the other actor's answer of the same session id
    assert session["injection_count"] == 3


def test_llm_usage_sums_the_actors_calls_per_day_and_model(
    api: Api, principal: Principal, connect: Callable[[], psycopg.Connection[Any]]
) -> None:
    with connect() as conn:
        for actor, tokens in ((principal.actor_id, 1000), (uuid.uuid4(), 5000)):
            conn.execute(
                "INSERT INTO kb.llm_calls (actor_id, purpose, model, input_tokens, "
                "output_tokens, outcome) VALUES (%s, 'gate', 'claude-haiku-4-5', %s, 10, 'ok')",
                (actor, tokens),
            )
        conn.commit()
    usage = api.get("/llm-usage", days="7")
    assert usage.status_code == 200, usage.text
    (day,) = usage.json()["usage"]
    assert (day["model"], day["calls"], day["input_tokens"]) == ("claude-haiku-4-5", 1, 1000)
    assert usage.json()["days"] == 7
    assert (
        "days must be a whole number" in error_of(api.get("/llm-usage", days="0"), 400)["message"]
    )


def test_the_capture_queue_starts_empty(api: Api) -> None:
    queue = api.get("/capture/queue")
    assert queue.status_code == 200, queue.text
    assert queue.json()["dead_letters"] == []
    assert set(queue.json()["counts"]) == {"pending", "running", "done", "dead"}
    assert all(n == 0 for n in queue.json()["counts"].values())


@pytest.mark.parametrize(
    "path", ["/contexts", "/stats", "/injections", "/llm-usage", "/capture/queue", "/duplicates"]
)
def test_reading_needs_read(as_: Callable[..., Api], principal: Principal, path: str) -> None:
    assert "memory:read" in error_of(as_(principal, ANY_PROJECT).get(path), 403)["message"]


def test_the_list_filters_by_project_context_and_use(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    elsewhere = Principal(principal.actor_id, uuid.uuid4())
    there = saved(service, elsewhere, "The side project is written in Go")  # user scope: seen
    here = service.save(principal, "The frontend uses pnpm", "convention", context="web")
    used = here["memory"]["id"]
    service.recall(principal, "frontend pnpm")  # an agent's use

    def ids(**params: Any) -> list[str]:
        response = api.get("/memories", **params)
        assert response.status_code == 200, response.text
        return [m["id"] for m in response.json()["memories"]]

    assert set(ids()) == {there, used}
    assert ids(project_id=str(elsewhere.project_id)) == [there]
    assert ids(context="web") == [used]
    assert ids(used_after="2000-01-01") == [used]
    assert ids(sort="most_used")[0] == used


def test_a_bulk_delete_of_a_global_memory_needs_admin(
    as_: Callable[..., Api],
    service: MemoryService,
    principal: Principal,
    global_memories_cleanup: None,
) -> None:
    admin = Principal(principal.actor_id, principal.project_id, frozenset({READ, WRITE, ADMIN}))
    memory = saved(service, admin, "Every repository uses conventional commits", scope="global")
    mine = saved(service, principal, "The user prefers tabs")
    result = as_(principal).post("/memories/bulk-delete", {"ids": [memory, mine]}).json()
    assert [(r["ok"], r.get("error", {}).get("code")) for r in result["results"]] == [
        (False, "forbidden"),
        (True, None),
    ]
    assert "administrator" in result["results"][0]["error"]["message"]
    admin_result = as_(principal, READ, WRITE, ADMIN).post(
        "/memories/bulk-delete", {"ids": [memory]}
    )
    assert admin_result.json()["changed"] == 1


# -- the lifecycle: evidence, archive, validity, verify -------------------------------------


def test_reinforce_archive_restore_and_delete_keep_their_evidence_and_reasons(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    memory = saved(service, principal, "The user prefers pnpm", category="preference")
    reinforced = api.post(
        f"/memories/{memory}/reinforce",
        {"evidence": "pnpm-lock.yaml in CI", "session_id": "ci-review-7"},
    )
    assert reinforced.status_code == 200, reinforced.text
    assert reinforced.json()["independent"] is True
    page = api.get(f"/memories/{memory}").json()
    newest = page["evidence"][0]
    assert newest["session_id"] == "ci-review-7"
    assert (newest["evidence"], newest["origin"], newest["independent"]) == (
        "pnpm-lock.yaml in CI",
        "reinforce",
        True,
    )
    assert page["evidence_count"] == len(page["evidence"]) >= 1
    assert page["last_evidence"]["evidence"] == "pnpm-lock.yaml in CI"
    assert page["confidence"] >= newest["confidence_before"]

    archived = api.post(f"/memories/{memory}/archive", {"reason": "the team moved to Bun"})
    assert archived.status_code == 200, archived.text
    page = api.get(f"/memories/{memory}").json()
    assert (page["status"], page["archive_reason"]) == ("archived", "the team moved to Bun")
    assert page["archived_at"] is not None
    assert [m["id"] for m in api.get("/memories", status="archived").json()["memories"]] == [memory]
    assert api.get("/memories").json()["memories"] == []
    assert api.get("/memories/search", query="pnpm").json()["memories"] == []
    found = api.get("/memories/search", query="pnpm", include_archived="true").json()
    assert [m["id"] for m in found["memories"]] == [memory]
    assert found["memories"][0]["archived_at"] == page["archived_at"]

    restored = api.post(f"/memories/{memory}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["restored_from"] == "archived"
    assert api.get(f"/memories/{memory}").json()["status"] == "active"

    shelved = saved(service, principal, "The office plant is a ficus")
    assert api.post(f"/memories/{shelved}/archive").status_code == 200  # no body, no reason
    assert api.get(f"/memories/{shelved}").json()["archive_reason"] is None

    deleted = api.delete(f"/memories/{memory}", reason="a duplicate of the CI note")
    assert deleted.json() == {"deleted": memory}
    page = api.get(f"/memories/{memory}").json()
    assert page["delete_reason"] == "a duplicate of the CI note"
    assert page["versions"][-1]["change"] == "deleted (a duplicate of the CI note)"


def test_patch_sets_and_removes_importance_validity_and_rationale(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    memory = saved(service, principal, "Payments run on the v1 API")
    changed = api.patch(
        f"/memories/{memory}",
        {
            "importance": "core",
            "valid_from": "2026-01-01",
            "valid_until": "2030-03-01T00:00:00Z",
            "rationale": "the <b>v2</b> migration is planned for March 2030",
        },
    )
    assert changed.status_code == 200, changed.text
    record = changed.json()["memory"]
    assert record["importance"] == "core"
    assert record["valid_from"].startswith("2026-01-01T00:00:00")
    assert record["valid_until"].startswith("2030-03-01T00:00:00")
    assert record["rationale"] == "the <b>v2</b> migration is planned for March 2030"
    listed = api.get("/memories", importance="core").json()["memories"]
    assert [(m["id"], m["expired"]) for m in listed] == [(memory, False)]
    removed = api.patch(
        f"/memories/{memory}", {"importance": None, "valid_until": None, "rationale": None}
    ).json()["memory"]
    assert (removed["importance"], removed["valid_until"], removed["rationale"]) == (
        "normal",
        None,
        None,
    )
    assert removed["valid_from"].startswith("2026-01-01")


def test_search_leaves_out_expired_memories_and_answers_as_of_a_time(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    service.save(principal, "The release freeze is on", "fact", valid_until="2020-02-01")
    old = saved(service, principal, "The CI runs on Jenkins")
    between = api.get("/memories/search", query="CI runs").json()["memories"]
    assert [m["id"] for m in between] == [old]
    moment = datetime.now(UTC).isoformat()
    new = saved(service, principal, "The CI runs on GitHub Actions")
    service.supersede(principal, new, old)
    assert api.get("/memories/search", query="release freeze").json()["memories"] == []
    expired = api.get("/memories", text="freeze").json()["memories"]
    assert [m["expired"] for m in expired] == [True]
    now = [m["id"] for m in api.get("/memories/search", query="CI runs").json()["memories"]]
    assert now == [new]
    then = api.get("/memories/search", query="CI runs", as_of=moment).json()["memories"]
    assert [m["id"] for m in then] == [old]


def test_verify_answers_a_verdict_with_its_matches_and_counts_no_use(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    memory = saved(service, principal, "The staging database listens on port 5433")
    same = api.post("/verify", {"claim": "The staging database listens on port 5433"})
    assert same.status_code == 200, same.text
    body = same.json()
    assert body["verdict"] == "confirmed"
    assert body["why"]
    assert body["matches"][0]["id"] == memory
    assert body["matches"][0]["relation"] == "confirms"
    assert body["judge"] == "rules"
    nothing = api.post("/verify", {"claim": "Bananas are yellow when ripe", "category": "fact"})
    assert nothing.json()["verdict"] in ("new", "related")
    assert api.get(f"/memories/{memory}").json()["use_count"] == 0  # verifying is not a use


def test_a_memory_superseded_by_the_learned_reading_says_so(
    semantic: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    # saved with the local model's dedup policy: a chat speaker's stated change the rules keep
    # beside the old turn supersedes it by the learned reading; the API says why
    old = saved(semantic, principal, "Oskar: my shift starts at 7")
    new = saved(semantic, principal, "Oskar: my shift starts at 8 now")
    with api_client(semantic, api_services(semantic)) as client:
        api = Api(client, token_for(principal, "memory:read"))
        shown = api.get(f"/memories/{old}")
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert (body["status"], body["superseded_by"]) == ("superseded", new)
    assert body["superseded_because"].startswith(
        "the save rule: the same fact in other words (a model fitted on labelled pairs read "
        "them as one)"
    )


def test_verify_with_the_local_models_policy_confirms_by_the_learned_reading(
    semantic: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    # the local model and its calibrated policy, as serve builds them: a restatement the
    # rules find only related comes back confirmed, and why says it was the learned reading
    services = replace(
        api_services(semantic),
        verify=VerifyService(semantic, None, VerifyConfig(VERIFY_POLICIES[LOCAL_MODEL_NAME])),
    )
    content = "Lena answers support tickets at the end of each day, after the last deploy."
    memory = saved(semantic, principal, content)
    claim = (
        "Lena tends to handle support tickets at the close of her day, once the final deploy "
        "is out."
    )
    with api_client(semantic, services) as client:
        api = Api(client, token_for(principal, "memory:read", "memory:write"))
        answer = api.post("/verify", {"claim": claim})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["verdict"], body["judge"]) == ("confirmed", "rules")
    assert "learned reading" in body["why"]
    assert (body["matches"][0]["id"], body["matches"][0]["relation"]) == (memory, "confirms")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "claim: Field required"),
        ({"claim": "  "}, "claim is empty"),
        ({"claim": 5}, "claim: Input should be a valid string"),
        ({"claim": "x", "category": "gossip"}, "category: Input should be"),
        ({"claim": "x", "scope": "team"}, "scope: Input should be 'user'"),
        ({"claim": "x", "limit": 0}, "limit must be from 1"),
        ({"claim": "x", "owner": "bob"}, "owner: is not a field of this request"),
    ],
)
def test_verify_refuses_bad_input_naming_the_field(
    api: Api, body: dict[str, Any], fragment: str
) -> None:
    error = error_of(api.post("/verify", body), 400)
    assert fragment in error["message"]


def test_verify_sees_only_the_tokens_memories(
    api: Api, service: MemoryService, principal: Principal
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)
    saved(service, other, "Bob's deploy key lives in the vault", scope="project")
    answer = api.post("/verify", {"claim": "Bob's deploy key lives in the vault"}).json()
    assert answer["verdict"] == "new"
    assert answer["matches"] == []
