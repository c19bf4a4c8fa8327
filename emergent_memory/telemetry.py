"""Telemetry: what each operation took and how it ended, as Prometheus metrics and, when an
exporter is configured, OpenTelemetry spans and metrics (docs/telemetry.md).

An operation is one tool call, REST call, hook request, dashboard page, capture window, LLM
call, embedding batch or lifecycle job: `operation(kind, name)` records its duration, its
outcome (from the domain error it raised, or as the edge sets it) and the sizes in bytes of
its request and response. Never its content, never whose it was: labels are the kind, the
operation's name (a tool's, or a route's template, never a path holding ids), the outcome,
and for LLM tokens the model and direction.

Queue depths and pool usage are read when /metrics is scraped (or OpenTelemetry collects),
from the sources the composition root registers (`watch`); a source that fails or is slow
leaves its gauges out of that scrape and sets `emergent_memory_metrics_source_up` to 0.

This module is low in the layers: it imports only the standard library, prometheus_client,
the error classes, and (only when an exporter is configured) emergent_memory/otel.py, so that
the edges, the services and the workers can all use it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import wraps
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, ParamSpec, TypeVar, get_args

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from emergent_memory.otel import OpenTelemetry

from emergent_memory.errors import (
    DatabaseUnavailable,
    EmbeddingUnavailable,
    InvalidInput,
    LLMFailed,
    NotFound,
    PermissionDenied,
    ServiceBusy,
)

logger = logging.getLogger(__name__)

Kind = Literal["tool", "rest", "hook", "dashboard", "capture", "embedding", "lifecycle", "llm"]
Outcome = Literal[
    "ok", "invalid_input", "not_found", "denied", "unauthorized", "unavailable", "error"
]
OUTCOMES: Final[tuple[str, ...]] = get_args(Outcome)

NAMESPACE = "emergent_memory"
# Seconds: from a cached answer (a millisecond) to a slow model call with retries (minutes).
DURATION_BUCKETS: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
DURATION_BUCKETS += (30.0, 60.0, 120.0)
# Bytes: a short query (tens) to a page of memories or a long capture (megabytes).
SIZE_BUCKETS = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)

# No `_created` series (one more per counter and histogram, which no query here needs).
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)  # process_*: CPU, memory, open files (standard names)

OPERATIONS = Counter(
    "operations",
    "Operations that ended, by kind, operation and outcome.",
    ("kind", "operation", "outcome"),
    namespace=NAMESPACE,
    registry=REGISTRY,
)
DURATION = Histogram(
    "operation_duration_seconds",
    "How long operations took, in seconds, by kind and operation (every outcome).",
    ("kind", "operation"),
    namespace=NAMESPACE,
    registry=REGISTRY,
    buckets=DURATION_BUCKETS,
)
REQUEST_BYTES = Histogram(
    "operation_request_bytes",
    "Size of what an operation received (a tool's arguments as JSON, a request's body), in "
    "bytes, by kind and operation.",
    ("kind", "operation"),
    namespace=NAMESPACE,
    registry=REGISTRY,
    buckets=SIZE_BUCKETS,
)
RESPONSE_BYTES = Histogram(
    "operation_response_bytes",
    "Size of what an operation answered (a tool's result, a response's body), in bytes, by "
    "kind and operation.",
    ("kind", "operation"),
    namespace=NAMESPACE,
    registry=REGISTRY,
    buckets=SIZE_BUCKETS,
)
LLM_TOKENS = Counter(
    "llm_tokens",
    "Tokens the LLM calls spent (as the provider reported them), by model and direction "
    "(input, output).",
    ("model", "direction"),
    namespace=NAMESPACE,
    registry=REGISTRY,
)


def outcome_of(error: BaseException | None) -> Outcome:
    """How an operation that raised `error` (None: it did not) ended."""
    if error is None:
        return "ok"
    if isinstance(error, InvalidInput):
        return "invalid_input"
    if isinstance(error, NotFound):
        return "not_found"
    if isinstance(error, PermissionDenied):
        return "denied"
    if isinstance(error, ServiceBusy | DatabaseUnavailable | EmbeddingUnavailable | LLMFailed):
        return "unavailable"
    return "error"


def outcome_of_status(status: int) -> Outcome:
    """How an HTTP request ended, from its response's status."""
    if status < 400:
        return "ok"
    if status == 401:
        return "unauthorized"
    if status == 403:
        return "denied"
    if status == 404:
        return "not_found"
    if status in (502, 503, 504):
        return "unavailable"
    if status < 500:
        return "invalid_input"
    return "error"


# -- operations ------------------------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")

# The label children of each (kind, operation), looked up once: .labels() takes a lock.
_Children = tuple[Any, Any, Any]
_children: dict[tuple[str, str], _Children] = {}
_counted: dict[tuple[str, str, str], Any] = {}


