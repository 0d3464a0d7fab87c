"""Reads straight on the driver (orm/driver.py): every statement sent there reads what a session reads, is
seen by the engine's statement listeners, gives its connection back (held for the next read, orm/held.py),
and a connection lost under it is not pooled again. A held connection is lent without a checkout, but never
one the server ended, one the pool's invalidation covers, or one idle too long whose ping fails. Reads on a
replica, and one read again on the primary, are in tests/drills/test_replicas.py."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from sqlalchemy import Select, event, func, literal, select, text
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.ext.asyncio import AsyncEngine

from cache import entities
from orm import Author, Shout
from orm.driver import DriverReads, SessionReads, reads
from orm.engine import make_engine, make_session_factory, open_connections, read_session
from orm.errors import is_unavailable
from orm.held import HoldingPool
from orm.seam import DriverSQLByShape, driver_sql
from resolvers import reaction_reads, topic_reads
from resolvers.deps import Deps
from resolvers.paging import kept_page
from resolvers.shout_query import NO_FILTERS, ShoutFilters
from resolvers.shout_reads import filtered, ordered
from telemetry import metrics
from tests.conftest import TEST_DATABASE_URL, Counter
from tests.helpers import until

IDS = {"ids": [*range(1, 40), 10**9]}
PAGES = ((15, 3), (15, 0))  # a page past the first (bounds as parameters), a first page (its limit in its text)


def _page(statement: Select[Any], params: dict[str, Any], limit: int, offset: int) -> tuple[Select[Any], dict[str, Any]]:
    paged, bounds = kept_page(statement, limit, offset, planned_once=True)
    return paged, {**params, **bounds}


def _statements() -> list[tuple[str, Select[Any], dict[str, Any]]]:
    """Each statement the driver reads, with parameters that select rows (an empty list too)."""
    lists = [(f"reactions {filters} {sort} {bounds}", *_page(reaction_reads._list_statement(filters, sort), params, *bounds))
             for filters, params in (((), {}), (("kinds",), {"kinds": ["COMMENT", "LIKE"]}),
                                     (("shout", "kinds"), {"shout": 2, "kinds": ["COMMENT"]}),
                                     (("shouts", "created_by"), {"shouts": ["no-such-slug"], "created_by": 3}),
                                     (("kinds",), {"kinds": []}))
             for sort in ("newest", "oldest", "like", "dislike") for bounds in PAGES]
    shout_lists = [(f"shouts {filters} {order} {desc}",
                    ordered(filtered(select(Shout.id), filters), order, desc).limit(15).offset(2), {})
                   for filters in (NO_FILTERS, ShoutFilters.of(topic="topic-1"),
                                   ShoutFilters.of(author="author-2", layouts=["article", "music"]),
                                   ShoutFilters.of(featured=False, after=0))
                   for order, desc in ((None, True), ("rating", True), ("comments_count", False),
                                       ("last_commented_at", True), ("views_count", True))]
    return [
        ("authors", entities._AUTHORS, IDS), ("topics", entities._TOPICS, IDS),
        ("communities", entities._COMMUNITIES, IDS), ("no ids", entities._AUTHORS, {"ids": []}),
        ("shouts", entities._SHOUTS_RELATED, IDS), ("listed shouts", entities._LISTED_SHOUTS_RELATED, IDS),
        ("shout ratings", *_page(reaction_reads._SHOUT_RATINGS, {"shout": 1}, 15, 3)),
        ("comment ratings", *_page(reaction_reads._COMMENT_RATINGS, {"comment": 1}, 50, 0)),
        ("reactions by id", reaction_reads._BY_IDS, {"ids": [*range(1, 60)]}), *lists,
        *((f"{lookup} by slug", statement, {"slug": slug}) for lookup, statement in entities._ID_OF_SLUG.items()
          for slug in ("author-2", "no-such-slug")), *shout_lists,
        ("every topic", topic_reads._EVERY_TOPIC, {}),
        ("authors by name", select(Author.id).where(
            func.lower(Author.name).like("%e\\_%", escape="\\") | Author.name.like("%e%"))
         .order_by(Author.id).limit(30), {}),
    ]


# Statements by ids with no ORDER BY: their rows come in whatever order the plan reads them, and the driver's
# array parameter and the session's IN list are planned apart. Once (a fresh clone's run) the fourth author
# read, one an earlier test had renamed, was author 4 from the driver and author 5 from the session. Compared
# in id order: the same rows, whatever order each plan read them in.
UNORDERED = frozenset({"authors", "topics", "communities", "no ids", "shouts", "listed shouts", "reactions by id"})


async def test_every_statement_on_the_driver_reads_what_a_session_reads(deps: Deps) -> None:
    rows_read = 0
    async with reads(deps.db) as driver, read_session(deps.db) as session:
        assert isinstance(driver, DriverReads)
        for name, statement, params in _statements():
            on_the_driver = await driver.rows(statement, params)
            in_a_session = await SessionReads(session).rows(statement, params)
            if name in UNORDERED:
                on_the_driver, in_a_session = (sorted(rows, key=lambda row: row["id"])
                                               for rows in (on_the_driver, in_a_session))
            assert on_the_driver == in_a_session, name
            rows_read += len(on_the_driver)
    assert rows_read > 400  # the control: the statements did select rows, of every kind of column


def _listing(author: str, order: str, limit: int, offset: int) -> Select[Any]:
    """A list of shouts' ids as a request builds it: its filter's value and bounds are the request's."""
    return ordered(filtered(select(Shout.id), ShoutFilters.of(author=author)), order, True).limit(limit).offset(offset)


