"""Claims of a response across workers (cache/response/responses.py `ResponseCache.claim`): after a write to a hot
query, one worker computes its answer and the others' readers are answered with what it kept, instead of
every worker computing it; never with an answer a write made old, and never waiting long for a claim
whose answer will not come.

Two workers are two apps on the same database and Redis, each with its own single flight and its own
cache client, as two uvicorn workers have."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.http.graphql_view import DiscoursGraphQL
from app.main import create_app, wire
from auth.services import build_auth
from cache import keys
from cache.redis.client import make_redis
from cache.response.responses import CLAIMED, UNSHARED, Claim, ResponseCache
from cache.store import Cache
from config.settings import Settings
from tests.conftest import TEST_REDIS_CLUSTER, TEST_REDIS_URL
from tests.helpers import Api

READ = 'query($s: String) { get_author(slug: $s) { name } }'
# A claim holds the invalidation clock it was taken under, which a Redis Cluster does not read: nothing is
# claimed there (the last test).
one_server = pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="claims are taken on one Redis server only")


@pytest.fixture
async def second_worker(engine: Any, settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """Another worker: its own app, single flight and Redis client, on the same database and Redis."""
    redis = make_redis(TEST_REDIS_URL, cluster=TEST_REDIS_CLUSTER)
    app = create_app(settings, deps=wire(settings, engine, Cache(redis), auth=build_auth(settings, redis)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, app
    await redis.aclose()


FOUND = "found"  # a look of a claim found the answer kept


class Tried(list[bytes | str | None]):
    """What each look of a claim found (`ResponseCache._hit_or_claim_of`), in order: FOUND, or the claim
    tried (None: taken; else what held it); and the claims' keys."""

    claims: set[str]


def _claims_tried(monkeypatch: pytest.MonkeyPatch) -> Tried:
    tried = Tried()
    tried.claims = set()
    original = ResponseCache._hit_or_claim_of

    async def recorded(self: ResponseCache, key: str) -> Any:
        hit, held = await original(self, key)
        tried.append(FOUND if hit is not None else held)
        tried.claims.add(keys.response_claim(key))
        return hit, held

    monkeypatch.setattr(ResponseCache, "_hit_or_claim_of", recorded)
    return tried


def _executions(monkeypatch: pytest.MonkeyPatch) -> tuple[list[DiscoursGraphQL], asyncio.Event, asyncio.Event]:
    """The views whose requests execute from now on, in order; the first waits at its start until
    `release` is set, having set `holding`."""
    executed: list[DiscoursGraphQL] = []
    holding, release = asyncio.Event(), asyncio.Event()
    execute = DiscoursGraphQL.execute

    async def counted(self: DiscoursGraphQL, *args: Any, **kwargs: Any) -> Any:
        executed.append(self)
        if len(executed) == 1:
            holding.set()
            await release.wait()
        return await execute(self, *args, **kwargs)

    monkeypatch.setattr(DiscoursGraphQL, "execute", counted)
    return executed, holding, release


async def _until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came")


@one_server
@pytest.mark.parametrize("claims", [True, False], ids=["claimed", "control-each-worker-computes"])
async def test_the_second_worker_is_answered_with_what_the_first_computed(
        api: Api, client: Any, second_worker: Any, monkeypatch: pytest.MonkeyPatch, claims: bool) -> None:
    """Both workers are asked the same query after a write: the first computes it under its claim, the
    second waits for that and answers with what was kept (a hit, the same bytes): one computation. Control,
    without claims: each worker computes it."""
    other, _ = second_worker
    user = await api.user()
    read = {"query": READ, "variables": {"s": user.slug}}
    await api('mutation { update_author(profile: {name: "Claimed"}) { error } }', user=user)
    tried = _claims_tried(monkeypatch)
    if not claims:
        async def unclaimed(self: ResponseCache, key: str, clock: Any = None) -> Claim:
            return Claim(ours=False)
        monkeypatch.setattr(ResponseCache, "claim", unclaimed)
    executed, holding, release = _executions(monkeypatch)
    client.cookies.clear()
    first = asyncio.create_task(client.post("/graphql", json=read))
    await asyncio.wait_for(holding.wait(), 10)  # the first worker computes (held at the start)
    second = asyncio.create_task(other.post("/graphql", json=read))
    if claims:
        await _until(lambda: CLAIMED in tried)  # the second found the first's claim, and waits
    else:
        await _until(lambda: len(executed) == 2)
    release.set()
    computed, waited = await asyncio.gather(first, second)
    assert computed.json()["data"]["get_author"]["name"] == "Claimed"
    assert waited.content == computed.content
    assert computed.headers["x-cache"] == "MISS"
    assert waited.headers["x-cache"] == ("HIT" if claims else "MISS")
    assert len(executed) == (1 if claims else 2)
    if claims:
        assert tried[0] is None and tried[-1] == FOUND and set(tried[1:-1]) == {CLAIMED}


