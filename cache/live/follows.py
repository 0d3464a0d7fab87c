"""The follow graph (seed 003): who follows an author, topic, community or shout (`user:{id}:fans`,
`topic:{id}:fans`, ...) and what an author follows (`user:{id}:following`, `user:{id}:following:topics`,
...): sorted sets of ids scored by follow time, kept current by the write side (triggers/live_rules.py).

A follow is one ZADD, O(log n) whatever the popularity, and no key holds an unbounded array: a set keeps
the newest `set_cap` members (seed 004), and a page that reaches past a full set is read from SQL.
Pages come newest first (ZREVRANGE; members are zero-padded ids, so equal times order by id as in SQL).
Counts come from the counters (`followers`, `authors`, `topics`), exact whatever the cap.

`topic:authors:{id}` (authors who published in a topic) is a cached list, not a follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select

from cache import keys
from cache.live.structures import LiveStore
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
from orm.engine import SessionFactory
from orm.stats import is_listed


@dataclass(frozen=True, slots=True)
class Edge:
    """One follow table: who follows (`follower`) what (`target`), since when."""

    model: Any
    target: Any
    soft_delete: bool = False

    def live(self) -> Any:
        return self.model.deleted_at.is_(None) if self.soft_delete else True


EDGES: dict[str, Edge] = {
    "author": Edge(AuthorFollower, AuthorFollower.author),
    "topic": Edge(TopicFollower, TopicFollower.topic),
    "community": Edge(CommunityFollower, CommunityFollower.community),
    "shout": Edge(ShoutReactionsFollower, ShoutReactionsFollower.shout, soft_delete=True),
}


def _sides(kind: str, name: str) -> tuple[Edge, Any, Any]:
    """The follow table behind a set and its (owner, member) columns: `fans` of a `kind` entity are
    its followers; `following:{target}` of an author are the targets it follows."""
    if name == "fans":
        edge = EDGES[kind]
        return edge, edge.target, edge.model.follower
    edge = EDGES[name.split(":", 1)[1]]
    return edge, edge.model.follower, edge.target


def _set_query(kind: str, name: str, owner_id: int) -> Select[Any]:
    """(member, follow time) of one set, newest first (ties by member, highest first, as in Redis)."""
    edge, owner, member = _sides(kind, name)
    return (select(member, edge.model.created_at).where(owner == owner_id, edge.live())
            .order_by(edge.model.created_at.desc(), member.desc()))


def fans_query(kind: str, entity_id: int) -> Select[Any]:
    return _set_query(kind, "fans", entity_id)


def following_query(kind: str, author_id: int) -> Select[Any]:
    return _set_query("author", f"following:{kind}", author_id)


async def _ids(live: LiveStore, db: SessionFactory, kind: str, entity_id: int, name: str,
               query: Select[Any], offset: int, limit: int | None) -> list[int]:
    """A page of a follow set: from Redis when the set is built and holds the page, else from SQL (and
    the set is built from the newest `set_cap` rows for the next reader)."""
    stop = -1 if limit is None else offset + limit - 1
    found, noted = await live.read(kind, name, [entity_id],
                                   lambda pipe, key: (pipe.zrevrange(key, offset, stop), pipe.zcard(key)),
                                   per_key=2)
    cap = live.set_cap
    if found[0] is not None:
        members, size = found[0]
        if size < cap or (limit is not None and offset + limit <= size):
            return [int(m) for m in members]
    async with db() as session:
        if entity_id in noted:  # not built: build the newest `cap` for the next reader
            rows = (await session.execute(query.limit(cap))).all()
            await live.build(kind, name, [(entity_id, [x for target, at in rows for x in (at, keys.member(target))])],
                             noted, structure="zset")
            if len(rows) < cap or (limit is not None and offset + limit <= len(rows)):
                newest = [target for target, _ in rows]
                return newest[offset:] if limit is None else newest[offset:offset + limit]
        page = query.offset(offset) if limit is None else query.offset(offset).limit(limit)
        return [target for target, _ in (await session.execute(page)).all()]


async def rebuild_sets(live: LiveStore, db: SessionFactory, kind: str, name: str, ids: list[int]) -> None:
    """Build the follow sets `name` of `ids` from SQL in one statement (the newest `set_cap` of each),
    each stored unless a write touched its entity meanwhile (the rebuild command)."""
    noted = await live.note(kind, name, ids)
    edge, owner, member = _sides(kind, name)
    position = func.row_number().over(partition_by=owner, order_by=(edge.model.created_at.desc(), member.desc()))
    ranked = (select(owner.label("owner"), member.label("member"), edge.model.created_at.label("at"),
                     position.label("position"))
              .where(owner.in_(ids), edge.live()).subquery())
    async with db() as session:
        rows = (await session.execute(select(ranked.c.owner, ranked.c.member, ranked.c.at)
                                      .where(ranked.c.position <= live.set_cap)
                                      .order_by(ranked.c.owner, ranked.c.position))).all()
    data: dict[int, list[Any]] = {i: [] for i in ids}
    for owner_id, member_id, at in rows:
        data[owner_id] += [at, keys.member(member_id)]
    await live.build(kind, name, list(data.items()), noted, structure="zset")


async def fan_ids(kind: str, entity_id: int, *, live: LiveStore, db: SessionFactory, cache: Cache,
                  offset: int = 0, limit: int | None = None) -> list[int]:
    """Who follows an author / topic / community / shout, newest first."""
    await cache.observe([keys.tag_followers_of(kind, entity_id)])
    return await _ids(live, db, kind, entity_id, "fans", fans_query(kind, entity_id), offset, limit)


async def following_ids(kind: str, author_id: int, *, live: LiveStore, db: SessionFactory, cache: Cache,
                        offset: int = 0, limit: int | None = None) -> list[int]:
    """The authors / topics / communities / shouts an author follows, newest first."""
    await cache.observe([keys.tag_author_follows(author_id)])
    return await _ids(live, db, "author", author_id, f"following:{kind}", following_query(kind, author_id),
                      offset, limit)


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

    async def query() -> list[int]:
        async with db() as session:
            return list((await session.scalars(stmt)).all())

    return list(await cache.cached_query(keys.topic_authors(topic_id), query,
                                         tags=[keys.tag_topic(topic_id), keys.TAG_SHOUTS]))
