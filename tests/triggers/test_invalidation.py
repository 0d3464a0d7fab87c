"""From a committed write to a correct cache: at once after the commit, never on rollback, bulk
statements included, a failing Redis never failing the write, and the read-compute-write race closed."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select, update

from app.main import wire
from cache import invalidation, keys
from cache.entities import ENTITY_KINDS, get_cached_author, get_cached_shouts
from cache.live.structures import structure_key
from cache.response_capture import Capture
from cache.stamps import capture_stamp, parse_stamp
from cache.store import Cache
from orm import Author, Reaction, Shout
from orm.stats import is_listed
from resolvers.deps import Deps
from resolvers.writes import transaction
from tests.helpers import sink_of
from triggers.listeners import announce, publish_after_commit, settle
from triggers.live_rules import LIVE_BULK
from triggers.rules import BULK_MARKS

AUTHOR = "query($id: Int) { get_author(author_id: $id) { id name } }"


async def _generation(redis: Redis, tag: str) -> bytes | None:
    return await redis.get(keys.generation(tag))


async def test_a_commit_invalidates_before_the_writer_returns(deps: Deps, gql: Any) -> None:
    assert (await gql(AUTHOR, {"id": 5}))["data"]["get_author"]["name"]  # warm
    async with transaction(deps) as session:
        (await session.get(Author, 5)).name = "Renamed Five"  # type: ignore[union-attr]
    assert (await gql(AUTHOR, {"id": 5}))["data"]["get_author"]["name"] == "Renamed Five"


async def test_a_rollback_leaves_the_cache_untouched(deps: Deps, redis: Redis, gql: Any) -> None:
    before = (await gql(AUTHOR, {"id": 6}))["data"]["get_author"]
    generation = await _generation(redis, keys.tag_author(6))
    with pytest.raises(RuntimeError):
        async with transaction(deps) as session:
            (await session.get(Author, 6)).name = "Never Happened"  # type: ignore[union-attr]
            await session.flush()  # the triggers have recorded the change...
            raise RuntimeError("...and the transaction rolls back")
    other = await _generation(redis, keys.tag_author(7))
    async with transaction(deps) as session:  # a committed write after it: its invalidation must land
        (await session.get(Author, 7)).bio = "committed after the rollback"  # type: ignore[union-attr]
    await sink_of(deps).settled()
    assert await _generation(redis, keys.tag_author(7)) != other  # the signal: invalidation ran
    assert await _generation(redis, keys.tag_author(6)) == generation
    assert (await gql(AUTHOR, {"id": 6}))["data"]["get_author"] == before
    async with deps.db() as session:
        assert (await session.get(Author, 6)).name == before["name"]  # type: ignore[union-attr]


async def test_a_rolled_back_write_is_forgotten_when_the_session_goes_on(deps: Deps, redis: Redis) -> None:
    """One session, a rolled-back transaction, then a committed one: only the committed write reaches the
    cache and the subscribers (without the drop on rollback, the first record would ride on the commit)."""
    tag_six, tag_seven = keys.tag_author(6), keys.tag_author(7)
    await redis.set(keys.generation(tag_six), 100)
    await redis.set(keys.generation(tag_seven), 100)
    async with deps.db() as session:
        (await session.get(Author, 6)).name = "Never Happened"  # type: ignore[union-attr]
        publish_after_commit(session, [("test:rollback", b"never happened")])
        await session.flush()
        await session.rollback()
        (await session.get(Author, 7)).bio = "committed after a rollback"  # type: ignore[union-attr]
        await session.commit()
        await settle(session)
    assert await _generation(redis, tag_six) == b"100", "the rolled-back write was invalidated"
    assert await _generation(redis, tag_seven) != b"100"  # moved


async def test_a_savepoint_rollback_keeps_the_invalidation(deps: Deps, redis: Redis) -> None:
    """A write inside a rolled-back savepoint may have been read by the rest of the transaction: its
    invalidation is kept (invalidating too much is safe, too little is not)."""
    outer, inner = keys.tag_author(9), keys.tag_author(8)
    await redis.set(keys.generation(outer), 100)
    await redis.set(keys.generation(inner), 100)
    async with transaction(deps) as session:
        (await session.get(Author, 9)).bio = "before the savepoint"  # type: ignore[union-attr]
        await session.flush()
        savepoint = await session.begin_nested()
        (await session.get(Author, 8)).bio = "inside a savepoint"  # type: ignore[union-attr]
        await session.flush()
        await savepoint.rollback()
    assert await _generation(redis, outer) != b"100", "the committed write's invalidation was lost"
    assert await _generation(redis, inner) != b"100"


async def test_a_released_savepoint_waits_for_the_commit(deps: Deps, redis: Redis) -> None:
    """SQLAlchemy says `after_commit` for RELEASE SAVEPOINT too. Nothing is committed then: a write's
    invalidation applied there would let a reader store the old row under the new generation, a stale
    value until the next write (what the killed-master drill caught, once follows and comments went
    through a savepoint). The record waits for the transaction's own commit, whole."""
    before, inside = keys.tag_author(11), keys.tag_author(12)
    await redis.set(keys.generation(before), 100)
    await redis.set(keys.generation(inside), 100)
    async with deps.db() as session:
        (await session.get(Author, 11)).bio = "before the savepoint"  # type: ignore[union-attr]
        await session.flush()
        async with session.begin_nested():
            (await session.get(Author, 12)).bio = "inside a savepoint"  # type: ignore[union-attr]
        await settle(session)  # whatever the release scheduled has run
        assert await _generation(redis, before) == b"100", "invalidated before its transaction committed"
        assert await _generation(redis, inside) == b"100", "invalidated before its transaction committed"
        await session.commit()
        await settle(session)
    assert await _generation(redis, before) != b"100" and await _generation(redis, inside) != b"100"


