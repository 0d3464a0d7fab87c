"""The read path through the cache against real Redis: zero SQL on a warm read, the seed's key names,
TTLs where the seeds give one, and the generation stamp that refuses late (stale) values."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from sqlalchemy import event, select

from app.main import create_app
from cache import entities, keys, store
from cache.fills import Lease
from cache.generations import CacheStats
from cache.redis.client import RedisUnavailable, make_redis
from cache.redis.limits import BATCH
from cache.stamps import KeptDecoded, capture_stamp, parse_stamp, stamp_parts
from cache.store import MISSING, Cache
from devtools.services import RedisServer
from orm import ShoutAuthor, ShoutTopic, Topic
from orm.driver import DriverReads, SessionReads, reads
from orm.engine import read_session
from resolvers.deps import Deps
from telemetry import metrics
from tests.conftest import TEST_REDIS_CLUSTER, single_redis
from tests.helpers import pipelines_sent, until

SHOUTS_PAGE = """
query($options: LoadShoutsOptions) {
  load_shouts_by(options: $options) {
    id title slug main_topic { id slug title }
    authors { id slug name stat { shouts followers } }
    topics { id slug stat { shouts authors followers } }
    created_by { id slug } community { id slug }
    stat { rating comments_count viewed last_commented_at }
  }
}
"""


async def test_warm_entity_and_list_caches_cost_no_sql(uncached_client: httpx.AsyncClient, cache: Cache,
                                                       sql_counter: Any) -> None:
    """The tier under the response cache on its own: the second read executes GraphQL again (X-Cache:
    BYPASS) and every value it needs comes from Redis, with no miss and no SQL statement."""
    request = {"query": SHOUTS_PAGE, "variables": {"options": {"limit": 10, "order_by": "rating"}}}
    sql_counter.reset()
    first = await uncached_client.post("/graphql", json=request)
    assert "errors" not in first.json() and len(first.json()["data"]["load_shouts_by"]) == 10
    assert sql_counter.count > 0
    sql_counter.reset()
    hits, misses = cache.stats.hits, cache.stats.misses
    second = await uncached_client.post("/graphql", json=request)
    assert second.headers["x-cache"] == "BYPASS"
    assert second.json() == first.json()
    assert sql_counter.count == 0, sql_counter.statements
    assert cache.stats.misses == misses and cache.stats.hits > hits


async def test_page_of_shouts_costs_constant_sql(gql: Any, sql_counter: Any, redis: Redis) -> None:
    """A cold page of 5 and a cold page of 25 shouts cost the same number of statements."""
    costs = []
    for limit in (5, 25):
        await redis.flushdb()
        sql_counter.reset()
        result = await gql(SHOUTS_PAGE, {"options": {"limit": limit, "offset": 40}})
        assert len(result["data"]["load_shouts_by"]) == limit
        costs.append(sql_counter.count)
    # The list, the shouts (rows, authors, topics, stats), the authors, topics and communities of the page.
    assert costs[0] == costs[1], costs
    assert costs[0] <= 12, costs


async def test_a_cold_page_reads_only_its_own_rows(gql: Any, sql_counter: Any, cache: Cache) -> None:
    """Cold entity and list caches (the global epoch bumped) over live counters: a page of 20 or 100
    costs at most 6 statements, and none of them aggregates (counts come from the live counters)."""
    for limit in (20, 100):
        await gql(SHOUTS_PAGE, {"options": {"limit": limit, "offset": 10}})  # counters built
        await cache.invalidate_tags([keys.GLOBAL_TAG])
        sql_counter.reset()
        result = await gql(SHOUTS_PAGE, {"options": {"limit": limit, "offset": 10}})
        assert "errors" not in result and len(result["data"]["load_shouts_by"]) == min(limit, 140)
        assert sql_counter.count <= 6, sql_counter.statements
        aggregates = [s for s in sql_counter.statements if "GROUP BY" in s or "count(" in s.lower()]
        assert not aggregates, aggregates


async def test_a_cold_page_of_reactions_reads_them_and_their_stats_in_one_statement(
        gql: Any, sql_counter: Any, cache: Cache) -> None:
    """The newest reactions with their stats, authors and shouts, everything cold (the global epoch bumped):
    the reactions and their stats in one statement, then the authors and the shouts (on PostgreSQL with their
    authors and topics): three statements, whatever the page's size."""
    query = ("query($n: Int) { load_reactions_by(by: {}, limit: $n) { id stat { rating comments_count } "
             "created_by { id name } shout { id slug } } }")
    for limit in (5, 40):
        await cache.invalidate_tags([keys.GLOBAL_TAG])
        sql_counter.reset()
        result = await gql(query, {"n": limit})
        assert "errors" not in result and len(result["data"]["load_reactions_by"]) == limit
        assert sql_counter.count == 3, sql_counter.statements
        assert sum("FROM reaction" in s for s in sql_counter.statements) == 1, sql_counter.statements


async def test_shouts_with_their_authors_and_topics_in_one_statement_read_what_two_do(deps: Deps, api: Any) -> None:
    """On PostgreSQL a shout's authors and topics come with its row (arrays, cache/entities.py); elsewhere in a
    statement of their own. Both read the same entities, listed or not, on the driver or through a session:
    several authors, several topics (the main one first, then by id), an id that is not there."""
    author, coauthor = await api.user(), await api.user()
    shout = await api.published(author)
    async with deps.db() as session, session.begin():
        topics = list(await session.scalars(select(Topic.id).order_by(Topic.id).limit(2)))
        session.add_all([ShoutAuthor(shout=shout, author=coauthor.id), ShoutTopic(shout=shout, topic=topics[0]),
                         ShoutTopic(shout=shout, topic=topics[1], main=True)])
    ids = [shout, *range(1, 30), 10**9]
    async with read_session(deps.db) as session, reads(deps.db) as reading:
        assert isinstance(reading, DriverReads)
        elsewhere = SessionReads(session)
        elsewhere.postgres = False  # as on SQLite: the union of both relations
        for listed_only in (True, False):
            one = await entities.fetch_shouts(reading, ids, listed_only=listed_only)
            assert await entities.fetch_shouts(SessionReads(session), ids, listed_only=listed_only) == one
            assert await entities.fetch_shouts(elsewhere, ids, listed_only=listed_only) == one
            assert len(one) > 20
    assert sorted(one[shout]["author_ids"]) == sorted([author.id, coauthor.id])
    assert one[shout]["topic_ids"] == [topics[1], topics[0]] and one[shout]["main_topic_id"] == topics[1]


