"""Leaderboards (seed 001): `leaderboard:{board}` sorted sets of shouts by rating, by comments and by
views, all time and per ISO week (`shouts:rating:2026-W47`), and of authors by rating. Members are
zero-padded ids, so equal scores order by id, highest first, as SQL does.

Two writers keep them current under the rules of cache/live/structures.py: votes and comments move their boards by
ZINCRBY at commit (triggers/live_rules.py; a weekly board is the week of the reaction's creation), and
the views flush (cache/live/views.py), the single writer of `shout_views`, places the totals it wrote with
ZADD GT: absolute and only growing, so its boards lag the view counters by one flush at most.

A board holds at most `cap` members (seed 004), the top ones, and a sentinel member `floor` whose score
is the floor: every entity scoring above the floor is on the board with its exact score. A write that
raises an entity which is not on the board cannot place it by a delta, so it raises the floor by as
much; an absolute score above the floor enters and pushes the lowest member out. A page (or a rank) is
exact while it lies above the sentinel; one that reaches it is read from SQL, and the board is built
again. A board that holds every entity has the floor `COMPLETE`.

All-time boards are live kind "board"; weekly boards are kind "weekly", whose epoch a shout's
publication or withdrawal bumps (every weekly board lists every public shout, so all of them move).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, case, func, select

from cache import keys
from cache.fills import Lease
from cache.live.structures import BOARD_ENTITY, LiveStore, Noted
from cache.store import Cache
from orm import Author, AuthorRating, Reaction, Shout, ShoutViews, ShoutViewsWeekly
from orm.engine import SessionFactory
from orm.stats import is_listed, shout_stat_columns

FLOOR = "floor"
COMPLETE = -1e15  # the floor of a board that holds every entity
WEEK = 7 * 86_400


def week_start(week: str) -> int:
    """The first second (Monday 00:00 UTC) of an ISO week; ValueError for a name that is no week."""
    match = keys.WEEK_NAME.match(week)
    if match is None:
        raise ValueError(f"not an ISO week: {week!r}")
    return int(datetime.fromisocalendar(int(match[1]), int(match[2]), 1).replace(tzinfo=UTC).timestamp())


def _shout_scores(metric: str, week: str | None) -> Any:
    """A subquery of (shout, score) for one metric, all time or within a week."""
    if metric == "views":
        if week is None:
            return select(ShoutViews.shout.label("shout"), ShoutViews.views.label("score")).subquery()
        return (select(ShoutViewsWeekly.shout.label("shout"), ShoutViewsWeekly.views.label("score"))
                .where(ShoutViewsWeekly.week == week).subquery())
    column = {"rating": "rating", "comments": "comments_count"}[metric]
    stats = select(Reaction.shout.label("shout"), *shout_stat_columns())
    if week is not None:
        start = week_start(week)
        stats = stats.where(Reaction.created_at >= start, Reaction.created_at < start + WEEK)
    stats_sub = stats.group_by(Reaction.shout).subquery()
    return select(stats_sub.c.shout, stats_sub.c[column].label("score")).subquery()


def _shouts_by(metric: str, week: str | None) -> Callable[[int | None], Select[Any]]:
    def query(limit: int | None) -> Any:
        scores = _shout_scores(metric, week)
        score = func.coalesce(scores.c.score, 0)
        return (select(Shout.id, score).outerjoin(scores, scores.c.shout == Shout.id).where(is_listed())
                .order_by(score.desc(), Shout.id.desc()).limit(limit))
    return query


def _authors_by_rating(limit: int | None) -> Any:
    karma = (select(AuthorRating.author.label("author"),
                    func.sum(case((AuthorRating.plus, 1), else_=-1)).label("rating"))
             .group_by(AuthorRating.author).subquery())
    score = func.coalesce(karma.c.rating, 0)
    return (select(Author.id, score).outerjoin(karma, karma.c.author == Author.id)
            .order_by(score.desc(), Author.id.desc()).limit(limit))


# All-time board -> the SQL of its top `limit` (id, score), highest first (None: all): what it keeps.
BOARDS: dict[str, Callable[[int | None], Select[Any]]] = {
    "shouts:rating": _shouts_by("rating", None),
    "shouts:comments": _shouts_by("comments", None),
    "shouts:views": _shouts_by("views", None),
    "authors:rating": _authors_by_rating,
}
SHOUT_BOARDS = ("shouts:rating", "shouts:comments", "shouts:views")
WEEKLY_BOARDS = SHOUT_BOARDS  # every board of shouts has weekly editions
# What moves each board by a delta at commit: (entity kind, counter metric) -> board (triggers/live_rules.py).
BOARD_OF_METRIC = {("shout", "rating"): "shouts:rating", ("shout", "comments"): "shouts:comments",
                   ("author", "rating"): "authors:rating"}


def board_query(board: str) -> Callable[[int | None], Select[Any]]:
    """The SQL definition of any board, weekly editions included."""
    base, week = keys.split_board(board)
    if week is None:
        return BOARDS[base]
    if base not in WEEKLY_BOARDS:
        raise ValueError(f"no weekly edition of {base!r}")
    return _shouts_by(base.split(":")[1], week)


def current_boards(now: float) -> list[str]:
    """Every all-time board and this week's editions: what the rebuild command builds."""
    return [*BOARDS, *(keys.weekly_board(board, keys.week_of(now)) for board in WEEKLY_BOARDS)]


