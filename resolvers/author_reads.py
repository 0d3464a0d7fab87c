"""Author reads: by id or slug, the full list, filtered and ordered pages, search, follows."""

from __future__ import annotations

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
from cache.live.follows import fan_ids, following_ids
from orm import Author, AuthorFollower, CommunityAuthor, Shout, ShoutAuthor, ShoutTopic, Topic
from orm.driver import first_column
from orm.stats import is_listed
from resolvers.author_query import AuthorsQuery
from resolvers.deps import Deps, like_pattern
from resolvers.errors import BadInput, NotFound


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


AUTHORS_BY_RATING = "authors:rating"  # the leaderboard of authors (cache/live/boards.py)


async def load_authors_around(deps: Deps, radius: int, slug: str | None = None,
                              author_id: int | None = None) -> list[tuple[int, int, dict[str, Any]]]:
    """(place, score, author) of the authors `radius` places above and below one on the leaderboard of
    authors by rating, itself among them, 1 for the first place; [] for an author with no place."""
    widest = (deps.max_page_size - 1) // 2
    if not 0 <= radius <= widest:
        raise BadInput(f"radius must be between 0 and {widest}", field="radius")
    author = await get_author(deps, slug=slug, author_id=author_id)
    if author is None:
        raise NotFound("no such author", field="slug" if author_id is None else "author_id")
    placed = await deps.boards.around(AUTHORS_BY_RATING, author["id"], radius)
    found = {a["id"]: a for a in await authors_of_ids(deps, [i for _, i, _ in placed])}
    return [(place + 1, int(score), found[i]) for place, i, score in placed if i in found]


# Built once: on the driver a statement stays compiled for as long as it lives (orm/driver.py).
_EVERY_AUTHOR = select(Author.id).where(Author.deleted_at.is_(None)).order_by(Author.id)


async def get_authors_all(deps: Deps) -> list[dict[str, Any]]:
    async def query() -> list[int]:
        return await first_column(deps.db, _EVERY_AUTHOR)

    async def every_author() -> list[dict[str, Any]]:
        return await authors_of_ids(deps, await deps.cache.cached_query(keys.authors_all(), query,
                                                                        tags=[keys.TAG_AUTHORS]))

    return await cached_composite(deps.cache, keys.composite(keys.authors_all()), every_author)


def _authors_query(query: AuthorsQuery) -> Select[Any]:
    stmt = select(Author.id).where(Author.deleted_at.is_(None))
    if query.slug:
        stmt = stmt.where(Author.slug == query.slug)
    if query.name:
        stmt = stmt.where(func.lower(Author.name).like(like_pattern(query.name.lower()), escape="\\"))
    if query.topic:
        stmt = stmt.where(Author.id.in_(
            select(ShoutAuthor.author)
            .join(ShoutTopic, ShoutTopic.shout == ShoutAuthor.shout)
            .join(Topic, Topic.id == ShoutTopic.topic)
            .where(Topic.slug == query.topic)
        ))
    if query.window is not None:
        stmt = stmt.where(getattr(Author, query.window.column) > query.window.earliest)
    if query.after is not None:
        stmt = stmt.where(Author.created_at > query.after)
    if query.community is not None:
        stmt = stmt.where(Author.id.in_(select(CommunityAuthor.author).where(
            CommunityAuthor.community == query.community)))
    order = query.order
    if order == "shouts":
        counts = (select(ShoutAuthor.author.label("author"), func.count(distinct(ShoutAuthor.shout)).label("n"))
                  .join(Shout, Shout.id == ShoutAuthor.shout).where(is_listed())
                  .group_by(ShoutAuthor.author).subquery())
        stmt = stmt.outerjoin(counts, counts.c.author == Author.id).order_by(
            func.coalesce(counts.c.n, 0).desc())
    elif order == "followers":
        counts = (select(AuthorFollower.author.label("author"), func.count().label("n"))
                  .group_by(AuthorFollower.author).subquery())
        stmt = stmt.outerjoin(counts, counts.c.author == Author.id).order_by(
            func.coalesce(counts.c.n, 0).desc())
    elif order == "name":
        stmt = stmt.order_by(Author.name.asc())
    else:
        stmt = stmt.order_by(getattr(Author, order).desc())
    return stmt.order_by(Author.id)


async def load_authors_by(deps: Deps, query: AuthorsQuery) -> list[Any]:
    if query.limit == 0:
        return []
    stmt = _authors_query(query)

    async def ids() -> list[int]:
        return await first_column(deps.db, stmt.limit(query.limit).offset(query.offset))

    # membership moves its community's tag (triggers/rules.py `community_author`)
    tags = [keys.TAG_AUTHORS] if query.community is None else [keys.TAG_AUTHORS, keys.tag_community(query.community)]
    found = await deps.cache.cached_query(query.key, ids, ttl=deps.ttl_shouts, tags=tags)
    return await authors_of_ids(deps, found)


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
