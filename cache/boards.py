"""Leaderboards (seed 001): `leaderboard:{board}` sorted sets of shouts by rating and by comments, and of
authors by rating, kept current by the write side (ZINCRBY, triggers/live_rules.py) under the rules of
cache/live.py. Members are zero-padded ids, so equal scores order by id, highest first, as SQL does.

A board holds at most `cap` members (seed 004), the top ones, and a sentinel member `floor` whose score
is the floor: every entity scoring above the floor is on the board with its exact score. A write that
raises an entity which is not on the board cannot place it, so it raises the floor by as much. A page
(or a rank) is exact while it lies above the sentinel; one that reaches it is read from SQL, and the
board is built again. A board that holds every entity has the floor `COMPLETE`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Select, case, func, select

from cache import keys
from cache.entities import SessionFactory
from cache.live import BOARD_ENTITY, LiveStore, Noted
from cache.store import Cache
from orm import Author, AuthorRating, Reaction, Shout
from orm.stats import is_listed, shout_stat_columns

FLOOR = "floor"
COMPLETE = -1e15  # the floor of a board that holds every entity


def _shouts_by(column: str) -> Callable[[int | None], Select[Any]]:
    def query(limit: int | None) -> Any:
        stats = select(Reaction.shout.label("shout"), *shout_stat_columns()).group_by(Reaction.shout).subquery()
        score = func.coalesce(stats.c[column], 0)
        return (select(Shout.id, score).outerjoin(stats, stats.c.shout == Shout.id).where(is_listed())
                .order_by(score.desc(), Shout.id.desc()).limit(limit))
    return query


def _authors_by_rating(limit: int | None) -> Any:
    karma = (select(AuthorRating.author.label("author"),
                    func.sum(case((AuthorRating.plus, 1), else_=-1)).label("rating"))
             .group_by(AuthorRating.author).subquery())
    score = func.coalesce(karma.c.rating, 0)
    return (select(Author.id, score).outerjoin(karma, karma.c.author == Author.id)
            .order_by(score.desc(), Author.id.desc()).limit(limit))


# board -> the SQL of its top `limit` (id, score), highest first (None: all): the definition the board keeps.
BOARDS: dict[str, Callable[[int | None], Select[Any]]] = {
    "shouts:rating": _shouts_by("rating"),
    "shouts:comments": _shouts_by("comments_count"),
    "authors:rating": _authors_by_rating,
}
SHOUT_BOARDS = ("shouts:rating", "shouts:comments")
# What moves each board: (entity kind, counter metric) -> board (triggers/live_rules.py).
BOARD_OF_METRIC = {("shout", "rating"): "shouts:rating", ("shout", "comments"): "shouts:comments",
                   ("author", "rating"): "authors:rating"}


class Boards:
    def __init__(self, live: LiveStore, cache: Cache, db: SessionFactory, *, cap: int | None = None) -> None:
        self.live, self.cache, self.db = live, cache, db
        self.cap = cap or live.set_cap

    async def top(self, board: str, offset: int, limit: int) -> list[int]:
        """Ids `offset`..`offset + limit` of a board, highest first."""
        found, noted = await self._read(
            board, lambda pipe, key: pipe.zrevrange(key, offset, offset + limit, withscores=True))
        if found is not None and (page := _above_floor(found[0], limit)) is not None:
            return page
        members = await self._build(board, noted)
        if offset + limit <= len(members) or len(members) <= self.cap:
            return members[offset:offset + limit]
        return [entity_id for entity_id, _ in (await self._sql(board, offset + limit))[offset:]]

    async def rank(self, board: str, entity_id: int) -> int | None:
        """0-based place on the board (ZREVRANK), None for an entity that is not ranked."""
        def commands(pipe: Any, key: str) -> None:
            pipe.zrevrank(key, keys.member(entity_id))
            pipe.zrevrank(key, FLOOR)
            pipe.zscore(key, FLOOR)

        found, noted = await self._read(board, commands, per_key=3)
        if found is not None:
            place, floor_place, floor = found
            if place is not None and (floor_place is None or place < floor_place):
                return int(place)
            if floor is not None and float(floor) <= COMPLETE:
                return None  # the board holds every entity, and not this one
        members = await self._build(board, noted)
        if entity_id not in members and len(members) > self.cap:  # below the part a build keeps
            members = [i for i, _ in await self._sql(board, None)]
        return members.index(entity_id) if entity_id in members else None

    async def rebuild(self, board: str) -> None:
        """Build the board from SQL, unless a write moves it meanwhile (the rebuild command)."""
        await self._build(board, await self.live.note("board", board, [BOARD_ENTITY]))

    async def _read(self, board: str, commands: Callable[[Any, str], object],
                    per_key: int = 1) -> tuple[list[Any] | None, dict[int, Noted]]:
        found, noted = await self.live.read("board", board, [BOARD_ENTITY], commands, per_key=per_key)
        return found[0], noted

    async def _sql(self, board: str, limit: int | None) -> list[tuple[int, float]]:
        async with self.db() as session:
            return [(int(i), float(s)) for i, s in (await session.execute(BOARDS[board](limit))).all()]

    async def _build(self, board: str, noted: dict[int, Noted]) -> list[int]:
        """Build the board from SQL (its top `cap` and the floor), one builder at a time; returns the
        ids read, highest first (`cap` + 1 of them when the board does not hold every entity)."""
        lock = keys.leaderboard(board)
        ours = await self.cache.take_fill_lock(lock) if noted else False
        try:
            rows = await self._sql(board, self.cap + 1)
            if ours is not False:
                kept, rest = rows[:self.cap], rows[self.cap:]
                data: list[Any] = [x for entity_id, score in kept for x in (int(score), keys.member(entity_id))]
                data += [rest[0][1] if rest else COMPLETE, FLOOR]
                await self.live.build("board", board, [(BOARD_ENTITY, data)], noted, structure="zset")
        finally:
            if ours:
                await self.cache.release_fill_lock(lock)
        return [entity_id for entity_id, _ in rows]


def _above_floor(rows: list[tuple[bytes, float]], limit: int) -> list[int] | None:
    """The page if it lies above the floor (or the board is complete), else None."""
    ids: list[int] = []
    for member, score in rows[:limit]:
        if member == FLOOR.encode():
            return ids if score <= COMPLETE else None
        ids.append(int(member))
    return ids if len(ids) == limit else None
