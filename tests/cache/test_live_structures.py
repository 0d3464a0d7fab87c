"""Live structures against SQL (seeds 001/003): after a random sequence of writes through the API (follow,
unfollow, vote, comment, reply, edit, delete, rate, bookmark, publish, unpublish, view), every counter
hash, follow set, comment thread, comment HASH and leaderboard (all time and this week's) that Redis
holds equals what SQL computes, with no revalidation run (views: once flushed), and every comment page
and board-ordered list the API serves equals the SQL one; after FLUSHDB the next reads rebuild them,
equal again, and so does the rebuild command. Follow sets and boards are capped at 6 and threads at 10
here, so the writes cross every cap."""

from __future__ import annotations

import contextlib
import itertools
import random
import time
import uuid
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from cache import keys
from cache.live.boards import board_query, current_boards
from cache.live.counters import QUERIES, get_counters
from cache.live.follows import fan_ids, fans_query, following_ids, following_query
from cache.live.rebuild import rebuild_all
from cache.live.structures import LiveOps, LiveStore, Noted, structure_key
from cache.live.threads import as_row, comment_rating, encode, members_query
from cache.redis.limits import BATCH
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from orm import (
    Author,
    AuthorFollower,
    Community,
    Invite,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutTopic,
    ShoutViews,
    ShoutViewsWeekly,
    Topic,
)
from orm.reaction import COMMENT_KINDS
from orm.stats import is_listed, reaction_stats
from resolvers.deps import Deps
from resolvers.shout_reads import BOARD_ORDERS
from tests.conftest import TEST_REDIS_CLUSTER, redis_gone
from tests.helpers import Api, User, board_equals_sql, built_ids, pipelines_sent

SET_CAP = 6
THREAD_CAP = 10
WRITES = 520
FOLLOW = "mutation($w: FollowingEntity!, $s: String!) { follow(what: $w, slug: $s) { error } }"
UNFOLLOW = "mutation($w: FollowingEntity!, $s: String!) { unfollow(what: $w, slug: $s) { error } }"
REACT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"
DELETE = "mutation($id: Int!) { delete_reaction(reaction_id: $id) { error } }"
EDIT = "mutation($r: ReactionInput!) { update_reaction(reaction: $r) { error } }"
BRANCH = """query($s: Int!, $p: Int, $o: ReactionSort, $l: Int) {
  load_comments_branch(shout: $s, parent_id: $p, sort: $o, limit: $l, children_limit: 2) {
    id body stat { rating comments_count } first_replies { id stat { rating comments_count } } } }"""
RATE = "mutation($s: String!, $v: Int!) { rate_author(rated_slug: $s, value: $v) { error } }"
BOOKMARK = "mutation($s: String!) { toggle_bookmark_shout(slug: $s) { error } }"
DRAFT = "mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }"
PUBLISH = "mutation($id: Int!) { publish_draft(draft_id: $id) { error shout { id } } }"
UNPUBLISH = "mutation($id: Int!) { unpublish_draft(draft_id: $id) { error } }"
READ = "query($s: String!) { get_shout(slug: $s) { id } }"
INVITE = "mutation($a: Int!, $s: String!) { create_invite(author_id: $a, slug: $s) { error } }"
ACCEPT = "mutation($i: Int!) { accept_invite(invite_id: $i) { error } }"
REMOVE_AUTHOR = "mutation($a: Int!, $s: String!) { remove_author(author_id: $a, slug: $s) { error } }"
# Refusals a random writer runs into (voting twice, on one's own shout, following oneself ...).
EXPECTED_REFUSALS = {"CONFLICT", "BAD_USER_INPUT", "NOT_FOUND", "FORBIDDEN"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"live_set_cap": SET_CAP, "live_thread_cap": THREAD_CAP})


class World:
    """The entities the random writes pick from, and what they created."""

    def __init__(self, users: list[User], shouts: list[tuple[int, str]], topics: list[tuple[int, str]],
                 communities: list[str], authors: list[tuple[int, str]]) -> None:
        self.users, self.shouts, self.topics = users, shouts, topics
        self.communities, self.authors = communities, authors
        self.reactions: list[tuple[int, int, int, bool]] = []  # (id, owner, shout, is_comment)
        self.comments: list[int] = []  # every comment created, deleted ones too
        self.drafts: list[tuple[int, User, str]] = []
        self.published: dict[int, int] = {}  # draft -> shout


async def _world(api: Api) -> World:
    async with api.deps.db() as session:
        shouts = (await session.execute(select(Shout.id, Shout.slug).where(is_listed()).order_by(Shout.id)
                                        .limit(8))).all()
        topics = (await session.execute(select(Topic.id, Topic.slug).order_by(Topic.id).limit(4))).all()
        communities = list((await session.scalars(select(Community.slug).order_by(Community.id))).all())
        authors = (await session.execute(select(Author.id, Author.slug).order_by(Author.id).limit(4))).all()
    users = [await api.user() for _ in range(6)]
    world = World(users, [tuple(s) for s in shouts], [tuple(t) for t in topics], communities,
                  [tuple(a) for a in authors] + [(u.id, u.slug) for u in users])
    for user in users:
        slug = f"live-{uuid.uuid4().hex[:10]}"
        draft = await api(DRAFT, {"d": {"title": "Живое", "body": "<p>текст</p>", "slug": slug,
                                        "topic_ids": [t[0] for t in world.topics[:2]]}}, user)
        world.drafts.append((draft["draft"]["id"], user, slug))
    return world


