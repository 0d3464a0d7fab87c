"""Connections a pool holds out for reads on the driver (orm/driver.py), lent without a checkout.

A read on the driver is one statement. Taking its connection from SQLAlchemy's pool and giving it back
(an `AsyncConnection` and a `Connection` made, two greenlet switches, the pool's queue and its checkout
and checkin events) cost more than half of what asyncpg spends on the statement: 55 of 100 µs of CPU for
twenty authors by id (measured in one process on this project's bench data), and a cold page reads three
such statements. So the engine's pool (`HoldingPool`) keeps a few connections checked out once, parked
between reads, and lends one to the next read at the cost of a list pop.

What the pool's checkout did for a connection is done here for a parked one, before it is lent:
- one found closed (the server ended it, or a read cut off mid-statement) or invalidated since it connected
  (the pool saw a disconnect: every connection of that time is suspect) is invalidated, never lent;
- one parked longer than the engine's idle limit is pinged first, as the pool pings one idle that long
  (orm/engine.py `_ping_after_idle`), and invalidated if the ping fails.
Parked connections are checked out as far as the pool knows: at most `held_most` (two: a cold page's
concurrent reads), and a checkout that finds no idle connection takes one back before the pool would open
another, so holding never makes the pool grow. The in-use gauge counts only those lent. Disposing of the
pool (`engine.dispose()`) closes the parked ones with the rest.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import AsyncAdaptedQueuePool, PoolProxiedConnection
from sqlalchemy.util import greenlet_spawn

from orm.seam import invalidated_since_connected, pool_of
from telemetry import metrics

HELD_MOST = 2
# Where a pooled connection's record keeps when it went idle (time.monotonic()), for the idle ping
# (orm/engine.py `_ping_after_idle`), which stamps it at checkin.
IDLE_SINCE = "idle_since"


class HoldingPool(AsyncAdaptedQueuePool):
    """The engine's queue pool, with up to `held_most` connections parked for reads on the driver."""

    # Its log under SQLAlchemy's (warnings only, unless configured), where the queue pool's is, not this module's.
    _sqla_logger_namespace = "sqlalchemy.pool.impl.HoldingPool"

    def __init__(self, creator: Any, **options: Any) -> None:
        super().__init__(creator, **options)
        # Set by orm/engine.py `make_engine` (create_engine passes a pool no options of its own).
        self.held_most = HELD_MOST
        self.idle_seconds = 5.0
        self._parked: list[tuple[PoolProxiedConnection, float]] = []  # the last parked last
        self._disposed = False

    def recreate(self) -> HoldingPool:
        fresh = super().recreate()
        assert isinstance(fresh, HoldingPool)
        fresh.held_most, fresh.idle_seconds = self.held_most, self.idle_seconds
        return fresh

    def dispose(self) -> None:
        """Closes the parked connections too (called in a greenlet by `AsyncEngine.dispose`)."""
        self._disposed = True
        parked, self._parked = self._parked, []
        for connection, _ in parked:
            _check_in(connection)
        super().dispose()

    def _do_get(self) -> Any:
        """A checkout (a session's, or a read's when none is parked) that finds no idle connection in the pool
        takes a parked one back first, rather than open one more: holding never makes the pool grow. Taken
        back, it is idle since it was parked, for the idle ping (orm/engine.py)."""
        if self._parked and not self.checkedin():
            connection, parked_at = self._parked.pop()
            info = connection.info  # its record's, which the checkin stamps with the time it came back
            _check_in(connection)
            info[IDLE_SINCE] = parked_at
        return super()._do_get()

    def unpark(self) -> tuple[PoolProxiedConnection, float] | None:
        """The connection parked last, and when it was parked; counted in use."""
        if not self._parked:
            return None
        metrics.DB_POOL_IN_USE.inc()
        return self._parked.pop()

    def park(self, connection: PoolProxiedConnection) -> bool:
        """Keep `connection` for the next read, if there is room; whether it was kept."""
        if self._disposed or len(self._parked) >= self.held_most:
            return False
        self._parked.append((connection, time.monotonic()))
        metrics.DB_POOL_IN_USE.dec()
        return True


def _check_in(connection: PoolProxiedConnection) -> None:
    """A parked connection back in the pool (in a greenlet: a checkin may close it). Counted in use first, as
    the checkin counts it out."""
    metrics.DB_POOL_IN_USE.inc()
    connection.close()


async def lend(engine: AsyncEngine) -> PoolProxiedConnection:
    """A connection of `engine`'s pool for one read: a parked one that is sound, else one checked out."""
    pool = engine.sync_engine.pool
    if isinstance(pool, HoldingPool):
        while (found := pool.unpark()) is not None:
            connection, parked_at = found
            if await _sound(connection, time.monotonic() - parked_at > pool.idle_seconds):
                return connection
            await discard(connection)
    return await engine.raw_connection()


async def _sound(connection: PoolProxiedConnection, idle: bool) -> bool:
    driver = connection.driver_connection
    if driver is None or driver.is_closed() or invalidated_since_connected(connection):
        return False
    if not idle:
        return True
    try:
        await driver.fetchval("SELECT 1")
    except Exception:  # whatever the driver raises for a dead socket
        return False
    return True


async def give_back(connection: PoolProxiedConnection) -> None:
    """After a read that went well: parked for the next one, or checked in."""
    pool = pool_of(connection)
    if not (isinstance(pool, HoldingPool) and pool.park(connection)):
        await greenlet_spawn(connection.close)  # a checkin may close it (an overflow connection): awaited I/O


async def discard(connection: PoolProxiedConnection) -> None:
    """A connection in an unknown state (a read failed or was cut off on it, or it was found unsound): closed
    and replaced in the pool."""
    await greenlet_spawn(connection.invalidate)
