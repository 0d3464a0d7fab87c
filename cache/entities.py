"""Entity caches (seed 002 "Кеширование сущностей"): authors, topics, communities and shouts by id and
by slug, read through the cache in batches so a page of N entities is one Redis round trip and, on
misses, a constant number of SQL statements.

Cached values are plain dicts of public fields only: no email, password hash, token or draft. They hold
no statistics either: counts are live counters (cache/live/counters.py), read only when a `stat` is asked for.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, bindparam, func, literal, select, union_all
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from cache import keys
from cache.composite import cached_composite
from cache.fills import Fill
from cache.store import MISSING, Cache
from orm import Author, Community, Shout, ShoutAuthor, ShoutTopic, Topic
from orm.driver import Reads, on_the_driver, reads
from orm.engine import SessionFactory, reads_only
from orm.stats import IDS, is_listed

AUTHOR_PUBLIC_FIELDS = (
    "id", "user", "slug", "name", "pic", "bio", "about", "links", "seo",
    "created_at", "last_seen", "updated_at", "deleted_at",
)


_AUTHOR_COLUMNS = [Author.__table__.c[name] for name in AUTHOR_PUBLIC_FIELDS]
# A shout's draft is private to its authors: never in the cache.
_SHOUT_COLUMNS = [column for column in Shout.__table__.c if column.name != "draft"]


def _by_ids(columns: Sequence[Any], id_column: Any, *conditions: Any) -> Select[Any]:
    """A statement reading rows by id (orm.stats.IDS), built once per process, as the stats' are: a cold
    page reads several, and building a statement again on every read cost it more than PostgreSQL's work."""
    return select(*columns).where(id_column.in_(IDS), *conditions)


_AUTHORS = _by_ids(_AUTHOR_COLUMNS, Author.id)
_TOPICS = _by_ids(list(Topic.__table__.c), Topic.id)
_COMMUNITIES = _by_ids(list(Community.__table__.c), Community.id)
_SHOUTS = _by_ids(_SHOUT_COLUMNS, Shout.id)
_LISTED_SHOUTS = _by_ids(_SHOUT_COLUMNS, Shout.id, is_listed())
# Authors and topics of a page of shouts in one statement: (shout, 'a', author) and (shout, 't', topic)
# rows, topics main-first.
_RELATED = union_all(
    select(ShoutAuthor.shout, literal("a").label("rel"), ShoutAuthor.author.label("other"),
           literal(False).label("main")).where(ShoutAuthor.shout.in_(IDS)),
    select(ShoutTopic.shout, literal("t"), ShoutTopic.topic, ShoutTopic.main).where(ShoutTopic.shout.in_(IDS)),
).subquery()
_SHOUT_RELATED = (select(_RELATED.c.shout, _RELATED.c.rel, _RELATED.c.other)
                  .order_by(_RELATED.c.shout, _RELATED.c.rel, _RELATED.c.main.desc(), _RELATED.c.other))
# On PostgreSQL, shouts with their authors and topics in one statement (arrays, in the order above): a cold
# page of shouts is a statement fewer, and a cold page of reactions reads its shouts in one.
_LISTED_SHOUTS_RELATED = _LISTED_SHOUTS.add_columns(
    select(func.array_agg(aggregate_order_by(ShoutAuthor.author, ShoutAuthor.author)))
    .where(ShoutAuthor.shout == Shout.id).scalar_subquery().label("author_ids"),
    select(func.array_agg(aggregate_order_by(ShoutTopic.topic, ShoutTopic.main.desc(), ShoutTopic.topic)))
    .where(ShoutTopic.shout == Shout.id).scalar_subquery().label("topic_ids"))
_SHOUTS_RELATED = _SHOUTS.add_columns(*_LISTED_SHOUTS_RELATED.selected_columns[-2:])


