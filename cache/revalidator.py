"""CacheRevalidationManager (seed 002): counters that change constantly are brought up to date in
batches instead of on every write.

Every worker marks entities in Redis (`revalidation:batch:{entity_type}` sets, so the queue is shared);
every `interval` seconds one worker, holding `lock:revalidation`, moves each type's marks into its
processing set (SPOP, a step of `BATCH` at a time) and handles that set in chunks of `BATCH` (SRANDMEMBER,
then SREM once handled), so no command or reply grows with the queue:

- authors, topics, communities: a chunk's entities are recomputed and re-cached together (hot entries
  never go cold) and their live counters recounted from SQL in one batch, which corrects any drift;
- shouts and reactions: a round of fewer than `threshold` marked items one by one; on reaching it the
  collections are invalidated instead; the marked shouts' counters are recounted a chunk at a time;
- the id `all` invalidates every cached entity of the type.

The lock is renewed after every chunk; a worker that finds it lost (its TTL ran out, another took it)
stops the round there, and what it left in the processing set is the next holder's. Marks that arrive
while a round runs wait in the waiting set for the next one. A batch that a crashed worker left half
done is picked up again. Redis errors are logged and retried on the next round: the loop never dies of
one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from typing import cast

from redis.exceptions import RedisError
from sqlalchemy import select

from cache import keys
from cache.entities import ENTITY_KINDS, get_cached_entities
from cache.live.counters import get_counters
from cache.live.structures import LiveStore
from cache.lua import load_lua
from cache.periodic import Periodic
from cache.redis.limits import BATCH
from cache.redis.locks import RedisLock
from cache.store import Cache
from orm import Reaction
from orm.engine import SessionFactory
from telemetry import metrics

log = logging.getLogger(__name__)

CACHE_REVALIDATION_INTERVAL = 300
BATCH_THRESHOLD = 10
ENTITY_TYPES = ("author", "topic", "community", "shout", "reaction")
RECOMPUTED = ("author", "topic", "community")  # re-cached with their counters; the others by threshold
FAMILY = {"shout": keys.TAG_SHOUTS, "reaction": keys.TAG_REACTIONS, "author": keys.TAG_AUTHORS,
          "topic": keys.TAG_TOPICS, "community": keys.TAG_COMMUNITIES}

_TAKE_BATCH = load_lua("revalidation_batch")


class CacheRevalidationManager:
    def __init__(self, cache: Cache, db: SessionFactory, live: LiveStore, *,
                 interval: float = CACHE_REVALIDATION_INTERVAL, threshold: int = BATCH_THRESHOLD,
                 lock_ttl_ms: int = 120_000, step: int = BATCH) -> None:
        self.cache = cache
        # The marks, the batches and the lock live on the state Redis: an evicting cache Redis would drop
        # marked work.
        self._redis = cache.state
        self.db = db
        self.live = live
        self.threshold = threshold
        self.lock_ttl_ms = lock_ttl_ms
        self.step = step
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
                count = await self._round_of(entity_type, lock)
                if count is None:
                    log.warning("the revalidation lock ran out during a round; the next holder goes on")
                    break
                if count:
                    handled[entity_type] = count
        finally:
            with contextlib.suppress(RedisError):
                await lock.release()
        self.rounds += 1
        return handled

    async def _round_of(self, entity_type: str, lock: RedisLock) -> int | None:
        """Every mark of a type handled, a chunk at a time: how many (None: the lock was lost meanwhile)."""
        processing = keys.revalidation_processing(entity_type)
        while await self._redis.eval(_TAKE_BATCH, 2, keys.revalidation_batch(entity_type), processing,
                                     self.step) == self.step:
            pass
        bulk = await self._redis.scard(processing) >= self.threshold  # seed 002: a round *reaching* it
        handled = 0
        while chunk := await self._chunk(processing):
            with metrics.REVALIDATION_BATCH_SECONDS.labels(entity_type).time():
                everything = await self._revalidate(entity_type, chunk, bulk=bulk)
            metrics.REVALIDATED.labels(entity_type).inc(len(chunk))
            handled += len(chunk)
            if everything:  # `all` covers whatever else is marked
                handled += await self._redis.scard(processing) - len(chunk)
                await self._redis.delete(processing)
            else:
                await self._redis.srem(processing, *chunk)
            if not await lock.extend():
                return None
        return handled

    async def _chunk(self, processing: str) -> list[str]:
        """Up to `step` marks of the processing set, in order (the same marks until they are removed)."""
        members = cast("list[bytes | str]", await self._redis.srandmember(processing, self.step))
        return sorted(m.decode() if isinstance(m, bytes) else m for m in members)

    async def _revalidate(self, entity_type: str, ids: list[str], *, bulk: bool) -> bool:
        """One chunk of marks; True when it held `all` (every entity of the type invalidated)."""
        if "all" in ids:
            await self.cache.invalidate_tags([keys.tag_entities(entity_type), FAMILY[entity_type]])
            return True
        numeric = [int(i) for i in ids if i.isdigit()]
        if entity_type in RECOMPUTED:
            await self._recompute(entity_type, numeric)
            return False
        if entity_type == "shout":
            await get_counters("shout", numeric, live=self.live, db=self.db, refresh=True)
        if bulk:
            tags = [FAMILY[entity_type]]
            if entity_type == "shout":
                tags += [ENTITY_KINDS["shout"].tag_of(i) for i in numeric]
            else:
                tags.append(keys.tag_entities("reaction"))
            await self.cache.invalidate_tags(tags)
        elif entity_type == "shout":
            for entity_id in numeric:  # below the threshold: each re-cached, the collections left alone
                await self._recompute("shout", [entity_id])
        else:
            await self._revalidate_reactions(numeric)
        return False

    async def _recompute(self, entity_type: str, ids: list[int]) -> None:
        """New counters for these entities: their tags move (so whole responses built on the old numbers
        are refreshed too), then they are recomputed and re-cached at once, in one batch, so a hot entry
        never goes cold."""
        if not ids:
            return
        await self.cache.invalidate_tags([ENTITY_KINDS[entity_type].tag_of(i) for i in ids])
        await get_cached_entities(entity_type, ids, cache=self.cache, db=self.db, force=True)
        if entity_type != "shout":  # marked shouts are recounted with their chunk
            await get_counters(entity_type, ids, live=self.live, db=self.db, refresh=True)

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
