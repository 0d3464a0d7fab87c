"""Fills: storing what a read computed, the fill locks that let one worker compute for all, and the fills that
ride along with a request's next read.

A value computed after a miss is stored with the stamp read *before* it was computed (cache/stamps.py), so a
write in between leaves it a miss. Within a request, fills wait for its next read and go in that round trip
(`RidingFills`); what is left goes as the request ends, or with the caller's own pipeline (`queue_left`).
A fill lock (`keys.fill_lock`, one per value and generation) makes the other workers wait for the holder's
value instead of computing it too. `Cache` (cache/store.py) is one of these.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from enum import Enum
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from ambient import RIDING_FILLS
from cache import keys
from cache.generations import Generations
from cache.redis.client import queue_set
from cache.redis.limits import BATCH
from cache.stamps import PART_MARGIN, Stored, encode
from telemetry import metrics

if TYPE_CHECKING:
    from redis.asyncio.client import Pipeline

# A value to store: (key, data, the stamp read before it was computed, ttl); no stamp, not stored.
Fill = tuple[str, Any, bytes | None, int | None]

DEFAULT_TTL = 7 * 86_400
MISSING_TTL = 60
# At most this many commands are left to a caller to send with its own (`Fills.queue_left`: a response's store
# and its rendered items go in the same pipeline); more go out on their own.
LEFT_MOST = BATCH // 2


class Lease(Enum):
    """A value's fill lock as a worker knows it."""

    OURS = "ours"  # this worker computes the value, stores it and lets the lock go
    ANOTHERS = "another's"  # another worker computes it: wait a little for its value
    NO_LOCK = "no lock"  # none to go by (Redis did not answer, or none is wanted): compute, store if it can
    UNTRIED = "untried"  # not asked yet (a cluster's read, a generation to create): ask before computing


class RidingFills:
    """The fills a request's reads computed (`cached_query`'s values, `cached_many`'s entities) that wait to
    ride along with its next read (`Cache.get_many`) instead of taking a round trip of their own, with the
    fill locks released with them; what is left when the request ends is sent then (`Cache.fills_ride_along`),
    or kept here for the caller who gave them to send after its answer (`Cache.queue_left`: a computed
    answer no longer waits a round trip for them before it is sent). A value recomputed after a write is stored
    in the round trip that reads what it refers to (a page's authors and shouts), and its reader goes on
    at once instead of waiting a round trip (four turns of the loop, under load the other requests' work
    in each) for the store."""

    def __init__(self, cache: Fills) -> None:
        self.cache = cache  # whose fills these are: another cache (another Redis) neither adds nor takes any
        self.fills: list[Fill] = []
        self.unlocks: list[str] = []
        self.open = True  # closed once the request has ended: a fill after it (a stream's) goes out alone

    def take(self) -> tuple[list[Fill], list[str]]:
        fills, unlocks, self.fills, self.unlocks = self.fills, self.unlocks, [], []
        return fills, unlocks


def queue_stored(pipe: Pipeline, key: str, stored: Stored, ttl: int, what: str) -> None:
    """Queue the SETs keeping a value (cache/stamps.py): its parts first, outliving it, then its head; a value
    too big to keep is counted (`what` it is, for metrics)."""
    if stored.too_big:
        metrics.child(metrics.VALUES_TOO_BIG, what, keys.family(key)).inc()
    for part, data in stored.parts:
        queue_set(pipe, part, data, ttl + PART_MARGIN)
    queue_set(pipe, key, stored.head, ttl)


