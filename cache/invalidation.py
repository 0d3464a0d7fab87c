"""The seed's named invalidation functions (seed 002 "Система инвалидации кеша"), on generation tags.

Point invalidation bumps an entity's tag (O(1), no key lookup); family invalidation bumps a family tag.
The triggers call nothing here directly — they compute tags from rows — and scripts use these names.
`invalidate_cache_by_prefix` is the one place that walks keys: SCAN and UNLINK in batches of at most 100
(seed 004), for `discours cache invalidate --prefix` only, never on the request path.
"""

from __future__ import annotations

from collections.abc import Iterable

from cache import keys
from cache.redis.limits import BATCH
from cache.store import Cache


async def invalidate_authors_cache(cache: Cache, author_id: int | None = None) -> None:
    """One author (entity, account, lists that show them), or every author when no id is given."""
    if author_id is None:
        await cache.invalidate_tags([keys.tag_entities("author"), keys.tag_entities("account"), keys.TAG_AUTHORS])
    else:
        await cache.invalidate_tags([keys.tag_author(author_id), keys.tag_account(author_id)])


async def invalidate_topics_cache(cache: Cache, topic_id: int | None = None) -> None:
    if topic_id is None:
        await cache.invalidate_tags([keys.tag_entities("topic"), keys.TAG_TOPICS])
    else:
        await cache.invalidate_tags([keys.tag_topic(topic_id)])


async def invalidate_shouts_cache(cache: Cache, shout_ids: Iterable[int]) -> None:
    """Shouts by id (seed 002: ids, not cache keys) and the shout lists they may appear in."""
    await cache.invalidate_tags([*(keys.tag_shout(i) for i in shout_ids), keys.TAG_SHOUTS])


async def invalidate_shout_related_cache(cache: Cache, shout_id: int, author_id: int | None = None) -> None:
    """A shout with everything around it: its reactions, the lists, and its author's drafts and entity."""
    tags = [keys.tag_shout(shout_id), keys.tag_shout_reactions(shout_id), keys.TAG_SHOUTS]
    if author_id is not None:
        tags += [keys.tag_author(author_id), keys.tag_drafts_of(author_id)]
    await cache.invalidate_tags(tags)


async def invalidate_cache_by_prefix(cache: Cache, prefix: str) -> int:
    """Unlink every key under a prefix (admin tools only). Returns how many keys went."""
    if not prefix or "*" in prefix or prefix.startswith(("session:", "user_sessions:", "oauth_", "verification:",
                                                         "env_vars:", "gen:")):
        raise ValueError("refusing to unlink this prefix")
    removed = 0
    batch: list[bytes] = []
    async for key in cache.redis.scan_iter(match=prefix + "*", count=BATCH):
        batch.append(key)
        if len(batch) >= BATCH:
            removed += await cache.redis.unlink(*batch)
            batch.clear()
    if batch:
        removed += await cache.redis.unlink(*batch)
    return removed