@one_server
@pytest.mark.parametrize("write", ["before-the-look", "while-waiting"])
async def test_a_claim_is_not_waited_for_once_a_write_came(
        api: Api, client: Any, second_worker: Any, monkeypatch: pytest.MonkeyPatch, write: str) -> None:
    """The first worker computes under its claim (held before it reads anything); a rename commits, before
    the second worker's reader looks or while it waits. The answer under way may be old now, so the second
    worker does not wait for it: it takes the claim over and computes, given the new name while the first
    computation is still held."""
    other, _ = second_worker
    user = await api.user()
    read = {"query": READ, "variables": {"s": user.slug}}
    tried = _claims_tried(monkeypatch)
    executed, holding, release = _executions(monkeypatch)
    client.cookies.clear()
    first = asyncio.create_task(client.post("/graphql", json=read))
    await asyncio.wait_for(holding.wait(), 10)
    rename = 'mutation { update_author(profile: {name: "Renamed"}) { error } }'
    if write == "before-the-look":
        await api(rename, user=user)
    second = asyncio.create_task(other.post("/graphql", json=read))
    if write == "while-waiting":
        await _until(lambda: CLAIMED in tried)  # it waits for the first worker's claim
        await api(rename, user=user)
    answer = await asyncio.wait_for(second, 10)  # the first computation is still held
    assert not first.done()
    assert answer.json()["data"]["get_author"]["name"] == "Renamed"
    assert answer.headers["x-cache"] == "MISS"
    assert tried[-1] is None  # took the claim over...
    assert len([view for view in executed if view is not executed[0]]) == 1  # ...and computed (the rename too)
    assert tried[1:-1] == ([] if write == "before-the-look" else [CLAIMED] * (len(tried) - 2))
    release.set()
    await first


@one_server
@pytest.mark.parametrize("kept", [False, True], ids=["not-kept", "control-kept"])
async def test_an_answer_that_is_not_kept_leaves_the_others_computing_at_once(
        client: Any, second_worker: Any, redis: Any, monkeypatch: pytest.MonkeyPatch, kept: bool) -> None:
    """A computation whose answer is not kept (here an error) says so in its claim for as long as a claim
    lasts: the other workers compute at once instead of waiting. Control: a kept answer releases its claim,
    and the next reader has a hit."""
    other, _ = second_worker
    query = ('{ load_reactions_by(by: {sort: "nonsense"}, limit: 3) { id } }' if not kept
             else '{ load_reactions_by(by: {}, limit: 3) { id } }')
    tried = _claims_tried(monkeypatch)
    client.cookies.clear()
    first = await client.post("/graphql", json={"query": query})
    assert ("errors" in first.json()) is not kept
    assert tried == [None]  # computed under its claim
    (claim_key,) = tried.claims
    assert await redis.get(claim_key) == (None if kept else UNSHARED)
    if not kept:
        assert 0 < await redis.pttl(claim_key) <= 5000
    tried.clear()
    second = await other.post("/graphql", json={"query": query})
    assert second.headers["x-cache"] == ("HIT" if kept else "BYPASS")
    assert tried == ([] if kept else [UNSHARED])  # one look, no wait; a kept answer: found in front of the view


@one_server
async def test_a_claim_whose_worker_is_gone_is_waited_for_a_bounded_time(
        client: Any, app: Any, redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim its worker left behind (it died while computing) holds the others back no longer than the
    cache's fill wait: then they compute it themselves. A computation that is cancelled releases its claim
    at once."""
    query = {"query": '{ load_reactions_by(by: {}, limit: 4) { id } }'}
    tried = _claims_tried(monkeypatch)
    client.cookies.clear()
    await client.post("/graphql", json=query)
    (claim_key,) = tried.claims
    await deps_cache(app).invalidate_tags([keys.GLOBAL_TAG])  # what was kept is a miss now
    clock = await redis.get(keys.invalidation_clock())
    await redis.set(claim_key, b"c" + clock, px=60_000)  # and a worker that died holds its claim, taken since
    deps_cache(app).fill_wait_ms = 50
    tried.clear()
    answer = await client.post("/graphql", json=query)
    assert answer.status_code == 200 and answer.headers["x-cache"] == "MISS"
    assert len(tried) > 1 and set(tried) == {CLAIMED}  # waited for it, never took it: computed after the wait

    await deps_cache(app).invalidate_tags([keys.GLOBAL_TAG])
    await redis.delete(claim_key)
    _, holding, _ = _executions(monkeypatch)
    request = asyncio.create_task(client.post("/graphql", json=query))
    await asyncio.wait_for(holding.wait(), 10)
    assert (await redis.get(claim_key)).startswith(b"c")
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert await redis.get(claim_key) is None


@pytest.mark.skipif(not TEST_REDIS_CLUSTER, reason="on a Redis Cluster")
async def test_nothing_is_claimed_on_a_cluster(client: Any, second_worker: Any, app: Any) -> None:
    """On a Redis Cluster each worker computes the answer it misses, as before claims: no claim is kept."""
    other, other_app = second_worker
    query = {"query": '{ load_reactions_by(by: {}, limit: 5) { id } }'}
    claims = []
    for worker, its_app in ((client, app), (other, other_app)):
        await deps_cache(its_app).invalidate_tags([keys.GLOBAL_TAG])
        assert (await worker.post("/graphql", json=query)).headers["x-cache"] == "MISS"
        claims.append(await its_app.state.responses.claim("response:nothing-kept-here"))
    assert claims == [Claim(ours=False), Claim(ours=False)]


def deps_cache(app: Any) -> Cache:
    cache: Cache = app.state.deps.cache
    return cache
