"""CacheRevalidationManager against real Redis: the two batch paths around the threshold, `all`,
marks arriving during processing, one processor at a time, and a Redis that stops and comes back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import func, select, text

from cache import keys
from cache.live.counters import get_counters
from cache.revalidator import CacheRevalidationManager
from cache.store import Cache
from devtools.services import RedisServer
from orm import Author, Community, Reaction, Shout, Topic
from orm.stats import is_listed
from resolvers.deps import Deps
from tests.helpers import Api, until


async def _listed_shouts(deps: Deps, count: int) -> list[int]:
    async with deps.db() as session:
        return list((await session.scalars(select(Shout.id).where(is_listed()).order_by(Shout.id).limit(count))).all())


async def _gen(redis: Redis, tag: str) -> bytes | None:
    return await redis.get(keys.generation(tag))


@pytest.mark.parametrize("count, collections_invalidated", [(9, False), (10, True), (11, True)])
async def test_threshold_chooses_the_path(deps: Deps, redis: Redis, sql_counter: Any, count: int,
                                          collections_invalidated: bool) -> None:
    manager = deps.revalidator
    assert manager is not None
    await deps.cache.get_cached_data("warm", tags=[keys.TAG_SHOUTS])  # the family's generation exists
    family_before = await _gen(redis, keys.TAG_SHOUTS)
    ids = await _listed_shouts(deps, count)
    for shout_id in ids:
        await manager.mark_for_revalidation(shout_id, "shout")
    sql_counter.reset()
    assert await manager.process_revalidation() == {"shout": count}
    family_after = await _gen(redis, keys.TAG_SHOUTS)
    # Either way the marked shouts' counters are recounted in one batch (two statements, any count).
    recount = [s for s in sql_counter.statements if "FROM reaction" in s or "FROM author_bookmark" in s]
    assert len(recount) == 2
    for shout_id in ids:
        assert await redis.exists(keys.counters("shout", shout_id))
    if collections_invalidated:
        assert family_after != family_before and sql_counter.count == len(recount)
    else:  # one by one: each shout recomputed and re-cached, the collections left alone
        assert family_after == family_before and sql_counter.count > len(recount)
        for shout_id in ids:
            assert await redis.exists(keys.shout_id(shout_id))
    assert not await redis.exists(keys.revalidation_batch("shout"))
    assert not await redis.exists(keys.revalidation_processing("shout"))


async def test_authors_are_recomputed_one_by_one(deps: Deps, redis: Redis) -> None:
    manager = deps.revalidator
    assert manager is not None
    await manager.mark_many([("author", "3"), ("author", "4")])
    assert await manager.process_revalidation() == {"author": 2}
    assert await redis.exists(keys.author_id(3)) and await redis.exists(keys.author_id(4))


async def test_all_invalidates_every_entry_of_a_type(deps: Deps, redis: Redis) -> None:
    manager = deps.revalidator
    assert manager is not None
    await deps.cache.get_cached_data("warm", tags=[keys.tag_entities("topic")])
    before = await _gen(redis, keys.tag_entities("topic"))
    await manager.mark_for_revalidation("all", "topic")
    await manager.process_revalidation()
    assert await _gen(redis, keys.tag_entities("topic")) != before


async def test_marks_during_processing_wait_for_the_next_round(deps: Deps, redis: Redis,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    manager = deps.revalidator
    assert manager is not None
    await manager.mark_for_revalidation(1, "topic")
    original = manager._revalidate

    async def revalidate_and_meanwhile_mark(entity_type: str, ids: list[str], **how: Any) -> bool:
        await manager.mark_for_revalidation(2, "topic")  # arrives while the batch runs
        return await original(entity_type, ids, **how)

    monkeypatch.setattr(manager, "_revalidate", revalidate_and_meanwhile_mark)
    assert await manager.process_revalidation() == {"topic": 1}
    assert await redis.smembers(keys.revalidation_batch("topic")) == {b"2"}
    monkeypatch.setattr(manager, "_revalidate", original)
    assert await manager.process_revalidation() == {"topic": 1}


async def test_two_workers_never_process_the_same_batch(deps: Deps, cache: Cache) -> None:
    first = deps.revalidator
    assert first is not None
    second = CacheRevalidationManager(cache, deps.db, deps.live)
    assert second.rounds == 0  # the count tests wait on for "a round ran" (tests/drills/test_outage_rules.py)
    await first.mark_many([("author", str(i)) for i in range(1, 31)])
    results = await asyncio.gather(first.process_revalidation(), second.process_revalidation())
    handled = [r.get("author", 0) for r in results]
    assert sorted(handled) == [0, 30]  # one took the lock and the whole batch, the other nothing


async def test_a_crashed_batch_is_picked_up_again(deps: Deps, redis: Redis) -> None:
    manager = deps.revalidator
    assert manager is not None
    await redis.sadd(keys.revalidation_processing("author"), "9")  # left by a worker that died
    await manager.mark_for_revalidation(10, "author")
    assert await manager.process_revalidation() == {"author": 2}


async def test_the_loop_survives_redis_stopping_and_coming_back(deps: Deps, redis_server: RedisServer) -> None:
    redis = Redis.from_url(redis_server.url, socket_connect_timeout=0.5, socket_timeout=0.5)
    manager = CacheRevalidationManager(Cache(redis, breaker_seconds=0), deps.db, deps.live, interval=0.05)
    await manager.start()
    await manager.mark_for_revalidation(2, "author")

    async def revalidated(author: int, after: int) -> bool:
        return manager.rounds > after and bool(await redis.exists(keys.author_id(author)))

    await until(lambda: revalidated(2, 0), "the first round revalidates the author")
    redis_server.stop()
    failed = manager.failed_rounds
    await until(lambda: manager.failed_rounds >= failed + 3, "several rounds fail while Redis is gone")
    assert manager.running
    redis_server.start()
    await redis_server.ready()
    rounds = manager.rounds
    await manager.mark_for_revalidation(3, "author")
    await until(lambda: revalidated(3, rounds), "the loop reconnected by itself")
    await manager.stop()
    await redis.aclose()


async def test_precache_runs_once_among_workers(deps: Deps, cache: Cache, redis: Redis) -> None:
    from cache.precache import precache_data

    await redis.hset("session:1:abc", "user_id", "1")
    results = await asyncio.gather(precache_data(deps.cache, deps.db), precache_data(Cache(redis), deps.db))
    assert sorted(results) == [False, True]
    assert await redis.exists(keys.topic_id(1)) and await redis.exists(keys.community_id(1))
    assert await redis.hgetall("session:1:abc") == {b"user_id": b"1"}  # session keys untouched


async def test_a_worker_starting_later_does_not_warm_again(deps: Deps, redis: Redis, sql_counter: Any) -> None:
    from cache.precache import DONE_TTL, precache_data

    assert await precache_data(deps.cache, deps.db) is True
    assert 0 < await redis.ttl(keys.precache_done()) <= DONE_TTL
    sql_counter.reset()
    assert await precache_data(Cache(redis), deps.db) is False  # the lock is free, the work is done
    assert sql_counter.count == 0
    await redis.flushdb()  # Redis emptied: the marker went with the values
    assert await precache_data(Cache(redis), deps.db) is True


async def test_precache_forced_held_unreachable_and_in_batches(deps: Deps, redis: Redis, monkeypatch: Any) -> None:
    """`discours cache precache` forces a warming already done; a worker holding `lock:precache` keeps the
    others out, forced or not; with Redis unreachable it gives up quietly; entities are read in batches of
    at most 100 (seed 004) and the progress count ends at the number warmed."""
    import cache.precache as precache
    from cache.redis.client import make_redis
    from cache.redis.locks import RedisLock

    assert await precache.precache_data(deps.cache, deps.db) is True
    assert await precache.precache_data(deps.cache, deps.db) is False
    batches: list[int] = []
    warmed = precache.get_cached_entities

    async def counted(kind: str, ids: list[int], **kwargs: Any) -> Any:
        batches.append(len(ids))
        return await warmed(kind, ids, **kwargs)

    monkeypatch.setattr(precache, "get_cached_entities", counted)
    progress: list[int] = []
    await redis.delete(keys.topic_id(1))
    assert await precache.precache_data(deps.cache, deps.db, authors=150, force=True, progress=progress.append)
    assert await redis.exists(keys.topic_id(1))  # warmed again
    expected = 0
    async with deps.db() as session:
        for model, limit in ((Topic, 10_000), (Community, 1000), (Author, 150)):
            expected += min(limit, int(await session.scalar(select(func.count()).select_from(model)) or 0))
    assert progress == sorted(progress) and progress[-1] == expected == sum(batches)
    assert max(batches) <= 100 and len(batches) >= 2

    holder = RedisLock(redis, "precache", ttl_ms=5000)
    assert await holder.acquire()
    assert await precache.precache_data(deps.cache, deps.db, force=True) is False
    await holder.release()

    dead = make_redis("redis://127.0.0.1:1/0")
    assert await precache.precache_data(Cache(dead), deps.db) is False
    await dead.aclose()


async def test_precache_reads_in_batches_of_100_every_id_once_lowest_ids_first(
        deps: Deps, redis: Redis, monkeypatch: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Whatever a kind's number of rows, each id is warmed exactly once, in batches of at most 100 (seed
    004); each kind's ids are read lowest first up to its bound (10,000 topics, 1,000 communities, the
    `authors` asked), so which authors a small bound warms does not depend on the table's physical order."""
    import cache.precache as precache

    real_ids = precache._ids
    asked: dict[str, tuple[list[int], int]] = {}

    async def ids(db: Any, column: Any, limit: int) -> list[int]:
        found = await real_ids(db, column, limit)
        asked[column.class_.__name__] = (found, limit)
        return list(range(1, 251)) if column is Topic.id else found  # a kind of more than two batches

    batches: list[tuple[str, list[int]]] = []

    async def counted(kind: str, batch: list[int], **_kwargs: Any) -> Any:
        batches.append((kind, list(batch)))
        return {}

    async with deps.db() as session:  # the lowest author, moved to the end of the heap by an update
        lowest = await session.scalar(select(func.min(Author.id)))
        await session.execute(text("UPDATE author SET bio = coalesce(bio, '') WHERE id = :id"), {"id": lowest})
        await session.commit()
    monkeypatch.setattr(precache, "_ids", ids)
    monkeypatch.setattr(precache, "get_cached_entities", counted)
    with caplog.at_level("INFO", logger="cache.precache"):
        assert await precache.precache_data(deps.cache, deps.db, authors=2, force=True) is True
    assert [r.getMessage() for r in caplog.records if r.name == "cache.precache"] == ["precache done"]
    topics = [batch for kind, batch in batches if kind == "topic"]
    assert [len(batch) for batch in topics] == [100, 100, 50]
    assert [i for batch in topics for i in batch] == list(range(1, 251))
    assert {kind: limit for kind, (_, limit) in asked.items()} == {"Topic": 10_000, "Community": 1000, "Author": 2}
    authors, _ = asked["Author"]
    assert authors == sorted(authors) and authors[0] == lowest


