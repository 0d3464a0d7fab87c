"""Traces (issue 73), read from an in-memory exporter: a miss is a request span over its GraphQL operation's
span, over its SQL statements' and Redis round trips' spans, all of one trace; a response-cache hit is
its request's one span; off, nothing is installed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import sqlalchemy.ext.asyncio
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from redis.asyncio import Redis

from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache.store import Cache
from config.settings import Settings
from orm.engine import make_engine
from telemetry import tracing
from tests.conftest import TEST_DATABASE_URL
from tests.helpers import until

TOPICS = {"query": "query TopicsPage { get_topics_all { slug title } }", "operationName": "TopicsPage"}


@pytest.fixture
async def traced(request: pytest.FixtureRequest, redis: Redis, settings: Settings,
                 migrated_url: str) -> AsyncIterator[tuple[Any, InMemorySpanExporter]]:
    """The app with traces on for the share of requests the test's parameter says (all by default; its
    engine made once they are: tracing instruments engines made after it starts), and the spans it ended."""
    exported = InMemorySpanExporter()
    assert tracing.start(None, exporter=exported, sample_rate=getattr(request, "param", 1.0))
    engine = make_engine(TEST_DATABASE_URL)
    try:
        deps = wire(settings, engine, Cache(redis), auth=build_auth(settings, redis, mailer=LogMailer()))
        yield tracing.wrap(create_app(settings, deps=deps)), exported
    finally:
        tracing.stop()
        await engine.dispose()


async def _ask(app: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        return await http.post("/graphql", json=TOPICS, headers=headers)


def _tree(spans: tuple[ReadableSpan, ...]) -> dict[str, list[str]]:
    """Each span's name under its parent's ("" for a root)."""
    names = {span.context.span_id: span.name for span in spans}
    tree: dict[str, list[str]] = {}
    for span in spans:
        tree.setdefault(names.get(span.parent.span_id, "?") if span.parent else "", []).append(span.name)
    return tree


async def test_a_miss_is_its_operation_its_statements_and_its_round_trips(
        traced: tuple[Any, InMemorySpanExporter]) -> None:
    app, exported = traced
    response = await _ask(app)
    assert response.headers["x-cache"] != "HIT" and response.json()["data"]["get_topics_all"] is not None
    spans = exported.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1, _tree(spans)
    [root] = [span for span in spans if span.parent is None]
    assert root.kind is SpanKind.SERVER and root.name.startswith("POST /graphql"), root.name
    tree = _tree(spans)
    # beside the operation: the round trips that keep its answer, after it is computed
    assert tree[root.name].count("graphql TopicsPage") == 1, tree
    assert all(name.startswith("redis") for name in tree[root.name] if name != "graphql TopicsPage"), tree
    below = [span for span in spans if span.parent is not None and span.parent.span_id != root.context.span_id]
    sql = [span for span in below if (span.attributes or {}).get("db.system") == "postgresql"
           or (span.attributes or {}).get("db.system.name") == "postgresql"]
    redis = [span for span in below if span.name.startswith("redis") or
             (span.attributes or {}).get("db.system") == "redis"]
    assert sql and redis, tree
    assert all(span.kind is SpanKind.CLIENT for span in sql + redis)


async def test_a_hit_is_one_span(traced: tuple[Any, InMemorySpanExporter]) -> None:
    app, exported = traced

    async def hit() -> bool:
        return (await _ask(app)).headers["x-cache"] == "HIT"

    await until(hit, "the answer is kept and served from the response cache")
    exported.clear()
    assert await hit()
    [span] = exported.get_finished_spans()
    assert span.kind is SpanKind.SERVER
    assert dict(span.attributes or {})["discours.response_cache"] == "hit"
    assert dict(span.attributes or {})["graphql.operation.name"] == "TopicsPage"


@pytest.mark.parametrize("traced", [0.0], indirect=True)
async def test_an_unsampled_request_makes_no_span_and_a_continued_trace_keeps_its_decision(
        traced: tuple[Any, InMemorySpanExporter]) -> None:
    app, exported = traced
    for _ in range(3):
        assert (await _ask(app)).json()["data"]["get_topics_all"] is not None
    assert exported.get_finished_spans() == ()  # no orphan SQL or Redis span either
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    await _ask(app, {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"})  # sampled upstream
    spans = exported.get_finished_spans()
    assert spans and {format(span.context.trace_id, "032x") for span in spans} == {trace_id}
    exported.clear()
    await _ask(app, {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-00"})  # not sampled upstream
    assert exported.get_finished_spans() == ()


def test_off_nothing_is_installed() -> None:
    assert tracing.TRACER is None
    app = object()
    assert tracing.wrap(app) is app
    assert tracing.span("x") is tracing.NO_SPAN and tracing.operation("x") is tracing.NO_SPAN
    assert tracing.quiet() is tracing.NO_SPAN
    assert not hasattr(sqlalchemy.ext.asyncio.create_async_engine, "__wrapped__")
    assert not hasattr(Redis.execute_command, "__wrapped__")


async def test_control_stop_takes_away_what_start_installed() -> None:
    assert tracing.start(None, exporter=InMemorySpanExporter())
    try:
        assert hasattr(sqlalchemy.ext.asyncio.create_async_engine, "__wrapped__")  # the check above can fail
        assert hasattr(Redis.execute_command, "__wrapped__")
    finally:
        tracing.stop()
    test_off_nothing_is_installed()
