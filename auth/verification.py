"""One-time verification tokens (seed 000 section 1.3): `verification:{user_id}:{type}:{token_id}`,
a HASH with a one-hour TTL, consumed atomically (single use). The raw token only travels in the mail."""

from __future__ import annotations

import time
from typing import Any

import orjson
from redis.asyncio import Redis

from auth import tokens
from cache import keys

EMAIL_VERIFICATION = "email_verification"
PASSWORD_RESET = "password_reset"
EMAIL_CHANGE = "email_change"
KINDS = (EMAIL_VERIFICATION, PASSWORD_RESET, EMAIL_CHANGE)


class VerificationStore:
    def __init__(self, redis: Redis, *, ttl: int = 3600) -> None:
        self.redis = redis
        self.ttl = ttl

    async def issue(self, user_id: int, kind: str, data: dict[str, Any] | None = None) -> str:
        """A new token; it replaces an outstanding one of the same kind for this user."""
        assert kind in KINDS
        token = tokens.one_time(user_id)
        token_id = tokens.token_id(token)
        previous = await self.redis.get(keys.pending_verification(user_id, kind))
        key = keys.verification(user_id, kind, token_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            if previous:
                pipe.delete(keys.verification(user_id, kind, tokens.as_text(previous)))
            pipe.hset(key, mapping={"user_id": str(user_id), "token_type": "verification",
                                    "verification_type": kind, "created_at": str(int(time.time())),
                                    "data": orjson.dumps(data or {}).decode()})
            pipe.expire(key, self.ttl)
            pipe.set(keys.pending_verification(user_id, kind), token_id, ex=self.ttl)
            await pipe.execute()
        return token

    async def consume(self, token: str, kind: str) -> tuple[int, dict[str, Any]]:
        """The user and data of a valid token, deleting it; InvalidToken when unknown, used or expired."""
        user_id, token_id = tokens.split_one_time(token)
        key = keys.verification(user_id, kind, token_id)
        async with self.redis.pipeline(transaction=True) as pipe:  # MULTI: read and delete at once
            pipe.hgetall(key)
            pipe.delete(key)
            found, _ = await pipe.execute()
        if not found:
            raise tokens.InvalidToken("unknown, used or expired token")
        await self.redis.delete(keys.pending_verification(user_id, kind))
        return user_id, orjson.loads(found[b"data"])

    async def cancel(self, user_id: int, kind: str) -> bool:
        pending = await self.redis.get(keys.pending_verification(user_id, kind))
        if not pending:
            return False
        await self.redis.delete(keys.verification(user_id, kind, tokens.as_text(pending)),
                                keys.pending_verification(user_id, kind))
        return True
