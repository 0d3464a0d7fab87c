"""Redis Cluster: keys that meet in one command, script or MULTI share a slot for any id (a property test,
run on any Redis), the cache spreads over every master and degrades to the database when the cluster goes
away (a cluster of the test's own, stopped and started), and REDIS_CLUSTER is checked at start.

`make test` runs this module, with the other Redis-heavy ones, on a three-master cluster
(devtools/on_cluster.py); there the `redis` fixture is a cluster client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis
from redis.crc import key_slot
from redis.exceptions import ResponseError

from cache import keys
from cache.live.structures import structure_key
from cache.redis.client import RedisUnavailable, is_cluster, make_redis
from cache.store import MISSING, Cache
from config.settings import SettingsError, load_settings
from devtools.redis_cluster import RedisClusterServers
from tests.conftest import TEST_REDIS_CLUSTER, TEST_REDIS_URL

ids = st.integers(min_value=0, max_value=2**31 - 1)
# Every structure an entity kind has (cache/live/structures.py), and the boards of the board entity.
STRUCTURES = [("shout", "count"), ("shout", "fans"), ("shout", "comments"), ("shout", "comments:best"),
              ("shout", "comments:all"), ("author", "count"), ("author", "fans"), ("author", "following:author"),
              ("author", "following:topic"), ("author", "following:community"), ("topic", "count"),
              ("topic", "fans"), ("community", "fans"), ("comment", "comment"), ("comment", "replies"),
              ("comment", "replies:best")]
BOARDS = [("board", "shouts:rating"), ("board", "authors:followers"), ("weekly", "shouts:rating:2026-W47")]


def slot(key: str) -> int:
    return int(key_slot(key.encode()))


@given(entity=ids)
def test_an_entitys_live_structures_share_its_meta_slot(entity: int) -> None:
    """One script changes an entity's meta hash and its structures together (cache/live/structures.py)."""
    for kind, name in STRUCTURES:
        assert slot(structure_key(kind, entity, name)) == slot(keys.live_meta(kind, entity)), (kind, name)


def test_the_boards_share_their_meta_slot() -> None:
    for kind, board in BOARDS:
        assert slot(structure_key(kind, keys.BOARD_ENTITY, board)) == slot(keys.live_meta(kind, keys.BOARD_ENTITY))


@given(user=ids, token=st.text(alphabet="0123456789abcdef", min_size=40, max_size=40),
       kind=st.sampled_from(["email_verification", "password_reset", "email_change"]))
def test_a_users_sessions_and_tokens_share_a_slot(user: int, token: str, kind: str) -> None:
    """A session and its user's set change in one MULTI, as do a verification token and its pending mark."""
    assert slot(keys.session(user, token)) == slot(keys.user_sessions(user))
    assert slot(keys.verification(user, kind, token)) == slot(keys.pending_verification(user, kind))


@given(name=st.text(min_size=1, max_size=80), shout=ids, viewer=st.text(max_size=60), hour=ids)
def test_queues_views_settings_and_revalidation_share_their_slots(name: str, shout: int, viewer: str,
                                                                  hour: int) -> None:
    queue = {slot(f(name)) for f in (keys.delayed_queue, keys.delayed_leased, keys.delayed_deliveries,
                                     keys.delayed_parked, keys.delayed_errors)}
    assert len(queue) == 1
    assert len({slot(keys.views_seen(viewer, hour)), slot(keys.viewed(shout)), slot(keys.views_pending())}) == 1
    assert slot(keys.env_var(name)) == slot(keys.env_index())
    assert slot(keys.revalidation_batch("shout")) == slot(keys.revalidation_processing("shout"))


@given(first=st.integers(0, keys.CLUSTER_SLOTS - 1))
@settings(max_examples=20, deadline=None)
def test_a_nodes_failover_record_lies_in_the_slot_it_names(first: int) -> None:
    """cache/failover.py keeps each node's record in the first slot the node serves."""
    assert slot(keys.node_data_written_by(first)) == first


def test_client_text_never_chooses_a_slot() -> None:
    """Braces from a client would be a hash tag of their choosing: such text is hashed, never kept."""
    assert "{" not in keys.author_slug("{x}")
    for key in (keys.delayed_queue("{x}"), keys.env_var("A{B}"), keys.views_seen("{x}", 1)):
        assert key.count("{") == 1 and "x" not in key.lower().replace("{h", ""), key  # only the code's own tag


@pytest.mark.skipif(not TEST_REDIS_CLUSTER, reason="on the Redis Cluster run only")
async def test_cached_values_spread_over_every_master(redis: Redis, gql: Any) -> None:
    assert is_cluster(redis)
    await gql("{ get_topics_all { id slug } load_shouts_by(options: {limit: 20}) { id slug } }")
    await gql("{ get_authors_all { id slug } }")
    masters = redis.get_primaries()  # type: ignore[attr-defined]
    sizes = [await redis.dbsize(target_nodes=node) for node in masters]  # type: ignore[call-arg]
    assert len(sizes) == 3 and all(size > 0 for size in sizes), sizes


