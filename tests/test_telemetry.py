"""Telemetry (docs/telemetry.md): each tool call, REST call, hook and dashboard request is
counted on /metrics with its kind, operation and outcome; /metrics needs a token with
memory:admin (or is public when configured); nothing of a memory's content, no actor,
project, memory or token id ever appears on it; the queues' depths and the pool's usage are
read when it is scraped; OpenTelemetry exports spans and metrics to an OTLP/HTTP receiver
when one is configured. The app is the server's own (http_app), driven in process, on the
real database."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml
from fastmcp import Client
from fastmcp.exceptions import ToolError
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from emergent_memory import telemetry
from emergent_memory.app import watch_for_metrics
from emergent_memory.auth.dashboard import DashboardSessions
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.auth.service import TokenService
from emergent_memory.dashboard import DashboardServices, dashboard_routes
from emergent_memory.db.replica import ReplicaPool
from emergent_memory.embeddings.worker import EmbeddingWorker, WorkerConfig
from emergent_memory.llm import AnthropicClient
from emergent_memory.mcp.http import DatabaseTokenVerifier, http_app, token_principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from emergent_memory.memory.capture import CaptureConfig, CapturedMessage, CaptureService
from emergent_memory.memory.capture_worker import CaptureWorker
from emergent_memory.memory.store import EMBEDDED_TEXT
from tests.embedders import BagOfWordsEmbedder, DownEmbedder, EmbeddingServer
from tests.fake_anthropic import FakeAnthropic, error, tool_use
from tests.helpers import client_for, make_token, running_http_server
from tests.serving import serving_thread
from tests.test_rest_api import api_services, saved

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "telemetry.md"
API = "/api/v1"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def app_client(service: MemoryService, *, public: bool = False) -> TestClient:
    """The HTTP app as serve builds it: MCP, the REST API, the dashboard, /metrics."""
    server = create_server(
        lambda: nullcontext(service),
        token_principal,
        auth=DatabaseTokenVerifier(TokenService(service.pool).verify),
    )
    services = api_services(service)
    from emergent_memory.api import api_routes

    app = http_app(
        server,
        max_request_bytes=65_536,
        max_sessions=10,
        session_idle_timeout=60,
        routes=[
            *api_routes(services),
            *dashboard_routes(
                DashboardServices(
                    memory=service,
                    sessions=DashboardSessions(service.pool, 3600),
                    browse=services.browse,
                    duplicates=services.duplicates,
                    verify=services.verify,
                )
            ),
        ],
        metrics_public=public,
    )
    return TestClient(app)


@pytest.fixture
def client(service: MemoryService) -> Iterator[TestClient]:
    with app_client(service) as connected:
        yield connected


@pytest.fixture
def token_for(database_url: str) -> Callable[..., str]:
    def make(principal: Principal, *scopes: str) -> str:
        return make_token(database_url, principal.actor_id, principal.project_id, *scopes)[0]

    return make


@pytest.fixture
def admin_token(principal: Principal, token_for: Callable[..., str]) -> str:
    return token_for(principal, READ, WRITE, ADMIN)


def scrape(client: TestClient, token: str) -> str:
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return answer.text


def samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def counted(found: Samples, kind: str, operation: str, outcome: str) -> float:
    return value(
        found,
        "emergent_memory_operations_total",
        kind=kind,
        operation=operation,
        outcome=outcome,
    )


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def test_a_rest_call_is_counted_with_its_route_and_outcome(
    client: TestClient, principal: Principal, token_for: Callable[..., str], admin_token: str
) -> None:
    token = token_for(principal, READ, WRITE)
    before = samples(scrape(client, admin_token))
    assert client.get(f"{API}/memories", headers=headers(token)).status_code == 200
    missing = uuid.uuid4()
    assert client.get(f"{API}/memories/{missing}", headers=headers(token)).status_code == 404
    refused = client.post(
        f"{API}/memories/bulk-delete", content=b'{"ids": 5}', headers=headers(token)
    )
    assert refused.status_code == 400
    assert client.get(f"{API}/memories").status_code == 401
    nowhere = f"nowhere-{uuid.uuid4().hex}"
    assert client.get(f"{API}/{nowhere}", headers=headers(token)).status_code == 404
    after = scrape(client, admin_token)
    found = samples(after)

    def delta(operation: str, outcome: str) -> float:
        return counted(found, "rest", operation, outcome) - counted(
            before, "rest", operation, outcome
        )

    assert delta("GET /memories", "ok") == 1
    assert delta("GET /memories/{memory_id}", "not_found") == 1
    assert delta("POST /memories/bulk-delete", "invalid_input") == 1
    assert delta("GET /memories", "unauthorized") == 1
    assert delta("GET /{path:path}", "not_found") == 1  # the API's catch-all
    assert str(missing) not in after
    assert nowhere not in after
    duration = value(
        found,
        "emergent_memory_operation_duration_seconds_count",
        kind="rest",
        operation="GET /memories",
    )
    assert duration >= 1
    requested = value(
        found,
        "emergent_memory_operation_request_bytes_sum",
        kind="rest",
        operation="POST /memories/bulk-delete",
    ) - value(
        before,
        "emergent_memory_operation_request_bytes_sum",
        kind="rest",
        operation="POST /memories/bulk-delete",
    )
    assert requested == len(b'{"ids": 5}')


def test_a_hook_call_is_counted_as_a_hook(
    client: TestClient, principal: Principal, token_for: Callable[..., str], admin_token: str
) -> None:
    token = token_for(principal, READ, WRITE)
    before = samples(scrape(client, admin_token))
    body = {"session_id": f"s-{uuid.uuid4()}", "event": "session_start", "source": "startup"}
    answer = client.post(f"{API}/context", content=json.dumps(body), headers=headers(token))
    assert answer.status_code == 200, answer.text
    bad = client.post(f"{API}/context", content=b'{"event": "nope"}', headers=headers(token))
    assert bad.status_code == 400
    found = samples(scrape(client, admin_token))
    for outcome in ("ok", "invalid_input"):
        assert counted(found, "hook", "POST /context", outcome) == (
            counted(before, "hook", "POST /context", outcome) + 1
        )
    assert counted(found, "rest", "POST /context", "ok") == 0


def test_a_dashboard_request_is_named_by_its_route_not_its_path(
    client: TestClient, admin_token: str
) -> None:
    memory_id = uuid.uuid4()
    before = samples(scrape(client, admin_token))
    client.get(f"/ui/memories/{memory_id}", follow_redirects=False)
    text = scrape(client, admin_token)
    found = samples(text)
    names = {
        dict(labels)["operation"]
        for name, labels in found
        if name == "emergent_memory_operations_total" and ("kind", "dashboard") in labels
    }
    assert "GET /memories/{memory_id}" in names
    assert str(memory_id) not in text
    assert (
        sum(
            v - before.get(k, 0.0)
            for k, v in found.items()
            if k[0] == "emergent_memory_operations_total"
            and ("operation", "GET /memories/{memory_id}") in k[1]
        )
        == 1
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_tool_call_is_counted_by_tool_and_outcome(
    service: MemoryService, principal: Principal
) -> None:
    server = create_server(lambda: nullcontext(service), lambda: principal)

    def now(outcome: str, tool: str = "save_memory") -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_operations_total",
            {"kind": "tool", "operation": tool, "outcome": outcome},
        )
        return sample or 0.0

    ok, invalid = now("ok"), now("invalid_input")
    recalled, unknown = now("ok", "recall_memories"), now("not_found", "unknown")
    async with Client(server) as mcp:
        await mcp.call_tool(
            "save_memory",
            {"content": f"The build uses tool telemetry {uuid.uuid4().hex}.", "category": "fact"},
        )
        with pytest.raises(ToolError):
            await mcp.call_tool("save_memory", {"content": "", "category": "fact"})
        with pytest.raises(ToolError):  # the arguments' check: not a category
            await mcp.call_tool("save_memory", {"content": "x", "category": "nope"})
        await mcp.call_tool("recall_memories", {"query": "build"})
        with pytest.raises(ToolError):
            await mcp.call_tool(f"no_such_tool_{uuid.uuid4().hex}", {})
    assert now("ok") == ok + 1
    assert now("invalid_input") == invalid + 2
    assert now("ok", "recall_memories") == recalled + 1
    assert now("not_found", "unknown") == unknown + 1
    size = telemetry.REGISTRY.get_sample_value(
        "emergent_memory_operation_response_bytes_count",
        {"kind": "tool", "operation": "recall_memories"},
    )
    assert size is not None
    assert size >= 1


def test_metrics_needs_an_admin_token_unless_public(
    service: MemoryService,
    client: TestClient,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == "Bearer"
    assert "memory:admin" in anonymous.json()["error"]["message"]
    bad = client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    member = client.get(
        "/metrics", headers={"Authorization": f"Bearer {token_for(principal, READ, WRITE)}"}
    )
    assert member.status_code == 403
    admin = client.get(
        "/metrics", headers={"Authorization": f"Bearer {token_for(principal, ADMIN)}"}
    )
    assert admin.status_code == 200
    with app_client(service, public=True) as public:
        assert public.get("/metrics").status_code == 200


def test_no_content_and_no_ids_appear_on_metrics(
    service: MemoryService,
    client: TestClient,
    principal: Principal,
    token_for: Callable[..., str],
    admin_token: str,
) -> None:
    token = token_for(principal, READ, WRITE)
    marker = f"zebra{uuid.uuid4().hex}"
    memory_id = saved(service, principal, f"The {marker} service listens on port 7070.")
    assert client.get(f"{API}/memories/{memory_id}", headers=headers(token)).status_code == 200
    found = client.get(f"{API}/memories/search", params={"query": marker}, headers=headers(token))
    assert marker in found.text
    text = scrape(client, admin_token)
    for secret in (
        marker,
        memory_id,
        str(principal.actor_id),
        str(principal.project_id),
        token,
        admin_token,
    ):
        assert secret not in text
    # and every operation label is a route's template or a tool's name
    for _name, labels in samples(text):
        operation = dict(labels).get("operation")
        if operation is not None:
            assert re.fullmatch(r"[A-Z]+ [/a-z_{}:.-]*|[a-z_]+|[A-Z]+ unmatched", operation), (
                operation
            )


def test_queue_depths_and_pool_usage_are_read_when_scraped(
    service: MemoryService, client: TestClient, admin_token: str
) -> None:
    stop = watch_for_metrics({"primary": service.pool})
    try:
        found = samples(scrape(client, admin_token))
    finally:
        stop()
    assert ("emergent_memory_embedding_jobs", frozenset({("status", "pending")})) in found
    assert value(found, "emergent_memory_db_pool_size", pool="primary") >= 1
    assert value(found, "emergent_memory_db_pool_max", pool="primary") >= 1
    assert ("emergent_memory_db_pool_in_use", frozenset({("pool", "primary")})) in found
    assert ("emergent_memory_db_pool_waiting", frozenset({("pool", "primary")})) in found
    assert value(found, "emergent_memory_metrics_source_up", source="embedding_queue") == 1
    assert value(found, "emergent_memory_metrics_source_up", source="pool_primary") == 1
    after = samples(scrape(client, admin_token))
    assert (
        "emergent_memory_metrics_source_up",
        frozenset({("source", "pool_primary")}),
    ) not in after


def test_pool_in_use_counts_lent_connections_and_a_down_replica_is_down(
    service: MemoryService, client: TestClient, admin_token: str
) -> None:
    """A replica that is down: the pool keeps trying to open a connection (size 1, none
    available), yet none is lent, and read_replica_up says reads go to the primary. A
    connection of the primary's held by a request is in use."""
    replica = ReplicaPool(
        "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1",
        primary=service.pool,
        max_lag=5.0,
        min_size=1,
        max_size=2,
        timeout=1.0,
    )
    replica.start()
    stop = watch_for_metrics({"primary": service.pool, "read": replica})
    try:
        with service.pool.connection():
            found = samples(scrape(client, admin_token))
    finally:
        stop()
        replica.close()
    assert value(found, "emergent_memory_db_pool_size", pool="read") >= 0  # being opened
    assert found[("emergent_memory_db_pool_in_use", frozenset({("pool", "read")}))] == 0
    assert found[("emergent_memory_read_replica_up", frozenset())] == 0
    assert value(found, "emergent_memory_db_pool_in_use", pool="primary") >= 1
    gauges = telemetry.pool_gauges("read", {"pool_size": 1, "pool_available": 0, "pool_lent": 0})
    assert {g.name: g.values[("read",)] for g in gauges}["db_pool_in_use"] == 0