async def _write(api: Api, world: World, rng: random.Random) -> None:
    user = rng.choice(world.users)
    choice = rng.random()
    shout_id, shout_slug = rng.choice(world.shouts)
    if choice < 0.18:
        what, slug = rng.choice([("AUTHOR", rng.choice(world.authors)[1]), ("TOPIC", rng.choice(world.topics)[1]),
                                 ("COMMUNITY", rng.choice(world.communities)), ("SHOUT", shout_slug)])
        body = await api.raw(FOLLOW if rng.random() < 0.6 else UNFOLLOW, {"w": what, "s": slug}, user)
    elif choice < 0.38:
        body = await api.raw(REACT, {"r": {"kind": rng.choice(["LIKE", "DISLIKE"]), "shout": shout_id}}, user)
    elif choice < 0.55:
        comments = [r for r in world.reactions if r[3] and r[2] == shout_id]
        reply_to = rng.choice(comments)[0] if comments and rng.random() < 0.4 else None
        body = await api.raw(REACT, {"r": {"kind": rng.choice(["COMMENT", "COMMENT", "QUOTE"]), "shout": shout_id,
                                           "body": "мнение", "reply_to": reply_to}}, user)
        if not body.get("errors"):
            world.reactions.append((body["data"]["create_reaction"]["reaction"]["id"], user.id, shout_id, True))
            world.comments.append(world.reactions[-1][0])
    elif choice < 0.65:
        comments = [r for r in world.reactions if r[3]]
        if not comments:
            return
        comment = rng.choice(comments)
        body = await api.raw(REACT, {"r": {"kind": rng.choice(["LIKE", "DISLIKE"]), "shout": comment[2],
                                           "reply_to": comment[0]}}, user)
    elif choice < 0.72:
        mine = [r for r in world.reactions if r[1] == user.id]
        if not mine:
            return
        target = rng.choice(mine)
        if target[3] and rng.random() < 0.3:
            body = await api.raw(EDIT, {"r": {"id": target[0], "kind": "COMMENT", "shout": target[2],
                                              "body": f"правка {rng.random()}"}}, user)
        else:
            world.reactions.remove(target)
            body = await api.raw(DELETE, {"id": target[0]}, user)
    elif choice < 0.82:
        body = await api.raw(RATE, {"s": rng.choice(world.authors)[1], "v": rng.choice([1, -1, 0])}, user)
    elif choice < 0.86:
        body = await api.raw(BOOKMARK, {"s": shout_slug}, user)
    elif choice < 0.93:  # a view, by a signed-in reader or one of 40 anonymous ones
        reader = rng.randrange(40)
        body = await api.raw(READ, {"s": shout_slug}, user if reader < 6 else None,
                             headers={"user-agent": f"reader-{reader}"})
    elif choice < 0.97:  # co-authors come and go: an invite accepted, or an author removed
        body = await _collaborate(api, world, rng)
    else:
        draft_id, owner, _ = rng.choice(world.drafts)
        if draft_id in world.published and rng.random() < 0.5:
            body = await api.raw(UNPUBLISH, {"id": draft_id}, owner)
        else:
            body = await api.raw(PUBLISH, {"id": draft_id}, owner)
            if not body.get("errors"):
                shout = body["data"]["publish_draft"]["shout"]
                world.published[draft_id] = shout["id"]
                if all(s[0] != shout["id"] for s in world.shouts):
                    world.shouts.append((shout["id"], next(d[2] for d in world.drafts if d[0] == draft_id)))
    for error in body.get("errors") or []:
        assert error["extensions"]["code"] in EXPECTED_REFUSALS, error


async def _collaborate(api: Api, world: World, rng: random.Random) -> Any:
    published = [d for d in world.drafts if d[0] in world.published]
    if not published:
        return {}
    draft_id, owner, slug = rng.choice(published)
    async with api.deps.db() as session:
        authors = set((await session.scalars(select(ShoutAuthor.author).where(
            ShoutAuthor.shout == world.published[draft_id]))).all())
    others = [u for u in world.users if u.id not in authors]
    if others and rng.random() < 0.6:
        invitee = rng.choice(others)
        body = await api.raw(INVITE, {"a": invitee.id, "s": slug}, owner)
        if body.get("errors"):
            return body
        async with api.deps.db() as session:
            invite_id = await session.scalar(select(Invite.id).where(
                Invite.author_id == invitee.id, Invite.shout_id == world.published[draft_id],
                Invite.status == "PENDING"))
        return await api.raw(ACCEPT, {"i": invite_id}, invitee)
    coauthors = [a for a in authors if a != owner.id]
    if not coauthors:
        return {}
    return await api.raw(REMOVE_AUTHOR, {"a": rng.choice(coauthors), "s": slug}, owner)


async def _scope(deps: Deps, world: World) -> dict[str, list[int]]:
    """Every entity whose structures the writes may have touched."""
    shouts = [s[0] for s in world.shouts]
    async with deps.db() as session:
        shout_authors = set((await session.scalars(select(ShoutAuthor.author)
                                                   .where(ShoutAuthor.shout.in_(shouts)))).all())
        topics = set((await session.scalars(select(ShoutTopic.topic).where(ShoutTopic.shout.in_(shouts)))).all())
        communities = list((await session.scalars(select(Community.id))).all())
        fans = set((await session.scalars(select(AuthorFollower.author).where(
            AuthorFollower.follower.in_([u.id for u in world.users])))).all())
    return {
        "shout": sorted(shouts),
        "author": sorted({a[0] for a in world.authors} | shout_authors | fans),
        "topic": sorted({t[0] for t in world.topics} | topics),
        "community": sorted(communities),
        "comment": sorted(world.comments),
    }


SETS = {"author": ["fans", "following:author", "following:topic", "following:community", "following:shout"],
        "topic": ["fans"], "community": ["fans"], "shout": ["fans"]}
THREAD_SETS = {"shout": ["comments", "comments:best", "comments:all"], "comment": ["replies", "replies:best"]}


