"""Redis failing as it does in production: a real redis-server of the test's own, reached through
`make_redis` (the app's pool, timeouts and retries), stopped and started again. No private flags.

- A write whose invalidation is lost (Redis gone between the commit and the invalidation) still commits,
  and once Redis is back, with the old value still stored in it, no read serves that old value.
- While Redis is gone, reads are answered from the database; the breaker keeps them off Redis for its
  window and lets them back once the window has passed and Redis answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from app.main import wire
from cache import keys
from cache.entities import get_cached_author
from cache.redis.client import make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from orm import Author
from resolvers.deps import Deps
from resolvers.writes import transaction
from tests.helpers import until
from triggers.sink import CacheSink

BREAKER = 0.5


@pytest.fixture
async def own(redis_server: RedisServer, engine: Any, settings: Settings) -> AsyncIterator[tuple[Deps, Redis]]:
    """The app's services on the test's own Redis, with a short breaker window."""
    client = make_redis(redis_server.url)
    deps = wire(settings, engine, Cache(client, breaker_seconds=BREAKER), auth=None)
    yield deps, client
    await client.aclose()


async def _author_id(deps: Deps) -> int:
    async with deps.db() as session:
        return int(await session.scalar(select(Author.id).order_by(Author.id).offset(5).limit(1)))  # type: ignore[arg-type]


async def _until_available(cache: Cache) -> None:
    await until(lambda: cache.available, "the breaker closes")


async def test_an_invalidation_lost_after_the_commit_is_not_served_once_redis_is_back(
        own: tuple[Deps, Redis], redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    deps, client = own
    author_id = await _author_id(deps)
    before = await get_cached_author(author_id, cache=deps.cache, db=deps.db)
    assert before is not None and await client.exists(keys.author_id(author_id))  # cached

    original = CacheSink.apply

    async def redis_dies_after_the_commit(sink: CacheSink, changes: Any, *, announced: bool) -> None:
        await client.shutdown(save=True)  # its data is kept on disk, as a restarting server's is
        redis_server.stop()
        await original(sink, changes, announced=announced)

    monkeypatch.setattr(CacheSink, "apply", redis_dies_after_the_commit)
    new_bio = f"written while Redis died {author_id}"
    async with transaction(deps) as session:  # the write does not fail
        (await session.get(Author, author_id)).bio = new_bio  # type: ignore[union-attr]
    monkeypatch.setattr(CacheSink, "apply", original)
    async with deps.db() as session:
        assert (await session.get(Author, author_id)).bio == new_bio  # type: ignore[union-attr]

    redis_server.start()
    await redis_server.ready()
    raw = await client.get(keys.author_id(author_id))
    assert raw is not None and new_bio.encode() not in raw, "the old value came back with Redis"
    await _until_available(deps.cache)
    after = await get_cached_author(author_id, cache=deps.cache, db=deps.db)
    assert after is not None and after["bio"] == new_bio


async def test_reads_use_the_database_while_redis_is_gone_and_redis_again_after_the_window(
        own: tuple[Deps, Redis], redis_server: RedisServer) -> None:
    deps, client = own
    cache = deps.cache
    author_id = await _author_id(deps)
    assert await get_cached_author(author_id, cache=cache, db=deps.db) is not None
    hits = cache.stats.hits
    assert await get_cached_author(author_id, cache=cache, db=deps.db) is not None
    assert cache.stats.hits == hits + 1  # warm: served by Redis

    redis_server.stop()
    errors = cache.stats.errors
    assert (await get_cached_author(author_id, cache=cache, db=deps.db))["id"] == author_id  # type: ignore[index]
    assert cache.stats.errors == errors + 1 and not cache.available  # the breaker opened
    for _ in range(5):  # inside the window: answered by the database without trying Redis
        assert (await get_cached_author(author_id, cache=cache, db=deps.db))["id"] == author_id  # type: ignore[index]
    assert cache.stats.errors == errors + 1

    redis_server.start()
    await redis_server.ready()
    assert not cache.available  # Redis answers, but the window has not passed
    await _until_available(cache)
    hits, misses = cache.stats.hits, cache.stats.misses
    await get_cached_author(author_id, cache=cache, db=deps.db)
    assert cache.stats.hits + cache.stats.misses > hits + misses, "reads went back to Redis"
    assert await get_cached_author(author_id, cache=cache, db=deps.db) is not None
    assert await client.exists(keys.author_id(author_id))  # stored in Redis again


async def test_a_lost_write_forgets_every_epoch_before_it_answers_trying_a_refusal_again(
        redis_server: RedisServer, down: Cache, caplog: pytest.LogCaptureFixture) -> None:
    """`Cache.lose_write`: before the write answers, the global epoch, every live epoch and the invalidation
    clock are forgotten. A server that refuses (here an ACL that denies UNLINK, as a cluster failing over
    refuses every command) is tried again until it takes them, then the loss counts as contained; one that
    still refuses at `lost_write_wait` is left to the recovery (the flag stays up); one that does not
    answer at all is waited for `unreachable_write_wait` only (the next test)."""
    from telemetry import metrics

    admin = make_redis(redis_server.url)
    epochs = [keys.generation(keys.GLOBAL_TAG), keys.invalidation_clock(),
              *(keys.live_epoch(kind) for kind in keys.LIVE_KINDS)]

    async def refused_unlinks() -> int:
        stats = await admin.info("commandstats")
        return int(stats.get("cmdstat_unlink", {}).get("rejected_calls", 0))

    async def refused_at_least(n: int) -> bool:
        return await refused_unlinks() >= n

    await admin.acl_setuser("writer", enabled=True, passwords=["+secret"], keys=["~*"], channels=["*"],
                            commands=["+@all", "-unlink"])
    writer_url = redis_server.url.replace("redis://", "redis://writer:secret@")

    async def losing_with(wait: float) -> tuple[Cache, asyncio.Task[None], int, float]:
        await admin.mset(dict.fromkeys(epochs, 1))
        cache = Cache(make_redis(writer_url, coalesce=False), lost_write_wait=wait)
        refused, contained = await refused_unlinks(), metrics.LOST_WRITES_CONTAINED._value.get()
        losing = asyncio.create_task(cache.lose_write(RuntimeError("the pipeline failed"), "invalidation"))
        return cache, losing, refused, contained

    # refused, then taken: every epoch tried, tried again, and forgotten once the server takes UNLINK
    cache, losing, refused, contained = await losing_with(30.0)
    await until(lambda: refused_at_least(refused + 2 * len(epochs)), "the refused UNLINKs tried again")
    assert not losing.done() and cache.lost_invalidations and await admin.exists(*epochs) == len(epochs)
    await admin.acl_setuser("writer", enabled=True, commands=["+unlink"])
    await asyncio.wait_for(losing, 20)
    assert await admin.exists(*epochs) == 0 and cache.lost_invalidations is False
    assert metrics.LOST_WRITES_CONTAINED._value.get() - contained == 1
    assert "an update lost during invalidation was contained: the cache and live epochs were forgotten" \
        in [record.getMessage() for record in caplog.records]
    await cache.redis.aclose()

    # refused up to the deadline: the write answers; the epochs stay, and so does the flag the recovery reads
    await admin.acl_setuser("writer", enabled=True, commands=["-unlink"])
    cache, losing, refused, contained = await losing_with(0.3)
    await asyncio.wait_for(losing, 20)
    assert await refused_unlinks() >= refused + len(epochs)  # tried
    assert await admin.exists(*epochs) == len(epochs) and cache.lost_invalidations
    assert metrics.LOST_WRITES_CONTAINED._value.get() == contained
    await cache.redis.aclose()

    down.lost_write_wait = 60.0
    await asyncio.wait_for(down.lose_write(RuntimeError("gone"), "invalidation"), 20)  # not 60 s of retries
    assert down.lost_invalidations
    await admin.aclose()


async def test_a_loss_during_a_forgetting_waits_for_one_that_began_after_it(
        redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write whose invalidation is lost while the epochs are being forgotten for an earlier loss joins that
    forgetting, but does not answer on it: it began before this write's loss, whose values it may not have
    made misses. The write waits for the next forgetting; the earlier write answers on the first."""
    cache = Cache(redis)
    begun: list[int] = []
    release = asyncio.Event()
    forget = cache._forget_epochs

    async def held_first() -> list[BaseException]:
        begun.append(1)
        if len(begun) == 1:
            await release.wait()
        return await forget()

    monkeypatch.setattr(cache, "_forget_epochs", held_first)
    first = asyncio.create_task(cache.lose_write(RuntimeError("lost"), "invalidation"))
    await until(lambda: begun == [1], "the first forgetting under way")
    second = asyncio.create_task(cache.lose_write(RuntimeError("lost again"), "invalidation"))
    await asyncio.sleep(0.05)
    release.set()
    await asyncio.wait_for(first, 10)
    await asyncio.wait_for(second, 10)
    assert begun == [1, 1]  # a second forgetting, begun after the second loss
    assert cache.lost_invalidations is False