def test_a_source_that_fails_is_left_out_and_the_scrape_still_answers(
    client: TestClient, admin_token: str
) -> None:
    def broken() -> list[telemetry.Gauge]:
        raise RuntimeError("the database is gone")

    stop = telemetry.watch("broken", broken)
    try:
        found = samples(scrape(client, admin_token))
    finally:
        stop()
    assert value(found, "emergent_memory_metrics_source_up", source="broken") == 0


def test_an_embedding_batch_is_measured_with_its_outcome(
    make_service: Callable[..., MemoryService], principal: Principal
) -> None:
    """A batch the provider cannot embed is unavailable; the next, embedded, is ok; a round
    that finds no job is not measured."""

    def now(outcome: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_operations_total",
            {"kind": "embedding", "operation": "batch", "outcome": outcome},
        )
        return sample or 0.0

    down = make_service(DownEmbedder())
    down.save(principal, f"The queue host is q{uuid.uuid4().hex[:8]}.", "fact")
    config = WorkerConfig(backoff_base=0.0, backoff_max=0.0)
    failing = EmbeddingWorker(down.pool, DownEmbedder(), config, embedded_text=EMBEDDED_TEXT)
    working = EmbeddingWorker(down.pool, BagOfWordsEmbedder(), config, embedded_text=EMBEDDED_TEXT)
    unavailable, ok = now("unavailable"), now("ok")
    assert failing.run_once().claimed >= 1
    assert now("unavailable") == unavailable + 1
    assert working.drain().embedded >= 1
    assert now("ok") >= ok + 1
    measured = now("ok") + now("unavailable")
    assert working.run_once().claimed == 0
    assert now("ok") + now("unavailable") == measured


