"""Composites (cache/composite.py): a page kept whole with its shouts, an entity with its slug, checked by
their own stamp inside Redis; a write to any part makes them a miss, and a response built on a composite
depends on its parts as it would on the parts themselves."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from cache import keys, response_capture
from cache.composite import cached_composite, read_composite
from cache.redis.client import make_redis
from cache.stamps import KeptDecoded, capture_stamp, parse_stamp
from cache.store import MISSING, Cache
from devtools.services import RedisServer
from orm import Author, Shout
from orm.stats import is_listed
from resolvers.deps import Deps
from resolvers.writes import transaction

PAGE = "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { id name } } }"
OPTIONS = {"o": {"limit": 7, "offset": 3}}


async def _composites(redis: Redis) -> list[bytes]:
    return [key async for key in redis.scan_iter(match="composite:*")]


async def test_a_page_is_kept_whole_under_the_stamps_of_its_list_its_shouts_and_their_authors(
        uncached_client: httpx.AsyncClient, cache: Cache, redis: Redis) -> None:
    first = (await uncached_client.post("/graphql", json={"query": PAGE, "variables": OPTIONS})).json()
    shouts = first["data"]["load_shouts_by"]
    ids, authors = [s["id"] for s in shouts], {a["id"] for s in shouts for a in s["authors"]}
    pages = [k for k in await _composites(redis) if k.startswith(b"composite:shouts:")]
    assert len(pages) == 1 and pages[0].endswith(b":cards-authors")  # the selection shows authors, not topics
    stamp = (await redis.get(pages[0])).partition(b"|")[0]
    assert {keys.GLOBAL_TAG, keys.TAG_SHOUTS, *(keys.tag_shout(i) for i in ids),
            *(keys.tag_author(a) for a in authors)} <= set(parse_stamp(stamp))
    assert 0 < await redis.ttl(pages[0])
    found = await read_composite(cache, pages[0].decode())
    assert [s["id"] for s in found["cards"]] == ids
    assert authors <= {a["id"] for a in found["authors"]} and "topics" not in found


async def test_a_warm_page_brings_its_authors_along_and_a_page_without_them_does_not(
        uncached_client: httpx.AsyncClient, redis: Redis, monkeypatch: Any) -> None:
    """A warm page's authors come in its composite: nothing loads them again. A selection without
    authors has a composite of its own shape, whose stamp no author's write moves."""
    import schema.context

    loaded: list[list[int]] = []
    load_authors = schema.context.get_cached_authors

    async def counted(ids: list[int], **kwargs: Any) -> list[Any]:
        loaded.append(ids)
        return await load_authors(ids, **kwargs)

    body = {"query": PAGE, "variables": OPTIONS}
    first = (await uncached_client.post("/graphql", json=body)).json()
    monkeypatch.setattr(schema.context, "get_cached_authors", counted)
    warm = (await uncached_client.post("/graphql", json=body)).json()
    assert warm == first and loaded == []
    bare = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id } }", "variables": OPTIONS}
    assert [s["id"] for s in (await uncached_client.post("/graphql", json=bare)).json()["data"]["load_shouts_by"]] \
        == [s["id"] for s in first["data"]["load_shouts_by"]]
    shapes = sorted(k.rpartition(b":")[2] for k in await _composites(redis) if k.startswith(b"composite:shouts:"))
    assert shapes == [b"cards", b"cards-authors"]
    (plain,) = [k for k in await _composites(redis) if k.endswith(b":cards")]
    assert not any(tag.startswith("author:") for tag in parse_stamp((await redis.get(plain)).partition(b"|")[0]))


async def test_a_write_to_one_part_makes_the_composite_a_miss(deps: Deps, uncached_client: httpx.AsyncClient,
                                                              redis: Redis) -> None:
    async with deps.db() as session:
        shout_id, slug = (await session.execute(select(Shout.id, Shout.slug).where(is_listed())
                                                .order_by(Shout.id).limit(1))).one()
    read = {"query": "query($s: String) { get_shout(slug: $s) { title } }", "variables": {"s": slug}}
    await uncached_client.post("/graphql", json=read)
    key = keys.composite(keys.shout_slug(slug))
    assert await read_composite(deps.cache, key) is not MISSING
    async with transaction(deps) as session:
        (await session.get(Shout, shout_id)).title = "A new title"  # type: ignore[union-attr]
    assert await read_composite(deps.cache, key) is MISSING  # its stamp named the shout
    again = (await uncached_client.post("/graphql", json=read)).json()
    assert again["data"]["get_shout"]["title"] == "A new title"