def _children_of(kind: str, name: str) -> _Children:
    found = _children.get((kind, name))
    if found is None:
        found = (
            DURATION.labels(kind, name),
            REQUEST_BYTES.labels(kind, name),
            RESPONSE_BYTES.labels(kind, name),
        )
        _children[(kind, name)] = found
    return found


def _count(kind: str, name: str, outcome: str) -> None:
    child = _counted.get((kind, name, outcome))
    if child is None:
        child = _counted[(kind, name, outcome)] = OPERATIONS.labels(kind, name, outcome)
    child.inc()


class Operation:
    """One operation being measured (`with operation(...) as op`): the edge may set its
    `name` (once the route is known), `outcome`, `request_bytes` and `response_bytes` before
    it ends. Left unset, the outcome comes from the exception that ended the block (none: ok).
    As a decorator (`@operation(kind, name)`) each call is its own operation."""

    __slots__ = ("_span", "_start", "kind", "name", "outcome", "request_bytes", "response_bytes")

    def __init__(
        self,
        kind: Kind,
        name: str,
        *,
        request_bytes: int | None = None,
        response_bytes: int | None = None,
    ) -> None:
        self.kind = kind
        self.name = name
        self.outcome: Outcome | None = None
        self.request_bytes = request_bytes
        self.response_bytes = response_bytes
        self._start = 0.0
        self._span: Any = None

    def __enter__(self) -> Operation:
        if _otel is not None:
            self._span = _otel.start(self)
        self._start = time.perf_counter()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        seconds = time.perf_counter() - self._start
        if self.outcome is None:
            self.outcome = outcome_of(error)
        record(self, seconds)
        if self._span is not None and _otel is not None:
            _otel.end(self, self._span, error)

    def __call__(self, function: Callable[P, R]) -> Callable[P, R]:
        kind, name = self.kind, self.name

        @wraps(function)
        def measured(*args: P.args, **kwargs: P.kwargs) -> R:
            with Operation(kind, name):
                return function(*args, **kwargs)

        return measured


def operation(
    kind: Kind, name: str, *, request_bytes: int | None = None, response_bytes: int | None = None
) -> Operation:
    """Measure one operation: `with telemetry.operation("lifecycle", "archive"):` or as a
    decorator. `name` must come from a small fixed set (a tool's name, a route's template),
    never from content or ids: each distinct name is a new series."""
    return Operation(kind, name, request_bytes=request_bytes, response_bytes=response_bytes)


def record(op: Operation, seconds: float) -> None:
    """Count an operation that ended (its outcome set) and observe its duration and sizes."""
    duration, requested, answered = _children_of(op.kind, op.name)
    outcome = op.outcome or "ok"
    _count(op.kind, op.name, outcome)
    duration.observe(seconds)
    if op.request_bytes is not None:
        requested.observe(op.request_bytes)
    if op.response_bytes is not None:
        answered.observe(op.response_bytes)
    if _otel is not None:
        _otel.count(op, outcome, seconds)


def count_llm_tokens(model: str, input_tokens: int, output_tokens: int) -> None:
    """Tokens one LLM call spent (recorded with the call, answered or not)."""
    if input_tokens > 0:
        LLM_TOKENS.labels(model, "input").inc(input_tokens)
    if output_tokens > 0:
        LLM_TOKENS.labels(model, "output").inc(output_tokens)
    if _otel is not None:
        _otel.tokens(model, input_tokens, output_tokens)


# -- what is read at scrape time -------------------------------------------------------------


@dataclass(frozen=True)
class Gauge:
    """One gauge a source reports: its name (without the namespace), help text, label names,
    and the value of each label combination."""

    name: str
    documentation: str
    labels: tuple[str, ...]
    values: Mapping[tuple[str, ...], float]


Source = Callable[[], Iterable[Gauge]]
_sources: dict[str, Source] = {}
_sources_lock = threading.Lock()


def watch(name: str, source: Source) -> Callable[[], None]:
    """Read `source` at every scrape (it replaces a source of the same name); returns what
    stops watching it. A source must be quick and bound its own waits (a scrape waits for
    it); one that raises is left out of that scrape."""
    with _sources_lock:
        _sources[name] = source

    def unwatch() -> None:
        with _sources_lock:
            if _sources.get(name) is source:
                del _sources[name]

    return unwatch