async def test_precache_found_done_once_it_holds_the_lock_does_nothing(
        deps: Deps, redis: Redis, sql_counter: Any, monkeypatch: Any) -> None:
    """Another worker finished the warming between this one's check and its lock: it lets the lock go and
    says it did not warm (False), reading nothing."""
    import cache.precache as precache

    class LateLock(precache.RedisLock):
        async def acquire(self) -> bool:
            await redis.set(keys.precache_done(), 1, ex=60)  # the other worker, just done
            return await super().acquire()

    monkeypatch.setattr(precache, "RedisLock", LateLock)
    sql_counter.reset()
    assert await precache.precache_data(deps.cache, deps.db) is False
    assert sql_counter.count == 0 and not await redis.exists(keys.lock("precache"))


async def test_precache_with_redis_unreachable_says_why(deps: Deps, caplog: pytest.LogCaptureFixture) -> None:
    from cache.precache import precache_data
    from cache.redis.client import make_redis

    dead = make_redis("redis://127.0.0.1:1/0")
    with caplog.at_level("WARNING", logger="cache.precache"):
        assert await precache_data(Cache(dead), deps.db) is False
    await dead.aclose()
    [record] = [r for r in caplog.records if r.name == "cache.precache"]
    assert record.getMessage().startswith("precache skipped: Redis unavailable (") and "127.0.0.1:1" in record.getMessage()


