"""Views (seed 000 `viewed:{shout_id}`) and reading histories (seed 003 `user:{id}:his:reading`).

Reading a shout counts a view at most once per viewer (a signed-in author, or an anonymous client by a
hash of its address and user agent) and shout per hour: the viewer's hourly SET of read shouts decides,
and a viewer past `per_hour_cap` distinct shouts in an hour (a crawler) counts no more that hour.
`viewed:{id}` leads; the background loop flushes the counters of shouts viewed since the last round to
`shout_views` in batches (a total only rises), adds what each rose by to the week's `shout_views_weekly`
(views are dated by the flush, at most one interval late) and to its authors' `viewed` counters, and
places the totals on the views leaderboards (cache/live/boards.py); a counter missing from Redis (a flush,
an expiry) starts again from `shout_views`. A signed-in reader's history keeps the newest 100 shouts
read; their searches, the newest 50 texts.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from redis.exceptions import RedisError
from sqlalchemy import literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from cache import keys
from cache.live.structures import BOARD_ENTITY, LiveOps, LiveStore
from cache.lua import load_lua
from cache.periodic import Periodic
from cache.store import Cache
from orm import Shout, ShoutAuthor, ShoutViews, ShoutViewsWeekly
from orm.engine import SessionFactory
from orm.stats import is_listed

if TYPE_CHECKING:
    from config.settings import LiveSettings

log = logging.getLogger(__name__)

HOUR = 3600
READING_HISTORY = 100
SEARCH_HISTORY = 50
HISTORY_TTL = 180 * 86_400
FLUSH_BATCH = 100

_COUNT = load_lua("views_count", hour=HOUR)


def client_key(author_id: int | None, address: str | None, user_agent: str | None) -> str:
    """Who reads, for counting: the author, or a hash of an anonymous client's address and agent."""
    if author_id is not None:
        return f"a{author_id}"
    return "c" + hashlib.blake2b(f"{address}|{user_agent}".encode(), digest_size=8).hexdigest()