async def test_a_lost_write_waits_for_a_server_that_answers_again_and_leaves_a_longer_outage_to_the_recovery(
        ) -> None:
    """Behind Sentinel one worker may not reach the promoted replica yet (its attempt goes to the dead
    master, or no master is named) while another reads there: `lose_write` tries a server that does not
    answer again, and answers once the epochs are forgotten there. The server here keeps its data across a
    restart (an append-only file), so the epochs are there to forget when it answers again. The control: a
    server that stays away past `unreachable_write_wait` lets the write answer with the loss left, which
    the background round (`recover_quietly`) contains as soon as the server answers."""
    from telemetry import metrics

    epochs = [keys.generation(keys.GLOBAL_TAG), keys.invalidation_clock(),
              *(keys.live_epoch(kind) for kind in keys.LIVE_KINDS)]

    async def held(server: RedisServer, mset: bool = False) -> int:
        """How many of the epochs the server holds (set first with `mset`), by a connection of its own."""
        admin = Redis.from_url(server.url)
        try:
            if mset:
                await admin.mset(dict.fromkeys(epochs, 1))
            return int(await admin.exists(*epochs))
        finally:
            await admin.aclose()

    async with RedisServer(options=("--appendonly", "yes")) as server:
        cache = Cache(make_redis(server.url, coalesce=False), unreachable_write_wait=30.0)
        try:
            # back within the wait: contained there before the write answers
            await held(server, mset=True)
            server.stop()
            contained = metrics.LOST_WRITES_CONTAINED._value.get()
            losing = asyncio.create_task(cache.lose_write(RuntimeError("the pipeline failed"), "invalidation"))
            await asyncio.sleep(0.5)
            assert not losing.done(), "a write whose containment reached no server answered at once"
            server.start()
            await asyncio.wait_for(losing, 20)
            assert await held(server) == 0 and not cache.lost_invalidations
            assert metrics.LOST_WRITES_CONTAINED._value.get() - contained == 1

            # away past the wait: the write answers, the loss stays until the background round
            await held(server, mset=True)
            cache.unreachable_write_wait = 0.3
            server.stop()
            await asyncio.wait_for(cache.lose_write(RuntimeError("the pipeline failed"), "invalidation"), 20)
            assert cache.lost_invalidations
            await cache.recover_quietly()  # still away: tried, and left for the next round
            assert cache.lost_invalidations
            server.start()
            await server.ready()
            assert await held(server) == len(epochs)  # what the server held survived the restart
            await cache.recover_quietly()
            assert await held(server) == 0 and not cache.lost_invalidations
        finally:
            await cache.redis.aclose()


