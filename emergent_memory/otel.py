"""OpenTelemetry export of the telemetry (emergent_memory/telemetry.py): spans and metrics
through the OpenTelemetry SDK to the exporter the standard OTEL_* environment variables
configure. Imported only when one is configured: without an exporter, no OpenTelemetry
code runs at all.

It has its own tracer and meter providers and sets nothing global, so only emergent-memory's
operations are exported (not the spans other libraries make, such as FastMCP's, which carry
the token's id).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from emergent_memory import __version__

if TYPE_CHECKING:
    from emergent_memory.telemetry import Gauge, Operation

logger = logging.getLogger(__name__)

Exporter = Literal["otlp", "console"]
# A span begun, and the token that makes it current until it ends.
Started = tuple[trace.Span, "Token[Context]"]
# Operations that answer a client: their spans are SERVER spans; the others INTERNAL.
SERVED = frozenset({"tool", "rest", "hook", "dashboard"})


def exporter_of(
    signal: Literal["traces", "metrics"], environ: Mapping[str, str]
) -> Exporter | None:
    """The exporter of a signal the environment configures: "otlp", "console", or None.

    OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER choose it (none, otlp, console); unset, a
    signal is exported over OTLP when an endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or the
    signal's own OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT), and not at all
    otherwise. OTEL_SDK_DISABLED=true turns both off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    chosen = environ.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower()
    if chosen:
        for name in (part.strip() for part in chosen.split(",")):
            if name == "otlp":
                return "otlp"
            if name == "console":
                return "console"
            if name != "none":
                logger.warning(
                    "OTEL_%s_EXPORTER=%s: emergent-memory exports only otlp (HTTP/protobuf) "
                    "or console; ignored",
                    signal.upper(),
                    name,
                )
        return None
    endpoint = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get(
        f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"
    )
    return "otlp" if endpoint else None


class OpenTelemetry:
    """The tracer and meter of emergent-memory's operations, exporting to `traces` and
    `metrics` (None: that signal is off)."""

    def __init__(
        self,
        traces: Exporter | None,
        metrics: Exporter | None,
        read_gauges: Any,
    ) -> None:
        resource = Resource.create(
            {
                "service.name": os.environ.get("OTEL_SERVICE_NAME") or "emergent-memory",
                "service.version": __version__,
            }
        )
        self.tracer_provider: TracerProvider | None = None
        self.meter_provider: MeterProvider | None = None
        self._tracer: trace.Tracer | None = None
        if traces is not None:
            self.tracer_provider = TracerProvider(resource=resource)
            self.tracer_provider.add_span_processor(BatchSpanProcessor(_span_exporter(traces)))
            self._tracer = self.tracer_provider.get_tracer("emergent_memory", __version__)
        self._metrics_on = metrics is not None
        self._read_gauges = read_gauges
        if metrics is not None:
            reader = _metric_reader(metrics)
            self.meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
            meter = self.meter_provider.get_meter("emergent_memory", __version__)
            # one histogram, its count the operations (one measurement per operation: the
            # SDK's cost is per measurement)
            self._duration = meter.create_histogram(
                "emergent_memory.operation.duration",
                "s",
                "How long operations took, by kind, operation and outcome; its count is the "
                "number of operations.",
            )
            self._tokens = meter.create_counter(
                "emergent_memory.llm.tokens", "{token}", "Tokens the LLM calls spent."
            )
            meter.create_observable_gauge(
                "emergent_memory.gauges",
                callbacks=[self._observe_gauges],
                description="Queue depths and pool usage, read from the sources /metrics "
                "reads (attribute gauge: which one).",
            )

    # spans

    def start(self, op: Operation) -> Started | None:
        if self._tracer is None:
            return None
        kind = SpanKind.SERVER if op.kind in SERVED else SpanKind.INTERNAL
        span = self._tracer.start_span(f"{op.kind} {op.name}", kind=kind)
        return span, context.attach(trace.set_span_in_context(span))

    def end(self, op: Operation, started: Started, error: BaseException | None) -> None:
        span, token = started
        context.detach(token)  # logs, never raises, when ended in another context
        span.update_name(f"{op.kind} {op.name}")
        attributes: dict[str, str | int] = {
            "emergent_memory.kind": op.kind,
            "emergent_memory.operation": op.name,
            "emergent_memory.outcome": op.outcome or "ok",
        }
        if op.request_bytes is not None:
            attributes["emergent_memory.request.bytes"] = op.request_bytes
        if op.response_bytes is not None:
            attributes["emergent_memory.response.bytes"] = op.response_bytes
        if op.outcome in ("error", "unavailable"):
            # the error's class, never its message (it may quote what the caller sent)
            attributes["error.type"] = type(error).__name__ if error else op.outcome
            span.set_status(Status(StatusCode.ERROR))
        span.set_attributes(attributes)
        span.end()

    # metrics

    def count(self, op: Operation, outcome: str, seconds: float) -> None:
        if not self._metrics_on:
            return
        attributes = {"kind": op.kind, "operation": op.name, "outcome": outcome}
        self._duration.record(seconds, attributes)

    def tokens(self, model: str, input_tokens: int, output_tokens: int) -> None:
        if not self._metrics_on:
            return
        self._tokens.add(input_tokens, {"model": model, "direction": "input"})
        self._tokens.add(output_tokens, {"model": model, "direction": "output"})

    def _observe_gauges(self, options: CallbackOptions) -> Iterable[Observation]:
        gauges: list[Gauge] = self._read_gauges()
        for gauge in gauges:
            for labels, value in gauge.values.items():
                attributes = {"gauge": gauge.name, **dict(zip(gauge.labels, labels, strict=True))}
                yield Observation(value, attributes)

    def flush(self) -> None:
        if self.tracer_provider is not None:
            self.tracer_provider.force_flush()
        if self.meter_provider is not None:
            self.meter_provider.force_flush()

    def shutdown(self) -> None:
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def _span_exporter(exporter: Exporter) -> SpanExporter:
    if exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers, timeout from the OTEL_* variables


def _metric_reader(exporter: Exporter) -> MetricReader:
    """Exports every OTEL_METRIC_EXPORT_INTERVAL milliseconds (60000 unless set)."""
    if exporter == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return PeriodicExportingMetricReader(ConsoleMetricExporter())
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return PeriodicExportingMetricReader(OTLPMetricExporter())