def pool_gauges(pool: str, stats: Mapping[str, int]) -> list[Gauge]:
    """A psycopg_pool ConnectionPool's get_stats() as the pool gauges of `pool` (primary,
    read). In use: DatabasePool's own count of the connections it lent (`pool_lent`, db/pool.py),
    since size - available also counts connections still being opened (a replica that is
    down would show one in use); a plain ConnectionPool's size - available otherwise. A
    ReplicaPool's `replica_up` (db/replica.py) is the read_replica_up gauge."""
    size = stats.get("pool_size", 0)
    available = stats.get("pool_available", 0)
    lent = stats.get("pool_lent")
    values = {
        "size": size,
        "max": stats.get("pool_max", 0),
        "in_use": max(0, size - available) if lent is None else lent,
        "waiting": stats.get("requests_waiting", 0),
    }
    help_texts = {
        "size": "Connections the pool holds (in use or idle), by pool.",
        "max": "Most connections the pool may open, by pool.",
        "in_use": "Connections lent to a request or worker now, by pool.",
        "waiting": "Requests waiting for a free connection now, by pool.",
    }
    gauges = [
        Gauge(f"db_pool_{key}", help_texts[key], ("pool",), {(pool,): float(value)})
        for key, value in values.items()
    ]
    if "replica_up" in stats:
        gauges.append(
            Gauge(
                "read_replica_up",
                "1 while reads go to the read replica, 0 while they go to the primary "
                "(the replica down, behind, or not streaming).",
                (),
                {(): float(stats["replica_up"])},
            )
        )
    return gauges


QUEUES = {
    "embedding_jobs": "Embedding jobs in the queue now, by status (pending, running, dead).",
    "capture_windows": "Capture windows in the queue now, by status (pending, running, dead).",
}


def queue_gauge(
    queue: Literal["embedding_jobs", "capture_windows"], counts: Mapping[str, int]
) -> Gauge:
    """A queue's depth per status (done ones left out: they only grow)."""
    values: dict[tuple[str, ...], float] = {
        (status,): float(n) for status, n in counts.items() if status != "done"
    }
    return Gauge(queue, QUEUES[queue], ("status",), values)


def read_sources() -> tuple[list[Gauge], dict[str, bool]]:
    """Every source's gauges, and whether each answered."""
    with _sources_lock:
        sources = dict(_sources)
    gauges: list[Gauge] = []
    up: dict[str, bool] = {}
    for name, source in sorted(sources.items()):
        try:
            gauges.extend(source())
            up[name] = True
        except Exception as error:  # a scrape never fails for one source
            logger.info("metrics source %s did not answer: %s", name, error)
            up[name] = False
    return gauges, up


class _SourcesCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        gauges, up = read_sources()
        families: dict[str, GaugeMetricFamily] = {}
        for gauge in gauges:
            family = families.get(gauge.name)
            if family is None:
                family = families[gauge.name] = GaugeMetricFamily(
                    f"{NAMESPACE}_{gauge.name}", gauge.documentation, labels=gauge.labels
                )
            for labels, value in gauge.values.items():
                family.add_metric(list(labels), value)
        yield from families.values()
        source_up = GaugeMetricFamily(
            f"{NAMESPACE}_metrics_source_up",
            "1 when the source of gauges read at scrape time answered (queues, pool), else 0.",
            labels=("source",),
        )
        for name, answered in up.items():
            source_up.add_metric([name], 1.0 if answered else 0.0)
        yield source_up

    def describe(self) -> Iterator[Metric]:
        return iter(())  # read only when collected


REGISTRY.register(_SourcesCollector())


def render() -> tuple[bytes, str]:
    """The Prometheus exposition of every metric, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


# -- OpenTelemetry ---------------------------------------------------------------------------

_otel: OpenTelemetry | None = None
_otel_lock = threading.Lock()


def configure_opentelemetry(environ: Mapping[str, str] | None = None) -> bool:
    """Turn on OpenTelemetry spans and metrics when the environment configures an exporter
    (emergent_memory/otel.py says how), once per process; later calls change nothing.
    Returns whether it is on. Without an exporter the SDK is not even imported."""
    global _otel
    environ = os.environ if environ is None else environ
    if not any(name.startswith("OTEL_") for name in environ):
        return _otel is not None
    from emergent_memory import otel

    with _otel_lock:
        if _otel is not None:
            return True
        traces, metrics = otel.exporter_of("traces", environ), otel.exporter_of("metrics", environ)
        if traces is None and metrics is None:
            return False
        protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        if protocol != "http/protobuf":
            logger.warning(
                "OTEL_EXPORTER_OTLP_PROTOCOL=%s: emergent-memory exports OTLP over "
                "http/protobuf only (a collector's port 4318); using it",
                protocol,
            )
        _otel = otel.OpenTelemetry(traces, metrics, lambda: read_sources()[0])
        logger.info("OpenTelemetry on: traces %s, metrics %s", traces or "off", metrics or "off")
        return True


def flush_opentelemetry() -> None:
    """Export what OpenTelemetry holds now (the spans of the batch, the metrics' values)."""
    if _otel is not None:
        _otel.flush()


def shutdown_opentelemetry() -> None:
    """Flush and stop OpenTelemetry (tests; a process flushes it at exit by itself)."""
    global _otel
    with _otel_lock:
        if _otel is not None:
            _otel.shutdown()
            _otel = None
