"""Sessions in Redis (seed 000 section 1.1).

A session is a signed JWT that is valid only while its `session:{user_id}:{token_id}` HASH exists and
its id is listed in `user_sessions:{user_id}`. Both carry the session TTL and are written in one
pipeline. Revoking a session deletes its hash, so a revoked token stops working at once even though
its signature and expiry are still good.

Each sign-in renews the list's TTL, so the list itself never expires while its user signs in: a sign-in
therefore drops from it the ids whose hashes have expired, reading it in bounded steps (SSCAN), and past
`per_user` live sessions revokes the oldest. The list stays as long as the sessions that are live.

While Redis does not answer, a session this worker checked within the last `grace` seconds stays valid
from memory, so a short outage signs nobody out; any other token cannot be checked, and the caller says
so (SERVICE_UNAVAILABLE, never "not signed in"). Redis is always asked first: once it answers again, a
revocation made meanwhile wins at once.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.exceptions import RedisError

from auth import tokens
from cache import keys
from cache.redis.limits import BATCH
from telemetry import metrics

# last_activity is refreshed at most this often, so a busy session does not cost a write per request
ACTIVITY_RESOLUTION = 60


# A session handed to a web client in an address (a sign-in's return to its /oauth route): short-lived, and
# exchanged for a session of the usual length by the client's next getSession (resolvers/auth.py `current`).
HANDED_OVER = "handed_over"


@dataclass(frozen=True, slots=True)
class Session:
    user_id: int
    token: str
    token_id: str
    token_type: str = "session"


class SessionStore:
    # The clock the grace is measured on; a test moves it past the grace instead of waiting it out.
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, redis: Redis, *, secret: str, ttl: int, grace: float = 60.0, remembered: int = 10_000,
                 per_user: int = 50) -> None:
        self.redis = redis
        self.secret = secret
        self.ttl = ttl
        self.per_user = per_user
        self.grace = grace
        self.remembered = remembered
        # token id -> (user id, when Redis last said it is valid), newest last; at most `remembered`
        self._checked: OrderedDict[str, tuple[int, float]] = OrderedDict()

    def _remember(self, token_id: str, user_id: int) -> None:
        self._checked[token_id] = (user_id, self.clock())
        self._checked.move_to_end(token_id)
        while len(self._checked) > self.remembered:
            self._checked.popitem(last=False)

    def _recently_valid(self, token_id: str, user_id: int) -> bool:
        checked = self._checked.get(token_id)
        return checked is not None and checked[0] == user_id and self.clock() - checked[1] <= self.grace

    async def create(self, user_id: int, username: str, *, auth_data: dict[str, Any] | None = None,
                     device_info: dict[str, Any] | None = None, ttl: int | None = None,
                     token_type: str = "session") -> Session:
        """A new session of `ttl` seconds (the store's by default)."""
        ttl = ttl or self.ttl
        token = tokens.issue(user_id, username, secret=self.secret, ttl=ttl)
        token_id = tokens.token_id(token)
        now = str(int(time.time()))
        key = keys.session(user_id, token_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={
                "user_id": str(user_id),
                "username": username,
                "token_type": token_type,
                "created_at": now,
                "last_activity": now,
                "auth_data": orjson.dumps(auth_data or {}).decode(),
                "device_info": orjson.dumps(device_info or {}).decode(),
            })
            pipe.expire(key, ttl)
            pipe.sadd(keys.user_sessions(user_id), token_id)
            pipe.expire(keys.user_sessions(user_id), self.ttl)  # the list: as long as the longest may live
            await pipe.execute()
        await self._prune(user_id, keep=token_id)
        return Session(user_id=user_id, token=token, token_id=token_id, token_type=token_type)

    async def _prune(self, user_id: int, *, keep: str) -> None:
        """Drop the listed ids whose session has expired; past `per_user` live ones, revoke the oldest
        (never `keep`, the session just made)."""
        listed = keys.user_sessions(user_id)
        live: list[tuple[int, str]] = []
        cursor = 0
        while True:
            cursor, batch = await self.redis.sscan(listed, cursor, count=BATCH)
            ids = [tokens.as_text(m) for m in batch]
            if ids:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for token_id in ids:
                        pipe.hget(keys.session(user_id, token_id), "created_at")
                    created = await pipe.execute()
                gone = [t for t, at in zip(ids, created, strict=True) if at is None]
                if gone:
                    await self.redis.srem(listed, *gone)
                live += [(int(at), t) for t, at in zip(ids, created, strict=True) if at is not None and t != keep]
            if not cursor:
                break
        excess = len(live) + 1 - self.per_user  # + 1: `keep`
        for _, token_id in sorted(live)[:max(excess, 0)]:
            await self.revoke(user_id, token_id)

    def claimed_user(self, token: str) -> int | None:
        """The account a token's signed claims name, before its session is checked (None: forged or expired):
        what a caller may read beside the check, to use only if the session is valid."""
        try:
            return tokens.decode(token, secret=self.secret).user_id
        except tokens.InvalidToken:
            return None

    async def validate(self, token: str) -> Session | None:
        """The session of a token, or None: forged, expired, or revoked."""
        try:
            claims = tokens.decode(token, secret=self.secret)
        except tokens.InvalidToken:
            metrics.SESSIONS_CHECKED.labels("invalid").inc()
            return None
        token_id = tokens.token_id(token)
        session = Session(user_id=claims.user_id, token=token, token_id=token_id)
        key = keys.session(claims.user_id, token_id)
        try:
            user_id, last_activity, token_type = await self.redis.hmget(key, ["user_id", "last_activity",
                                                                             "token_type"])
        except RedisError:
            if self._recently_valid(token_id, claims.user_id):
                metrics.SESSIONS_CHECKED.labels("grace").inc()
                return session
            metrics.SESSIONS_CHECKED.labels("unavailable").inc()
            raise
        if user_id is None or int(user_id) != claims.user_id:
            self._checked.pop(token_id, None)
            metrics.SESSIONS_CHECKED.labels("invalid").inc()
            return None
        if token_type is not None and tokens.as_text(token_type) != "session":
            session = Session(claims.user_id, token, token_id, tokens.as_text(token_type))
        metrics.SESSIONS_CHECKED.labels("valid").inc()
        metrics.note_session(token_id)
        self._remember(token_id, claims.user_id)
        if last_activity is None or int(last_activity) < time.time() - ACTIVITY_RESOLUTION:
            try:
                await self.redis.hset(key, "last_activity", str(int(time.time())))
            except RedisError:  # bookkeeping only: the session was checked
                pass
        return session

    async def revoke(self, user_id: int, token_id: str) -> None:
        self._checked.pop(token_id, None)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(keys.session(user_id, token_id))
            pipe.srem(keys.user_sessions(user_id), token_id)
            await pipe.execute()

    async def revoke_all(self, user_id: int, *, keep: str | None = None) -> int:
        """Revoke every session of a user except `keep` (a token id); returns how many."""
        members = [tokens.as_text(m) for m in await self.redis.smembers(keys.user_sessions(user_id))]
        doomed = [m for m in members if m != keep]
        for member in doomed:
            self._checked.pop(member, None)
        if not doomed:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*[keys.session(user_id, m) for m in doomed])
            pipe.srem(keys.user_sessions(user_id), *doomed)
            await pipe.execute()
        return len(doomed)