async def _read_all(deps: Deps, scope: dict[str, list[int]]) -> None:
    """Read every structure in scope through the live read path (which builds what is missing)."""
    for board in current_boards(time.time()):
        await deps.boards.top(board, 0, 3)
    for kind, ids in scope.items():
        for name in THREAD_SETS.get(kind, []):
            for entity_id in ids:
                await deps.threads.page(kind, entity_id, name, 0, 1, True)
        if kind == "comment":
            await deps.threads.comments(ids)
            continue
        await get_counters(kind, ids, live=deps.live, db=deps.db)
        for entity_id in ids:
            for name in SETS[kind]:
                if name == "fans":
                    await fan_ids(kind, entity_id, live=deps.live, db=deps.db, cache=deps.cache)
                else:
                    await following_ids(name.split(":")[1], entity_id, live=deps.live, db=deps.db, cache=deps.cache)


async def _compare(deps: Deps, redis: Redis, scope: dict[str, list[int]]) -> int:
    """Every built structure in scope equals SQL; returns how many were compared."""
    compared = 0
    async with deps.db() as session:
        for board in current_boards(time.time()):
            compared += await board_equals_sql(session, redis, board)
        for kind, ids in scope.items():
            for name in THREAD_SETS.get(kind, []):
                for entity_id in await built_ids(redis, kind, ids, name):
                    rows = (await session.execute(members_query(kind, name, [entity_id]))).all()
                    stored_set = await redis.zrevrange(structure_key(kind, entity_id, name), 0, -1, withscores=True)
                    assert [(int(m), int(score)) for m, score in stored_set] == [(i, sc) for _, sc, i in rows], \
                        (kind, entity_id, name)
                    compared += 1
            if kind == "comment":
                for entity_id in await built_ids(redis, kind, ids, "comment"):
                    row, rating = (await session.execute(select(Reaction, comment_rating())
                                                         .where(Reaction.id == entity_id))).one()
                    stored = await redis.hgetall(keys.comment(entity_id))
                    assert stored == {str(k).encode(): str(v).encode()
                                      for k, v in zip(*[iter(encode(as_row(row, rating)))] * 2, strict=True)}, entity_id
                    compared += 1
                continue
            built = await built_ids(redis, kind, ids, "count")
            truth = await QUERIES[kind](session, built)
            for entity_id in built:
                stored = {k.decode(): int(v) for k, v in (await redis.hgetall(keys.counters(kind, entity_id))).items()}
                expected = {k: v for k, v in truth[entity_id].items() if v is not None}
                assert stored == expected, (kind, entity_id)
                compared += 1
            for name in SETS[kind]:
                for entity_id in await built_ids(redis, kind, ids, name):
                    if name == "fans":
                        query, key = fans_query(kind, entity_id), keys.fans(kind, entity_id)
                    else:
                        target = name.split(":")[1]
                        query, key = following_query(target, entity_id), keys.following(entity_id, target)
                    rows = (await session.execute(query.limit(SET_CAP))).all()
                    stored_set = [(int(m), int(s)) for m, s in await redis.zrevrange(key, 0, -1, withscores=True)]
                    assert stored_set == [(t, at) for t, at in rows], (kind, entity_id, name)
                    compared += 1
    return compared


async def _views_flushed_equal_counters(deps: Deps, redis: Redis, shouts: list[int]) -> None:
    """After a flush `shout_views` holds every view counter, and the weeks add up to the total."""
    await deps.views.flush()
    async with deps.db() as session:
        totals = dict((await session.execute(select(ShoutViews.shout, ShoutViews.views)
                                             .where(ShoutViews.shout.in_(shouts)))).all())
        weeks = dict((await session.execute(select(ShoutViewsWeekly.shout, func.sum(ShoutViewsWeekly.views))
                                            .where(ShoutViewsWeekly.shout.in_(shouts))
                                            .group_by(ShoutViewsWeekly.shout))).all())
    for shout_id in shouts:
        counter = await redis.get(keys.viewed(shout_id))
        assert int(counter or 0) == totals.get(shout_id, 0) == weeks.get(shout_id, 0), shout_id


async def test_random_writes_keep_every_live_structure_equal_to_sql(api: Api, redis: Redis) -> None:
    from telemetry import metrics

    deps = api.deps
    lost = metrics.LOST_INVALIDATIONS._value.get()
    world = await _world(api)
    await _read_all(deps, await _scope(deps, world))  # built before the writes: the writes change them in place
    rng = random.Random(2026)
    for step in range(WRITES):
        await _write(api, world, rng)
        if step % 20 == 19:  # readers come and go: what a write dropped is rebuilt, later writes update it
            await _read_all(deps, await _scope(deps, world))
        if step % 60 == 59:  # the background loop flushes views
            await deps.views.flush()
    scope = await _scope(deps, world)
    await _read_all(deps, scope)  # the views boards are built before the flush: it places what it writes
    await api.count_hit_reads()  # the views of reads the response cache answered, counted before the flush
    await _views_flushed_equal_counters(deps, redis, scope["shout"])
    async with deps.db() as session:
        assert sum([await board_equals_sql(session, redis, b) for b in current_boards(time.time())]) == 7
    compared = await _compare(deps, redis, scope)
    assert compared >= 150, compared  # most structures were updated in place, not dropped
    # and every write's update reached Redis: none was lost and answered by rebuilding from SQL
    assert metrics.LOST_INVALIDATIONS._value.get() == lost and not deps.cache.lost_invalidations
    assert await _pages_equal_sql(api, scope) >= 20
    await _boards_equal_sql(api, scope)

    await redis.flushdb()
    await _read_all(deps, scope)  # lazy rebuild from SQL: now every structure in scope is built
    held = await _threads_within_cap(deps, redis, scope)
    assert await _compare(deps, redis, scope) == held + sum(
        len(ids) * (1 + len(SETS[kind])) for kind, ids in scope.items() if kind != "comment"
    ) + len(scope["comment"]) + len(current_boards(time.time()))
    assert await _pages_equal_sql(api, scope) >= 20
    await _boards_equal_sql(api, scope)

    # The rebuild command: from nothing, and over structures gone wrong (here, by hand).
    await redis.flushdb()
    steps: list[tuple[str, int, int]] = []
    await rebuild_all(deps.live, deps.cache, deps.db, lambda label, done, total: steps.append((label, done, total)))
    assert {label for label, _, _ in steps} >= {"shouts", "authors", "topics", "communities", "comments"}
    assert all(b - a <= 100 for (la, a, _), (lb, b, _) in itertools.pairwise(steps) if la == lb)
    await redis.hset(keys.counters("shout", scope["shout"][0]), "rating", 999)
    await redis.zadd(keys.post_comments(scope["shout"][0], "all"), {keys.member(10**9): 1})
    await rebuild_all(deps.live, deps.cache, deps.db)
    assert await _compare(deps, redis, scope) == held + sum(
        len(ids) * (1 + len(SETS[kind])) for kind, ids in scope.items() if kind != "comment"
    ) + len(scope["comment"]) + len(current_boards(time.time()))
    assert await _pages_equal_sql(api, scope) >= 20


