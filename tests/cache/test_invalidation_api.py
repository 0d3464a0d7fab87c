"""The seed's named invalidation functions."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio import Redis

from cache import invalidation, keys
from cache.entities import get_cached_author, get_cached_shouts, get_cached_topic
from resolvers.deps import Deps


async def _is_cached(deps: Deps, key: str, tags: list[str]) -> bool:
    return await deps.cache.get_cached_data(key, tags=tags) is not None


async def test_point_and_family_invalidation(deps: Deps, sql_counter: Any) -> None:
    cache, db = deps.cache, deps.db
    await get_cached_author(3, cache=cache, db=db)
    await get_cached_author(4, cache=cache, db=db)
    author_tags = [keys.tag_author(3), keys.tag_entities("author")]
    assert await _is_cached(deps, keys.author_id(3), author_tags)
    await invalidation.invalidate_authors_cache(cache, 3)
    assert not await _is_cached(deps, keys.author_id(3), author_tags)
    assert await _is_cached(deps, keys.author_id(4), [keys.tag_author(4), keys.tag_entities("author")])
    await invalidation.invalidate_authors_cache(cache)
    assert not await _is_cached(deps, keys.author_id(4), [keys.tag_author(4), keys.tag_entities("author")])

    await get_cached_topic(1, cache=cache, db=db)
    await invalidation.invalidate_topics_cache(cache, 1)
    assert not await _is_cached(deps, keys.topic_id(1), [keys.tag_topic(1), keys.tag_entities("topic")])

    shouts = [s for s in await get_cached_shouts(list(range(1, 20)), cache=cache, db=db) if s]
    first = shouts[0]["id"]
    await invalidation.invalidate_shouts_cache(cache, [first])
    assert not await _is_cached(deps, keys.shout_id(first), [keys.tag_shout(first), keys.tag_entities("shout")])
    await get_cached_shouts([first], cache=cache, db=db)
    await invalidation.invalidate_shout_related_cache(cache, first, author_id=3)
    assert not await _is_cached(deps, keys.shout_id(first), [keys.tag_shout(first), keys.tag_entities("shout")])


async def test_prefix_invalidation_unlinks_in_batches_and_spares_auth(deps: Deps, redis: Redis) -> None:
    for i in range(250):
        await redis.set(f"search_cache:q{i}", "x")
    await redis.hset("session:1:abc", "user_id", "1")
    assert await invalidation.invalidate_cache_by_prefix(deps.cache, "search_cache:") == 250
    assert not [k async for k in redis.scan_iter(match="search_cache:*")]
    for refused in ("session:", "", "*", "gen:"):
        with pytest.raises(ValueError):
            await invalidation.invalidate_cache_by_prefix(deps.cache, refused)
    assert await redis.exists("session:1:abc")