class Fills(Generations):
    """A cache's stores and fill locks (mixed into `Cache`, which sets the state below)."""

    ttl_jitter: float
    default_ttl: int
    missing_ttl: int
    fill_lock_ms: int
    max_value: int

    async def set_many(self, items: Sequence[Fill], *, unlock: Sequence[str] = ()) -> None:
        """Store (key, data, stamp, ttl) items in one pipeline; items without a stamp are skipped.
        `unlock` names fill locks released in the same round trip."""
        if not (any(item[2] is not None for item in items) or unlock) or not self.available:
            return
        try:
            await self._set_chunked(items, unlock=unlock)
        except RedisError as exc:
            self.trip(exc, "write")

    async def _set_chunked(self, items: Sequence[Fill], *, unlock: Sequence[str] = ()) -> None:
        """Pipelines of at most BATCH commands; the unlocks ride with the last one."""
        chunks = [items[start:start + BATCH] for start in range(0, len(items), BATCH)] or [()]
        for n, chunk in enumerate(chunks):
            async with self.redis.pipeline(transaction=False) as pipe:
                self._queue_sets(pipe, chunk)
                if n == len(chunks) - 1:
                    self._queue_unlocks(pipe, unlock)
                await pipe.execute()

    @staticmethod
    def _queue_unlocks(pipe: Pipeline, unlocks: Sequence[str]) -> None:
        """A DEL each: fill locks live in slots of their own on a Redis Cluster, where one DEL of several
        would be refused (CROSSSLOT)."""
        for lock in unlocks:
            pipe.delete(lock)

    def jittered(self, ttl: int | None) -> int | None:
        """Seed 004: spread the expiry of keys written together."""
        if not ttl:
            return None
        spread = int(ttl * self.ttl_jitter)
        return ttl + random.randint(0, spread) if spread else ttl

    def _queue_sets(self, pipe: Pipeline, items: Sequence[Fill]) -> None:
        for key, data, stamp, ttl in items:
            if stamp is not None:
                lifetime = self.missing_ttl if data is None else ttl or self.default_ttl
                queue_stored(pipe, key, encode(stamp, data, self.max_value), self.jittered(lifetime) or lifetime,
                             "value")

    async def ride_or_store(self, fills: list[Fill], unlocks: list[str]) -> None:
        """Fills (and their locks' release) that ride along with the request's next read, or, outside a
        request, are stored now."""
        riding = self._riding()
        if riding is not None:
            riding.fills += fills
            riding.unlocks += unlocks
        else:
            await self.set_many(fills, unlock=unlocks)

    def _riding(self) -> RidingFills | None:
        """The fills of the request under way that ride along, if it opened them on this cache and has not
        ended (once ended, they are all sent and none is added)."""
        riding = RIDING_FILLS.get()
        return riding if riding is not None and riding.cache is self and riding.open else None

    @asynccontextmanager
    async def fills_ride_along(self, left: RidingFills | None = None) -> AsyncIterator[None]:
        """Within, the values `cached_query` computes are stored with the next read of the same request
        (a task started within, or by one of them) instead of on their own (`RidingFills`); what is left
        is stored as the block ends, in one round trip. Given `left` (the caller's), what is left stays in
        it when the block ended without an error (and it is at most LEFT_MOST commands), for the caller to
        send (`queue_left`)."""
        riding = left if left is not None else RidingFills(self)
        token = RIDING_FILLS.set(riding)
        handed = False
        try:
            yield
            handed = left is not None
        finally:
            RIDING_FILLS.reset(token)
            riding.open = False
            if not handed or len(riding.fills) + len(riding.unlocks) > LEFT_MOST:
                fills, unlocks = riding.take()
                if fills or unlocks:
                    await self.set_many(fills, unlock=unlocks)

    def queue_left(self, pipe: Pipeline, left: RidingFills) -> None:
        """Queue what `fills_ride_along` left in `left` (and empty it), in a pipeline the caller sends."""
        fills, unlocks = left.take()
        if self.available:
            self._queue_sets(pipe, fills)
            self._queue_unlocks(pipe, unlocks)

    async def take_fill_lock(self, cache_key: str, stamp: bytes = b"") -> Lease:
        """The lock of a value being computed, asked for: OURS, ANOTHERS, or NO_LOCK when Redis did not answer.
        `stamp`: the generation of the value (keys.fill_lock)."""
        return (await self.take_fill_locks([cache_key], stamp))[0]

    async def take_fill_locks(self, cache_keys: Sequence[str], stamp: bytes = b"") -> list[Lease]:
        """`take_fill_lock` for several keys in one round trip."""
        if not cache_keys:
            return []
        if not self.available:
            return [Lease.NO_LOCK] * len(cache_keys)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for cache_key in cache_keys:
                    pipe.set(keys.fill_lock(cache_key, stamp), b"1", nx=True, px=self.fill_lock_ms)
                return [Lease.OURS if taken else Lease.ANOTHERS for taken in await pipe.execute()]
        except RedisError as exc:
            self.trip(exc, "fill lock")
            return [Lease.NO_LOCK] * len(cache_keys)

    async def release_fill_lock(self, *cache_keys: str, stamp: bytes = b"") -> None:
        if not cache_keys:
            return
        try:
            await self.redis.delete(*(keys.fill_lock(k, stamp) for k in cache_keys))
        except RedisError as exc:
            self.trip(exc, "fill lock release")