async def _rows(reads: Reads, statement: Select[Any], ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Plain rows by id, not ORM objects: their columns are all a cached entity holds, and a row costs a
    fraction of an instance to load."""
    return {row["id"]: row for row in await reads.rows(statement, {"ids": list(ids)})}


async def fetch_authors(reads: Reads, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    return await _rows(reads, _AUTHORS, ids)


async def fetch_topics(reads: Reads, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    return await _rows(reads, _TOPICS, ids)


async def fetch_communities(reads: Reads, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    return await _rows(reads, _COMMUNITIES, ids)


async def fetch_shouts(reads: Reads, ids: Sequence[int], *, listed_only: bool = True) -> dict[int, dict[str, Any]]:
    """Listed shouts only, unless asked otherwise: an unpublished or deleted shout is not public data
    (the cache only ever holds listed ones; authors read their own unpublished shouts uncached)."""
    if reads.postgres:
        rows = await _rows(reads, _LISTED_SHOUTS_RELATED if listed_only else _SHOUTS_RELATED, ids)
        for data in rows.values():
            data["author_ids"], data["topic_ids"] = data["author_ids"] or [], data["topic_ids"] or []
            data["main_topic_id"] = data["topic_ids"][0] if data["topic_ids"] else None  # main-first
        return rows
    rows = await _rows(reads, _LISTED_SHOUTS if listed_only else _SHOUTS, ids)
    found = list(rows)
    authors: dict[int, list[int]] = {i: [] for i in found}
    topics: dict[int, list[int]] = {i: [] for i in found}
    main_topic: dict[int, int | None] = dict.fromkeys(found)
    if found:
        for row in await reads.rows(_SHOUT_RELATED, {"ids": found}):
            shout, rel, other = row["shout"], row["rel"], row["other"]
            if rel == "a":
                authors[shout].append(other)
            else:
                topics[shout].append(other)
                if main_topic[shout] is None:  # rows come main-first, so this is the main topic
                    main_topic[shout] = other
    for shout_id, data in rows.items():
        data["author_ids"] = authors[shout_id]
        data["topic_ids"] = topics[shout_id]
        data["main_topic_id"] = main_topic[shout_id]
    return rows


Fetcher = Callable[[Reads, Sequence[int]], Awaitable[dict[int, dict[str, Any]]]]


@dataclass(frozen=True, slots=True)
class EntityKind:
    """How one kind of entity is keyed, tagged and loaded."""

    name: str
    key_of: Callable[[int], str]
    tag_of: Callable[[int], str]
    fetch: Fetcher

    def tags(self, entity_id: int) -> list[str]:
        return [self.tag_of(entity_id), keys.tag_entities(self.name)]


ENTITY_KINDS: dict[str, EntityKind] = {k.name: k for k in (
    EntityKind("author", keys.author_id, keys.tag_author, fetch_authors),
    EntityKind("topic", keys.topic_id, keys.tag_topic, fetch_topics),
    EntityKind("community", keys.community_id, keys.tag_community, fetch_communities),
    EntityKind("shout", keys.shout_id, keys.tag_shout, fetch_shouts),
)}


async def get_cached_entities(kind: str, ids: Sequence[int], *, cache: Cache, db: SessionFactory,
                              force: bool = False, store: Sequence[Fill] = ()) -> list[dict[str, Any] | None]:
    """Entities by id in one Redis round trip; misses (or all, with `force`) loaded in one batch.
    `store`: fills to send along with the read (`Cache.get_many`)."""
    entity = ENTITY_KINDS[kind]

    async def fetch_missing(indexes: list[int]) -> list[Any]:
        wanted = [ids[i] for i in indexes]
        async with reads(db) as reading:
            found = await entity.fetch(reading, wanted)
        return [found.get(i) for i in wanted]

    return await cache.cached_many([entity.key_of(i) for i in ids], [entity.tags(i) for i in ids],
                                   fetch_missing, force=force, store=store)


async def get_cached_authors(ids: Sequence[int], *, cache: Cache, db: SessionFactory) -> list[Any]:
    return await get_cached_entities("author", ids, cache=cache, db=db)


async def get_cached_topics(ids: Sequence[int], *, cache: Cache, db: SessionFactory) -> list[Any]:
    return await get_cached_entities("topic", ids, cache=cache, db=db)


async def get_cached_communities(ids: Sequence[int], *, cache: Cache, db: SessionFactory) -> list[Any]:
    return await get_cached_entities("community", ids, cache=cache, db=db)


async def get_cached_shouts(ids: Sequence[int], *, cache: Cache, db: SessionFactory) -> list[Any]:
    return await get_cached_entities("shout", ids, cache=cache, db=db)


async def get_cached_author(author_id: int, *, cache: Cache, db: SessionFactory) -> dict[str, Any] | None:
    author: dict[str, Any] | None = (await get_cached_authors([author_id], cache=cache, db=db))[0]
    return author


async def get_cached_topic(topic_id: int, *, cache: Cache, db: SessionFactory) -> dict[str, Any] | None:
    topic: dict[str, Any] | None = (await get_cached_topics([topic_id], cache=cache, db=db))[0]
    return topic


async def cache_author(author: dict[str, Any], *, cache: Cache) -> None:
    """Store an author dict computed now (write-through after a committed change)."""
    await cache.cache_data(keys.author_id(author["id"]), author, tags=ENTITY_KINDS["author"].tags(author["id"]))


async def cache_topic(topic: dict[str, Any], *, cache: Cache) -> None:
    await cache.cache_data(keys.topic_id(topic["id"]), topic, tags=ENTITY_KINDS["topic"].tags(topic["id"]))


# --- slug -> id (seed 000: `author:slug:{slug}` holds the author's id) ------------------------------

_LOOKUPS: dict[str, tuple[Any, Any, Callable[[str], str]]] = {
    "author": (Author.id, Author.slug, keys.author_slug),
    "author_user": (Author.id, Author.user, keys.author_user),
    "topic": (Topic.id, Topic.slug, keys.topic_slug),
    "community": (Community.id, Community.slug, keys.community_slug),
    "shout": (Shout.id, Shout.slug, keys.shout_slug),
}


# Each lookup's statement, built once (orm/driver.py keeps what it compiled by statement).
_ID_OF_SLUG = {lookup: select(id_column.label("id")).where(slug_column == bindparam("slug"))
               for lookup, (id_column, slug_column, _key) in _LOOKUPS.items()}


def _slug_lookup(lookup: str, slug: str) -> tuple[str, list[str], Callable[[Reads], Awaitable[int | None]]]:
    """The cache key and tags of a slug -> id lookup, and its query."""
    key_of = _LOOKUPS[lookup][2]

    async def query(reading: Reads) -> int | None:
        rows = await reading.rows(_ID_OF_SLUG[lookup], {"slug": slug})
        return rows[0]["id"] if rows else None

    return key_of(slug), [keys.tag_slug(lookup, slug)], query


async def id_by_slug(kind: str, slug: str, *, cache: Cache, db: SessionFactory) -> int | None:
    """The id behind a slug (or an author's `user`), cached; an unknown slug is cached as null under
    the slug's own tag, which the write side bumps when that slug is taken."""
    key, tags, query = _slug_lookup(kind, slug)

    async def run() -> int | None:
        async with reads(db) as reading:
            return await query(reading)

    # A point lookup on a unique column costs less than taking and releasing a fill lock.
    found: int | None = await cache.cached_query(key, run, tags=tags, lock=False)
    return found


async def get_cached_by_slug(lookup: str, slug: str, *, cache: Cache, db: SessionFactory) -> dict[str, Any] | None:
    """An entity by slug (`lookup` as in `id_by_slug`; an author also by `author_user`): warm, one round
    trip (a composite of the slug's id and the entity). On a cold cache both reads miss: the slug's fill
    rides along with the entity's read, and in a session (not on the driver) both share its connection."""
    key, tags, query = _slug_lookup(lookup, slug)
    return await cached_composite(cache, keys.composite(key),
                                  lambda: _by_slug(lookup, key, tags, query, cache=cache, db=db))


async def _by_slug(lookup: str, key: str, tags: list[str], query: Callable[[Reads], Awaitable[int | None]],
                   *, cache: Cache, db: SessionFactory) -> dict[str, Any] | None:
    kind = "author" if lookup == "author_user" else lookup
    async with shared_session(db) as shared:
        (found,), (stamp,) = await cache.get_many([key], [tags])
        fills: list[Fill] = []
        if found is MISSING:
            async with reads(shared) as reading:
                found = await query(reading)
            fills.append((key, found, stamp, None))
        if found is None:
            await cache.set_many(fills)
            return None
        return (await get_cached_entities(kind, [found], cache=cache, db=shared, store=fills))[0]


@contextlib.asynccontextmanager
async def shared_session(db: SessionFactory) -> AsyncIterator[SessionFactory]:
    """A session factory for a few reads in a row: every `shared()` yields the same session, opened on
    first use (a warm read opens none) and closed when the block ends. Reads only, in autocommit: under
    READ COMMITTED each statement sees its own snapshot anyway, so the transaction bought nothing. Reads
    that go on the driver share nothing (a statement takes a pooled connection and gives it back at once):
    `db` itself."""
    if on_the_driver(db):
        yield db
        return
    session: AsyncSession | None = None

    @contextlib.asynccontextmanager
    async def borrow() -> AsyncIterator[AsyncSession]:
        nonlocal session
        if session is None:
            session = await reads_only(await db().__aenter__())
        yield session

    try:
        yield borrow
    finally:
        if session is not None:
            await session.close()
