"""Commands of one moment share a round trip (cache/redis/coalesce.py), each caller keeping its own replies and
errors; and what that buys a request: a warm read costs at most two round trips, a hit one (counted on the
wire, devtools/round_trips.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from redis.exceptions import ResponseError

from cache.redis.client import RedisGuard, RedisUnavailable, make_redis
from cache.redis.coalesce import at_once
from devtools.round_trips import redis_round_trips
from devtools.services import RedisServer
from tests.conftest import single_redis
from tests.helpers import pipelines_sent

pytestmark = single_redis  # a cluster client does not coalesce


async def test_commands_and_pipelines_of_one_moment_share_a_round_trip(redis_server: RedisServer) -> None:
    client = make_redis(redis_server.url)
    await client.set("a", "1")

    async def pipeline() -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            pipe.set("b", "2")
            pipe.incr("b")
            pipe.hset("h", mapping={"f": "v"})
            pipe.hgetall("h")
            return await pipe.execute()

    with redis_round_trips() as sent:
        replies = await asyncio.gather(client.get("a"), pipeline(), client.mget(["a", "b", "missing"]),
                                       client.exists("a", "missing"))
    assert sent == [1]
    # each caller's replies, parsed as without coalescing (HGETALL's dict included), and in its order:
    # the MGET went out after the pipeline that set `b`
    assert replies == [b"1", [True, 3, 1, {b"f": b"v"}], [b"1", b"3", None], 1]
    await client.aclose()


async def test_one_callers_error_stays_its_own(redis_server: RedisServer) -> None:
    client = make_redis(redis_server.url)
    await client.set("text", "not a number")

    async def failing_pipeline(raise_on_error: bool) -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            pipe.incr("text")
            pipe.get("text")
            return await pipe.execute(raise_on_error=raise_on_error)

    with redis_round_trips() as sent:
        wrong, kept, raised, fine = await asyncio.gather(
            client.incr("text"), failing_pipeline(False), failing_pipeline(True), client.get("text"),
            return_exceptions=True)
    assert sent == [1]
    assert isinstance(wrong, ResponseError) and "not an integer" in str(wrong)
    assert isinstance(kept[0], ResponseError) and kept[1] == b"not a number"
    assert isinstance(raised, ResponseError) and "Command # 1 (INCRBY text 1)" in str(raised)
    assert fine == b"not a number"
    await client.aclose()


async def test_transactions_and_blocking_commands_keep_their_own_round_trip(redis_server: RedisServer) -> None:
    client = make_redis(redis_server.url)

    async def transaction() -> list[Any]:
        async with client.pipeline(transaction=True) as pipe:
            pipe.incr("counter")
            pipe.incr("counter")
            return await pipe.execute()

    def moment() -> Any:
        return asyncio.gather(transaction(), client.get("x"), client.get("y"),
                              client.blpop(["empty list"], timeout=0.01))

    await moment()  # the pool's connections are opened (their handshakes are round trips too)
    with redis_round_trips() as sent:
        replies = await moment()
    # MULTI/EXEC on a connection of its own, the blocking pop on another, the two GETs together
    assert replies == [[3, 4], None, None, None]
    assert sent == [3]
    await client.aclose()


async def test_a_failed_round_trip_fails_every_caller_in_it_and_trips_the_guard(redis_server: RedisServer) -> None:
    guard = RedisGuard(breaker_seconds=30)
    client = make_redis(redis_server.url, guard=guard)
    await client.set("a", "1")
    redis_server.stop()
    failures = await asyncio.gather(client.get("a"), client.mget(["a"]), client.incr("n"), return_exceptions=True)
    assert all(isinstance(f, RedisUnavailable) for f in failures), failures
    assert not guard.available
    await client.aclose()


async def test_a_caller_cancelled_while_queued_leaves_the_others_answered(redis_server: RedisServer) -> None:
    client = make_redis(redis_server.url)
    await client.set("a", "1")
    cancelled = asyncio.ensure_future(client.get("a"))
    answered = asyncio.ensure_future(client.get("a"))
    await asyncio.sleep(0)  # both queued, nothing sent yet
    cancelled.cancel()
    assert await answered == b"1"
    assert cancelled.cancelled()
    assert await client.incr("n") == 1  # and the next moment's commands go out as ever
    await client.aclose()


async def test_a_command_sent_at_once_goes_out_the_next_turn(redis_server: RedisServer) -> None:
    """Callers that keep arriving, one a turn of the loop, never leave the queue quiet: they all wait for
    the last. A command sent `at_once` (a response-cache hit) goes out at the next turn with what is
    queued by then, and the callers after it start the next round trip."""
    client = make_redis(redis_server.url)
    await client.set("a", "1")

    async def got_at_once() -> Any:
        with at_once():
            return await client.get("a")

    async def one_a_turn(count: int, *, second_at_once: bool) -> list[Any]:
        calls = []
        for n in range(count):
            calls.append(asyncio.ensure_future(got_at_once() if n == 1 and second_at_once else client.get("a")))
            await asyncio.sleep(0)  # the next caller comes a turn later
        return await asyncio.gather(*calls)

    for second_at_once, sent in ((False, [6]), (True, [2, 4])):
        with pipelines_sent() as pipelines:
            assert await one_a_turn(6, second_at_once=second_at_once) == [b"1"] * 6
        # the callers in each of the round trips of theirs (one command a caller; the process may send others)
        assert [len(commands) for commands in pipelines if commands[0] == ("GET", "a")] == sent, second_at_once
    await client.aclose()


async def test_callers_have_their_replies_before_the_connection_goes_back(redis_server: RedisServer,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The connection's release (redis-py's, shielded: a task of its own) comes after the callers are
    answered: a caller never waits for it."""
    client = make_redis(redis_server.url)
    await client.set("a", "1")
    released = asyncio.Event()
    release = client.connection_pool.release

    async def held_back(connection: Any) -> None:
        await released.wait()
        await release(connection)

    monkeypatch.setattr(client.connection_pool, "release", held_back)
    with at_once():
        assert await asyncio.wait_for(asyncio.gather(client.get("a"), client.mget(["a"])), 2) == [b"1", [b"1"]]
    assert not released.is_set()  # answered while the connection was still out of the pool
    released.set()
    await asyncio.sleep(0.01)
    assert await client.incr("n") == 1  # and the connection serves the next round trip
    await client.aclose()


