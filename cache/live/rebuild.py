"""Rebuild every live structure from SQL (`discours rebuild`): counters, follow sets, comment threads and
comment HASHes, leaderboards (all time and this week's editions; an earlier week is built when read).
Entities go in batches of `BATCH` ids (seed 004: pipelines of at most 100 commands), each batch a few
statements and round trips, so a running server is never blocked: it keeps serving, and what a write
changes during the rebuild is simply not overwritten (the build of an entity touched since it was noted
is refused, see cache/live/structures.py).

View counters and histories are not rebuilt: Redis is their source until the views flush writes them
down (cache/live/views.py), and a missing `viewed:{id}` is already read back from `shout_views`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from sqlalchemy import func, select

from cache.live.boards import Boards, current_boards
from cache.live.counters import get_counters
from cache.live.follows import EDGES, rebuild_sets
from cache.live.structures import LiveStore
from cache.live.threads import Threads
from cache.store import Cache
from orm import Author, Community, Reaction, Shout, Topic
from orm.engine import SessionFactory
from orm.reaction import COMMENT_KINDS

BATCH = 100
Progress = Callable[[str, int, int], None]

# kind -> (model, progress label)
MODELS: dict[str, tuple[Any, str]] = {"shout": (Shout, "shouts"), "author": (Author, "authors"),
                                      "topic": (Topic, "topics"), "community": (Community, "communities")}


def _follow_sets(kind: str) -> list[str]:
    names = ["fans"] if kind in EDGES else []
    if kind == "author":
        names += [f"following:{target}" for target in EDGES]
    return names


async def _batches(db: SessionFactory, column: Any, *where: Any) -> AsyncIterator[tuple[list[int], int, int]]:
    """Ids in ascending batches (keyset paging, no OFFSET), each with how many are done and the total."""
    async with db() as session:
        total = int(await session.scalar(select(func.count()).select_from(column.table).where(*where)) or 0)
    last, done = 0, 0
    while True:
        async with db() as session:
            ids = list((await session.scalars(select(column).where(column > last, *where).order_by(column)
                                              .limit(BATCH))).all())
        if not ids:
            return
        done += len(ids)
        last = ids[-1]
        yield ids, done, max(total, done)


async def rebuild_all(live: LiveStore, cache: Cache, db: SessionFactory,
                      progress: Progress = lambda label, done, total: None) -> dict[str, int]:
    """Rebuild everything; returns how many entities of each kind were gone through."""
    threads, boards = Threads(live, cache, db), Boards(live, cache, db)
    counts: dict[str, int] = {}
    for kind, (model, label) in MODELS.items():
        counts[kind] = 0
        async for ids, done, total in _batches(db, model.id):
            await get_counters(kind, ids, live=live, db=db, refresh=True)
            for name in _follow_sets(kind):
                await rebuild_sets(live, db, kind, name, ids)
            if kind == "shout":
                await threads.rebuild("shout", ids)
            counts[kind] = done
            progress(label, done, total)
    counts["comment"] = 0
    async for ids, done, total in _batches(db, Reaction.id, Reaction.kind.in_(COMMENT_KINDS)):
        await threads.rebuild("comment", ids)
        counts["comment"] = done
        progress("comments", done, total)
    names = current_boards(time.time())
    for index, board in enumerate(names, 1):
        await boards.rebuild(board)
        progress("leaderboards", index, len(names))
    counts["board"] = len(names)
    return counts
