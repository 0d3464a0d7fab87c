"""/metrics, /healthz, /readyz and seed 000's metrics keys in Redis.

/metrics is scraped after a miss, a hit and an invalidation, and each shows in the counters it should move
(deltas, so other tests' traffic in this process does not matter). /readyz is taken through a Redis server
that stops and starts again and a PostgreSQL reached through a loopback proxy that stops and starts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from app.main import create_app, wire
from auth.services import build_auth
from cache import keys
from cache.redis.client import make_redis
from cache.redis_metrics import RedisMetrics, periods, timeframes
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer, free_port
from orm.engine import make_engine
from tests.helpers import Api

AUTHOR = 'query Author($s: String) { get_author(slug: $s) { id name } }'


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.text) for sample in family.samples}


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: dict[Any, float], after: dict[Any, float], name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


async def test_metrics_count_a_miss_a_hit_and_an_invalidation(api: Api, client: httpx.AsyncClient) -> None:
    user = await api.user()
    read = {"query": AUTHOR, "variables": {"s": user.slug}, "operationName": "Author"}
    client.cookies.clear()
    start = await scrape(client)

    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "MISS"
    miss = await scrape(client)
    assert moved(start, miss, "discours_requests_total", operation="Author", outcome="ok") == 1
    assert moved(start, miss, "discours_cache_reads_total", layer="response", family="response", result="miss") == 1
    assert moved(start, miss, "discours_request_seconds_count", operation="Author", outcome="ok") == 1

    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "HIT"
    hit = await scrape(client)
    assert moved(miss, hit, "discours_requests_total", operation="Author", outcome="hit") == 1
    assert moved(miss, hit, "discours_cache_reads_total", layer="response", family="response", result="hit") == 1
    assert moved(miss, hit, "discours_requests_total", operation="Author", outcome="ok") == 0

    await api('mutation { update_author(profile: {name: "Метрика"}) { error } }', user=user)
    written = await scrape(client)
    assert moved(hit, written, "discours_cache_invalidations_total", family="author") >= 1
    assert moved(hit, written, "discours_writes_total", entity="author", action="update") == 1

    client.cookies.clear()
    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "MISS"
    after = await scrape(client)
    # the stored response was made old by the write: a stale read at the response layer, then entity reads
    assert moved(written, after, "discours_cache_reads_total", layer="response", family="response",
                 result="stale") == 1
    assert moved(written, after, "discours_cache_reads_total", layer="value", family="author:slug",
                 result="stale") + moved(written, after, "discours_cache_reads_total", layer="value",
                                         family="author:id", result="stale") >= 1
    # what lives in Redis is read at scrape time
    assert ("discours_delayed_queue", (("state", "queued"),)) in after
    assert ("discours_revalidation_queue", (("entity_type", "author"),)) in after


async def test_error_and_refused_outcomes_and_client_names_stay_bounded(client: httpx.AsyncClient) -> None:
    start = await scrape(client)
    await client.post("/graphql", json={"query": "{ nope }", "operationName": None})
    await client.post("/graphql", content=b"x", headers={"content-type": "text/plain"})
    long_name = "N" * 100  # a valid GraphQL name, but no label: past 64 characters
    await client.post("/graphql", json={"query": f"query {long_name} {{ __typename }}", "operationName": long_name})
    after = await scrape(client)
    assert moved(start, after, "discours_requests_total", operation="anonymous", outcome="error") == 1
    assert moved(start, after, "discours_requests_total", operation="anonymous", outcome="refused") == 1
    assert moved(start, after, "discours_requests_total", operation="other", outcome="ok") == 1


async def test_metrics_are_for_loopback_or_a_token(app: Any, settings: Settings, deps: Any) -> None:
    outside = httpx.ASGITransport(app=app, client=("203.0.113.7", 4000))
    async with httpx.AsyncClient(transport=outside, base_url="http://test") as client:
        assert (await client.get("/metrics")).status_code == 403
    guarded = create_app(settings.model_copy(update={"metrics_token": "s" * 32}), deps=deps)
    for address in ("203.0.113.7", "127.0.0.1"):
        transport = httpx.ASGITransport(app=guarded, client=(address, 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            assert (await client.get("/metrics")).status_code == 401
            wrong = await client.get("/metrics", headers={"authorization": "Bearer " + "x" * 32})
            assert wrong.status_code == 401
            right = await client.get("/metrics", headers={"authorization": "Bearer " + "s" * 32})
            assert right.status_code == 200 and "discours_requests_total" in right.text


async def test_redis_keeps_seed_metrics_with_their_ttls(api: Api, client: httpx.AsyncClient, deps: Any,
                                                       redis: Redis) -> None:
    flusher = RedisMetrics(deps.cache)
    await flusher.flush()  # what earlier tests counted goes first; now count from here
    await redis.flushdb()
    user = await api.user()  # registration and sign-in: writes, and a session used
    client.cookies.clear()
    for _ in range(2):
        await client.post("/graphql", json={"query": AUTHOR, "variables": {"s": user.slug}})
    await api("{ load_shouts_bookmarked(options: {limit: 1}) { id } }", user=user)  # checks the session
    assert await flusher.flush() > 0
    now = time.time()
    for period, ttl in periods(now):
        requests = int(await redis.get(keys.metric("requests", period)) or 0)
        assert requests >= 5  # register, login, two reads, one signed-in read
        assert int(await redis.get(keys.metric("response_hits", period)) or 0) == 1
        assert 0 < await redis.ttl(keys.metric("requests", period)) <= ttl
        assert await redis.pfcount(keys.metric("active_sessions", period)) >= 1
    for timeframe, ttl in timeframes(now):
        stats = await redis.hgetall(keys.entity_stats("author", timeframe))
        assert int(stats[b"insert"]) >= 1
        assert 0 < await redis.ttl(keys.entity_stats("author", timeframe)) <= ttl
    # a second flush adds only what is new
    assert await flusher.flush() == 0


# --- health and readiness ------------------------------------------------------------------------------------

class TcpProxy:
    """A loopback TCP proxy to PostgreSQL that the test can stop (connections cut, new ones refused) and start."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._pipes):
            writer.close()
        self._pipes.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._pipes |= {writer, upstream_writer}

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pump(reader, upstream_writer), pump(upstream_reader, writer))


