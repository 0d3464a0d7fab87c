"""Lists that depend on who asks: the follow feed, what an author follows, what the viewer has not rated,
co-authored and discussed. Cached per viewer (`viewer:{id}:...`), tagged so that the viewer's own follows,
votes and comments invalidate them at once."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, or_, select

from auth.permissions import Viewer
from cache import keys
from orm import AuthorFollower, Reaction, Shout, ShoutAuthor, ShoutReactionsFollower, ShoutTopic, TopicFollower
from orm.reaction import COMMENT_KINDS, RATING_KINDS
from resolvers.access import require_viewer
from resolvers.author_reads import resolve_author_id
from resolvers.deps import Deps
from resolvers.shout_query import ShoutsQuery
from resolvers.shout_reads import filtered, ordered, shouts_of_ids


async def _viewer_list(deps: Deps, author_id: int, name: str, query: ShoutsQuery,
                       restrict: Any, tags: list[str], order: Any = None) -> list[dict[str, Any]]:
    if query.limit == 0:
        return []

    async def ids() -> list[int]:
        stmt: Select[Any] = filtered(select(Shout.id), query.filters).where(restrict)
        stmt = stmt.order_by(*order) if order is not None else ordered(stmt, query.order_by, query.order_by_desc)
        async with deps.db() as session:
            return list((await session.scalars(stmt.limit(query.limit).offset(query.offset))).all())

    key = keys.viewer_list(author_id, name, query.digest())
    found = await deps.cache.cached_query(key, ids, ttl=deps.ttl_shouts, tags=[keys.TAG_SHOUTS, *tags])
    return await shouts_of_ids(deps, found)


async def load_shouts_feed(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """Shouts by the authors and in the topics the viewer follows."""
    me = require_viewer(viewer).author_id
    followed_authors = select(AuthorFollower.author).where(AuthorFollower.follower == me)
    followed_topics = select(TopicFollower.topic).where(TopicFollower.follower == me)
    restrict = or_(
        Shout.id.in_(select(ShoutAuthor.shout).where(ShoutAuthor.author.in_(followed_authors))),
        Shout.id.in_(select(ShoutTopic.shout).where(ShoutTopic.topic.in_(followed_topics))),
    )
    return await _viewer_list(deps, me, "feed", query, restrict, [keys.tag_author_follows(me)])


async def load_shouts_followed_by(deps: Deps, viewer: Viewer | None, slug: str | None,
                                  query: ShoutsQuery) -> list[Any]:
    """Shouts whose discussion an author follows (the viewer, unless a slug names another author)."""
    author_id = await resolve_author_id(deps, slug=slug) if slug else require_viewer(viewer).author_id
    if author_id is None:
        return []
    restrict = Shout.id.in_(select(ShoutReactionsFollower.shout).where(
        ShoutReactionsFollower.follower == author_id, ShoutReactionsFollower.deleted_at.is_(None)))
    return await _viewer_list(deps, author_id, "followed", query, restrict,
                              [keys.tag_author_follows(author_id), keys.tag_entities("follow")])


async def load_shouts_unrated(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """Newest shouts the viewer has neither voted on nor written."""
    me = require_viewer(viewer).author_id
    rated = select(Reaction.shout).where(Reaction.created_by == me, Reaction.kind.in_(RATING_KINDS),
                                         Reaction.reply_to.is_(None), Reaction.deleted_at.is_(None))
    mine = select(ShoutAuthor.shout).where(ShoutAuthor.author == me)
    restrict = Shout.id.not_in(rated) & Shout.id.not_in(mine)
    return await _viewer_list(deps, me, "unrated", query, restrict, [keys.tag_reactions_by(me)],
                              order=(Shout.published_at.desc(), Shout.id.desc()))


async def load_shouts_coauthored(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """The viewer's shouts that have other authors too."""
    me = require_viewer(viewer).author_id
    shared = (select(ShoutAuthor.shout).group_by(ShoutAuthor.shout).having(func.count() > 1))
    restrict = Shout.id.in_(select(ShoutAuthor.shout).where(ShoutAuthor.author == me)) & Shout.id.in_(shared)
    return await _viewer_list(deps, me, "coauthored", query, restrict, [])


async def load_shouts_discussed(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """Shouts the viewer has commented on, most recently discussed first."""
    me = require_viewer(viewer).author_id
    commented = select(Reaction.shout).where(Reaction.created_by == me, Reaction.kind.in_(COMMENT_KINDS),
                                             Reaction.deleted_at.is_(None))
    return await _viewer_list(deps, me, "discussed", query.ordered_by_default("last_commented_at"),
                              Shout.id.in_(commented), [keys.tag_reactions_by(me)])


async def load_shouts_reacted(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """`load_shouts_by` with `filters.reacted`: shouts the viewer has reacted to (nothing for a guest)."""
    if viewer is None:
        return []
    me = viewer.author_id
    reacted = select(Reaction.shout).where(Reaction.created_by == me, Reaction.deleted_at.is_(None))
    return await _viewer_list(deps, me, "reacted", query, Shout.id.in_(reacted), [keys.tag_reactions_by(me)])
