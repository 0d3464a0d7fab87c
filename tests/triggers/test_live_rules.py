"""What the live rules (triggers/live_rules.py) record for rows that read nothing else: follows, presences,
a shout's topics, deletions of authors, topics and communities, written out operation by operation. The
end-to-end check (random writes leave every live structure equal to SQL) is
tests/cache/test_live_structures.py; it deletes no author, topic or community, so these are pinned here (the
mutation pass found them held by nothing)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.orm.attributes import set_committed_value

from cache import keys
from cache.live.structures import BOARD_ENTITY, LiveOps, Op
from orm import (
    Author,
    AuthorBookmark,
    AuthorFollower,
    Community,
    CommunityAuthor,
    CommunityFollower,
    ShoutReactionsFollower,
    ShoutTopic,
    Topic,
    TopicFollower,
)
from triggers.live_rules import LIVE_RULES

FOLLOWING = ("following:author", "following:topic", "following:community", "following:shout")


def _ops(row: Any, event: str) -> dict[tuple[str, int], list[Op]]:
    ops = LiveOps()
    LIVE_RULES[type(row)](row, None, ops, event)  # type: ignore[arg-type]  # these rules read nothing
    return ops.by_entity


def _drops(*names: str) -> list[Op]:
    return [Op("drop", name) for name in names]


@pytest.mark.parametrize("row, kind, names", [
    (Author(id=4), "author", ("count", "fans", *FOLLOWING)),
    (Topic(id=5), "topic", ("count", "fans")),
    (Community(id=6), "community", ("count", "fans")),
])
def test_a_deleted_entity_takes_its_structures_along(row: Any, kind: str, names: tuple[str, ...]) -> None:
    gone = _ops(row, "delete")
    assert gone[(kind, row.id)] == _drops(*names)
    if kind == "author":  # and the authors' board is built again, without it
        assert gone[(keys.board_kind("authors:rating"), BOARD_ENTITY)] == _drops("authors:rating")
        assert set(gone) == {(kind, row.id), (keys.board_kind("authors:rating"), BOARD_ENTITY)}
    else:
        assert set(gone) == {(kind, row.id)}
    assert (kind, row.id) not in _ops(row, "update")


def test_a_new_author_joins_the_authors_board_and_an_edit_moves_nothing() -> None:
    assert _ops(Author(id=4), "insert") == {(keys.board_kind("authors:rating"), BOARD_ENTITY): _drops("authors:rating")}
    assert _ops(Author(id=4), "update") == {}


def test_a_shouts_topic_drops_the_topics_counters_to_be_recounted() -> None:
    link = ShoutTopic(shout=8, topic=5)
    assert _ops(link, "insert") == _ops(link, "delete") == {("topic", 5): _drops("count")}
    assert _ops(link, "update") == {}


@pytest.mark.parametrize("row, kind, entity, metric", [
    (AuthorBookmark(author=4, shout=8), "shout", 8, "bookmarks"),
    (CommunityAuthor(author=4, community=6), "community", 6, "authors"),
])
def test_a_presence_counts_one(row: Any, kind: str, entity: int, metric: str) -> None:
    assert _ops(row, "insert") == {(kind, entity): [Op("incr", "count", (metric, "1"))]}
    assert _ops(row, "delete") == {(kind, entity): [Op("incr", "count", (metric, "-1"))]}
    assert _ops(row, "update") == {}


@pytest.mark.parametrize("row, kind, target, target_metric, follower_metric", [
    (AuthorFollower(author=9, follower=4, created_at=100), "author", 9, "followers", "authors"),
    (TopicFollower(topic=5, follower=4, created_at=100), "topic", 5, "followers", "topics"),
    (CommunityFollower(community=6, follower=4, created_at=100), "community", 6, "followers", None),
    (ShoutReactionsFollower(shout=8, follower=4, created_at=100), "shout", 8, None, None),
])
def test_a_follow_moves_both_sides(row: Any, kind: str, target: int, target_metric: str | None,
                                   follower_metric: str | None) -> None:
    followed, unfollowed = _ops(row, "insert"), _ops(row, "delete")
    target_ops = [Op("incr", "count", (target_metric, "1"))] if target_metric else []
    follower_ops = [Op("incr", "count", (follower_metric, "1"))] if follower_metric else []
    assert followed == {(kind, target): [*target_ops, Op("zadd", "fans", ("100", keys.member(4)))],
                        ("author", 4): [*follower_ops, Op("zadd", f"following:{kind}", ("100", keys.member(target)))]}
    minus = {key: [Op(op.verb, op.name, (op.args[0], "-1")) if op.verb == "incr"
                   else Op("zrem", op.name, (op.args[1],)) for op in ops] for key, ops in followed.items()}
    assert unfollowed == minus
    assert _ops(row, "update") == {}


def test_a_soft_deleted_shout_follow_counts_as_gone_and_restored_as_back() -> None:
    row = ShoutReactionsFollower(shout=8, follower=4, created_at=100)
    set_committed_value(row, "deleted_at", None)
    row.deleted_at = 500
    assert _ops(row, "update") == {("shout", 8): [Op("zrem", "fans", (keys.member(4),))],
                                   ("author", 4): [Op("zrem", "following:shout", (keys.member(8),))]}
    back = ShoutReactionsFollower(shout=8, follower=4, created_at=100)
    set_committed_value(back, "deleted_at", 500)
    back.deleted_at = None
    assert _ops(back, "update") == {("shout", 8): [Op("zadd", "fans", ("100", keys.member(4)))],
                                    ("author", 4): [Op("zadd", "following:shout", ("100", keys.member(8)))]}
    assert _ops(ShoutReactionsFollower(shout=8, follower=4, created_at=100, deleted_at=7), "insert") == {}


async def test_a_shouts_author_row_edited_moves_nothing_and_added_drops_the_counters_it_feeds(
        engine: Any) -> None:
    """A caption edit leaves the counters alone (a recount for nothing); adding or removing an author of a
    shout drops that author's counters, its co-authors' and its topics' distinct authors."""
    from sqlalchemy import func, select
    from sqlalchemy.engine import Connection

    from orm import ShoutAuthor as Link
    from orm import ShoutTopic as Topics

    async with engine.connect() as conn:
        # a shout of several authors: each one's counters go, not only the added author's
        shout = await conn.scalar(select(Link.shout).group_by(Link.shout).having(func.count() > 1).limit(1))
        author = await conn.scalar(select(Link.author).where(Link.shout == shout).limit(1))
        co_authors = set((await conn.scalars(select(Link.author).where(Link.shout == shout))).all())
        assert len(co_authors) > 1
        topics = set((await conn.scalars(select(Topics.topic).where(Topics.shout == shout))).all())

        def record(sync: Connection) -> tuple[Any, Any]:
            found = []
            for event in ("update", "insert"):
                ops = LiveOps()
                LIVE_RULES[Link](Link(shout=shout, author=author, caption="new"), sync, ops, event)
                found.append(ops.by_entity)
            return found[0], found[1]

        edited, added = await conn.run_sync(record)
    assert edited == {}
    assert set(added) == {("author", a) for a in co_authors | {author}} | {("topic", t) for t in topics}