async def test_a_round_recounts_marked_shouts_in_batches_of_100_and_says_so(
        deps: Deps, redis: Redis, monkeypatch: Any) -> None:
    """More than a hundred marked shouts are recounted in batches of at most 100 (seed 004), each id once;
    the round is counted once, and the metrics name the type it handled (how many, and one batch timed)."""
    import cache.revalidator as revalidator
    from telemetry import metrics

    manager = deps.revalidator
    assert manager is not None
    batches: list[list[int]] = []

    async def counted(kind: str, ids: list[int], **_kwargs: Any) -> dict[int, Any]:
        batches.append(list(ids))
        return {}

    monkeypatch.setattr(revalidator, "get_counters", counted)
    monkeypatch.setattr(manager.cache, "invalidate_tags", lambda *_a, **_k: asyncio.sleep(0))
    ids = list(range(1, 151))
    await manager.mark_many([("shout", str(i)) for i in ids])
    rounds, handled = manager.rounds, metrics.REVALIDATED.labels("shout")._value.get()
    timed = metrics.REVALIDATION_BATCH_SECONDS.labels("shout")._sum.get()
    assert await manager.process_revalidation() == {"shout": 150}
    assert [len(batch) for batch in batches] == [100, 50] and sorted(i for batch in batches for i in batch) == ids
    assert manager.rounds == rounds + 1
    assert metrics.REVALIDATED.labels("shout")._value.get() - handled == 150
    assert metrics.REVALIDATION_BATCH_SECONDS.labels("shout")._sum.get() > timed


