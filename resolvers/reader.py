"""Public shout reads: one shout, filtered and ordered lists, random top (search: resolvers/search.py).

Lists cache the ordered ids (`shouts:*` keys, 5-minute TTL, tagged with the `shouts` family); the
shouts themselves come from the entity cache in one batch.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Select, func, select

from cache import keys
from cache.boards import WEEK, week_start
from cache.composite import cached_composite
from cache.entities import get_cached_authors, get_cached_by_slug, get_cached_shouts, get_cached_topics
from orm import Author, Shout, ShoutAuthor, ShoutTopic, ShoutViews, Topic
from orm.reaction import Reaction
from orm.stats import is_listed, shout_stat_columns
from resolvers.deps import Deps, page
from resolvers.errors import BadInput

DEFAULT_LIMIT = 10
RANDOM_TOP_POOL = 100
MAX_RANDOM_TOP_POOL = 1000
ORDERS = ("rating", "comments_count", "last_commented_at", "views_count")
# order_by -> the leaderboard that holds that order (cache/boards.py), for unfiltered, descending lists.
BOARD_ORDERS = {"rating": "shouts:rating", "comments_count": "shouts:comments", "views_count": "shouts:views"}
# A page of shouts: its "cards", and those of ALONG that were asked for (the cards' authors, topics; each
# named as the request's loader of that kind, schema/context.py `Loaders`).
Page = dict[str, list[dict[str, Any]]]
ALONG = ("authors", "topics")


async def get_shout(deps: Deps, slug: str | None = None, shout_id: int | None = None) -> dict[str, Any] | None:
    if shout_id is None:
        return await get_cached_by_slug("shout", slug, cache=deps.cache, db=deps.db) if slug else None
    return (await get_cached_shouts([shout_id], cache=deps.cache, db=deps.db))[0]


def normalise_options(options: dict[str, Any] | None, deps: Deps) -> dict[str, Any]:
    options = dict(options or {})
    limit, offset = page(options.get("limit"), options.get("offset"),
                         default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    filters = {k: v for k, v in (options.get("filters") or {}).items() if v is not None}
    if "layouts" in filters:
        filters["layouts"] = sorted(set(filters["layouts"]))
    order_by = options.get("order_by")
    if order_by is not None and order_by not in ORDERS:
        raise BadInput(f"order_by must be one of {', '.join(ORDERS)}", field="order_by")
    desc = options.get("order_by_desc")
    return {
        "limit": limit,
        "offset": offset,
        "filters": filters,
        "order_by": order_by,
        "order_by_desc": True if desc is None else bool(desc),
        "random_limit": options.get("random_limit"),
    }


def filtered(query: Select[Any], filters: dict[str, Any]) -> Select[Any]:
    query = query.where(is_listed())
    if topic := filters.get("topic"):
        query = query.where(
            Shout.id.in_(select(ShoutTopic.shout).join(Topic, Topic.id == ShoutTopic.topic)
                         .where(Topic.slug == topic))
        )
    if author := filters.get("author"):
        query = query.where(
            Shout.id.in_(select(ShoutAuthor.shout).join(Author, Author.id == ShoutAuthor.author)
                         .where(Author.slug == author))
        )
    if layouts := filters.get("layouts"):
        query = query.where(Shout.layout.in_(layouts))
    if (featured := filters.get("featured")) is not None:
        query = query.where(Shout.featured_at.is_not(None) if featured else Shout.featured_at.is_(None))
    if (after := filters.get("after")) is not None:
        query = query.where(Shout.published_at >= after)
    return query


def ordered(query: Select[Any], order_by: str | None, desc: bool) -> Select[Any]:
    if order_by is None:
        column: Any = Shout.published_at
    elif order_by == "views_count":  # as last flushed (cache/views.py), like the views leaderboard
        query = query.outerjoin(ShoutViews, ShoutViews.shout == Shout.id)
        column = func.coalesce(ShoutViews.views, 0)
    else:
        stats = select(Reaction.shout.label("shout"), *shout_stat_columns()).group_by(Reaction.shout).subquery()
        query = query.outerjoin(stats, stats.c.shout == Shout.id)
        column = stats.c[order_by] if order_by == "last_commented_at" else func.coalesce(stats.c[order_by], 0)
    primary = column.desc() if desc else column.asc()
    if order_by is not None:  # a listed shout always has published_at: only the stats may be null
        primary = primary.nulls_last()
    return query.order_by(primary, Shout.id.desc() if desc else Shout.id.asc())


def _board_of(opts: dict[str, Any]) -> str | None:
    if opts["filters"] or not opts["order_by_desc"]:
        return None
    return BOARD_ORDERS.get(opts["order_by"] or "")


async def shouts_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    shouts = await get_cached_shouts(ids, cache=deps.cache, db=deps.db)
    return [s for s in shouts if s is not None]


async def load_shouts_by(deps: Deps, options: dict[str, Any] | None, along: Sequence[str] = ()) -> Page:
    """A page of shout cards, with the relations named in `along` (of ALONG) that its reader will show:
    kept in the page's composite, they come in the same one round trip."""
    opts = normalise_options(options, deps)
    if opts["limit"] == 0:
        return {"cards": []}

    if (board := _board_of(opts)) is not None:
        await deps.cache.observe([keys.TAG_SHOUTS, keys.TAG_REACTIONS])  # responses move with votes
        return {"cards": await shouts_of_ids(deps, await deps.boards.top(board, opts["offset"], opts["limit"]))}

    async def query() -> list[int]:
        stmt = ordered(filtered(select(Shout.id), opts["filters"]), opts["order_by"], opts["order_by_desc"])
        async with deps.db() as session:
            return list((await session.scalars(stmt.limit(opts["limit"]).offset(opts["offset"]))).all())

    key = keys.shouts_by(keys.digest(sorted(opts["filters"].items()), opts["order_by"],
                                     opts["order_by_desc"], opts["limit"], opts["offset"]))
    along = [name for name in ALONG if name in along]

    async def page() -> Page:
        cards = [card(s) for s in await shouts_of_ids(deps, await deps.cache.cached_query(
            key, query, ttl=deps.ttl_shouts, tags=[keys.TAG_SHOUTS]))]
        related = await asyncio.gather(*(_RELATED[name](cards, deps) for name in along))
        return {"cards": cards, **dict(zip(along, related, strict=True))}

    # The page whole (its ids, its shouts' cards and what travels along) in one round trip when warm.
    shape = "-".join(("cards", *along))
    return await cached_composite(deps.cache, keys.composite(key, shape), page, ttl=deps.ttl_shouts)


