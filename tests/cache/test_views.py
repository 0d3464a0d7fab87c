"""Views and histories (seeds 000, 003): a read counts a view once per viewer, shout and hour, also when
the response cache answers; views reach the database in batches and survive a Redis flush; a signed-in
reader's reading and search histories are theirs to list and clear."""

from __future__ import annotations

from typing import Any

import httpx
from redis.asyncio import Redis
from sqlalchemy import select

from app.http.hit_reads import hit_reads_of
from app.main import create_app
from cache import keys
from config.settings import Settings
from devtools.round_trips import redis_round_trips
from orm import Shout, ShoutViews
from orm.stats import is_listed
from resolvers.deps import Deps
from tests.conftest import TEST_REDIS_CLUSTER
from tests.helpers import Api

READ = "query($s: String) { get_shout(slug: $s) { id stat { viewed } } }"


async def _shouts(deps: Deps, count: int) -> list[tuple[int, str]]:
    async with deps.db() as session:
        return [tuple(r) for r in (await session.execute(  # type: ignore[misc]
            select(Shout.id, Shout.slug).where(is_listed()).order_by(Shout.id.desc()).limit(count))).all()]


async def _read(client: httpx.AsyncClient, slug: str, agent: str) -> Any:
    response = await client.post("/graphql", json={"query": READ, "variables": {"s": slug}},
                                 headers={"user-agent": agent})
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    return response.json()["data"]["get_shout"]


async def test_a_view_counts_once_per_reader_and_hour_and_survives_a_flush(
        client: httpx.AsyncClient, deps: Deps, redis: Redis) -> None:
    (shout_id, slug), = await _shouts(deps, 1)
    first = (await _read(client, slug, "reader-a"))["stat"]["viewed"]  # this read's own view included
    await _read(client, slug, "reader-a")  # the same reader within the hour: not again
    await _read(client, slug, "reader-b")  # a response-cache hit: still a view of its own
    assert responses_hit(client)
    await hit_reads_of(client._transport.app).flush()  # type: ignore[attr-defined]  # the hit's read counted
    assert int(await redis.get(keys.viewed(shout_id))) == first + 1

    assert await deps.views.flush() >= 1
    async with deps.db() as session:
        assert await session.scalar(select(ShoutViews.views).where(ShoutViews.shout == shout_id)) == first + 1
    await redis.flushdb()
    assert await deps.views.get_many([shout_id]) == [first + 1]  # started again from the database
    await _read(client, slug, "reader-c")
    assert int(await redis.get(keys.viewed(shout_id))) == first + 2


def responses_hit(client: httpx.AsyncClient) -> bool:
    app = client._transport.app  # type: ignore[attr-defined]
    return bool(app.state.responses.hits)


async def test_a_crawler_stops_counting_within_the_hour(deps: Deps, redis: Redis) -> None:
    ids = [shout_id for shout_id, _ in await _shouts(deps, 4)]
    before = await deps.views.get_many(ids)
    deps.views.per_hour_cap = 2
    for shout_id in ids:
        await deps.views.count(shout_id, "crawler")
    after = await deps.views.get_many(ids)
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 0, 0]


async def test_reading_and_search_histories(api: Api, deps: Deps) -> None:
    user = await api.user()
    shouts = await _shouts(deps, 3)
    for _, slug in shouts:
        await api(READ, {"s": slug}, user)
    await api(READ, {"s": shouts[0][1]}, user)  # read again (a response-cache hit): moves to the top
    await api.count_hit_reads()
    history = await api("{ load_reading_history(limit: 10) { id } }", user=user)
    assert [s["id"] for s in history] == [shouts[0][0], shouts[2][0], shouts[1][0]]
    for text in ("Город", "  город ", "музыка"):
        await api('query($t: String!) { load_shouts_search(text: $t) { slug } }', {"t": text}, user)
    assert await api("{ load_search_history }", user=user) == ["музыка", "город"]
    other = await api.user()
    assert await api("{ load_search_history }", user=other) == []
    assert await api.error("{ load_reading_history { id } }") == "UNAUTHENTICATED"

    await api("mutation { clear_reading_history { error } }", user=user)
    await api("mutation { clear_search_history { error } }", user=user)
    assert await api("{ load_reading_history { id } }", user=user) == []
    assert await api("{ load_search_history }", user=user) == []


async def test_a_hit_counts_its_view_after_answering_also_signed_in_and_when_not_modified(
        api: Api, deps: Deps, redis: Redis, settings: Settings) -> None:
    """A hit is answered from its one round trip and notes its read; the next count of the hits' reads
    (app/http/hit_reads.py) counts its shout's view: for a guest, for a signed-in reader (whose reading
    history gets the shout, as a computed answer's would) and for a hit answered 304 Not Modified."""
    app = create_app(settings.model_copy(update={"hit_reads_interval": 60}), deps=deps)  # counted when told
    reads = hit_reads_of(app)
    (shout_id, slug), = await _shouts(deps, 1)
    reader = await api.user()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        stored = await client.post("/graphql", json={"query": READ, "variables": {"s": slug}},
                                   headers={"user-agent": "guest-1"})
        before = int(await redis.get(keys.viewed(shout_id)))
        with redis_round_trips() as sent:
            signed_in = await client.post("/graphql", json={"query": READ, "variables": {"s": slug}},
                                          headers={"authorization": f"Bearer {reader.token}"})
        assert signed_in.headers["x-cache"] == "HIT"
        # the hit's read only (a cluster reads the stored answer, then its generations on their nodes):
        # the read it answered waits for the count
        assert TEST_REDIS_CLUSTER or sent[0] == 1, sent
        assert await redis.zscore(keys.reading_history(reader.id), str(shout_id)) is None
        with redis_round_trips() as sent:
            assert await reads.flush() == 1
        assert await redis.zscore(keys.reading_history(reader.id), str(shout_id)) is not None
        # the session, then the view and the history together: the reader's account is not read (a
        # cluster client sends these to the nodes that hold each key, a round trip each)
        assert TEST_REDIS_CLUSTER or sent[0] == 2, sent
        revalidated = await client.post("/graphql", json={"query": READ, "variables": {"s": slug}},
                                        headers={"user-agent": "guest-2", "if-none-match": stored.headers["etag"]})
        assert revalidated.status_code == 304
        await reads.flush()
    assert int(await redis.get(keys.viewed(shout_id))) == before + 2