async def test_a_response_built_on_a_composite_depends_on_its_parts(deps: Deps, client: httpx.AsyncClient,
                                                                   uncached_client: httpx.AsyncClient) -> None:
    """The composite is read whole (a hit), the response stored: retitling a shout and renaming an author
    of one (both parts of the composite, the authors carried along) each make the stored response a miss."""
    await uncached_client.post("/graphql", json={"query": PAGE, "variables": OPTIONS})  # the composite kept
    body = {"query": PAGE, "variables": OPTIONS}
    client.cookies.clear()
    stored = await client.post("/graphql", json=body)
    assert stored.headers["x-cache"] == "MISS"
    assert (await client.post("/graphql", json=body)).headers["x-cache"] == "HIT"
    first = stored.json()["data"]["load_shouts_by"][0]
    async with transaction(deps) as session:
        (await session.get(Shout, first["id"])).title = "Retitled"  # type: ignore[union-attr]
    after = await client.post("/graphql", json=body)
    assert after.headers["x-cache"] == "MISS"
    assert after.json()["data"]["load_shouts_by"][0]["title"] == "Retitled"

    assert (await client.post("/graphql", json=body)).headers["x-cache"] == "HIT"
    async with transaction(deps) as session:
        (await session.get(Author, first["authors"][0]["id"])).name = "Renamed"  # type: ignore[union-attr]
    renamed = await client.post("/graphql", json=body)
    assert renamed.headers["x-cache"] == "MISS"
    assert renamed.json()["data"]["load_shouts_by"][0]["authors"][0]["name"] == "Renamed"


async def test_nothing_is_kept_from_a_computation_that_read_the_viewer_or_saw_no_redis(cache: Cache,
                                                                                      redis: Redis) -> None:
    async def viewer_shaped() -> list[int]:
        response_capture.viewer_read()
        await cache.get_many([keys.author_id(1)], [[keys.tag_author(1)]])
        return [1]

    assert await cached_composite(cache, keys.composite("test:viewer"), viewer_shaped) == [1]
    assert await redis.exists(keys.composite("test:viewer")) == 0

    async def read_nothing() -> list[int]:
        return [2]  # no stamp to keep it under

    assert await cached_composite(cache, keys.composite("test:bare"), read_nothing) == [2]
    assert await redis.exists(keys.composite("test:bare")) == 0


async def test_a_page_keeps_cards_and_a_list_asking_for_the_text_still_gets_it(
        deps: Deps, uncached_client: httpx.AsyncClient, redis: Redis) -> None:
    """The text is most of a shout and no list of the client shows it: a page's composite leaves it out,
    and a list that asks for it is answered from the full shouts."""
    listed = (await uncached_client.post("/graphql", json={
        "query": "{ load_shouts_by(options: {limit: 4, offset: 11}) { id slug body } }"})).json()
    shouts = listed["data"]["load_shouts_by"]
    async with deps.db() as session:
        texts = dict((await session.execute(select(Shout.id, Shout.body)
                                            .where(Shout.id.in_([s["id"] for s in shouts])))).all())
    assert [s["body"] for s in shouts] == [texts[s["id"]] for s in shouts]
    assert all(s["body"] for s in shouts)
    pages = [k for k in await _composites(redis) if k.startswith(b"composite:shouts:")]
    kept = (await read_composite(deps.cache, pages[0].decode()))["cards"]
    assert [s["id"] for s in kept] == [s["id"] for s in shouts]
    assert not any("body" in s for s in kept)


async def test_after_a_lost_invalidation_no_composite_and_no_stored_response_is_trusted(
        deps: Deps, client: httpx.AsyncClient, engine: Any) -> None:
    """A write whose invalidation never reached Redis (here: a row changed behind the cache's back, then
    the loss recorded, as the sink records one) leaves values stamped under generations that still match:
    once Redis answers again, reads bump the epoch before trusting anything, composites and stored
    responses included."""
    from sqlalchemy import text

    read = {"query": "query($s: String) { get_author(slug: $s) { name } }", "variables": {"s": "author-4"}}
    client.cookies.clear()
    before = await client.post("/graphql", json=read)
    assert (await client.post("/graphql", json=read)).headers["x-cache"] == "HIT"
    key = keys.composite(keys.author_slug("author-4"))
    assert await read_composite(deps.cache, key) is not MISSING
    async def lose_a_rename(name: str) -> None:
        async with engine.begin() as connection:  # no ORM session: no trigger sees it
            await connection.execute(text("UPDATE author SET name = :n WHERE slug = 'author-4'"), {"n": name})
        deps.cache.guard.breaker_seconds = 0  # the breaker's window has passed: Redis is tried again
        deps.cache.lose(RuntimeError("the invalidation did not reach Redis"), "invalidation")

    await lose_a_rename("Changed unseen")
    after = await client.post("/graphql", json=read)  # the stored response first
    assert after.headers["x-cache"] == "MISS"
    assert after.json()["data"]["get_author"]["name"] == "Changed unseen" != before.json()["data"]["get_author"]["name"]
    assert await read_composite(deps.cache, key) is not MISSING  # kept again, from the database
    await lose_a_rename("Changed unseen again")
    assert await read_composite(deps.cache, key) is MISSING  # then the composite first


