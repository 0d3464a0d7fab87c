"""For each model: what a change of one row does to the live structures (cache/live/structures.py): counter deltas,
follow-set members, and drops of structures whose new value is no simple delta (rebuilt on next read).

A rule compares the row's contribution before and after the change and records the difference, so an
insert, an update (a soft delete, an undelete, a flipped vote) and a delete are one piece of code. The
contributions are the definitions of orm/stats.py, written the other way round: change them together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection

from cache import keys
from cache.live.boards import BOARD_OF_METRIC, SHOUT_BOARDS, WEEKLY_BOARDS
from cache.live.structures import LiveOps
from orm import (
    Author,
    AuthorBookmark,
    AuthorFollower,
    AuthorRating,
    Community,
    CommunityAuthor,
    CommunityFollower,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutReactionsFollower,
    ShoutTopic,
    Topic,
    TopicFollower,
)
from orm.reaction import COMMENT_KINDS, RATING_KINDS, ReactionKind
from triggers.related import reaction_author, shout_authors, shout_listed, shout_topics

Event = Literal["insert", "update", "delete"]
LiveRule = Callable[[Any, Connection, LiveOps, Event], None]
Key = tuple[str, int, str]  # (entity kind, entity id, metric)


def _states(target: Any, attributes: tuple[str, ...], event: Event) -> tuple[dict[str, Any] | None,
                                                                              dict[str, Any] | None]:
    """The row's relevant values before and after this flush (None where the row does not exist)."""
    now = {name: getattr(target, name) for name in attributes}
    if event == "insert":
        return None, now
    if event == "delete":
        return now, None
    before = {}
    for name in attributes:
        history = inspect(target).attrs[name].history
        before[name] = history.deleted[0] if history.deleted else now[name]
    return before, now


def _record_difference(ops: LiveOps, before: Counter[Key], after: Counter[Key]) -> None:
    """Counter deltas, and the same moves on the leaderboards those counters rank (cache/live/boards.py)."""
    for kind, entity_id, metric in dict.fromkeys([*before, *after]):
        delta = after[(kind, entity_id, metric)] - before[(kind, entity_id, metric)]
        ops.incr(kind, entity_id, **{metric: delta})
        if (board := BOARD_OF_METRIC.get((kind, metric))) is not None:
            ops.rank(board, delta, entity_id)


def _weekly_moves(contribution: Counter[Key], state: dict[str, Any] | None) -> Counter[tuple[str, int]]:
    """What a reaction in this state adds to the weekly edition of each board, for the ISO week of its
    creation: (weekly board, shout) -> score."""
    out: Counter[tuple[str, int]] = Counter()
    for (kind, entity_id, metric), value in contribution.items():
        board = BOARD_OF_METRIC.get((kind, metric))
        if state is not None and board in WEEKLY_BOARDS:
            out[(keys.weekly_board(board, keys.week_of(state["created_at"])), entity_id)] += value
    return out


# --- reactions: votes and comments --------------------------------------------------------------------

_REACTION = ("kind", "shout", "reply_to", "created_by", "created_at", "deleted_at")


def _reaction_contribution(state: dict[str, Any] | None, conn: Connection) -> Counter[Key]:
    out: Counter[Key] = Counter()
    if state is None or state["deleted_at"] is not None:
        return out
    kind, shout = state["kind"], state["shout"]
    if kind in RATING_KINDS:
        sign = 1 if kind == ReactionKind.LIKE.value else -1
        if state["reply_to"] is None:
            out[("shout", shout, "rating")] += sign
            out[("shout", shout, "likes" if sign > 0 else "dislikes")] += 1
            for author in shout_authors(conn, shout):
                out[("author", author, "rating_shouts")] += sign
        else:
            owner = reaction_author(conn, state["reply_to"])
            if owner is not None:
                out[("author", owner, "rating_comments")] += sign
    elif kind in COMMENT_KINDS:
        out[("shout", shout, "comments")] += 1
        out[("author", state["created_by"], "comments")] += 1
        if state["reply_to"] is not None:
            owner = reaction_author(conn, state["reply_to"])
            if owner is not None and owner != state["created_by"]:
                out[("author", owner, "replies_count")] += 1
        for topic in shout_topics(conn, shout):
            out[("topic", topic, "comments")] += 1
    return out


def _is_live_comment(state: dict[str, Any] | None) -> bool:
    return state is not None and state["deleted_at"] is None and state["kind"] in COMMENT_KINDS


