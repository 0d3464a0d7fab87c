"""Topic reads: by slug, all, by community, by author, their followers and authors."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from cache import keys
from cache.composite import cached_composite
from cache.entities import get_cached_by_slug, get_cached_topics, id_by_slug
from cache.live.follows import fan_ids, get_cached_topic_authors
from orm import Shout, ShoutAuthor, ShoutTopic, Topic
from orm.driver import first_column
from orm.stats import is_listed
from resolvers.author_reads import authors_of_ids, resolve_author_id
from resolvers.deps import Deps
from resolvers.paging import page

DEFAULT_LIMIT = 100
# A community's topics without a limit: all of them, as Discours answers (it has no limit there), up to this
# many (a community has hundreds; the bound keeps one answer from growing without end).
COMMUNITY_TOPICS_CAP = 5000


async def topics_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    return [t for t in await get_cached_topics(ids, cache=deps.cache, db=deps.db) if t is not None]


async def get_topic(deps: Deps, slug: str) -> dict[str, Any] | None:
    return await get_cached_by_slug("topic", slug, cache=deps.cache, db=deps.db) if slug else None


# Built once: on the driver a statement stays compiled for as long as it lives (orm/driver.py).
_EVERY_TOPIC = select(Topic.id).order_by(Topic.id)


async def get_topics_all(deps: Deps) -> list[dict[str, Any]]:
    async def query() -> list[int]:
        return await first_column(deps.db, _EVERY_TOPIC)

    async def every_topic() -> list[dict[str, Any]]:
        return await topics_of_ids(deps, await deps.cache.cached_query(keys.topics_all(), query,
                                                                       tags=[keys.TAG_TOPICS]))

    return await cached_composite(deps.cache, keys.composite(keys.topics_all()), every_topic)


async def get_topics_by_community(deps: Deps, community_id: int, limit: int | None,
                                  offset: int | None) -> list[dict[str, Any]]:
    limit, offset = page(limit, offset, default=COMMUNITY_TOPICS_CAP, maximum=COMMUNITY_TOPICS_CAP)

    async def query() -> list[int]:
        stmt = (select(Topic.id).where(Topic.community == community_id)
                .order_by(Topic.title, Topic.id).limit(limit).offset(offset))
        return await first_column(deps.db, stmt)

    ids = await deps.cache.cached_query(keys.topics_stats(limit, offset, "title", community_id), query,
                                        tags=[keys.TAG_TOPICS])
    return await topics_of_ids(deps, ids)


async def get_topics_by_author(deps: Deps, slug: str | None = None, user: str | None = None,
                               author_id: int | None = None) -> list[dict[str, Any]]:
    """Topics the author has published in."""
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return []

    async def query() -> list[int]:
        stmt = (select(ShoutTopic.topic)
                .join(ShoutAuthor, ShoutAuthor.shout == ShoutTopic.shout)
                .join(Shout, Shout.id == ShoutTopic.shout)
                .where(ShoutAuthor.author == resolved, is_listed())
                .group_by(ShoutTopic.topic).order_by(ShoutTopic.topic))
        return await first_column(deps.db, stmt)

    ids = await deps.cache.cached_query(keys.topics_by_author(resolved), query,
                                        tags=[keys.TAG_SHOUTS, keys.TAG_TOPICS])
    return await topics_of_ids(deps, ids)


async def get_topic_followers(deps: Deps, slug: str | None) -> list[dict[str, Any]]:
    topic_id = await id_by_slug("topic", slug, cache=deps.cache, db=deps.db) if slug else None
    if topic_id is None:
        return []
    return await authors_of_ids(deps, await fan_ids("topic", topic_id, live=deps.live, db=deps.db, cache=deps.cache))


async def get_topic_authors(deps: Deps, slug: str | None) -> list[dict[str, Any]]:
    topic_id = await id_by_slug("topic", slug, cache=deps.cache, db=deps.db) if slug else None
    if topic_id is None:
        return []
    return await authors_of_ids(deps, await get_cached_topic_authors(topic_id, cache=deps.cache, db=deps.db))
