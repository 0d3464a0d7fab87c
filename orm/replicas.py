"""Reads on streaming replicas, never staler than what the cache has been told (DATABASE_REPLICA_URLS).

A replica replays its primary's WAL some time behind it (milliseconds; seconds under load, or on purpose:
`recovery_min_apply_delay`). A value read there right after a write may miss it, and the cache would then
keep the old value under the write's new generation. So a read goes to a replica only if the replica has
replayed every commit the cache has heard of: the *floor*, a WAL position each commit raises before it
invalidates anything (cache/wal_floor.py keeps it in Redis, where every server sees it). The floor is read
for every statement, after whatever generations the statement's value will be stamped with were read;
the replica's replay position is known from the last check (a lower bound: it only grows), and checked
again when the floor has passed it. A replica behind the floor, lagging past REPLICA_MAX_LAG, not
answering or not a standby (promoted) is passed over: the primary answers, and the replica comes back by
itself at a later check.

A read a replica started may still fail there: the replica is lost under it, or cancels it because it holds
back the replay (a recovery conflict: the primary removed row versions the read's snapshot may need, and
the standby waited `max_standby_streaming_delay` for it). Both say nothing about the statement, so it is sent
again, once, to the primary (`_read_again_on_the_primary`), with the rest of its session's statements.

`RoutingSession` applies this per statement: SELECTs go where `ReadRouting.engine_for_read` says; writes,
SELECT ... FOR UPDATE, everything after a session's first write and every session of a write transaction
(`use_primary`) go to the primary. Code that copies SQL into Redis by other rules (live-structure builds,
the revalidator, rebuilds, the views flush, sessions and accounts) uses sessions of the primary only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Delete, Insert, Select, Update, event, exc, text
from sqlalchemy.engine import Connection, Engine, Result
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session

from orm.errors import is_recovery_conflict, is_unavailable
from orm.seam import await_in_session, locks_rows
from telemetry import metrics

log = logging.getLogger(__name__)

ASK_EVERY = 0.02  # seconds: how often a replica behind the floor is asked again between checks
INFO_PRIMARY = "primary_only"  # session.info: every statement of this session goes to the primary
# The replay position, whether it is a standby, and how far behind: 0 when it has replayed all it received,
# else the time since the last commit it replayed (an upper bound). "All it received" is a replay at or past
# the receive position, not only equal to it: a standby that restarts replays its own WAL first, then
# streams again from the start of that WAL segment, and until the primary writes more its receive position
# stays there, behind the replay (with no commit to replay, the time since the last one would grow without
# bound and the replica would stay passed over). No receive position (not streaming): that time too.
_STANDBY_STATE = text(
    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
    "CASE WHEN pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0 "
    "ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END")
_REPLAYED = text("SELECT pg_last_wal_replay_lsn()::text")
_PRIMARY_POSITION = text("SELECT pg_current_wal_insert_lsn()::text")


def lsn(text_form: str | None) -> int | None:
    """A WAL position (`16/B374D848`) as a number that orders like it."""
    if not text_form:
        return None
    high, _, low = text_form.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


async def primary_position(engine: AsyncEngine) -> int:
    """Where the primary's WAL ends now: at or past every commit that has returned."""
    async with engine.connect() as connection:
        position = lsn(await connection.scalar(_PRIMARY_POSITION))
    assert position is not None
    return position


@dataclass(eq=False)
class Replica:
    engine: AsyncEngine
    name: str  # for logs and metrics: host:port
    replayed: int = 0  # the replay position last seen (a lower bound of the present one)
    lag: float | None = None  # seconds behind its primary at the last check; None: unknown
    usable: bool = False  # answered the last check as a standby within the lag bound
    asked: float = field(default=0.0)  # when it was last asked where it is, between checks