@pytest.mark.skipif(not TEST_REDIS_CLUSTER, reason="on the Redis Cluster run only")
async def test_a_pipeline_whose_node_drops_it_fails_instead_of_answering_with_the_error() -> None:
    """redis-py's cluster pipeline, asked not to raise, puts a dropped connection's error where each reply
    would be. The guard raises it instead (a caller once unpacked one as a value, an HTTP 500 under CLUSTER
    FAILOVER), while an error that is Redis's answer to one command stays in its place."""
    client = make_redis(TEST_REDIS_URL, cluster=True)
    try:
        key = "dropped:{t}"
        await client.initialize()  # type: ignore[attr-defined]
        node = client.get_node_from_key(key)  # type: ignore[attr-defined]
        own = await client.execute_command("CLIENT", "ID", target_nodes=node)  # the pool's one connection
        async with client.pipeline(transaction=False) as pipe:
            pipe.set(key, "1")
            pipe.execute_command("CLIENT", "KILL", "ID", own, "SKIPME", "no", target_nodes=node)  # answered, then closed
            pipe.get(key)  # never answered
            with pytest.raises(RedisUnavailable):
                await pipe.execute(raise_on_error=False)

        async with client.pipeline(transaction=False) as pipe:
            pipe.set(key, "1")
            pipe.hget(key, "field")  # WRONGTYPE: an answer
            pipe.get(key)
            replies = await pipe.execute(raise_on_error=False)
        assert replies[0] is True and isinstance(replies[1], ResponseError) and replies[2] == b"1", replies
    finally:
        await client.aclose()


async def test_a_cluster_that_goes_away_sends_reads_to_the_database_and_comes_back() -> None:
    """The cluster client's errors (RedisClusterException is not a RedisError in redis-py) pass the guard:
    reads become misses and the breaker opens, and once the cluster is back reads hit again."""
    async with RedisClusterServers(3) as cluster:
        redis = make_redis(cluster.url, cluster=True)
        cache = Cache(redis, breaker_seconds=0.2)
        names = [f"topic:id:{n}" for n in range(30)]  # over every master
        tags = [[keys.tag_topic(n)] for n in range(30)]
        _, stamps = await cache.get_many(names, tags)
        await cache.set_many([(name, {"id": n}, stamps[n], 600) for n, name in enumerate(names)])
        assert (await cache.get_many(names, tags))[0] == [{"id": n} for n in range(30)]

        for node in cluster.nodes:
            node.stop()
        values, stamps = await cache.get_many(names, tags)
        assert values == [MISSING] * 30 and stamps == [None] * 30  # nothing would be stored either
        assert not cache.available
        await cache.invalidate_tags([keys.tag_topic(0)])  # lost, remembered: the epoch moves on recovery
        assert cache.lost_invalidations

        for node in cluster.nodes:
            node.start()
        for node in cluster.nodes:
            await node.ready()
        for _ in range(100):  # the nodes find each other again from their saved configuration
            await asyncio.sleep(0.1)
            values, _ = await cache.get_many(names, tags)
            if cache.available and not cache.lost_invalidations:
                break
        # Redis kept nothing on disk: every value is gone, and none comes back as valid
        assert values == [MISSING] * 30 and not cache.lost_invalidations
        await redis.aclose()


def test_redis_cluster_is_checked_at_start() -> None:
    with pytest.raises(SettingsError, match="REDIS_CLUSTER"):
        load_settings(redis_cluster=True, redis_url=None)
    with pytest.raises(SettingsError, match="Sentinel"):
        load_settings(redis_cluster=True, redis_url="redis+sentinel://127.0.0.1:26379/main")
    assert load_settings(redis_cluster=True, redis_url="redis://127.0.0.1:7000/0").redis_cluster


async def test_a_writes_live_updates_land_before_its_generations_move(cache: Cache) -> None:
    """A reader that sees a write's new generation must also see its live structures' updates, or it can
    keep an answer built from the old structures under the new stamp. A Redis Cluster sends one pipeline to
    every node at once, in no order: there the updates go first, on their own, and the generations after
    them (a response-cache hit of a follow list was found stale on the cluster pass this way); on one
    server they share one pipeline, the updates first."""
    events: list[tuple[str, int]] = []
    real = cache.redis.pipeline

    def recorded(*args: Any, **kwargs: Any) -> Any:
        pipe = real(*args, **kwargs)
        execute = pipe.execute

        async def executed(*a: Any, **k: Any) -> Any:
            events.append(("sent", id(pipe)))
            return await execute(*a, **k)

        pipe.execute = executed
        return pipe

    async def live_updates(pipe: Any) -> None:
        events.append(("updates", id(pipe)))
        pipe.incr(keys.live_meta("author", 424242))

    cache.redis.pipeline = recorded  # type: ignore[method-assign]
    cache.state = cache.redis
    try:
        await cache.invalidate_tags([keys.tag_author_follows(424242)], also=live_updates)
    finally:
        cache.redis.pipeline = real  # type: ignore[method-assign]
        await cache.redis.delete(keys.live_meta("author", 424242))
    updates = events[0][1]
    if is_cluster(cache.redis):
        assert events[:2] == [("updates", updates), ("sent", updates)] and len(events) == 3
        assert events[2][0] == "sent" and events[2][1] != updates  # the generations, once the updates landed
    else:
        assert events == [("updates", updates), ("sent", updates)]  # one pipeline, the updates first
