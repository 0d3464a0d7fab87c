"""Warm the hot entries at start (seed 002 precache.py), under `lock:precache` so that of several
workers starting together only one does it, and marked done (`precache:done`, an hour) so that workers
starting later (a rolling restart, a worker replaced after a crash) do not do it again. It only adds
values through the normal read path: it never flushes Redis and never touches session or auth keys."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import select

from cache import keys
from cache.entities import get_cached_entities
from cache.redis.locks import RedisLock
from cache.store import Cache
from orm import Author, Community, Topic
from orm.engine import SessionFactory

log = logging.getLogger(__name__)
# Entities carry no TTL, so an hour-old warming still holds unless Redis was emptied (then the marker
# went with it and the next worker to start warms again).
DONE_TTL = 3600


async def _ids(db: SessionFactory, column: Any, limit: int) -> list[int]:
    async with db() as session:
        return list((await session.scalars(select(column).order_by(column).limit(limit))).all())


async def precache_data(cache: Cache, db: SessionFactory, *, authors: int = 500, force: bool = False,
                        progress: Callable[[int], None] | None = None) -> bool:
    """Returns True if this worker did the warming, False if another one is doing it or has done it
    (`force`: warm again even if it was done; `progress` hears how many entities are warm so far)."""
    lock = RedisLock(cache.redis, "precache", ttl_ms=60_000)
    try:
        if (not force and await cache.redis.exists(keys.precache_done())) or not await lock.acquire():
            return False
        if not force and await cache.redis.exists(keys.precache_done()):  # done between the check and the lock
            await lock.release()
            return False
    except RedisError as exc:
        log.warning("precache skipped: Redis unavailable (%s)", exc)
        return False
    try:
        warm = 0
        for kind, column, limit in (("topic", Topic.id, 10_000), ("community", Community.id, 1000),
                                    ("author", Author.id, authors)):
            ids = await _ids(db, column, limit)
            for start in range(0, len(ids), 100):  # seed 004: batches of at most 100
                await get_cached_entities(kind, ids[start:start + 100], cache=cache, db=db)
                warm += len(ids[start:start + 100])
                if progress is not None:
                    progress(warm)
        await cache.redis.set(keys.precache_done(), int(time.time()), ex=DONE_TTL)
        log.info("precache done")
        return True
    finally:
        await lock.release()


__all__ = ["precache_data"]
