"""Redis failing as it does in production: a real redis-server of the test's own, reached through
`make_redis` (the app's pool, timeouts and retries), stopped and started again. No private flags.

- A write whose invalidation is lost (Redis gone between the commit and the invalidation) still commits,
  and once Redis is back, with the old value still stored in it, no read serves that old value.
- While Redis is gone, reads are answered from the database; the breaker keeps them off Redis for its
  window and lets them back once the window has passed and Redis answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from app.main import wire
from cache import keys
from cache.client import make_redis
from cache.entities import get_cached_author
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