async def test_the_control_without_the_live_write_path_differs_from_sql(api: Api, redis: Redis,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same writes with the live write path switched off (nothing announced, nothing applied): the
    structures built before them must then differ from SQL, or the comparison above could not tell."""
    async def announced(self: LiveStore, entities: Any) -> bool:
        return True

    async def applied(self: LiveStore, pipe: Any, ops: Any, *, announced: bool) -> None:
        return None

    deps = api.deps
    world = await _world(api)
    await _read_all(deps, await _scope(deps, world))
    monkeypatch.setattr(LiveStore, "announce", announced)
    monkeypatch.setattr(LiveStore, "queue_apply", applied)
    rng = random.Random(2026)
    for _ in range(60):
        await _write(api, world, rng)
    with pytest.raises(AssertionError):
        await _compare(deps, redis, await _scope(deps, world))


async def _threads_within_cap(deps: Deps, redis: Redis, scope: dict[str, list[int]]) -> int:
    """Every thread set is built unless it holds more than the cap; returns how many are built."""
    held = 0
    async with deps.db() as session:
        for kind, names in THREAD_SETS.items():
            for name in names:
                built = set(await built_ids(redis, kind, scope[kind], name))
                for entity_id in scope[kind]:
                    size = len((await session.execute(members_query(kind, name, [entity_id]))).all())
                    assert (entity_id in built) == (size <= THREAD_CAP), (kind, entity_id, name, size)
                held += len(built)
    return held


async def _expected_branch(session: AsyncSession, shout: int, parent: int | None, sort: str) -> list[Any]:
    """The documented order, computed in Python from plain rows: (id, rating, replies, first 2 replies)."""
    live = (select(Reaction.id, Reaction.created_at, Reaction.reply_to).join(Shout, Shout.id == Reaction.shout)
            .where(Reaction.shout == shout, Reaction.deleted_at.is_(None), Reaction.kind.in_(COMMENT_KINDS),
                   is_listed()))
    rows = (await session.execute(live)).all()
    stats = await reaction_stats(session, [r.id for r in rows])
    level = [r for r in rows if r.reply_to == parent]
    if sort in ("newest", "oldest"):
        level.sort(key=lambda r: (r.created_at, r.id), reverse=sort == "newest")
    else:
        level.sort(key=lambda r: (stats[r.id]["rating"], r.id), reverse=sort == "like")
    replies = {r.id: sorted((x for x in rows if x.reply_to == r.id), key=lambda x: (x.created_at, x.id))[:2]
               for r in level}
    return [(r.id, stats[r.id]["rating"], stats[r.id]["comments_count"],
             [(x.id, stats[x.id]["rating"], stats[x.id]["comments_count"]) for x in replies[r.id]])
            for r in level[:50]]


TOP = "query($o: ShoutsOrderBy!) { load_shouts_by(options: {order_by: $o, limit: 10}) { id } }"
WEEK_TOP = "query($o: ShoutsOrderBy!) { load_shouts_top(order_by: $o, week: \"current\", limit: 10) { id } }"
RANK = "query($id: Int!) { get_author(author_id: $id) { rating_rank } }"


async def _boards_equal_sql(api: Api, scope: dict[str, list[int]]) -> None:
    """Board-ordered lists and author ranks through the API equal SQL."""
    async with api.deps.db() as session:
        for order, board in BOARD_ORDERS.items():
            truth = [row[0] for row in (await session.execute(board_query(board)(10))).all()]
            assert [s["id"] for s in await api(TOP, {"o": order})] == truth, order
            week = keys.weekly_board(board, keys.week_of(time.time()))
            truth = [i for i, score in (await session.execute(board_query(week)(10))).all() if score > 0]
            assert [s["id"] for s in await api(WEEK_TOP, {"o": order})] == truth, week
        authors = [row[0] for row in (await session.execute(board_query("authors:rating")(10**6))).all()]
    for author_id in scope["author"][:12]:
        assert (await api(RANK, {"id": author_id}))["rating_rank"] == authors.index(author_id) + 1, author_id


async def _pages_equal_sql(api: Api, scope: dict[str, list[int]]) -> int:
    """`load_comments_branch` through the API (response and page caches included) equals SQL, for
    every shout's top level in each order and for the replies of every comment; returns pages compared."""
    compared = 0
    async with api.deps.db() as session:
        requests = [(shout, None, sort) for shout in scope["shout"] for sort in ("newest", "oldest", "like", "dislike")]
        parents = (await session.execute(select(Reaction.shout, Reaction.id).where(Reaction.id.in_(scope["comment"])))).all()
        requests += [(shout, parent, "newest") for shout, parent in parents]
        for shout, parent, sort in requests:
            body = await api(BRANCH, {"s": shout, "p": parent, "o": sort, "l": 50})
            served = [(c["id"], c["stat"]["rating"], c["stat"]["comments_count"],
                       [(x["id"], x["stat"]["rating"], x["stat"]["comments_count"]) for x in c["first_replies"]])
                      for c in body]
            assert served == await _expected_branch(session, shout, parent, sort), (shout, parent, sort)
            compared += 1
    return compared


async def test_a_read_never_stores_a_count_that_misses_an_announced_write(api: Api, redis: Redis) -> None:
    """The race the meta hash closes: a reader notes the meta, a write is announced (and may commit
    before the reader's query), the reader's build is refused until the write is applied."""
    deps = api.deps
    shout = await _world_shout(deps)
    found, noted = await deps.live.read("shout", "count", [shout], lambda pipe, key: pipe.hgetall(key))
    assert found == [None] and shout in noted
    assert await deps.live.announce([("shout", shout)])
    await deps.live.build("shout", "count", [(shout, ["rating", 1])], noted, structure="hash")
    assert not await redis.exists(keys.counters("shout", shout))  # refused: a write is under way
    found, noted = await deps.live.read("shout", "count", [shout], lambda pipe, key: pipe.hgetall(key))
    await deps.live.build("shout", "count", [(shout, ["rating", 1])], noted, structure="hash")
    assert not await redis.exists(keys.counters("shout", shout))  # still under way
    await deps.live.apply(LiveOps.touching([("shout", shout)]), announced=True)
    await deps.live.build("shout", "count", [(shout, ["rating", 1])], noted, structure="hash")
    assert not await redis.exists(keys.counters("shout", shout))  # noted before the write was applied
    found, noted = await deps.live.read("shout", "count", [shout], lambda pipe, key: pipe.hgetall(key))
    await deps.live.build("shout", "count", [(shout, ["rating", 1])], noted, structure="hash")
    assert await redis.hgetall(keys.counters("shout", shout)) == {b"rating": b"1"}


async def _world_shout(deps: Deps) -> int:
    async with deps.db() as session:
        return int(await session.scalar(select(Shout.id).where(is_listed()).order_by(Shout.id.desc()).limit(1)))



async def test_the_rules_of_one_row_read_each_related_row_once(api: Api, sql_counter: Any,
                                                                monkeypatch: Any) -> None:
    """A vote on a comment is seen by both rule sets (cache tags and live structures), and both ask who
    wrote the comment: they share one read (triggers/related.py); the shout's facts (its authors, its topics),
    which the writer read already, they ask no one. The control votes again with the sharing switched off and
    costs three statements more: the comment's author read twice, the shout's facts once by each rule set."""
    shout = await _world_shout(api.deps)
    author = await api.user()
    comment = await api(REACT, {"r": {"kind": "COMMENT", "shout": shout, "body": "мнение"}}, author)
    vote = {"r": {"kind": "LIKE", "shout": shout, "reply_to": comment["reaction"]["id"]}}
    costs = []
    for shared in (True, False):
        voter = await api.user()
        if not shared:
            monkeypatch.setattr("triggers.listeners.one_event", contextlib.nullcontext)
        sql_counter.reset()
        assert (await api(REACT, vote, voter))["error"] is None
        costs.append(sql_counter.count)
    assert costs[0] == costs[1] - 3, costs


async def test_counters_stored_before_a_metric_was_added_are_built_again(api: Api, redis: Redis) -> None:
    """A `count:*` HASH an earlier version stored lacks today's newer metrics (coauthors, say): it is
    read as a miss and built again, never served with zeros for what it lacks."""
    deps = api.deps
    async with deps.db() as session:
        author_id = await session.scalar(select(ShoutAuthor.author).order_by(ShoutAuthor.author).limit(1))
    (truth,) = await get_counters("author", [author_id], live=deps.live, db=deps.db)
    key = keys.counters("author", author_id)
    await redis.hdel(key, "coauthors", "replies_count", "viewed")
    await redis.hset(key, "followers", 999)  # what the old HASH held is not trusted either
    assert await get_counters("author", [author_id], live=deps.live, db=deps.db) == [truth]
    assert await redis.hexists(key, "coauthors")


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="the script reads each id's keys together: one server only")
async def test_comment_hashes_read_by_the_script_and_apart_answer_alike(
        deps: Deps, redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """`read_hashes` reads a page of comment hashes with one script call per chunk on one server, and
    apart (`read`: meta and HGETALL per id) on a cluster, whose ids' keys live in slots of their own: both
    answer the same values and note the same entities, built or not, with and without `note_all`."""
    live = deps.live
    ids = [901_000_001, 901_000_002, 901_000_003]  # comments of this test's own: the first two built
    _, noted = await live.read_hashes("comment", "comment", ids)
    assert set(noted) == set(ids)  # none built: every one noted for its builder
    await live.build("comment", "comment", [(ids[0], ["body", "первый", "rating", "2"]),
                                            (ids[1], ["body", "второй"])], noted, structure="hash")
    answers = {}
    for apart in (False, True):
        monkeypatch.setattr("cache.live.structures.is_cluster", lambda _client, apart=apart: apart)
        answers[apart] = [await live.read_hashes("comment", "comment", ids),
                          await live.read_hashes("comment", "comment", ids, note_all=True)]
    assert answers[True] == answers[False]
    (values, noted), (_, all_noted) = answers[False]
    assert values == [[{b"body": "первый".encode(), b"rating": b"2"}], [{b"body": "второй".encode()}], None]
    assert set(noted) == {ids[2]} and set(all_noted) == set(ids)  # the built ones too with note_all


async def test_a_live_apply_sends_every_entity_in_one_pipeline(redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`LiveStore.apply` (the views flush, a withdrawn announcement): one script call per entity, all in
    one pipeline; none goes to Redis as a command of its own."""
    from cache.store import Cache

    live = LiveStore(Cache(redis))
    sent: list[Any] = []
    execute = redis.execute_command

    async def counted(*args: Any, **options: Any) -> Any:
        sent.append(args[0])
        return await execute(*args, **options)

    monkeypatch.setattr(redis, "execute_command", counted)
    ops = LiveOps()
    for shout in (1, 2, 3):
        ops.incr("shout", shout, rating=1)
    await live.apply(ops, announced=True)
    monkeypatch.undo()
    assert sent == []
    assert [await redis.hget(keys.live_meta("shout", shout), "v") for shout in (1, 2, 3)] == [b"1"] * 3


async def test_live_scripts_in_a_pipeline_ask_redis_nothing_first(redis_server: RedisServer) -> None:
    """A commit's live updates and a build's stores go in their pipeline as the scripts' text: no SCRIPT
    EXISTS round trip before each (redis-py asks it for every Script object in a pipeline), and a Redis
    that forgot its scripts (a restart, SCRIPT FLUSH) between two writes runs them just the same."""
    from cache.redis.client import make_redis
    from cache.store import Cache

    client = make_redis(redis_server.url)
    try:
        live = LiveStore(Cache(client))
        for _ in range(2):
            ops = LiveOps()
            for shout in (1, 2):
                ops.incr("shout", shout, rating=1)
            await live.apply(ops, announced=True)
            await client.script_flush()
        noted = await live.note("author", "following:author", [5])
        await live.build("author", "following:author", [(5, [1.0, keys.member(7)])], noted, structure="zset")
        found, _ = await live.read("author", "following:author", [5], lambda pipe, key: pipe.zrange(key, 0, -1))
        stats = await client.info("commandstats")
        assert [await client.hget(keys.live_meta("shout", shout), "v") for shout in (1, 2)] == [b"2"] * 2  # both applied
        assert found == [[[keys.member(7).encode()]]]
        assert stats["cmdstat_eval"]["calls"] == 5  # two applies of two entities, one build
        assert not [name for name in stats if name.startswith(("cmdstat_script|exists", "cmdstat_script|load", "cmdstat_evalsha"))], stats
    finally:
        await client.aclose()


async def test_a_live_read_without_redis_is_a_miss_of_every_id_and_said(settings: Settings, down: Cache) -> None:
    """Redis failing during a live read: every id is a miss (its reader goes to SQL), nothing is noted, and
    the failure is counted as a live read's; while the breaker is open, Redis is not asked."""
    from telemetry import metrics

    live = LiveStore(down)
    failed = metrics.REDIS_ERRORS.labels("live read")._value.get()
    for read in (lambda: live.read_hashes("comment", "comment", [1, 2]),  # Redis asked, and failing
                 lambda: live.read_numbers("shout", "count", [1, 2], ["rating"]),  # the breaker open: not asked
                 lambda: live.read_hashes("comment", "comment", [1, 2])):
        assert await read() == ([None, None], {})
    assert metrics.REDIS_ERRORS.labels("live read")._value.get() - failed == 1
    assert not down.available
    # an update that cannot reach Redis is lost, said so, and answered later by epoch bumps
    lost = metrics.REDIS_ERRORS.labels("live apply")._value.get()
    ops = LiveOps()
    ops.incr("shout", 1, rating=1)
    await live.apply(ops, announced=True)
    assert metrics.REDIS_ERRORS.labels("live apply")._value.get() - lost == 1 and down.lost_invalidations


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="counts one server's pipelines (a cluster splits them by slot)")
async def test_a_warm_live_read_is_one_round_trip_and_counters_one_script_call(deps: Deps) -> None:
    """Built structures are read in one round trip each: a thread, board or follow set (`read`) as the
    epoch and each id's meta and structure in one pipeline, never creating an epoch that is there; a page's
    counters (`read_numbers`) as script calls only, whose values come back as integers (no HMGET per id)."""
    live = deps.live
    counted, followed = [903_000_001, 903_000_002], 903_000_003
    noted = await live.note("shout", "count", counted)
    await live.build("shout", "count", [(i, ["rating", 3 + n]) for n, i in enumerate(counted)], noted,
                     structure="hash")
    noted = await live.note("author", "following:author", [followed])
    await live.build("author", "following:author", [(followed, [1.0, keys.member(7)])], noted, structure="zset")
    await live.read_numbers("shout", "count", counted, ["rating"])  # Redis learns the script (SCRIPT LOAD)
    with pipelines_sent() as sent:
        counters = await live.read_numbers("shout", "count", counted, ["rating"])
        follows = await live.read("author", "following:author", [followed], lambda pipe, key: pipe.zrange(key, 0, -1))
    assert counters == ([[3], [4]], {})
    assert follows == ([[[keys.member(7).encode()]]], {})
    names = [[_name(command) for command in pipeline] for pipeline in sent]
    assert len(names) == 2, names  # one round trip each
    assert {name for pipeline in names for name in pipeline} <= {"EVALSHA", "GET", "HMGET", "ZRANGE"}, names
    assert sum(name == "EVALSHA" for pipeline in names for name in pipeline) == 1, names  # the counters: one call
    assert sum(name == "HMGET" for pipeline in names for name in pipeline) == 1, names  # the follow set's meta


def _name(command: tuple[Any, ...]) -> str:
    name = command[0]
    return (name.decode() if isinstance(name, bytes) else str(name)).upper()


async def test_a_live_read_of_no_ids_asks_nothing(deps: Deps) -> None:
    """No ids: no structures, nothing noted, and no round trip, whichever read and with `note_all` too."""
    live = deps.live
    with pipelines_sent() as sent:
        for note_all in (False, True):
            assert await live.read_numbers("shout", "count", [], ["rating"], note_all=note_all) == ([], {})
            assert await live.read_hashes("comment", "comment", [], note_all=note_all) == ([], {})
            assert await live.read("author", "following:author", [], lambda pipe, key: pipe.zrange(key, 0, -1),
                                   note_all=note_all) == ([], {})
    assert sent == []


async def test_each_live_read_failing_is_a_miss_of_every_id_and_counted() -> None:
    """Redis failing during any of the three live reads (asked each time: a breaker of its own each) is a
    miss of every id with nothing noted, counted once as a live read's failure; never an error."""
    from telemetry import metrics

    reads = {"read": lambda live: live.read("author", "following:author", [1, 2], lambda pipe, key: pipe.zrange(key, 0, -1)),
             "read_numbers": lambda live: live.read_numbers("shout", "count", [1, 2], ["rating"]),
             "read_hashes": lambda live: live.read_hashes("comment", "comment", [1, 2])}
    for what, read in reads.items():
        async with redis_gone() as down:
            failed = metrics.REDIS_ERRORS.labels("live read")._value.get()
            assert await read(LiveStore(down)) == ([None, None], {}), what
            assert metrics.REDIS_ERRORS.labels("live read")._value.get() - failed == 1, what
            assert not down.available, what


async def test_counters_written_to_before_they_were_built_are_built_by_the_next_read(api: Api, redis: Redis) -> None:
    """An entity whose counters were never built but which saw writes (its meta has a version): a read
    misses, notes that version, counts from SQL and stores the counters, since no write came in between.
    A reader that noted another version than the meta's would never store them."""
    deps = api.deps
    async with deps.db() as session:
        shout = await session.scalar(select(Shout.id).where(is_listed()).order_by(Shout.id.desc()).limit(1))
    await redis.delete(keys.counters("shout", shout))
    await redis.hdel(keys.live_meta("shout", shout), "count")
    await redis.hincrby(keys.live_meta("shout", shout), "v", 3)  # three writes since, none built anything
    (counted,) = await get_counters("shout", [shout], live=deps.live, db=deps.db)
    assert await redis.exists(keys.counters("shout", shout))
    assert await get_counters("shout", [shout], live=deps.live, db=deps.db) == [counted]


async def test_an_epoch_flushed_while_it_is_created_makes_a_miss(deps: Deps, redis: Redis,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that finds no epoch creates one and reads it back; a FLUSHDB between the two leaves none to
    read: the read is a miss of every id (its readers go to SQL), never an error."""
    live = deps.live
    await redis.delete(keys.live_epoch("author"))
    create = live.redis.set

    async def flushed_after(*args: Any, **kwargs: Any) -> Any:
        done = await create(*args, **kwargs)
        await redis.delete(keys.live_epoch("author"))
        return done

    monkeypatch.setattr(live.redis, "set", flushed_after)
    found, noted = await live.read("author", "following:author", [904_000_001], lambda pipe, key: pipe.zrange(key, 0, -1))
    assert found == [None] and set(noted) == {904_000_001}


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="counts one server's pipelines (a cluster splits them by slot)")
async def test_a_build_stores_every_structure_in_pipelines_of_a_chunk(deps: Deps, redis: Redis) -> None:
    """A build of more structures than a chunk (seed 004: at most 100 per command) stores every one of them,
    each once: one pipeline per chunk."""
    live = deps.live
    ids = list(range(905_000_000, 905_000_000 + 2 * BATCH + 50))
    noted = await live.note("comment", "comment", ids)
    with pipelines_sent() as sent:
        await live.build("comment", "comment", [(i, ["body", str(i)]) for i in ids], noted, structure="hash")
    assert [len(pipeline) for pipeline in sent] == [BATCH, BATCH, 50]
    stored = await live.read_hashes("comment", "comment", ids)
    assert stored == ([[{b"body": str(i).encode()}] for i in ids], {})


async def test_structures_built_together_expire_apart_each_with_its_meta(deps: Deps, redis: Redis) -> None:
    """Seed 004: keys written together get spread lifetimes (CACHE_TTL_JITTER), so everything one rebuild
    loaded does not expire as one wave; an entity's structure outlives its meta by the same margin."""
    from cache.live.structures import KEY_MARGIN, structure_key

    live = deps.live
    ids = list(range(906_000_000, 906_000_000 + 40))
    noted = await live.note("comment", "comment", ids)
    await live.build("comment", "comment", [(i, ["body", str(i)]) for i in ids], noted, structure="hash")
    metas = [await redis.ttl(keys.live_meta("comment", i)) for i in ids]
    values = [await redis.ttl(structure_key("comment", i, "comment")) for i in ids]
    spread = int(live.ttl * deps.cache.ttl_jitter)
    assert all(live.ttl - 5 <= ttl <= live.ttl + spread for ttl in metas)
    assert len(set(metas)) > 20  # spread, not one expiry for all (on a fixed TTL: one value)
    assert all(0 <= value - meta - KEY_MARGIN <= 1 for meta, value in zip(metas, values, strict=True))


async def test_a_build_while_the_breaker_is_open_asks_redis_nothing(down: Cache) -> None:
    """A build after Redis failed (the breaker open) stores nothing and does not try: no failure counted."""
    from telemetry import metrics

    live = LiveStore(down)
    assert await live.read_hashes("comment", "comment", [1]) == ([None], {})  # fails: the breaker opens
    assert not down.available
    failed = metrics.REDIS_ERRORS.labels("live build")._value.get()
    await live.build("comment", "comment", [(1, ["body", "x"])], {1: Noted("", "1")}, structure="hash")
    assert metrics.REDIS_ERRORS.labels("live build")._value.get() == failed


async def test_a_build_failing_is_counted_and_stores_nothing() -> None:
    """Redis failing during a build (asked: the breaker closed) is counted as a live build's failure and
    opens the breaker; the reader that built has its answer from SQL already, so nothing is raised."""
    from telemetry import metrics

    async with redis_gone() as down:
        failed = metrics.REDIS_ERRORS.labels("live build")._value.get()
        await LiveStore(down).build("comment", "comment", [(1, ["body", "x"])], {1: Noted("", "1")}, structure="hash")
        assert metrics.REDIS_ERRORS.labels("live build")._value.get() - failed == 1
        assert not down.available


async def test_nothing_to_announce_is_no_failure_and_asks_nothing(deps: Deps) -> None:
    """A write that touches no live structure announces nothing: not a failure (its changes are not taken
    for lost), and no round trip."""
    with pipelines_sent() as sent:
        assert await deps.live.announce([]) is True
    assert sent == []


async def test_an_announcement_marks_every_entity_pending_in_one_round_trip(deps: Deps, redis: Redis) -> None:
    """A write's announcement counts it on each entity's meta (`v` and `p` one more, `pt` now, the meta's
    expiry pushed out), all in one round trip: one script call on one server (a comment touches half a
    dozen entities; four commands each were the largest part of its Redis CPU), one an entity on a cluster."""
    live = deps.live
    entities = [("shout", 908_000_001), ("author", 908_000_002), ("topic", 908_000_003)]
    await redis.hset(keys.live_meta(*entities[0]), mapping={"v": 4, "p": 1})
    before = int(time.time())
    with pipelines_sent() as sent:
        assert await live.announce([*entities, entities[0]])  # an entity named twice is announced once
    metas = [await redis.hgetall(keys.live_meta(*entity)) for entity in entities]
    assert [(meta[b"v"], meta[b"p"]) for meta in metas] == [(b"5", b"2"), (b"1", b"1"), (b"1", b"1")]
    assert all(before <= int(meta[b"pt"]) <= time.time() for meta in metas)
    most = live.ttl + int(live.ttl * deps.cache.ttl_jitter)  # jittered (CACHE_TTL_JITTER)
    assert all(0 < ttl <= most for ttl in [await redis.ttl(keys.live_meta(*entity)) for entity in entities])
    if not TEST_REDIS_CLUSTER:
        assert [[_name(command) for command in pipeline] for pipeline in sent] == [["EVAL"]]


async def test_a_write_applied_unannounced_leaves_an_announced_one_pending(deps: Deps, redis: Redis) -> None:
    """Pending writes (meta `p`) keep readers from storing builds that may miss them. A write applied
    without an announcement (the views flush, or one whose announcement failed) was never counted there,
    so it must not take one off: another write announced meanwhile stays pending until it is applied."""
    live = deps.live
    entity = ("shout", 906_000_001)
    assert await live.announce([entity])
    unannounced = LiveOps()
    unannounced.incr(*entity, viewed=1)
    await live.apply(unannounced, announced=False)
    assert await redis.hget(keys.live_meta(*entity), "p") == b"1"
    announced = LiveOps()
    announced.incr(*entity, rating=1)
    await live.apply(announced, announced=True)
    assert await redis.hget(keys.live_meta(*entity), "p") == b"0"


async def test_an_announcement_never_applied_still_refuses_builds_noted_before_it(deps: Deps, redis: Redis) -> None:
    """A write announced and committed whose worker died before applying it: once its pending mark is
    older than PENDING_TIMEOUT, builds are stored again, but only those noted after the announcement. A
    reader that noted before it may have read SQL after the commit; its build is refused by the version
    the announcement moved."""
    from cache.live.structures import PENDING_TIMEOUT

    live = deps.live
    entity = 907_000_001
    before = await live.note("comment", "comment", [entity])
    assert await live.announce([("comment", entity)])
    await redis.hset(keys.live_meta("comment", entity), "pt", int(time.time()) - PENDING_TIMEOUT - 1)
    await live.build("comment", "comment", [(entity, ["body", "read before"])], before, structure="hash")
    assert not await redis.exists(structure_key("comment", entity, "comment"))
    after = await live.note("comment", "comment", [entity])
    await live.build("comment", "comment", [(entity, ["body", "read after"])], after, structure="hash")
    assert await redis.hget(structure_key("comment", entity, "comment"), "body") == b"read after"


async def test_an_announcement_redis_does_not_take_is_said_so() -> None:
    """An announcement Redis fails (counted as such) or that the open breaker keeps from Redis answers
    False: the writer then treats its live changes as lost (dropped, never changed in place)."""
    from telemetry import metrics

    async with redis_gone() as down:
        failed = metrics.REDIS_ERRORS.labels("live announce")._value.get()
        assert await LiveStore(down).announce([("shout", 1)]) is False  # asked, and failing
        assert metrics.REDIS_ERRORS.labels("live announce")._value.get() - failed == 1
        assert not down.available
        assert await LiveStore(down).announce([("shout", 1)]) is False  # the breaker open: not asked
        assert metrics.REDIS_ERRORS.labels("live announce")._value.get() - failed == 1


def test_an_unknown_live_structure_is_refused_by_name() -> None:
    """A rule naming a structure that has no key is a programming error, refused with the name in the
    message rather than written under some other key."""
    with pytest.raises(ValueError, match="unknown live structure 'comments:worst'"):
        structure_key("shout", 1, "comments:worst")