async def test_statements_of_one_shape_compile_once_and_each_reads_its_own_values(deps: Deps) -> None:
    """A statement built per request is compiled once per shape (its cache key), and each read binds its own
    values: what a session reads, for every value. The control: another order is another shape."""
    values = [("author-2", 15, 2), ("author-3", 5, 0), ("author-5", 30, 1), ("no-such-author", 15, 0)]
    shapes = DriverSQLByShape(asyncpg_dialect(), size=8)
    texts = {shapes(_listing(author, "rating", limit, offset))[0] for author, limit, offset in values}
    assert len(texts) == 1 and len(shapes._shapes) == 1
    assert shapes(_listing("author-2", "comments_count", 15, 2))[0] not in texts
    assert len(shapes._shapes) == 2
    found = 0
    async with reads(deps.db) as driver, read_session(deps.db) as session:
        for order in ("rating", "comments_count"):
            for author, limit, offset in values:
                statement = _listing(author, order, limit, offset)
                on_the_driver = await driver.rows(statement, {})
                assert on_the_driver == await SessionReads(session).rows(statement, {}), (order, author)
                found += len(on_the_driver)
    assert found > 0  # the control: the values select rows


async def test_a_driver_read_is_seen_by_the_statement_listeners_and_gives_its_connection_back(
        engine: AsyncEngine) -> None:
    own = make_engine(TEST_DATABASE_URL, pool_size=1)  # an engine of its own: nothing else reads on it
    counter = Counter()
    event.listen(own.sync_engine, "before_cursor_execute", counter)
    in_use = metrics.DB_POOL_IN_USE._value.get()
    try:
        async with reads(make_session_factory(own)) as driver:
            rows = await driver.rows(entities._AUTHORS, {"ids": [1, 2]})
            # Back, held for the next read: checked out as far as the pool knows, in use for the metrics not.
            assert own.pool.checkedout() == 1 and metrics.DB_POOL_IN_USE._value.get() == in_use
            held = _parked(own)
    finally:
        await own.dispose()
    assert held.is_closed(), "disposing of the engine closes what its pool held"
    assert own.pool.checkedout() == 0 and metrics.DB_POOL_IN_USE._value.get() == in_use
    assert sorted(row["id"] for row in rows) == [1, 2]  # by id, in no order: the caller orders them
    assert counter.statements == ["SELECT author.id, author.\"user\", author.slug, author.name, author.pic, "
                                  "author.bio, author.about, author.links, author.seo, author.created_at, "
                                  "author.last_seen, author.updated_at, author.deleted_at \nFROM author \n"
                                  "WHERE author.id = ANY($1)"]


async def test_a_connection_lost_under_a_driver_read_is_not_pooled_again(engine: AsyncEngine) -> None:
    """A read whose connection dies under it fails as the database being unavailable (the API's
    SERVICE_UNAVAILABLE), and the next read gets a connection of its own, though the pool holds one and
    would not ping it (it was checked in moments ago)."""
    own = make_engine(TEST_DATABASE_URL, pool_size=1)
    try:
        async with reads(make_session_factory(own)) as driver:
            backend = select(func.pg_backend_pid().label("pid"))
            first = (await driver.rows(backend, {}))[0]["pid"]
            with pytest.raises(Exception) as lost:
                await driver.rows(select(func.pg_terminate_backend(func.pg_backend_pid()), literal(1)), {})
            assert is_unavailable(lost.value), repr(lost.value)
            after = (await driver.rows(backend, {}))[0]["pid"]
        assert after != first
    finally:
        await own.dispose()


