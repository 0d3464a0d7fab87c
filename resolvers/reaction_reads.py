"""Reaction reads: filtered lists, a shout's comments and ratings, a comment's ratings, and comment
branches with their first replies.

Reactions are cached inside their list (each belongs to one shout), tagged with the shout's reaction
tag, or with the reactions family when a list spans shouts.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.orm import aliased

from cache import keys
from cache.entities import id_by_slug
from cache.live.threads import ORDERS, set_name
from orm import Author, Reaction, Shout, ShoutTopic, Topic
from orm.driver import Reads, SessionReads, reads
from orm.engine import read_session
from orm.reaction import COMMENT_KINDS, RATING_KINDS
from orm.stats import is_listed, reaction_stat_columns, vote_value
from resolvers.deps import Deps
from resolvers.paging import kept_page, page
from resolvers.reaction_query import DEFAULT_LIMIT, ReactionsQuery, checked_sort
from resolvers.search import comment_condition, count_cold, search_text

DEFAULT_CHILDREN = 3


# The labels of a reaction's stat columns in the statements that read them (`_with_stats`).
_VOTES_COLUMN, _REPLIES_COLUMN = "stat_rating", "stat_comments_count"


def _with_stat_columns(statement: Select[Any]) -> Select[Any]:
    votes, replies = reaction_stat_columns()
    return statement.add_columns(votes.label(_VOTES_COLUMN), replies.label(_REPLIES_COLUMN))


# Reactions that are not deleted, on shouts that are public (plain rows of their columns): built once, as
# every list of reactions starts from it (statements are immutable: each `.where` makes a new one).
_LIVE_ON_LISTED_SHOUTS = (select(*Reaction.__table__.c).join(Shout, Shout.id == Reaction.shout)
                          .where(Reaction.deleted_at.is_(None), is_listed()))

# The thread orders of cache/live/threads.py: ties go by id, and "dislike" is exactly "like" reversed. By votes, a
# reaction's score is the sum of the live votes replying to it: summed for the whole table (`_ALL_VOTES`) and
# joined, or summed only for the reactions the list selects (`_sorted`).
def _vote_sums(vote: Any, *narrowed: Any) -> Any:
    """The sum of the live votes (`vote`: the table or an alias) replying to each reaction, as `target`
    and `score`, for those `narrowed` selects."""
    return (select(vote.reply_to.label("target"), func.sum(vote_value(vote)).label("score"))
            .where(vote.deleted_at.is_(None), vote.kind.in_(RATING_KINDS), *narrowed)
            .group_by(vote.reply_to).subquery())


_ALL_VOTES = _vote_sums(Reaction)
_ORDERS = {
    "oldest": (Reaction.created_at.asc(), Reaction.id.asc()),
    "newest": (Reaction.created_at.desc(), Reaction.id.desc()),
}
# Filters that keep a list to one person's or one comment's reactions: its votes are summed for its own
# reactions: the whole table's sum reads every vote. Not for the other lists: a busy shout's reactions are
# slow so under a plan PostgreSQL kept for a quiet shout, and the lists that are not narrowed (all reactions,
# kinds, dates) read every vote either way and are slower so (bench/RESULTS.md, figures behind the code's
# rules).
_VOTES_OF_ITS_OWN = frozenset({"created_by", "author", "reply_to"})


def _sorted(query: Select[Any], sort: str | None, filters: tuple[str, ...]) -> Select[Any]:
    """`query` (reactions: `_LIVE_ON_LISTED_SHOUTS` with these filters) in a thread order."""
    sort = checked_sort(sort)
    if sort not in ("like", "dislike"):
        return query.order_by(*_ORDERS[sort])
    votes = _ALL_VOTES
    if _VOTES_OF_ITS_OWN.intersection(filters):
        vote = aliased(Reaction)
        votes = _vote_sums(vote, vote.reply_to.in_(query.with_only_columns(Reaction.id)))
    score = func.coalesce(votes.c.score, 0)
    order = (score.desc(), Reaction.id.desc()) if sort == "like" else (score.asc(), Reaction.id.asc())
    return query.outerjoin(votes, votes.c.target == Reaction.id).order_by(*order)


async def _with_stats(reading: Reads, stmt: Select[Any], params: dict[str, Any]) -> list[dict[str, Any]]:
    """The reactions `stmt` selects, each with its stat (`reaction_stat_columns`, the statement's last two
    columns, labelled `_VOTES_COLUMN` and `_REPLIES_COLUMN`): one statement."""
    found = []
    for row in await reading.rows(stmt, params):
        votes, answers = row.pop(_VOTES_COLUMN), row.pop(_REPLIES_COLUMN)
        row["stat"] = {"rating": int(votes), "comments_count": int(answers)}
        found.append(row)
    return found


async def _cached_reactions(deps: Deps, key: str, tags: list[str], stmt: Select[Any], *, params: dict[str, Any],
                            search: str | None = None, client: str | None = None) -> list[dict[str, Any]]:
    async def query() -> list[dict[str, Any]]:
        if search is None:  # a statement built once: on the driver where it can be (orm/driver.py)
            async with reads(deps.db) as reading:
                return await _with_stats(reading, stmt, params)
        await count_cold(deps, client)
        async with read_session(deps.db) as session:  # a statement of its own: through the session
            return await _with_stats(SessionReads(session), stmt.where(comment_condition(session, search)),
                                     params)

    return list(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=tags))


# The filters of `load_reactions_by`, each a condition on bound parameters named after the filter (a
# shout by its id, found from its slug first): a list's statement is put together once per set of filters
# and order (`_list_statement`), and each request only binds its values: keying a statement built per
# request for the compiled-statement cache is a tenth of the CPU of a page computed after a write.
_FILTERS: dict[str, Any] = {
    "shout": Reaction.shout == bindparam("shout"),
    "shouts": Shout.slug.in_(bindparam("shouts", expanding=True)),
    "kinds": Reaction.kind.in_(bindparam("kinds", expanding=True)),
    "reply_to": Reaction.reply_to == bindparam("reply_to"),
    "topic": Reaction.shout.in_(select(ShoutTopic.shout).join(Topic, Topic.id == ShoutTopic.topic)
                                .where(Topic.slug == bindparam("topic"))),
    "created_by": Reaction.created_by == bindparam("created_by"),
    "author": Reaction.created_by.in_(select(Author.id).where(Author.slug == bindparam("author"))),
    "after": Reaction.created_at >= bindparam("after"),
}
# Numbers filter whenever they are given (0 included); slugs and lists only when not empty.
_GIVEN_IF_SET = frozenset({"reply_to", "created_by", "after"})
# What a first page's kept plan reads right whatever the values (resolvers/paging.py): filters that are an
# equality on an indexed column (a shout's, a comment's, an author's reactions) or a lower bound on the date,
# in date order. Kinds, a topic's shouts and a list of shouts are not: the plan kept would guess how many
# reactions they select (for a kind with none, a walk of the whole table). Nor are the orders by votes,
# which join every vote's sum: their plans are no better kept, their cost is that join's whatever the plan.
_PLANNED_ONCE_FILTERS = frozenset({"shout", "reply_to", "created_by", "author", "after"})
_PLANNED_ONCE_ORDERS = frozenset({"newest", "oldest"})


@functools.cache  # bounded: at most 2^8 sets of filters (in `ReactionsQuery.filters` order), by 4 orders
def _list_statement(filters: tuple[str, ...], sort: str) -> Select[Any]:
    """The reactions with their stats for these filters (names of `_FILTERS`) in this order, with bound
    parameters for the filters' values; a page of it is `_list_page`'s."""
    return _with_stat_columns(_sorted(_LIVE_ON_LISTED_SHOUTS.where(*(_FILTERS[name] for name in filters)), sort,
                                      filters))


def _list_page(filters: tuple[str, ...], sort: str, limit: int, offset: int) -> tuple[Select[Any], dict[str, int]]:
    """A page of `_list_statement`, and the parameters of its bounds."""
    planned_once = sort in _PLANNED_ONCE_ORDERS and _PLANNED_ONCE_FILTERS.issuperset(filters)
    return kept_page(_list_statement(filters, sort), limit, offset, planned_once=planned_once)


async def load_reactions_by(deps: Deps, query: ReactionsQuery, *, client: str | None = None) -> list[dict[str, Any]]:
    tags = [keys.TAG_REACTIONS]
    shout_id = query.shout_id
    if query.shout:
        found = await id_by_slug("shout", query.shout, cache=deps.cache, db=deps.db)
        if found is None or shout_id not in (None, found):
            return []
        shout_id = found
    if shout_id is not None:
        tags = [keys.tag_shout_reactions(shout_id)]
    search = search_text(deps, query.search) if query.search else None
    if search == "":  # nothing in it to search for
        return []
    if query.limit == 0:
        return []
    key = keys.reactions_by(query.digest())
    if (thread := _thread_of(query)) is not None:
        owner_kind, name = thread
        owner_id = (query.reply_to or 0) if owner_kind == "comment" else (shout_id or 0)
        return await _cached_thread_page(deps, key, tags, owner_kind, owner_id, name, query.limit, query.offset,
                                         ORDERS[query.sort][1], shout=shout_id)
    filters = {name: list(value) if isinstance(value, tuple) else value for name, value in query.filters()
               if name in _FILTERS and (value or name in _GIVEN_IF_SET)}  # an empty slug or list filters nothing
    if shout_id is not None:
        filters["shout"] = shout_id
    stmt, bounds = _list_page(tuple(filters), query.sort, query.limit, query.offset)
    return await _cached_reactions(deps, key, tags, stmt, params={**filters, **bounds}, search=search,
                                   client=client)


def _thread_of(query: ReactionsQuery) -> tuple[str, str] | None:
    """The comment thread a query reads, if it is one: the comments of a shout (newest or oldest first)
    or the replies to a comment, of exactly the thread kinds and nothing else filtered."""
    if (not query.only_filters("shout", "shout_id", "reply_to", "kinds")
            or set(query.kinds or ()) != set(COMMENT_KINDS)):
        return None
    if query.reply_to is not None:
        return "comment", set_name("comment", ORDERS[query.sort][0])
    if (query.shout is not None or query.shout_id is not None) and ORDERS[query.sort][0] == "":
        return "shout", "comments:all"
    return None


async def _cached_thread_page(deps: Deps, key: str, tags: list[str], owner_kind: str, owner_id: int, name: str,
                              limit: int, offset: int, newest_first: bool, *, shout: int | None = None,
                              children_limit: int = 0, children_offset: int = 0) -> list[dict[str, Any]]:
    """A page of a comment thread (cache/live/threads.py), cached whole like any list; `shout` keeps only
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


