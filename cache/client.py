"""The Redis client factory: a real server from a URL, or an in-process fakeredis for the embedded
default. Both are `redis.asyncio.Redis`, so everything above this module runs the same code."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

POOL_WAIT = 2.0  # seconds a command may wait for a free connection


def make_redis(url: str | None, *, max_connections: int = 64) -> Redis:
    if url is None:
        # Imported here: production never loads fakeredis.
        from fakeredis import FakeServer
        from fakeredis.aioredis import FakeRedis

        return FakeRedis(server=FakeServer(), decode_responses=False)
    # A burst of more concurrent commands than connections waits for one (up to POOL_WAIT) instead of
    # failing at once: a plain pool raises "Too many connections", which the breaker would take for an
    # outage and send every read to the database.
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=POOL_WAIT,
        socket_connect_timeout=2.0,
        socket_timeout=2.0,
        health_check_interval=30,
    )
    retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2)
    return Redis(
        connection_pool=pool,
        retry=retry,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
