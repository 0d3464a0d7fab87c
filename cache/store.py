"""The cache core: `cache_data`, `get_cached_data`, `cached_query` (seed 002), made correct.

Every stored value carries a *stamp*: the generations of the tags it was computed under (an entity
such as `author:5`, a family such as `shouts`, and the global epoch). Invalidating a tag is one INCR of
its generation key. A read accepts a value only if its stamp equals the current generations, so:

- a reader that loaded rows before a write committed stamps its value with the generation it saw
  *before* the query; the write's INCR makes that stamp old, and the late value reads as a miss
  (the read-compute-write race cannot store a stale value as valid);
- invalidating a family is O(1), with no KEYS or SCAN;
- a generation key that is missing (Redis flushed, restarted or evicted) makes every value that
  depends on it a miss, and is re-created with a random start so old stamps can never match again.

Redis is only a cache: every Redis error degrades to the database, and a circuit breaker skips Redis
for a few seconds after an error. An invalidation that could not be delivered forgets the global and
live epochs wherever a server answers before its write does (`Cache.lose_write`), and again as soon as
Redis answers this worker, so nothing computed before the lost invalidation is served after.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from ambient import RIDING_FILLS
from cache import keys, response_capture
from cache.containment import LOST_WRITE_WAIT, UNREACHABLE_WRITE_WAIT, LostWrites
from cache.lua import load_lua
from cache.redis.client import cannot_serve, guard_of, is_cluster, queue_script, queue_set, script_reply
from cache.refresh import END_GRACES, GRACE_BUMP, GRACED_TAGS_MOST, Refreshing, refreshing_now
from cache.stamps import KeptDecoded, encode, json_of, stamp_parts
from telemetry import metrics

log = logging.getLogger(__name__)

MISSING = object()  # what `get_many` returns for a value that is absent or stale
# A value to store: (key, data, the stamp read before it was computed, ttl); no stamp, not stored.
Fill = tuple[str, Any, bytes | None, int | None]


_READ_OR_LEASE = load_lua("read_or_lease")
_UNTRIED = -1  # `_READ_OR_LEASE` did not try the fill lock

# Seed 004: at most this many keys in one command and commands in one pipeline.
BATCH = 100
# At most this many commands are left to a caller to send with its own (`Cache.queue_left`: a response's store
# and its rendered items go in the same pipeline); more go out on their own.
LEFT_MOST = BATCH // 2
DEFAULT_TTL = 7 * 86_400
MISSING_TTL = 60
GENERATION_TTL = 30 * 86_400
# A worker waiting for another's fill looks again after FILL_POLL_FIRST seconds, then after twice as long
# each time, up to FILL_POLL_MOST: a fill is a few milliseconds (a list's statement and its store), and a
# waiter that looked again only every 20 ms waited several times longer than the fill took.
FILL_POLL_FIRST = 0.002
FILL_POLL_MOST = 0.02
# Seconds between two reports of a bug's error replies during the same `what` (`Cache.trip`).
BUG_REPORT_EVERY = 60.0


class RidingFills:
    """The fills a request's reads computed (`cached_query`'s values, `cached_many`'s entities) that wait to
    ride along with its next read (`Cache.get_many`) instead of taking a round trip of their own, with the
    fill locks released with them; what is left when the request ends is sent then (`Cache.fills_ride_along`),
    or kept here for the caller who gave them to send after its answer (`Cache.queue_left`: a computed
    answer no longer waits a round trip for them before it is sent). A value recomputed after a write is stored
    in the round trip that reads what it refers to (a page's authors and shouts), and its reader goes on
    at once instead of waiting a round trip (four turns of the loop, under load the other requests' work
    in each) for the store."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache  # whose fills these are: another cache (another Redis) neither adds nor takes any
        self.fills: list[Fill] = []
        self.unlocks: list[str] = []
        self.open = True  # closed once the request has ended: a fill after it (a stream's) goes out alone

    def take(self) -> tuple[list[Fill], list[str]]:
        fills, unlocks, self.fills, self.unlocks = self.fills, self.unlocks, [], []
        return fills, unlocks


@dataclass(slots=True)
class CacheStats:
    hits: int = 0
    misses: int = 0
    stale: int = 0
    errors: int = 0

    def count(self, result: str, n: int = 1) -> None:
        """Count `n` reads of a result: hit, miss or stale."""
        if result == "hit":
            self.hits += n
        elif result == "miss":
            self.misses += n
        else:
            self.stale += n


class Cache(LostWrites):
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

    # --- availability -----------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        return self.guard.available

    def trip(self, exc: BaseException, what: str) -> None:
        """Redis failed during `what`. When it cannot serve (it did not answer, or answered that it is full,
        read-only, busy...: `cannot_serve`), readers use the database for the breaker's window. Any other
        error reply (a script's error, a wrong type) is a bug of ours, not an outage: it is logged as one,
        at most once a minute for each `what`, and only the call that met it went to the database."""
        self.stats.errors += 1
        if cannot_serve(exc):
            self.guard.trip(exc, what)
            return
        metrics.REDIS_ERRORS.labels(what).inc()
        now = time.monotonic()
        if now - self._bugs_reported.get(what, -BUG_REPORT_EVERY) >= BUG_REPORT_EVERY:
            self._bugs_reported[what] = now
            log.error("Redis answered %s with an error, a bug (the breaker stays closed): %s", what, exc,
                      exc_info=exc)

    def jittered(self, ttl: int | None) -> int | None:
        """Seed 004: spread the expiry of keys written together."""
        if not ttl:
            return None
        spread = int(ttl * self.ttl_jitter)
        return ttl + random.randint(0, spread) if spread else ttl

    # --- generations -------------------------------------------------------------------------------

    @staticmethod
    def _all_tags(tags: Iterable[str]) -> list[str]:
        ordered = [keys.GLOBAL_TAG]
        for tag in tags:
            if tag not in ordered:
                ordered.append(tag)
        return ordered

    async def _ensure_generations(self, tags: Sequence[str], current: list[bytes | None]) -> list[bytes]:
        """Missing generation keys are created with a random start (never 0, never an old value)."""
        missing = [t for t, g in zip(tags, current, strict=True) if g is None]
        if missing:
            fetched: list[bytes | None] = []
            for start in range(0, len(missing), BATCH // 2):  # two commands per tag
                chunk = missing[start:start + BATCH // 2]
                async with self.redis.pipeline(transaction=False) as pipe:
                    for tag in chunk:
                        pipe.set(keys.generation(tag), random.getrandbits(48), nx=True, ex=self.generation_ttl)
                    pipe.mget(keys.generations(chunk))
                    *_, got = await pipe.execute()
                fetched += got
            by_tag = dict(zip(missing, fetched, strict=True))
            current = [g if g is not None else by_tag[t] for t, g in zip(tags, current, strict=True)]
        return [g or b"0" for g in current]

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

    # --- the seed API ------------------------------------------------------------------------------

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
            return cast("list[Any]", await pipe.execute(raise_on_error=raise_on_error))

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

    async def observe(self, tags: Sequence[str]) -> None:
        """Let a response being stored depend on `tags` (for data read outside the stamped values, such
        as live follow sets): their generations join its stamp. Free when no response is being stored."""
        if not response_capture.active():
            return
        if not self.available:
            response_capture.report(None)
            return
        distinct = self._all_tags(tags)
        try:
            raw = cast("list[bytes | None]", await self.redis.mget(keys.generations(distinct)))
            gens = dict(zip(distinct, await self._ensure_generations(distinct, raw), strict=True))
        except RedisError as exc:
            self.trip(exc, "read")
            response_capture.report(None)
            return
        response_capture.report(gens)

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

    async def _move(self, tags: list[str], also: Callable[[Pipeline], Awaitable[None]] | None) -> None:
        """`also`'s commands, then the generations of `tags` moved and the clock after them: at most BATCH
        commands a pipeline (seed 004), `also`'s, then as many moves as leave room for the clock's."""
        remaining = tags
        while True:
            async with self.redis.pipeline(transaction=False) as pipe:
                if also is not None:
                    await also(pipe)
                    also = None
                room = max(BATCH - 1 - len(pipe), 0)  # what the pipeline holds already is `also`'s
                for tag in remaining[:room]:
                    self._queue_bump(pipe, tag)
                self._queue_clock(pipe)
                await pipe.execute()
            remaining = remaining[room:]
            if not remaining:
                break

    async def _move_graced(self, tags: list[str], also: Callable[[Pipeline], Awaitable[None]] | None,
                           refreshing: Refreshing) -> None:
        """`_move`, for a write answered over HTTP (cache/refresh.py): `also`'s commands, then one script that
        moves the generations, each with its grace, and the clock after them, and finds the responses the write
        is to compute again; noted in `refreshing`."""
        assert self._grace_bump is not None
        moved_to = [random.getrandbits(62) + 1 for _ in tags]
        graces = dict(zip(map(keys.grace, tags), moved_to, strict=True))
        script_keys = [*keys.generations(tags), *graces, *map(keys.refresh_index, tags), keys.invalidation_clock()]
        script_args = [self.generation_ttl, refreshing.grace_ms, random.getrandbits(62) + 1, refreshing.most,
                       *moved_to]
        async with self.redis.pipeline(transaction=False) as pipe:
            if also is not None:
                await also(pipe)
            queue_script(pipe, self._grace_bump, script_keys, script_args)
            *replies, found = await pipe.execute(raise_on_error=False)
        found = await script_reply(found, self._grace_bump, script_keys, script_args)
        refreshing.noted(graces, found)  # whatever became of `also`'s: its graces are to be ended
        failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if failed is not None:
            raise failed

    async def end_graces(self, refreshing: Refreshing) -> None:
        """End a write's graces (cache/refresh.py) before it is answered; when Redis cannot be told, wait until
        they have expired on their own: no reader is served under them once the write is answered."""
        assert self._end_graces is not None  # graces are set on one server only
        try:
            await self._end_graces(keys=list(refreshing.graces), args=list(refreshing.graces.values()))
        except RedisError as exc:
            self.trip(exc, "write graces")
            await asyncio.sleep(refreshing.grace_left())

    def _queue_bump(self, pipe: Pipeline, tag: str) -> None:
        """Move a generation to a random value, never one the key held before (2^62 of them; an INCR
        restarts at 1 after an expiry, a value a stamp stored in an earlier life of the key may carry), and
        push its expiry out: one command."""
        queue_set(pipe, keys.generation(tag), b"%d" % (random.getrandbits(62) + 1), self.generation_ttl)

    def _queue_clock(self, pipe: Pipeline) -> None:
        """Move the invalidation clock after the generations of the same pipeline: a response checked at the
        clock's value before is checked again. To a random value, as a generation moves (`_queue_bump`): it
        only has to differ from every value a response was checked at, and never overflows."""
        queue_set(pipe, keys.invalidation_clock(), b"%d" % (random.getrandbits(62) + 1), self.generation_ttl)

    def _queue_sets(self, pipe: Pipeline, items: Sequence[Fill]) -> None:
        for key, data, stamp, ttl in items:
            if stamp is not None:
                lifetime = self.missing_ttl if data is None else ttl or self.default_ttl
                queue_set(pipe, key, encode(stamp, data), self.jittered(lifetime))

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
        owner: bool | None = None
        if lock and not force_refresh:
            values, stamps, owner = await self._read_leasing(cache_key, tags)
        else:
            values, stamps = await self.get_many([cache_key], [tags])
        if values[0] is not MISSING and not force_refresh:
            return values[0]
        flight_key = cache_key + "\0" + (stamps[0] or b"").decode()
        pending = self._inflight.get(flight_key)
        if pending is not None and not force_refresh:
            if owner:  # the lock had expired under the computation under way: that one's, not this
                await self.release_fill_lock(cache_key, stamp=stamps[0] or b"")
            return await asyncio.shield(pending)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[flight_key] = future
        try:
            data = await self._fill(cache_key, tags, stamps[0], ttl, query_func, query_params,
                                    force_refresh or not lock, owner)
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
                    unlocked: bool, owner: bool | None = None) -> Any:
        """Compute a missing value, one worker at a time for each generation of it: the holder of the fill
        lock of the generation read (`stamp`) computes, the others wait briefly for its result (stampede
        protection across processes). A write while they wait moves the generation: the holder's value
        will be a miss for them, so they stop waiting for it and take the new generation's lock. `owner`:
        the lock as the read tried it (`_read_leasing`), None when it was not tried."""
        if owner is None:
            owner = await self.take_fill_lock(cache_key, stamp) if stamp is not None and not unlocked else None
        deadline = time.monotonic() + self.fill_wait_ms / 1000
        poll = FILL_POLL_FIRST
        while owner is False and time.monotonic() < deadline:
            await asyncio.sleep(poll)
            poll = min(poll * 2, FILL_POLL_MOST)
            values, stamps = await self.get_many([cache_key], [tags])
            if values[0] is not MISSING:
                return values[0]
            if stamps[0] != stamp:
                stamp = stamps[0]
                owner = await self.take_fill_lock(cache_key, stamp) if stamp is not None else None
        try:
            data = await query_func(**query_params)
        except BaseException:
            if owner:
                await self.release_fill_lock(cache_key, stamp=stamp or b"")
            raise
        await self._ride_or_store([(cache_key, data, stamp, ttl)],
                                  [keys.fill_lock(cache_key, stamp or b"")] if owner else [])
        return data

    async def _ride_or_store(self, fills: list[Fill], unlocks: list[str]) -> None:
        """Fills (and their locks' release) that ride along with the request's next read, or, outside a
        request, are stored now."""
        riding = self._riding()
        if riding is not None:
            riding.fills += fills
            riding.unlocks += unlocks
        else:
            await self.set_many(fills, unlock=unlocks)

    async def _read_leasing(self, cache_key: str, tags: Sequence[str]
                            ) -> tuple[list[Any], list[bytes | None], bool | None]:
        """`get_many` of one key, and when its value must be computed, its fill lock tried in the same round
        trip (`_READ_OR_LEASE`): True, the lock is the caller's; False, another holds it; None, not tried
        (a cluster, Redis unavailable, a generation to create)."""
        all_tags = self._all_tags(tags)
        if self._lease is None or not self.available or len(all_tags) >= BATCH:
            return (*await self.get_many([cache_key], [tags]), None)
        store, unlocks = self._with_riders(())
        script_keys = [cache_key, *keys.generations(all_tags)]
        script_args: list[str | int] = [keys.FILL_LOCK_PREFIX, self.fill_lock_ms, *all_tags]
        lease = self._lease
        try:
            *sent, found = await self._read_with_fills(
                store, unlocks, 1, lambda pipe: queue_script(pipe, lease, script_keys, script_args),
                raise_on_error=False)
            found = await script_reply(found, lease, script_keys, script_args)
            for reply in sent:
                if isinstance(reply, Exception):
                    raise reply
            raw, raw_gens, taken, leased_under = found
            gens = dict(zip(all_tags, await self._ensure_generations(all_tags, raw_gens), strict=True))
        except RedisError as exc:
            self.trip(exc, "read")
            response_capture.report(None)
            return [MISSING], [None], None
        response_capture.report(gens)
        values, stamps = self._judged([cache_key], [raw], [all_tags], gens)
        if taken == _UNTRIED:
            return values, stamps, None
        if leased_under != stamps[0]:  # never, as both build a stamp alike; if they ever differ, not this lock
            await self.release_fill_lock(cache_key, stamp=leased_under)
            return values, stamps, None
        return values, stamps, bool(taken)

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

    async def take_fill_lock(self, cache_key: str, stamp: bytes = b"") -> bool | None:
        """True: ours; False: another worker computes; None: Redis unavailable (just compute). `stamp`:
        the generation of a cached value being computed (keys.fill_lock)."""
        return (await self.take_fill_locks([cache_key], stamp))[0]

    async def take_fill_locks(self, cache_keys: Sequence[str], stamp: bytes = b"") -> list[bool | None]:
        """`take_fill_lock` for several keys in one round trip."""
        if not cache_keys:
            return []
        if not self.available:
            return [None] * len(cache_keys)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for cache_key in cache_keys:
                    pipe.set(keys.fill_lock(cache_key, stamp), b"1", nx=True, px=self.fill_lock_ms)
                return [bool(taken) for taken in await pipe.execute()]
        except RedisError as exc:
            self.trip(exc, "fill lock")
            return [None] * len(cache_keys)

    async def release_fill_lock(self, *cache_keys: str, stamp: bytes = b"") -> None:
        if not cache_keys:
            return
        try:
            await self.redis.delete(*(keys.fill_lock(k, stamp) for k in cache_keys))
        except RedisError as exc:
            self.trip(exc, "fill lock release")

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
            await self._ride_or_store(
                [(cache_keys[i], values[i], stamps[i], ttl) for i in missing if values[i] is not None], [])
        return values

    # --- invalidation ------------------------------------------------------------------------------

    async def invalidate_tags(self, tags: Iterable[str], *,
                              also: Callable[[Pipeline], Awaitable[None]] | None = None) -> None:
        """Make every value that depends on any of `tags` a miss; `also` adds the commit's other commands
        (live structure updates, for the state Redis) before them: in the same pipeline when the state is
        the same single server, else (another Redis, or a cluster) in a pipeline of its own sent first.
        Never raises: a lost invalidation is remembered and answered with epoch bumps when Redis is back."""
        tag_list = list(dict.fromkeys(tags))
        # a member's tag moves with its family's (keys.covering): stamps may name the family's alone
        tag_list = list(dict.fromkeys([*tag_list, *filter(None, map(keys.covering, tag_list))]))
        if not tag_list and also is None:
            return
        try:
            # On a Redis Cluster one pipeline goes to each node at once, in no order: the live structures'
            # updates must have landed before a generation moves (below), so they go first, on their own.
            if also is not None and (self.state is not self.redis or is_cluster(self.redis)):
                async with self.state.pipeline(transaction=False) as pipe:
                    await also(pipe)
                    await pipe.execute()
                also = None
            # Live structures change before the generations move: a reader that sees a new generation
            # then also sees the new structures, so it cannot cache a page built from the old ones under
            # the new stamp.
            refreshing = refreshing_now()
            if refreshing is not None and self._grace_bump is not None and 0 < len(tag_list) <= GRACED_TAGS_MOST:
                await self._move_graced(tag_list, also, refreshing)
            else:
                await self._move(tag_list, also)
        except RedisError as exc:
            await self.lose_write(exc, "invalidation")
            return
        for tag in tag_list:
            metrics.INVALIDATIONS.labels(keys.family(tag)).inc()