def test_a_capture_window_and_its_llm_calls_are_measured(
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    """The gate answers (llm gate: ok, its tokens counted), the extractor is overloaded (llm
    extractor: unavailable), so the window is put back to retry (capture window:
    unavailable)."""
    with connect() as conn:  # the worker claims any actor's due window: only this one here
        conn.execute("DELETE FROM kb.capture_windows")

    def now(kind: str, operation: str, outcome: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_operations_total",
            {"kind": kind, "operation": operation, "outcome": outcome},
        )
        return sample or 0.0

    def tokens(direction: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_llm_tokens_total",
            {"model": "claude-haiku-4-5", "direction": direction},
        )
        return sample or 0.0

    before = (
        now("llm", "gate", "ok"),
        now("llm", "extractor", "unavailable"),
        now("capture", "window", "unavailable"),
        tokens("input"),
        tokens("output"),
    )
    key = "sk-ant-test-telemetry-0123456789abcdef"
    with FakeAnthropic(api_key=key) as fake:
        fake.enqueue(
            tool_use(
                "record_gate_decision",
                {"worth_remembering": True, "reason": "a preference"},
                input_tokens=120,
                output_tokens=12,
            ),
            error(529, "overloaded_error", "Overloaded", retry_after=0),
        )
        llm = AnthropicClient(api_key=key, base_url=fake.url, timeout=10, max_retries=0)
        try:
            config = CaptureConfig(
                gate_model="claude-haiku-4-5",
                extractor_model="claude-sonnet-4-6",
                backoff_base=0.01,
                backoff_max=0.05,
                # other tests' sessions in the shared database are idle: not cut into windows
                idle_seconds=86400.0,
            )
            capture = CaptureService(service, llm, config)
            capture.enqueue(
                principal,
                session_id=f"s-{uuid.uuid4()}",
                client="claude-code",
                messages=[
                    CapturedMessage("user", "I always indent Python with tabs."),
                    CapturedMessage("assistant", "Noted: tabs."),
                ],
                first_index=None,
                final=True,
            )
            counts = CaptureWorker(capture).run_once()
        finally:
            llm.close()
    assert (counts.claimed, counts.retried) == (1, 1)
    after = (
        now("llm", "gate", "ok"),
        now("llm", "extractor", "unavailable"),
        now("capture", "window", "unavailable"),
        tokens("input"),
        tokens("output"),
    )
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1, 120, 12]


