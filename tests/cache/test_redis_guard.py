"""One guard for every Redis call (cache/redis/client.py): every store's failure is mapped the same way and
opens the one breaker the cache reads by; cluster errors are Redis errors; an answer that is an error
(the server is up) opens nothing."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from redis._parsers.base import BaseParser
from redis.asyncio import Redis
from redis.exceptions import RedisClusterException, RedisError, ResponseError

from app.main import open_deps
from auth.sessions import SessionStore
from cache.redis import coalesce
from cache.redis.client import RedisGuard, RedisUnavailable, cannot_serve, make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from telemetry import metrics


async def test_a_session_store_failure_opens_the_breaker_the_cache_reads_by(redis_server: RedisServer) -> None:
    guard = RedisGuard(breaker_seconds=30)
    client = make_redis(redis_server.url, guard=guard)
    sessions = SessionStore(client, secret="s" * 40, ttl=60)
    cache = Cache(client)
    session = await sessions.create(1, "someone")
    assert await sessions.validate(session.token) is not None and cache.available
    redis_server.stop()
    sessions._checked.clear()  # nothing in the outage grace: the check must reach Redis
    with pytest.raises(RedisUnavailable):
        await sessions.validate(session.token)
    assert not cache.available  # the cache learned it from the session store
    assert cache.guard is guard
    await client.aclose()


async def test_cluster_errors_are_redis_errors_and_answers_open_nothing(
        redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    guard = RedisGuard(breaker_seconds=30)
    client = make_redis(redis_server.url, guard=guard)
    with pytest.raises(ResponseError):  # the server answered: no outage
        await client.execute_command("NO-SUCH-COMMAND")
    assert guard.available
    errors = metrics.total(metrics.REDIS_ERRORS)

    async def unroutable(*_args: Any, **_options: Any) -> Any:
        raise RedisClusterException("no node serves this slot")

    monkeypatch.setattr(Redis, "execute_command", unroutable)
    monkeypatch.setattr(coalesce, "execute_pipelined", unroutable)  # how coalesced commands go out
    with pytest.raises(RedisError) as raised:  # what every store already catches
        await client.get("k")
    assert isinstance(raised.value, RedisUnavailable) and isinstance(raised.value.__cause__, RedisClusterException)
    assert not guard.available
    assert metrics.total(metrics.REDIS_ERRORS) == errors + 1
    await client.aclose()


async def test_a_pipeline_passes_the_guard_too(redis_server: RedisServer) -> None:
    guard = RedisGuard(breaker_seconds=30)
    client = make_redis(redis_server.url, guard=guard)
    async with client.pipeline(transaction=False) as pipe:
        pipe.set("a", 1)
        pipe.get("a")
        assert await pipe.execute() == [True, b"1"]
    redis_server.stop()
    with pytest.raises(RedisUnavailable):
        async with client.pipeline(transaction=True) as pipe:
            pipe.incr("a")
            await pipe.execute()
    assert not guard.available
    await client.aclose()


async def test_the_app_shares_one_guard_between_its_two_redis(redis_server: RedisServer, settings: Settings) -> None:
    async with RedisServer() as state_server:
        both = settings.model_copy(update={"redis_url": redis_server.url, "redis_state_url": state_server.url,
                                           "redis_breaker_seconds": 7.0})
        async with open_deps(both) as deps:
            assert deps.state is not deps.cache.redis
            assert deps.state.guard is deps.cache.redis.guard is deps.cache.guard  # type: ignore[attr-defined]
            assert deps.cache.guard.breaker_seconds == 7.0
            assert deps.delayed.redis is deps.state and deps.live.redis is deps.state
            assert deps.accounts.sessions.redis is deps.state
            state_server.stop()  # the state Redis fails: the cache's reads go to the database too
            with pytest.raises(RedisUnavailable):
                await deps.accounts.sessions.redis.get("x")
            assert not deps.cache.available


async def test_commands_are_packed_in_c_into_the_same_bytes(redis_server: RedisServer) -> None:
    """The client packs commands with hiredis (cache/redis/seam.py `fast_connection`): the bytes redis-py's
    own packer would send, and the same refusal of what Redis has no form for."""
    from redis.asyncio.connection import Connection
    from redis.exceptions import DataError

    from cache.redis.seam import SentWithoutATask

    client = make_redis(redis_server.url)
    connection_class = client.connection_pool.connection_class
    assert connection_class.__name__ == "FastConnection" and issubclass(connection_class, SentWithoutATask)
    ours, theirs = connection_class(), Connection()
    for args in (("SET", "ключ", 0.1), ("ZADD", b"k", 1e20, -3), ("CONFIG GET", "maxmemory"),
                 ("EVALSHA", "a" * 40, 2, "k1", "k2", b"\x00\xff")):
        assert b"".join(ours.pack_command(*args)) == b"".join(theirs.pack_command(*args)), args
    for wrong in (None, True):
        with pytest.raises(DataError):
            ours.pack_command("SET", "k", wrong)
        with pytest.raises(DataError):
            theirs.pack_command("SET", "k", wrong)
    await client.set("ключ", 0.1)
    assert await client.get("ключ") == b"0.1"
    await client.aclose()


@pytest.mark.parametrize("reply, outage", [
    ("OOM command not allowed when used memory > 'maxmemory'.", True),
    ("READONLY You can't write against a read only replica.", True),
    ("BUSY Redis is busy running a script.", True),
    ("LOADING Redis is loading the dataset in memory", True),
    ("CLUSTERDOWN The cluster is down", True),
    ("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", True),
    ("TRYAGAIN Multiple keys request during rehashing of slot", True),
    ("NOREPLICAS Not enough good replicas to write.", True),
    ("ERR Error running script (call to f_1): attempt to call field 'sha1hex' (a nil value)", False),
    ("WRONGTYPE Operation against a key holding the wrong kind of value", False),
    ("CROSSSLOT Keys in request don't hash to the same slot", False),
], ids=["full", "read-only", "busy", "loading", "cluster down", "master down", "try again", "no replicas",
        "a script's error", "a wrong type", "cross slot"])
def test_what_says_redis_cannot_serve(reply: str, outage: bool) -> None:
    """Each error as redis-py makes it of the server's reply (it strips the code of those it has a class
    for, so a message alone does not say what the server is)."""
    assert cannot_serve(BaseParser.parse_error(reply)) is outage
    assert cannot_serve(RedisUnavailable("gone"))




async def test_an_error_reply_to_a_cache_read_is_a_bug_reported_not_an_outage(
        redis: Redis, caplog: pytest.LogCaptureFixture) -> None:
    """A value key of the wrong type makes the read's script fail: that read is computed from the database,
    the error is logged once a minute, and the breaker stays closed for every other read."""
    cache = Cache(redis)
    await redis.rpush("bugged", "a list where a value is read")
    computed: list[int] = []

    async def compute() -> dict[str, int]:
        computed.append(1)
        return {"n": len(computed)}

    with caplog.at_level(logging.ERROR, logger="cache.store"):
        for _ in range(3):
            assert (await cache.cached_query("bugged", compute, tags=["tag:bugged"]))["n"] == len(computed)
    assert len(computed) == 3  # each read met the error and went to the database
    assert cache.available and cache.stats.errors == 3
    assert len([r for r in caplog.records if "a bug" in r.getMessage()]) == 1
    assert await cache.cached_query("fine", compute, tags=["tag:bugged"]) is not None  # others use Redis
    assert await cache.cached_query("fine", compute, tags=["tag:bugged"]) == {"n": 4}  # a hit
