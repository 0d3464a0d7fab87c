"""A delayed-queue consumer in its own process, for tests/cache/test_delayed_queue.py:
`python -m tests.queue_worker REDIS_URL DATABASE_URL QUEUE`.

Its handlers: `probe` records the delivery (queue_delivery, one row per call) and its effect once per
message id in the same transaction (queue_effect, ON CONFLICT DO NOTHING), as an idempotent handler
does; `fail` always raises. It polls until killed."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from cache.messaging.delayed import DelayedQueue
from cache.redis.client import make_redis


async def main(redis_url: str, database_url: str, name: str) -> None:
    engine = create_async_engine(database_url)
    queue = DelayedQueue(make_redis(redis_url, cluster=os.environ.get("TEST_REDIS_CLUSTER") == "1"), name, batch=50, lease=3, max_attempts=3, backoff=0.2)
    pid = os.getpid()

    async def probe(payload: dict[str, Any]) -> None:
        async with engine.begin() as conn:
            await conn.execute(text("INSERT INTO queue_delivery (message, worker) VALUES (:m, :w)"),
                               {"m": payload["n"], "w": pid})
            await conn.execute(text("INSERT INTO queue_effect (message, worker) VALUES (:m, :w) "
                                    "ON CONFLICT (message) DO NOTHING"), {"m": payload["n"], "w": pid})
        await asyncio.sleep(0.002)  # a handler takes a moment: a kill lands mid-batch

    async def fail(payload: dict[str, Any]) -> None:
        raise RuntimeError(f"message {payload['n']} always fails")

    queue.handlers.update(probe=probe, fail=fail)
    print("ready", flush=True)
    while True:
        await queue.run_once()
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
