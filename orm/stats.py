"""Batch statistics: real counts for a set of entity ids in one statement each.

Each function returns `{id: {metric: value}}` for exactly the ids asked, zeros filled in, built from one
UNION ALL query so a page of N entities costs one statement for its stats whatever N is. These are the
definitions the live counters (cache/live/counters.py, triggers/live_rules.py) keep current: a change here
needs the same change there.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import BindParameter, Select, bindparam, case, distinct, func, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orm.author import AuthorBookmark, AuthorFollower, AuthorRating
from orm.community import CommunityAuthor, CommunityFollower
from orm.reaction import COMMENT_KINDS, Reaction, ReactionKind
from orm.shout import Shout, ShoutAuthor, ShoutTopic, ShoutViews
from orm.topic import TopicFollower

LIKE = ReactionKind.LIKE.value
DISLIKE = ReactionKind.DISLIKE.value


def is_listed() -> Any:
    """The one definition of a public shout."""
    return Shout.published_at.is_not(None) & Shout.deleted_at.is_(None)


def vote_value(reaction: Any = Reaction) -> Any:
    """+1 for a like, -1 for a dislike, 0 for any other kind (`reaction`: the table or an alias)."""
    return case((reaction.kind == LIKE, 1), (reaction.kind == DISLIKE, -1), else_=0)


# The ids a batch statement is asked about (`{"ids": [...]}` when it runs): an expanding parameter, so that
# each statement is built once per process. A cold page runs several, and building a union of eleven selects
# (and its cache key) again on every call cost more Python than PostgreSQL spends answering it.
IDS: BindParameter[list[int]] = bindparam("ids", expanding=True)


async def _collect(
    session: AsyncSession, ids: Sequence[int], statement: Any, metrics: Sequence[str]
) -> dict[int, dict[str, int]]:
    result: dict[int, dict[str, int]] = {i: dict.fromkeys(metrics, 0) for i in ids}
    if not ids:
        return result
    rows = await session.execute(statement, {"ids": list(ids)})
    for metric, entity_id, value in rows:
        result[entity_id][metric] = int(value or 0)
    return result


def _metric(name: str, id_col: Any, value: Any) -> Select[Any]:
    return select(literal(name).label("metric"), id_col.label("id"), value.label("value"))


AUTHOR_METRICS = ("shouts", "followers", "authors", "topics", "comments", "rating", "rating_shouts",
                  "rating_comments", "coauthors", "replies_count", "viewed")


def _author_stats() -> Any:
    comment = aliased(Reaction)
    other = aliased(ShoutAuthor)
    return union_all(
        _metric("shouts", ShoutAuthor.author, func.count(distinct(ShoutAuthor.shout)))
        .join(Shout, Shout.id == ShoutAuthor.shout)
        .where(ShoutAuthor.author.in_(IDS), is_listed())
        .group_by(ShoutAuthor.author),
        _metric("followers", AuthorFollower.author, func.count())
        .where(AuthorFollower.author.in_(IDS))
        .group_by(AuthorFollower.author),
        _metric("authors", AuthorFollower.follower, func.count())
        .where(AuthorFollower.follower.in_(IDS))
        .group_by(AuthorFollower.follower),
        _metric("topics", TopicFollower.follower, func.count())
        .where(TopicFollower.follower.in_(IDS))
        .group_by(TopicFollower.follower),
        _metric("comments", Reaction.created_by, func.count())
        .where(Reaction.created_by.in_(IDS), Reaction.kind.in_(COMMENT_KINDS), Reaction.deleted_at.is_(None))
        .group_by(Reaction.created_by),
        _metric("rating_shouts", ShoutAuthor.author, func.sum(vote_value()))
        .join(Reaction, Reaction.shout == ShoutAuthor.shout)
        .where(
            ShoutAuthor.author.in_(IDS),
            Reaction.reply_to.is_(None),
            Reaction.kind.in_((LIKE, DISLIKE)),
            Reaction.deleted_at.is_(None),
        )
        .group_by(ShoutAuthor.author),
        _metric("rating_comments", comment.created_by, func.sum(vote_value()))
        .join(Reaction, Reaction.reply_to == comment.id)
        .where(
            comment.created_by.in_(IDS),
            Reaction.kind.in_((LIKE, DISLIKE)),
            Reaction.deleted_at.is_(None),
        )
        .group_by(comment.created_by),
        _metric("rating", AuthorRating.author, func.sum(case((AuthorRating.plus, 1), else_=-1)))
        .where(AuthorRating.author.in_(IDS))
        .group_by(AuthorRating.author),
        # Everyone who signs a public shout with the author.
        _metric("coauthors", ShoutAuthor.author, func.count(distinct(other.author)))
        .join(other, (other.shout == ShoutAuthor.shout) & (other.author != ShoutAuthor.author))
        .join(Shout, Shout.id == ShoutAuthor.shout)
        .where(ShoutAuthor.author.in_(IDS), is_listed())
        .group_by(ShoutAuthor.author),
        # Comments by others in reply to the author's comments.
        _metric("replies_count", comment.created_by, func.count())
        .join(Reaction, Reaction.reply_to == comment.id)
        .where(
            comment.created_by.in_(IDS),
            Reaction.created_by != comment.created_by,
            Reaction.kind.in_(COMMENT_KINDS),
            Reaction.deleted_at.is_(None),
        )
        .group_by(comment.created_by),
        # Views of the author's public shouts, as last written down from the view counters.
        _metric("viewed", ShoutAuthor.author, func.sum(ShoutViews.views))
        .join(ShoutViews, ShoutViews.shout == ShoutAuthor.shout)
        .join(Shout, Shout.id == ShoutAuthor.shout)
        .where(ShoutAuthor.author.in_(IDS), is_listed())
        .group_by(ShoutAuthor.author),
    )


_AUTHOR_STATS = _author_stats()


async def author_stats(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, int]]:
    return await _collect(session, ids, _AUTHOR_STATS, AUTHOR_METRICS)


_TOPIC_STATS = union_all(
    _metric("shouts", ShoutTopic.topic, func.count(distinct(ShoutTopic.shout)))
    .join(Shout, Shout.id == ShoutTopic.shout)
    .where(ShoutTopic.topic.in_(IDS), is_listed())
    .group_by(ShoutTopic.topic),
    _metric("followers", TopicFollower.topic, func.count())
    .where(TopicFollower.topic.in_(IDS))
    .group_by(TopicFollower.topic),
    _metric("authors", ShoutTopic.topic, func.count(distinct(ShoutAuthor.author)))
    .join(Shout, Shout.id == ShoutTopic.shout)
    .join(ShoutAuthor, ShoutAuthor.shout == ShoutTopic.shout)
    .where(ShoutTopic.topic.in_(IDS), is_listed())
    .group_by(ShoutTopic.topic),
    _metric("comments", ShoutTopic.topic, func.count(Reaction.id))
    .join(Reaction, Reaction.shout == ShoutTopic.shout)
    .where(ShoutTopic.topic.in_(IDS), Reaction.kind.in_(COMMENT_KINDS), Reaction.deleted_at.is_(None))
    .group_by(ShoutTopic.topic),
)


async def topic_stats(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, int]]:
    return await _collect(session, ids, _TOPIC_STATS, ("shouts", "followers", "authors", "comments"))


_COMMUNITY_STATS = union_all(
    _metric("shouts", Shout.community, func.count())
    .where(Shout.community.in_(IDS), is_listed())
    .group_by(Shout.community),
    _metric("followers", CommunityFollower.community, func.count())
    .where(CommunityFollower.community.in_(IDS))
    .group_by(CommunityFollower.community),
    _metric("authors", CommunityAuthor.community, func.count())
    .where(CommunityAuthor.community.in_(IDS))
    .group_by(CommunityAuthor.community),
)


async def community_stats(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, int]]:
    return await _collect(session, ids, _COMMUNITY_STATS, ("shouts", "followers", "authors"))


def shout_stat_columns() -> list[Any]:
    """Aggregates over `reaction` for one shout, used by shout stats and by ordering."""
    live = Reaction.deleted_at.is_(None)
    vote = live & Reaction.reply_to.is_(None) & Reaction.kind.in_((LIKE, DISLIKE))
    comment = live & Reaction.kind.in_(COMMENT_KINDS)
    return [
        func.coalesce(func.sum(case((vote, vote_value()), else_=0)), 0).label("rating"),
        func.coalesce(func.sum(case((comment, 1), else_=0)), 0).label("comments_count"),
        func.max(case((comment, Reaction.created_at))).label("last_commented_at"),
        func.coalesce(func.sum(case((vote & (Reaction.kind == LIKE), 1), else_=0)), 0).label("likes"),
        func.coalesce(func.sum(case((vote & (Reaction.kind == DISLIKE), 1), else_=0)), 0).label("dislikes"),
    ]


SHOUT_METRICS = ("rating", "likes", "dislikes", "comments", "bookmarks", "last_commented_at")
_SHOUT_STATS = select(Reaction.shout, *shout_stat_columns()).where(Reaction.shout.in_(IDS)).group_by(Reaction.shout)
_SHOUT_BOOKMARKS = (select(AuthorBookmark.shout, func.count()).where(AuthorBookmark.shout.in_(IDS))
                    .group_by(AuthorBookmark.shout))


async def shout_stats(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Votes, comments, the last comment's time and bookmarks of each shout (`last_commented_at` is
    None for a shout without comments)."""
    ids = list(ids)
    result: dict[int, dict[str, Any]] = {i: {**dict.fromkeys(SHOUT_METRICS, 0), "last_commented_at": None}
                                         for i in ids}
    if not ids:
        return result
    rows = await session.execute(_SHOUT_STATS, {"ids": ids})
    for shout_id, rating, comments, last_commented_at, likes, dislikes in rows:
        result[shout_id].update(rating=int(rating or 0), comments=int(comments or 0), likes=int(likes or 0),
                                dislikes=int(dislikes or 0), last_commented_at=last_commented_at)
    for shout_id, count in await session.execute(_SHOUT_BOOKMARKS, {"ids": ids}):
        result[shout_id]["bookmarks"] = int(count)
    return result


