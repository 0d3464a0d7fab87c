"""Counters (seed 003 `count:*`): one HASH per entity, `count:{kind}:{id}`, metric -> value, kept current
by the write side (triggers/live_rules.py) and read by every `stat` field.

A page reads the counters of its entities in one round trip. Counters that are missing are computed from
SQL for exactly those ids (orm/stats.py holds the definitions) and stored under the rules of
cache/live/structures.py. View counts live apart, in `viewed:{shout_id}` (cache/live/views.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cache.live.structures import LiveStore
from orm.engine import SessionFactory, read_session
from orm.stats import AUTHOR_METRICS, SHOUT_METRICS, author_stats, community_stats, shout_stats, topic_stats

Counts = dict[str, Any]
StatsQuery = Callable[[AsyncSession, Sequence[int]], Awaitable[dict[int, Counts]]]

METRICS: dict[str, tuple[str, ...]] = {
    "shout": SHOUT_METRICS,
    "author": AUTHOR_METRICS,
    "topic": ("shouts", "followers", "authors", "comments"),
    "community": ("shouts", "followers", "authors"),
}
# Metrics that are a time rather than a count: absent (None) until there is one.
NULLABLE = frozenset({"last_commented_at"})
QUERIES: dict[str, StatsQuery] = {
    "shout": shout_stats, "author": author_stats, "topic": topic_stats, "community": community_stats,
}


# The order counters are read in: the metrics a complete HASH has, then the times that may be absent.
READ_ORDER: dict[str, tuple[str, ...]] = {
    kind: tuple(sorted(metrics, key=lambda m: m in NULLABLE)) for kind, metrics in METRICS.items()}
REQUIRED: dict[str, int] = {kind: sum(m not in NULLABLE for m in metrics) for kind, metrics in METRICS.items()}


def _complete(kind: str, values: list[int | None]) -> bool:
    """Whether a stored HASH has every metric of today's definition: one built by an earlier version,
    before a metric was added, is built again rather than read with zeros."""
    return None not in values[:REQUIRED[kind]]


def _flat(counts: Counts) -> list[Any]:
    """HSET arguments; a None time is simply absent."""
    return [x for metric, value in counts.items() if value is not None for x in (metric, value)]


async def get_counters(kind: str, ids: Sequence[int], *, live: LiveStore, db: SessionFactory,
                       refresh: bool = False) -> list[Counts]:
    """The counters of each id, in order. `refresh` recomputes them all from SQL and stores the result
    (the revalidator's reconciliation), still under the rules of cache/live/structures.py."""
    ids = list(ids)
    fields = READ_ORDER[kind]
    found, noted = await live.read_numbers(kind, "count", ids, fields, note_all=refresh)
    result: dict[int, Counts] = {}
    missing: list[int] = []
    for entity_id, values in zip(ids, found, strict=True):
        if values is None or refresh or not _complete(kind, values):
            missing.append(entity_id)
        else:
            result[entity_id] = dict(zip(fields, values, strict=True))
    if outdated := [i for i in missing if i not in noted]:
        noted.update(await live.note(kind, "count", outdated))
    if missing:
        async with read_session(db) as session:
            computed = await QUERIES[kind](session, missing)
        result.update(computed)
        await live.build(kind, "count", [(i, _flat(computed[i])) for i in missing], noted, structure="hash")
    return [result[i] for i in ids]
