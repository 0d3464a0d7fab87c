"""Login lockout: after N failed logins for an address, the address is locked for a while.

Counted per address hash whether or not an account exists, so the lockout itself does not tell
anyone which addresses are registered."""

from __future__ import annotations

import hashlib

from redis.asyncio import Redis

from cache import keys


def email_digest(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


class LoginThrottle:
    def __init__(self, redis: Redis, *, max_failures: int, lock_seconds: int) -> None:
        self.redis = redis
        self.max_failures = max_failures
        self.lock_seconds = lock_seconds

    async def locked(self, email: str) -> bool:
        count = await self.redis.get(keys.login_failures(email_digest(email)))
        return count is not None and int(count) >= self.max_failures

    async def failed(self, email: str) -> None:
        key = keys.login_failures(email_digest(email))
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, self.lock_seconds)  # the lock lasts lock_seconds after the last failure
            await pipe.execute()

    async def succeeded(self, email: str) -> None:
        await self.redis.delete(keys.login_failures(email_digest(email)))