class ReadRouting:
    """Which engine answers a read: a replica that has replayed the floor, else the primary."""

    def __init__(self, primary: AsyncEngine, replicas: Sequence[AsyncEngine], *,
                 floor: Callable[[], Awaitable[int | None]], max_lag: float = 30.0,
                 check_interval: float = 1.0) -> None:
        """`floor`: the WAL position every read must have replayed (None: unknown, read the primary)."""
        self.primary = primary
        self.replicas = [Replica(engine, _name(engine)) for engine in replicas]
        for replica in self.replicas:
            self._pass_over_when_lost(replica)
        self.floor = floor
        self.max_lag = max_lag
        self.check_interval = check_interval
        self._turn = itertools.count()
        self._checker: asyncio.Task[None] | None = None

    async def engine_for_read(self) -> AsyncEngine:
        """The engine a read starting now may use without missing a commit the cache has been told of."""
        usable = [replica for replica in self.replicas if replica.usable]
        if usable:
            floor = await self.floor()
            if floor is not None:
                start = next(self._turn)
                for replica in (usable[(start + n) % len(usable)] for n in range(len(usable))):
                    if replica.replayed >= floor or await self._caught_up(replica, floor):
                        metrics.child(metrics.DB_READS, "replica").inc()
                        return replica.engine
        metrics.child(metrics.DB_READS, "primary").inc()
        return self.primary

    async def _caught_up(self, replica: Replica, floor: int) -> bool:
        """Ask the replica where it is now (it passed the floor since the last check, most often); not
        more often than every ASK_EVERY seconds, so that reads under steady writes on a replica far behind
        do not each pay a question to it before going to the primary."""
        now = time.monotonic()
        if now - replica.asked < ASK_EVERY:
            return False
        replica.asked = now
        try:
            async with replica.engine.connect() as connection:
                replayed = lsn(await connection.scalar(_REPLAYED))
        except Exception as error:  # a replica that does not answer is passed over until it does
            self._lost(replica, error)
            return False
        if replayed is None:  # promoted: not a standby any more
            replica.usable = False
            return False
        replica.replayed = max(replica.replayed, replayed)
        return replica.replayed >= floor

    async def check(self) -> None:
        """Every replica's replay position and lag, for routing and /metrics."""
        await asyncio.gather(*(self._check(replica) for replica in self.replicas))

    async def _check(self, replica: Replica) -> None:
        try:
            async with replica.engine.connect() as connection:
                standby, replayed, lag = (await connection.execute(_STANDBY_STATE)).one()
        except Exception as error:
            self._lost(replica, error)
            return
        replica.lag = float(lag) if lag is not None else None
        position = lsn(replayed)
        if position is not None:
            replica.replayed = max(replica.replayed, position)
        was = replica.usable
        replica.usable = bool(standby) and position is not None and (replica.lag or 0.0) <= self.max_lag
        metrics.child(metrics.REPLICA_LAG, replica.name).set(replica.lag if replica.lag is not None else -1)
        if replica.usable != was:
            log.info("replica %s %s (lag %s s)", replica.name, "in use" if replica.usable else "passed over",
                     replica.lag)

    def _pass_over_when_lost(self, replica: Replica) -> None:
        """A replica that drops a connection or refuses one is passed over from that moment (the statement
        then failing is read on the primary: `_read_again_on_the_primary`), not from the next check."""
        def failed(context: Any) -> None:
            error = context.original_exception
            if is_recovery_conflict(error):  # it ended a read to go on replaying: it is well, not lost
                return
            if context.is_disconnect or isinstance(error, OSError):
                self._lost(replica, error)

        event.listen(replica.engine.sync_engine, "handle_error", failed)

    def lost(self, engine: AsyncEngine, error: BaseException) -> None:
        """Pass over the replica of `engine`: a read there failed as a lost replica fails."""
        for replica in self.replicas:
            if replica.engine is engine:
                self._lost(replica, error)

    def _lost(self, replica: Replica, error: BaseException) -> None:
        if replica.usable:
            log.warning("replica %s passed over: %s", replica.name, error)
        replica.usable = False
        replica.lag = None
        metrics.child(metrics.REPLICA_LAG, replica.name).set(-1)

    def start(self) -> None:
        """Check the replicas every `check_interval` seconds until `stop`."""
        if self.replicas and self._checker is None:
            self._checker = asyncio.get_running_loop().create_task(self._check_forever())

    async def _check_forever(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.check_interval)

    async def stop(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checker
            self._checker = None

    async def dispose(self) -> None:
        await self.stop()
        for replica in self.replicas:
            await replica.engine.dispose()


class RoutingSession(Session):
    """A session whose reads may go to a replica (see the module's docstring); made by
    `orm.engine.make_session_factory(..., routing=)`."""

    def __init__(self, *args: Any, routing: ReadRouting | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.routing = routing
        self.on_replica = False  # whether the statement last routed went to a replica

    def get_bind(self, mapper: Any = None, *, clause: Any = None, **kwargs: Any) -> Engine | Connection:
        self.on_replica = False
        if self.routing is None or not self._may_read_a_replica(clause):
            return super().get_bind(mapper, clause=clause, **kwargs)
        engine = await_in_session(self.routing.engine_for_read())
        self.on_replica = engine is not self.routing.primary
        return engine.sync_engine

    def _may_read_a_replica(self, clause: Any) -> bool:
        """A plain SELECT of a session that has not written; a flush asks with no statement (primary)."""
        if isinstance(clause, Insert | Update | Delete):
            self.info[INFO_PRIMARY] = True  # it writes: it reads its own writes from now on
            return False
        return isinstance(clause, Select) and not self.info.get(INFO_PRIMARY) and not locks_rows(clause)


@event.listens_for(RoutingSession, "after_flush")
def _wrote(session: Session, _flush_context: Any) -> None:
    session.info[INFO_PRIMARY] = True


@event.listens_for(RoutingSession, "do_orm_execute")
def _read_again_on_the_primary(state: ORMExecuteState) -> Result[Any] | None:
    """A read a replica could not finish (lost, or cancelled by a recovery conflict) is read on the primary,
    as are the session's later statements (its earlier replica connection may be gone). Once: what fails on
    the primary fails the request, as it would without replicas. Every statement of the session passes here
    (lazy loads and `get` too), only sessions with replicas have this listener."""
    session = state.session
    assert isinstance(session, RoutingSession)  # the class this listens on
    if not state.is_select or session.info.get(INFO_PRIMARY):
        return None
    try:
        return state.invoke_statement()
    except (exc.DBAPIError, OSError) as error:  # what connecting raises is not always wrapped
        if not (session.on_replica and (is_recovery_conflict(error) or is_unavailable(error))):
            raise
        log.info("a read on a replica failed (%s); reading it on the primary",  # the driver's words, no SQL
                 error.orig if isinstance(error, exc.DBAPIError) else error)
        metrics.REPLICA_READS_RETRIED.inc()
        session.info[INFO_PRIMARY] = True
        return state.invoke_statement()


def use_primary(session: AsyncSession) -> AsyncSession:
    """Send every statement of `session` to the primary (a write transaction, its reads included)."""
    session.sync_session.info[INFO_PRIMARY] = True
    return session


def _name(engine: AsyncEngine) -> str:
    url = engine.url
    hosts = url.query.get("host")
    if hosts:
        return ",".join(hosts) if isinstance(hosts, tuple) else str(hosts)
    return f"{url.host}:{url.port or 5432}"
