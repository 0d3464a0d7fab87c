"""The reads that response-cache hits answer, counted together (app/http/hit_reads.py) on real Redis and
PostgreSQL: however many hits and readers, a count is two round trips; each reader's view counts once and
enters their history; a token that does not check out reads as a guest; the count comes by itself, a stop
counts what waits, and no more than the bound waits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select
from starlette.requests import Request

from app.http.hit_reads import HitRead, HitReads, hit_reads_of, stop_hit_reads
from app.main import create_app
from cache import keys
from config.settings import Settings
from devtools.round_trips import redis_round_trips
from orm import Shout
from orm.stats import is_listed
from resolvers.deps import Deps
from schema.context import reader_of
from telemetry import metrics
from tests.conftest import TEST_REDIS_CLUSTER
from tests.helpers import Api, until

READ = "query($s: String) { get_shout(slug: $s) { id title } }"


@pytest.fixture
async def front(deps: Deps, settings: Settings) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    """The app, whose hits' reads are counted when the test says (not on a timer), and a client of it."""
    app = create_app(settings.model_copy(update={"hit_reads_interval": 60}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield app, client


async def _shouts(deps: Deps, count: int) -> list[tuple[int, str]]:
    async with deps.db() as session:
        return [(r.id, r.slug) for r in (await session.execute(
            select(Shout.id, Shout.slug).where(is_listed()).order_by(Shout.id.desc()).limit(count))).all()]


async def _hit(client: httpx.AsyncClient, slug: str, *, token: str | None = None, agent: str = "guest") -> None:
    headers = {"authorization": f"Bearer {token}"} if token else {"user-agent": agent}
    response = await client.post("/graphql", json={"query": READ, "variables": {"s": slug}}, headers=headers)
    assert response.headers["x-cache"] == "HIT", response.headers


async def _seen(redis: Redis, client: str, shout_id: int) -> bool:
    """Whether the shout's view was counted for this reader this hour (cache/live/views.py): asked of the
    reader's own set, not of the shout's counter, which other tests' hits may still move."""
    return bool(await redis.sismember(keys.views_seen(client, int(time.time()) // 3600), shout_id))


async def test_many_hits_of_many_readers_are_counted_in_two_round_trips(
        front: tuple[Any, httpx.AsyncClient], api: Api, deps: Deps, redis: Redis) -> None:
    app, client = front
    shouts = await _shouts(deps, 2)
    readers = [await api.user() for _ in range(3)]
    for _, slug in shouts:  # stored, then hit: the computed read counted its own view at once
        await client.post("/graphql", json={"query": READ, "variables": {"s": slug}})
    for _ in range(4):  # every reader reads both shouts four times, and so do two guests
        for _, slug in shouts:
            for reader in readers:
                await _hit(client, slug, token=reader.token)
            await _hit(client, slug, agent="guest-a")
            await _hit(client, slug, agent="guest-b")
    with redis_round_trips() as sent:
        assert await hit_reads_of(app).flush() == 4 * 2 * 5
    assert TEST_REDIS_CLUSTER or sent == [2], sent  # the three sessions; then every view and history
    guests = [reader_of(Request({"type": "http", "headers": [(b"user-agent", agent.encode())],
                                 "client": ("127.0.0.1", 123)}), None) for agent in ("guest-a", "guest-b")]
    for client_key in [*(f"a{reader.id}" for reader in readers), *guests]:
        assert all([await _seen(redis, client_key, shout_id) for shout_id, _ in shouts]), client_key
    for reader in readers:
        history = await redis.zrange(keys.reading_history(reader.id), 0, -1)
        assert sorted(int(str(m, "utf-8")) for m in history) == sorted(i for i, _ in shouts)


async def test_a_token_that_does_not_check_out_reads_as_a_guest(
        front: tuple[Any, httpx.AsyncClient], api: Api, deps: Deps, redis: Redis) -> None:
    app, client = front
    (shout_id, slug), = await _shouts(deps, 1)
    reader = await api.user()
    await client.post("/graphql", json={"query": READ, "variables": {"s": slug}}, headers={"user-agent": "storer"})
    await api("mutation { logout { success } }", user=reader)  # its session revoked
    await _hit(client, slug, token=reader.token)
    await _hit(client, slug, token="not a token")
    assert await hit_reads_of(app).flush() == 2
    assert await redis.zcard(keys.reading_history(reader.id)) == 0  # nobody's history
    assert not await _seen(redis, f"a{reader.id}", shout_id)
    guest = reader_of(Request({"type": "http", "headers": [(b"user-agent", b"python-httpx/" + httpx.__version__.encode())],
                               "client": ("127.0.0.1", 123)}), None)
    assert await _seen(redis, guest, shout_id)  # a guest's read: the address and agent of the request


async def test_the_count_comes_by_itself_and_a_stop_counts_what_waits(
        api: Api, deps: Deps, redis: Redis, settings: Settings) -> None:
    (shout_id, slug), = await _shouts(deps, 1)
    reader, later = await api.user(), await api.user()
    for interval, who in ((0.05, reader), (60, later)):
        app = create_app(settings.model_copy(update={"hit_reads_interval": interval}), deps=deps)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            await client.post("/graphql", json={"query": READ, "variables": {"s": slug}})
            await _hit(client, slug, token=who.token)
        if interval < 1:
            async def remembered() -> bool:
                return await redis.zscore(keys.reading_history(reader.id), str(shout_id)) is not None
            await until(remembered, "the hits' reads counted on the timer")
        else:
            assert await redis.zscore(keys.reading_history(later.id), str(shout_id)) is None
            await stop_hit_reads(app)  # a graceful stop
            assert await redis.zscore(keys.reading_history(later.id), str(shout_id)) is not None


async def test_no_more_than_the_bound_waits(deps: Deps, redis: Redis) -> None:
    """At the bound a count is due at once; reads noted before it ran are not counted, and said so."""
    (shout_id, _), = await _shouts(deps, 1)
    reads = HitReads(deps, interval=60, max_pending=3)
    dropped = metrics.HIT_READS_DROPPED._value.get()
    for n in range(5):  # no await between them: the count due at the third has not run yet
        reads.add(HitRead((shout_id,), f"cbound-{n}", None))
    assert metrics.HIT_READS_DROPPED._value.get() - dropped == 2
    assert await reads.flush() == 3
    assert [await _seen(redis, f"cbound-{n}", shout_id) for n in range(5)] == [True, True, True, False, False]


async def test_one_count_runs_at_a_time(deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a count is under way (Redis slow), the timer does not start another: what is noted meanwhile
    waits for the next, within its bound, so a slow Redis never piles up counts and their reads."""
    release, counting = asyncio.Event(), []

    async def slow_count(_deps: Deps, reader: int | None, client: str, shout_ids: list[int]) -> bool:
        counting.append(shout_ids)
        await release.wait()
        return False

    monkeypatch.setattr("resolvers.histories.count_views", slow_count)
    reads = HitReads(deps, interval=0.01, max_pending=100)
    reads.add(HitRead((1,), "cslow-1", None))
    await until(lambda: counting == [[1]], "the first count under way")
    reads.add(HitRead((2,), "cslow-2", None))
    first = reads._timer
    await until(lambda: reads._timer is not None and reads._timer is not first, "the timer fired and waits again")
    assert counting == [[1]] and len(reads._flushing) == 1  # no second count beside the first
    release.set()
    assert await reads.flush() == 1 and counting == [[1], [2]]


@pytest.mark.parametrize("scope", [
    {"client": ("203.0.113.7", 5100), "headers": [(b"user-agent", b"Mozilla/5.0 (X11)")]},
    {"client": ("203.0.113.7", 5101), "headers": [(b"accept", b"*/*"), (b"user-agent", b"curl/8"),
                                                  (b"user-agent", b"second")]},
    {"client": None, "headers": [(b"user-agent", "agent \u00e9".encode("latin-1"))]},
    {"client": ("::1", 1), "headers": []},
])
def test_a_hit_names_its_guest_as_the_view_does(scope: dict[str, Any]) -> None:
    """A hit of a shout notes its reader from the raw scope (schema/context.py `guest_of`, without a
    Starlette Request): the same key that the view's `reader_of` gives the same request, so a hit and a
    computed answer count one reader once."""
    from cache.live.views import client_key
    from schema.context import guest_of

    scope = {"type": "http", **scope}
    request = Request(scope)
    by_starlette = client_key(None, request.client.host if request.client else None, request.headers.get("user-agent"))
    assert guest_of(scope) == by_starlette == reader_of(request, None)
    assert reader_of(request, 5) == client_key(5, None, None) == "a5"