async def test_cold_reads_open_no_transaction_and_writes_do(gql: Any, api: Any, cache: Cache,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold page's reads run in autocommit (orm.engine.read_session): no BEGIN and ROLLBACK, two round
    trips each, around statements that each see their own snapshot anyway; a vote still runs in one
    transaction (the control: the count sees transactions)."""
    started: list[str] = []
    start = asyncpg.transaction.Transaction.start

    async def counted(self: Any) -> None:
        started.append("BEGIN")
        await start(self)

    monkeypatch.setattr(asyncpg.transaction.Transaction, "start", counted)
    shout = (await gql("{ load_shouts_by(options: {limit: 1}) { id } }"))["data"]["load_shouts_by"][0]["id"]
    for query in ("{ load_reactions_by(by: {}, limit: 20) { id stat { rating } created_by { name } shout { slug } } }",
                  "{ load_shouts_by(options: {limit: 20}) { id authors { name } topics { slug } stat { rating } } }"):
        await cache.invalidate_tags([keys.GLOBAL_TAG])
        started.clear()
        assert "errors" not in await gql(query)
        assert started == [], query
    user = await api.user()
    started.clear()
    await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error } }",
              {"r": {"kind": "LIKE", "shout": shout}}, user)
    assert started == ["BEGIN"]


async def test_keys_follow_the_seed_names(gql: Any, redis: Redis) -> None:
    await gql('{ get_author(slug: "author-1") { id slug } get_topic(slug: "culture") { id } }')
    await gql("{ load_shouts_by(options: {limit: 3}) { id authors { id } } }")
    names = {k.decode() async for k in redis.scan_iter(count=1000)}
    assert "author:slug:author-1" in names
    assert "author:id:1" in names
    assert "topic:slug:culture" in names
    assert any(n.startswith("topic:id:") for n in names)
    assert any(n.startswith("shouts:feed:limit=3:offset=0") for n in names)  # seed 002: the main feed
    assert all(len(n) < 64 and " " not in n for n in names), [n for n in names if len(n) >= 64]


async def test_ttls_where_the_seeds_give_one(gql: Any, redis: Redis) -> None:
    await gql('{ load_shouts_by(options: {limit: 3}) { id } get_author(slug: "author-2") { id } }')
    await gql('{ load_shouts_search(text: "город", options: {limit: 3}) { slug } }')
    shouts_keys = [k async for k in redis.scan_iter(match="shouts:feed:*")]
    assert shouts_keys
    for key in shouts_keys:  # seed 000 3.3: 5 minutes, plus at most 10% jitter
        assert 290 <= await redis.ttl(key) <= 330
    search_keys = [k async for k in redis.scan_iter(match="search_cache:*")]
    assert search_keys
    for key in search_keys:  # seed 000 section 4: 10 minutes
        assert 590 <= await redis.ttl(key) <= 660
    # Entities are invalidated on change (seed 000 3.1) and still expire (seed 004): the default TTL
    assert 7 * 86400 <= await redis.ttl("author:id:2") <= 7 * 86400 * 1.1


async def test_every_key_a_read_leaves_expires(gql: Any, redis: Redis) -> None:
    """Seed 004: anonymous lookups of things that do not exist, client-chosen ids and offsets leave no key
    without a TTL; the misses are remembered one minute only."""
    await gql('{ get_author(slug: "nobody-at-all") { id } get_topic(slug: "no-such-topic") { id } '
              'get_shout(slug: "no-such-shout") { id } by_id: get_author(author_id: 99999999) { id } }')
    await gql("{ get_topics_by_community(community_id: 424242) { id } "
              "load_shouts_by(options: {limit: 5, offset: 100000}) { id } }")
    found = {k.decode(): await redis.ttl(k) async for k in redis.scan_iter(count=1000)}
    assert found and all(ttl > 0 for ttl in found.values()), {k: t for k, t in found.items() if t <= 0}
    for key in ("author:slug:nobody-at-all", "topic:slug:no-such-topic", "shout:slug:no-such-shout"):
        assert 60 <= found[key] <= 66, (key, found.get(key))
    assert all(t <= 30 * 86400 for k, t in found.items() if k.startswith("gen:"))


@single_redis  # slow on the three local cluster nodes, and about keys, not about where they live
async def test_ten_thousand_unknown_slugs_leave_no_key_without_a_ttl(client: Any, redis: Redis) -> None:
    """Seed 004, issue 12: clients choose what they look up, so lookups of random slugs that do not exist
    (authors, topics, shouts: 10,000 in batches of 10 operations of 25 aliases) must not grow Redis
    without bound: every key they leave expires, the misses within about a minute."""
    lookups = 0
    for _ in range(40):
        batch = []
        for n in range(10):
            field = ("get_author", "get_topic", "get_shout")[n % 3]
            aliases = " ".join(f'l{i}: {field}(slug: "{secrets.token_hex(6)}-{i}") {{ id }}' for i in range(25))
            batch.append({"query": "{ " + aliases + " }"})
            lookups += 25
        response = await client.post("/graphql", json=batch)
        assert response.status_code == 200 and all(r["data"] for r in response.json()), response.text[:300]
    assert lookups == 10_000
    scanned = [key async for key in redis.scan_iter(count=1000)]
    ttls: dict[str, int] = {}
    for start in range(0, len(scanned), 1000):  # each key's TTL, a thousand to a pipeline
        chunk = scanned[start:start + 1000]
        async with redis.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.ttl(key)
            ttls.update(zip((key.decode() for key in chunk), await pipe.execute(), strict=True))
    slugs = {k: t for k, t in ttls.items() if k.startswith(("author:slug:", "topic:slug:", "shout:slug:"))}
    # the misses are remembered (those of the first batches may have expired already, a minute later)
    assert 0 < len(slugs) <= 10_000, len(slugs)
    # -1: a key without an expiry; 0 is one in its last second, -2 one gone since the scan (a slow machine)
    assert all(t != -1 for t in ttls.values()), {k: t for k, t in ttls.items() if t == -1}
    assert all(t <= 66 for t in slugs.values()), max(slugs.values())


async def test_an_expired_generation_restarts_where_no_stamp_can_match(cache: Cache, redis: Redis) -> None:
    """A generation key that expired and is then bumped must not come back at a value an old stamp holds
    (an INCR alone restarts at 1): the old value is a miss."""
    await redis.delete(keys.generation("t:restart"))
    await cache.invalidate_tags(["t:restart"])  # first life, created by a bump
    await cache.cache_data("k:restart", {"v": "old"}, tags=["t:restart"])
    assert await cache.get_cached_data("k:restart", tags=["t:restart"]) == {"v": "old"}
    await redis.delete(keys.generation("t:restart"))  # it expires while the value lives
    await cache.invalidate_tags(["t:restart"])  # a write in its second life
    assert await cache.get_cached_data("k:restart", tags=["t:restart"]) is None
    assert 0 < await redis.ttl(keys.generation("t:restart")) <= cache.generation_ttl


async def test_no_private_field_in_cached_authors(gql: Any, redis: Redis) -> None:
    await gql("{ get_authors_all { id } }")
    cached = [await redis.get(key) async for key in redis.scan_iter(match="author:id:*")]
    assert len(cached) >= 10, "get_authors_all cached the authors"
    assert all(raw and b'"slug"' in raw for raw in cached)
    for raw in cached:  # as fields: another test's author may be named after one ("has-password-...")
        for secret in (b'"email"', b'"password', b'"token'):
            assert secret not in raw


async def test_value_computed_before_an_invalidation_is_never_served(cache: Cache) -> None:
    """The read-compute-write race: the reader saw generation g, a writer bumps it while the reader
    computes; the reader's late write must not be accepted."""
    tag = keys.tag_author(999)
    calls = 0

    async def slow_read() -> dict[str, str]:
        nonlocal calls
        calls += 1
        if calls == 1:
            await cache.invalidate_tags([tag])  # a write commits while this read is in flight
            return {"name": "old"}
        return {"name": "new"}

    assert await cache.cached_query("author:id:999", slow_read, tags=[tag]) == {"name": "old"}
    # The late value was stored under the old generation: it reads as a miss and is recomputed.
    assert await cache.get_cached_data("author:id:999", tags=[tag]) is None
    assert await cache.cached_query("author:id:999", slow_read, tags=[tag]) == {"name": "new"}
    assert await cache.get_cached_data("author:id:999", tags=[tag]) == {"name": "new"}


async def test_flushed_generations_never_revive_old_values(cache: Cache, redis: Redis) -> None:
    await cache.cache_data("k:flush", {"v": 1}, tags=["t:flush"])
    raw = await redis.get("k:flush")
    await redis.delete(keys.generation("t:flush"))  # e.g. evicted or lost in a restart
    await redis.set("k:flush", raw)  # the old value is still around
    assert await cache.get_cached_data("k:flush", tags=["t:flush"]) is None


async def test_large_values_are_compressed(cache: Cache, redis: Redis) -> None:
    big = {"body": "текст " * 5000}
    await cache.cache_data("k:big", big)
    raw = await redis.get("k:big")
    assert len(raw) < 10_240
    assert await cache.get_cached_data("k:big") == big


async def test_follow_graph_uses_the_seed_keys(gql: Any, redis: Redis, engine: Any) -> None:
    """Seed 003: `user:{id}:fans` and `user:{id}:following` sorted sets scored by follow time (and the
    same shape for topics); seed 002: `topic:authors:{id}`."""
    from sqlalchemy import select

    from orm import AuthorFollower, Topic, TopicFollower

    async with engine.connect() as conn:
        author = await conn.scalar(select(AuthorFollower.author).limit(1))
        follower, topic, slug = (await conn.execute(
            select(TopicFollower.follower, Topic.id, Topic.slug).join(Topic, Topic.id == TopicFollower.topic).limit(1)
        )).one()
    await gql("query($a: Int, $f: Int) { get_author_followers(author_id: $a) { id } "
              "get_author_follows(author_id: $f) { authors { id } topics { id } } }", {"a": author, "f": follower})
    await gql("query($s: String) { get_topic_followers(slug: $s) { id } get_topic_authors(slug: $s) { id } }",
              {"s": slug})
    for key in (keys.fans("author", author), keys.following(follower, "topic"), keys.fans("topic", topic)):
        assert await redis.type(key) == b"zset", key
        members = await redis.zrange(key, 0, -1, withscores=True)
        assert members and all(score > 1_000_000_000 for _, score in members)  # follow times
    assert await redis.exists(keys.topic_authors(topic))
    # the seed's names; the braces are a Redis Cluster hash tag (an entity's structures share a slot)
    assert keys.fans("author", author) == f"user:{{{author}}}:fans"
    assert keys.following(follower, "topic") == f"user:{{{follower}}}:following:topics"
    assert keys.following(follower) == f"user:{{{follower}}}:following"


async def test_reads_survive_a_dead_redis(engine: Any) -> None:
    """Redis is a cache: with no Redis at all every read is answered from the database."""
    import httpx

    from cache.redis.client import make_redis
    from orm.engine import make_session_factory

    dead = make_redis("redis://127.0.0.1:1/0")  # configured as the app's: nothing listens there
    deps = Deps(cache=Cache(dead, breaker_seconds=30), db=make_session_factory(engine))
    app = create_app(deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        for _ in range(2):
            response = await http.post("/graphql", json={
                "query": "{ load_shouts_by(options: {limit: 5}) { id authors { slug } stat { viewed rating } } }"})
            body = response.json()
            assert "errors" not in body, body
            assert len(body["data"]["load_shouts_by"]) == 5
    assert deps.cache.stats.errors >= 1
    assert not deps.cache.available  # the breaker is open: no Redis round trip per request
    await dead.aclose()


@single_redis
async def test_a_cold_read_by_slug_reads_twice_and_stores_along(gql: Any, sql_counter: Any, cache: Cache,
                                                                 engine: Any) -> None:
    """`get_author(slug:)` on a cold cache misses three times (the composite of the slug and the author,
    then each): two statements, on the driver, each on the connection the pool holds for such reads (the
    warm-up's: no checkout, orm/held.py; in a session they would share one: cache/entities.py
    `shared_session`), and the slug's fill rides along with the author's read; the next read costs no SQL."""
    query = 'query { get_author(slug: "author-3") { id slug name } }'
    await gql(query)
    await cache.invalidate_tags([keys.GLOBAL_TAG])
    checkouts: list[object] = []

    def checkout(*args: Any) -> None:
        checkouts.append(args)

    event.listen(engine.sync_engine, "checkout", checkout)
    try:
        sql_counter.reset()
        with pipelines_sent() as sent:
            result = await gql(query)
    finally:
        event.remove(engine.sync_engine, "checkout", checkout)
    round_trips = [[str(command[0]) for command in pipeline] for pipeline in sent]
    assert result["data"]["get_author"]["slug"] == "author-3"
    assert sql_counter.count == 2 and len(checkouts) == 0, (sql_counter.statements, checkouts)
    # the response cache's lookup (the clock and the stored response; the clock moved since it was found
    # current, so the hit script checks its stamp: stale), the response's claim (cache/response/responses.py
    # `ResponseCache.claim`) and the slug's composite (a script each, sent as pipelines of one by the coalescer),
    # the resolver's three, then, after the answer, the response cache storing it and releasing the claim (its
    # script) with the author's value and the composite, left to store when execution ended
    assert round_trips == [["GET", "HMGET"], ["EVALSHA"], ["EVALSHA"], ["EVALSHA"], ["MGET", "MGET"],
                           ["SET", "MGET", "MGET"], ["EVALSHA", "SET", "SET"]], round_trips
    sql_counter.reset()
    assert await gql(query) == result
    assert sql_counter.count == 0


ANSWERED = ("ANSWER",)  # where a response's body went out, among the pipelines recorded (`marking_answers`)


def marking_answers(app: Any, sent: Any) -> Any:
    """`app`, marking in the pipelines being recorded (`sent()`, of `pipelines_sent`) where each response's last
    body part went out."""
    async def recording(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                sent().append([ANSWERED])
            await send(message)

        await app(scope, receive, sending)

    return recording


@single_redis
@pytest.mark.parametrize("case", ["kept", "not-kept", "control-write"])
async def test_values_left_to_store_go_out_after_a_computed_answer(deps: Deps, settings: Any, api: Any,
                                                                   case: str) -> None:
    """A computed answer is sent before the values its execution left to store (a list recomputed after its
    tag moved, the entities it shows): no round trip is spent on them before the answer. One the response
    cache keeps carries them in the response's store (its script first, in one round trip); one it does not
    keep (the response cache off) sends them in a pipeline of their own, after it. Control: a write's values
    are stored before its answer (what it computed is current for the readers that follow it), in the round
    trip the detection here finds before the answer."""
    app = create_app(settings if case == "kept" else settings.model_copy(update={"response_cache_ttl": 0}),
                     deps=deps)
    user = await api.user()
    shout = (await api("{ load_shouts_by(options: {limit: 1}) { id } }"))[0]["id"]
    if case == "control-write":
        query = {"query": "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id "
                          "created_by { slug } } } }",
                 "variables": {"r": {"kind": "COMMENT", "shout": shout, "body": "a comment"}}}
        stored_first, moved = keys.author_id(user.id), keys.tag_entities("author")
    else:
        query = {"query": "{ load_reactions_by(by: {}, limit: 5) { id body created_by { slug } } }"}
        stored_first, moved = keys.reactions_by(""), keys.TAG_REACTIONS
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=marking_answers(app, lambda: sent)),
                                 base_url="http://test",
                                 headers={"authorization": f"Bearer {user.token}"}) as http:
        if case != "control-write":
            with pipelines_sent() as sent:
                assert (await http.post("/graphql", json=query)).status_code == 200
            # Computed again after a write: its items kept (a page computed cold keeps none, item_fragments.py).
            await deps.cache.invalidate_tags([moved])
            with pipelines_sent() as sent:
                assert (await http.post("/graphql", json=query)).status_code == 200
        await deps.cache.invalidate_tags([moved])
        with pipelines_sent() as sent:
            response = await http.post("/graphql", json=query)
    assert "errors" not in response.json(), response.json()
    assert response.headers["x-cache"] == ("MISS" if case == "kept" else "BYPASS")
    answer = sent.index([ANSWERED])
    (stored,) = [n for n, pipeline in enumerate(sent)
                 if any(command[0] == "SET" and str(command[1]).startswith(stored_first) for command in pipeline)]
    if case == "kept":
        assert stored > answer and sent[stored][0][0] == "EVALSHA"  # the response's store
    elif case == "not-kept":
        assert stored > answer and all(command[0] in ("SET", "DEL") for command in sent[stored])
    else:
        assert stored < answer


@single_redis
async def test_a_read_that_computed_nothing_sends_nothing_after_its_answer(deps: Deps, settings: Any) -> None:
    """With the response cache off, a read whose every value was warm has nothing to store: no round trip follows
    its answer. Control: the same read after its list's tag moved stores the list after its answer."""
    app = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
    query = {"query": "{ load_reactions_by(by: {}, limit: 5) { id body created_by { slug } } }"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=marking_answers(app, lambda: sent)),
                                 base_url="http://test") as http:
        with pipelines_sent() as sent:
            await http.post("/graphql", json=query)  # every value stored
        for moved in ([], [keys.TAG_REACTIONS]):
            if moved:
                await deps.cache.invalidate_tags(moved)
            with pipelines_sent() as sent:
                response = await http.post("/graphql", json=query)
            assert response.status_code == 200 and response.headers["x-cache"] == "BYPASS"
            after = sent[sent.index([ANSWERED]) + 1:]
            assert (after == []) if not moved else (len(after) == 1), (moved, after)