class Boards:
    def __init__(self, live: LiveStore, cache: Cache, db: SessionFactory, *, cap: int | None = None) -> None:
        self.live, self.cache, self.db = live, cache, db
        self.cap = cap or live.set_cap

    async def top(self, board: str, offset: int, limit: int, *, scored: bool = False) -> list[int]:
        """Ids `offset`..`offset + limit` of a board, highest first (`scored`: only those scoring above 0)."""
        return _ids(await self.page(board, offset, limit, scored=scored), scored)

    async def page(self, board: str, offset: int, limit: int, *,
                   scored: bool = False) -> list[tuple[int, float]]:
        """(id, score) of places `offset`..`offset + limit`, highest first (ZREVRANGE; from SQL below the floor)."""
        found, noted = await self._read(
            board, lambda pipe, key: pipe.zrevrange(key, offset, offset + limit, withscores=True))
        if found is not None and (rows := _above_floor(found[0], limit, scored)) is not None:
            return rows
        rows = await self._build(board, noted)
        if not (offset + limit <= len(rows) or len(rows) <= self.cap):
            rows = await self._sql(board, offset + limit)
        return rows[offset:offset + limit]

    async def rank(self, board: str, entity_id: int) -> int | None:
        """0-based place on the board (ZREVRANK), None for an entity that is not ranked."""
        placed = await self.place(board, entity_id)
        return None if placed is None else placed[0]

    async def place(self, board: str, entity_id: int) -> tuple[int, float] | None:
        """The entity's 0-based place and its score (ZREVRANK and ZSCORE, read together), None for an
        entity that is not ranked; from SQL when it lies below the floor."""
        def commands(pipe: Any, key: str) -> None:
            pipe.zrevrank(key, keys.member(entity_id))
            pipe.zscore(key, keys.member(entity_id))
            pipe.zrevrank(key, FLOOR)
            pipe.zscore(key, FLOOR)

        found, noted = await self._read(board, commands, per_key=4)
        if found is not None:
            place, score, floor_place, floor = found
            if place is not None and (floor_place is None or place < floor_place):
                return int(place), float(score)
            if floor is not None and float(floor) <= COMPLETE:
                return None  # the board holds every entity, and not this one
        rows = await self._build(board, noted)
        if all(i != entity_id for i, _ in rows) and len(rows) > self.cap:  # below the part a build keeps
            rows = await self._sql(board, None)
        return next(((n, score) for n, (i, score) in enumerate(rows) if i == entity_id), None)

    async def around(self, board: str, entity_id: int, radius: int) -> list[tuple[int, int, float]]:
        """Seed 001's "around me": (place, id, score) from `radius` places above the entity to `radius`
        below it, highest first; [] for an entity that is not ranked. Its place and the page are two
        reads: a vote between them shifts the page by that vote, never shows a wrong score."""
        placed = await self.place(board, entity_id)
        if placed is None:
            return []
        start = max(placed[0] - radius, 0)
        rows = await self.page(board, start, placed[0] + radius + 1 - start)
        return [(start + n, i, score) for n, (i, score) in enumerate(rows)]

    async def rebuild(self, board: str) -> None:
        """Build the board from SQL, unless a write moves it meanwhile (the rebuild command)."""
        await self._build(board, await self.live.note(keys.board_kind(board), board, [BOARD_ENTITY]))

    async def _read(self, board: str, commands: Callable[[Any, str], object],
                    per_key: int = 1) -> tuple[list[Any] | None, dict[int, Noted]]:
        found, noted = await self.live.read(keys.board_kind(board), board, [BOARD_ENTITY], commands, per_key=per_key)
        return found[0], noted

    async def _sql(self, board: str, limit: int | None) -> list[tuple[int, float]]:
        async with self.db() as session:
            return [(int(i), float(s)) for i, s in (await session.execute(board_query(board)(limit))).all()]

    async def _build(self, board: str, noted: dict[int, Noted]) -> list[tuple[int, float]]:
        """Build the board from SQL (its top `cap` and the floor), one builder at a time; returns the
        (id, score) rows read, highest first (`cap` + 1 of them when the board does not hold every entity)."""
        lock = keys.leaderboard(board)
        lease = await self.cache.take_fill_lock(lock) if noted else Lease.ANOTHERS
        try:
            rows = await self._sql(board, self.cap + 1)
            if lease is not Lease.ANOTHERS:
                kept, rest = rows[:self.cap], rows[self.cap:]
                data: list[Any] = [x for entity_id, score in kept for x in (int(score), keys.member(entity_id))]
                data += [rest[0][1] if rest else COMPLETE, FLOOR]
                await self.live.build(keys.board_kind(board), board, [(BOARD_ENTITY, data)], noted, structure="zset")
        finally:
            if lease is Lease.OURS:
                await self.cache.release_fill_lock(lock)
        return rows


def _above_floor(rows: list[tuple[bytes, float]], limit: int, scored: bool) -> list[tuple[int, float]] | None:
    """The page if it lies above the floor (or nothing that matters lies below it), else None."""
    page: list[tuple[int, float]] = []
    for member, score in rows[:limit]:
        if member == FLOOR.encode():
            return page if score <= COMPLETE or (scored and score <= 0) else None
        page.append((int(member), score))
    return page if len(page) == limit else None


def _ids(rows: list[tuple[int, float]], scored: bool) -> list[int]:
    return [entity_id for entity_id, score in rows if score > 0 or not scored]
