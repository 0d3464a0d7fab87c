"""Author reads: by id or slug, the full list, filtered and ordered pages, search, follows."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Select, distinct, func, select

from cache import keys
from cache.composite import cached_composite
from cache.entities import (
    get_cached_author,
    get_cached_authors,
    get_cached_by_slug,
    get_cached_communities,
    get_cached_topics,
    id_by_slug,
)
from cache.follows import fan_ids, following_ids
from orm import Author, AuthorFollower, Shout, ShoutAuthor, ShoutTopic, Topic
from orm.stats import is_listed
from resolvers.deps import Deps, like_pattern
from resolvers.errors import BadInput
from resolvers.paging import page

DEFAULT_LIMIT = 20
AUTHOR_ORDERS = ("name", "created_at", "last_seen", "shouts", "followers")


async def resolve_author_id(
    deps: Deps, slug: str | None = None, user: str | None = None, author_id: int | None = None
) -> int | None:
    """The one way the API's `(slug, user, author_id)` triples pick an author."""
    if author_id is not None:
        return author_id
    if slug:
        return await id_by_slug("author", slug, cache=deps.cache, db=deps.db)
    if user:
        return await id_by_slug("author_user", user, cache=deps.cache, db=deps.db)
    return None


async def authors_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    return [a for a in await get_cached_authors(ids, cache=deps.cache, db=deps.db) if a is not None]


async def get_author(deps: Deps, slug: str | None = None, author_id: int | None = None) -> Any:
    if author_id is None and slug:
        return await get_cached_by_slug("author", slug, cache=deps.cache, db=deps.db)
    resolved = await resolve_author_id(deps, slug=slug, author_id=author_id)
    return None if resolved is None else await get_cached_author(resolved, cache=deps.cache, db=deps.db)


async def get_authors_all(deps: Deps) -> list[dict[str, Any]]:
    async def query() -> list[int]:
        async with deps.db() as session:
            stmt = select(Author.id).where(Author.deleted_at.is_(None)).order_by(Author.id)
            return list((await session.scalars(stmt)).all())

    async def every_author() -> list[dict[str, Any]]:
        return await authors_of_ids(deps, await deps.cache.cached_query(keys.authors_all(), query,
                                                                        tags=[keys.TAG_AUTHORS]))

    return await cached_composite(deps.cache, keys.composite(keys.authors_all()), every_author)


# `last_seen` / `created_at` in `load_authors_by` mean "within the last N seconds" (as Discours reads them),
# measured from the start of the current minute, which is part of the cached list's key: the window moves
# with the clock a minute at a time, and each minute's list is kept like any other.
WINDOW_STEP = 60


def _since(by: dict[str, Any]) -> tuple[str, int] | None:
    """The window a `by` asks for: ("last_seen" or "created_at", the earliest time in it), or None. As in
    Discours, `last_seen` wins when both are given, and 0 asks for no window."""
    for field_name in ("last_seen", "created_at"):
        if by.get(field_name):
            seconds = int(by[field_name])
            if seconds < 0:
                raise BadInput(f"{field_name} is a number of seconds back from now: 0 or more", field=field_name)
            # a window longer than the clock has run is every author (and stays a 32-bit time)
            return field_name, max(0, int(time.time()) // WINDOW_STEP * WINDOW_STEP - seconds)
    return None


def _authors_query(by: dict[str, Any], window: tuple[str, int] | None) -> Select[Any]:
    query = select(Author.id).where(Author.deleted_at.is_(None))
    if slug := by.get("slug"):
        query = query.where(Author.slug == slug)
    if name := by.get("name"):
        query = query.where(func.lower(Author.name).like(like_pattern(name.lower()), escape="\\"))
    if topic := by.get("topic"):
        query = query.where(Author.id.in_(
            select(ShoutAuthor.author)
            .join(ShoutTopic, ShoutTopic.shout == ShoutAuthor.shout)
            .join(Topic, Topic.id == ShoutTopic.topic)
            .where(Topic.slug == topic)
        ))
    if window is not None:
        column, earliest = window
        query = query.where(getattr(Author, column) > earliest)
    if (after := by.get("after")) is not None:
        query = query.where(Author.created_at > after)
    order = by.get("order") or by.get("stat") or "created_at"
    if order not in AUTHOR_ORDERS:
        raise BadInput(f"order must be one of {', '.join(AUTHOR_ORDERS)}", field="order")
    if order == "shouts":
        counts = (select(ShoutAuthor.author.label("author"), func.count(distinct(ShoutAuthor.shout)).label("n"))
                  .join(Shout, Shout.id == ShoutAuthor.shout).where(is_listed())
                  .group_by(ShoutAuthor.author).subquery())
        query = query.outerjoin(counts, counts.c.author == Author.id).order_by(
            func.coalesce(counts.c.n, 0).desc())
    elif order == "followers":
        counts = (select(AuthorFollower.author.label("author"), func.count().label("n"))
                  .group_by(AuthorFollower.author).subquery())
        query = query.outerjoin(counts, counts.c.author == Author.id).order_by(
            func.coalesce(counts.c.n, 0).desc())
    elif order == "name":
        query = query.order_by(Author.name.asc())
    else:
        query = query.order_by(getattr(Author, order).desc())
    return query.order_by(Author.id)


async def load_authors_by(deps: Deps, by: dict[str, Any], limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    by = {k: v for k, v in (by or {}).items() if v is not None}
    if limit == 0:
        return []
    window = _since(by)  # once: the query and its key must agree on the minute
    stmt = _authors_query(by, window)  # validates `order` before anything is cached

    async def query() -> list[int]:
        async with deps.db() as session:
            return list((await session.scalars(stmt.limit(limit).offset(offset))).all())

    key = keys.authors_stats(limit, offset, by.get("order") or by.get("stat") or "created_at",
                             keys.digest([*sorted(by.items()), window]))
    ids = await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=[keys.TAG_AUTHORS])
    return await authors_of_ids(deps, ids)


async def get_author_followers(deps: Deps, slug: str | None = None, user: str | None = None,
                               author_id: int | None = None) -> list[Any]:
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return []
    return await authors_of_ids(deps, await fan_ids("author", resolved, live=deps.live, db=deps.db, cache=deps.cache))


async def get_author_follows_of_kind(deps: Deps, kind: str, slug: str | None = None, user: str | None = None,
                                     author_id: int | None = None) -> list[Any]:
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return []
    ids = await following_ids(kind, resolved, live=deps.live, db=deps.db, cache=deps.cache)
    getter = {"author": get_cached_authors, "topic": get_cached_topics,
              "community": get_cached_communities}[kind]
    return [e for e in await getter(ids, cache=deps.cache, db=deps.db) if e is not None]


async def get_author_follows(deps: Deps, slug: str | None = None, user: str | None = None,
                             author_id: int | None = None) -> dict[str, Any]:
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return {"error": "author not found", "authors": [], "topics": [], "communities": []}
    return {
        "error": None,
        "authors": await get_author_follows_of_kind(deps, "author", author_id=resolved),
        "topics": await get_author_follows_of_kind(deps, "topic", author_id=resolved),
        "communities": await get_author_follows_of_kind(deps, "community", author_id=resolved),
    }
