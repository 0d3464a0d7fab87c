"""Public shout reads: one shout, filtered and ordered lists, random top (search: resolvers/search.py).

Lists cache the ordered ids (`shouts:*` keys, 5-minute TTL, tagged with the `shouts` family); the
shouts themselves come from the entity cache in one batch.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Select, func, select

from cache import keys
from cache.composite import cached_composite
from cache.entities import get_cached_authors, get_cached_by_slug, get_cached_shouts, get_cached_topics
from cache.live.boards import WEEK, week_start
from orm import Author, Shout, ShoutAuthor, ShoutTopic, ShoutViews, Topic
from orm.driver import first_column
from orm.reaction import Reaction
from orm.stats import is_listed, shout_stat_columns
from resolvers.deps import Deps
from resolvers.errors import BadInput
from resolvers.paging import page
from resolvers.shout_query import (
    BOARD_ORDERS,
    DEFAULT_LIMIT,
    NO_FILTERS,
    NOTHING_ALONG,
    Along,
    ShoutFilters,
    ShoutPage,
    ShoutsQuery,
)

RANDOM_TOP_POOL = 100
MAX_RANDOM_TOP_POOL = 1000


async def get_shout(deps: Deps, slug: str | None = None, shout_id: int | None = None) -> dict[str, Any] | None:
    if shout_id is None:
        return await get_cached_by_slug("shout", slug, cache=deps.cache, db=deps.db) if slug else None
    shout: dict[str, Any] | None = (await get_cached_shouts([shout_id], cache=deps.cache, db=deps.db))[0]
    return shout


def filtered(query: Select[Any], filters: ShoutFilters) -> Select[Any]:
    query = query.where(is_listed())
    if topic := filters.topic:
        query = query.where(
            Shout.id.in_(select(ShoutTopic.shout).join(Topic, Topic.id == ShoutTopic.topic)
                         .where(Topic.slug == topic))
        )
    if author := filters.author:
        query = query.where(
            Shout.id.in_(select(ShoutAuthor.shout).join(Author, Author.id == ShoutAuthor.author)
                         .where(Author.slug == author))
        )
    if layouts := filters.layouts:
        query = query.where(Shout.layout.in_(layouts))
    if (featured := filters.featured) is not None:
        query = query.where(Shout.featured_at.is_not(None) if featured else Shout.featured_at.is_(None))
    if (after := filters.after) is not None:
        query = query.where(Shout.published_at >= after)
    if (community := filters.community) is not None:
        query = query.where(Shout.community == community)
    return query


def ordered(query: Select[Any], order_by: str | None, desc: bool) -> Select[Any]:
    if order_by is None:
        column: Any = Shout.published_at
    elif order_by == "views_count":  # as last flushed (cache/live/views.py), like the views leaderboard
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


async def shouts_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    shouts = await get_cached_shouts(ids, cache=deps.cache, db=deps.db)
    return [s for s in shouts if s is not None]


async def load_shouts_by(deps: Deps, query: ShoutsQuery, along: Along = NOTHING_ALONG) -> ShoutPage:
    """A page of shout cards, with the relations `along` names that its reader will show: kept in the
    page's composite, they come in the same one round trip."""
    if query.limit == 0:
        return ShoutPage([])

    if (board := query.board) is not None:
        await deps.cache.observe([keys.TAG_SHOUTS, keys.TAG_REACTIONS])  # responses move with votes
        return ShoutPage(await shouts_of_ids(deps, await deps.boards.top(board, query.offset, query.limit)))

    async def ids() -> list[int]:
        stmt = ordered(filtered(select(Shout.id), query.filters), query.order_by, query.order_by_desc)
        return await first_column(deps.db, stmt.limit(query.limit).offset(query.offset))

    key = query.ids_key

    async def stored() -> dict[str, Any]:
        cards = [card(s) for s in await shouts_of_ids(deps, await deps.cache.cached_query(
            key, ids, ttl=deps.ttl_shouts, tags=[keys.TAG_SHOUTS]))]
        authors, topics = await asyncio.gather(_authors_of(cards, deps) if along.authors else _nothing(),
                                               _topics_of(cards, deps) if along.topics else _nothing())
        return {"cards": cards, **({"authors": authors} if along.authors else {}),
                **({"topics": topics} if along.topics else {})}

    # The page whole (its ids, its shouts' cards and what travels along) in one round trip when warm.
    page = await cached_composite(deps.cache, keys.composite(key, along.shape), stored, ttl=deps.ttl_shouts)
    return ShoutPage(page["cards"], authors=page.get("authors"), topics=page.get("topics"))


async def _nothing() -> None:
    return None


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


async def load_shouts_random_top(deps: Deps, query: ShoutsQuery) -> list[dict[str, Any]]:
    """A random sample of the best-rated shouts: the pool of the top `random_limit` is cached, the
    sample is drawn per request."""
    pool_size = query.random_limit or RANDOM_TOP_POOL
    if pool_size < 0:
        raise BadInput("random_limit must be positive", field="random_limit")
    pool_size = min(pool_size, MAX_RANDOM_TOP_POOL)

    async def ids() -> list[int]:
        return await first_column(deps.db, ordered(filtered(select(Shout.id), query.filters), "rating", True)
                                  .limit(pool_size))

    if query.filters == NO_FILTERS:
        pool = await deps.boards.top(BOARD_ORDERS["rating"], 0, pool_size)
    else:
        key = keys.shouts_random_top(pool_size, query.filters.digest())
        pool = await deps.cache.cached_query(key, ids, ttl=deps.ttl_shouts, tags=[keys.TAG_SHOUTS])
    sample = random.sample(pool, min(query.limit, len(pool)))
    return await shouts_of_ids(deps, sample)
