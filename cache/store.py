"""The cache's read-through: `cache_data`, `get_cached_data`, `cached_query`, `cached_many` (seed 002), made
correct.

Every stored value carries a *stamp*: the generations of the tags it was computed under (cache/generations.py).
A read accepts a value only if its stamp equals the current generations, so:

- a reader that loaded rows before a write committed stamps its value with the generation it saw
  *before* the query; the write moves that generation, and the late value reads as a miss
  (the read-compute-write race cannot store a stale value as valid);
- invalidating a family is O(1), with no KEYS or SCAN;
- a generation key that is missing makes every value that depends on it a miss.

Concurrent misses of one value share one computation: in a worker, one future; across workers, the fill
lock (cache/fills.py). Redis is only a cache: every Redis error degrades to the database, and a circuit
breaker skips Redis for a few seconds after an error; a lost invalidation is contained (cache/containment.py).
`Cache` is the three of them together: `Cache(Fills(Generations(LostWrites)))`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from cache import keys, response_capture
from cache.containment import LOST_WRITE_WAIT, UNREACHABLE_WRITE_WAIT
from cache.fills import DEFAULT_TTL, MISSING_TTL, Fill, Fills, Lease
from cache.generations import GENERATION_TTL, CacheStats
from cache.lua import load_lua
from cache.redis.client import guard_of, is_cluster, queue_script, script_reply
from cache.redis.limits import BATCH
from cache.refresh import END_GRACES, GRACE_BUMP
from cache.stamps import MAX_VALUE, TOO_BIG, KeptDecoded, json_of, part_keys, stamp_parts, whole
from telemetry import metrics

if TYPE_CHECKING:
    from config.settings import CacheSettings

MISSING = object()  # what `get_many` returns for a value that is absent or stale

_READ_OR_LEASE = load_lua("read_or_lease")
_UNTRIED = -1  # `_READ_OR_LEASE` did not try the fill lock
# A worker waiting for another's fill looks again after FILL_POLL_FIRST seconds, then after twice as long
# each time, up to FILL_POLL_MOST: a fill is a few milliseconds (a list's statement and its store), and a
# waiter that looked again only every 20 ms waited several times longer than the fill took.
FILL_POLL_FIRST = 0.002
FILL_POLL_MOST = 0.02



class Cache(Fills):
    """One per process, created by the lifespan and handed to resolvers through the context."""

    def __init__(
        self,
        redis: Redis,
        *,
        ttl_jitter: float = 0.1,
        breaker_seconds: float | None = None,
        fill_lock_ms: int = 5000,
        fill_wait_ms: int = 1000,
        default_ttl: int = DEFAULT_TTL,
        missing_ttl: int = MISSING_TTL,
        generation_ttl: int = GENERATION_TTL,
        state: Redis | None = None,
        kept_decoded: int = 64,
        lost_write_wait: float = LOST_WRITE_WAIT,
        unreachable_write_wait: float = UNREACHABLE_WRITE_WAIT,
        max_value: int = MAX_VALUE,
    ) -> None:
        self.redis = redis
        # What has no generation stamp and must not be evicted: live structures, views, sessions, queues
        # (REDIS_STATE_URL). Cached values are safe to evict at any moment (a missing value or generation
        # is a miss); live structures keep invariants across keys (a meta hash says a structure is built)
        # that an evicting Redis would break. The same client as `redis` unless configured apart.
        self.state = state if state is not None else redis
        self.ttl_jitter = ttl_jitter
        # Seed 004: every key expires. Values without a TTL of their own get `default_ttl`; a lookup of
        # something that does not exist is remembered `missing_ttl` only (clients choose what they look
        # up); generation keys outlive the values stamped with them (`generation_ttl`), and one that
        # expired anyway restarts at a random value, which no stored stamp can match.
        self.default_ttl = default_ttl
        self.missing_ttl = missing_ttl
        self.generation_ttl = generation_ttl
        self.max_value = max_value  # bytes a stored value may take (seed 004; cache/stamps.py `TOO_BIG`)
        # The circuit breaker is the clients' (cache/redis/client.py: one guard for every Redis call);
        # `breaker_seconds` sets its window.
        self.guard = guard_of(redis)
        if breaker_seconds is not None:
            self.guard.breaker_seconds = breaker_seconds
        self.stats = CacheStats()
        self._bugs_reported: dict[str, float] = {}  # `what` -> when its last error reply was logged (`trip`)
        self.contain_losses(lost_write_wait, unreachable_write_wait)
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self.fill_lock_ms = fill_lock_ms
        self.fill_wait_ms = fill_wait_ms
        self.decoded = KeptDecoded(kept_decoded)  # composites (cache/composite.py)
        # One server: a value's fill lock is taken in the round trip that finds it missing (`_read_leasing`).
        # A cluster keeps the generations and the lock in other slots than the value, out of a script's reach.
        self._lease = None if is_cluster(redis) else redis.register_script(_READ_OR_LEASE)
        # A write's generations moved with graces (cache/refresh.py): one server only, as the hit script reads them.
        self._grace_bump = None if is_cluster(redis) else redis.register_script(GRACE_BUMP)
        self._end_graces = None if is_cluster(redis) else redis.register_script(END_GRACES)

    @classmethod
    def of(cls, redis: Redis, settings: CacheSettings, *, state: Redis | None = None) -> Cache:
        return cls(redis, state=state, ttl_jitter=settings.cache_ttl_jitter, default_ttl=settings.cache_ttl_default,
                   missing_ttl=settings.cache_ttl_missing, generation_ttl=settings.cache_ttl_generations,
                   kept_decoded=settings.composites_kept_decoded, lost_write_wait=settings.redis_lost_write_wait,
                   unreachable_write_wait=settings.redis_unreachable_write_wait,
                   max_value=settings.cache_max_value_bytes)

    @staticmethod
    def _queue_mget(pipe: Pipeline, names: Sequence[str]) -> int:
        """Queue MGETs of at most BATCH keys each; returns how many were queued (see `_joined`)."""
        for start in range(0, len(names), BATCH):
            pipe.mget(list(names[start:start + BATCH]))
        return -(-len(names) // BATCH)

    @staticmethod
    def _joined(results: Sequence[Any], commands: int) -> tuple[list[Any], list[Any]]:
        """Split a pipeline's results into the last `commands` MGET replies joined, and what came before."""
        head, tail = list(results[:len(results) - commands]), results[len(results) - commands:]
        return head, [value for reply in tail for value in reply]

    async def get_many(
        self, cache_keys: Sequence[str], tags_of: Sequence[Sequence[str]], *, store: Sequence[Fill] = ()
    ) -> tuple[list[Any], list[bytes | None]]:
        """Read several values and their tag generations in one round trip.

        Returns the values (`MISSING` where absent or stale) and, per key, the stamp a fresh value
        computed now must carry (None when Redis is unavailable: then nothing is stored). `store`
        (as in `set_many`) rides along in the same round trip: a fill a step of the read computed
        before this one.
        """
        count = len(cache_keys)
        store, unlocks = self._with_riders(store)
        if not count:
            await self.set_many(store, unlock=unlocks)
            return [], []
        if not self.available:
            response_capture.report(None)
            return [MISSING] * count, [None] * count
        all_tags = [self._all_tags(t) for t in tags_of]
        distinct = list(dict.fromkeys(tag for group in all_tags for tag in group))
        value_commands, gen_commands = -(-count // BATCH), -(-len(distinct) // BATCH)
        try:
            results = await self._read_with_fills(
                store, unlocks, value_commands + gen_commands,
                lambda pipe: (self._queue_mget(pipe, cache_keys), self._queue_mget(pipe, keys.generations(distinct))))
            rest, raw_gens = self._joined(results, gen_commands)
            _, raw_values = self._joined(rest, value_commands)
            raw_values = await self.made_whole(raw_values)
            gens = dict(zip(distinct, await self._ensure_generations(distinct, raw_gens), strict=True))
        except RedisError as exc:
            self.trip(exc, "read")
            response_capture.report(None)
            return [MISSING] * count, [None] * count
        response_capture.report(gens)
        return self._judged(cache_keys, raw_values, all_tags, gens)

    async def _read_with_fills(self, store: Sequence[Fill], unlocks: Sequence[str], reads: int,
                               queue_reads: Callable[[Pipeline], object], *, raise_on_error: bool = True) -> list[Any]:
        """One round trip: `store` and the lock releases `unlocks` (`_with_riders`), then the `reads` commands
        `queue_reads` queues; every reply. A fill too large to go with them goes first, in pipelines of its
        own."""
        await self.recover_if_needed()
        if len(store) + len(unlocks) + reads > BATCH:
            await self._set_chunked(store, unlock=unlocks)
            store, unlocks = (), []
        async with self.redis.pipeline(transaction=False) as pipe:
            self._queue_sets(pipe, store)
            self._queue_unlocks(pipe, unlocks)
            queue_reads(pipe)
            replies: list[Any] = await pipe.execute(raise_on_error=raise_on_error)
            return replies

    async def made_whole(self, raws: Sequence[bytes | None]) -> list[bytes | None]:
        """Stored values as read, those kept in parts made whole (cache/stamps.py): their parts read in one more
        round trip; None for one whose part is gone (evicted: a miss)."""
        made = list(raws)
        named = [(i, raw, parts) for i, raw in enumerate(raws) if raw is not None and (parts := part_keys(raw))]
        if named:
            found = iter(await self.read_parts([key for _, _, parts in named for key in parts]))
            for i, raw, parts in named:
                made[i] = whole(raw, [next(found) for _ in parts])
        return made

    async def read_parts(self, part_names: Sequence[str]) -> list[bytes | None]:
        """The values of `part_names`, in one round trip (MGETs of at most BATCH keys)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            commands = self._queue_mget(pipe, part_names)
            return self._joined(await pipe.execute(), commands)[1]

    async def joined_parts(self, part_names: Sequence[str]) -> bytes | None:
        """The bytes kept in `part_names`, in order, joined; None when a part is gone (a response body's)."""
        parts = await self.read_parts(part_names)
        return None if any(part is None for part in parts) else b"".join(cast("list[bytes]", parts))

    def _with_riders(self, store: Sequence[Fill]) -> tuple[Sequence[Fill], list[str]]:
        """`store`, and this request's fills waiting for a round trip, with their locks to release: this one."""
        riding = self._riding()
        if riding is None or not self.available:
            return store, []
        fills, unlocks = riding.take()
        return [*store, *fills], unlocks

    def _judged(self, cache_keys: Sequence[str], raw_values: Sequence[bytes | None], all_tags: Sequence[list[str]],
                gens: Mapping[str, bytes]) -> tuple[list[Any], list[bytes | None]]:
        """The values read (`MISSING` where absent or stale: their stamps are not the current generations')
        and the stamps a value computed now carries; counted in the stats and metrics."""
        parts = stamp_parts(gens)
        epoch = parts[keys.GLOBAL_TAG]  # every stamp's first part (`_all_tags`)
        values: list[Any] = []
        stamps: list[bytes | None] = []
        outcomes: Counter[tuple[str, str]] = Counter()  # (family, result): one metrics update per pair
        cold = False
        for key, raw, group in zip(cache_keys, raw_values, all_tags, strict=True):
            stamp = b",".join(parts[t] for t in group)
            stamps.append(stamp)
            if raw is None:
                result, value, cold = "miss", MISSING, True
            else:
                stored, _, rest = raw.partition(b"|")
                if stored != stamp:  # stale: its body is not decoded (nor decompressed) at all
                    result, value = "stale", MISSING
                    cold = cold or stored.partition(b",")[0] != epoch
                elif rest == TOO_BIG:  # computed by each reader, no fill lock, not kept: no stamp to keep it with
                    result, value, stamps[-1] = "too_big", MISSING, None
                else:
                    result, value = "hit", orjson.loads(json_of(rest))
            outcomes[(keys.family(key), result)] += 1
            values.append(value)
        if cold:
            response_capture.read_cold()
        for (family, result), n in outcomes.items():
            self.stats.count(result, n)
            metrics.child(metrics.CACHE_READS, "value", family, result).inc(n)
        return values, stamps

    async def get_cached_data(self, key: str, tags: Sequence[str] = ()) -> Any | None:
        values, _ = await self.get_many([key], [tags])
        return None if values[0] is MISSING else values[0]

    async def cache_data(self, key: str, data: Any, ttl: int | None = None, tags: Sequence[str] = ()) -> None:
        """Store a value computed *now*. For values computed from the database use `cached_query`,
        which stamps the generations read before the query ran."""
        _, stamps = await self.get_many([key], [tags])
        await self.set_many([(key, data, stamps[0], ttl)])

    async def cached_query(
        self,
        cache_key: str,
        query_func: Callable[..., Awaitable[Any]],
        ttl: int | None = None,
        force_refresh: bool = False,
        *,
        tags: Sequence[str] = (),
        lock: bool = True,
        **query_params: Any,
    ) -> Any:
        """Return the cached value of `cache_key`, or compute it with `query_func(**query_params)`.

        Concurrent misses of one key in this process share a single computation; across processes the
        fill lock makes the others wait for it, unless `lock` is False (a query as cheap as the lock, such
        as a point lookup by a unique column). On one Redis server the lock is taken by the read that finds
        the value missing (`_read_leasing`); on a cluster, in a round trip of its own.
        """
        lease = Lease.UNTRIED
        if lock and not force_refresh:
            values, stamps, lease = await self._read_leasing(cache_key, tags)
        else:
            values, stamps = await self.get_many([cache_key], [tags])
        if values[0] is not MISSING and not force_refresh:
            return values[0]
        flight_key = cache_key + "\0" + (stamps[0] or b"").decode()
        pending = self._inflight.get(flight_key)
        if pending is not None and not force_refresh:
            if lease is Lease.OURS:  # the lock had expired under the computation under way: that one's, not this
                await self.release_fill_lock(cache_key, stamp=stamps[0] or b"")
            return await asyncio.shield(pending)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[flight_key] = future
        try:
            data = await self._fill(cache_key, tags, stamps[0], ttl, query_func, query_params,
                                    force_refresh or not lock, lease)
            future.set_result(data)
            return data
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            self._inflight.pop(flight_key, None)

    async def _fill(self, cache_key: str, tags: Sequence[str], stamp: bytes | None, ttl: int | None,
                    query_func: Callable[..., Awaitable[Any]], query_params: dict[str, Any],
                    unlocked: bool, lease: Lease = Lease.UNTRIED) -> Any:
        """Compute a missing value, one worker at a time for each generation of it: the holder of the fill
        lock of the generation read (`stamp`) computes, the others wait briefly for its result (stampede
        protection across processes). A write while they wait moves the generation: the holder's value
        will be a miss for them, so they stop waiting for it and take the new generation's lock. `lease`:
        the lock as the read tried it (`_read_leasing`)."""
        if lease is Lease.UNTRIED:
            lease = await self.take_fill_lock(cache_key, stamp) if stamp is not None and not unlocked else Lease.NO_LOCK
        deadline = time.monotonic() + self.fill_wait_ms / 1000
        poll = FILL_POLL_FIRST
        while lease is Lease.ANOTHERS and time.monotonic() < deadline:
            await asyncio.sleep(poll)
            poll = min(poll * 2, FILL_POLL_MOST)
            values, stamps = await self.get_many([cache_key], [tags])
            if values[0] is not MISSING:
                return values[0]
            if stamps[0] != stamp:
                stamp = stamps[0]
                lease = await self.take_fill_lock(cache_key, stamp) if stamp is not None else Lease.NO_LOCK
        try:
            data = await query_func(**query_params)
        except BaseException:
            if lease is Lease.OURS:
                await self.release_fill_lock(cache_key, stamp=stamp or b"")
            raise
        await self.ride_or_store([(cache_key, data, stamp, ttl)],
                                  [keys.fill_lock(cache_key, stamp or b"")] if lease is Lease.OURS else [])
        return data

    async def _read_leasing(self, cache_key: str, tags: Sequence[str]
                            ) -> tuple[list[Any], list[bytes | None], Lease]:
        """`get_many` of one key, and when its value must be computed, its fill lock tried in the same round
        trip (`_READ_OR_LEASE`): OURS, ANOTHERS, or UNTRIED (a cluster, Redis unavailable, a generation to
        create)."""
        all_tags = self._all_tags(tags)
        if self._lease is None or not self.available or len(all_tags) >= BATCH:
            return (*await self.get_many([cache_key], [tags]), Lease.UNTRIED)
        store, unlocks = self._with_riders(())
        script_keys = [cache_key, *keys.generations(all_tags)]
        script_args: list[str | int] = [keys.FILL_LOCK_PREFIX, self.fill_lock_ms, *all_tags]
        script = self._lease
        try:
            *sent, found = await self._read_with_fills(
                store, unlocks, 1, lambda pipe: queue_script(pipe, script, script_keys, script_args),
                raise_on_error=False)
            found = await script_reply(found, script, script_keys, script_args)
            for reply in sent:
                if isinstance(reply, Exception):
                    raise reply
            raw, raw_gens, taken, leased_under = found
            [raw] = await self.made_whole([raw])
            gens = dict(zip(all_tags, await self._ensure_generations(all_tags, raw_gens), strict=True))
        except RedisError as exc:
            self.trip(exc, "read")
            response_capture.report(None)
            return [MISSING], [None], Lease.UNTRIED
        response_capture.report(gens)
        values, stamps = self._judged([cache_key], [raw], [all_tags], gens)
        if taken == _UNTRIED:
            return values, stamps, Lease.UNTRIED
        if leased_under != stamps[0]:  # never, as both build a stamp alike; if they ever differ, not this lock
            await self.release_fill_lock(cache_key, stamp=leased_under)
            return values, stamps, Lease.UNTRIED
        return values, stamps, Lease.OURS if taken else Lease.ANOTHERS

    async def cached_many(
        self,
        cache_keys: Sequence[str],
        tags_of: Sequence[Sequence[str]],
        fetch_missing: Callable[[list[int]], Awaitable[list[Any]]],
        ttl: int | None = None,
        *,
        force: bool = False,
        store: Sequence[Fill] = (),
    ) -> list[Any]:
        """Batch read-through: one Redis round trip for all keys, one `fetch_missing(indexes)` call
        for the misses (it returns their values in the same order), one pipeline to store them (within a
        request, the request's next read: `RidingFills`). `force` recomputes every key (the revalidator),
        still stamped before the query runs; `store` rides along with the read (see `get_many`)."""
        values, stamps = await self.get_many(cache_keys, tags_of, store=store)
        missing = list(range(len(values))) if force else [i for i, v in enumerate(values) if v is MISSING]
        if missing:
            fetched = await fetch_missing(missing)
            for i, data in zip(missing, fetched, strict=True):
                values[i] = data
            await self.ride_or_store(
                [(cache_keys[i], values[i], stamps[i], ttl) for i in missing if values[i] is not None], [])
        return values