async def test_a_rollback_withdraws_only_what_was_announced_and_forgets_its_savepoints(
        deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write rolled back before it announced anything withdraws nothing (no announcement to take back);
    one that announced withdraws once. Either way the session keeps no savepoint of the finished
    transaction (a session lives on after a rollback)."""
    from triggers.listeners import INFO_SAVEPOINTS

    withdrawn: list[Any] = []
    monkeypatch.setattr(sink_of(deps), "withdraw", withdrawn.append)
    async with deps.db() as session:
        shout_id, author_id = (await session.execute(select(Shout.id, Shout.created_by).where(is_listed())
                                                     .order_by(Shout.id).offset(5).limit(1))).one()
    async with deps.db() as session:
        for announced in (False, True):
            await session.begin()
            await session.begin_nested()
            session.add(Reaction(kind="COMMENT", shout=shout_id, created_by=author_id, body="rolled back"))
            await (announce(session) if announced else session.flush())
            await session.rollback()
            assert INFO_SAVEPOINTS not in session.sync_session.info
            assert len(withdrawn) == int(announced), announced
        await session.begin()  # and a commit through a released savepoint forgets it too
        async with session.begin_nested():
            (await session.get(Author, author_id)).bio = "committed through a savepoint"  # type: ignore[union-attr]
        await session.commit()
        assert INFO_SAVEPOINTS not in session.sync_session.info
        await settle(session)


async def test_a_session_without_a_sink_rolls_back_a_savepoint_keeping_its_messages(deps: Deps) -> None:
    """Sessions made without a sink (scripts, the adoption) record no savepoints; a savepoint they roll
    back after `publish_after_commit` leaves their messages alone instead of failing."""
    from orm.engine import make_session_factory
    from triggers.listeners import INFO_PENDING

    plain = make_session_factory(deps.db.kw["bind"])  # type: ignore[attr-defined]
    async with plain() as session:
        await session.begin()
        publish_after_commit(session, [("channel", b"kept")])
        savepoint = await session.begin_nested()
        await savepoint.rollback()
        assert session.sync_session.info[INFO_PENDING].messages == [("channel", b"kept")]
        await session.rollback()
    async with plain() as session, session.begin():  # and its savepoints and flushes record nothing
        await session.begin_nested()
        (await session.get(Author, 3)).bio = "no sink, nothing recorded"  # type: ignore[union-attr]
        await session.flush()
        assert INFO_PENDING not in session.sync_session.info


async def test_a_write_without_savepoints_or_with_a_statement_on_a_plain_table_records_only_what_it_did(
        deps: Deps) -> None:
    """A transaction keeps a savepoint record only for its savepoints; a bulk statement on a plain table
    (no mapped class: notification recipients) is executed and recorded as nothing, not refused."""
    from sqlalchemy import update as update_table

    from resolvers.events import RECIPIENTS
    from triggers.listeners import INFO_PENDING, INFO_SAVEPOINTS

    async with deps.db() as session, session.begin():
        await session.execute(update_table(RECIPIENTS).where(RECIPIENTS.c.author == -1).values(author=-1))
        assert INFO_SAVEPOINTS not in session.sync_session.info
        assert not session.sync_session.info.get(INFO_PENDING)


async def test_an_announced_write_that_rolls_back_lets_readers_store_again(
        deps: Deps, uncached_client: httpx.AsyncClient, sql_counter: Any) -> None:
    """A write announced before its commit (readers must not store builds meanwhile) that then rolls back
    withdraws its announcement: the thread is built and stored by the next read, not read from SQL on
    every read until the announcement times out (a minute)."""
    query = "query($s: Int!) { load_comments_branch(shout: $s, limit: 50) { id } }"
    async with deps.db() as session:
        shout_id, author_id = (await session.execute(select(Shout.id, Shout.created_by).where(is_listed())
                                                     .order_by(Shout.id).offset(3).limit(1))).one()
    async with deps.db() as session:
        await session.begin()
        session.add(Reaction(kind="COMMENT", shout=shout_id, created_by=author_id, body="never committed"))
        await announce(session)  # flushed and announced, as the writing path does just before its commit
        meta = keys.live_meta("shout", shout_id)
        assert int(await deps.cache.redis.hget(meta, "p") or 0) > 0
        await session.rollback()
    for _ in range(50):  # the withdrawal runs after the rollback, off the writer's path
        if int(await deps.cache.redis.hget(meta, "p") or 0) == 0:
            break
        await asyncio.sleep(0.02)
    async def read() -> list[int]:
        response = await uncached_client.post("/graphql", json={"query": query, "variables": {"s": shout_id}})
        return [c["id"] for c in response.json()["data"]["load_comments_branch"]]

    ids = await read()
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # the list cache misses; live structures stay
    sql_counter.reset()
    assert await read() == ids
    assert sql_counter.statements == [], "the thread was not stored: every read goes to SQL"


async def test_a_write_committed_without_announcing_drops_what_it_touched(
        deps: Deps, uncached_client: httpx.AsyncClient) -> None:
    """A commit that did not announce its entities first (a session used outside resolvers/writes) may race
    a reader's build, so its live changes are applied as drops, never in place: the thread is gone and the
    next read builds it again from SQL, with the new comment."""
    query = "query($s: Int!) { load_comments_branch(shout: $s, limit: 100) { body } }"
    async with deps.db() as session:
        shout_id, author_id = (await session.execute(select(Shout.id, Shout.created_by).where(is_listed())
                                                     .order_by(Shout.id).offset(4).limit(1))).one()
    await uncached_client.post("/graphql", json={"query": query, "variables": {"s": shout_id}})  # built
    thread = structure_key("shout", shout_id, "comments")
    meta = keys.live_meta("shout", shout_id)
    assert await deps.live.redis.hget(meta, "comments") is not None
    async with deps.db() as session:
        session.add(Reaction(kind="COMMENT", shout=shout_id, created_by=author_id, body="not announced"))
        await session.commit()
        await settle(session)
    assert await deps.live.redis.exists(thread) == 0 and await deps.live.redis.hget(meta, "comments") is None
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])
    response = await uncached_client.post("/graphql", json={"query": query, "variables": {"s": shout_id}})
    assert "not announced" in [c["body"] for c in response.json()["data"]["load_comments_branch"]]


async def test_bulk_update_invalidates_the_whole_kind(deps: Deps, gql: Any, redis: Redis) -> None:
    """A bulk statement names no rows: the whole kind's values, counters and live structures go."""
    query = "{ load_shouts_by(options: {limit: 3}) { id title } }"
    shouts = (await gql(query))["data"]["load_shouts_by"]
    ids = [s["id"] for s in shouts]
    epochs = {kind: await redis.get(keys.live_epoch(kind)) for kind in LIVE_BULK[Shout]}
    async with transaction(deps) as session:
        await session.execute(update(Shout).where(Shout.id.in_(ids)).values(title="Bulk title"))
    assert {s["title"] for s in (await gql(query))["data"]["load_shouts_by"]} == {"Bulk title"}
    for kind in BULK_MARKS[Shout]:  # every counter of the kinds a shout counts in is recounted
        assert b"all" in await redis.smembers(keys.revalidation_batch(kind)), kind
    for kind, before in epochs.items():  # and the live structures built before are dropped
        assert await redis.get(keys.live_epoch(kind)) != before, kind


async def test_reader_held_between_sql_and_cache_write_cannot_store_stale(
    deps: Deps, gql: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-compute-write race, forced: the reader has read the row, a writer commits and
    invalidates, then the reader stores what it read. The stale value must not be served."""
    author_id = 8
    kind = ENTITY_KINDS["author"]
    fetched, release = asyncio.Event(), asyncio.Event()

    async def held_fetch(session: Any, ids: Any) -> Any:
        rows = await kind.fetch(session, ids)  # the real SQL read
        fetched.set()
        await release.wait()  # held between the read and the cache write
        return rows

    monkeypatch.setitem(ENTITY_KINDS, "author", type(kind)(kind.name, kind.key_of, kind.tag_of, held_fetch))
    reader = asyncio.create_task(get_cached_author(author_id, cache=deps.cache, db=deps.db))
    await fetched.wait()
    monkeypatch.setitem(ENTITY_KINDS, "author", kind)
    async with transaction(deps) as session:
        (await session.get(Author, author_id)).name = "Fresh Name"  # type: ignore[union-attr]
    release.set()
    stale = await reader
    assert stale is not None and stale["name"] != "Fresh Name"  # what the reader read before the write
    assert (await gql(AUTHOR, {"id": author_id}))["data"]["get_author"]["name"] == "Fresh Name"


async def test_concurrent_misses_compute_once_across_workers(redis: Redis, engine: Any) -> None:
    """Two processes' caches (two Cache objects on one Redis) miss the same key together."""
    calls = 0

    async def slow() -> dict[str, int]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.2)
        return {"v": 1}

    workers = [Cache(redis), Cache(redis)]
    results = await asyncio.gather(*(w.cached_query("k:stampede", slow, tags=["t:s"]) for w in workers))
    assert results == [{"v": 1}, {"v": 1}]
    assert calls == 1


async def test_shout_lists_follow_publication_state(deps: Deps, gql: Any) -> None:
    query = "query($s: String) { get_shout(slug: $s) { id } }"
    async with deps.db() as session:
        slug = await session.scalar(select(Shout.slug).where(is_listed()).order_by(Shout.id.desc()).limit(1))
    assert (await gql(query, {"s": slug}))["data"]["get_shout"]
    async with transaction(deps) as session:
        shout = await session.scalar(select(Shout).where(Shout.slug == slug))
        assert shout is not None
        published_at, shout.published_at = shout.published_at, None
    assert (await gql(query, {"s": slug}))["data"]["get_shout"] is None
    ids = [s["id"] for s in (await gql("{ load_shouts_by(options: {limit: 100}) { id } }"))["data"]["load_shouts_by"]]
    assert shout.id not in ids
    assert (await get_cached_shouts([shout.id], cache=deps.cache, db=deps.db)) == [None]
    async with transaction(deps) as session:  # published again: back in the lists at once
        (await session.get(Shout, shout.id)).published_at = published_at  # type: ignore[union-attr]
    assert (await gql(query, {"s": slug}))["data"]["get_shout"] == {"id": shout.id}


async def test_graphql_writes_with_redis_down(engine: Any, settings: Any) -> None:
    """Registration stands without Redis; sign-in, which lives in Redis, says so clearly."""
    import httpx

    from app.main import create_app
    from auth.services import build_auth

    dead = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    broken = wire(settings, engine, Cache(dead, breaker_seconds=30), auth=build_auth(settings, dead))
    app = create_app(settings, deps=broken)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        variables = {"e": "redis-down@example.org", "p": "long password"}
        registered = (await http.post("/graphql", json={"variables": variables, "query": "mutation($e: String!, "
                                      "$p: String) { registerUser(email: $e, password: $p) { success author { id } } }"}
                                      )).json()
        assert registered["data"]["registerUser"]["success"] and registered["data"]["registerUser"]["author"]
        login = (await http.post("/graphql", json={"variables": variables, "query": "mutation($e: String!, "
                                 "$p: String!) { login(email: $e, password: $p) { token } }"})).json()
        assert login["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
    await dead.aclose()


async def _generations(redis: Redis) -> dict[bytes, bytes]:
    names = [k async for k in redis.scan_iter(match="gen:*", count=1000)]
    return dict(zip(names, await redis.mget(names), strict=True)) if names else {}


async def test_a_read_only_transaction_invalidates_nothing(deps: Deps, redis: Redis, gql: Any) -> None:
    """ORM reads run through the same event as bulk statements (do_orm_execute): only UPDATE and DELETE
    statements may count as bulk writes, or every read in a write's session would invalidate a kind."""
    await gql(AUTHOR, {"id": 5})
    before = await _generations(redis)
    async with transaction(deps) as session:
        assert (await session.execute(select(Author).where(Author.id < 10))).scalars().all()
        await session.execute(select(Shout.id).limit(3))
    await sink_of(deps).settled()
    assert await _generations(redis) == before
    assert deps.revalidator is not None and sum((await deps.revalidator.queue_depth()).values()) == 0


async def test_committed_writes_are_counted_per_row(deps: Deps) -> None:
    from telemetry import metrics

    counter = metrics.WRITES.labels("author", "update")
    before = counter._value.get()
    async with transaction(deps) as session:
        for author in (await session.scalars(select(Author).where(Author.id.in_([11, 12, 13])))).all():
            author.bio = f"bio {author.id}"
    assert counter._value.get() - before == 3


async def test_the_sink_keeps_no_finished_work(deps: Deps) -> None:
    """Each commit's invalidation runs as a task the sink keeps until it ends, then lets go: a long-lived
    worker must not accumulate them."""
    sink = sink_of(deps)
    for n in range(3):
        async with transaction(deps) as session:
            (await session.get(Author, 14)).bio = f"bio {n}"  # type: ignore[union-attr]
    await sink.settled()
    assert sink.running == 0  # each ended task let go (settled waits for them, not for the set to empty)


async def test_a_topic_moves_its_family_and_the_list_of_every_topic_is_checked_by_the_family(
        client: httpx.AsyncClient, deps: Deps, redis: Redis) -> None:
    """A topic's tag moves `topics` with it, whoever moves it (keys.covering), so the stamp of what read
    both names `topics` alone: the list of every topic is checked against a few generations, not one per
    topic, and a topic's tag moved on its own (the admin's invalidation) still refreshes it."""
    read = {"query": "{ get_topics_all { id slug } }"}
    stored = (await client.post("/graphql", json=read)).json()["data"]["get_topics_all"]
    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "HIT"
    stamps = [await redis.hget(key, "s") async for key in redis.scan_iter(match="response:*")]
    topics_stamp = next(parse_stamp(s) for s in stamps if s and keys.TAG_TOPICS in parse_stamp(s))
    assert not [tag for tag in topics_stamp if keys.covering(tag)], topics_stamp  # no topic:{id}
    assert len(topics_stamp) <= 4, topics_stamp

    family = await redis.get(keys.generation(keys.TAG_TOPICS))
    await invalidation.invalidate_topics_cache(deps.cache, stored[0]["id"])  # the member's tag alone
    assert await redis.get(keys.generation(keys.TAG_TOPICS)) != family
    assert (await client.post("/graphql", json=read)).headers["x-cache"] != "HIT"
    assert capture_stamp(Capture({"topics": b"1", "topic:1": b"2", "topic:x": b"3", "author:1": b"4"})) == (
        b"topics=1,topic:x=3,author:1=4")  # a member is a topic's id; other tags stay