def test_ttl_jitter_stays_within_its_bounds_and_uses_them(redis: Redis) -> None:
    """Seed 004: expiry times spread (打散) so keys written together do not expire together: every TTL is
    in [ttl, ttl + 10%], and the spread is used, from its bottom to its top."""
    cache = Cache(redis, ttl_jitter=0.1)
    ttls = [cache.jittered(1000) for _ in range(3000)]
    assert all(ttl is not None and 1000 <= ttl <= 1100 for ttl in ttls)
    assert min(ttls) < 1010 and max(ttls) > 1090  # type: ignore[type-var]
    assert len(set(ttls)) > 50
    assert cache.jittered(None) is None and cache.jittered(0) is None
    assert Cache(redis, ttl_jitter=0).jittered(300) == 300


def test_the_decoded_values_kept_are_the_most_recently_read() -> None:
    """KeptDecoded hands the same bytes' value out again without parsing them, for its `size` most recently
    read keys; the least recently read goes first."""
    parsed: list[bytes] = []

    def decoder(raw: bytes) -> tuple[bytes, Any]:
        parsed.append(raw)
        return b"stamp", {"raw": raw}

    kept = KeptDecoded(2)
    first = {key: kept.decode(key, key.encode(), decoder)[1] for key in ("a", "b", "c")}  # "a" goes
    assert kept.decode("b", b"b", decoder)[1] is first["b"] and kept.decode("c", b"c", decoder)[1] is first["c"]
    assert parsed == [b"a", b"b", b"c"]
    assert kept.decode("a", b"a", decoder)[1] is not first["a"] and parsed[-1] == b"a"  # parsed again
    assert [key for key, _, _ in kept.items()] == ["c", "a"]


