"""Follow caches of seed 002 ("Работа со связями"): id arrays under the seed's keys.

`author:followers:{id}`, `author:follows-topics|follows-authors|follows-shouts:{id}`,
`topic:followers:{id}`, `topic:authors:{id}` hold JSON arrays of ids; callers turn them into entities
through the batch entity caches, so the entity data itself is stored once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from cache import keys
from cache.entities import SessionFactory
from cache.store import Cache
from orm import (
    AuthorFollower,
    CommunityFollower,
    Shout,
    ShoutAuthor,
    ShoutReactionsFollower,
    ShoutTopic,
    TopicFollower,
)
from orm.stats import is_listed


async def _ids(cache: Cache, db: SessionFactory, key: str, tag: str | list[str], statement: Any) -> list[int]:
    async def query() -> list[int]:
        async with db() as session:
            return list((await session.scalars(statement)).all())

    return list(await cache.cached_query(key, query, tags=[tag] if isinstance(tag, str) else tag))


async def get_cached_author_followers(author_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    stmt = (
        select(AuthorFollower.follower)
        .where(AuthorFollower.author == author_id)
        .order_by(AuthorFollower.created_at.desc(), AuthorFollower.follower)
    )
    return await _ids(cache, db, keys.author_followers(author_id),
                      keys.tag_followers_of("author", author_id), stmt)


async def get_cached_topic_followers(topic_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    stmt = (
        select(TopicFollower.follower)
        .where(TopicFollower.topic == topic_id)
        .order_by(TopicFollower.created_at.desc(), TopicFollower.follower)
    )
    return await _ids(cache, db, keys.topic_followers(topic_id),
                      keys.tag_followers_of("topic", topic_id), stmt)


async def get_cached_shout_followers(shout_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    stmt = (
        select(ShoutReactionsFollower.follower)
        .where(ShoutReactionsFollower.shout == shout_id, ShoutReactionsFollower.deleted_at.is_(None))
        .order_by(ShoutReactionsFollower.created_at.desc(), ShoutReactionsFollower.follower)
    )
    return await _ids(cache, db, keys.shout_followers(shout_id),
                      keys.tag_followers_of("shout", shout_id), stmt)


async def get_cached_topic_authors(topic_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    """Authors who published in the topic: membership changes with the shouts family."""
    stmt = (
        select(ShoutAuthor.author)
        .join(ShoutTopic, ShoutTopic.shout == ShoutAuthor.shout)
        .join(Shout, Shout.id == ShoutAuthor.shout)
        .where(ShoutTopic.topic == topic_id, is_listed())
        .group_by(ShoutAuthor.author)
        .order_by(ShoutAuthor.author)
    )
    return await _ids(cache, db, keys.topic_authors(topic_id), [keys.tag_topic(topic_id), keys.TAG_SHOUTS], stmt)


def _follows_query(kind: str, author_id: int) -> Any:
    if kind == "topic":
        return (select(TopicFollower.topic).where(TopicFollower.follower == author_id)
                .order_by(TopicFollower.topic))
    if kind == "author":
        return (select(AuthorFollower.author).where(AuthorFollower.follower == author_id)
                .order_by(AuthorFollower.author))
    if kind == "shout":
        return (select(ShoutReactionsFollower.shout)
                .where(ShoutReactionsFollower.follower == author_id,
                       ShoutReactionsFollower.deleted_at.is_(None))
                .order_by(ShoutReactionsFollower.shout))
    return (select(CommunityFollower.community).where(CommunityFollower.follower == author_id)
            .order_by(CommunityFollower.community))


_FOLLOWS_KEYS: dict[str, Callable[[int], str]] = {
    "topic": keys.author_follows_topics,
    "author": keys.author_follows_authors,
    "shout": keys.author_follows_shouts,
    "community": keys.author_follows_communities,
}


async def get_cached_follows(kind: str, author_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    """Ids of the topics / authors / shouts / communities an author follows."""
    return await _ids(cache, db, _FOLLOWS_KEYS[kind](author_id),
                      keys.tag_author_follows(author_id), _follows_query(kind, author_id))


async def get_cached_follower_topics(author_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    return await get_cached_follows("topic", author_id, cache=cache, db=db)


async def get_cached_follower_authors(author_id: int, *, cache: Cache, db: SessionFactory) -> list[int]:
    return await get_cached_follows("author", author_id, cache=cache, db=db)


async def cache_follows(follower_id: int, entity_type: str, entity_id: int, is_insert: bool = True,
                        *, cache: Cache) -> None:
    """A follow was added or removed (after its commit): both sides' lists and the counters in the
    two entities' stats become misses. Invalidation, not an in-place list edit, so that concurrent
    follows can never overwrite each other's update."""
    del is_insert  # both directions invalidate the same things
    await cache.invalidate_tags([
        keys.tag_author_follows(follower_id),
        keys.tag_followers_of(entity_type, entity_id),
        keys.tag_author(follower_id),
    ])