async def test_coalescing_can_be_switched_off(redis_server: RedisServer) -> None:
    client = make_redis(redis_server.url, coalesce=False)
    await asyncio.gather(client.get("a"), client.get("b"))  # two connections opened
    with redis_round_trips() as sent:
        await asyncio.gather(client.get("a"), client.get("b"))
    assert sent == [2]
    await client.aclose()


# What a reader's screen asks for (bench/over_http.py's documents).
WARM_READS = {
    "a page of shouts": (
        """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title slug subtitle lead cover
        main_topic { slug title } authors { id slug name pic stat { shouts followers } }
        stat { rating comments_count viewed last_commented_at } } }""", {"o": {"limit": 20, "offset": 0}}),
    "a shout": ("""query($s: String) { get_shout(slug: $s) { id title slug body lead cover published_at
        authors { id slug name pic } topics { id slug title } stat { rating comments_count viewed } } }""",
                {"s": None}),
    "an author": ('query { get_author(slug: "author-2") { id slug name bio pic stat { shouts followers rating '
                  'comments } } }', {}),
    "every topic": ("{ get_topics_all { id slug title stat { shouts authors followers } } }", {}),
    "a page of reactions": ("""{ load_reactions_by(by: {}, limit: 20) { id kind body created_at
        created_by { id slug name } shout { id slug } stat { rating comments_count } } }""", {}),
}


@pytest.mark.parametrize("read", list(WARM_READS))
async def test_a_warm_read_costs_two_round_trips_and_a_hit_one(read: str, client: httpx.AsyncClient,
                                                               uncached_client: httpx.AsyncClient,
                                                               sql_counter: Any) -> None:
    """Warm (the response cache off, every value cached): what the read starts from (a composite: a page
    with its items, an entity with its slug), then everything the items need, together. A hit: the
    stored answer (a shout's hit notes its read, counted later with the other hits': app/http/hit_reads.py)."""
    query, variables = WARM_READS[read]
    if "s" in variables:
        page = await client.post("/graphql", json={"query": "{ load_shouts_by(options: {limit: 1}) { slug } }"})
        variables = {"s": page.json()["data"]["load_shouts_by"][0]["slug"]}
    body = {"query": query, "variables": variables}
    await uncached_client.post("/graphql", json=body)  # the caches warmed (and a shout's first view counted)
    first = await uncached_client.post("/graphql", json=body)
    assert "errors" not in first.json(), first.json()
    sql_counter.reset()
    with pipelines_sent() as sent, redis_round_trips() as warm:
        again = await uncached_client.post("/graphql", json=body)
    assert again.json()["data"] == first.json()["data"] and sql_counter.count == 0
    # a value over 10 KB gzip is kept in parts (seed 004), read in one round trip more: the seeded page of
    # shouts is, when no test before this one put shorter shouts first
    parts = sum(all(str(command[0]) == "MGET" and all(str(key).startswith("part:") for key in command[1:])
                    for command in pipeline) for pipeline in sent)
    assert warm == [2 + parts] and parts <= 1, (warm, sent)

    await client.post("/graphql", json=body)
    with redis_round_trips() as hit:
        stored = await client.post("/graphql", json=body)
    assert stored.headers["x-cache"] == "HIT"
    assert hit == [1], hit


def test_connection_state_and_blocking_commands_are_never_batched() -> None:
    from cache.redis.coalesce import batchable

    assert batchable([(("GET", "k"), {}), (("MGET", "a", "b"), {}), (("EVALSHA", "x", 0), {})])
    for name in ("CLIENT SETNAME", "client setname", b"BLPOP", "WATCH", "MULTI", "SELECT", "SUBSCRIBE"):
        assert not batchable([(("GET", "k"), {}), ((name, "arg"), {})]), name


async def test_a_coalesced_round_trip_carries_at_most_the_cap(redis_server: RedisServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from cache.redis import coalesce

    sizes: list[int] = []
    send = coalesce.execute_pipelined

    async def counted(client: Any, commands: list[Any], **kwargs: Any) -> None:
        sizes.append(len(commands))
        await send(client, commands, **kwargs)

    monkeypatch.setattr(coalesce, "execute_pipelined", counted)
    client = make_redis(redis_server.url, coalesce_max_commands=100)
    await client.mset({f"k{i}": str(i) for i in range(250)})
    sizes.clear()

    async def long_pipeline() -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            for i in range(150):
                pipe.get(f"k{i}")
            return await pipe.execute()

    replies = await asyncio.gather(*(client.get(f"k{i}") for i in range(250)), long_pipeline(),
                                   *(client.get(f"k{i}") for i in range(30)))
    assert replies[:250] == [str(i).encode() for i in range(250)]  # every caller its own replies
    assert replies[250] == [str(i).encode() for i in range(150)] and replies[251:] == [b"0", *replies[1:30]]
    assert sum(sizes) == 250 + 150 + 30
    assert 150 in sizes  # one caller's pipeline goes whole, alone
    assert max(size for size in sizes if size != 150) <= 100 and len(sizes) >= 5
    await client.aclose()
