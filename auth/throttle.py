"""Login lockout and rate limits.

Lockout: after N failed logins for an email address, the address is locked for a while. Counted per
address hash whether or not an account exists, so the lockout itself does not tell anyone which
addresses are registered.

Rate limits: how often one client address (or one recipient of mail) may do an action in a fixed
window, counted in Redis so every worker shares the count. A Redis that does not answer lets the
attempt through: the limits protect the service, they do not decide who may sign in."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

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


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rate:
    limit: int  # attempts per window; 0 turns the limit off
    window: int  # seconds


class RateLimits:
    def __init__(self, redis: Redis, rates: Mapping[str, Rate]) -> None:
        self.redis = redis
        self.rates = dict(rates)

    async def allow(self, action: str, subject: str) -> bool:
        """Counts one attempt of `action` by `subject`; False once the window's limit is passed."""
        rate = self.rates[action]
        if rate.limit <= 0:
            return True
        key = keys.rate_window(action, email_digest(subject), int(time.time()) // rate.window)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, rate.window)
                count, _ = await pipe.execute()
        except RedisError as exc:
            log.warning("rate limit %s not checked: %s", action, exc)
            return True
        return int(count) <= rate.limit