def test_a_stamp_s_tag_may_hold_an_equals_sign() -> None:
    """A generation never holds "=", a tag may (one made of a client's text): a stamp splits at the last."""
    generations = {"epoch": b"81", "search:a=b": b"3"}
    assert parse_stamp(b",".join(stamp_parts(generations).values())) == generations


async def test_a_redis_failure_is_counted_by_what_failed(down: Cache) -> None:
    """What failed names the error counter's label; every failure counts in the cache's stats."""
    during = ("fill lock release", "invalidation")
    errors = {what: metrics.REDIS_ERRORS.labels(what)._value.get() for what in during}
    await down.release_fill_lock("some key")
    await asyncio.wait_for(down.invalidate_tags(["t:lost"]), 20)  # lost, and contained as far as it can be
    assert {what: metrics.REDIS_ERRORS.labels(what)._value.get() - n for what, n in errors.items()} == {
        "fill lock release": 1, "invalidation": 1}
    assert down.stats.errors == 2 and down.lost_invalidations


async def test_concurrent_misses_share_one_computation_unless_a_write_came_between(cache: Cache, redis: Redis) -> None:
    """In one process, readers that miss the same key under the same generations wait for one computation
    (single flight); a reader that misses after an invalidation does not take a computation started
    before it, nor does a forced refresh. Across processes (a second Cache on the same Redis) the fill
    lock of a generation makes the other wait for the first's value instead of computing it again; a
    write while it waits moves the generation, and it stops waiting for a value that would be a miss for
    it (the read p99 of the mixed bench was this wait: a second, fill_wait_ms, on the lock of an older
    generation)."""
    import asyncio

    tag = f"author:{secrets.randbelow(10**9)}"
    key = f"author:id:{secrets.randbelow(10**9)}"
    await cache.invalidate_tags([tag])
    release = asyncio.Event()
    calls: list[int] = []

    async def compute(value: int) -> int:
        calls.append(value)
        await release.wait()
        return value

    def noting_lock_answers(worker: Cache) -> list[Lease]:
        """What `worker` hears when it asks for a fill lock, in order: with the read that finds the value
        missing (one server), or on its own."""
        answers: list[Lease] = []
        take, read = worker.take_fill_lock, worker._read_leasing

        async def noted(cache_key: str, stamp: bytes = b"") -> Lease:
            answers.append(await take(cache_key, stamp))
            return answers[-1]

        async def noted_with_read(cache_key: str, tags: Any) -> Any:
            values, stamps, lease = await read(cache_key, tags)
            if lease is not Lease.UNTRIED:
                answers.append(lease)
            return values, stamps, lease

        worker.take_fill_lock = noted  # type: ignore[method-assign]
        worker._read_leasing = noted_with_read  # type: ignore[method-assign]
        return answers

    here = noting_lock_answers(cache)
    cache.fill_wait_ms = 30_000  # a waiter gives up on the lock holder only long after this test's steps
    readers = [asyncio.create_task(cache.cached_query(key, compute, tags=[tag], value=1)) for _ in range(5)]
    await until(lambda: calls == [1] and len(cache._inflight) == 1, "the first computation under way")
    await asyncio.gather(*(asyncio.sleep(0) for _ in range(5)))  # the other four reach the shared flight
    await cache.invalidate_tags([tag])  # a write: what the first computation read may be old now
    after_the_write = asyncio.create_task(cache.cached_query(key, compute, tags=[tag], value=2))
    # the fill lock of the generation it read is free: it computes, not waiting for the first computation
    await until(lambda: calls == [1, 2], "the reader after the write computing")
    assert here == [Lease.OURS, Lease.OURS]
    forced = asyncio.create_task(cache.cached_query(key, compute, tags=[tag], force_refresh=True, value=3))
    await until(lambda: 3 in calls, "the forced refresh computing")  # at once, without the fill lock
    assert here == [Lease.OURS, Lease.OURS]
    release.set()
    assert await asyncio.gather(*readers) == [1] * 5  # one computation for the five
    # the reader after the write took its own value, computed after the write: never the one begun before
    assert await after_the_write == 2 and await forced == 3 and calls == [1, 2, 3]

    other_worker = Cache(redis)
    key, calls[:] = f"author:id:{secrets.randbelow(10**9)}", []
    release.clear()
    lock_answers = noting_lock_answers(other_worker)
    first = asyncio.create_task(cache.cached_query(key, compute, tags=[tag], value=4))
    await until(lambda: calls == [4], "the first worker computing, holding the fill lock")
    second = asyncio.create_task(other_worker.cached_query(key, compute, tags=[tag], value=5))
    await until(lambda: lock_answers == [Lease.ANOTHERS], "the other worker finding the lock taken")
    release.set()
    assert (await first, await second) == (4, 4) and calls == [4]  # the other worker waited for the value

    # the same, and a write while the other worker waits: the first worker's value will be a miss for it
    key, calls[:], lock_answers[:] = f"author:id:{secrets.randbelow(10**9)}", [], []
    release.clear()
    other_worker.fill_wait_ms = 30_000
    first = asyncio.create_task(cache.cached_query(key, compute, tags=[tag], value=6))
    await until(lambda: calls == [6], "the first worker computing, holding the fill lock")
    second = asyncio.create_task(other_worker.cached_query(key, compute, tags=[tag], value=7))
    await until(lambda: lock_answers == [Lease.ANOTHERS], "the other worker waiting for the first's value")
    await cache.invalidate_tags([tag])
    # it stops waiting, takes the lock of the generation it reads now and computes, the first still under way
    await until(lambda: calls == [6, 7], "the other worker computing after the write")
    assert lock_answers == [Lease.ANOTHERS, Lease.OURS] and not first.done()
    moved = keys.fill_lock(key, (await cache.get_many([key], [[tag]]))[1][0] or b"")
    assert await redis.exists(moved)  # it holds the lock of the generation it computes, which others wait on
    release.set()
    assert (await first, await second) == (6, 7)
    assert not await redis.exists(moved)  # and lets it go with its value
    assert await cache.get_cached_data(key, [tag]) == 7  # the first's value, stamped before the write, is not
    assert not cache._inflight and not other_worker._inflight  # nothing kept of the flights once they land


