"""`lock:{resource}` (seed 002): a Redis lock with a TTL and an owner token, released only by its owner."""

from __future__ import annotations

import secrets

from redis.asyncio import Redis

from cache import keys
from cache.lua import load_lua

_RELEASE = load_lua("lock_release")
_EXTEND = load_lua("lock_extend")


class RedisLock:
    def __init__(self, redis: Redis, resource: str, *, ttl_ms: int) -> None:
        self.redis = redis
        self.key = keys.lock(resource)
        self.ttl_ms = ttl_ms
        self.token = secrets.token_hex(8)

    async def acquire(self) -> bool:
        return bool(await self.redis.set(self.key, self.token, nx=True, px=self.ttl_ms))

    async def release(self) -> None:
        await self.redis.eval(_RELEASE, 1, self.key, self.token)

    async def extend(self) -> bool:
        """A full TTL again from now, if the lock is still ours (False: it expired and may be another's)."""
        return bool(await self.redis.eval(_EXTEND, 1, self.key, self.token, self.ttl_ms))
