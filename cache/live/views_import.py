"""Views a Discours deployment counted, carried over (`discours adopt --views FILE`, `--views-redis URL`).

Discours keeps its view counts outside its database: a `views.json` (slug -> views) that its backend adds to
what Google Analytics counted since, and, as seed 000 section 5 lays them out, `migrated_views_{timestamp}`
HASHes (shout id -> views; the newest is current) and `viewed:{shout_id}` counters in its Redis. The import
reads them (the old Redis read-only, by SCAN and HSCAN), takes per shout the file's count or the Redis one
(the newest migrated hash plus its `viewed` counter, which counts on top of it), whichever is higher (both
start from the same history), and sets the shout's imported views to it.

Our total (`shout_views`) moves by what the imported views moved by (`shout_views_imported` keeps them): an
import run again changes nothing, and views this server counted since stay on top. A running server's
Redis counters of those shouts (`viewed:{views}:{id}`, when `redis` is given) move by the same amount, so
its next flush does not write the old number back; counters not started yet start from the database.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from redis.asyncio import Redis
from sqlalchemy import Table, bindparam, case, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from cache import keys
from cache.lua import load_lua
from orm import Shout, ShoutViews, ShoutViewsImported
from orm.engine import SessionFactory

SCAN_COUNT = 1000  # keys / fields per SCAN / HSCAN round trip on the old Redis
_INCR_IF_EXISTS = load_lua("views_incr_if_exists")


@dataclass
class ViewsImport:
    """What an import did."""

    shouts: int = 0  # shouts whose imported views changed
    added: int = 0  # views added to the totals, all shouts together (negative if a source went down)
    unknown: list[str] = field(default_factory=list)  # slugs or ids with no shout here (at most 20 kept)
    unknown_count: int = 0


def read_views_file(path: Path) -> dict[str, int]:
    """A views.json: an object of slug -> views (a count that is not a non-negative integer is refused)."""
    value = json.loads(path.read_text())
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object of slug -> views")
    counts: dict[str, int] = {}
    for slug, views in value.items():
        if not isinstance(views, int) or isinstance(views, bool) or views < 0:
            raise ValueError(f"{path}: the views of {slug!r} are not a count: {views!r}")
        counts[str(slug)] = views
    return counts


async def read_views_redis(old: Redis) -> dict[int, int]:
    """Shout id -> views in a Discours Redis: the newest `migrated_views_{timestamp}` HASH plus the
    `viewed:{id}` counters. Reads only."""
    newest: tuple[int, bytes] | None = None
    async for key in old.scan_iter(match=keys.LEGACY_MIGRATED_VIEWS, count=SCAN_COUNT):
        suffix = key.decode().removeprefix("migrated_views_")
        if suffix.isdigit() and (newest is None or int(suffix) > newest[0]):
            newest = (int(suffix), key)
    views: dict[int, int] = {}
    if newest is not None:
        async for name, value in old.hscan_iter(newest[1], count=SCAN_COUNT):
            if name.isdigit() and value.isdigit():
                views[int(name)] = int(value)
    async for key in old.scan_iter(match=keys.LEGACY_VIEWED, count=SCAN_COUNT):
        shout = keys.legacy_viewed_shout(key.decode())
        counted = await old.get(key)
        if shout is not None and counted is not None and counted.isdigit():
            views[shout] = views.get(shout, 0) + int(counted)
    return views


async def import_views(db: SessionFactory, *, by_slug: Mapping[str, int] | None = None,
                       by_id: Mapping[int, int] | None = None, redis: Redis | None = None) -> ViewsImport:
    """Set the imported views of the shouts named (by slug and/or by id; the higher count where both name
    one) and move their totals by the difference, in one transaction."""
    done = ViewsImport()
    async with db() as session, session.begin():
        wanted = await _by_shout(session, by_slug or {}, by_id or {}, done)
        if not wanted:
            return done
        before = dict((await session.execute(select(ShoutViewsImported.shout, ShoutViewsImported.views)
                                             .where(ShoutViewsImported.shout.in_(list(wanted))))).all())
        moved = {shout: views - before.get(shout, 0) for shout, views in wanted.items()
                 if views != before.get(shout)}
        if not moved:
            return done
        running = await _running_counters(redis, list(moved))
        await _write(session, wanted, moved)
    if running:
        assert redis is not None
        incr = redis.register_script(_INCR_IF_EXISTS)
        for shout in running:
            await incr(keys=[keys.viewed(shout)], args=[moved[shout]])
    done.shouts, done.added = len(moved), sum(moved.values())
    return done


async def _by_shout(session: AsyncSession, by_slug: Mapping[str, int], by_id: Mapping[int, int],
                    done: ViewsImport) -> dict[int, int]:
    ids: dict[str, int] = {}
    if by_slug:
        ids = dict((await session.execute(select(Shout.slug, Shout.id).where(Shout.slug.in_(list(by_slug))))).all())
    existing: set[int] = set()
    if by_id:
        existing = set((await session.scalars(select(Shout.id).where(Shout.id.in_(list(by_id))))).all())
    wanted: dict[int, int] = {}
    for slug, views in by_slug.items():
        if slug in ids:
            wanted[ids[slug]] = max(views, wanted.get(ids[slug], 0))
        else:
            _unknown(done, slug)
    for shout, views in by_id.items():
        if shout in existing:
            wanted[shout] = max(views, wanted.get(shout, 0))
        else:
            _unknown(done, str(shout))
    return wanted


def _unknown(done: ViewsImport, name: str) -> None:
    done.unknown_count += 1
    if len(done.unknown) < 20:
        done.unknown.append(name)


async def _running_counters(redis: Redis | None, shouts: list[int]) -> list[int]:
    """The shouts whose counters a running server holds now (before the totals move: a counter started
    after that starts from the moved total)."""
    if redis is None:
        return []
    found = await redis.mget([keys.viewed(shout) for shout in shouts])
    return [shout for shout, value in zip(shouts, found, strict=True) if value is not None]


async def _write(session: AsyncSession, wanted: dict[int, int], moved: dict[int, int]) -> None:
    now = int(time.time())
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    imported = insert(ShoutViewsImported).values(
        [{"shout": shout, "views": wanted[shout], "imported_at": now} for shout in moved])
    await session.execute(imported.on_conflict_do_update(
        index_elements=[ShoutViewsImported.shout],
        set_={"views": imported.excluded.views, "imported_at": imported.excluded.imported_at}))
    await session.execute(insert(ShoutViews).values(  # a row for every shout moved, to add to
        [{"shout": shout, "views": 0, "updated_at": now} for shout in moved])
        .on_conflict_do_nothing(index_elements=[ShoutViews.shout]))
    table = cast(Table, ShoutViews.__table__)  # a Core UPDATE run per shout (executemany), not an ORM bulk update
    added = table.c.views + bindparam("delta")
    await session.execute(
        update(table).where(table.c.shout == bindparam("moved_shout"))
        .values(views=case((added < 0, 0), else_=added), updated_at=now),
        [{"moved_shout": shout, "delta": delta} for shout, delta in moved.items()])