def _parked(engine: AsyncEngine) -> asyncpg.Connection:
    """The driver connection `engine`'s pool holds last for reads on the driver."""
    pool = engine.sync_engine.pool
    assert isinstance(pool, HoldingPool) and pool._parked, "nothing held"
    return pool._parked[-1][0].driver_connection


def _checkouts(engine: AsyncEngine) -> list[int]:
    """Checkouts of `engine`'s pool from now on (a list that grows)."""
    seen: list[int] = []
    event.listen(engine.sync_engine, "checkout", lambda *_args: seen.append(1))
    return seen


_BACKEND = select(func.pg_backend_pid().label("pid"))


async def test_driver_reads_take_the_held_connection_without_a_checkout(engine: AsyncEngine) -> None:
    """Reads one after another go on one held connection, checked out once. Control: the pool that holds
    none (DB_HELD_FOR_READS=0) checks one out for every read."""
    for held_most, checkouts_expected in ((2, 1), (0, 5)):
        own = make_engine(TEST_DATABASE_URL, pool_size=2, held_for_reads=held_most)
        checkouts = _checkouts(own)
        try:
            async with reads(make_session_factory(own)) as driver:
                pids = {(await driver.rows(_BACKEND, {}))[0]["pid"] for _ in range(5)}
        finally:
            await own.dispose()
        assert (len(checkouts), len(pids)) == (checkouts_expected, 1), held_most


