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
from cache.threads import ORDERS, set_name
from orm import Author, Reaction, Shout, ShoutTopic, Topic
from orm.reaction import COMMENT_KINDS, RATING_KINDS
from orm.stats import is_listed, reaction_stats, vote_value
from resolvers.deps import Deps
from resolvers.errors import BadInput
from resolvers.paging import page
from resolvers.search import comment_condition, count_cold, search_text

DEFAULT_LIMIT = 50
DEFAULT_CHILDREN = 3
SORTS = ("newest", "oldest", "like", "dislike")


def _live_on_listed_shouts() -> Select[Any]:
    """Reactions that are not deleted, on shouts that are public."""
    return (select(Reaction).join(Shout, Shout.id == Reaction.shout)
            .where(Reaction.deleted_at.is_(None), is_listed()))


def _sorted(query: Select[Any], sort: str | None) -> Select[Any]:
    """The thread orders of cache/threads.py: ties go by id, and "dislike" is exactly "like" reversed."""
    sort = _checked(sort)
    if sort in ("like", "dislike"):
        votes = (select(Reaction.reply_to.label("target"), func.sum(vote_value()).label("score"))
                 .where(Reaction.deleted_at.is_(None), Reaction.kind.in_(RATING_KINDS))
                 .group_by(Reaction.reply_to).subquery())
        score = func.coalesce(votes.c.score, 0)
        query = query.outerjoin(votes, votes.c.target == Reaction.id)
        if sort == "like":
            return query.order_by(score.desc(), Reaction.id.desc())
        return query.order_by(score.asc(), Reaction.id.asc())
    if sort == "oldest":
        return query.order_by(Reaction.created_at.asc(), Reaction.id.asc())
    return query.order_by(Reaction.created_at.desc(), Reaction.id.desc())


def _checked(sort: str | None) -> str:
    sort = sort or "newest"
    if sort not in SORTS:
        raise BadInput(f"sort must be one of {', '.join(SORTS)}", field="sort")
    return sort


async def _with_stats(session: AsyncSession, rows: list[Reaction]) -> list[dict[str, Any]]:
    stats = await reaction_stats(session, [r.id for r in rows])
    return [{**r.dict(), "stat": stats[r.id]} for r in rows]


async def _cached_reactions(deps: Deps, key: str, tags: list[str], stmt: Select[Any], *,
                            search: str | None = None, client: str | None = None) -> list[dict[str, Any]]:
    async def query() -> list[dict[str, Any]]:
        if search is not None:
            await count_cold(deps, client)
        async with deps.db() as session:
            where = stmt if search is None else stmt.where(comment_condition(session, search))
            rows = list((await session.scalars(where)).all())
            return await _with_stats(session, rows)

    return list(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=tags))


async def load_reactions_by(deps: Deps, by: dict[str, Any], limit: int | None,
                            offset: int | None, *, client: str | None = None) -> list[dict[str, Any]]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    by = {k: v for k, v in (by or {}).items() if v is not None}
    query = _live_on_listed_shouts()
    tags = [keys.TAG_REACTIONS]
    shout_id: int | None = None
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
    search = search_text(deps, by["search"]) if by.get("search") else None
    if search == "":  # nothing in it to search for
        return []
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
    sort = _checked(by.get("sort"))
    key = keys.reactions_by(keys.digest(sorted((k, str(v)) for k, v in by.items()), limit, offset))
    if (thread := _thread_of(by, sort)) is not None:
        owner_kind, name = thread
        owner_id = int(by["reply_to"] if owner_kind == "comment" else shout_id or 0)
        order = ORDERS[sort]
        return await _cached_thread_page(deps, key, tags, owner_kind, owner_id, name, limit, offset, order[1],
                                         shout=shout_id)
    return await _cached_reactions(deps, key, tags, _sorted(query, sort).limit(limit).offset(offset), search=search,
                                   client=client)


def _thread_of(by: dict[str, Any], sort: str) -> tuple[str, str] | None:
    """The comment thread a filter reads, if it is one: the comments of a shout (newest or oldest
    first) or the replies to a comment, of exactly the thread kinds and nothing else filtered."""
    kinds = {str(k) for k in by.get("kinds") or ()}
    if set(by) - {"shout", "reply_to", "kinds", "sort"} or kinds != set(COMMENT_KINDS):
        return None
    if "reply_to" in by:
        return "comment", set_name("comment", ORDERS[sort][0])
    if "shout" in by and ORDERS[sort][0] == "":
        return "shout", "comments:all"
    return None


async def _cached_thread_page(deps: Deps, key: str, tags: list[str], owner_kind: str, owner_id: int, name: str,
                              limit: int, offset: int, newest_first: bool, *, shout: int | None = None,
                              children_limit: int = 0, children_offset: int = 0) -> list[dict[str, Any]]:
    """A page of a comment thread (cache/threads.py), cached whole like any list; `shout` keeps only
    the comments of that shout."""
    async def query() -> list[dict[str, Any]]:
        page_ids = await deps.threads.page(owner_kind, owner_id, name, offset, limit, newest_first)
        comments = await deps.threads.comments(page_ids.ids, children_limit=children_limit,
                                               children_offset=children_offset)
        return [c for c in comments if shout is None or c["shout"] == shout]

    return list(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=tags))


async def load_shout_comments(deps: Deps, shout: int, limit: int | None, offset: int | None) -> list[Any]:
    """Every comment of a shout (replies too), newest first."""
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    if limit == 0:
        return []
    return await _cached_thread_page(deps, keys.reactions_shout(shout, limit, offset, "comments"),
                                     [keys.tag_shout_reactions(shout)], "shout", shout, "comments:all",
                                     limit, offset, True)


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
    first `children_limit` replies, oldest first, read from the thread structures of cache/threads.py."""
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    children_limit, children_offset = page(children_limit, children_offset, default=DEFAULT_CHILDREN,
                                           maximum=deps.max_page_size)
    order, newest_first = ORDERS[_checked(sort)]
    if limit == 0:
        return []
    owner_kind, owner_id = ("shout", shout) if parent_id is None else ("comment", parent_id)
    key = keys.comments_branch(shout, parent_id, keys.digest(limit, offset, sort, children_limit,
                                                               children_offset))
    return await _cached_thread_page(deps, key, [keys.tag_shout_reactions(shout)], owner_kind, owner_id,
                                     set_name(owner_kind, order), limit, offset, newest_first, shout=shout,
                                     children_limit=children_limit, children_offset=children_offset)


async def reactions_by_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any] | None]:
    """Live reactions by id, in the order asked (a batch for DataLoaders; notifications use it)."""
    async with deps.db() as session:
        rows = list((await session.scalars(_live_on_listed_shouts().where(Reaction.id.in_(ids)))).all())
        found = {r["id"]: r for r in await _with_stats(session, rows)}
    return [found.get(i) for i in ids]