async def test_a_missing_value_is_read_and_its_fill_lock_taken_in_one_round_trip(cache: Cache, redis: Redis) -> None:
    """On one Redis server the read that finds a value missing (or stale) also takes its fill lock, of the
    generation it read, in the same script: the query runs after one round trip, holding the lock, which
    goes with the value's store. A current value takes no lock. On a cluster (the generations and the lock
    in other slots than the value) the lock is a round trip of its own."""
    from devtools.round_trips import redis_round_trips

    key, tag = f"author:id:{secrets.randbelow(10**9)}", f"author:{secrets.randbelow(10**9)}"
    await cache.invalidate_tags([tag])  # its generation exists (a missing one is created first, apart)
    stamp = (await cache.get_many([key], [[tag]]))[1][0] or b""
    lock = [keys.fill_lock(key, stamp)]  # of the generation read
    held: list[tuple[int, bool]] = []

    with redis_round_trips() as sent:
        async def compute() -> int:
            held.append((sent[0], bool(await redis.exists(lock[0]))))
            return 5

        assert await cache.cached_query(key, compute, tags=[tag]) == 5
    rounds, locked = held[0]
    assert locked and (rounds == 1 if not TEST_REDIS_CLUSTER else rounds > 1)
    assert not await redis.exists(lock[0]) and await cache.get_cached_data(key, [tag]) == 5
    with redis_round_trips() as sent:
        assert await cache.cached_query(key, compute, tags=[tag]) == 5  # current: read, nothing more
    assert len(held) == 1 and not await redis.exists(lock[0])
    if not TEST_REDIS_CLUSTER:
        assert sent[0] == 1
    await cache.invalidate_tags([tag])
    lock[0] = keys.fill_lock(key, (await cache.get_many([key], [[tag]]))[1][0] or b"")
    assert await cache.cached_query(key, compute, tags=[tag]) == 5 and len(held) == 2  # stale: computed again
    assert held[1][1] and not await redis.exists(lock[0])


