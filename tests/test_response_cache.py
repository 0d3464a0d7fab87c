"""The response cache: a hit skips parse, validate and execute; any invalidation of anything the response
was built from makes it a miss; only anonymous, error-free public queries are stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from app.main import create_app, wire
from auth.services import build_auth
from cache.client import make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from tests.helpers import Api

AUTHOR = 'query($s: String) { get_author(slug: $s) { id name stat { shouts } } }'


@pytest.fixture
async def own_redis_app(redis_server: RedisServer, engine: Any, settings: Settings) -> AsyncIterator[Any]:
    """The app on a Redis server of the test's own: its INFO commandstats count this app's commands only."""
    redis = make_redis(redis_server.url)
    app = create_app(settings, deps=wire(settings, engine, Cache(redis), auth=build_auth(settings, redis)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, redis, app
    await redis.aclose()


async def _commands(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def test_a_hit_costs_no_sql_and_one_redis_round_trip(own_redis_app: Any, sql_counter: Any) -> None:
    client, redis, app = own_redis_app
    query = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { name } "
                      "topics { slug } stat { rating } } }", "variables": {"o": {"limit": 10, "offset": 20}}}
    first = await client.post("/graphql", json=query)
    assert first.headers["x-cache"] == "MISS"
    responses = app.state.responses
    hits, stores = responses.hits, responses.stores
    before = await _commands(redis)
    sql_counter.reset()
    second = await client.post("/graphql", json=query)
    after = await _commands(redis)
    assert second.headers["x-cache"] == "HIT" and second.content == first.content
    assert (responses.hits - hits, responses.stores - stores) == (1, 0)
    assert sql_counter.count == 0, sql_counter.statements
    spent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    spent.pop("info", None)  # the reading of the statistics itself
    # one command from the client (EVALSHA: one round trip); inside Redis the script reads the hash and
    # the stamp's generations and compares them
    assert spent == {"evalsha": 1, "type": 1, "hmget": 1, "mget": 1}, spent


async def test_a_committed_write_refreshes_the_response(api: Api, client: Any) -> None:
    """X-Cache shows each step: computed and stored, served whole, made a miss by the write."""
    user = await api.user()
    read = {"query": AUTHOR, "variables": {"s": user.slug}}
    client.cookies.clear()
    first = await client.post("/graphql", json=read)
    second = await client.post("/graphql", json=read)
    assert (first.headers["x-cache"], second.headers["x-cache"]) == ("MISS", "HIT")
    assert second.content == first.content
    await api("mutation { update_author(profile: {name: \"Новое имя\"}) { error } }", user=user)
    client.cookies.clear()
    third = await client.post("/graphql", json=read)
    assert third.headers["x-cache"] == "MISS"
    assert third.json()["data"]["get_author"]["name"] == "Новое имя"
    signed_in = await client.post("/graphql", json=read, headers={"authorization": f"Bearer {user.token}"})
    assert signed_in.headers["x-cache"] == "BYPASS"


async def test_signed_in_errors_mutations_and_random_are_not_stored(api: Api, client: Any, redis: Redis) -> None:
    user = await api.user()
    signed_in = {"authorization": f"Bearer {user.token}"}
    requests = [
        ({"query": AUTHOR, "variables": {"s": user.slug}}, signed_in),
        ({"query": "{ load_shouts_by(options: {limit: -1}) { id } }"}, {}),
        ({"query": "{ load_shouts_random_top(options: {limit: 3}) { id } }"}, {}),
        ({"query": 'mutation { requestPasswordReset(email: "nobody@example.org") { success } }'}, {}),
    ]
    for _ in range(2):
        for body, headers in requests:
            client.cookies.clear()
            response = await client.post("/graphql", json=body, headers=headers)
            assert response.headers["x-cache"] == "BYPASS", body
    assert [key async for key in redis.scan_iter(match="response:*")] == []
    # the control: the same read, anonymous, is stored
    client.cookies.clear()
    anonymous = await client.post("/graphql", json=requests[0][0])
    assert anonymous.headers["x-cache"] == "MISS"
    assert len([key async for key in redis.scan_iter(match="response:*")]) == 1


async def test_a_large_response_is_stored_gzip_and_served_as_stored(own_redis_app: Any) -> None:
    """Seed 004: a value over 10 KB is compressed; a hit sends the gzip bytes as they are to a client that
    accepts gzip, and decompresses them only for one that does not."""
    from cache.inventory import inspect_key

    client, redis, app = own_redis_app
    query = {"query": "{ load_shouts_by(options: {limit: 50}) { id title lead body } }"}
    first = await client.post("/graphql", json=query, headers={"accept-encoding": "gzip"})
    assert first.headers["x-cache"] == "MISS" and len(first.content) > 10_240
    (key,) = [k async for k in redis.scan_iter(match="response:*")]
    stored = await redis.hgetall(key)
    assert stored[b"z"] == b"1" and len(stored[b"b"]) < len(first.content) / 2

    zipped = await client.post("/graphql", json=query, headers={"accept-encoding": "gzip, br"})
    assert zipped.headers["x-cache"] == "HIT" and zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == first.content  # httpx decodes gzip: the same bytes reach the client
    plain = await client.post("/graphql", json=query, headers={"accept-encoding": "identity"})
    assert plain.headers["x-cache"] == "HIT" and "content-encoding" not in plain.headers
    assert plain.content == first.content

    inspected = await inspect_key(app.state.deps.cache, key.decode())
    assert inspected["valid"] is True and inspected["value"] == first.json()
    await app.state.deps.cache.invalidate_tags(["shouts"])
    assert (await inspect_key(app.state.deps.cache, key.decode()))["valid"] is False
    again = await client.post("/graphql", json=query)
    assert again.headers["x-cache"] == "MISS"