def _reply_sums(reply: Any = Reaction) -> tuple[Any, Any]:
    """A reaction's rating (the votes whose reply_to it is) and direct reply count, summed over `reply`,
    its live replies."""
    return (func.coalesce(func.sum(vote_value(reply)), 0),
            func.coalesce(func.sum(case((reply.kind.in_(COMMENT_KINDS), 1), else_=0)), 0))


@functools.cache
def reaction_stat_columns() -> tuple[Any, Any]:
    """`reaction_stats` as two columns of the statement that reads the reactions (correlated subqueries):
    a page of reactions and their stats in one statement. Built once: expressions are immutable, and
    building these two is a tenth of a cold page of reactions' time."""
    reply = aliased(Reaction)
    live_replies = (reply.reply_to == Reaction.id) & reply.deleted_at.is_(None)
    rating, replies = (select(total).where(live_replies).scalar_subquery() for total in _reply_sums(reply))
    return rating, replies


_REACTION_STATS = (select(Reaction.reply_to, *_reply_sums())
                   .where(Reaction.reply_to.in_(IDS), Reaction.deleted_at.is_(None)).group_by(Reaction.reply_to))


async def reaction_stats(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Rating (votes whose reply_to is the reaction) and direct reply count of each reaction."""
    ids = list(ids)
    result = {i: {"rating": 0, "comments_count": 0} for i in ids}
    if not ids:
        return result
    for parent, rating, replies in await session.execute(_REACTION_STATS, {"ids": ids}):
        result[parent] = {"rating": int(rating), "comments_count": int(replies)}
    return result


__all__ = [
    "AUTHOR_METRICS",
    "IDS",
    "SHOUT_METRICS",
    "author_stats",
    "community_stats",
    "is_listed",
    "reaction_stat_columns",
    "reaction_stats",
    "shout_stat_columns",
    "shout_stats",
    "topic_stats",
]