async def test_a_shout_that_leaves_or_changes_its_public_place_drops_what_listed_it(engine: Any) -> None:
    """Unpublishing a shout (or moving it to another community, or deleting it) drops every structure
    that holds public shouts only: its communities' counters, its comment threads and the threads of
    replies under it, the shout boards, every weekly edition, its authors' and its topics' counters; a
    deletion its own counters too. An edit that keeps it where it is, or the deletion of a draft that was
    never listed, drops nothing."""
    from sqlalchemy import select
    from sqlalchemy.engine import Connection

    from cache.live.boards import SHOUT_BOARDS
    from orm import Reaction, Shout, ShoutAuthor
    from orm import ShoutTopic as Topics

    async with engine.connect() as conn:
        shout = await conn.scalar(select(Reaction.shout).where(Reaction.reply_to.is_not(None)).limit(1))
        parents = set((await conn.scalars(select(Reaction.reply_to).where(
            Reaction.shout == shout, Reaction.reply_to.is_not(None)))).all())
        authors = set((await conn.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == shout))).all())
        topics = set((await conn.scalars(select(Topics.topic).where(Topics.shout == shout))).all())

        def changed(was_published: int | None = 100, **after: Any) -> Shout:
            row = Shout(id=shout)
            for name, value in {"published_at": was_published, "deleted_at": None, "community": 1}.items():
                set_committed_value(row, name, value)
            for name, value in after.items():
                setattr(row, name, value)
            return row

        def record(sync: Connection) -> list[LiveOps]:
            found = []
            for row, event in ((changed(published_at=200), "update"), (changed(None, deleted_at=300), "update"),
                               (changed(published_at=None), "update"), (changed(community=2), "update"),
                               (changed(), "delete")):
                ops = LiveOps()
                LIVE_RULES[Shout](row, sync, ops, event)
                found.append(ops)
            return found

        edited, draft_deleted, unpublished, moved, deleted = await conn.run_sync(record)
    for unmoved in (edited, draft_deleted):  # still listed, or never was
        assert unmoved.by_entity == {} and not unmoved.lost_kinds

    def expected(communities: list[int], *, gone: bool = False) -> dict[tuple[str, int], list[Op]]:
        ops: dict[tuple[str, int], list[Op]] = {}
        for community in communities:
            ops.setdefault(("community", community), []).append(Op("drop", "count"))
        ops[("shout", shout)] = _drops("comments", "comments:best", "comments:all", *(("count",) if gone else ()))
        for board in SHOUT_BOARDS:  # the all-time boards: one entity
            ops.setdefault((keys.board_kind(board), BOARD_ENTITY), []).append(Op("drop", board))
        ops |= {("comment", parent): _drops("replies", "replies:best") for parent in parents}
        ops |= {("author", author): _drops("count") for author in authors}
        ops |= {("topic", topic): _drops("count") for topic in topics}
        return ops

    assert parents and authors and topics  # the shout has replies, authors and topics to drop
    assert unpublished.by_entity == expected([1, 1]) and unpublished.lost_kinds == {"weekly"}
    assert moved.by_entity == expected([1, 2]) and moved.lost_kinds == {"weekly"}
    assert deleted.by_entity == expected([1], gone=True) and deleted.lost_kinds == {"weekly"}


