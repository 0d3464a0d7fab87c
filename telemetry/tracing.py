"""OpenTelemetry traces, off unless an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT).

On, a request is a server span (the ASGI instrumentation, without its spans for each message received and
sent); under it, a GraphQL operation the view executes is a span named for the operation, every SQL
statement a span (SQLAlchemy's instrumentation, and the reads sent straight to asyncpg through the same
cursor events: orm/seam.py), and every Redis round trip a span: a command redis-py sends (its
instrumentation) or a round trip of commands sent together (cache/redis/coalesce.py, `span`), which carries
the commands of every request that joined it and is shown in the trace of the one that opened it. A
response-cache hit stays its request's one span: its look-up is `quiet()`, and what it was is written on
the request's span (`annotate`). Spans go out in batches by OTLP over HTTP.

Off, nothing is installed: no middleware, no instrumentation, and `span`, `quiet` and `annotate` cost one
test of a module global."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled, suppress_instrumentation
from opentelemetry.trace import SpanKind

from telemetry.version import VERSION

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

SERVICE = "discours-core"
NO_SPAN: contextlib.nullcontext[None] = contextlib.nullcontext()

# Set by `start`, cleared by `stop`: the one provider of the process, and its tracer.
PROVIDER: TracerProvider | None = None
TRACER: Tracer | None = None
SAMPLE_RATE = 1.0


def start(endpoint: str | None, *, service: str = SERVICE, sample_rate: float = 1.0,
          exporter: SpanExporter | None = None) -> bool:
    """Start tracing to `endpoint` (an OTLP/HTTP collector's base URL: spans go to its /v1/traces), or to
    `exporter` as each span ends (tests); nothing when neither is given. Whether it started."""
    global PROVIDER, TRACER, SAMPLE_RATE
    if PROVIDER is not None or (not endpoint and exporter is None):
        return PROVIDER is not None
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

    # The share of requests traced is decided at the door (`Door`): a request the SDK sees is traced, unless
    # the trace it continues was not.
    provider = TracerProvider(resource=Resource.create({"service.name": service, "service.version": VERSION}),
                              sampler=ParentBased(ALWAYS_ON))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        assert endpoint is not None
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")))
    # SQLAlchemy's: engines made from now on (orm/engine.py makes its engines through the module attribute
    # this wraps); redis-py's: the commands it sends itself. SQLAlchemy's declares SQLAlchemy below 2.1 and
    # would refuse 2.1, whose cursor events and Engine.connect it uses unchanged: tests/test_tracing.py
    # sees its spans (and fails the day they stop).
    SQLAlchemyInstrumentor().instrument(tracer_provider=provider, skip_dep_check=True)
    RedisInstrumentor().instrument(tracer_provider=provider)
    PROVIDER, TRACER, SAMPLE_RATE = provider, provider.get_tracer("discours"), sample_rate
    return True


def stop() -> None:
    """Send the spans waiting, and stop tracing (what start installed is taken away)."""
    global PROVIDER, TRACER
    if PROVIDER is None:
        return
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    SQLAlchemyInstrumentor().uninstrument()
    RedisInstrumentor().uninstrument()
    PROVIDER.shutdown()
    PROVIDER, TRACER = None, None


def wrap(app: Any) -> Any:
    """`app` behind the `Door` and the ASGI instrumentation's middleware (the request's server span) when
    tracing is on."""
    if PROVIDER is None:
        return app
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    traced = OpenTelemetryMiddleware(app, tracer_provider=PROVIDER, exclude_spans=["receive", "send"])
    return Door(app, traced, SAMPLE_RATE)


class Door:
    """Which requests are traced, decided before any instrumentation runs: one that continues a trace
    (`traceparent`) goes through the middleware, which keeps the trace's own decision; of the others, a
    share `rate` does. The rest go straight to the app with instrumentation suppressed: no span of theirs
    is made, and the middleware's work for a request it would not record (its attributes, its headers read)
    is not done either, which deciding inside the SDK (a ratio sampler) leaves to every request
    (bench/RESULTS.md, "What traces cost", has both)."""

    def __init__(self, app: Any, traced: Any, rate: float) -> None:
        self.app, self.traced, self.rate = app, traced, rate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" or self.rate >= 1.0 or random.random() < self.rate or any(
                name == b"traceparent" for name, _ in scope.get("headers", ())):
            await self.traced(scope, receive, send)
            return
        with suppress_instrumentation():
            await self.app(scope, receive, send)


def span(name: str, attributes: Mapping[str, Any] | None = None, *, client: bool = False) -> Any:
    """A span around what the block does, a child of the current one (`client`: a call to another service),
    unless tracing is off or quieted."""
    if TRACER is None or not is_instrumentation_enabled():
        return NO_SPAN
    return TRACER.start_as_current_span(name, kind=SpanKind.CLIENT if client else SpanKind.INTERNAL,
                                        attributes=dict(attributes or {}))


def operation(name: str | None) -> Any:
    """The span of a GraphQL operation the view executes."""
    if TRACER is None:
        return NO_SPAN
    named = (name or "anonymous")[:64]
    return span(f"graphql {named}", {"graphql.operation.name": named})


def quiet() -> Any:
    """Within it no span is made, by this module or by the instrumentations."""
    return NO_SPAN if TRACER is None else suppress_instrumentation()


def annotate(attributes: Mapping[str, Any]) -> None:
    """Write `attributes` on the current span (the request's, on a hit)."""
    if TRACER is not None:
        trace.get_current_span().set_attributes(dict(attributes))
