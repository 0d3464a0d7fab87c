"""CacheRevalidationManager (seed 002): counters that change constantly are brought up to date in
batches instead of on every write.

Every worker marks entities in Redis (`revalidation:batch:{entity_type}` sets, so the queue is shared);
every `interval` seconds one worker, holding `lock:revalidation`, takes each batch atomically and:

- authors, topics, communities: recomputes and re-caches each marked entity (hot entries never go cold)
  and recounts its live counters from SQL, which corrects any drift;
- shouts and reactions: fewer than `threshold` marked items one by one; on reaching it the collections are
  invalidated instead; the marked shouts' counters are recounted in one statement either way;
- the id `all` invalidates every cached entity of the type.

Marks that arrive while a batch runs go to a fresh set and wait for the next round. A batch that a
crashed worker left half done is picked up again. Redis errors are logged and retried on the next
round: the loop never dies of one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable

from redis.exceptions import RedisError
from sqlalchemy import select

from cache import keys
from cache.entities import ENTITY_KINDS, get_cached_entities
from cache.live.counters import get_counters
from cache.live.structures import LiveStore
from cache.lua import load_lua
from cache.periodic import Periodic
from cache.redis.locks import RedisLock
from cache.store import Cache
from orm import Reaction
from orm.engine import SessionFactory
from telemetry import metrics

log = logging.getLogger(__name__)

CACHE_REVALIDATION_INTERVAL = 300
BATCH_THRESHOLD = 10
ENTITY_TYPES = ("author", "topic", "community", "shout", "reaction")
ONE_BY_ONE = ("author", "topic", "community")
FAMILY = {"shout": keys.TAG_SHOUTS, "reaction": keys.TAG_REACTIONS, "author": keys.TAG_AUTHORS,
          "topic": keys.TAG_TOPICS, "community": keys.TAG_COMMUNITIES}

_TAKE_BATCH = load_lua("revalidation_batch")


class CacheRevalidationManager:
    def __init__(self, cache: Cache, db: SessionFactory, live: LiveStore, *,
                 interval: float = CACHE_REVALIDATION_INTERVAL, threshold: int = BATCH_THRESHOLD,
                 lock_ttl_ms: int = 120_000) -> None:
        self.cache = cache
        # The marks, the batches and the lock live on the state Redis: an evicting cache Redis would drop
        # marked work.
        self._redis = cache.state
        self.db = db
        self.live = live
        self.threshold = threshold
        self.lock_ttl_ms = lock_ttl_ms
        self._loop = Periodic("cache revalidation", interval, self.process_revalidation)
        self.rounds = 0

    # --- marking (any worker) -----------------------------------------------------------------------

    async def mark_for_revalidation(self, entity_id: int | str, entity_type: str) -> None:
        await self.mark_many([(entity_type, str(entity_id))])

    async def mark_many(self, marks: Iterable[tuple[str, str]]) -> None:
        by_type: dict[str, set[str]] = {}
        for entity_type, entity_id in marks:
            if entity_type in ENTITY_TYPES:
                by_type.setdefault(entity_type, set()).add(entity_id)
        if not by_type:
            return
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for entity_type, ids in by_type.items():
                    pipe.sadd(keys.revalidation_batch(entity_type), *ids)
                await pipe.execute()
        except RedisError as exc:
            # Counters then lag until their entity is next invalidated; the write itself stands.
            log.warning("could not mark %s for revalidation: %s", by_type, exc)

    # --- processing (one worker at a time) ----------------------------------------------------------

    async def process_revalidation(self) -> dict[str, int]:
        """One round: returns how many ids of each type were handled ({} if another worker holds the lock)."""
        lock = RedisLock(self._redis, "revalidation", ttl_ms=self.lock_ttl_ms)
        if not await lock.acquire():
            return {}
        handled: dict[str, int] = {}
        try:
            for entity_type in ENTITY_TYPES:
                ids = await self._take(entity_type)
                if ids:
                    with metrics.REVALIDATION_BATCH_SECONDS.labels(entity_type).time():
                        await self._revalidate(entity_type, ids)
                    metrics.REVALIDATED.labels(entity_type).inc(len(ids))
                    await self._redis.delete(keys.revalidation_processing(entity_type))
                    handled[entity_type] = len(ids)
        finally:
            with contextlib.suppress(RedisError):
                await lock.release()
        self.rounds += 1
        return handled

    async def _take(self, entity_type: str) -> list[str]:
        members = await self._redis.eval(_TAKE_BATCH, 2, keys.revalidation_batch(entity_type),
                                         keys.revalidation_processing(entity_type))
        return sorted(m.decode() if isinstance(m, bytes) else m for m in members)

    async def _revalidate(self, entity_type: str, ids: list[str]) -> None:
        if "all" in ids:
            await self.cache.invalidate_tags([keys.tag_entities(entity_type), FAMILY[entity_type]])
            return
        numeric = [int(i) for i in ids if i.isdigit()]
        if entity_type in ONE_BY_ONE:
            for entity_id in numeric:  # one by one: a slow entity does not hold up a whole batch query
                await self._recompute(entity_type, entity_id)
            return
        if entity_type == "shout":
            for start in range(0, len(numeric), 100):  # seed 004: batches of at most 100
                await get_counters("shout", numeric[start:start + 100], live=self.live, db=self.db, refresh=True)
        if len(numeric) >= self.threshold:  # seed 002: on *reaching* the threshold
            tags = [FAMILY[entity_type]]
            if entity_type == "shout":
                tags += [ENTITY_KINDS["shout"].tag_of(i) for i in numeric]
            else:
                tags.append(keys.tag_entities("reaction"))
            await self.cache.invalidate_tags(tags)
        elif entity_type == "shout":
            for entity_id in numeric:
                await self._recompute("shout", entity_id)
        else:
            await self._revalidate_reactions(numeric)

    async def _recompute(self, entity_type: str, entity_id: int) -> None:
        """New counters for one entity: its tag moves (so whole responses built on the old numbers are
        refreshed too), then it is recomputed and re-cached at once, so a hot entry never goes cold."""
        await self.cache.invalidate_tags([ENTITY_KINDS[entity_type].tag_of(entity_id)])
        await get_cached_entities(entity_type, [entity_id], cache=self.cache, db=self.db, force=True)
        if entity_type != "shout":  # marked shouts are recounted in one batch
            await get_counters(entity_type, [entity_id], live=self.live, db=self.db, refresh=True)

    async def _revalidate_reactions(self, ids: list[int]) -> None:
        """A reaction's numbers live in its shout's reaction lists: refresh those lists."""
        async with self.db() as session:
            shouts = set((await session.scalars(select(Reaction.shout).where(Reaction.id.in_(ids)))).all())
        await self.cache.invalidate_tags([keys.tag_shout_reactions(s) for s in shouts])

    async def queue_depth(self) -> dict[str, int]:
        """Marked entities not yet processed, by type (waiting and in a batch under way)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for entity_type in ENTITY_TYPES:
                pipe.scard(keys.revalidation_batch(entity_type))
                pipe.scard(keys.revalidation_processing(entity_type))
            counts = await pipe.execute()
        return {t: counts[2 * n] + counts[2 * n + 1] for n, t in enumerate(ENTITY_TYPES)}

    # --- the loop -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Check Redis and start the background loop."""
        try:
            await self._redis.ping()
        except RedisError as exc:
            log.warning("revalidation starts without Redis (%s); it will retry every round", exc)
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    @property
    def running(self) -> bool:
        return self._loop.running

    @property
    def failed_rounds(self) -> int:
        return self._loop.failed


__all__ = ["BATCH_THRESHOLD", "CACHE_REVALIDATION_INTERVAL", "CacheRevalidationManager"]