async def test_a_waiter_looks_again_soon_then_less_often(cache: Cache, redis: Redis,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another worker's fill is a few milliseconds: a waiter looks after 2 ms, then twice as long each
    time up to 20 ms, and has the value at the first look after it is stored."""
    key, tag = f"author:id:{secrets.randbelow(10**9)}", f"author:{secrets.randbelow(10**9)}"
    stamp = (await cache.get_many([key], [[tag]]))[1][0]
    assert await cache.take_fill_lock(key, stamp or b"") is Lease.OURS  # another worker computes it
    pauses: list[float] = []
    sleep = asyncio.sleep

    async def noted(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 6:  # the holder stores its value meanwhile
            await cache.set_many([(key, {"name": "theirs"}, stamp, None)], unlock=[keys.fill_lock(key, stamp or b"")])
        await sleep(0)

    monkeypatch.setattr(store.asyncio, "sleep", noted)

    async def compute() -> dict[str, str]:
        raise AssertionError("the waiter computed it")

    assert await Cache(redis).cached_query(key, compute, tags=[tag]) == {"name": "theirs"}
    assert pauses == [0.002, 0.004, 0.008, 0.016, 0.02, 0.02]


async def test_an_observe_redis_cannot_answer_is_said_and_keeps_nothing(down: Cache) -> None:
    """`observe` (a response's dependence on data read outside stamped values) with Redis unreachable: the
    response being computed is not stored, and the failure is counted as a read's."""
    from cache import response_capture

    failed = metrics.REDIS_ERRORS.labels("read")._value.get()
    capture, token = response_capture.begin()
    try:
        await down.observe([f"author:{secrets.randbelow(10**9)}"])
    finally:
        response_capture.end(token)
    assert not capture.storable
    assert metrics.REDIS_ERRORS.labels("read")._value.get() - failed == 1


async def test_the_fill_lock_is_held_while_computing_expires_and_is_released_by_its_holder_only(
        cache: Cache, redis: Redis, down: Cache) -> None:
    """The fill lock's life: taken with an expiry (a holder that dies frees it), held while the value is
    computed, released with the value's store or when the computation fails; a worker that waited for a
    holder past `fill_wait_ms` computes and stores the value itself, leaving the holder's lock alone. With
    Redis unavailable nobody holds one: each worker just computes."""
    import asyncio

    tag = f"author:{secrets.randbelow(10**9)}"
    key = f"author:id:{secrets.randbelow(10**9)}"
    release = asyncio.Event()

    async def compute(value: int) -> int:
        await release.wait()
        return value

    holding = asyncio.create_task(cache.cached_query(key, compute, tags=[tag], value=1))
    lock = keys.fill_lock(key, (await cache.get_many([key], [[tag]]))[1][0] or b"")  # of the generation read
    await until(lambda: redis.exists(lock), "the fill lock taken")
    assert 0 < await redis.pttl(lock) <= cache.fill_lock_ms  # it expires, if its holder never releases it
    release.set()
    assert await holding == 1
    assert not await redis.exists(lock) and await cache.get_cached_data(key, [tag]) == 1

    async def failing() -> int:
        raise LookupError("the query failed")

    failed_key = f"author:id:{secrets.randbelow(10**9)}"
    with pytest.raises(LookupError):
        await cache.cached_query(failed_key, failing, tags=[tag])
    failed_lock = keys.fill_lock(failed_key, (await cache.get_many([failed_key], [[tag]]))[1][0] or b"")
    assert not await redis.exists(failed_lock)  # the next worker need not wait for it

    # a holder that never stores (another process, hung): the waiter gives up at fill_wait_ms
    key = f"author:id:{secrets.randbelow(10**9)}"
    lock = keys.fill_lock(key, (await cache.get_many([key], [[tag]]))[1][0] or b"")
    await redis.set(lock, b"1", px=60_000)
    waiter = Cache(redis, fill_wait_ms=200)
    assert await asyncio.wait_for(waiter.cached_query(key, compute, tags=[tag], value=2), 10) == 2
    assert await redis.exists(lock)  # not the waiter's to release
    assert await cache.get_cached_data(key, [tag]) == 2  # stored under the stamp read before it waited

    failed = metrics.REDIS_ERRORS.labels("fill lock")._value.get()
    assert await down.take_fill_locks(["a", "b"]) == [Lease.NO_LOCK, Lease.NO_LOCK]  # the failure is said, not raised
    assert not down.available and metrics.REDIS_ERRORS.labels("fill lock")._value.get() - failed == 1
    assert await down.take_fill_locks(["a"]) == [Lease.NO_LOCK]  # the breaker open: Redis is not even asked
    assert metrics.REDIS_ERRORS.labels("fill lock")._value.get() - failed == 1


@single_redis  # counts one server's pipelines
async def test_an_invalidation_fills_each_pipeline_up_to_seed_004_s_bound_the_commit_s_commands_first(
        cache: Cache, redis: Redis) -> None:
    """The commit's other commands (`also`: its live updates) go first in the first pipeline, then as many
    generation moves as leave room for the clock, which ends each pipeline: at most BATCH commands a
    pipeline, and no more pipelines than that allows. Every generation moves."""
    also_keys = [f"live:first:{n}" for n in range(5)]

    async def also(pipe: Pipeline) -> None:
        for key in also_keys:
            pipe.set(key, 1, ex=60)

    tags = [f"t:moved:{secrets.token_hex(4)}:{n}" for n in range(2 * (BATCH - 1) - len(also_keys))]
    await redis.mset(dict.fromkeys([keys.generation(tag) for tag in tags], 1))
    with pipelines_sent() as pipelines:
        await cache.invalidate_tags(tags, also=also)
    sent = [[str(command[1]) for command in pipeline] for pipeline in pipelines]
    assert [len(commands) for commands in sent] == [BATCH, BATCH]
    assert sent[0][:len(also_keys)] == also_keys  # before any generation moves
    assert all(commands[-1] == keys.invalidation_clock() for commands in sent)
    moved = [command for commands in sent for command in commands[:-1] if command not in also_keys]
    assert moved == [keys.generation(tag) for tag in tags]
    assert b"1" not in await redis.mget([keys.generation(tag) for tag in tags])
    for moved_key in (keys.generation(tags[0]), keys.invalidation_clock()):  # both expire (seed 004)
        assert 0 < await redis.ttl(moved_key) <= cache.generation_ttl


async def test_with_a_state_redis_apart_the_commit_s_live_commands_go_there_first(
        redis: Redis, redis_server: RedisServer) -> None:
    """REDIS_STATE_URL: the live structures on a Redis of their own. A commit's live commands go there, in a
    pipeline sent before the generations move on the cache's Redis; an invalidation without any stays on
    the cache's."""
    state = make_redis(redis_server.url, coalesce=False)
    split = Cache(redis, state=state)
    tag, other = f"t:apart:{secrets.token_hex(4)}", f"t:apart:{secrets.token_hex(4)}"
    state_then: list[bool] = []

    async def also(pipe: Pipeline) -> None:
        pipe.set("live:apart", 1, ex=60)
        state_then.append(bool(await redis.exists(keys.generation(tag))))  # not moved yet

    await split.invalidate_tags([tag], also=also)
    await split.invalidate_tags([other])
    assert state_then == [False]  # called once, before the move
    assert await state.get("live:apart") == b"1" and not await redis.exists("live:apart")
    assert await redis.exists(keys.generation(tag), keys.generation(other)) == 2
    assert not await state.exists(keys.generation(tag), keys.generation(other))
    await state.aclose()


def test_the_cache_s_stats_add_up_each_kind_of_read() -> None:
    """What /metrics and `discours cache stats` report: reads counted by result, each adding up."""
    stats = CacheStats()
    for result in ("hit", "miss", "stale", "hit"):
        stats.count(result, 2)
    stats.count("stale")  # one read by default
    assert (stats.hits, stats.misses, stats.stale) == (4, 2, 3)


def test_a_stamp_names_at_most_what_a_script_checks_in_ten_mgets() -> None:
    """What read more tags than the stamp check reads in ten MGETs (cache/lua/stamp_moves.lua)
    is not kept: exactly that many is."""
    from cache.response_capture import Capture

    def with_tags(n: int) -> Capture:
        return Capture(generations={f"t:{i}": b"7" for i in range(n)})

    assert capture_stamp(with_tags(10 * BATCH)) is not None
    assert capture_stamp(with_tags(10 * BATCH + 1)) is None


async def test_values_keyed_by_numbers_are_stored_and_nothing_is_while_the_breaker_is_open(
        cache: Cache, redis: Redis) -> None:
    """A value whose dict keys are numbers (stats by id) is stored, read back with JSON's string keys; with
    the breaker open (Redis failed a moment ago) a computed value is not written at all."""
    tag, key = f"t:{secrets.token_hex(4)}", f"k:{secrets.token_hex(4)}"
    await cache.cache_data(key, {7: "seven"}, tags=[tag])
    assert await cache.get_cached_data(key, [tag]) == {"7": "seven"}
    _, stamps = await cache.get_many([key], [[tag]])
    closed = f"k:{secrets.token_hex(4)}"
    cache.trip(RedisUnavailable("redis failed"), "read")
    await cache.set_many([(closed, 1, stamps[0], None)])
    assert not await redis.exists(closed)


async def test_a_batch_read_fetches_its_misses_only_unless_forced(cache: Cache) -> None:
    """`cached_many`: one fetch for the misses, none once they are stored; `force` (the revalidator)
    fetches every key again and stores what it fetched."""
    calls: list[list[int]] = []

    async def fetch(indexes: list[int]) -> list[str]:
        calls.append(list(indexes))
        return [f"v{i}-{len(calls)}" for i in indexes]

    token = secrets.token_hex(4)
    names, tags = [f"k:{token}:{i}" for i in range(3)], [[f"t:{token}"]] * 3
    first = await cache.cached_many(names, tags, fetch)
    assert await cache.cached_many(names, tags, fetch) == first == ["v0-1", "v1-1", "v2-1"]
    assert calls == [[0, 1, 2]]
    assert await cache.cached_many(names, tags, fetch, force=True) == ["v0-2", "v1-2", "v2-2"]
    assert await cache.cached_many(names, tags, fetch) == ["v0-2", "v1-2", "v2-2"] and len(calls) == 2


async def test_a_store_redis_cannot_take_is_said_by_what_failed_and_not_raised(down: Cache) -> None:
    """`set_many` with Redis gone: the reader keeps its computed value (nothing raised), the failure is
    counted as a write's, and the breaker opens."""
    failed = metrics.REDIS_ERRORS.labels("write")._value.get()
    await down.set_many([("k:gone", 1, b"epoch=1", None)])
    assert metrics.REDIS_ERRORS.labels("write")._value.get() - failed == 1 and not down.available


async def test_a_batch_read_counts_every_key_by_its_result(cache: Cache) -> None:
    """`get_many` counts each key it read, not each kind of result once: two hits and a miss are two hits
    and a miss in the stats."""
    tag, token = f"t:{secrets.token_hex(4)}", secrets.token_hex(4)
    names = [f"k:{token}:{n}" for n in range(3)]
    for name in names[:2]:
        await cache.cache_data(name, name, tags=[tag])
    before = (cache.stats.hits, cache.stats.misses, cache.stats.stale)
    values, _ = await cache.get_many(names, [[tag]] * 3)
    assert values[:2] == names[:2]
    assert (cache.stats.hits - before[0], cache.stats.misses - before[1], cache.stats.stale - before[2]) == (2, 1, 0)


async def test_a_failed_batch_read_is_counted_as_a_read_s(down: Cache) -> None:
    """A batch read that Redis fails (the breaker closed until then) answers misses, counts a read's error
    and opens the breaker."""
    failed = metrics.REDIS_ERRORS.labels("read")._value.get()
    values, stamps = await down.get_many(["k:a", "k:b"], [["t:a"], ["t:b"]])
    assert (values, stamps) == ([MISSING, MISSING], [None, None])
    assert metrics.REDIS_ERRORS.labels("read")._value.get() - failed == 1
    assert down.stats.errors == 1 and not down.available


@single_redis  # counts one server's pipelines
async def test_fills_ride_with_a_read_while_the_pipeline_stays_within_seed_004_s_bound(
        cache: Cache) -> None:
    """Fills (`store`) go in the read's pipeline while the two fit in BATCH commands (a read of one key
    under one tag is two MGETs); one fill more and the fills go first, in a pipeline of their own.
    `set_many` sends what fits in one pipeline as one pipeline."""
    token, tag = secrets.token_hex(4), f"t:{secrets.token_hex(4)}"
    _, [stamp] = await cache.get_many([f"k:{token}"], [[tag]])
    for fills, expected in ((BATCH - 2, [BATCH]), (BATCH - 1, [BATCH - 1, 2])):
        store = [(f"k:{token}:{fills}:{n}", n, stamp, None) for n in range(fills)]
        with pipelines_sent() as sent:
            await cache.get_many([f"k:{token}"], [[tag]], store=store)
        assert [len(pipeline) for pipeline in sent] == expected, fills
    with pipelines_sent() as sent:
        await cache.set_many([(f"k:{token}:set:{n}", n, stamp, None) for n in range(3)])
    assert [len(pipeline) for pipeline in sent] == [3]
    assert [value for value in (await cache.get_many([f"k:{token}:set:{n}" for n in range(3)], [[tag]] * 3))[0]] \
        == [0, 1, 2]


@single_redis  # counts one server's pipelines
async def test_an_invalidation_whose_live_commands_fill_a_pipeline_moves_its_generations_in_the_next(
        cache: Cache, redis: Redis) -> None:
    """With BATCH - 1 live commands (`also`), the first pipeline has room for the clock only: every
    generation moves in the next one, and no pipeline holds more than BATCH commands."""
    async def also(pipe: Pipeline) -> None:
        for n in range(BATCH - 1):
            pipe.set(f"live:full:{n}", 1, ex=60)

    tags = [f"t:full:{secrets.token_hex(4)}:{n}" for n in range(3)]
    await redis.mset(dict.fromkeys([keys.generation(tag) for tag in tags], 1))
    with pipelines_sent() as sent:
        await cache.invalidate_tags(tags, also=also)
    assert [len(pipeline) for pipeline in sent] == [BATCH, len(tags) + 1]
    assert b"1" not in await redis.mget([keys.generation(tag) for tag in tags])


async def test_inspecting_a_value_of_two_tags_reads_its_stamp_back(cache: Cache) -> None:
    """`discours cache inspect` (cache/inventory.py) reads a stored value's stamp back, tag by tag: a
    value stamped under two tags is valid under both, and no longer once one of them moves."""
    from cache.inventory import inspect_key

    token = secrets.token_hex(4)
    key, tags = f"k:{token}", [f"t:{token}:a", f"t:{token}:b"]
    await cache.cache_data(key, {"v": 1}, tags=tags)
    found = await inspect_key(cache, key)
    assert found["valid"] and set(found["stamp"]) >= set(tags), found
    await cache.invalidate_tags(tags[1:])
    assert not (await inspect_key(cache, key))["valid"]


@single_redis  # counts one server's pipelines
async def test_a_value_computed_in_a_request_rides_along_with_its_next_read(cache: Cache, redis: Redis) -> None:
    """Within `fills_ride_along` (a GraphQL request's execution), a computed value is not stored on its own:
    its reader goes on at once, and the value and its fill lock's release go out with the request's next
    read; what no read took is stored as the block ends. The control: outside the block, stored before
    `cached_query` returns."""
    tag = f"author:{secrets.randbelow(10**9)}"
    first, second, third, read = (f"author:id:{secrets.randbelow(10**9)}" for _ in range(4))

    computed: list[int] = []

    async def compute() -> dict[str, str]:
        computed.append(1)
        return {"name": "computed"}

    async with cache.fills_ride_along():
        with pipelines_sent() as sent:
            assert await cache.cached_query(first, compute, tags=[tag]) == {"name": "computed"}
            assert await redis.exists(first) == 0  # not stored yet
            stamp = (await cache.get_many([read], [[tag]]))[1][0]  # the request's next read
        assert await redis.exists(first) == 1 and await redis.exists(keys.fill_lock(first, stamp or b"")) == 0
        assert [str(command[0]) for command in sent[-1]] == ["SET", "DEL", "MGET", "MGET"], sent[-1]
        assert await cache.cached_query(second, compute, tags=[tag]) == {"name": "computed"}
        assert await redis.exists(second) == 0
    assert await redis.exists(second) == 1  # stored as the block ended
    assert await cache.cached_query(third, compute, tags=[tag]) == {"name": "computed"}
    assert await redis.exists(third) == 1  # the control
    assert await cache.cached_query(first, compute, tags=[tag]) == {"name": "computed"} and len(computed) == 3


async def test_a_fill_after_its_request_ended_is_stored_on_its_own(cache: Cache, redis: Redis) -> None:
    """A task a request started (a stream's) that computes a value after the request's block ended has no read
    left to ride with: the value is stored at once, not left with fills nobody sends. The control: within the
    block, the same fill waits for the request's next read."""
    tag = f"author:{secrets.randbelow(10**9)}"
    within, after = (f"author:id:{secrets.randbelow(10**9)}" for _ in range(2))
    ended = asyncio.Event()

    async def compute() -> dict[str, str]:
        return {"name": "computed"}

    async def late_fill() -> Any:
        await ended.wait()
        return await cache.cached_query(after, compute, tags=[tag])

    async with cache.fills_ride_along():
        late = asyncio.create_task(late_fill())  # the task inherits the request's riding fills
        assert await cache.cached_query(within, compute, tags=[tag]) == {"name": "computed"}
        assert await redis.exists(within) == 0  # the control: it rides with the next read
    ended.set()
    assert await late == {"name": "computed"}
    assert await redis.exists(after) == 1


async def test_fills_riding_together_release_their_locks_wherever_they_live(cache: Cache, redis: Redis) -> None:
    """Several values riding with one read release their fill locks in that round trip: on a Redis Cluster
    the locks are in slots of their own (one DEL of them all would be refused, and trip the breaker)."""
    tag = f"author:{secrets.randbelow(10**9)}"
    computed = [f"author:id:{secrets.randbelow(10**9)}" for _ in range(6)]

    async def compute() -> dict[str, str]:
        return {"name": "computed"}

    async with cache.fills_ride_along():
        stamps = [(await cache.get_many([key], [[tag]]))[1][0] for key in computed]
        # computed side by side: each read before any was computed, so none of them carries another
        await asyncio.gather(*(cache.cached_query(key, compute, tags=[tag]) for key in computed))
        await cache.get_many([f"author:id:{secrets.randbelow(10**9)}"], [[tag]])  # they all ride with it
        assert cache.available
        for key, stamp in zip(computed, stamps, strict=True):
            assert await redis.exists(key) == 1 and await redis.exists(keys.fill_lock(key, stamp or b"")) == 0


async def test_a_stale_value_is_judged_by_its_stamp_alone(cache: Cache) -> None:
    """A value whose stamp is not current is a miss without its body being decoded (nor decompressed): after
    an invalidation every value of a page is such, and parsing each only to throw it away cost the read. A
    body that would not even parse shows it; the control: under a current stamp it is parsed, and fails."""
    key, tags = keys.author_id(777_777), [keys.tag_author(777_777)]
    _, (stamp,) = await cache.get_many([key], [tags])
    assert stamp is not None
    await cache.redis.set(key, stamp + b"|j{not json", ex=60)
    with pytest.raises(orjson.JSONDecodeError):
        await cache.get_many([key], [tags])
    await cache.invalidate_tags([keys.tag_author(777_777)])
    values, _ = await cache.get_many([key], [tags])
    assert values == [MISSING]


async def test_a_read_is_cold_when_its_value_is_absent_or_kept_before_the_epoch_moved(cache: Cache) -> None:
    """What a computation reads tells whether it was computed since the epoch last moved
    (`response_capture.cold`, which a page of reactions keeps its items by): a value absent, or kept under an
    earlier epoch, is a cold read; one current, or stale only because its own tag moved (a write), is not."""
    from cache import response_capture

    tag = f"reactions:{secrets.randbelow(10**9)}"
    key = f"reactions:by:{secrets.randbelow(10**9)}"

    async def read() -> tuple[bool, Any]:
        capture, token = response_capture.begin()
        try:
            value = await cache.cached_query(key, compute, tags=[tag])
        finally:
            response_capture.end(token)
        return capture.cold, value

    computed = 0

    async def compute() -> int:
        nonlocal computed
        computed += 1
        return computed

    assert await read() == (True, 1), "absent: cold"
    assert await read() == (False, 1), "current: not cold"
    await cache.invalidate_tags([tag])
    assert await read() == (False, 2), "stale by its own tag's move (a write): not cold"
    await cache.invalidate_tags([keys.GLOBAL_TAG])
    assert await read() == (True, 3), "kept before the epoch moved: cold"
    entities_read = await cache.get_many([key], [[tag]])
    assert entities_read[0] == [3]
    outer, token = response_capture.begin()
    try:
        inner, inner_token = response_capture.begin()
        await cache.get_many([f"author:id:{secrets.randbelow(10**9)}"], [[]])
        response_capture.end(inner_token)
        assert inner.cold and response_capture.cold()
    finally:
        response_capture.end(token)
    assert outer.cold, "an outer capture saw what an inner one did"
