"""`discours cache ...` run as a person would (subprocesses), on the test database and a Redis server of
the test's own: precache, stats (SCAN, per family, with the hit ratio the workers flushed), inspect
(stamp and validity), invalidate (an entity, a family, everything), revalidate, and one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import text

from cache import keys
from cache.inventory import inspect_key
from cache.redis.client import make_redis
from cache.redis_metrics import RedisMetrics
from cache.store import Cache
from devtools.services import RedisServer
from tests.cli.test_cli import BASE_ENV
from tests.conftest import TEST_DATABASE_URL
from tests.live import ROOT


def cache_cli(*args: str, redis_url: str | None, state_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**BASE_ENV, "PYTHONPATH": str(ROOT), "DATABASE_URL": TEST_DATABASE_URL, "JWT_SECRET": "c" * 40,
           **({"REDIS_URL": redis_url} if redis_url else {}), **({"REDIS_STATE_URL": state_url} if state_url else {})}
    return subprocess.run([sys.executable, "-m", "app.cli.commands", "cache", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def inspect(key: str, redis_url: str) -> dict[str, Any]:
    result = cache_cli("inspect", key, redis_url=redis_url)
    return json.loads(result.stdout)  # type: ignore[no-any-return]


async def valid(redis: Redis, key: str) -> bool:
    """What `discours cache inspect` says of a key's validity, asked in-process (each command is a process
    start: the command itself is run once above)."""
    return bool((await inspect_key(Cache(redis), key))["valid"])


@pytest.fixture
async def own_redis(redis_server: RedisServer, engine: Any) -> Any:
    redis = make_redis(redis_server.url)
    yield redis_server.url, redis
    await redis.aclose()


async def test_precache_stats_inspect_and_invalidate(own_redis: tuple[str, Redis], engine: Any) -> None:
    url, redis = own_redis
    async with engine.connect() as conn:
        authors = (await conn.execute(text("SELECT count(*) FROM author"))).scalar_one()
    warmed = cache_cli("precache", redis_url=url)
    assert warmed.returncode == 0 and "precache done" in warmed.stdout, warmed.stderr
    assert warmed.stderr == ""  # its progress is drawn on a terminal only (tests/cli/test_cli_surface.py)

    author = inspect("author:id:1", url)
    assert author["exists"] and author["family"] == "author:id" and author["valid"] is True
    assert set(author["stamp"]) == {keys.GLOBAL_TAG, keys.tag_author(1), keys.tag_entities("author")}
    assert author["value"]["id"] == 1 and 0 < author["ttl"]

    # reads counted by a worker and flushed to Redis give the hit ratio per family
    cache = Cache(redis)
    flusher = RedisMetrics(cache)
    await flusher.flush()
    for key in [k async for k in redis.scan_iter(match="stats:*")]:  # what other tests counted
        await redis.delete(key)
    tags = [keys.tag_author(1), keys.tag_entities("author")]
    for key in ("author:id:1", "author:id:1", "author:id:1", "author:id:999999"):
        await cache.get_many([key], [tags])
    await flusher.flush()
    stats = cache_cli("stats", redis_url=url)
    assert stats.returncode == 0, stats.stderr
    rows = {line.split()[0]: line for line in stats.stdout.splitlines()[1:-1]}
    assert re.search(r"\b75\.0%$", rows["author:id"]), rows["author:id"]  # 3 hits, 1 miss
    assert rows["author:id"].split()[1:2] == [str(min(authors, 500))]  # keys: the authors warmed
    assert all(line.split()[4] == "0" for line in rows.values()), rows  # no key without a TTL
    assert "gen:author" in rows and "precache:done" in rows

    invalidated = cache_cli("invalidate", "author:1", redis_url=url)
    assert invalidated.returncode == 0 and "author:1" in invalidated.stdout
    assert not await valid(redis, "author:id:1")
    assert await valid(redis, "author:id:2")
    assert cache_cli("invalidate", "authors", redis_url=url).returncode == 0
    assert not await valid(redis, "author:id:2")  # a family is its entities too, not its lists only
    assert await valid(redis, "topic:id:1")  # a family of authors spares topics
    assert cache_cli("invalidate", "--all", redis_url=url).returncode == 0
    assert not await valid(redis, "topic:id:1")

    topics = len([k async for k in redis.scan_iter(match="topic:id:*", count=100)])
    assert topics > 0
    unlinked = cache_cli("invalidate", "--prefix", "topic:id:", redis_url=url)
    assert unlinked.returncode == 0 and f"unlinked {topics} keys" in unlinked.stdout, unlinked
    assert [k async for k in redis.scan_iter(match="topic:id:*")] == []
    assert (await inspect_key(Cache(redis), "author:id:2"))["exists"]
    refused = cache_cli("invalidate", "--prefix", "session:", redis_url=url)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr

    missing = cache_cli("inspect", "no:such:key", redis_url=url)
    assert missing.returncode == 1 and json.loads(missing.stdout) == {"key": "no:such:key", "exists": False}


async def test_stats_show_the_state_redis_too(own_redis: tuple[str, Redis]) -> None:
    """With REDIS_STATE_URL, sessions, queues and live structures live on a second Redis: stats has a table
    for each server, each with the families it holds."""
    url, redis = own_redis
    state_url = url.removesuffix("/0") + "/1"  # another keyspace of the test's server, as a second Redis
    state = make_redis(state_url)
    await state.flushdb()
    await state.hset("session:{5}:abc", "user_id", "5")
    await state.expire("session:{5}:abc", 600)
    await redis.set("author:id:77", "x", ex=600)
    try:
        result = cache_cli("stats", redis_url=url, state_url=state_url)
    finally:
        await state.flushdb()
        await state.aclose()
    assert result.returncode == 0, result.stderr
    cache_part, state_part = result.stdout.split("state Redis (REDIS_STATE_URL)\n")
    assert cache_part.startswith("cache Redis (REDIS_URL)\n")
    state_rows = {line.split()[0]: line.split() for line in state_part.splitlines()[1:-1]}
    assert state_rows["session"][1] == "1" and "author:id" not in state_rows
    assert "author:id" in cache_part and "session " not in cache_part


async def test_revalidate_processes_the_queue_now(own_redis: tuple[str, Redis]) -> None:
    url, redis = own_redis
    await redis.sadd(keys.revalidation_batch("author"), "1", "2")
    result = cache_cli("revalidate", redis_url=url)
    assert result.returncode == 0 and "revalidated author: 2" in result.stdout, result
    assert await redis.scard(keys.revalidation_batch("author")) == 0
    again = cache_cli("revalidate", redis_url=url)
    assert "nothing to revalidate" in again.stdout


@pytest.mark.parametrize("args, says", [
    (("invalidate",), "say what to invalidate"),
    (("invalidate", "author:x"), "kind:id"),
    (("invalidate", "everything"), "not a family"),
])
def test_cache_command_errors_are_one_line(redis_server: RedisServer, args: tuple[str, ...], says: str) -> None:
    result = cache_cli(*args, redis_url=redis_server.url)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and says in lines[0], result.stderr


def test_cache_commands_need_a_shared_redis_and_have_help() -> None:
    alone = cache_cli("stats", redis_url=None)
    assert alone.returncode == 2 and "REDIS_URL" in alone.stderr and len(alone.stderr.strip().splitlines()) == 1
    for command in ("stats", "invalidate", "precache", "revalidate", "inspect"):
        shown = cache_cli(command, "--help", redis_url=None)
        assert shown.returncode == 0 and "usage: discours cache " + command in shown.stdout