def unique(values: Iterable[Any]) -> list[Any]:
    """The values in order, each once, without None."""
    return [v for v in dict.fromkeys(values) if v is not None]


def author_ids_of(shouts: Iterable[dict[str, Any]]) -> list[int]:
    """The authors a list of shouts names: its authors and its creators."""
    return unique(a for s in shouts for a in (*(s.get("author_ids") or ()), s.get("created_by")))


def topic_ids_of(shouts: Iterable[dict[str, Any]]) -> list[int]:
    return unique(t for s in shouts for t in (*(s.get("topic_ids") or ()), s.get("main_topic_id")))


async def _authors_of(cards: list[dict[str, Any]], deps: Deps) -> list[dict[str, Any]]:
    return [a for a in await get_cached_authors(author_ids_of(cards), cache=deps.cache, db=deps.db) if a]


async def _topics_of(cards: list[dict[str, Any]], deps: Deps) -> list[dict[str, Any]]:
    return [t for t in await get_cached_topics(topic_ids_of(cards), cache=deps.cache, db=deps.db) if t]


_RELATED = {"authors": _authors_of, "topics": _topics_of}


def card(shout: dict[str, Any]) -> dict[str, Any]:
    """A shout as a list shows it: without its text, most of its size (schema/types.py `Shout.body` reads
    the full shout when a list does ask for it)."""
    return {name: value for name, value in shout.items() if name != "body"}


async def load_shouts_top(deps: Deps, order_by: str, week: str | None, limit: int | None,
                          offset: int | None) -> list[dict[str, Any]]:
    """A leaderboard as a list of shouts: all time, or one ISO week (`2026-W47`, or `current`), where
    only shouts that scored that week are listed."""
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    if order_by not in BOARD_ORDERS:
        raise BadInput(f"order_by must be one of {', '.join(BOARD_ORDERS)}", field="order_by")
    if limit == 0:
        return []
    await deps.cache.observe([keys.TAG_SHOUTS, keys.TAG_REACTIONS])  # responses move with votes
    board = BOARD_ORDERS[order_by]
    if week is None:
        return await shouts_of_ids(deps, await deps.boards.top(board, offset, limit))
    board = keys.weekly_board(board, _readable_week(week, deps.board_weeks))
    return await shouts_of_ids(deps, await deps.boards.top(board, offset, limit, scored=True))


def _readable_week(week: str, weeks_back: int) -> str:
    """A week a client may ask for: an ISO week name, at most `weeks_back` weeks ago and not ahead."""
    now = time.time()
    if week == "current":
        return keys.week_of(now)
    try:
        start = week_start(week)
    except ValueError:
        raise BadInput("week must be an ISO week such as 2026-W47, or 'current'", field="week") from None
    if start > now or start <= now - (weeks_back + 1) * WEEK:
        raise BadInput(f"week must be one of the last {weeks_back} weeks", field="week")
    return week


async def load_shouts_with_topic(deps: Deps, slug: str | None, options: dict[str, Any] | None,
                                 along: Sequence[str] = ()) -> Page:
    options = dict(options or {"limit": DEFAULT_LIMIT})
    options["filters"] = {**(options.get("filters") or {}), "topic": slug}
    return await load_shouts_by(deps, options, along)


async def load_shouts_authored_by(deps: Deps, slug: str | None, options: dict[str, Any] | None,
                                  along: Sequence[str] = ()) -> Page:
    options = dict(options or {"limit": DEFAULT_LIMIT})
    options["filters"] = {**(options.get("filters") or {}), "author": slug}
    return await load_shouts_by(deps, options, along)


async def load_shouts_random_top(deps: Deps, options: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A random sample of the best-rated shouts: the pool of the top `random_limit` is cached, the
    sample is drawn per request."""
    opts = normalise_options(options, deps)
    pool_size = opts["random_limit"] or RANDOM_TOP_POOL
    if pool_size < 0:
        raise BadInput("random_limit must be positive", field="random_limit")
    pool_size = min(pool_size, MAX_RANDOM_TOP_POOL)

    async def query() -> list[int]:
        stmt = ordered(filtered(select(Shout.id), opts["filters"]), "rating", True).limit(pool_size)
        async with deps.db() as session:
            return list((await session.scalars(stmt)).all())

    if not opts["filters"]:
        pool = await deps.boards.top("shouts:rating", 0, pool_size)
    else:
        key = keys.shouts_random_top(pool_size, keys.digest(sorted(opts["filters"].items())))
        pool = await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=[keys.TAG_SHOUTS])
    sample = random.sample(pool, min(opts["limit"], len(pool)))
    return await shouts_of_ids(deps, sample)