async def test_a_composite_read_again_as_the_same_bytes_is_not_parsed_again(
        deps: Deps, uncached_client: httpx.AsyncClient, redis: Redis) -> None:
    body = {"query": PAGE, "variables": OPTIONS}
    await uncached_client.post("/graphql", json=body)
    (key,) = [k.decode() for k in await _composites(redis) if k.startswith(b"composite:shouts:")]
    first = await read_composite(deps.cache, key)
    assert await read_composite(deps.cache, key) is first  # the same bytes: the same value, not parsed
    async with transaction(deps) as session:
        (await session.get(Shout, first["cards"][0]["id"])).title = "Parsed again"  # type: ignore[union-attr]
    assert await read_composite(deps.cache, key) is MISSING
    await uncached_client.post("/graphql", json=body)
    again = await read_composite(deps.cache, key)
    assert again is not first and again["cards"][0]["title"] == "Parsed again"
    nothing_kept = KeptDecoded(0)  # COMPOSITES_KEPT_DECODED=0: every read parses
    raw = await redis.get(key)
    assert nothing_kept.decode(key, raw)[1] is not nothing_kept.decode(key, raw)[1]
    assert nothing_kept.items() == []


READERS_OF_COMPOSITES = [
    """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title body slug cover created_at
       authors { id slug name bio pic stat { shouts followers } } created_by { id name }
       topics { id slug title stat { shouts } } main_topic { id slug title } community { id slug }
       stat { rating comments_count viewed last_commented_at } } }""",
    '{ load_shouts_with_topic(slug: "topic-1", options: {limit: 5}) { id authors { id } main_topic { slug } } }',
    '{ load_shouts_authored_by(slug: "author-2", options: {limit: 5}) { id topics { id } } }',
    "{ get_topics_all { id slug title body pic stat { shouts followers authors } } }",
    "{ get_authors_all { id slug name bio stat { shouts followers } } }",
    '{ get_author(slug: "author-2") { id slug name stat { shouts } } get_topic(slug: "topic-1") { id title } }',
]


async def test_what_the_readers_of_composites_are_handed_they_leave_as_it_was(
        deps: Deps, uncached_client: httpx.AsyncClient) -> None:
    """Decoded composites are shared by every reader in a worker: after every reader of them ran on them
    twice (the second time handed the kept values), each kept value is still what its bytes decode to."""
    from cache.stamps import decode

    for _ in range(2):
        for query in READERS_OF_COMPOSITES:
            answer = (await uncached_client.post("/graphql", json={"query": query, "variables": OPTIONS})).json()
            assert "errors" not in answer, answer
    kept = deps.cache.decoded.items()
    assert {key.split(":")[1] for key, _, _ in kept} >= {"shouts", "topics", "authors"}
    for key, raw, data in kept:
        assert decode(raw)[1] == data, key


async def test_composite_reads_are_counted_as_value_reads_of_the_composite_family(
        uncached_client: httpx.AsyncClient, cache: Cache, redis: Redis) -> None:
    """`discours_cache_reads{layer="value", family="composite"}` counts each composite lookup as a hit or a
    miss (the dashboards' composite hit ratio reads these; the mutation pass found nothing checked them)."""
    from prometheus_client import REGISTRY

    def counted(result: str) -> float:
        return REGISTRY.get_sample_value("discours_cache_reads_total",
                                         {"layer": "value", "family": "composite", "result": result}) or 0.0

    before = {result: counted(result) for result in ("hit", "miss")}
    await uncached_client.post("/graphql", json={"query": PAGE, "variables": OPTIONS})  # made: a miss
    page = next(k for k in await _composites(redis) if k.startswith(b"composite:shouts:")).decode()
    assert await read_composite(cache, page) is not MISSING  # read again: a hit
    assert counted("miss") - before["miss"] >= 1
    assert counted("hit") - before["hit"] == 1