@pytest.mark.parametrize("takes_back", [True, False], ids=["holding-pool", "control-queue-pool-checkout"])
async def test_a_checkout_finding_no_idle_connection_takes_the_held_one_back(
        engine: AsyncEngine, takes_back: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one connection, held after a read: a session's checkout takes it back rather than open
    another (the pool does not grow), counted in use while the session has it. Control: the queue pool's own
    checkout, which knows nothing of what is held, opens a second connection."""
    if not takes_back:
        monkeypatch.setattr(HoldingPool, "_do_get", HoldingPool.__mro__[1]._do_get)
    own = make_engine(TEST_DATABASE_URL, pool_size=1)
    in_use = metrics.DB_POOL_IN_USE._value.get()
    try:
        factory = make_session_factory(own)
        async with reads(factory) as driver:
            held = (await driver.rows(_BACKEND, {}))[0]["pid"]
        async with read_session(factory) as session:
            pid = (await session.execute(_BACKEND)).scalar()
            assert metrics.DB_POOL_IN_USE._value.get() == in_use + 1
            grew = own.sync_engine.pool.overflow() > 0  # type: ignore[attr-defined]
    finally:
        await own.dispose()
    assert (pid == held, grew) == ((True, False) if takes_back else (False, True))
    assert metrics.DB_POOL_IN_USE._value.get() == in_use


async def test_a_held_connection_the_server_ended_is_not_lent(engine: AsyncEngine) -> None:
    """The server ends the held connection between two reads (a restart, an administrator): the next read
    goes on a new connection and succeeds, where lending it would have failed the read."""
    own = make_engine(TEST_DATABASE_URL, pool_size=2)
    try:
        async with reads(make_session_factory(own)) as driver:
            first = (await driver.rows(_BACKEND, {}))[0]["pid"]
            held = _parked(own)
            async with engine.connect() as other:
                await other.execute(text(f"SELECT pg_terminate_backend({first})"))
            await until(held.is_closed, "the driver to see its connection ended")
            assert (await driver.rows(_BACKEND, {}))[0]["pid"] != first
    finally:
        await own.dispose()


async def test_a_held_connection_idle_too_long_is_pinged_first(engine: AsyncEngine,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """One held longer than the engine's idle limit is pinged before it is lent, as the pool pings one idle
    that long, and one whose ping fails is not lent. Control: within the limit it is lent unpinged."""
    own = make_engine(TEST_DATABASE_URL, pool_size=2)
    try:
        async with reads(make_session_factory(own)) as driver:
            pinged: list[str] = []

            async def failing_ping(_connection: Any, query: str, *_args: Any) -> Any:
                pinged.append(query)
                raise ConnectionResetError("the ping found the socket dead")

            monkeypatch.setattr(asyncpg.Connection, "fetchval", failing_ping)  # the ping's, nothing else's
            for idle_seconds, lent in ((3600.0, True), (0.0, False)):
                own.sync_engine.pool.idle_seconds = idle_seconds  # type: ignore[attr-defined]
                first = (await driver.rows(_BACKEND, {}))[0]["pid"]
                pinged.clear()
                after = (await driver.rows(_BACKEND, {}))[0]["pid"]
                assert (after == first, pinged) == (lent, [] if lent else ["SELECT 1"]), idle_seconds
    finally:
        await own.dispose()


async def test_a_held_connection_the_pools_invalidation_covers_is_not_lent(engine: AsyncEngine) -> None:
    """A session's statement finds its connection dead (a disconnect): the pool takes every connection made
    before as suspect, the held one too, which is replaced though it is still open."""
    own = make_engine(TEST_DATABASE_URL, pool_size=2)
    try:
        await open_connections(own, 2)  # one to hold, and one idle for the session
        factory = make_session_factory(own)
        async with reads(factory) as driver:
            first = (await driver.rows(_BACKEND, {}))[0]["pid"]
            held = _parked(own)
            with pytest.raises(Exception):  # noqa: B017  # whatever the disconnect raises
                async with read_session(factory) as session:
                    await session.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
            assert not held.is_closed()
            assert (await driver.rows(_BACKEND, {}))[0]["pid"] != first
    finally:
        await own.dispose()


async def test_reads_go_through_a_session_where_the_driver_cannot_take_them(deps: Deps) -> None:
    """SQLite's reads go through a session, and a shared session's stay in it (cache/entities.py
    shared_session); on the driver there is nothing to share."""
    lite = make_engine("sqlite+aiosqlite://")
    try:
        async with reads(make_session_factory(lite)) as reading:
            assert isinstance(reading, SessionReads) and not reading.postgres
            assert await reading.rows(select(literal(7).label("seven")), {}) == [{"seven": 7}]
        async with entities.shared_session(make_session_factory(lite)) as shared, reads(shared) as reading:
            assert isinstance(reading, SessionReads)
    finally:
        await lite.dispose()
    async with entities.shared_session(deps.db) as shared:
        assert shared is deps.db


async def _plans(reading: Any, statement: Select[Any], params: dict[str, Any], times: int) -> dict[str, int]:
    """What PostgreSQL planned for `statement` read `times` times on this one connection: its prepared
    statement's generic and custom plans (pg_prepared_statements, PostgreSQL 14 and later)."""
    for _ in range(times):
        await reading.rows(statement, params)
    sql = driver_sql(statement, asyncpg_dialect())[0]
    found = await reading.rows(select(text("generic_plans, custom_plans")).select_from(text("pg_prepared_statements"))
                               .where(text("statement = :sql")), {"sql": sql})
    assert len(found) == 1, found
    return found[0]


async def test_a_first_page_is_planned_once_per_connection_and_a_later_page_at_every_read(
        engine: AsyncEngine) -> None:
    """A first page's limit is in its text (resolvers/paging.py): after PostgreSQL's five custom plans the
    connection keeps one plan. The controls, planned at every read: the same statement a page further (its
    LIMIT a parameter), and a first page filtered by kinds (resolvers/reaction_reads.py: a plan kept would guess
    how many reactions a kind has)."""
    own = make_engine(TEST_DATABASE_URL, pool_size=1)  # one connection: its prepared statements are read
    try:
        async with reads(make_session_factory(own)) as driver:
            first_page = await _plans(driver, *reaction_reads._list_page((), "newest", 20, 0), times=8)
            later_page, bounds = reaction_reads._list_page((), "newest", 20, 20)
            later = await _plans(driver, later_page, bounds, times=8)
            by_kinds, bounds = reaction_reads._list_page(("kinds",), "newest", 20, 0)
            kinds = await _plans(driver, by_kinds, {**bounds, "kinds": ["COMMENT"]}, times=8)
    finally:
        await own.dispose()
    assert first_page["generic_plans"] >= 3 and first_page["custom_plans"] <= 5, first_page
    assert later == kinds == {"generic_plans": 0, "custom_plans": 8}, (later, kinds)