def reaction(r: Reaction, conn: Connection, ops: LiveOps, event: Event) -> None:
    before, after = _states(r, _REACTION, event)
    if event != "insert" and any(state["kind"] in COMMENT_KINDS for state in (before, after) if state):
        # An edit or a deletion of a comment: its HASH is read again. A vote has no HASH, and dropping
        # one would still leave a meta key behind per replaced vote.
        ops.drop("comment", r.id, "comment")
    if before == after:
        return  # an edited body: no number moves
    was, now = _reaction_contribution(before, conn), _reaction_contribution(after, conn)
    _record_difference(ops, was, now)
    moves = _weekly_moves(now, after)
    moves.subtract(_weekly_moves(was, before))
    for (board, shout_id), delta in moves.items():
        ops.rank(board, delta, shout_id)
    if _is_live_comment(before) and not _is_live_comment(after):
        ops.drop("shout", r.shout)  # the last comment time may go back: recount
    elif _is_live_comment(after) and not _is_live_comment(before):
        ops.maximum("shout", r.shout, "last_commented_at", r.created_at)
    _thread_membership(r, before, after, conn, ops, event)
    _comment_votes(before, after, conn, ops)


# --- comment threads (cache/live/threads.py) ---------------------------------------------------------------

def _thread_sets(state: dict[str, Any] | None) -> set[tuple[str, int, str]]:
    """The thread sets a comment in this state belongs to: (owner kind, owner id, structure name)."""
    if not _is_live_comment(state):
        return set()
    assert state is not None
    shout, parent = state["shout"], state["reply_to"]
    if parent is None:
        return {("shout", shout, "comments"), ("shout", shout, "comments:best"), ("shout", shout, "comments:all")}
    return {("comment", parent, "replies"), ("comment", parent, "replies:best"), ("shout", shout, "comments:all")}


def _thread_membership(r: Reaction, before: dict[str, Any] | None, after: dict[str, Any] | None,
                       conn: Connection, ops: LiveOps, event: Event) -> None:
    was, now = _thread_sets(before), _thread_sets(after)
    for owner_kind, owner_id, name in was - now:
        ops.zdel(owner_kind, owner_id, name, r.id)
    listed = bool(now) and shout_listed(conn, r.shout)
    for owner_kind, owner_id, name in now - was:
        best = name.endswith(":best")
        if not listed or (best and event != "insert"):
            ops.drop(owner_kind, owner_id, name)  # an undeleted comment may have votes: recount
        else:
            ops.zput(owner_kind, owner_id, name, 0 if best else r.created_at, r.id)
    if event == "delete" and r.kind in COMMENT_KINDS:
        # Its replies now reply to nothing (ON DELETE SET NULL): they join the top level.
        for name in ("comments", "comments:best"):
            ops.drop("shout", r.shout, name)
        for name in ("replies", "replies:best"):
            ops.drop("comment", r.id, name)


def _vote(state: dict[str, Any] | None) -> tuple[int, int] | None:
    """(comment, +1 or -1) for a live vote on a comment."""
    if state is None or state["deleted_at"] is not None or state["kind"] not in RATING_KINDS:
        return None
    if state["reply_to"] is None:
        return None
    return state["reply_to"], 1 if state["kind"] == ReactionKind.LIKE.value else -1


def _comment_votes(before: dict[str, Any] | None, after: dict[str, Any] | None, conn: Connection,
                   ops: LiveOps) -> None:
    """A vote on a comment moves its `rating` and its place in the `:best` set of its thread."""
    deltas: Counter[int] = Counter()
    for state, sign in ((before, -1), (after, 1)):
        if (vote := _vote(state)) is not None:
            deltas[vote[0]] += sign * vote[1]
    for target, delta in deltas.items():
        if not delta:
            continue
        ops.hincr("comment", target, "comment", {"rating": delta})
        row = conn.execute(select(Reaction.shout, Reaction.reply_to).where(Reaction.id == target)).first()
        if row is not None:
            owner = ("shout", row.shout, "comments:best") if row.reply_to is None else \
                ("comment", row.reply_to, "replies:best")
            ops.zincr(owner[0], owner[1], owner[2], delta, target)


# --- follows: counters on both sides and the follow graph ---------------------------------------------

def _following(state: dict[str, Any] | None, soft_delete: bool) -> bool:
    return state is not None and (not soft_delete or state["deleted_at"] is None)


def _follow(target_kind: str, column: str, target_metric: str | None, follower_metric: str | None,
            f: Any, _conn: Connection, ops: LiveOps, event: Event, *, soft_delete: bool = False) -> None:
    """`follower` follows the row's `column`: the target's fans set and the follower's following set
    (scored by follow time), and the counters named on each side. Bound to each follow model in
    LIVE_RULES (a partial, not a closure: what runs is this function, at every call)."""
    before, after = _states(f, ("deleted_at",) if soft_delete else (), event)
    was, now = _following(before, soft_delete), _following(after, soft_delete)
    if was == now:
        return
    target, follower, sign = getattr(f, column), f.follower, 1 if now else -1
    if target_metric:
        ops.incr(target_kind, target, **{target_metric: sign})
    if follower_metric:
        ops.incr("author", follower, **{follower_metric: sign})
    if now:
        ops.zadd(target_kind, target, "fans", f.created_at, follower)
        ops.zadd("author", follower, f"following:{target_kind}", f.created_at, target)
    else:
        ops.zrem(target_kind, target, "fans", follower)
        ops.zrem("author", follower, f"following:{target_kind}", target)


