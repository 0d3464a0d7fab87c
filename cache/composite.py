"""Composite values: a value computed from other cached reads, answered in one Redis round trip.

A page of shouts is a list of ids (one cached value), then the shouts (one cached value each): two round
trips, the second waiting for the first, on every warm read. Its composite keeps the page whole, stamped
with every generation the reads that made it saw (the list's tags, each shout's), and since a stamp names
its tags (cache/store.py), a script checks it inside Redis and returns it only if each generation is
still current: one round trip, and a write to anything the page was made of makes it a miss, as it makes
each part one. The parts stay cached too: a composite that misses is made again from them. A worker keeps
the composites it read last decoded (`Cache.decoded`): read again as the same bytes, one is not parsed
again, and what it holds is shared, so it is only ever read.

Composites nest in the response cache's capture: a hit reports its stamp, a miss reports what its parts
reported, so a stored response depends on a composite's parts as it would on the parts themselves
(cache/response_capture.py). What is computed from the viewer, or while Redis was unavailable, or
while a tag moved, is not kept.

On a Redis Cluster the generations live in other slots than the composite: a read there is two round
trips (the value, then its generations), as for the response cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from cache import keys, response_capture
from cache.lua import load_lua
from cache.redis.client import is_cluster
from cache.stamps import KeptDecoded, capture_stamp, decode, decode_json, parse_stamp, stamp_is_current, too_big
from cache.store import MISSING, Cache
from telemetry import metrics

T = TypeVar("T")

_READ = load_lua("composite_read")
_scripts: WeakKeyDictionary[Redis, AsyncScript] = WeakKeyDictionary()


def _read_script(redis: Redis) -> AsyncScript:
    script = _scripts.get(redis)
    if script is None:
        script = _scripts[redis] = redis.register_script(_READ)
    return script


# What `read_stamped` returns for a value kept as too big to keep (cache/stamps.py `TOO_BIG`): compute it,
# and do not keep it.
TOO_BIG_TO_KEEP = object()


async def read_composite(cache: Cache, key: str) -> Any:
    """The composite's value, or MISSING (absent, outdated, or Redis unavailable), or TOO_BIG_TO_KEEP."""
    return await read_stamped(cache, key, cache.decoded, decode, "composite")


async def read_stamped(cache: Cache, key: str, kept: KeptDecoded, decoder: Callable[[bytes], tuple[bytes, Any]],
                       what: str) -> Any:
    """The value under `key` as `decoder` gives it (or as `kept` holds it, when its bytes are the same), if
    the stamp it is stored with is current (reported to the response being computed), or MISSING (absent,
    outdated, or Redis unavailable), or TOO_BIG_TO_KEEP. `what`: the kind of value, for metrics."""
    if not cache.available:
        response_capture.report(None)
        return MISSING
    redis = cache.redis
    raw: bytes | None
    try:
        await cache.recover_if_needed()  # after a lost invalidation, nothing stored before is trusted
        if is_cluster(redis):
            raw = await redis.get(key)  # type: ignore[assignment]
            if raw is not None and not await stamp_is_current(redis, raw.partition(b"|")[0]):
                raw = None
        else:
            [raw] = await _read_script(redis)(keys=[key], args=[keys.generation("")])
        [raw] = await cache.made_whole([raw])  # a value kept in parts (cache/stamps.py)
    except RedisError as exc:
        cache.trip(exc, f"{what} read")
        response_capture.report(None)
        return MISSING
    if not raw:
        _count(what, "miss")
        return MISSING
    if too_big(raw):
        response_capture.report(parse_stamp(raw.partition(b"|")[0]))
        _count(what, "too_big")
        return TOO_BIG_TO_KEEP
    stamp, data = kept.decode(key, raw, decoder)  # decoded once while its bytes stay the same
    if response_capture.active():
        response_capture.report(parse_stamp(stamp))
    _count(what, "hit")
    return data


async def read_stamped_many(cache: Cache, stored_keys: Sequence[str], what: str) -> list[bytes | None]:
    """The JSON bytes of each value under `stored_keys` whose stamp is current (reported to the response being
    computed), in one round trip; None for one absent or outdated, and for all when Redis is unavailable or
    a Redis Cluster (the generations live in other slots than the values: read one by one there, with
    `read_stamped`). `what`: the kind of value, for metrics."""
    if not stored_keys or not cache.available or is_cluster(cache.redis):
        return [None] * len(stored_keys)
    try:
        await cache.recover_if_needed()  # after a lost invalidation, nothing stored before is trusted
        replies = await cache.made_whole(await _read_script(cache.redis)(keys=list(stored_keys),
                                                                         args=[keys.generation("")]))
    except RedisError as exc:
        cache.trip(exc, f"{what} read")
        return [None] * len(stored_keys)
    found: list[bytes | None] = []
    for raw in replies:
        if not raw or too_big(raw):
            _count(what, "too_big" if raw else "miss")
            found.append(None)
            continue
        stamp, body = decode_json(raw)
        response_capture.report(parse_stamp(stamp))
        _count(what, "hit")
        found.append(body)
    return found


async def cached_composite(cache: Cache, key: str, compute: Callable[[], Awaitable[T]], *,
                           ttl: int | None = None) -> T:
    """The composite under `key`, or `compute()` (made of cached reads), kept under the generations those
    reads saw."""
    found = await read_composite(cache, key)
    if found is TOO_BIG_TO_KEEP:
        return await compute()
    if found is not MISSING:
        return cast("T", found)
    capture, token = response_capture.begin()
    try:
        value = await compute()
    finally:
        response_capture.end(token)  # the outer capture (a response being computed) saw it all too
    stamp = capture_stamp(capture)
    if stamp is not None and not capture.read_viewer:  # with the request's next read, as its parts' fills go
        await cache.ride_or_store([(key, value, stamp, ttl)], [])
    return value


def _count(what: str, result: str) -> None:
    metrics.child(metrics.CACHE_READS, "value", what, result).inc()
