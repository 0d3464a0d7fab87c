"""Leaderboards where the random-write test rarely goes: views placed on a capped board by the flush
(a member rising in place, an outsider entering and pushing the lowest out), a vote moving the board of
the week it was cast in, and the API's week argument."""

from __future__ import annotations

import time

import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from cache import keys
from cache.live.boards import FLOOR, WEEK, board_query
from config.settings import Settings
from orm import Author, Reaction, Shout
from orm.stats import is_listed
from resolvers.writes import transaction
from tests.conftest import Counter
from tests.helpers import Api, board_equals_sql

CAP = 3
READ = "query($s: String!) { get_shout(slug: $s) { id } }"
LIKE = "mutation($s: Int!) { create_reaction(reaction: {kind: LIKE, shout: $s}) { reaction { id } } }"
COMMENT = "mutation($s: Int!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"a comment\"}) { error } }"
RATE = "mutation($a: String!) { rate_author(rated_slug: $a, value: 1) { error } }"
TOP = "query($o: ShoutsOrderBy!, $w: String) { load_shouts_top(order_by: $o, week: $w, limit: 5) { id } }"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"live_set_cap": CAP})


async def _listed(api: Api, count: int) -> list[tuple[int, str]]:
    async with api.deps.db() as session:
        rows = (await session.execute(select(Shout.id, Shout.slug).where(is_listed()).order_by(Shout.id)
                                      .limit(count))).all()
    return [(int(i), str(slug)) for i, slug in rows]


async def _view(api: Api, slug: str, readers: range) -> None:
    for reader in readers:
        await api(READ, {"s": slug}, headers={"user-agent": f"board-reader-{reader}"})
    await api.count_hit_reads()  # the reads answered from the response cache too


async def test_the_views_flush_places_totals_on_a_capped_board(api: Api, redis: Redis) -> None:
    deps = api.deps
    board = "shouts:views"
    week = keys.weekly_board(board, keys.week_of(time.time()))
    shouts = await _listed(api, 6)
    for name in (board, week):
        await deps.boards.top(name, 0, 1)  # built: the flush changes them in place from now on

    async def check() -> dict[str, float]:
        async with deps.db() as session:
            for name in (board, week):
                assert await board_equals_sql(session, redis, name) == 1, name
        return {m.decode(): s for m, s in await redis.zrevrange(keys.leaderboard(board), 0, -1, withscores=True)}

    top = await check()
    floor = top[FLOOR]
    # An outsider viewed past the floor enters; the board keeps CAP members and raises its floor.
    outsider_id, outsider = next((i, s) for i, s in shouts if keys.member(i) not in top)
    await _view(api, outsider, range(int(floor) + 2))
    await deps.views.flush()
    top = await check()
    assert keys.member(outsider_id) in top and len(top) == CAP + 1
    # A member viewed again rises in place (ZADD GT).
    before = top[keys.member(outsider_id)]
    await _view(api, outsider, range(100, 103))
    await deps.views.flush()
    top = await check()
    assert top[keys.member(outsider_id)] == before + 3
    served = [s["id"] for s in await api(TOP, {"o": "views_count", "w": "current"})]
    assert served[0] == outsider_id
    # Views of a shout that is not public (counted before its withdrawal) are written, never ranked.
    async with deps.db() as session:
        hidden = await session.scalar(select(Shout.id).where(~is_listed()).limit(1))
    assert hidden is not None
    for reader in range(int(top[FLOOR]) + 5):
        await deps.views.count(hidden, f"hidden-reader-{reader}")
    assert await deps.views.flush() == 1
    assert keys.member(hidden) not in {m.decode() for m in await redis.zrange(keys.leaderboard(board), 0, -1)}
    await check()


async def test_a_vote_moves_the_board_of_the_week_it_was_cast_in(api: Api, redis: Redis) -> None:
    deps = api.deps
    user = await api.user()
    (shout_id, _), = await _listed(api, 1)
    now = time.time()
    this_week = keys.weekly_board("shouts:rating", keys.week_of(now))
    last_week = keys.weekly_board("shouts:rating", keys.week_of(now - WEEK))
    for name in (this_week, last_week):
        await deps.boards.top(name, 0, 1)
    vote = (await api(LIKE, {"s": shout_id}, user))["reaction"]["id"]
    async with transaction(deps) as session:  # the vote is dated back a week, through the triggers
        reaction = await session.get(Reaction, vote)
        assert reaction is not None
        reaction.created_at -= WEEK
    async with deps.db() as session:
        for name in (this_week, last_week):
            assert await board_equals_sql(session, redis, name) == 1, name
    last = keys.week_of(now - WEEK)
    assert shout_id in [s["id"] for s in await api(TOP, {"o": "rating", "w": last})]