def test_llm_tokens_are_counted_per_model_and_direction() -> None:
    def now(direction: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_llm_tokens_total", {"model": "claude-test", "direction": direction}
        )
        return sample or 0.0

    before = now("input"), now("output")
    telemetry.count_llm_tokens("claude-test", 120, 30)
    assert (now("input"), now("output")) == (before[0] + 120, before[1] + 30)


def test_operation_maps_domain_errors_to_outcomes() -> None:
    from emergent_memory.errors import (
        DatabaseUnavailable,
        MemoryNotFound,
        PermissionDenied,
        SecretRejected,
    )

    assert telemetry.outcome_of(None) == "ok"
    assert telemetry.outcome_of(SecretRejected("x")) == "invalid_input"
    assert telemetry.outcome_of(MemoryNotFound("x")) == "not_found"
    assert telemetry.outcome_of(PermissionDenied("x")) == "denied"
    assert telemetry.outcome_of(DatabaseUnavailable("x")) == "unavailable"
    assert telemetry.outcome_of(RuntimeError("x")) == "error"

    @telemetry.operation("lifecycle", "test_job")
    def job(fail: bool) -> int:
        if fail:
            raise MemoryNotFound("gone")
        return 1

    def now(outcome: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_operations_total",
            {"kind": "lifecycle", "operation": "test_job", "outcome": outcome},
        )
        return sample or 0.0

    ok, missing = now("ok"), now("not_found")
    assert job(False) == 1
    with pytest.raises(MemoryNotFound):
        job(True)
    assert (now("ok"), now("not_found")) == (ok + 1, missing + 1)


