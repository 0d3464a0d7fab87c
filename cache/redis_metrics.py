"""Seed 000 section 8: metrics and statistics kept in Redis, for dashboards that read Redis.

- `metrics:{name}:{period}` STRINGs: requests, errors, cache hits and misses, response-cache hits,
  invalidations, Redis and database errors, per `hourly:YYYY-MM-DDTHH` (kept two days) and
  `daily:YYYY-MM-DD` (kept 30 days); `metrics:active_sessions:{period}` is a HyperLogLog of the sessions
  used in the period (a STRING to Redis; PFCOUNT reads it).
- `stats:{entity}:{timeframe}` HASHes: committed row changes of one table (fields insert, update, delete),
  and `stats:cache_reads:{timeframe}` the cache's hits, misses and stale reads per layer and key family
  (fields `value|author:id|hit`), per `daily:YYYY-MM-DD` and `weekly:YYYY-Www` (kept 30 days).

Each worker adds what its own instruments (telemetry/metrics.py) counted since its last flush, every
METRICS_FLUSH_INTERVAL seconds, in one pipeline: one round trip per flush, none per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from redis.exceptions import RedisError

from cache import keys
from cache.periodic import Periodic
from cache.redis.limits import BATCH
from cache.store import Cache
from telemetry import metrics

HOURLY_TTL = 2 * 86_400
DAILY_TTL = 30 * 86_400
WEEKLY_TTL = 30 * 86_400

# The metrics kept in Redis, each read from this process's instruments.
TOTALS: dict[str, Callable[[], float]] = {
    "requests": lambda: metrics.total(metrics.REQUESTS),
    "errors": lambda: metrics.total(metrics.REQUESTS, outcome=("error", "timeout")),
    "cache_hits": lambda: metrics.total(metrics.CACHE_READS, result="hit"),
    "cache_misses": lambda: metrics.total(metrics.CACHE_READS, result=("miss", "stale")),
    "response_hits": lambda: metrics.total(metrics.CACHE_READS, layer="response", result="hit"),
    "invalidations": lambda: metrics.total(metrics.INVALIDATIONS),
    "redis_errors": lambda: metrics.total(metrics.REDIS_ERRORS),
    "database_errors": lambda: metrics.total(metrics.DATABASE_ERRORS),
}


def periods(now: float) -> list[tuple[str, int]]:
    moment = datetime.fromtimestamp(now, UTC)
    return [(f"hourly:{moment:%Y-%m-%dT%H}", HOURLY_TTL), (f"daily:{moment:%Y-%m-%d}", DAILY_TTL)]


def timeframes(now: float) -> list[tuple[str, int]]:
    moment = datetime.fromtimestamp(now, UTC)
    return [(f"daily:{moment:%Y-%m-%d}", DAILY_TTL), (f"weekly:{keys.week_of(now)}", WEEKLY_TTL)]


CACHE_READS = "cache_reads"  # stats:cache_reads:{timeframe} fields `{layer}|{family}|{result}`


def _statistics() -> dict[tuple[str, str], float]:
    """(entity, field) -> this process's count: committed writes per table (field: the action), and cache
    reads as the entity `cache_reads` (field: layer|family|result; `discours cache stats` reads them)."""
    counts = {(s.labels["entity"], s.labels["action"]): s.value
              for metric in metrics.WRITES.collect() for s in metric.samples if s.name.endswith("_total")}
    for metric in metrics.CACHE_READS.collect():
        for s in metric.samples:
            if s.name.endswith("_total"):
                counts[(CACHE_READS, "|".join((s.labels["layer"], s.labels["family"], s.labels["result"])))] = s.value
    return counts


class RedisMetrics:
    def __init__(self, cache: Cache, *, interval: float = 10.0) -> None:
        self.cache = cache
        self._flushed = {name: 0.0 for name in TOTALS}
        self._flushed_statistics: dict[tuple[str, str], float] = {}
        self._loop = Periodic("metrics flush", interval, self._round)

    async def flush(self, now: float | None = None) -> int:
        """Add what was counted since the last flush; returns how many commands were sent. What could not
        be sent is added by the next flush (sessions seen are dropped), so counts survive an outage; a flush
        cut off between two of its pipelines may count its delivered part again."""
        now = time.time() if now is None else now
        counts = {name: read() for name, read in TOTALS.items()}
        statistics = _statistics()
        sessions = list(metrics.sessions_seen)
        metrics.sessions_seen.clear()
        commands: list[tuple[str, tuple[object, ...]]] = []
        for period, ttl in periods(now):
            for name, value in counts.items():
                delta = int(value - self._flushed[name])
                if delta:
                    commands += [("incrby", (keys.metric(name, period), delta)),
                                 ("expire", (keys.metric(name, period), ttl))]
            for start in range(0, len(sessions), 1000):
                commands.append(("pfadd", (keys.metric("active_sessions", period), *sessions[start:start + 1000])))
            if sessions:
                commands.append(("expire", (keys.metric("active_sessions", period), ttl)))
        for timeframe, ttl in timeframes(now):
            touched = set()
            for (entity, name), value in statistics.items():
                delta = int(value - self._flushed_statistics.get((entity, name), 0))
                if delta:
                    commands.append(("hincrby", (keys.entity_stats(entity, timeframe), name, delta)))
                    touched.add(entity)
            commands += [("expire", (keys.entity_stats(entity, timeframe), ttl)) for entity in sorted(touched)]
        if not commands:
            return 0
        try:
            for start in range(0, len(commands), BATCH):
                async with self.cache.state.pipeline(transaction=False) as pipe:
                    for name, args in commands[start:start + BATCH]:
                        getattr(pipe, name)(*args)
                    await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "metrics flush")
            return 0
        self._flushed, self._flushed_statistics = counts, statistics
        return len(commands)

    async def _round(self) -> None:
        await self.flush()  # quietly: the loop logs what a round returns

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()
        await self.flush()