async def test_a_vote_a_comment_and_a_rating_move_their_leaders_on_the_all_time_boards(
        api: Api, redis: Redis) -> None:
    """Each write moves its target on the all-time board that ranks the counter it changes, built before
    it (where the random-write test rarely reaches a board's few members): a vote on `shouts:rating`, a
    comment on `shouts:comments`, an author's rating on `authors:rating`; each board still the top of SQL."""
    deps = api.deps
    user = await api.user()
    boards = ("shouts:rating", "shouts:comments", "authors:rating")
    for name in boards:
        await deps.boards.top(name, 0, 1)

    async def leaders() -> dict[str, tuple[int, float]]:
        found = {}
        for name in boards:
            ranked = await redis.zrevrange(keys.leaderboard(name), 0, -1, withscores=True)
            member, score = next((m.decode(), s) for m, s in ranked if m.decode() != FLOOR)
            found[name] = (int(member), score)
        return found

    before = await leaders()
    async with deps.db() as session:
        rated = await session.scalar(select(Author.slug).where(Author.id == before["authors:rating"][0]))
    assert (await api(LIKE, {"s": before["shouts:rating"][0]}, user))["reaction"]["id"]
    assert (await api(COMMENT, {"s": before["shouts:comments"][0]}, user))["error"] is None
    assert (await api(RATE, {"a": rated}, user))["error"] is None
    after = await leaders()
    assert {name: score - before[name][1] for name, (_, score) in after.items()} == dict.fromkeys(boards, 1)
    async with deps.db() as session:
        for name in boards:
            assert await board_equals_sql(session, redis, name) == 1, name


@pytest.mark.parametrize(("order", "week"), [
    ("rating", "2026-W99"), ("rating", "26-W01"), ("rating", "next week"), ("last_commented_at", None),
    ("rating", keys.week_of(time.time() + 2 * WEEK)), ("rating", keys.week_of(time.time() - 60 * WEEK)),
])
async def test_a_week_out_of_reach_is_refused(api: Api, order: str, week: str | None) -> None:
    assert await api.error(TOP, {"o": order, "w": week}) == "BAD_USER_INPUT"


AROUND = """query($a: Int!, $r: Int) {
  load_authors_around(author_id: $a, radius: $r) { place score author { id } }
}"""


async def test_around_an_author_are_their_neighbours_on_the_board_with_their_scores(
        api: Api, redis: Redis, sql_counter: Counter) -> None:
    """Seed 001's "around me" and a member's score (ZREVRANK, ZSCORE, ZREVRANGE): the places and ratings of
    the authors `radius` above and below one equal SQL's, at the top (read from the board, no SQL) and far
    below the board's capped part (from SQL); a rating moves the answer at once; bad input is refused."""
    async with api.deps.db() as session:
        ranked = [(int(i), int(s)) for i, s in (await session.execute(board_query("authors:rating")(None))).all()]

    def expected(place: int, radius: int) -> list[dict[str, object]]:  # place: 0-based
        start = max(place - radius, 0)
        return [{"place": n + 1, "score": score, "author": {"id": author}}
                for n, (author, score) in enumerate(ranked[start:place + radius + 1], start)]

    top = ranked[0][0]
    assert await api(AROUND, {"a": top, "r": 2}) == expected(0, 2)
    board = [m for m, _ in await redis.zrevrange(keys.leaderboard("authors:rating"), 0, -1, withscores=True)]
    exact = board.index(FLOOR.encode())  # the members above the floor (a tie with the floor is not exact)
    assert exact >= 1
    sql_counter.reset()
    assert await api(AROUND, {"a": top, "r": exact - 1}) == expected(0, exact - 1)
    assert sql_counter.count == 0  # above the floor, the authors cached: Redis only
    far = len(ranked) // 2
    assert far > CAP + 2
    assert await api(AROUND, {"a": ranked[far][0], "r": 2}) == expected(far, 2)  # below the floor: SQL

    assert (await api(AROUND, {"a": top, "r": 0}))[0]["score"] == ranked[0][1]
    rater = await api.user()
    async with api.deps.db() as session:
        slug = await session.scalar(select(Author.slug).where(Author.id == top))
    assert (await api(RATE, {"a": slug}, rater))["error"] is None
    assert (await api(AROUND, {"a": top, "r": 0}))[0]["score"] == ranked[0][1] + 1  # never a kept answer
    assert await api(AROUND, {"a": (await api.user()).id, "r": 0}) != []  # a newcomer has a place too

    assert await api.error(AROUND, {"a": top, "r": -1}) == "BAD_USER_INPUT"
    assert await api.error(AROUND, {"a": top, "r": 1000}) == "BAD_USER_INPUT"
    assert await api.error(AROUND, {"a": 987_654_321, "r": 1}) == "NOT_FOUND"