# The votes on a shout and on a comment, newest first, and reactions by id: built once, like the lists above.
_NEWEST = (Reaction.created_at.desc(), Reaction.id.desc())
_SHOUT_RATINGS = _with_stat_columns(
    _LIVE_ON_LISTED_SHOUTS.where(Reaction.shout == bindparam("shout"), Reaction.kind.in_(RATING_KINDS),
                                 Reaction.reply_to.is_(None))
    .order_by(*_NEWEST))
_COMMENT_RATINGS = _with_stat_columns(
    _LIVE_ON_LISTED_SHOUTS.where(Reaction.reply_to == bindparam("comment"), Reaction.kind.in_(RATING_KINDS))
    .order_by(*_NEWEST))
_BY_IDS = _with_stat_columns(_LIVE_ON_LISTED_SHOUTS.where(Reaction.id.in_(bindparam("ids", expanding=True))))


async def load_shout_ratings(deps: Deps, shout: int, limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt, bounds = kept_page(_SHOUT_RATINGS, limit, offset, planned_once=True)  # by the shout's index
    return await _cached_reactions(deps, keys.reactions_shout(shout, limit, offset, "ratings"),
                                   [keys.tag_shout_reactions(shout)], stmt, params={"shout": shout, **bounds})


async def load_comment_ratings(deps: Deps, comment: int, limit: int | None, offset: int | None) -> list[Any]:
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt, bounds = kept_page(_COMMENT_RATINGS, limit, offset, planned_once=True)  # by the comment's index
    return await _cached_reactions(deps, keys.reactions_comment(comment, limit, offset), [keys.TAG_REACTIONS],
                                   stmt, params={"comment": comment, **bounds})


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
    first `children_limit` replies, oldest first, read from the thread structures of cache/live/threads.py."""
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    children_limit, children_offset = page(children_limit, children_offset, default=DEFAULT_CHILDREN,
                                           maximum=deps.max_page_size)
    order, newest_first = ORDERS[checked_sort(sort)]
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
    async with reads(deps.db) as reading:
        found = {r["id"]: r for r in await _with_stats(reading, _BY_IDS, {"ids": list(ids)})}
    return [found.get(i) for i in ids]
