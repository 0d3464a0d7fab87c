"""Sessions in Redis (seed 000 section 1.1).

A session is a signed JWT that is valid only while its `session:{user_id}:{token_id}` HASH exists and
its id is listed in `user_sessions:{user_id}`. Both carry the session TTL and are written in one
pipeline. Revoking a session deletes its hash, so a revoked token stops working at once even though
its signature and expiry are still good.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio import Redis

from auth import tokens
from cache import keys

# last_activity is refreshed at most this often, so a busy session does not cost a write per request
ACTIVITY_RESOLUTION = 60


@dataclass(frozen=True, slots=True)
class Session:
    user_id: int
    token: str
    token_id: str


class SessionStore:
    def __init__(self, redis: Redis, *, secret: str, ttl: int) -> None:
        self.redis = redis
        self.secret = secret
        self.ttl = ttl

    async def create(self, user_id: int, username: str, *, auth_data: dict[str, Any] | None = None,
                     device_info: dict[str, Any] | None = None) -> Session:
        token = tokens.issue(user_id, username, secret=self.secret, ttl=self.ttl)
        token_id = tokens.token_id(token)
        now = str(int(time.time()))
        key = keys.session(user_id, token_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={
                "user_id": str(user_id),
                "username": username,
                "token_type": "session",
                "created_at": now,
                "last_activity": now,
                "auth_data": orjson.dumps(auth_data or {}).decode(),
                "device_info": orjson.dumps(device_info or {}).decode(),
            })
            pipe.expire(key, self.ttl)
            pipe.sadd(keys.user_sessions(user_id), token_id)
            pipe.expire(keys.user_sessions(user_id), self.ttl)
            await pipe.execute()
        return Session(user_id=user_id, token=token, token_id=token_id)

    async def validate(self, token: str) -> Session | None:
        """The session of a token, or None: forged, expired, or revoked."""
        try:
            claims = tokens.decode(token, secret=self.secret)
        except tokens.InvalidToken:
            return None
        token_id = tokens.token_id(token)
        key = keys.session(claims.user_id, token_id)
        user_id, last_activity = await self.redis.hmget(key, ["user_id", "last_activity"])
        if user_id is None or int(user_id) != claims.user_id:
            return None
        if last_activity is None or int(last_activity) < time.time() - ACTIVITY_RESOLUTION:
            await self.redis.hset(key, "last_activity", str(int(time.time())))
        return Session(user_id=claims.user_id, token=token, token_id=token_id)

    async def revoke(self, user_id: int, token_id: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(keys.session(user_id, token_id))
            pipe.srem(keys.user_sessions(user_id), token_id)
            await pipe.execute()

    async def revoke_all(self, user_id: int, *, keep: str | None = None) -> int:
        """Revoke every session of a user except `keep` (a token id); returns how many."""
        members = [tokens.as_text(m) for m in await self.redis.smembers(keys.user_sessions(user_id))]
        doomed = [m for m in members if m != keep]
        if not doomed:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*[keys.session(user_id, m) for m in doomed])
            pipe.srem(keys.user_sessions(user_id), *doomed)
            await pipe.execute()
        return len(doomed)
