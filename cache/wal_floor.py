"""The WAL floor: the primary's WAL position at or past every commit whose invalidation has been sent, in
one Redis key every server reads (keys.wal_floor, on the state Redis, which does not evict).

A commit raises it (CacheSink, before it moves any generation or live structure) to the primary's WAL
position read after the commit returned; a read on a replica happens only if the replica has replayed up
to the floor as read just before the statement (orm/replicas.py). A reader that saw a commit's new
generations therefore finds the floor at or past that commit, and reads a replica that holds it, or the
primary: nothing a replica lacks is kept under a generation that says it is there. A signed-in writer's
own writes raised the floor before its mutation answered, so it reads them at once, from any server.

The floor only grows (a Lua max: two commits raising it at once leave the higher), and expires a month
after the last write. A floor that is missing (never set, expired, lost with its Redis) is set again from
the primary's position, which is past every commit made so far. When Redis does not answer, the floor is
unknown and reads go to the primary; a raise that did not reach Redis is a lost write: the floor is forgotten
with the epochs before the write answers (`Cache.lose_write`), and the raise sent again before the next read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from cache import keys
from cache.lua import load_lua
from cache.store import Cache

log = logging.getLogger(__name__)

FLOOR_TTL = 30 * 86_400
POSITION_TRIES = 4  # 0.1 + 0.2 + 0.4 s between them
_RAISE = load_lua("wal_floor_raise")


class WalFloor:
    def __init__(self, cache: Cache, primary_position: Callable[[], Awaitable[int]], *,
                 ttl: int = FLOOR_TTL) -> None:
        """`primary_position`: where the primary's WAL ends now (orm.replicas.primary_position)."""
        self.cache = cache
        self.redis = cache.state
        self.primary_position = primary_position
        self.ttl = ttl
        self._raise = self.redis.register_script(_RAISE)
        self._unsent = 0  # a position a raise could not send to Redis

    async def read(self) -> int | None:
        """The floor; None when it cannot be known now (Redis unavailable): then read the primary."""
        if not self.cache.available:
            return None
        try:
            if self._unsent:
                await self._send(self._unsent)
            raw = await self.redis.get(keys.wal_floor())
            if raw is None:
                position = await self.primary_position()
                await self._send(position)
                return position
            return int(raw, 16)
        except RedisError as exc:
            self.cache.trip(exc, "WAL floor")
            return None

    async def raise_after_commit(self) -> bool:
        """After a commit returned, before its invalidation: the floor at or past that commit. Never
        raises into the writer. A raise Redis did not take is a lost write (`Cache.lose_write`): before
        the write answers the floor is forgotten with the epochs, wherever Redis answers (another worker
        may read the old floor there, and then a replica that lacks this commit), and a reader sets it
        again from the primary's position. False when that containment failed too: the loss is left to
        the recovery, and this raise is sent again before this worker's next read."""
        position = await self._position_after_commit()
        if position is None:
            return True
        try:
            await self._send(max(position, self._unsent))
        except RedisError as exc:
            self._unsent = max(position, self._unsent)
            await self.cache.lose_write(exc, "WAL floor")
            return not self.cache.lost_invalidations
        return True

    async def _position_after_commit(self) -> int | None:
        """The primary answered the commit a moment ago; if it does not answer now (it died, a failover
        has begun), a few tries over a second, then the commit's invalidation goes on without the floor
        (logged: reads of a replica may miss this one write until its tags move again)."""
        for attempt in range(POSITION_TRIES):
            try:
                return await self.primary_position()
            except Exception as exc:  # whatever the driver raises for a lost server
                if attempt == POSITION_TRIES - 1:
                    log.error("WAL floor not raised after a commit: the primary's position is unknown: %s", exc)
                    return None
                await asyncio.sleep(0.1 * 2 ** attempt)
        return None

    async def _send(self, position: int) -> None:
        await self._raise(keys=[keys.wal_floor()], args=[f"{position:016x}", self.ttl])
        self._unsent = 0