def test_every_documented_metric_is_served(
    service: MemoryService, client: TestClient, admin_token: str
) -> None:
    """docs/telemetry.md's table of metrics, against a scrape of a server that has served
    every kind of operation (a family shows its samples once it has one)."""
    telemetry.count_llm_tokens("claude-doc", 1, 1)
    with telemetry.operation("lifecycle", "doc", request_bytes=1, response_bytes=1):
        pass
    documented = set(re.findall(r"^\| `(emergent_memory_[a-z_]+)`", DOC.read_text(), re.M))
    assert len(documented) >= 10
    replica = ReplicaPool(  # never opened: its gauges only (read_replica_up)
        "postgresql://nobody@127.0.0.1:1/none",
        primary=service.pool,
        max_lag=5.0,
        min_size=1,
        max_size=1,
        timeout=1.0,
    )
    stop = watch_for_metrics({"primary": service.pool, "read": replica})
    try:
        text = scrape(client, admin_token)
    finally:
        stop()
    families = list(text_string_to_metric_families(text))
    served = {family.name for family in families} | {
        sample.name for family in families for sample in family.samples
    }
    assert documented - served == set()
    ours = {
        sample.name
        for family in families
        for sample in family.samples
        if sample.name.startswith("emergent_memory_")
    }
    # every series of ours is documented (a histogram's by its base name)
    undocumented = {
        name
        for name in ours
        if name not in documented
        and name.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
        not in documented
    }
    assert undocumented == set()