async def test_a_round_whose_lock_release_fails_still_ends(deps: Deps, monkeypatch: Any) -> None:
    """Redis failing as the round lets its lock go (the lock then lapses by itself) does not fail the
    round: what it handled is done."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    import cache.revalidator as revalidator

    async def fails(_self: Any) -> None:
        raise RedisConnectionError("gone as the lock is released")

    manager = deps.revalidator
    assert manager is not None
    monkeypatch.setattr(revalidator.RedisLock, "release", fails)
    rounds = manager.rounds
    assert await manager.process_revalidation() == {}
    assert manager.rounds == rounds + 1


async def test_revalidation_starting_without_redis_says_so_and_runs(
        deps: Deps, caplog: pytest.LogCaptureFixture) -> None:
    from cache.redis.client import make_redis

    dead = make_redis("redis://127.0.0.1:1/0")
    manager = CacheRevalidationManager(Cache(dead), deps.db, deps.live, interval=60)
    with caplog.at_level("WARNING", logger="cache.revalidator"):
        await manager.start()
    try:
        assert manager.running
        [record] = [r for r in caplog.records if r.name == "cache.revalidator"]
        message = record.getMessage()
        assert message.startswith("revalidation starts without Redis (") and "127.0.0.1:1" in message
        assert message.endswith("); it will retry every round")
    finally:
        await manager.stop()
        await dead.aclose()


async def test_a_write_marks_what_it_touched(api: Api, deps: Deps, redis: Redis) -> None:
    """The marks of a committed rating name the shout, the reaction and the authors it changes."""
    reader = await api.user()
    shout_id = (await _listed_shouts(deps, 1))[0]
    created = await api("mutation($s: Int!) { create_reaction(reaction: {kind: LIKE, shout: $s}) "
                        "{ reaction { id } } }", {"s": shout_id}, reader)
    reaction_id = created["reaction"]["id"]
    assert str(shout_id).encode() in await redis.smembers(keys.revalidation_batch("shout"))
    assert str(reaction_id).encode() in await redis.smembers(keys.revalidation_batch("reaction"))
    assert str(reader.id).encode() in await redis.smembers(keys.revalidation_batch("author"))


@pytest.mark.parametrize("kind, entity_id", [("author", 3), ("shout", 0)])
async def test_revalidation_corrects_drifted_counters(deps: Deps, redis: Redis, kind: str, entity_id: int) -> None:
    """Seed 002's reconciliation: a live counter that drifted from the rows (a lost increment) is recounted
    from SQL when its entity is revalidated."""
    manager = deps.revalidator
    assert manager is not None
    entity_id = entity_id or (await _listed_shouts(deps, 1))[0]
    true = (await get_counters(kind, [entity_id], live=deps.live, db=deps.db))[0]
    key = keys.counters(kind, entity_id)
    field = sorted(k for k in await redis.hkeys(key) if not k.startswith(b"_"))[0]
    await redis.hset(key, field, 987_654)  # drift
    await manager.mark_for_revalidation(entity_id, kind)
    await manager.process_revalidation()
    assert (await get_counters(kind, [entity_id], live=deps.live, db=deps.db))[0] == true
    assert await redis.hget(key, field) != b"987654"


async def test_a_marked_author_is_recomputed_and_recached(deps: Deps, engine: Any, redis: Redis,
                                                          client: Any) -> None:
    """A row changed behind the ORM's back (no trigger saw it) is read again and cached at once when its
    entity is revalidated (the hot entry never goes cold and never stays wrong), and its tag moves, so
    whole responses built on the old row are refreshed too."""
    manager = deps.revalidator
    assert manager is not None
    read = {"query": "{ get_author(author_id: 3) { id bio } }"}
    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "MISS"
    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "HIT"
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE author SET bio = 'changed under the cache' WHERE id = 3"))
    await manager.mark_for_revalidation(3, "author")
    await manager.process_revalidation()
    assert b"changed under the cache" in await redis.get(keys.author_id(3))
    after = await client.post("/graphql", json=read)
    assert after.json()["data"]["get_author"]["bio"] == "changed under the cache"


async def test_batch_mode_moves_each_marked_shout_and_reaction_lists(deps: Deps, redis: Redis) -> None:
    manager = deps.revalidator
    assert manager is not None
    shouts = await _listed_shouts(deps, 10)
    async with deps.db() as session:
        reactions = list((await session.scalars(select(Reaction.id).order_by(Reaction.id).limit(10))).all())
        few = list((await session.execute(select(Reaction.id, Reaction.shout).order_by(Reaction.id.desc())
                                          .limit(3))).all())
    tags = [keys.tag_shout(s) for s in shouts] + [keys.tag_entities("reaction")] + \
        [keys.tag_shout_reactions(shout) for _, shout in few]
    for tag in tags:
        await redis.set(keys.generation(tag), 100)
    for s in shouts:
        await manager.mark_for_revalidation(s, "shout")
    for r in reactions:
        await manager.mark_for_revalidation(r, "reaction")
    await manager.process_revalidation()
    assert b"100" not in [await _gen(redis, keys.tag_shout(s)) for s in shouts]  # each moved
    assert await _gen(redis, keys.tag_entities("reaction")) != b"100"  # ten reactions: their lists, by family
    for r, _ in few:  # below the threshold: the shouts' reaction lists, one by one
        await manager.mark_for_revalidation(r, "reaction")
    await manager.process_revalidation()
    assert b"100" not in {await _gen(redis, keys.tag_shout_reactions(shout)) for _, shout in few}


async def test_marked_shouts_are_recounted_in_batches_of_100(deps: Deps, sql_counter: Any) -> None:
    """Seed 004: no command or statement over 100 items; 101 marked shouts are recounted in two batches."""
    manager = deps.revalidator
    assert manager is not None
    shouts = await _listed_shouts(deps, 101)
    assert len(shouts) == 101
    for s in shouts:
        await manager.mark_for_revalidation(s, "shout")
    sql_counter.reset()
    await manager.process_revalidation()
    recount = [s for s in sql_counter.statements if "FROM reaction" in s or "FROM author_bookmark" in s]
    assert len(recount) == 4  # two statements per batch


async def test_queue_depth_counts_marked_and_in_processing(deps: Deps, redis: Redis) -> None:
    """What the metrics report as waiting per kind: ids marked, plus ids taken by a round not done."""
    await redis.sadd(keys.revalidation_batch("shout"), "1", "2")
    await redis.sadd(keys.revalidation_processing("shout"), "3")
    await redis.sadd(keys.revalidation_batch("author"), "4")
    assert deps.revalidator is not None
    assert await deps.revalidator.queue_depth() == {"author": 1, "topic": 0, "community": 0, "shout": 3,
                                                    "reaction": 0}


async def test_the_revalidation_and_precache_locks_expire(deps: Deps, redis: Redis, monkeypatch: Any) -> None:
    """A worker that dies holding a lock must not stop the others for good: both locks have a TTL."""
    import cache.precache
    from cache.precache import precache_data

    revalidator = deps.revalidator
    assert revalidator is not None
    seen: dict[str, int] = {}
    take = revalidator._round_of

    async def noting_take(entity_type: str, lock: Any) -> int | None:
        seen.setdefault("revalidation", await redis.pttl(keys.lock("revalidation")))
        return await take(entity_type, lock)

    monkeypatch.setattr(revalidator, "_round_of", noting_take)
    await revalidator.mark_for_revalidation(5, "author")
    await revalidator.process_revalidation()
    entities = cache.precache.get_cached_entities

    async def noting_entities(*args: Any, **kwargs: Any) -> Any:
        seen.setdefault("precache", await redis.pttl(keys.lock("precache")))
        return await entities(*args, **kwargs)

    monkeypatch.setattr(cache.precache, "get_cached_entities", noting_entities)
    assert await precache_data(deps.cache, deps.db, force=True)
    assert 0 < seen["revalidation"] <= revalidator.lock_ttl_ms and 0 < seen["precache"] <= 60_000, seen


async def test_precache_warms_as_many_authors_as_asked(deps: Deps, redis: Redis) -> None:
    from cache.precache import precache_data

    assert await precache_data(deps.cache, deps.db, authors=3, force=True)
    assert len([k async for k in redis.scan_iter(match="author:id:*")]) == 3


async def test_a_loop_stops_even_when_its_round_swallows_the_cancellation() -> None:
    """A cancellation that lands as a round's timeout fires comes out as that timeout (Python 3.11's and
    redis-py's timeouts): the loop took it for a failed round and went on, and `stop()` waited for ever."""
    from redis.exceptions import TimeoutError as RedisTimeoutError

    from cache.periodic import Periodic

    in_round = asyncio.Event()
    swallowed: list[bool] = []
    rounds: list[int] = []

    async def round_() -> None:
        rounds.append(1)
        in_round.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            if swallowed:  # only the first: a failing run of this test must not leave a loop behind
                raise
            swallowed.append(True)
            raise RedisTimeoutError("Timeout reading from socket") from None

    loop = Periodic("swallowing", 0.01, round_)
    loop.start()
    await asyncio.wait_for(in_round.wait(), 5)
    await asyncio.wait_for(loop.stop(), 10)
    # Before the fix the loop went on to a second round, where only stop() being given up on ended it.
    assert swallowed and loop.failed == 1 and len(rounds) == 1 and not loop.running


