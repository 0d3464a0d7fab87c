"""Seed 004's command rules, counted on the commands themselves: no command carries more than 100 keys
and no pipeline more than 100 commands, whatever the size of the read, the fill or the invalidation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from cache.redis.limits import BATCH
from cache.store import MISSING, Cache
from tests.helpers import pipelines_sent

MULTI_KEY = {"MGET", "DEL", "UNLINK", "EXISTS", "MSET"}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[tuple[Any, ...]]]]:
    """Every round trip's commands as sent (tests/helpers.py `pipelines_sent`), and every single command
    as a pipeline of one."""
    single = Redis.execute_command
    with pipelines_sent() as batches:
        async def record_single(self: Redis, *args: Any, **options: Any) -> Any:
            batches.append([args])
            return await single(self, *args, **options)

        monkeypatch.setattr(Redis, "execute_command", record_single)
        yield batches


def _check(batches: list[list[tuple[Any, ...]]]) -> None:
    assert batches
    assert max(len(b) for b in batches) <= BATCH, [len(b) for b in batches]
    for batch in batches:
        for args in batch:
            if str(args[0]).upper() in MULTI_KEY:
                assert len(args) - 1 <= BATCH, (args[0], len(args) - 1)


async def test_large_reads_fills_and_invalidations_are_chunked(cache: Cache, sent: list[Any]) -> None:
    names = [f"k:rules:{n}" for n in range(250)]
    tags = [[f"t:rules:{n}"] for n in range(250)]  # 251 distinct generations with the epoch
    values, stamps = await cache.get_many(names, tags)
    fills = [(name, {"n": n}, stamp, None) for n, (name, stamp) in enumerate(zip(names, stamps, strict=True))]
    values, stamps = await cache.get_many(names, tags, store=fills)  # a fill of 250 riding on a read
    await cache.set_many(fills)
    values, _ = await cache.get_many(names, tags)
    assert values == [{"n": n} for n in range(250)]  # chunking lost nothing and kept the order
    await cache.invalidate_tags([t for group in tags for t in group])
    values, _ = await cache.get_many(names, tags)
    assert all(value is MISSING for value in values)
    _check(sent)
    assert len(sent) > 8  # the work was split, not refused