@pytest.fixture
async def outage_app(redis_server: RedisServer, migrated_url: str, engine: Any,
                     settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, RedisServer, TcpProxy]]:
    from sqlalchemy.engine import make_url

    proxy = TcpProxy(make_url(migrated_url).port or 5432)
    await proxy.start()
    proxied = make_url(migrated_url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    own_engine = make_engine(proxied, pool_size=2, ping_after_idle=0)
    redis = make_redis(redis_server.url)
    app = create_app(settings, deps=wire(settings, own_engine, Cache(redis), auth=build_auth(settings, redis)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, redis_server, proxy
    await proxy.stop()
    await redis.aclose()
    await own_engine.dispose()


async def test_readiness_follows_redis_and_postgres(outage_app: Any) -> None:
    client, redis_server, proxy = outage_app
    assert (await client.get("/healthz")).json()["status"] == "ok"
    ready = await client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"] == {"database": "ok", "redis": "ok"}

    redis_server.stop()
    down = await client.get("/readyz")
    assert down.status_code == 503
    assert down.json()["checks"]["database"] == "ok" and down.json()["checks"]["redis"] != "ok"
    assert (await client.get("/healthz")).status_code == 200  # the process still answers
    redis_server.start()
    await redis_server.ready()
    assert (await client.get("/readyz")).status_code == 200

    await proxy.stop()
    down = await client.get("/readyz")
    assert down.status_code == 503, down.text
    assert down.json()["checks"]["redis"] == "ok" and down.json()["checks"]["database"] != "ok"
    await proxy.start()
    for _ in range(3):  # a pooled connection the cut killed is found dead once, then replaced
        back = await client.get("/readyz")
        if back.status_code == 200:
            break
    assert back.status_code == 200, back.text


async def test_readiness_needs_migrations_at_head(client: httpx.AsyncClient, monkeypatch: Any) -> None:
    import app.routes.observability

    monkeypatch.setattr(app.routes.observability, "head_revisions", lambda: frozenset({"a_newer_revision"}))
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert "migrations not at head" in response.json()["checks"]["database"]


async def test_a_database_a_newer_version_migrated_keeps_this_one_ready(client: httpx.AsyncClient,
                                                                         monkeypatch: Any) -> None:
    """A rolling upgrade (docs/upgrading.md): the database at a revision this code does not know, a newer
    version's, is ready; the control, at one it knows and that is not its head, is not."""
    import app.routes.observability
    from orm.migrations import head_revisions, known_revisions

    head, = head_revisions()
    older = frozenset(known_revisions() - {head})
    monkeypatch.setattr(app.routes.observability, "known_revisions", lambda: older)
    monkeypatch.setattr(app.routes.observability, "head_revisions", lambda: frozenset({max(older)}))
    assert (await client.get("/readyz")).json()["checks"]["database"] == "ok"
    monkeypatch.setattr(app.routes.observability, "known_revisions", lambda: older | {head})
    assert (await client.get("/readyz")).status_code == 503


async def test_two_workers_add_up_their_metrics(tmp_path: Any) -> None:
    """With PROMETHEUS_MULTIPROC_DIR (what `discours serve --workers N` sets), a scrape that reaches either
    worker counts the requests both answered."""
    from tests.live import two_workers

    async with two_workers(env={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}) as (base, pids, _redis):
        assert len(pids) == 2

        async def request() -> str:
            async with httpx.AsyncClient(base_url=base) as http:  # a fresh connection: either worker
                response = await http.post("/graphql", json={"query": "query Twice { __typename }",
                                                             "operationName": "Twice"})
                return response.headers["x-worker"]

        # The kernel hands each new connection to one worker: on a loaded machine one may take many in a
        # row, so requests go in rounds until both have answered some (the count is of all of them).
        answered_by: list[str] = []
        while len(set(answered_by)) < 2 and len(answered_by) < 400:
            answered_by += await asyncio.gather(*(request() for _ in range(40)))
        assert len(set(answered_by)) == 2
        scraped_from: set[str] = set()
        for _ in range(200):
            async with httpx.AsyncClient(base_url=base) as http:
                response = await http.get("/metrics")
            scraped_from.add(response.headers["x-worker"])
            samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                       for f in text_string_to_metric_families(response.text) for s in f.samples}
            counted = sum(value for (name, labels), value in samples.items()
                          if name == "discours_requests_total" and ("operation", "Twice") in labels)
            assert counted == len(answered_by), counted
            if len(scraped_from) == 2:
                break
        assert len(scraped_from) == 2
