"""The response cache: a hit skips parse, validate and execute; any invalidation of anything the response
was built from makes it a miss; error-free answers of queries whose fields declare a max age are stored,
public ones once for guests and signed-in readers alike, private ones per viewer (schema/engine/cache_control.py)."""

from __future__ import annotations

import gzip
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from app.main import create_app, wire
from auth.services import build_auth
from cache import keys
from cache.redis.client import make_redis
from cache.response.responses import (
    COMPRESS_OVER,
    Hit,
    Kept,
    PlainBodies,
    ResponseCache,
    as_bytes,
    etag_of,
    request_key,
)
from cache.response_capture import Capture
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from tests.conftest import TEST_REDIS_CLUSTER
from tests.helpers import Api

AUTHOR = 'query($s: String) { get_author(slug: $s) { id name stat { shouts } } }'


@pytest.fixture
async def own_redis_app(redis_server: RedisServer, engine: Any, settings: Settings) -> AsyncIterator[Any]:
    """The app on a Redis server of the test's own: its INFO commandstats count this app's commands only."""
    redis = make_redis(redis_server.url)
    app = create_app(settings, deps=wire(settings, engine, Cache(redis), auth=build_auth(settings, redis)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, redis, app
    await redis.aclose()


async def _commands(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def test_a_hit_costs_no_sql_and_one_redis_round_trip(own_redis_app: Any, sql_counter: Any) -> None:
    client, redis, app = own_redis_app
    token = await _sign_up(client)  # before anything is stored: a new account moves the authors' tags
    query = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { name } "
                      "topics { slug } stat { rating } } }", "variables": {"o": {"limit": 10, "offset": 20}}}
    first = await client.post("/graphql", json=query)
    assert first.headers["x-cache"] == "MISS"
    responses = app.state.responses
    hits, stores = responses.hits, responses.stores
    assert (hits, stores) == (0, 1)  # a new app's first request: no hit, one response stored
    before = await _commands(redis)
    sql_counter.reset()
    second = await client.post("/graphql", json=query)
    after = await _commands(redis)
    assert second.headers["x-cache"] == "HIT" and second.content == first.content
    assert (responses.hits - hits, responses.stores - stores) == (1, 0)
    assert sql_counter.count == 0, sql_counter.statements
    spent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    spent.pop("info", None)  # the reading of the statistics itself
    # two reads in one round trip, no script: the invalidation clock, which has not moved since the store found
    # the stamp current (and noted the clock), and the hash
    assert spent == {"hmget": 1, "get": 1}, spent

    # a signed-in reader of the same public fields: the same entry, and no session check either
    before = await _commands(redis)
    signed_in = await client.post("/graphql", json=query, headers={"authorization": f"Bearer {token}"})
    after = await _commands(redis)
    assert signed_in.headers["x-cache"] == "HIT" and signed_in.content == first.content
    assert sql_counter.count == 0, sql_counter.statements
    spent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    spent.pop("info", None)
    assert spent == {"hmget": 1, "get": 1}, spent  # the clock has not moved
    assert (responses.hits - hits, responses.stores - stores) == (2, 0)  # each hit counted


async def test_a_response_cache_read_redis_fails_is_a_miss_counted_as_its_own(down: Cache) -> None:
    """Redis failing the hit check (the breaker closed until then): the request is answered as a miss, the
    error is counted under the response cache's read, and the breaker opens."""
    from telemetry import metrics

    failed = metrics.REDIS_ERRORS.labels("response cache read")._value.get()
    assert await ResponseCache(down).get("response:any") is None
    assert metrics.REDIS_ERRORS.labels("response cache read")._value.get() - failed == 1
    assert not down.available


async def _sign_up(client: httpx.AsyncClient) -> str:
    email = f"rc-{uuid.uuid4().hex[:10]}@example.org"
    variables = {"e": email, "p": "a long password"}
    await client.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { registerUser(email: $e, "
                                                 "password: $p, name: \"R\") { success } }", "variables": variables})
    login = await client.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { login(email: $e, "
                                                         "password: $p) { token } }", "variables": variables})
    client.cookies.clear()
    return str(login.json()["data"]["login"]["token"])


async def test_a_committed_write_refreshes_the_response(api: Api, client: Any) -> None:
    """X-Cache shows each step: computed and stored, served whole, made a miss by the write."""
    user = await api.user()
    read = {"query": AUTHOR, "variables": {"s": user.slug}}
    await _stored_then_hit(client, read)
    await api("mutation { update_author(profile: {name: \"Новое имя\"}) { error } }", user=user)
    client.cookies.clear()
    third = await client.post("/graphql", json=read)
    assert third.headers["x-cache"] == "MISS"
    assert third.json()["data"]["get_author"]["name"] == "Новое имя"
    # a signed-in reader of public fields gets the same public entry
    signed_in = await client.post("/graphql", json=read, headers={"authorization": f"Bearer {user.token}"})
    assert signed_in.headers["x-cache"] == "HIT" and signed_in.content == third.content


async def test_a_follow_list_read_from_a_live_set_moves_with_a_follow(api: Api, client: Any) -> None:
    """A follow set is read outside the stamped values (cache/live/follows.py): its tag joins the response's
    stamp (Cache.observe), so the stored list is served until a follow and not after it."""
    fan, followed = await api.user(), await api.user()
    read = {"query": "query($id: Int) { get_author_follows_authors(author_id: $id) { slug } }",
            "variables": {"id": fan.id}}
    first, _ = await _stored_then_hit(client, read)
    assert followed.slug not in [a["slug"] for a in first.json()["data"]["get_author_follows_authors"]]
    await api("mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }", {"s": followed.slug}, fan)
    client.cookies.clear()
    after = await client.post("/graphql", json=read)
    assert after.headers["x-cache"] == "MISS"
    assert followed.slug in [a["slug"] for a in after.json()["data"]["get_author_follows_authors"]]


async def test_viewer_shaped_reads_errors_mutations_and_random_are_not_stored(api: Api, client: Any,
                                                                              redis: Redis) -> None:
    user = await api.user()
    signed_in = {"authorization": f"Bearer {user.token}"}
    requests = [
        # a public field whose answer an argument makes the viewer's own: it read the viewer
        ({"query": "{ load_shouts_by(options: {limit: 5, filters: {reacted: true}}) { id } }"}, signed_in),
        ({"query": "{ load_shouts_by(options: {limit: -1}) { id } }"}, {}),
        ({"query": "{ load_shouts_random_top(options: {limit: 3}) { id } }"}, {}),
        ({"query": 'mutation { requestPasswordReset(email: "nobody@example.org") { success } }'}, {}),
    ]
    for _ in range(2):
        for body, headers in requests:
            client.cookies.clear()
            response = await client.post("/graphql", json=body, headers=headers)
            assert response.headers["x-cache"] == "BYPASS", body
    assert [key async for key in redis.scan_iter(match="response:*")] == []
    # the control: a public read, signed in, is stored
    read = await client.post("/graphql", json={"query": AUTHOR, "variables": {"s": user.slug}}, headers=signed_in)
    assert read.headers["x-cache"] == "MISS"
    assert len([key async for key in redis.scan_iter(match="response:*")]) == 1


async def test_a_large_response_is_stored_gzip_and_served_as_stored(own_redis_app: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 004: a value over 10 KB is compressed; a hit sends the gzip bytes as they are to a client that
    accepts gzip, and decompresses them only for one that does not."""
    from cache.inventory import inspect_key

    client, redis, app = own_redis_app
    query = {"query": "{ load_shouts_by(options: {limit: 50}) { id title lead body } }"}
    first = await client.post("/graphql", json=query, headers={"accept-encoding": "gzip"})
    assert first.headers["x-cache"] == "MISS" and len(first.content) > 10_240
    (key,) = [k async for k in redis.scan_iter(match="response:*")]
    stored = await redis.hgetall(key)
    assert stored[b"z"] == b"1" and len(stored[b"b"]) < len(first.content) / 2

    zipped = await client.post("/graphql", json=query, headers={"accept-encoding": "gzip, br"})
    assert zipped.headers["x-cache"] == "HIT" and zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == first.content  # httpx decodes gzip: the same bytes reach the client
    decompressed: list[bytes] = []
    original = Hit.plain

    def counted(hit: Hit) -> bytes:
        decompressed.append(hit.etag)
        return original(hit)

    monkeypatch.setattr(Hit, "plain", counted)
    for _ in range(3):  # the plain form is made once, then kept by its ETag
        plain = await client.post("/graphql", json=query, headers={"accept-encoding": "identity"})
        assert plain.headers["x-cache"] == "HIT" and "content-encoding" not in plain.headers
        assert plain.content == first.content
    assert decompressed == [first.headers["etag"]]

    inspected = await inspect_key(app.state.deps.cache, key.decode())
    assert inspected["valid"] is True and inspected["value"] == first.json()
    await app.state.deps.cache.invalidate_tags(["shouts"])
    assert (await inspect_key(app.state.deps.cache, key.decode()))["valid"] is False
    again = await client.post("/graphql", json=query)
    assert again.headers["x-cache"] == "MISS"


PRIVATE = 'query($s: String) { get_author(slug: $s) { name email } }'
RATES = "query($s: [Int!]!) { get_my_rates_shouts(shouts: $s) { shout_id my_rate } }"


async def test_a_private_answer_is_kept_for_its_viewer_only(api: Api, client: Any, engine: Any) -> None:
    """A field declared private (the account's email) keeps the answer under its viewer's key: the viewer
    gets it again, another viewer and a guest never; the viewer's own write makes it a miss in every scope."""
    from sqlalchemy import select

    from orm import Shout

    owner, other = await api.user(), await api.user()
    owner_email = (await api("{ me { author { email } } }", user=owner))["author"]["email"]
    read = {"query": PRIVATE, "variables": {"s": owner.slug}}

    async def ask(user: Any) -> httpx.Response:
        client.cookies.clear()
        headers = {"authorization": f"Bearer {user.token}"} if user else {}
        return await client.post("/graphql", json=read, headers=headers)

    first = await ask(owner)
    again = await ask(owner)
    assert (first.headers["x-cache"], again.headers["x-cache"]) == ("MISS", "HIT")
    assert again.json()["data"]["get_author"]["email"] == owner_email
    assert again.headers["cache-control"] == "private, max-age=60"
    for reader in (other, None, other, None):  # computed for them, then their own entries
        answer = await ask(reader)
        assert answer.json()["data"]["get_author"]["email"] is None, reader
    assert (await ask(other)).headers["x-cache"] == "HIT" and (await ask(None)).headers["x-cache"] == "HIT"

    await api('mutation { update_author(profile: {name: "Своё имя"}) { error } }', user=owner)
    for reader in (owner, other, None):
        answer = await ask(reader)
        assert answer.headers["x-cache"] == "MISS" and answer.json()["data"]["get_author"]["name"] == "Своё имя"

    # a list of the viewer's own (their rates), invalidated by the viewer's own rating
    async with engine.connect() as conn:
        shout = await conn.scalar(select(Shout.id).where(Shout.published_at.is_not(None)).limit(1))
    rates = {"query": RATES, "variables": {"s": [shout]}}
    mine = {"authorization": f"Bearer {owner.token}"}
    assert (await client.post("/graphql", json=rates, headers=mine)).headers["x-cache"] == "MISS"
    assert (await client.post("/graphql", json=rates, headers=mine)).headers["x-cache"] == "HIT"
    await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error } }",
              {"r": {"kind": "LIKE", "shout": shout}}, owner)
    after = await client.post("/graphql", json=rates, headers=mine)
    assert after.headers["x-cache"] == "MISS"
    assert after.json()["data"]["get_my_rates_shouts"] == [{"shout_id": shout, "my_rate": "LIKE"}]
    theirs = await client.post("/graphql", json=rates, headers={"authorization": f"Bearer {other.token}"})
    assert theirs.json()["data"]["get_my_rates_shouts"] == [{"shout_id": shout, "my_rate": None}]


async def test_identical_misses_wait_for_one_computation(client: Any, app: Any, deps: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers of a hot query right after an invalidation: the first computes and stores the answer, the
    others wait for it and are served it as a hit instead of computing it again each. On one Redis server
    they are given it as the store kept it, found current then, with no look-up; on a cluster, whose store
    cannot check, each looks it up."""
    import asyncio

    from cache import keys

    query = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { slug } } }",
             "variables": {"o": {"limit": 15, "offset": 5}}}
    client.cookies.clear()
    assert (await client.post("/graphql", json=query)).headers["x-cache"] in ("MISS", "HIT")
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # everything stored is now a miss
    stores = app.state.responses.stores
    looked_up_again = _keys_asked(monkeypatch, "get")
    answers = await asyncio.gather(*(client.post("/graphql", json=query) for _ in range(10)))
    assert sorted(a.headers["x-cache"] for a in answers) == ["HIT"] * 9 + ["MISS"]
    assert len({a.content for a in answers}) == 1
    assert app.state.responses.stores - stores == 1
    assert len(looked_up_again) == (9 if TEST_REDIS_CLUSTER else 0)


@pytest.mark.parametrize("write_between", [False, True])
async def test_a_waiter_is_given_the_answer_as_computed_when_no_invalidation_came_between(
        client: Any, app: Any, deps: Any, monkeypatch: pytest.MonkeyPatch, write_between: bool) -> None:
    """The answer of a computation under way is given to an identical request as soon as it is computed,
    before it is kept, when the two look-ups read the same invalidation clock: the waiter is answered while
    the store is still held, and looks nothing up. Control: an invalidation between the two look-ups (of
    a tag the answer does not read) makes the waiter wait for the store, and take what it kept. On a
    cluster the look-up reads no clock: the waiter always waits for the store."""
    import asyncio

    from app.http.single_flight import Flight

    query = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title } }",
             "variables": {"o": {"limit": 7, "offset": 3}}}
    client.cookies.clear()
    await client.post("/graphql", json=query)
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # what is stored is now stale
    keeping, release, waiting = asyncio.Event(), asyncio.Event(), asyncio.Event()
    keep, kept_meanwhile = ResponseCache.keep, Flight.kept_meanwhile

    async def held(self: ResponseCache, *args: Any, **kwargs: Any) -> Any:
        keeping.set()
        await release.wait()
        return await keep(self, *args, **kwargs)

    async def waited(self: Flight[Any, Any]) -> Any:
        waiting.set()
        return await kept_meanwhile(self)

    monkeypatch.setattr(ResponseCache, "keep", held)
    monkeypatch.setattr(Flight, "kept_meanwhile", waited)
    looked_up_again = _keys_asked(monkeypatch, "get")
    computing = asyncio.create_task(client.post("/graphql", json=query))
    await asyncio.wait_for(keeping.wait(), 10)  # computed and published; its store is held
    if write_between:
        await deps.cache.invalidate_tags([f"author:{uuid.uuid4().int % 10**9}"])  # the clock moves
    waiter = asyncio.create_task(client.post("/graphql", json=query))
    if write_between or TEST_REDIS_CLUSTER:
        await asyncio.wait_for(waiting.wait(), 10)  # waits for the store...
        assert not waiter.done()
        release.set()
        answered = await waiter  # ...and is given what it kept (on a cluster, looked up)
        assert len(looked_up_again) == (1 if TEST_REDIS_CLUSTER else 0)
    else:
        answered = await asyncio.wait_for(asyncio.shield(waiter), 10)  # while the store is still held
        assert not computing.done() and not waiting.is_set() and looked_up_again == []
        release.set()
    computed = await computing
    assert (computed.headers["x-cache"], answered.headers["x-cache"]) == ("MISS", "HIT")
    assert answered.content == computed.content
    assert answered.headers["etag"] == computed.headers["etag"]


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="a cluster's look-up reads no clock: its waiter waits for the store")
@pytest.mark.parametrize("front_waits", [True, False], ids=["front-waits", "control-view-waits"])
async def test_a_reader_of_an_answer_being_computed_is_answered_by_the_front_after_one_get(
        own_redis_app: Any, monkeypatch: pytest.MonkeyPatch, front_waits: bool) -> None:
    """A request whose answer is being computed in its worker (a write made the stored one stale) waits for
    the computation in front of the view (app/http/response_front.py): it reads the invalidation clock, one
    GET, where a look-up would run the hit script, and never enters the view. Control: with the front not
    waiting, the same request runs the script and goes through the view, which waits for it."""
    import asyncio

    client, redis, app = own_redis_app
    query = {"query": AUTHOR, "variables": {"s": "author-3"}}
    first = await client.post("/graphql", json=query)
    await app.state.deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # what is stored is now stale
    keeping, release, served = _stores_held_views_counted(monkeypatch, front_waits)
    computing = asyncio.create_task(client.post("/graphql", json=query))
    await asyncio.wait_for(keeping.wait(), 10)  # computed and given to waiters; its store is held
    before = await _commands(redis)
    waiter = await asyncio.wait_for(client.post("/graphql", json=query), 10)
    spent = _spent(before, await _commands(redis))
    release.set()
    computed = await computing
    assert (computed.headers["x-cache"], waiter.headers["x-cache"]) == ("MISS", "HIT")
    assert waiter.content == computed.content == first.content
    if front_waits:
        assert spent == {"get": 1} and len(served) == 1  # the view served the computing request only
    else:
        # the hit script, and the commands it ran (INFO counts them too): the generations read among them
        assert spent["evalsha"] == 1 and spent["mget"] == 1 and len(served) == 2


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="a cluster's look-up reads no clock: its waiter waits for the store")
@pytest.mark.parametrize("front_waits", [True, False], ids=["front-waits", "control-view-waits"])
async def test_a_reader_whose_answer_began_computing_during_its_look_up_is_answered_by_the_front(
        own_redis_app: Any, monkeypatch: pytest.MonkeyPatch, front_waits: bool) -> None:
    """A reader whose look-up finds its answer stale while an identical request has begun computing it meanwhile
    waits for that computation in the front, by the clock its look-up read, instead of going to the view to
    wait there. Control: with the front not waiting, it goes through the view."""
    import asyncio

    client, _, app = own_redis_app
    query = {"query": AUTHOR, "variables": {"s": "author-4"}}
    first = await client.post("/graphql", json=query)
    await app.state.deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # what is stored is now stale
    keeping, release, served = _stores_held_views_counted(monkeypatch, front_waits)
    second_looking, look_up, looks = asyncio.Event(), ResponseCache.look_up, []

    async def ordered(self: ResponseCache, key: str) -> Any:
        looks.append(key)
        if len(looks) == 1:  # the computing request's: once the other's has begun, with no computation yet
            await second_looking.wait()
            return await look_up(self, key)
        second_looking.set()
        found = await look_up(self, key)
        await keeping.wait()  # ...and found stale once the computation has begun
        return found

    monkeypatch.setattr(ResponseCache, "look_up", ordered)
    computing = asyncio.create_task(client.post("/graphql", json=query))
    waiter = asyncio.create_task(client.post("/graphql", json=query))
    answered = await asyncio.wait_for(asyncio.shield(waiter), 10)  # while the store is still held
    release.set()
    computed = await computing
    assert (computed.headers["x-cache"], answered.headers["x-cache"]) == ("MISS", "HIT")
    assert answered.content == computed.content == first.content
    assert len(looks) == 2 and len(served) == (1 if front_waits else 2)


def _stores_held_views_counted(monkeypatch: pytest.MonkeyPatch, front_waits: bool) -> tuple[Any, Any, list[Any]]:
    """From now on the first answer's store is held (`keeping` set once it is reached, until `release` is set)
    and the view's `serve` calls are counted (`served`); unless `front_waits`, the response front waits for
    no computation (the control)."""
    import asyncio

    from app.http.graphql_view import DiscoursGraphQL
    from app.http.response_front import ResponseCacheFront

    if not front_waits:
        async def not_waited(*args: Any) -> tuple[None, int]:
            return None, 0

        monkeypatch.setattr(ResponseCacheFront, "_computed", not_waited)
    keeping, release, served = asyncio.Event(), asyncio.Event(), []
    keep, serve = ResponseCache.keep, DiscoursGraphQL.serve

    async def held(self: ResponseCache, *args: Any, **kwargs: Any) -> Any:
        keeping.set()
        await release.wait()
        return await keep(self, *args, **kwargs)

    async def counted(self: DiscoursGraphQL, *args: Any, **kwargs: Any) -> Any:
        served.append(args)
        return await serve(self, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "keep", held)
    monkeypatch.setattr(DiscoursGraphQL, "serve", counted)
    return keeping, release, served


def _keys_asked(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """The keys `ResponseCache.<method>` (a look-up by key) is asked for from now on, in order."""
    asked: list[str] = []
    original = getattr(ResponseCache, method)

    async def counted(self: ResponseCache, key: str) -> Any:
        asked.append(key)
        return await original(self, key)

    monkeypatch.setattr(ResponseCache, method, counted)
    return asked


async def test_a_hit_is_answered_before_the_graphql_view(own_redis_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The response cache answers in front of routing and Strawberry (app/http/response_front.py): a hit never
    enters the view; a miss enters it once and is looked up once; a persisted query's hash alone finds the
    answer over POST and over GET without fetching the document; a client's current copy gets 304."""
    import hashlib
    import json

    from app.http.graphql_view import DiscoursGraphQL

    client, redis, app = own_redis_app
    await app.state.deps.cache.invalidate_tags(["author:0"])  # a write before: the invalidation clock runs
    entered = []
    run = DiscoursGraphQL.run

    async def counted(self: DiscoursGraphQL, request: Any, *args: Any, **kwargs: Any) -> Any:
        entered.append(request.method)
        return await run(self, request, *args, **kwargs)

    monkeypatch.setattr(DiscoursGraphQL, "run", counted)
    document = "query Author($s: String) { get_author(slug: $s) { id slug name } }"
    variables = {"s": "author-3"}
    body = {"query": document, "variables": variables, "operationName": "Author"}
    await client.post("/graphql", json={"query": "{ get_topics_all { slug } }"})  # the hit script is loaded
    entered.clear()
    lookups = _keys_asked(monkeypatch, "look_up")

    first = await client.post("/graphql", json=body)
    assert first.headers["x-cache"] == "MISS" and entered == ["POST"]
    assert len(lookups) == 1  # the view did not look the key up again

    before = await _commands(redis)
    second = await client.post("/graphql", json=body)
    # the store found the stamp current at this invalidation clock: the first hit checks no generation
    assert _spent(before, await _commands(redis)) == {"hmget": 1, "get": 1}
    assert second.headers["x-cache"] == "HIT" and second.content == first.content and entered == ["POST"]
    assert second.headers["cache-control"] == "public, max-age=60"
    assert second.headers["etag"] == first.headers["etag"]

    digest = {"persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(document.encode()).hexdigest()}}
    before = await _commands(redis)
    by_hash = await client.post("/graphql", json={"extensions": digest, "variables": variables,
                                                  "operationName": "Author"})
    over_get = await client.get("/graphql", params={"extensions": json.dumps(digest), "operationName": "Author",
                                                   "variables": json.dumps(variables)})
    # two hits and nothing else: the documents were never fetched (nor registered: the answer was enough)
    assert _spent(before, await _commands(redis)) == {"hmget": 2, "get": 2}
    assert by_hash.content == over_get.content == first.content and entered == ["POST"]
    assert by_hash.headers["x-cache"] == over_get.headers["x-cache"] == "HIT"

    current = await client.post("/graphql", json=body, headers={"if-none-match": first.headers["etag"]})
    assert current.status_code == 304 and current.content == b"" and entered == ["POST"]
    assert current.headers["etag"] == first.headers["etag"] and current.headers["x-cache"] == "HIT"


async def test_a_guests_private_entry_is_not_served_to_a_signed_in_reader(api: Api, client: Any) -> None:
    """Under the public key, a private answer is a guest's (here an author's email, hidden from guests):
    the front serves it to guests only, and hands a signed-in reader to the view, which looks under the
    reader's own key."""
    reader = await api.user()
    feed = {"query": PRIVATE, "variables": {"s": reader.slug}}
    guest, again = await _stored_then_hit(client, feed)
    assert again.headers["cache-control"].startswith("private")
    signed_in = await client.post("/graphql", json=feed, headers={"authorization": f"Bearer {reader.token}"})
    assert signed_in.headers["x-cache"] == "MISS"  # the reader's own entry, computed for them
    assert guest.json()["data"]["get_author"]["email"] is None
    assert signed_in.json()["data"]["get_author"]["email"]


async def _stored_then_hit(client: httpx.AsyncClient, body: dict[str, Any]) -> tuple[httpx.Response, httpx.Response]:
    """A guest's request twice: computed and stored, then the same bytes from the response cache."""
    client.cookies.clear()
    first = await client.post("/graphql", json=body)
    second = await client.post("/graphql", json=body)
    assert (first.headers["x-cache"], second.headers["x-cache"]) == ("MISS", "HIT")
    assert second.content == first.content
    return first, second


def _spent(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    spent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    spent.pop("info", None)  # the reading of the statistics itself
    return spent


async def test_a_reader_who_waited_for_an_answer_computed_before_a_write_gets_the_write(
        api: Api, client: Any, app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An identical request that waits for an answer being computed must not be given it when a write was
    acknowledged meanwhile: the answer may have been read before the write. The waiter looks the stored
    answer up, finds its stamp outdated, and computes its own."""
    import asyncio

    from cache.response.responses import ResponseCache

    user = await api.user()
    read = {"query": 'query($s: String) { get_author(slug: $s) { name } }', "variables": {"s": user.slug}}
    stored_once = asyncio.Event()
    release = asyncio.Event()
    keep = ResponseCache.keep

    async def held(self: ResponseCache, *args: Any, **kwargs: Any) -> Any:
        if not stored_once.is_set():  # the first computation is held once it has read, before it stores
            stored_once.set()
            await release.wait()
        return await keep(self, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "keep", held)
    client.cookies.clear()
    first = asyncio.create_task(client.post("/graphql", json=read))
    await stored_once.wait()  # it read the old name
    await api('mutation { update_author(profile: {name: "Renamed"}) { error } }', user=user)
    client.cookies.clear()
    second = asyncio.create_task(client.post("/graphql", json=read))
    for _ in range(20):  # the second request is now waiting for the first one's answer
        await asyncio.sleep(0)
    release.set()
    old, new = await first, await second
    assert old.json()["data"]["get_author"]["name"] != "Renamed"
    assert new.json()["data"]["get_author"]["name"] == "Renamed", new.headers.get("x-cache")


@pytest.mark.parametrize("flights_joined", [3, 1], ids=["next-flight-joined", "control-each-computes"])
async def test_readers_whose_computation_a_write_outdated_wait_for_one_next_computation(
        api: Api, client: Any, app: Any, monkeypatch: pytest.MonkeyPatch, flights_joined: int) -> None:
    """Readers who began after a write, waiting for a computation that began before it (so neither given
    its answer as computed nor as kept: the write outdated it), wait for the next computation, begun after
    them, instead of each computing the answer: two computations for the six requests, each waiter given
    the write. Control: waiting for one computation only, each waiter computes its own (six computations;
    the answers are just as current)."""
    import asyncio

    import app.http.single_flight
    from app.http.read_path import ReadPath
    from app.http.single_flight import Flight

    monkeypatch.setattr(app.http.single_flight, "FLIGHTS_JOINED", flights_joined)
    user = await api.user()
    read = {"query": 'query($s: String) { get_author(slug: $s) { name } }', "variables": {"s": user.slug}}
    first_stores, release, waiting = asyncio.Event(), asyncio.Event(), []
    keep, kept_meanwhile, compute = ResponseCache.keep, Flight.kept_meanwhile, ReadPath._compute
    computations = 0

    async def held(self: ResponseCache, *args: Any, **kwargs: Any) -> Any:
        if not first_stores.is_set():  # the first computation is held once it has read, before it stores
            first_stores.set()
            await release.wait()
        return await keep(self, *args, **kwargs)

    async def waited(self: Flight[Any, Any]) -> Any:
        waiting.append(self)
        return await kept_meanwhile(self)

    async def counted(self: ReadPath, *args: Any, **kwargs: Any) -> Any:
        nonlocal computations
        computations += 1
        return await compute(self, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "keep", held)
    monkeypatch.setattr(Flight, "kept_meanwhile", waited)
    monkeypatch.setattr(ReadPath, "_compute", counted)
    client.cookies.clear()
    first = asyncio.create_task(client.post("/graphql", json=read))
    await asyncio.wait_for(first_stores.wait(), 10)  # it read the old name
    await api('mutation { update_author(profile: {name: "Renamed"}) { error } }', user=user)
    client.cookies.clear()
    waiters = [asyncio.create_task(client.post("/graphql", json=read)) for _ in range(5)]
    for _ in range(200):  # each waiter reaches the first computation's store
        if len(waiting) == 5:
            break
        await asyncio.sleep(0.01)
    assert len(waiting) == 5
    release.set()
    old, *new = await asyncio.gather(first, *waiters)
    assert old.json()["data"]["get_author"]["name"] != "Renamed"
    assert [answer.json()["data"]["get_author"]["name"] for answer in new] == ["Renamed"] * 5
    assert computations == (2 if flights_joined > 1 else 6)


async def test_a_response_key_that_holds_something_else_is_a_miss(cache: Cache, redis: Redis) -> None:
    """Whatever else a response's key holds (an older layout, an operator's SET), a reader computes the
    answer instead of failing: inside the hit script on one server, and from WRONGTYPE on a cluster, which
    reads the hash outside a script."""
    responses = ResponseCache(cache)
    key = request_key("0" * 64, None, {})
    await redis.set(key, "not a stored response")
    assert await responses.get(key) is None
    await redis.delete(key)
    await redis.rpush(key, "a", "b")
    assert await responses.get(key) is None
    assert responses.cache.available  # an answer of Redis, not a failure of it


def _gzip_hit(body: bytes, key: str) -> Hit:
    return Hit(gzip.compress(body), True, [], etag_of(body), 60, False, key)


def test_the_plain_forms_kept_stay_within_their_bytes() -> None:
    kept = PlainBodies(max_bytes=250)
    bodies = [bytes([n]) * 100 for n in range(4)]
    for n, body in enumerate(bodies):
        assert kept.of(_gzip_hit(body, f"r:{n}")) == body
    assert [plain for _, plain in kept._kept.values()] == bodies[2:]  # the oldest gave way: 200 of 250 bytes
    assert kept.of(_gzip_hit(b"x" * 300, "r:x")) == b"x" * 300 and len(kept._kept) == 2  # too large to keep
    assert kept.kept_bytes == 200
    plain = Hit(b"as stored", False, [], 'W/"p"', 60, False, "r:p")
    assert kept.of(plain) is plain.body


def test_a_response_changed_by_a_write_keeps_one_plain_form() -> None:
    """Each write that changes a response makes a new body under the same key: its plain form replaces
    the old one's, so a worker under writes keeps the bytes of the responses read, not of their versions;
    the same version again is the kept form, not a new decompression."""
    kept = PlainBodies(max_bytes=1000)
    first = kept.of(_gzip_hit(b"a" * 100, "r:page"))
    assert kept.of(_gzip_hit(b"a" * 100, "r:page")) is first
    for version in (b"b" * 120, b"c" * 90):  # written twice since
        assert kept.of(_gzip_hit(version, "r:page")) == version
        assert list(kept._kept) == ["r:page"] and kept.kept_bytes == len(version)
    kept.of(_gzip_hit(b"d" * 50, "r:other"))
    assert kept.kept_bytes == 140
    assert kept.of(_gzip_hit(b"e" * 2000, "r:page")) == b"e" * 2000  # too large to keep: the old form goes too
    assert list(kept._kept) == ["r:other"] and kept.kept_bytes == 50


def test_a_plain_form_that_fits_exactly_is_kept_and_a_plain_hit_is_its_body() -> None:
    kept = PlainBodies(max_bytes=200)
    for n in range(2):  # 100 + 100: exactly the bytes allowed, both kept
        body = bytes([n]) * 100
        assert kept.of(_gzip_hit(body, f"r:{n}")) == body
    assert len(kept._kept) == 2
    whole = PlainBodies(max_bytes=100)
    assert whole.of(_gzip_hit(b"y" * 100, "r:y")) == b"y" * 100
    assert len(whole._kept) == 1  # as large as allowed: kept
    assert Hit(b"as stored", False, [], 'W/"p"', 60, False, "r:p").plain() == b"as stored"


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="the hit script reads generations inside Redis: one server only")
async def test_reading_apart_answers_what_the_hit_script_answers(cache: Cache, redis: Redis) -> None:
    """A Redis Cluster reads a stored response apart (the hash, then the generations, which live in other
    slots: cache/response/responses.py `_check_apart`); one server reads both inside the hit script. Both answer
    alike: a miss, a hit with every field (a small public answer, a large private one kept gzipped), one
    that counts no views, a hash that lacks the optional fields, a stale entry, a hash without its stamp
    and a key of another type. Where it finds nothing current, the script also gives the invalidation clock
    it read; where it checked a hit's stamp, the clock it found the hit current at."""
    responses = ResponseCache(cache)
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    capture = Capture(generations={tag: await redis.get(keys.generation(tag))}, views=[7, 8])
    small, large = request_key("1" * 64, None, {}), request_key("2" * 64, None, {})

    async def answers(key: str) -> list[Any]:
        script = await responses._check_here(key)
        apart = await responses._check_apart(key)
        if script[0] != 2:  # the script also says the invalidation clock it read (app/http/single_flight.py)
            assert script[1] == await redis.get(keys.invalidation_clock())
            assert script[2:] == ([b"", tag.encode()] if script[0] == 1 else [])  # what moved (cache/refresh.py)
            script = script[:1]
        elif len(script) > 8:  # the script also says the clock it found a hit current at, when it checked
            assert script[8] == await redis.get(keys.invalidation_clock())
            script = script[:8]
        assert apart == script, (apart, script)
        return apart

    assert await answers(small) == [0]
    assert await responses.store(small, b'{"data": 1}', capture, 'W/"s"', max_age=60)
    assert await responses.store(large, b"[" + b"1," * COMPRESS_OVER + b"1]", capture, 'W/"l"', max_age=30,
                                 private=True)
    assert await answers(small) == [2, b'{"data": 1}', b"", b"7,8", b'W/"s"', b"60", b"", b""]  # last: not graced
    assert await responses.get(small) == Hit(b'{"data": 1}', False, [7, 8], 'W/"s"', 60, False, small)
    found = await answers(large)
    assert found[0] == 2 and found[2:] == [b"1", b"7,8", b'W/"l"', b"30", b"1", b""]
    unviewed, bare, other = (request_key(str(n) * 64, None, {}) for n in (3, 4, 5))
    assert await responses.store(unviewed, b"{}", Capture(generations=capture.generations, views=[]), 'W/"u"',
                                 max_age=60)
    assert await answers(unviewed) == [2, b"{}", b"", b"", b'W/"u"', b"60", b"", b""]
    await redis.hset(bare, mapping={"s": await redis.hget(small, "s"), "b": b"{}"})  # no views, ETag or age
    assert await answers(bare) == [2, b"{}", b"", b"", b"", b"", b"", b""]
    assert await responses.get(bare) == Hit(b"{}", False, [], "", 0, False, bare)  # no age: not kept by clients
    await redis.set(other, b"not a stored response")
    assert await answers(other) == [0]
    await cache.invalidate_tags([tag])
    assert await answers(small) == await answers(large) == [1]
    await redis.hset(small, "b", b"a body without its stamp")
    await redis.hdel(small, "s")
    assert await answers(small) == [0]


def test_one_request_one_key_whatever_the_order_of_its_variables() -> None:
    """Clients serialize variables in any key order: the same variables find the same stored answer; other
    values, another operation or a viewer's scope do not."""
    digest = "a" * 64
    key = request_key(digest, "Q", {"limit": 10, "offset": 0, "by": {"topic": "x", "layout": "y"}})
    assert key == request_key(digest, "Q", {"by": {"layout": "y", "topic": "x"}, "offset": 0, "limit": 10})
    others = {request_key(digest, "Q", {"limit": 10, "offset": 20, "by": {"topic": "x", "layout": "y"}}),
              request_key(digest, "R", {"limit": 10, "offset": 0, "by": {"topic": "x", "layout": "y"}}),
              request_key(digest, "Q", {"limit": 10, "offset": 0, "by": {"topic": "x", "layout": "y"}}, "user:1")}
    assert key not in others and len(others) == 3


def test_a_reply_is_bytes_whichever_form_redis_gave() -> None:
    assert as_bytes("тело") == "тело".encode() and as_bytes(b"body") == b"body"


def test_an_etag_is_weak_and_names_the_body() -> None:
    """Weak (the same answer goes out gzip and plain), and a digest of the body: another body, another tag,
    or a client's copy of an older answer would be taken as current (304)."""
    one, other = etag_of(b'{"data": 1}'), etag_of(b'{"data": 2}')
    assert re.fullmatch(r'W/"[0-9a-f]{32}"', one), one
    assert one != other and one == etag_of(b'{"data": 1}')


async def test_what_is_kept_and_how_long(cache: Cache, redis: Redis) -> None:
    """A store is one script (on a cluster one MULTI/EXEC: the entry never exists without its expiry), its
    expiry jittered (seed 004: entries stored together do not expire together), a body of exactly 10 KB
    kept as it is (over it, gzip), and nothing is kept for a capture that cannot be stamped, or (on one
    server, where the script checks it) whose stamp a write made stale meanwhile."""
    responses = ResponseCache(cache, ttl=600)
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    capture = Capture(generations={tag: await redis.get(keys.generation(tag))})
    before = await _commands(redis)
    stored = [request_key(uuid.uuid4().hex * 2, None, {}) for _ in range(12)]
    for key in stored:
        assert await responses.store(key, b"x" * COMPRESS_OVER, capture, 'W/"k"', max_age=600)
    if not TEST_REDIS_CLUSTER:  # a cluster's commandstats are per node
        assert _spent(before, await _commands(redis))["evalsha"] >= len(stored)
    ttls = [await redis.ttl(key) for key in stored]
    assert all(600 <= ttl <= 660 for ttl in ttls) and len(set(ttls)) > 1, ttls
    assert (await responses._check_apart(stored[0]))[2] == b""  # exactly 10 KB: not gzipped
    unstampable = request_key("f" * 64, None, {})
    assert not await responses.store(unstampable, b"{}", Capture(storable=False), 'W/"n"', max_age=60)
    assert not await responses.store(unstampable, b"{}", Capture(), 'W/"n"', max_age=60)  # read no tag
    assert await redis.exists(unstampable) == 0
    await cache.invalidate_tags([tag])  # a write while an answer read under `capture` was computed
    outdated = request_key("9" * 64, None, {})
    kept = await responses.store(outdated, b"{}", capture, 'W/"o"', max_age=60)
    if TEST_REDIS_CLUSTER:  # kept unchecked, and found stale by whoever looks it up
        assert kept == Kept(None) and await responses.get(outdated) is None
    else:
        assert kept is None and await redis.exists(outdated) == 0


async def test_a_store_redis_refuses_is_said_and_not_kept(settings: Settings, down: Cache) -> None:
    from telemetry import metrics

    responses = ResponseCache(down)
    failed = metrics.REDIS_ERRORS.labels("response cache store")._value.get()
    capture = Capture(generations={"author:1": b"5"})
    assert not await responses.store(request_key("e" * 64, None, {}), b"{}", capture, 'W/"d"', max_age=60)
    assert metrics.REDIS_ERRORS.labels("response cache store")._value.get() - failed == 1
    assert not down.available and responses.stores == 0


async def _read_under(cache: Cache, tags: list[str]) -> Capture:
    """What a response computed now captures: a value read under `tags`, their current generations."""
    from cache import response_capture

    capture, token = response_capture.begin()
    try:
        await cache.get_many([f"author:id:{uuid.uuid4().int % 10**9}"], [tags])
    finally:
        response_capture.end(token)
    return capture


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="the hit script, which a cluster's hit reads apart, keeps the clock")
async def test_a_hit_checks_its_stamp_again_only_once_the_invalidation_clock_moved(cache: Cache, redis: Redis) -> None:
    """A hit checks every generation of its stamp only when the invalidation clock moved since it was last
    found current; every invalidation moves the clock, of whatever tag, and a lost write's containment
    forgets it with the epochs (the next hit that finds an entry current starts it again, at random). The
    control changes a generation behind the clock's back (nothing but this test does): the hit does not
    see it, which shows the check was skipped."""
    responses = ResponseCache(cache, ttl=600)
    tags = [f"author:{uuid.uuid4().int % 10**9}" for _ in range(3)]
    await cache.invalidate_tags(tags)
    capture = await _read_under(cache, tags)
    key = request_key(uuid.uuid4().hex * 2, None, {})

    async def hit() -> bool:
        return await responses.get(key) is not None

    assert await responses.store(key, b'{"data":1}', capture, 'W/"c"', max_age=600)
    assert await redis.hget(key, "c") == await redis.get(keys.invalidation_clock())  # found current as kept
    assert await hit()
    await redis.set(keys.generation(tags[0]), 1)  # behind the clock's back
    assert await hit()  # the control: checked at this clock already
    await cache.invalidate_tags([f"topic:{uuid.uuid4().int % 10**9}"])  # another tag: the clock moves
    assert not await hit()  # checked again, and the generation changed above is seen
    assert await responses.store(key, b'{"data":2}', Capture(generations={
        **capture.generations, tags[0]: b"1"}), 'W/"d"', max_age=600)
    assert await hit() and await hit()
    await cache.invalidate_tags([tags[1]])
    assert not await hit()  # one of its own tags
    assert await responses.store(key, b'{"data":3}', Capture(generations={
        **capture.generations, tags[0]: b"1", tags[1]: await redis.get(keys.generation(tags[1]))}),
        'W/"e"', max_age=600)
    assert await hit()
    assert await cache._forget_epochs() == []  # a lost write's containment
    assert await redis.exists(keys.invalidation_clock()) == 0
    assert not await hit()  # the epoch it was stamped with is gone: no clock lets it pass
    capture = await _read_under(cache, tags)  # stamped anew under the new epoch
    assert await responses.store(key, b'{"data":4}', capture, 'W/"f"', max_age=600)
    assert await hit()  # found current: the clock starts again, at random, and the entry notes it
    clock = await redis.get(keys.invalidation_clock())
    assert clock is not None and await redis.hget(key, "c") == clock and 0 < await redis.ttl(keys.invalidation_clock())


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="a cluster's hit reads the hash and its generations apart")
async def test_once_a_worker_saw_the_clock_move_its_other_hits_go_to_the_script_at_once(
        cache: Cache, redis: Redis) -> None:
    """After the clock moves, the first hit of a response in a worker reads the clock and the hash (the plain
    read), finds the clock moved, and the script checks the stamp: two round trips (the control, a worker
    that has not seen the move). A worker whose plain read of one response showed the move sends its first hit
    of another it had found current at the old clock to the script at once: one round trip."""
    tags = [f"author:{uuid.uuid4().int % 10**9}"]
    await cache.invalidate_tags(tags)
    first, second = request_key(uuid.uuid4().hex * 2, None, {}), request_key(uuid.uuid4().hex * 2, None, {})
    for key in (first, second):
        assert await ResponseCache(cache, ttl=600).store(key, b'{"data":1}', await _read_under(cache, tags),
                                                         'W/"c"', max_age=600)
    seen, other = ResponseCache(cache, ttl=600), ResponseCache(cache, ttl=600)
    asked: list[tuple[str, ResponseCache, str]] = []
    for responses in (seen, other):
        for name in ("_read_plainly", "_hit"):
            def counting(original: Any, name: str = name, responses: ResponseCache = responses) -> Any:
                async def counted(*args: Any, **kwargs: Any) -> Any:
                    asked.append((name, responses, args[0] if args else kwargs["keys"][0]))
                    return await original(*args, **kwargs)
                return counted

            setattr(responses, name, counting(getattr(responses, name)))
    await cache.invalidate_tags([f"topic:{uuid.uuid4().int % 10**9}"])  # the clock moves
    for responses in (seen, other):
        assert await responses.get(first) is not None and await responses.get(second) is not None
    asked.clear()  # both workers found both current at this clock, by the script
    await cache.invalidate_tags([f"topic:{uuid.uuid4().int % 10**9}"])  # and it moves again
    assert await other.get(first) is not None  # the control: it has not seen the move
    assert asked == [("_read_plainly", other, first), ("_hit", other, first)]
    asked.clear()
    # `first` is current at the new clock now (the script noted it): a plain read finds it so, and shows the move
    assert await seen.get(first) is not None and await seen.get(second) is not None
    assert asked == [("_read_plainly", seen, first), ("_hit", seen, second)]


@pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="a cluster's hit reads the hash and its generations apart")
async def test_a_hit_at_the_clock_it_was_found_current_at_runs_no_script(cache: Cache, redis: Redis) -> None:
    """A hit whose response was found current at the clock's value is two reads in one round trip (the clock,
    the hash), no script; once the clock moved, the script checks the stamp and notes the new clock, and the
    hits after it run none again. A response the script found stale is looked up by the script alone (one
    round trip) until it finds it current again. A key holding something else than a response is a miss."""
    responses = ResponseCache(cache, ttl=600)
    tags = [f"author:{uuid.uuid4().int % 10**9}"]
    await cache.invalidate_tags(tags)
    key = request_key(uuid.uuid4().hex * 2, None, {})
    assert await responses.store(key, b'{"data":1}', await _read_under(cache, tags), 'W/"c"', max_age=600)
    scripts: list[str] = []
    script = responses._hit

    async def counted(**kwargs: Any) -> Any:
        scripts.append(kwargs["keys"][0])
        return await script(**kwargs)

    responses._hit = counted  # type: ignore[method-assign]
    found = await responses.get(key)
    assert found is not None and found.body == b'{"data":1}' and found.etag == 'W/"c"' and found.max_age == 600
    assert await responses.get(key) is not None and scripts == []
    await cache.invalidate_tags([f"topic:{uuid.uuid4().int % 10**9}"])  # another tag: the clock moves
    assert await responses.get(key) is not None and scripts == [key]  # checked by the script, still current
    assert await redis.hget(key, "c") == await redis.get(keys.invalidation_clock())
    assert await responses.get(key) is not None and scripts == [key]  # at the new clock: no script again
    await cache.invalidate_tags(tags)  # the control: its own tag moves
    assert await responses.get(key) is None and scripts == [key, key]
    # found stale by the script: looked up by it at once (one round trip) until it finds a current answer
    plain_reads: list[str] = []
    read_plainly = responses._read_plainly

    async def counted_plain(looked: str) -> Any:
        plain_reads.append(looked)
        return await read_plainly(looked)

    responses._read_plainly = counted_plain  # type: ignore[method-assign]
    assert await responses.get(key) is None and scripts == [key] * 3 and plain_reads == []
    assert await responses.store(key, b'{"data":2}', await _read_under(cache, tags), 'W/"d"', max_age=600)
    assert await responses.get(key) is not None and scripts == [key] * 4 and plain_reads == []
    assert await responses.get(key) is not None and scripts == [key] * 4 and plain_reads == [key]
    other = request_key(uuid.uuid4().hex * 2, None, {})
    await redis.set(other, b"not a response", ex=60)
    assert await responses.get(other) is None


async def test_what_is_sent_along_with_a_store_is_sent_whatever_becomes_of_the_response(cache: Cache,
                                                                                      redis: Redis) -> None:
    """`also` (the rendered answers a response is made of, each stamped by its own capture) goes out with a
    response that is kept, one that a write made stale meanwhile, and one that cannot be stamped at all."""
    responses = ResponseCache(cache, ttl=600)
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    current = Capture(generations={tag: await redis.get(keys.generation(tag))})
    beside = [f"test:beside:{uuid.uuid4().hex}" for _ in range(3)]

    def also(name: str) -> Any:
        return lambda pipe: pipe.set(name, b"1", ex=60)

    assert await responses.store(request_key(uuid.uuid4().hex * 2, None, {}), b"{}", current, 'W/"a"', max_age=60,
                                 also=also(beside[0]))
    stale = Capture(generations={tag: b"0"})
    kept = await responses.store(request_key(uuid.uuid4().hex * 2, None, {}), b"{}", stale, 'W/"b"', max_age=60,
                                 also=also(beside[1]))
    assert (kept == Kept(None)) if TEST_REDIS_CLUSTER else kept is None
    assert not await responses.store(request_key(uuid.uuid4().hex * 2, None, {}), b"{}", Capture(), 'W/"c"',
                                     max_age=60, also=also(beside[2]))
    assert [await redis.exists(name) for name in beside] == [1, 1, 1]
