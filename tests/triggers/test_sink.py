"""The commit sink on its own (triggers/sink.py): what it does with a commit's changes by default, what it
says when it cannot do something, and that nothing it runs raises into the writer or outlives `settled()`.
The mutation pass found these held by no test (mutation/triggers.sink.md)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.asyncio import Redis

from cache import keys
from cache.live.structures import LiveOps, LiveStore
from cache.redis.client import make_redis
from cache.store import Cache
from cache.wal_floor import WalFloor
from devtools.services import RedisServer, free_port
from triggers.changes import Changes
from triggers.sink import CacheSink


def _changes(*tags: str) -> Changes:
    changes = Changes()
    changes.tag(*tags)
    return changes


def test_a_commit_outside_an_event_loop_is_said_and_skipped(redis: Redis, caplog: pytest.LogCaptureFixture) -> None:
    """A synchronous script's commit: nothing cached in its process, so nothing scheduled, and the log says
    which work was skipped."""
    cache = Cache(redis)
    sink = CacheSink(cache, None, LiveStore(cache))
    with caplog.at_level(logging.WARNING, logger="triggers.sink"):
        assert sink.schedule(_changes("b", "a"), announced=False) is None
        sink.withdraw(_changes())
    assert [record.getMessage() for record in caplog.records] == [
        "commit outside an event loop; invalidation of ['a', 'b'] skipped",
        "commit outside an event loop; withdrawal of an announced write skipped"]
    assert sink.running == 0


async def test_by_default_a_commit_moves_its_tags_and_raises_the_floor_first(redis: Redis) -> None:
    cache = Cache(redis)
    floor = WalFloor(cache, primary_position=lambda: asyncio.sleep(0, result=0x2A))
    sink = CacheSink(cache, None, LiveStore(cache), wal_floor=floor)  # invalidation not named: on
    _, [before] = await cache.get_many(["k"], [[keys.tag_topic(1)]])
    await sink.apply(_changes(keys.tag_topic(1)), announced=False)
    _, [after] = await cache.get_many(["k"], [[keys.tag_topic(1)]])
    assert before != after
    assert await redis.get(keys.wal_floor()) == f"{0x2A:016x}".encode()


async def test_marks_without_a_revalidator_and_a_failed_publish_never_raise(
        caplog: pytest.LogCaptureFixture) -> None:
    """A sink with no revalidator skips the counters' marks; live messages Redis did not take are logged
    with their number and the error, and the writer never hears of it."""
    gone = make_redis(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    cache = Cache(gone)
    sink = CacheSink(cache, None, LiveStore(cache), invalidation=False)
    changes = Changes(messages=[("shout:1", b"{}"), ("shout:2", b"{}")])
    changes.mark("shout", 1)
    try:
        with caplog.at_level(logging.WARNING, logger="cache.messaging.pubsub"):
            await sink.apply(changes, announced=False)
    finally:
        await gone.aclose()
    said = [record.getMessage() for record in caplog.records if record.name == "cache.messaging.pubsub"]
    assert len(said) == 1 and said[0].startswith("2 live messages not published: "), said
    assert "Error" in said[0] or "connect" in said[0].lower(), said  # the error itself, not a placeholder


async def test_settled_waits_for_every_invalidation_and_swallows_their_failures(redis: Redis) -> None:
    cache = Cache(redis)
    sink = CacheSink(cache, None, LiveStore(cache))
    finished: list[str] = []

    async def slow() -> None:
        await asyncio.sleep(0.05)
        finished.append("slow")

    async def failing() -> None:
        raise RuntimeError("an invalidation that failed")

    sink._spawn(slow(), "a slow invalidation")
    sink._spawn(failing(), "a failed invalidation")
    await sink.settled()  # neither waits nor raises less than this
    assert finished == ["slow"] and sink.running == 0
    sink.withdraw(Changes(live=LiveOps.touching([("shout", 1)])))
    await sink.settled()
    assert sink.running == 0


async def test_a_floor_redis_did_not_take_is_forgotten_with_the_epochs_before_the_write_answers(
        redis_server: RedisServer) -> None:
    """A raise of the WAL floor that Redis refused (here an ACL that denies scripts) is a lost write: another
    worker reading the old floor would read a replica that lacks the commit, and store what it read under
    the generations the commit then moves. Before the write answers the floor is gone (a reader sets it
    again from the primary's position), with the global epoch; the loss is contained, and the commit's
    tags move as usual."""
    admin = make_redis(redis_server.url, coalesce=False)
    await admin.acl_setuser("writer", enabled=True, passwords=["+secret"], keys=["~*"], channels=["*"],
                            commands=["+@all", "-evalsha", "-eval"])
    writer = make_redis(redis_server.url.replace("redis://", "redis://writer:secret@"), coalesce=False)
    cache = Cache(writer)
    floor = WalFloor(cache, primary_position=lambda: asyncio.sleep(0, result=0x2A))
    sink = CacheSink(cache, None, LiveStore(cache), wal_floor=floor)
    try:
        await admin.set(keys.wal_floor(), f"{0x29:016x}")
        _, [before] = await cache.get_many(["k"], [[keys.tag_topic(1)]])
        assert await admin.exists(keys.generation(keys.GLOBAL_TAG))
        await sink.apply(_changes(keys.tag_topic(1)), announced=False)
        assert await admin.exists(keys.wal_floor(), keys.generation(keys.GLOBAL_TAG)) == 0
        assert not cache.lost_invalidations
        _, [after] = await cache.get_many(["k"], [[keys.tag_topic(1)]])
        assert before != after
    finally:
        await writer.aclose()
        await admin.aclose()
