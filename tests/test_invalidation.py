"""From a committed write to a correct cache: at once after the commit, never on rollback, bulk
statements included, a failing Redis never failing the write, and the read-compute-write race closed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import select, update

from app.main import wire
from cache import keys
from cache.entities import ENTITY_KINDS, get_cached_author, get_cached_shouts
from cache.store import Cache
from orm import Author, Shout
from orm.stats import is_listed
from resolvers.deps import Deps
from resolvers.writes import transaction

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
    await asyncio.sleep(0.05)
    assert await _generation(redis, keys.tag_author(6)) == generation
    assert (await gql(AUTHOR, {"id": 6}))["data"]["get_author"] == before
    async with deps.db() as session:
        assert (await session.get(Author, 6)).name == before["name"]  # type: ignore[union-attr]


async def test_bulk_update_invalidates_the_whole_kind(deps: Deps, gql: Any) -> None:
    query = "{ load_shouts_by(options: {limit: 3}) { id title } }"
    shouts = (await gql(query))["data"]["load_shouts_by"]
    ids = [s["id"] for s in shouts]
    async with transaction(deps) as session:
        await session.execute(update(Shout).where(Shout.id.in_(ids)).values(title="Bulk title"))
    assert {s["title"] for s in (await gql(query))["data"]["load_shouts_by"]} == {"Bulk title"}


async def test_a_dead_redis_never_fails_a_write(engine: Any, settings: Any, redis: Redis, deps: Deps) -> None:
    dead = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    broken = wire(settings, engine, Cache(dead, breaker_seconds=30), auth=None)
    async with transaction(broken) as session:
        (await session.get(Author, 7)).bio = "written while Redis was down"  # type: ignore[union-attr]
    async with broken.db() as session:
        assert (await session.get(Author, 7)).bio == "written while Redis was down"  # type: ignore[union-attr]
    assert broken.cache._lost_invalidations  # remembered: the global epoch is bumped when Redis is back
    await dead.aclose()


async def test_lost_invalidations_bump_the_epoch_when_redis_is_back(cache: Cache, redis: Redis) -> None:
    await cache.cache_data("k:epoch", {"v": "old"}, tags=["t:epoch"])
    cache._lost_invalidations = True  # an INCR that never reached Redis
    assert await cache.get_cached_data("k:epoch", tags=["t:epoch"]) is None


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