class ViewCounter:
    def __init__(self, cache: Cache, db: SessionFactory, live: LiveStore, *, per_hour_cap: int = 500,
                 flush_interval: float = 60) -> None:
        self.cache = cache
        self.live = live
        self.redis = cache.state
        self.db = db
        self.per_hour_cap = per_hour_cap
        self.flush_interval = flush_interval
        self._count = cache.state.register_script(_COUNT)
        self._loop = Periodic("views flush", flush_interval, self.flush)

    @classmethod
    def of(cls, cache: Cache, db: SessionFactory, live: LiveStore, settings: LiveSettings) -> ViewCounter:
        return cls(cache, db, live, per_hour_cap=settings.views_per_hour_cap,
                   flush_interval=settings.views_flush_interval)

    async def count(self, shout_id: int, viewer: str) -> bool:
        """Count one read of a shout; never fails the read. Whether the counter had to be started from the
        database first (a read of it sent meanwhile may have found none, and started it too)."""
        if not self.cache.available:
            return False
        hour = int(time.time()) // HOUR
        script_keys = [keys.views_seen(viewer, hour), keys.viewed(shout_id), keys.views_pending()]
        try:
            if await self._count(keys=script_keys, args=[shout_id, self.per_hour_cap]) == 2:
                await self._start_from_database([shout_id])
                await self._count(keys=script_keys, args=[shout_id, self.per_hour_cap])
                return True
        except RedisError as exc:
            self.cache.trip(exc, "view count")
        return False

    async def get_many(self, ids: Sequence[int]) -> list[int]:
        """View counts of a page in one MGET; counters missing from Redis start from the database."""
        if not ids:
            return []
        if not self.cache.available:
            return await self._from_database(ids)
        try:
            raw = await self.redis.mget([keys.viewed(i) for i in ids])
            missing = [i for i, v in zip(ids, raw, strict=True) if v is None]
            if missing:
                await self._start_from_database(missing)
                raw = await self.redis.mget([keys.viewed(i) for i in ids])
        except RedisError as exc:
            self.cache.trip(exc, "view read")
            return await self._from_database(ids)
        return [int(v or 0) for v in raw]

    async def _from_database(self, ids: Sequence[int]) -> list[int]:
        async with self.db() as session:
            found = dict((await session.execute(select(ShoutViews.shout, ShoutViews.views)
                                                .where(ShoutViews.shout.in_(ids)))).all())
        return [int(found.get(i, 0)) for i in ids]

    async def _start_from_database(self, ids: Sequence[int]) -> None:
        """SET NX: a counter another worker started (and maybe incremented) meanwhile is kept."""
        values = await self._from_database(ids)
        async with self.redis.pipeline(transaction=False) as pipe:
            for shout_id, views in zip(ids, values, strict=True):
                pipe.set(keys.viewed(shout_id), views, nx=True)
            await pipe.execute()

    # --- flushing to the database ---------------------------------------------------------------------

    async def flush(self) -> int:
        """Write the counters of shouts viewed since the last flush to `shout_views`, and what they grew
        by to this week's `shout_views_weekly`; then place the new totals of public shouts on the views
        leaderboards. Returns how many shouts were written. SPOP hands each id to one worker; a batch
        the database refused goes back to the pending set."""
        flushed = 0
        while True:
            popped = await self.redis.spop(keys.views_pending(), FLUSH_BATCH)
            ids = sorted(int(i) for i in popped or [])
            if not ids:
                return flushed
            values = await self.redis.mget([keys.viewed(i) for i in ids])
            counted = {i: int(v) for i, v in zip(ids, values, strict=True) if v is not None}
            week = keys.week_of(time.time())
            authors = await self._authors_of(list(counted))
            # Announced like any write: a board or an author's counters built meanwhile from rows this
            # batch is changing (or from a shout withdrawn meanwhile) are not stored before it is placed.
            touched = [("board", BOARD_ENTITY), ("weekly", BOARD_ENTITY),
                       *(("author", a) for a in sorted({a for shout in authors.values() for a in shout}))]
            announced = await self.live.announce(touched)
            ops = LiveOps.touching(touched)
            try:
                totals, weekly, grown = await self._write_down(counted, week)
                for shout_id, views in totals.items():
                    ops.place("shouts:views", views, shout_id)
                for shout_id, views in weekly.items():
                    ops.place(keys.weekly_board("shouts:views", week), views, shout_id)
                for shout_id, delta in grown.items():  # an author's `viewed`: their public shouts' views
                    for author in authors.get(shout_id, ()):
                        ops.incr("author", author, viewed=delta)
            except Exception:
                await self.redis.sadd(keys.views_pending(), *ids)
                raise
            finally:
                await self.live.apply(ops, announced=announced)
            flushed += len(counted)

    async def _authors_of(self, shout_ids: list[int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        async with self.db() as session:
            for shout_id, author in await session.execute(
                    select(ShoutAuthor.shout, ShoutAuthor.author).where(ShoutAuthor.shout.in_(shout_ids))):
                found.setdefault(shout_id, []).append(author)
        return found

    async def _write_down(self, counted: dict[int, int], week: str,
                          ) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
        """One transaction: totals rise to the counters (never fall), and the week gains what they rose
        by. The rows are locked first, so two workers flushing one shout add its growth once.
        Returns the new totals, the weekly counts and the growth of the public shouts that grew."""
        if not counted:
            return {}, {}, {}
        now = int(time.time())
        async with self.db() as session, session.begin():
            insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
            # Rows to lock, for shouts that still exist (a deleted shout's counter is dropped here).
            await session.execute(insert(ShoutViews).from_select(
                ["shout", "views", "updated_at"],
                select(Shout.id, literal(0), literal(now)).where(Shout.id.in_(list(counted))))
                .on_conflict_do_nothing(index_elements=[ShoutViews.shout]))
            rows = (await session.execute(
                select(ShoutViews.shout, ShoutViews.views, is_listed()).join(Shout, Shout.id == ShoutViews.shout)
                .where(ShoutViews.shout.in_(list(counted))).order_by(ShoutViews.shout)
                .with_for_update(of=ShoutViews))).all()
            grown = {i: counted[i] - int(views) for i, views, _ in rows if counted[i] > views}
            listed = {i for i, _, public in rows if public}
            if not grown:
                return {}, {}, {}
            await session.execute(update(ShoutViews), [{"shout": i, "views": counted[i], "updated_at": now}
                                                       for i in grown])
            statement = insert(ShoutViewsWeekly).values(
                [{"shout": i, "week": week, "views": delta} for i, delta in grown.items()])
            weekly = (await session.execute(statement.on_conflict_do_update(
                index_elements=[ShoutViewsWeekly.shout, ShoutViewsWeekly.week],
                set_={"views": ShoutViewsWeekly.views + statement.excluded.views})
                .returning(ShoutViewsWeekly.shout, ShoutViewsWeekly.views))).all()
        return ({i: counted[i] for i in grown if i in listed},
                {int(i): int(v) for i, v in weekly if i in listed},
                {i: delta for i, delta in grown.items() if i in listed})

    async def start(self) -> None:
        self._loop.start()

    async def stop(self, *, flush: bool = False) -> None:
        """Stop the periodic flush; `flush` (a graceful shutdown): write down what this worker's flush
        would have, once more, so the database copy is current when no worker is left to do it."""
        await self._loop.stop()
        if flush:
            try:
                await self.flush()
            except Exception as exc:  # the counters stay in Redis, pending: the next worker writes them down
                log.warning("views not flushed at shutdown: %s", exc)

    # --- histories ------------------------------------------------------------------------------------

    async def remember(self, key: str, member: str | int, keep: int) -> None:
        """Add to a capped history (newest `keep` members, scored by time); never fails the read."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(key, {str(member): time.time()})
                pipe.zremrangebyrank(key, 0, -keep - 1)
                pipe.expire(key, HISTORY_TTL)
                await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "history")

    async def history(self, key: str, offset: int, limit: int) -> list[str]:
        members = await self.redis.zrevrange(key, offset, offset + limit - 1)
        return [m.decode() if isinstance(m, bytes) else str(m) for m in members]

    async def clear(self, key: str) -> None:
        await self.redis.unlink(key)