async def test_readers_at_one_moment_join_one_recovery_and_a_loss_during_it_is_recovered_too(
        redis_server: RedisServer) -> None:
    """`Cache.recover_if_needed`: readers that find a loss at the same moment join one recovery (each
    forgetting the epochs again would make a miss of what the others stored meanwhile), and a loss that
    comes while a recovery is under way is not cleared by it: another recovery follows."""
    epochs = len(keys.LIVE_KINDS) + 3  # every live epoch, the WAL floor, the global epoch and the clock
    admin = make_redis(redis_server.url, coalesce=False)
    cache = Cache(make_redis(redis_server.url, coalesce=False))

    async def unlinks() -> int:
        return int((await admin.info("commandstats")).get("cmdstat_unlink", {}).get("calls", 0))

    try:
        cache.lose(RuntimeError("lost"), "invalidation")
        before = await unlinks()
        await asyncio.gather(*(cache.recover_if_needed() for _ in range(10)))
        assert await unlinks() - before == epochs and not cache.lost_invalidations

        cache.lose(RuntimeError("lost"), "invalidation")
        before = await unlinks()
        redis_server.pause()  # the recovery's commands wait in the socket
        recovering = asyncio.create_task(cache.recover_if_needed())
        await asyncio.sleep(0.2)
        cache.lose(RuntimeError("lost while recovering"), "live update")
        redis_server.resume()
        await asyncio.wait_for(recovering, 10)
        assert await unlinks() - before == 2 * epochs and not cache.lost_invalidations
    finally:
        await admin.aclose()
        await cache.redis.aclose()
