"""What the cache holds, for `discours cache stats` and `discours cache inspect` (admin tools, never the
request path): keys walked with SCAN in batches of 100, never KEYS (seed 004)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from cache import keys
from cache.redis.limits import BATCH
from cache.redis_metrics import CACHE_READS
from cache.response.responses import IN_PARTS, as_bytes, gunzip, part_names
from cache.stamps import decode, parse_stamp
from cache.store import Cache


@dataclass
class Family:
    keys: int = 0
    bytes: int = 0
    ttls: list[int] = field(default_factory=list)  # seconds left, for keys that expire
    no_ttl: int = 0
    hits: int = 0
    misses: int = 0

    @property
    def hit_ratio(self) -> float | None:
        reads = self.hits + self.misses
        return self.hits / reads if reads else None

    def ttl_spread(self) -> tuple[int, int, int] | None:
        """Shortest, median and longest TTL left."""
        if not self.ttls:
            return None
        return min(self.ttls), int(statistics.median(self.ttls)), max(self.ttls)


async def family_stats(cache: Cache, *, progress: Callable[[int], None] | None = None,
                       day: str | None = None, state: bool = False) -> dict[str, Family]:
    """Keys, memory and TTLs per key family (SCAN, then MEMORY USAGE and TTL pipelined per batch of 100),
    with the hit ratio of the value and response caches over all workers for one UTC day (today).
    `state`: of the state's Redis instead (REDIS_STATE_URL: sessions, queues, live structures), which has
    no hit ratio."""
    families: dict[str, Family] = {}
    redis = cache.state if state else cache.redis
    seen = 0
    batch: list[bytes] = []

    async def measure() -> None:
        nonlocal seen
        async with redis.pipeline(transaction=False) as pipe:
            for key in batch:
                pipe.memory_usage(key)
                pipe.ttl(key)
            replies = await pipe.execute()
        for n, key in enumerate(batch):
            size, ttl = replies[2 * n], replies[2 * n + 1]
            if ttl == -2:  # expired between SCAN and now
                continue
            entry = families.setdefault(keys.family(_text(key)), Family())
            entry.keys += 1
            entry.bytes += size or 0
            if ttl == -1:
                entry.no_ttl += 1
            else:
                entry.ttls.append(ttl)
        seen += len(batch)
        batch.clear()
        if progress is not None:
            progress(seen)

    async for key in redis.scan_iter(count=BATCH // 2):
        batch.append(key)
        if len(batch) >= BATCH // 2:  # two commands per key: at most BATCH in a pipeline
            await measure()
    if batch:
        await measure()
    if state:
        return families
    day = day or datetime.now(UTC).strftime("%Y-%m-%d")
    counts = await redis.hgetall(keys.entity_stats(CACHE_READS, f"daily:{day}"))
    for raw_field, raw_count in counts.items():
        layer, family, result = _text(raw_field).split("|")
        entry = families.setdefault(family if layer == "value" else "response", Family())
        if result == "hit":
            entry.hits += int(raw_count)
        else:
            entry.misses += int(raw_count)
    return families


async def inspect_key(cache: Cache, key: str) -> dict[str, Any]:
    """A key's type and TTL; for a cached value its decoded data, its stamp and whether it is still valid
    (every generation it was computed under is still current)."""
    redis = cache.redis
    kind = _text(await redis.type(key))
    if kind == "none":
        return {"key": key, "exists": False}
    found: dict[str, Any] = {"key": key, "exists": True, "type": kind, "family": keys.family(key),
                             "ttl": await redis.ttl(key), "bytes": await redis.memory_usage(key)}
    if kind == "hash" and keys.family(key) == "response":  # a stored response (cache/response/responses.py)
        stored = await redis.hgetall(key)
        found.update(await _checked(cache, as_bytes(stored[b"s"])))
        body = as_bytes(stored[b"b"])
        if body.startswith(IN_PARTS):  # kept in parts (seed 004)
            joined = await cache.joined_parts(part_names(body))
            if joined is None:
                found.update(value=None, parts_missing=True)  # a miss for its readers
                return found
            body = joined
        found["value"] = orjson.loads(gunzip(body) if b"z" in stored else body)
        return found
    if kind == "hash":
        found["value"] = {_text(k): _text(v)
                          for k, v in (await redis.hgetall(key)).items()}
        return found
    if kind in ("set", "zset", "list"):
        found["length"] = await {"set": redis.scard, "zset": redis.zcard, "list": redis.llen}[kind](key)
        return found
    [whole] = await cache.made_whole([as_bytes(await redis.get(key) or b"")])  # a value kept in parts too
    raw = whole or b""
    try:
        stamp, data = decode(raw)
    except (orjson.JSONDecodeError, ValueError, UnicodeDecodeError):  # a plain string (a counter, a lock)
        found["value"] = _text(raw)
        return found
    found.update(await _checked(cache, stamp))
    found["value"] = data
    return found


async def _checked(cache: Cache, stamp: bytes) -> dict[str, Any]:
    """A stamp's tags and generations, and whether each generation is still the current one."""
    generations = parse_stamp(stamp)
    current = await cache.redis.mget(keys.generations(generations)) if generations else []
    return {"stamp": {tag: _text(generation) for tag, generation in generations.items()},
            "valid": bool(generations) and list(generations.values()) == current}


def _text(value: bytes | str) -> str:
    return as_bytes(value).decode(errors="replace")


def age(seconds: float) -> str:
    """`3d 4h`, `12m`, `40s`: a TTL for people."""
    if seconds >= 86_400:
        return f"{int(seconds // 86_400)}d {int(seconds % 86_400 // 3600)}h"
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h {int(seconds % 3600 // 60)}m"
    return f"{int(seconds // 60)}m" if seconds >= 60 else f"{int(seconds)}s"