def _reaction_ops(sync: Any, cases: list[tuple[int, str, str]]) -> list[LiveOps]:
    """The live rule's operations for a new reaction row (id 10**9, reply_to None, author 1, created at
    1_700_000_000) in each (shout, kind, event) case, read through `sync`, a synchronous connection."""
    from orm import Reaction

    return [_rule_ops(sync, Reaction(id=_NEW_ID, kind=kind, shout=shout, reply_to=None, created_by=1, created_at=_AT,
                                     deleted_at=None), event) for shout, kind, event in cases]


def _rule_ops(sync: Any, row: Any, event: str) -> LiveOps:
    """What the live rule of `row`'s model records for `event`, reading related rows through `sync`."""
    ops = LiveOps()
    LIVE_RULES[type(row)](row, sync, ops, event)  # type: ignore[arg-type]
    return ops


_NEW_ID, _AT = 10**9, 1_700_000_000


async def test_a_new_comment_and_a_new_vote_move_their_shout_in_place_and_drop_nothing(engine: Any) -> None:
    """A new comment on a public shout puts itself in its threads in place (`zput`, the best-first thread
    with score 0) and raises the last comment time; a new vote moves the counters. Neither drops anything
    (a drop makes the next reader recount from SQL), and a new reaction has no comment HASH to drop."""
    from sqlalchemy import select

    from orm import Shout
    from orm.stats import is_listed

    async with engine.connect() as conn:
        shout = await conn.scalar(select(Shout.id).where(is_listed()).order_by(Shout.id).limit(1))
        comment, vote = await conn.run_sync(_reaction_ops, [(shout, "COMMENT", "insert"), (shout, "LIKE", "insert")])
    for ops in (comment, vote):
        assert ("comment", _NEW_ID) not in ops.by_entity
        assert not [op for entity_ops in ops.by_entity.values() for op in entity_ops if op.verb == "drop"]
    member = keys.member(_NEW_ID)
    on_shout = comment.by_entity[("shout", shout)]
    assert {op for op in on_shout if op.verb == "zput"} == {
        Op("zput", "comments", (str(_AT), member)), Op("zput", "comments:best", ("0", member)),
        Op("zput", "comments:all", (str(_AT), member))}
    assert Op("max", "count", ("last_commented_at", str(_AT))) in on_shout
    assert vote.by_entity[("shout", shout)] and all(op.verb != "zput" for op in vote.by_entity[("shout", shout)])


