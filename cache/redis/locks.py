"""`lock:{resource}` (seed 002): a Redis lock with a TTL and an owner token, released only by its owner."""

from __future__ import annotations

import secrets

from redis.asyncio import Redis

from cache import keys

# Delete the lock only if we still own it (it may have expired and been taken by someone else).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


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