# --- simple counters ----------------------------------------------------------------------------------

def author_rating(r: AuthorRating, _conn: Connection, ops: LiveOps, event: Event) -> None:
    before, after = _states(r, ("plus",), event)

    def karma(state: dict[str, Any] | None) -> Counter[Key]:
        return Counter() if state is None else Counter({("author", r.author, "rating"): 1 if state["plus"] else -1})

    _record_difference(ops, karma(before), karma(after))


def _presence(kind: str, column: str, metric: str, row: Any, _conn: Connection, ops: LiveOps, event: Event) -> None:
    """A row whose existence adds one to `metric` of the entity its `column` names."""
    if event != "update":
        ops.incr(kind, getattr(row, column), **{metric: 1 if event == "insert" else -1})


# --- publication: counts that are no simple delta are dropped and recounted on their next read ----------

_SHOUT = ("published_at", "deleted_at", "community")


def _listed(state: dict[str, Any] | None) -> bool:
    return state is not None and state["published_at"] is not None and state["deleted_at"] is None


def shout(s: Shout, conn: Connection, ops: LiveOps, event: Event) -> None:
    before, after = _states(s, _SHOUT, event)
    if _listed(before) == _listed(after) and (before or {}).get("community") == (after or {}).get("community"):
        return
    for state in (before, after):
        if state is not None:
            ops.drop("community", state["community"])
    for name in ("comments", "comments:best", "comments:all"):  # threads hold public shouts only
        ops.drop("shout", s.id, name)
    for board in SHOUT_BOARDS:  # a shout joins or leaves the boards: built again
        ops.drop_board(board)
    ops.lose("weekly")  # and every weekly edition (they list every public shout)
    for parent in conn.scalars(select(Reaction.reply_to).distinct()
                               .where(Reaction.shout == s.id, Reaction.reply_to.is_not(None))):
        for name in ("replies", "replies:best"):
            ops.drop("comment", parent, name)
    for author in shout_authors(conn, s.id):
        ops.drop("author", author)
    for topic in shout_topics(conn, s.id):
        ops.drop("topic", topic)
    if event == "delete":
        ops.drop("shout", s.id)


def shout_author(sa: ShoutAuthor, conn: Connection, ops: LiveOps, event: Event) -> None:
    if event == "update":
        return
    ops.drop("author", sa.author)  # its shouts and the rating of its shouts
    for other in shout_authors(conn, sa.shout):
        ops.drop("author", other)  # their co-authors
    for topic in shout_topics(conn, sa.shout):
        ops.drop("topic", topic)  # its distinct authors


def shout_topic(st: ShoutTopic, _conn: Connection, ops: LiveOps, event: Event) -> None:
    if event != "update":
        ops.drop("topic", st.topic)


def _gone(kind: str, names: tuple[str, ...], row: Any, _conn: Connection, ops: LiveOps, event: Event) -> None:
    """A deleted entity's count, fans and the sets named after it go."""
    if event == "delete":
        for name in ("count", "fans", *names):
            ops.drop(kind, row.id, name)


_author_gone = partial(_gone, "author", ("following:author", "following:topic", "following:community",
                                         "following:shout"))


def author(a: Author, conn: Connection, ops: LiveOps, event: Event) -> None:
    _author_gone(a, conn, ops, event)
    if event != "update":  # an author joins or leaves the board of authors: built again
        ops.drop_board("authors:rating")


LIVE_RULES: dict[type, LiveRule] = {
    Reaction: reaction,
    AuthorFollower: partial(_follow, "author", "author", "followers", "authors"),
    TopicFollower: partial(_follow, "topic", "topic", "followers", "topics"),
    CommunityFollower: partial(_follow, "community", "community", "followers", None),
    ShoutReactionsFollower: partial(_follow, "shout", "shout", None, None, soft_delete=True),
    AuthorRating: author_rating,
    AuthorBookmark: partial(_presence, "shout", "shout", "bookmarks"),
    CommunityAuthor: partial(_presence, "community", "community", "authors"),
    Shout: shout,
    ShoutAuthor: shout_author,
    ShoutTopic: shout_topic,
    Author: author,
    Topic: partial(_gone, "topic", ()),
    Community: partial(_gone, "community", ()),
}

# A bulk UPDATE or DELETE does not say which rows it touched: every structure of these kinds is rebuilt.
LIVE_BULK: dict[type, tuple[str, ...]] = {
    Reaction: ("shout", "author", "topic", "comment", "board", "weekly"),
    Shout: ("shout", "author", "topic", "community", "comment", "board", "weekly"),
    ShoutAuthor: ("author", "topic"),
    ShoutTopic: ("topic",),
    AuthorFollower: ("author",),
    TopicFollower: ("topic", "author"),
    CommunityFollower: ("community", "author"),
    ShoutReactionsFollower: ("shout", "author"),
    CommunityAuthor: ("community",),
    AuthorBookmark: ("shout",),
    AuthorRating: ("author", "board"),
}
