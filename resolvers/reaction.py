"""Reaction reads: filtered lists, a shout's comments and ratings, a comment's ratings, and comment
branches with their first replies.

Reactions are cached inside their list (each belongs to one shout), tagged with the shout's reaction
tag, or with the reactions family when a list spans shouts.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from cache import keys
from cache.entities import id_by_slug
from orm import Author, Reaction, Shout, ShoutTopic, Topic
from orm.reaction import COMMENT_KINDS, RATING_KINDS
from orm.stats import is_listed, reaction_stats, vote_value
from resolvers.deps import Deps, like_pattern, page
from resolvers.errors import BadInput

DEFAULT_LIMIT = 50
DEFAULT_CHILDREN = 3
SORTS = ("newest", "oldest", "like", "dislike")


def _live_on_listed_shouts() -> Select[Any]:
    """Reactions that are not deleted, on shouts that are public."""
    return (select(Reaction).join(Shout, Shout.id == Reaction.shout)
            .where(Reaction.deleted_at.is_(None), is_listed()))


def _sorted(query: Select[Any], sort: str | None) -> Select[Any]:
    sort = sort or "newest"
    if sort not in SORTS:
        raise BadInput(f"sort must be one of {', '.join(SORTS)}", field="sort")
    if sort in ("like", "dislike"):
        votes = (select(Reaction.reply_to.label("target"), func.sum(vote_value()).label("score"))
                 .where(Reaction.deleted_at.is_(None), Reaction.kind.in_(RATING_KINDS))
                 .group_by(Reaction.reply_to).subquery())
        score = func.coalesce(votes.c.score, 0)
        query = query.outerjoin(votes, votes.c.target == Reaction.id)
        return query.order_by(score.desc() if sort == "like" else score.asc(), Reaction.created_at.desc())
    if sort == "oldest":
        return query.order_by(Reaction.created_at.asc(), Reaction.id.asc())
    return query.order_by(Reaction.created_at.desc(), Reaction.id.desc())


async def _with_stats(session: AsyncSession, rows: list[Reaction]) -> list[dict[str, Any]]:
    stats = await reaction_stats(session, [r.id for r in rows])
    return [{**r.dict(), "stat": stats[r.id]} for r in rows]


async def _cached_reactions(deps: Deps, key: str, tags: list[str], stmt: Select[Any]) -> list[dict[str, Any]]:
    async def query() -> list[dict[str, Any]]:
        async with deps.db() as session:
            rows = list((await session.scalars(stmt)).all())
            return await _with_stats(session, rows)

    return list(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=tags))


async def load_reactions_by(deps: Deps, by: dict[str, Any], limit: int | None,
                            offset: int | None) -> list[dict[str, Any]]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    by = {k: v for k, v in (by or {}).items() if v is not None}
    query = _live_on_listed_shouts()
    tags = [keys.TAG_REACTIONS]
    if slug := by.get("shout"):
        shout_id = await id_by_slug("shout", slug, cache=deps.cache, db=deps.db)
        if shout_id is None:
            return []
        query = query.where(Reaction.shout == shout_id)
        tags = [keys.tag_shout_reactions(shout_id)]
    if slugs := by.get("shouts"):
        query = query.where(Shout.slug.in_(slugs))
    if kinds := by.get("kinds"):
        query = query.where(Reaction.kind.in_([str(k) for k in kinds]))
    if (reply_to := by.get("reply_to")) is not None:
        query = query.where(Reaction.reply_to == reply_to)
    if search := by.get("search"):
        query = query.where(func.lower(Reaction.body).like(like_pattern(search.lower()), escape="\\"))
    if topic := by.get("topic"):
        query = query.where(Reaction.shout.in_(
            select(ShoutTopic.shout).join(Topic, Topic.id == ShoutTopic.topic).where(Topic.slug == topic)))
    if (created_by := by.get("created_by")) is not None:
        query = query.where(Reaction.created_by == created_by)
    if author := by.get("author"):
        query = query.where(Reaction.created_by.in_(select(Author.id).where(Author.slug == author)))
    if (after := by.get("after")) is not None:
        query = query.where(Reaction.created_at >= after)
    if limit == 0:
        return []
    stmt = _sorted(query, by.get("sort")).limit(limit).offset(offset)
    key = keys.reactions_by(keys.digest(sorted((k, str(v)) for k, v in by.items()), limit, offset))
    return await _cached_reactions(deps, key, tags, stmt)


async def load_shout_comments(deps: Deps, shout: int, limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt = (_live_on_listed_shouts().where(Reaction.shout == shout, Reaction.kind.in_(COMMENT_KINDS))
            .order_by(Reaction.created_at.desc(), Reaction.id.desc()).limit(limit).offset(offset))
    return await _cached_reactions(deps, keys.reactions_shout(shout, limit, offset, "comments"),
                                   [keys.tag_shout_reactions(shout)], stmt)


async def load_shout_ratings(deps: Deps, shout: int, limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt = (_live_on_listed_shouts()
            .where(Reaction.shout == shout, Reaction.kind.in_(RATING_KINDS), Reaction.reply_to.is_(None))
            .order_by(Reaction.created_at.desc(), Reaction.id.desc()).limit(limit).offset(offset))
    return await _cached_reactions(deps, keys.reactions_shout(shout, limit, offset, "ratings"),
                                   [keys.tag_shout_reactions(shout)], stmt)


async def load_comment_ratings(deps: Deps, comment: int, limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt = (_live_on_listed_shouts().where(Reaction.reply_to == comment, Reaction.kind.in_(RATING_KINDS))
            .order_by(Reaction.created_at.desc(), Reaction.id.desc()).limit(limit).offset(offset))
    return await _cached_reactions(deps, keys.reactions_comment(comment, limit, offset),
                                   [keys.TAG_REACTIONS], stmt)


async def load_comments_branch(
    deps: Deps,
    shout: int,
    parent_id: int | None = None,
    limit: int | None = None,
    offset: int | None = None,
    sort: str | None = None,
    children_limit: int | None = None,
    children_offset: int | None = None,
) -> list[dict[str, Any]]:
    """One level of a comment thread (top level, or the replies of `parent_id`), each comment with its
    first `children_limit` replies, oldest first. Three statements whatever the page size."""
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    children_limit, children_offset = page(children_limit, children_offset, default=DEFAULT_CHILDREN,
                                           maximum=deps.max_page_size)
    level = (Reaction.reply_to == parent_id) if parent_id is not None else Reaction.reply_to.is_(None)
    stmt = (_sorted(_live_on_listed_shouts().where(Reaction.shout == shout, level,
                                                   Reaction.kind.in_(COMMENT_KINDS)), sort)
            .limit(limit).offset(offset))

    async def query() -> list[dict[str, Any]]:
        async with deps.db() as session:
            comments = await _with_stats(session, list((await session.scalars(stmt)).all()))
            replies = await _first_replies(session, [c["id"] for c in comments],
                                           children_limit, children_offset)
        for comment in comments:
            comment["first_replies"] = replies.get(comment["id"], [])
        return comments

    key = keys.comments_branch(shout, parent_id, keys.digest(limit, offset, sort, children_limit,
                                                               children_offset))
    return list(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts,
                                              tags=[keys.tag_shout_reactions(shout)]))


async def _first_replies(session: AsyncSession, parents: list[int], limit: int,
                         offset: int) -> dict[int, list[dict[str, Any]]]:
    if not parents or limit == 0:
        return {}
    position = func.row_number().over(
        partition_by=Reaction.reply_to, order_by=(Reaction.created_at.asc(), Reaction.id.asc())
    ).label("position")
    ranked = (select(Reaction.id, position)
              .where(Reaction.reply_to.in_(parents), Reaction.deleted_at.is_(None),
                     Reaction.kind.in_(COMMENT_KINDS))
              .subquery())
    rows = (await session.scalars(
        select(Reaction).join(ranked, ranked.c.id == Reaction.id)
        .where(ranked.c.position > offset, ranked.c.position <= offset + limit)
        .order_by(Reaction.reply_to, ranked.c.position)
    )).all()
    result: dict[int, list[dict[str, Any]]] = {}
    for reply in await _with_stats(session, list(rows)):
        result.setdefault(reply["reply_to"], []).append(reply)
    return result


async def reactions_by_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any] | None]:
    """Live reactions by id, in the order asked (a batch for DataLoaders; notifications use it)."""
    async with deps.db() as session:
        rows = list((await session.scalars(_live_on_listed_shouts().where(Reaction.id.in_(ids)))).all())
        found = {r["id"]: r for r in await _with_stats(session, rows)}
    return [found.get(i) for i in ids]