async def test_a_comment_on_a_hidden_shout_and_a_comment_row_deleted_drop_their_threads(engine: Any) -> None:
    """A comment on a shout that is not public puts itself in no thread: its threads are dropped (the
    thread lists public shouts' comments only). A comment row deleted outright (an admin script's
    `session.delete`, not the API's soft delete) leaves its replies replying to nothing (ON DELETE SET
    NULL): they join the top level, so the shout's top-level threads and the comment's own reply threads
    are dropped, besides its HASH."""
    from sqlalchemy import select

    from orm import Shout
    from orm.stats import is_listed

    async with engine.connect() as conn:
        hidden = await conn.scalar(select(Shout.id).where(~is_listed()).order_by(Shout.id).limit(1))
        shown = await conn.scalar(select(Shout.id).where(is_listed()).order_by(Shout.id).limit(1))
        on_hidden, deleted = await conn.run_sync(_reaction_ops, [(hidden, "COMMENT", "insert"),
                                                                 (shown, "COMMENT", "delete")])
    assert {op for op in on_hidden.by_entity[("shout", hidden)] if op.verb in ("zput", "drop")} == set(
        _drops("comments", "comments:best", "comments:all"))
    member = keys.member(_NEW_ID)
    assert set(deleted.by_entity[("shout", shown)]) >= {
        Op("zdel", "comments", (member,)), Op("zdel", "comments:best", (member,)), Op("zdel", "comments:all", (member,)),
        *_drops("comments", "comments:best")}
    assert deleted.by_entity[("comment", _NEW_ID)] == _drops("comment", "replies", "replies:best")


def _vote_turned(sync: Any, comment: int, shout: int) -> LiveOps:
    """The live rule's operations for a vote on `comment` changed in place from LIKE to DISLIKE (no API
    write does it; an admin script or an import may), read through `sync`, a synchronous connection."""
    from orm import Reaction

    vote = Reaction(id=_NEW_ID, shout=shout, reply_to=comment, created_by=1, created_at=_AT, deleted_at=None)
    set_committed_value(vote, "kind", "LIKE")
    vote.kind = "DISLIKE"
    return _rule_ops(sync, vote, "update")


async def test_a_vote_turned_in_place_moves_its_comment_by_both_votes(engine: Any) -> None:
    """A LIKE turned into a DISLIKE on the same row takes the like back and adds the dislike: the comment's
    rating and its place in the best-first thread move by -2, not by -1."""
    from sqlalchemy import select

    from orm import Reaction

    async with engine.connect() as conn:
        comment, shout = (await conn.execute(
            select(Reaction.id, Reaction.shout).where(Reaction.kind == "COMMENT", Reaction.reply_to.is_(None))
            .order_by(Reaction.id).limit(1))).one()
        ops = await conn.run_sync(_vote_turned, comment, shout)
    assert ops.by_entity[("comment", comment)] == [Op("incr", "comment", ("rating", "-2"))]
    assert Op("zincr", "comments:best", ("-2", keys.member(comment))) in ops.by_entity[("shout", shout)]


def _changed(sync: Any, shout: int, kind: str, **changes: Any) -> LiveOps:
    """The live rule's operations for a reaction row of `kind` on `shout` whose columns change in place
    as `changes` says (an edit, or the API's soft delete), read through `sync`, a synchronous connection."""
    from orm import Reaction

    row = Reaction(id=_NEW_ID, shout=shout, reply_to=None, created_by=1, created_at=_AT)
    set_committed_value(row, "kind", kind)
    set_committed_value(row, "deleted_at", None)
    for name, value in changes.items():
        setattr(row, name, value)
    return _rule_ops(sync, row, "update")


async def test_only_a_comment_changed_or_gone_drops_its_own_hash(engine: Any) -> None:
    """A comment edited or deleted drops its own HASH (read again from SQL). A vote has none: a vote
    replaced (soft deleted) or deleted outright touches no `comment` structure of its own id, since
    each such touch leaves a meta key behind (the soak found one per replaced vote)."""
    from sqlalchemy import select

    from orm import Shout
    from orm.stats import is_listed

    async with engine.connect() as conn:
        shout = await conn.scalar(select(Shout.id).where(is_listed()).order_by(Shout.id).limit(1))
        edited, comment_gone, vote_replaced = (
            await conn.run_sync(_changed, shout, "COMMENT", body="edited"),
            await conn.run_sync(_changed, shout, "COMMENT", deleted_at=_AT),
            await conn.run_sync(_changed, shout, "LIKE", deleted_at=_AT))
        vote_deleted, comment_deleted = await conn.run_sync(_reaction_ops, [(shout, "LIKE", "delete"),
                                                                            (shout, "COMMENT", "delete")])
    for ops in (edited, comment_gone, comment_deleted):
        assert Op("drop", "comment") in ops.by_entity[("comment", _NEW_ID)]
    for ops in (vote_replaced, vote_deleted):
        assert ("comment", _NEW_ID) not in ops.by_entity
        assert ops.by_entity[("shout", shout)]  # the vote's counters still move