async def _stored(cache: Cache, key: str, tag: str) -> dict[str, Any]:
    """A composite computed from one cached read (of a value under `tag`), kept under that read's stamp."""
    # the value holds a '|', as titles do: the stamp ends at the first one
    await cache.cache_data(f"test:part:{tag}", {"part": tag, "title": "Left | Right"}, tags=[tag])

    async def compute() -> dict[str, Any]:
        (part,), _ = await cache.get_many([f"test:part:{tag}"], [[tag]])
        return {"whole": part}

    return await cached_composite(cache, key, compute)


@pytest.mark.parametrize("path", ["one script", "two round trips"])
async def test_a_composite_is_a_hit_while_its_stamp_is_current_and_a_miss_once_a_part_moved(
        path: str, cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways of reading a composite answer alike: the script inside Redis (one server), and the value
    then its generations (what a Redis Cluster does, its generations living in other slots; taken here on
    one server, where it works as well, so that a single-server run checks it too)."""
    if path == "two round trips":
        monkeypatch.setattr("cache.composite.is_cluster", lambda redis: True)
    key, tag = keys.composite("test:whole"), keys.tag_author(77)
    assert await read_composite(cache, key) is MISSING  # never stored
    made = await _stored(cache, key, tag)
    assert made == {"whole": {"part": tag, "title": "Left | Right"}}
    assert await read_composite(cache, key) == made
    await cache.invalidate_tags([keys.tag_author(78)])  # another tag: still current
    assert await read_composite(cache, key) == made
    await cache.invalidate_tags([tag])
    assert await read_composite(cache, key) is MISSING


async def test_on_one_server_a_composite_read_is_one_round_trip(redis_server: RedisServer) -> None:
    """The module's promise: one command from the client (the script, which reads the value and its
    generations inside Redis). Counted on a Redis of the test's own."""
    client = make_redis(redis_server.url)
    try:
        cache, key = Cache(client), keys.composite("test:counted")
        made = await _stored(cache, key, keys.tag_topic(5))
        before = await _commands(client)
        assert await read_composite(cache, key) == made
        after = await _commands(client)
        sent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
        sent.pop("info", None)  # the counting itself
        assert sent == {"evalsha": 1, "get": 1, "mget": 1}, sent  # GET and MGET: inside the script
    finally:
        await client.aclose()


async def test_a_composite_read_that_redis_fails_is_a_miss_and_only_an_outage_trips_the_breaker(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    """Redis failing under a composite read, by an error answer (the key of another type) or by going away:
    the read answers MISSING (the caller computes from the database), reports nothing the response cache
    could keep, and counts `discours_redis_errors_total{during="composite read"}`. Going away trips the
    breaker; an error answer is a bug, logged as an error with the composite read's name and the error, the
    breaker left closed."""
    from prometheus_client import REGISTRY

    def errors() -> float:
        return REGISTRY.get_sample_value("discours_redis_errors_total", {"during": "composite read"}) or 0.0

    async def failed_read(cache: Cache, key: str) -> None:
        capture, token = response_capture.begin()
        try:
            assert await read_composite(cache, key) is MISSING
        finally:
            response_capture.end(token)
        assert capture_stamp(capture) is None  # what is computed now is not kept

    answering, going = make_redis(redis_server.url), make_redis(redis_server.url)  # a breaker each
    try:
        cache = Cache(answering, breaker_seconds=30)
        await answering.hset(keys.composite("test:a-hash"), "field", "value")
        before = errors()
        with caplog.at_level("WARNING"):
            await failed_read(cache, keys.composite("test:a-hash"))
        assert cache.available and errors() - before == 1
        assert not [r for r in caplog.records if "redis unavailable" in r.getMessage()]
        (bug,) = [r for r in caplog.records if "a bug" in r.getMessage()]
        assert bug.levelname == "ERROR" and "composite read" in bug.getMessage() and "WRONGTYPE" in bug.getMessage()

        cache, key = Cache(going, breaker_seconds=30), keys.composite("test:failing")
        await _stored(cache, key, keys.tag_topic(6))
        redis_server.stop()
        await failed_read(cache, key)
        assert not cache.available and errors() - before == 2
        await failed_read(cache, key)  # the breaker is open: Redis is not tried
        assert errors() - before == 2
    finally:
        await answering.aclose()
        await going.aclose()


async def _commands(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