async def test_a_round_handles_its_marks_in_bounded_chunks(deps: Deps, redis: Redis,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 004: no command and no reply grows with the queue; 250 marks are moved and handled a hundred
    at a time, every one of them handled once."""
    manager = deps.revalidator
    assert manager is not None
    chunks: list[list[str]] = []
    original = manager._revalidate

    async def noting(entity_type: str, ids: list[str], **how: Any) -> bool:
        chunks.append(ids)
        return await original(entity_type, ids, **how)

    monkeypatch.setattr(manager, "_revalidate", noting)
    await manager.mark_many([("topic", str(900_000 + i)) for i in range(250)])
    assert await manager.process_revalidation() == {"topic": 250}
    assert [len(c) for c in chunks] == [100, 100, 50]  # on one SMEMBERS of everything: [250]
    assert sorted(i for c in chunks for i in c) == sorted(str(900_000 + i) for i in range(250))
    assert not await redis.exists(keys.revalidation_processing("topic"), keys.revalidation_batch("topic"))


async def test_authors_are_recomputed_in_one_batch_whatever_their_number(deps: Deps, sql_counter: Any) -> None:
    manager = deps.revalidator
    assert manager is not None
    counts = []
    for many in (3, 30):
        await manager.mark_many([("author", str(i)) for i in range(1, many + 1)])
        sql_counter.reset()
        assert await manager.process_revalidation() == {"author": many}
        counts.append(sql_counter.count)
    assert counts[0] == counts[1]  # one by one: ten times the statements for ten times the authors


async def test_the_lock_is_renewed_through_a_long_round_and_a_lost_one_stops_it(
        deps: Deps, redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    first = CacheRevalidationManager(deps.cache, deps.db, deps.live, lock_ttl_ms=300, step=1)
    second = CacheRevalidationManager(deps.cache, deps.db, deps.live)
    original = first._revalidate

    async def slow(entity_type: str, ids: list[str], **how: Any) -> bool:
        await asyncio.sleep(0.15)  # four chunks: the round outlasts the lock's 300 ms by far
        return await original(entity_type, ids, **how)

    monkeypatch.setattr(first, "_revalidate", slow)
    await first.mark_many([("topic", str(i)) for i in range(1, 5)])
    round_ = asyncio.create_task(first.process_revalidation())
    await asyncio.sleep(0.45)
    assert await second.process_revalidation() == {}  # renewed: still the first's (without renewal: a redo)
    assert await round_ == {"topic": 4}

    async def losing(entity_type: str, ids: list[str], **how: Any) -> bool:
        await redis.delete(keys.lock("revalidation"))  # its TTL ran out, another took it
        return await original(entity_type, ids, **how)

    monkeypatch.setattr(first, "_revalidate", losing)
    await first.mark_many([("topic", str(i)) for i in range(1, 5)])
    assert await first.process_revalidation() == {}  # stopped after the chunk it had begun
    assert await redis.scard(keys.revalidation_processing("topic")) == 3  # left for the next holder
    assert await second.process_revalidation() == {"topic": 3}
