"""The per-worker pub/sub hub on real Redis: one connection for any number of subscribers, a subscriber
that does not read is dropped without slowing the others, and a lost connection is made again with every
channel subscribed anew."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from app.main import create_app, wire
from auth.services import build_auth
from cache import keys
from cache.messaging.pubsub import Event, Hub, SubscriberTooSlow, publish
from cache.redis.client import is_cluster, make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from orm import Shout
from orm.stats import is_listed
from resolvers.deps import Deps
from schema.context import Context, Loaders
from schema.schema import build_schema
from tests.helpers import Api
from tests.live import subscribed

SUBSCRIBERS = 1000
SHOUTS = 10


async def _pubsub_connections(redis: Redis) -> int:
    return len(await redis.client_list(_type="pubsub"))


@pytest.fixture
async def own(redis_server: RedisServer, engine: Any, settings: Settings) -> AsyncIterator[tuple[Api, Deps]]:
    """The app on a Redis server of the test's own: pub/sub channels and CLIENT LIST are server-wide (not
    per db number), so another client of a shared server would publish into the test or count as one."""
    redis = make_redis(redis_server.url)
    deps = wire(settings, engine, Cache(redis), auth=build_auth(settings, redis))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=deps)),
                                 base_url="http://test") as client:
        yield Api(client, deps), deps
    await deps.hub.close()
    await redis.aclose()


async def test_a_thousand_graphql_subscribers_cost_one_redis_connection(own: tuple[Api, Deps]) -> None:
    """1,000 `shout_reactions` subscriptions over 10 shouts, through the GraphQL schema, on one worker's hub:
    one pub/sub connection more on the server, and one comment per shout reaches each of its subscribers."""
    api, deps = own
    redis = deps.cache.redis
    async with deps.db() as session:
        shouts = list((await session.scalars(select(Shout.id).where(is_listed()).order_by(Shout.id)
                                             .limit(SHOUTS))).all())
    before = await _pubsub_connections(redis)
    schema = build_schema()
    query = "subscription($s: Int!) { shout_reactions(shout_id: $s) { action reaction { id shout { id } } } }"
    received: dict[int, list[Any]] = {n: [] for n in range(SUBSCRIBERS)}
    streams = []
    for n in range(SUBSCRIBERS):
        context = Context(deps=deps, loaders=Loaders.create(deps))
        streams.append(await schema.subscribe(query, {"s": shouts[n % SHOUTS]}, context_value=context))

    async def consume(n: int) -> None:
        async for result in streams[n]:
            assert not result.errors, result.errors
            received[n].append(result.data)

    tasks = [asyncio.create_task(consume(n)) for n in range(SUBSCRIBERS)]
    try:
        for _ in range(3000):  # every subscription has reached the hub
            if deps.hub.subscribers == SUBSCRIBERS:
                break
            await asyncio.sleep(0.01)
        assert deps.hub.subscribers == SUBSCRIBERS
        for shout in shouts:
            await subscribed(redis, keys.channel_shout(shout))
        assert await _pubsub_connections(redis) == before + 1

        user = await api.user()
        comments = {}
        for shout in shouts:
            created = await api("mutation($s: Int!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"!\"}) "
                                "{ reaction { id } } }", {"s": shout}, user)
            comments[shout] = created["reaction"]["id"]
        for _ in range(500):
            if all(received.values()):
                break
            await asyncio.sleep(0.01)
        for n in range(SUBSCRIBERS):
            shout = shouts[n % SHOUTS]
            assert [r["shout_reactions"]["reaction"]["id"] for r in received[n]] == [comments[shout]], n
            assert received[n][0]["shout_reactions"]["reaction"]["shout"]["id"] == shout
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(200):  # every subscriber gone: the hub gives its connection back
        if await _pubsub_connections(redis) == before:
            break
        await asyncio.sleep(0.02)
    assert deps.hub.subscribers == 0 and await _pubsub_connections(redis) == before


async def test_a_subscriber_that_never_reads_is_dropped_and_the_others_keep_receiving(redis: Redis) -> None:
    hub = Hub(redis, queue_size=10)
    channel = keys.channel_shout(987654)
    overflowed: list[str] = []
    slow = await hub.subscribe([channel], on_overflow=lambda: overflowed.append("slow"))
    readers = [await hub.subscribe([channel]) for _ in range(3)]
    got: list[list[bytes]] = [[] for _ in readers]

    async def read(n: int) -> None:
        async for _channel, message in readers[n]:
            got[n].append(message)

    tasks = [asyncio.create_task(read(n)) for n in range(len(readers))]
    try:
        await subscribed(redis, channel)
        messages = [Event("test", "shout", i, "create").encode() for i in range(50)]
        await publish(redis, [(channel, m) for m in messages])
        for _ in range(300):
            if all(len(g) == len(messages) for g in got):
                break
            await asyncio.sleep(0.01)
        assert got == [messages] * len(readers)  # every message, in order, to every reader
        assert overflowed == ["slow"] and slow.dropped and hub.subscribers == len(readers)
        with pytest.raises(SubscriberTooSlow):  # the slow one learns it was dropped when it reads again
            async for _ in slow:
                pass
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await hub.close()


async def test_the_hub_resubscribes_when_its_connection_is_lost(redis: Redis) -> None:
    hub = Hub(redis)
    channels = [keys.channel_topic(424242), keys.CHANNEL_GLOBAL]
    sub = await hub.subscribe(channels)
    got: list[tuple[str, bytes]] = []

    async def read() -> None:
        async for item in sub:
            got.append(item)

    task = asyncio.create_task(read())
    try:
        await subscribed(redis, channels[0])
        # what a Redis restart does to the connection (on a cluster: on every node, the hub's among them)
        await redis.client_kill_filter(_type="pubsub", **({"target_nodes": "all"} if is_cluster(redis) else {}))
        for _ in range(300):  # published until it arrives: nothing is promised while the hub reconnects
            await publish(redis, [(channels[0], b'{"after": "outage"}')])
            if got:
                break
            await asyncio.sleep(0.05)
        assert got and got[0] == (channels[0], b'{"after": "outage"}') and hub.reconnects >= 1
        await subscribed(redis, channels[1])  # every channel came back, not just the one that was used
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await hub.close()


def test_messages_carry_the_seeds_actions_and_come_back_as_the_events_verbs() -> None:
    """On the wire, `action` is seed 000's `created` / `updated` / `deleted` (an outside listener written for
    the seed understands every message); decoded, each event has its own verb back (GraphQL subscription
    payloads show what the 2025 client expects)."""
    import orjson

    for type_, verb, seed in (("reaction", "create", "created"), ("reaction", "update", "updated"),
                              ("reaction", "delete", "deleted"), ("follower", "follow", "created"),
                              ("publication", "publish", "created"), ("invite", "accept", "updated")):
        encoded = Event(type_, "x", 1, verb).encode()
        assert orjson.loads(encoded)["action"] == seed, (type_, verb)
        decoded = Event.decode(encoded)
        assert decoded is not None and decoded.action == verb, (type_, verb)


def test_an_event_encoded_for_many_is_each_ones_own_encoding() -> None:
    event = Event("reaction", "reaction", 7, "create", {"body": '"user_id":null and {"type": 1}', "n": [1, 2]})
    people = [1, 42, 2**40]
    assert event.encode_to(people) == [event.to(person).encode() for person in people]
    assert [Event.decode(raw).user_id for raw in event.encode_to(people)] == people  # type: ignore[union-attr]


async def test_messages_are_published_as_sent_a_script_call_per_fifty(redis_server: RedisServer) -> None:
    """`publish` on one server sends a pipeline's messages as script calls of PUBLISH_PER_CALL messages each
    (an event for a discussion's followers is a message per follower): every message arrives, its bytes
    as they were given, in order on each channel. On a cluster each is a PUBLISH of its own."""
    from cache.messaging.pubsub import PUBLISH_BATCH
    from cache.redis.limits import PUBLISH_PER_CALL
    from tests.helpers import pipelines_sent

    redis = make_redis(redis_server.url)
    listener = redis.pubsub()
    channels = ["notifications:1", "notifications:2", "notifications:shout:3"]
    await listener.subscribe(*channels)
    for _ in channels:
        await listener.get_message(timeout=1)  # the subscription confirmations
    sent = [(channels[n % 3], b'{"n": %d, "bytes": "\xd0\xb6"}' % n) for n in range(PUBLISH_BATCH + 30)]
    try:
        with pipelines_sent() as pipelines:
            assert await publish(redis, sent) == len(sent)
        received = []
        while len(received) < len(sent) and (message := await listener.get_message(timeout=2)) is not None:
            received.append((message["channel"].decode(), message["data"]))
    finally:
        await listener.aclose()
        await redis.aclose()
    assert received == sent
    calls = [[command[0] for command in pipeline] for pipeline in pipelines]
    assert calls == [["EVAL"] * -(-PUBLISH_BATCH // PUBLISH_PER_CALL), ["EVAL"]]  # 130 messages: 100, then 30