def test_the_docs_queries_and_configurations_name_only_served_metrics() -> None:
    """docs/telemetry.md's YAML (alert rules, scrape configuration) parses, and its PromQL
    and rules name only metrics of the table (a histogram by its _bucket series)."""
    text = DOC.read_text()
    documented = set(re.findall(r"^\| `(emergent_memory_[a-z_]+)`", text, re.MULTILINE))
    blocks = re.findall(r"```(promql|yaml)\n(.*?)```", text, re.DOTALL)
    assert {kind for kind, _ in blocks} == {"promql", "yaml"}
    named: set[str] = set()
    for kind, body in blocks:
        if kind == "yaml":
            assert isinstance(yaml.safe_load(body), dict)
        named.update(re.findall(r"\b(emergent_memory_[a-z_]+)", body))
    assert named
    for name in named:
        assert name in documented or name.removesuffix("_bucket") in documented, name
    rules = yaml.safe_load(next(body for kind, body in blocks if "groups:" in body))
    assert all(rule["expr"].strip() for rule in rules["groups"][0]["rules"])


# -- OpenTelemetry ---------------------------------------------------------------------------


class Receiver(ThreadingHTTPServer):
    """A local OTLP/HTTP receiver: keeps the body of every POST by path."""

    def __init__(self) -> None:
        self.received: dict[str, list[bytes]] = {}
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ReceiverHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ReceiverHandler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            self.server.received.setdefault(self.path, []).append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def otlp_receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = serving_thread(server)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver(otlp_receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """The receiver, with this process's OpenTelemetry exporting to it."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "emergent-memory-test")
    telemetry.shutdown_opentelemetry()
    assert telemetry.configure_opentelemetry()
    try:
        yield otlp_receiver
    finally:
        telemetry.shutdown_opentelemetry()


def span_names(payloads: list[bytes]) -> dict[str, dict[str, Any]]:
    """Each exported span's name and attributes."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    spans: dict[str, dict[str, Any]] = {}
    for payload in payloads:
        for resource_spans in ExportTraceServiceRequest.FromString(payload).resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans[span.name] = {
                        a.key: a.value.string_value or a.value.int_value for a in span.attributes
                    }
    return spans


def test_spans_and_metrics_go_to_the_configured_otlp_receiver(
    receiver: Receiver,
    service: MemoryService,
    client: TestClient,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    token = token_for(principal, READ, WRITE)
    marker = f"okapi{uuid.uuid4().hex}"
    memory_id = saved(service, principal, f"The {marker} cluster runs in Frankfurt.")
    found = client.get(f"{API}/memories/search", params={"query": marker}, headers=headers(token))
    assert marker in found.text
    body = {"ids": [memory_id]}
    deleted = client.post(
        f"{API}/memories/bulk-delete", content=json.dumps(body), headers=headers(token)
    )
    assert deleted.status_code == 200, deleted.text
    missing = uuid.uuid4()
    assert client.get(f"{API}/memories/{missing}", headers=headers(token)).status_code == 404
    telemetry.flush_opentelemetry()

    raw_traces = b"".join(receiver.received.get("/v1/traces", []))
    assert raw_traces, receiver.received.keys()
    spans = span_names(receiver.received["/v1/traces"])
    for payload in receiver.received["/v1/traces"]:
        for resource_spans in ExportTraceServiceRequest.FromString(payload).resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            assert resource["service.name"] == "emergent-memory-test"
    deleted_span = spans["rest POST /memories/bulk-delete"]
    assert deleted_span["emergent_memory.kind"] == "rest"
    assert deleted_span["emergent_memory.operation"] == "POST /memories/bulk-delete"
    assert deleted_span["emergent_memory.outcome"] == "ok"
    assert deleted_span["emergent_memory.request.bytes"] == len(json.dumps(body).encode())
    assert spans["rest GET /memories/search"]["emergent_memory.outcome"] == "ok"
    assert spans["rest GET /memories/{memory_id}"]["emergent_memory.outcome"] == "not_found"
    for forbidden in (marker.encode(), str(missing).encode(), str(principal.actor_id).encode()):
        assert forbidden not in raw_traces

    metrics = b"".join(receiver.received.get("/v1/metrics", []))
    assert metrics
    exported = [
        metric
        for payload in receiver.received["/v1/metrics"]
        for resource in ExportMetricsServiceRequest.FromString(payload).resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    ]
    durations = [m for m in exported if m.name == "emergent_memory.operation.duration"]
    assert durations
    points = {
        tuple(sorted((a.key, a.value.string_value) for a in point.attributes))
        for metric in durations
        for point in metric.histogram.data_points
    }
    assert (
        ("kind", "rest"),
        ("operation", "GET /memories/{memory_id}"),
        ("outcome", "not_found"),
    ) in points
    assert marker.encode() not in metrics
    assert memory_id.encode() not in raw_traces


def test_without_an_exporter_opentelemetry_stays_off(monkeypatch: pytest.MonkeyPatch) -> None:
    telemetry.shutdown_opentelemetry()
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    assert not telemetry.configure_opentelemetry({})
    assert not telemetry.configure_opentelemetry({"OTEL_SERVICE_NAME": "x"})
    assert not telemetry.configure_opentelemetry(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}
    )
    assert not telemetry.configure_opentelemetry(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_METRICS_EXPORTER": "none",
        }
    )


@pytest.mark.anyio
async def test_the_server_process_serves_metrics_and_exports_to_a_collector(
    database_url: str, embedding_server: EmbeddingServer, otlp_receiver: Receiver
) -> None:
    """`serve --transport http` end to end: a tool call over MCP, /metrics as the doc's curl
    example reads it, the queue and pool gauges the server registers, and its spans at the
    collector the environment names."""
    actor, project = uuid.uuid4(), uuid.uuid4()
    token = make_token(database_url, actor, project, READ, WRITE, ADMIN)[0]
    marker = f"quokka{uuid.uuid4().hex}"
    otel = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
    }
    with running_http_server(database_url, embedding_server, **otel) as server:
        async with client_for(server, token) as mcp:
            await mcp.call_tool(
                "save_memory", {"content": f"The {marker} job runs hourly.", "category": "fact"}
            )
        example = next(
            line.strip()
            for line in DOC.read_text().splitlines()
            if line.startswith("curl ") and "/metrics" in line
        )
        command = example.replace("http://127.0.0.1:8765", server.base)
        shown = subprocess.run(
            ["sh", "-c", command],
            env={**os.environ, "TOKEN": token},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        assert (
            'emergent_memory_operations_total{kind="tool",operation="save_memory",outcome="ok"} 1.0'
            in shown
        )
        text = httpx.get(
            f"{server.base}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30
        ).text
        found = samples(text)
        for source in ("embedding_queue", "capture_queue", "pool_primary"):
            assert value(found, "emergent_memory_metrics_source_up", source=source) == 1, source
        assert ("emergent_memory_capture_windows", frozenset({("status", "dead")})) in found
        assert value(found, "emergent_memory_db_pool_size", pool="primary") >= 1
        deadline = time.monotonic() + 60  # bounds the test only: the exports come sooner
        while True:
            spans = span_names(otlp_receiver.received.get("/v1/traces", []))
            if "tool save_memory" in spans and "/v1/metrics" in otlp_receiver.received:
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"within 60 s the collector got spans {sorted(spans)} and "
                    f"{sorted(otlp_receiver.received)}: no span of the save, or no metrics"
                )
            time.sleep(0.2)
    assert spans["tool save_memory"]["emergent_memory.outcome"] == "ok"
    assert spans["tool save_memory"]["emergent_memory.kind"] == "tool"
    everything = b"".join(b"".join(bodies) for bodies in otlp_receiver.received.values())
    for forbidden in (marker, str(actor), str(project), token):
        assert forbidden.encode() not in everything
        assert forbidden not in text
