"""Hot responses computed again after the write that made them stale is answered, their readers served what was
there under a grace while the write runs, never after its answer (cache/refresh.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from ambient import REFRESHING
from app.http import write_path
from app.main import create_app
from cache import keys
from cache.redis.limits import PUBLISH_PER_CALL
from cache.refresh import GRACE_CHAIN_MOST, INDEXED_PER_TAG, Refreshing
from cache.response.responses import ResponseCache, request_key
from cache.response_capture import Capture
from cache.store import Cache
from resolvers.deps import Deps
from tests.conftest import single_redis
from tests.helpers import Api, User, pipelines_sent

pytestmark = single_redis  # graces and refresh indexes live beside the generations: one Redis server

PAGE = "query { load_reactions_by(by: {}, limit: 5) { id body created_by { slug } } }"
COMMENT = "mutation($s: Int!, $b: String) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) { error } }"


@pytest.fixture
async def api_of(deps: Deps, settings: Any) -> AsyncIterator[Any]:
    """An Api on an app whose writes refresh at most `refreshed` responses each (0: none, the control)."""
    clients: list[httpx.AsyncClient] = []

    def made(refreshed: int) -> Api:
        app = create_app(settings.model_copy(update={"responses_refreshed_per_write": refreshed}), deps=deps)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")
        clients.append(client)
        return Api(client, deps)

    yield made
    for client in clients:
        await client.aclose()


async def _read(api: Api) -> httpx.Response:
    response = await api.client.post("/graphql", json={"query": PAGE})
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    return response


async def _page_read_under_writes(api: Api) -> tuple[User, int]:
    """A page read, made stale by a comment and read again (so noted for writes to refresh): its writer and shout."""
    writer, author = await api.user(), await api.user()
    shout = await api.published(author)
    await api(COMMENT, {"s": shout, "b": "first"}, writer)
    for _ in range(2):
        await _read(api)
    await api(COMMENT, {"s": shout, "b": "second"}, writer)
    assert (await _read(api)).headers["x-cache"] == "MISS"  # stale, computed again: noted
    return writer, shout


@pytest.mark.parametrize("refreshed", [4, 0], ids=["refreshed", "control-off"])
async def test_a_write_computes_again_the_hot_answers_it_makes_stale_before_it_is_answered(
        api_of: Any, sql_counter: Any, refreshed: int) -> None:
    """A page read again after a comment made it stale is computed again by the next comment, after that
    comment's answer: the next read is a hit holding the new comment, with no SQL. Control: with no refresh
    the next read computes the page."""
    api = api_of(refreshed)
    writer, shout = await _page_read_under_writes(api)
    await api(COMMENT, {"s": shout, "b": "third"}, writer)
    sql_counter.reset()
    response = await _read(api)
    assert "third" in response.text
    if refreshed:
        assert response.headers["x-cache"] == "HIT" and sql_counter.count == 0
    else:
        assert response.headers["x-cache"] == "MISS" and sql_counter.count > 0


@pytest.mark.parametrize("refreshed", [4, 0], ids=["refreshed", "control-off"])
async def test_a_refresh_reads_the_clock_and_looks_nothing_up(api_of: Any, monkeypatch: pytest.MonkeyPatch,
                                                              refreshed: int) -> None:
    """The write made the answer it refreshes stale: the refresh reads the invalidation clock (one GET) and
    computes it, with no look-up of the answer before its claim; the next read is a hit with the write.
    Control: with no refresh, neither is read, and the next read computes the page."""
    api = api_of(refreshed)
    writer, shout = await _page_read_under_writes(api)
    looked: list[str] = []
    clocks: list[bytes | None] = []
    look_up, clock = ResponseCache.look_up, ResponseCache.clock

    async def looking(self: ResponseCache, key: str) -> Any:
        looked.append(key)
        return await look_up(self, key)

    async def reading(self: ResponseCache) -> bytes | None:
        clocks.append(found := await clock(self))
        return found

    monkeypatch.setattr(ResponseCache, "look_up", looking)
    monkeypatch.setattr(ResponseCache, "clock", reading)
    await api(COMMENT, {"s": shout, "b": "third"}, writer)
    assert looked == [] and len(clocks) == (1 if refreshed else 0) and all(clocks)
    response = await _read(api)
    assert "third" in response.text and response.headers["x-cache"] == ("HIT" if refreshed else "MISS")


async def test_scripts_redis_forgot_are_loaded_and_run_again(api_of: Any, redis: Redis, sql_counter: Any) -> None:
    """Redis forgetting its scripts (a restart, SCRIPT FLUSH) costs nothing but a round trip: each script sent
    by its hash in a pipeline (cache/redis/client.py `queue_script`) is loaded and run again: the read's fill lock
    with its read, the response's store, the write's move with its graces. The page is refreshed by the write
    all the same (a hit with its comment, no SQL) and the write's grace is gone."""
    api = api_of(4)
    writer, shout = await _page_read_under_writes(api)
    await redis.script_flush()
    await api(COMMENT, {"s": shout, "b": "after a flush"}, writer)
    sql_counter.reset()
    response = await _read(api)
    assert response.headers["x-cache"] == "HIT" and "after a flush" in response.text and sql_counter.count == 0
    assert not await redis.exists(keys.grace(keys.TAG_REACTIONS))
    await redis.script_flush()
    await api.deps.cache.invalidate_tags([keys.TAG_REACTIONS])  # a move no request made: computed, leased, kept
    assert (await _read(api)).headers["x-cache"] == "MISS"
    assert (await _read(api)).headers["x-cache"] == "HIT"


async def test_a_write_is_answered_before_it_computes_hot_answers_again_and_no_read_after_it_is_stale(
        api_of: Any, redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment's answer goes out before the page it made stale is computed again: its writer waits for no
    other reader's answer. By then its grace is gone and its live message is out, so a reader that comes before
    the refresh is done computes the page with the comment, never the page from before it; once the refresh is
    done, the page is a hit holding it."""
    api = api_of(4)
    writer, shout = await _page_read_under_writes(api)
    refreshing, release, answered = asyncio.Event(), asyncio.Event(), asyncio.Event()
    refresh = write_path.refresh

    async def held(*args: Any) -> None:
        refreshing.set()
        await release.wait()
        await refresh(*args)

    monkeypatch.setattr(write_path, "refresh", held)
    app = api.client._transport.app  # type: ignore[attr-defined]

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()
            await send(message)

        await app(scope, receive, sending)

    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.channel_shout(shout))
    assert (await pubsub.get_message(timeout=2))["type"] == "subscribe"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=watched), base_url="http://test") as http:
        write = asyncio.create_task(http.post("/graphql", json={"query": COMMENT, "variables": {"s": shout, "b": "held"}},
                                              headers={"authorization": f"Bearer {writer.token}"}))
        await asyncio.wait_for(refreshing.wait(), 10)
        assert answered.is_set()  # the answer went out before the refresh began
        assert not await redis.exists(keys.grace(keys.TAG_REACTIONS))
        assert await pubsub.get_message(timeout=2) is not None, "the live message goes out before the answer"
        during = await _read(api)
        assert during.headers["x-cache"] == "MISS" and "held" in during.text  # computed, never the old page
        release.set()
        assert (await write).status_code == 200
    after = await _read(api)
    assert after.headers["x-cache"] == "HIT" and "held" in after.text
    await pubsub.aclose()


async def moved(cache: Cache, tag: str, refreshing: Refreshing | None) -> None:
    """`tag` moved as a write over HTTP moves it, with its grace (`refreshing`), or with none (None)."""
    token = REFRESHING.set(refreshing)
    try:
        await cache.invalidate_tags([tag])
    finally:
        REFRESHING.reset(token)


async def test_a_grace_covers_the_moves_of_writes_not_yet_answered_only(cache: Cache, redis: Redis) -> None:
    """A response stale by graced moves alone is served, marked graced; by a move no grace covers (a write that
    is not a request's), it is stale. Two writes not yet answered chain their moves: what was stamped before
    both is served until the first is answered, what was stamped between them until the second is; a write
    answered first cuts off what only it covers."""
    responses = ResponseCache(cache)
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])

    async def stored(name: str) -> str:
        key = request_key(name * 64, None, {})
        capture = Capture(generations={tag: await redis.get(keys.generation(tag))}, views=[])
        assert await responses.store(key, b"{}", capture, 'W/"x"', max_age=60)
        return key

    async def state(key: str) -> str:
        looked = await responses.look_up(key)
        return "stale" if looked.hit is None else "graced" if looked.hit.graced else "current"

    before = await stored("1")
    first, second = Refreshing(4, 5000), Refreshing(4, 5000)
    await moved(cache, tag, first)
    assert await state(before) == "graced"
    between = await stored("2")
    await moved(cache, tag, second)
    assert [await state(before), await state(between)] == ["graced", "graced"]
    await cache.end_graces(first)
    assert [await state(before), await state(between)] == ["stale", "graced"]
    await cache.end_graces(second)
    assert await state(between) == "stale" and not await redis.exists(keys.grace(tag))

    # answered in the other order: the second write's end cuts off the first's move too
    before = await stored("3")
    first, second = Refreshing(4, 5000), Refreshing(4, 5000)
    await moved(cache, tag, first)
    await moved(cache, tag, second)
    await cache.end_graces(second)
    assert await state(before) == "stale"
    await cache.end_graces(first)

    # a move with no grace between: nothing stamped before it is served
    before = await stored("4")
    third = Refreshing(4, 5000)
    await moved(cache, tag, third)
    await moved(cache, tag, None)
    assert await state(before) == "stale"
    await moved(cache, tag, Refreshing(4, 5000))
    assert await state(before) == "stale"  # the chain started again after the move no grace covered


async def test_an_answer_stale_by_graced_moves_alone_is_kept_graced_unless_what_is_there_is_newer(
        cache: Cache, redis: Redis) -> None:
    """Two writes on a tag, neither answered: an answer computed between their moves (a refresh of the first,
    kept after the second moved on) is kept, served graced, and not found current at the clock; once the first
    is answered it is still served (only the second's move makes it stale), once the second is, it is stale. It
    replaces an answer from before both (older in the chain), never a current one nor a later graced one. Control:
    stale by a move no grace covers, nothing is kept."""
    responses = ResponseCache(cache)
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    key = request_key(uuid.uuid4().hex * 2, None, {})

    async def stamped_now() -> Capture:
        return Capture(generations={tag: await redis.get(keys.generation(tag))}, views=[])

    async def store(body: bytes, capture: Capture) -> Any:
        return await responses.keep(responses.prepare(key, body, capture, 'W/"x"', max_age=60))

    async def served() -> tuple[bytes | None, bool]:
        looked = await responses.look_up(key)
        return (None, False) if looked.hit is None else (looked.hit.body, looked.hit.graced)

    before = await stamped_now()
    assert (await store(b'{"v":0}', before)).hit is not None  # current: kept as a hit
    first, second = Refreshing(4, 5000), Refreshing(4, 5000)
    await moved(cache, tag, first)
    between = await stamped_now()  # the first write's refresh reads here
    await moved(cache, tag, second)
    kept = await store(b'{"v":1}', between)
    assert kept is not None and kept.hit is None  # kept graced: whoever takes it looks it up
    assert await served() == (b'{"v":1}', True) and not await redis.hexists(key, "c")
    assert await store(b'{"v":0}', before) is None  # older than what is there: not kept
    assert await served() == (b'{"v":1}', True)
    await cache.end_graces(first)
    assert await served() == (b'{"v":1}', True)
    after = await stamped_now()
    assert (await store(b'{"v":2}', after)).hit is not None  # current: kept, found current
    assert await store(b'{"v":1}', between) is None  # a current one is never replaced by a graced one
    assert await served() == (b'{"v":2}', False)
    await cache.end_graces(second)

    # control: stale by a move no grace covers, nothing is kept
    before = await stamped_now()
    await moved(cache, tag, Refreshing(4, 5000))
    await moved(cache, tag, None)
    assert await store(b'{"v":3}', before) is None and await served() == (None, False)


async def test_a_grace_chain_keeps_its_latest_moves(cache: Cache, redis: Redis) -> None:
    """A chain holds at most GRACE_CHAIN_MOST generations: the oldest drop out."""
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    refreshing = Refreshing(4, 5000)
    for _ in range(GRACE_CHAIN_MOST + 5):
        await moved(cache, tag, refreshing)
    chain = (await redis.get(keys.grace(tag))).split(b">")
    assert len(chain) == GRACE_CHAIN_MOST and chain[-1] == await redis.get(keys.generation(tag))
    assert 0 < await redis.pttl(keys.grace(tag)) <= 5000


async def test_graces_that_cannot_be_ended_are_waited_out(cache: Cache, redis: Redis,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """When Redis cannot be told to end a write's graces, the write waits until they have expired: none is left
    when it is answered."""
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    refreshing = Refreshing(4, 300)
    await moved(cache, tag, refreshing)
    assert await redis.exists(keys.grace(tag))

    async def lost(*args: Any, **kwargs: Any) -> None:
        raise RedisConnectionError("lost")

    monkeypatch.setattr(cache, "_end_graces", lost)
    await cache.end_graces(refreshing)
    assert not await redis.exists(keys.grace(tag))


@single_redis  # counts one server's round trips; a cluster sets no graces
async def test_a_writes_messages_go_out_in_the_round_trip_that_ends_its_graces(cache: Cache, redis: Redis) -> None:
    """A write answered over HTTP ends its graces and publishes its live messages in one script call: one round
    trip, the messages after the graces' end. The control: more messages than one call takes, the rest after it,
    in a round trip of their own."""
    channel = f"test-graces:{uuid.uuid4().hex}"
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel)
    assert (await pubsub.get_message(timeout=2))["type"] == "subscribe"
    for count, round_trips in ((3, 1), (PUBLISH_PER_CALL + 2, 2)):
        tag = f"author:{uuid.uuid4().int % 10**9}"
        await cache.invalidate_tags([tag])
        refreshing = Refreshing(4, 300)
        await moved(cache, tag, refreshing)
        refreshing.messages.extend((channel, b"%d" % n) for n in range(count))
        with pipelines_sent() as sent:
            await write_path._end_graces(cache, refreshing)
        assert len(sent) == round_trips, sent
        assert not await redis.exists(keys.grace(tag))
        received = [await pubsub.get_message(timeout=2) for _ in range(count)]
        assert [message["data"] for message in received if message] == [b"%d" % n for n in range(count)]
    await pubsub.aclose()


@single_redis  # counts one server's round trips; a cluster sets no graces
async def test_a_closing_writes_moves_set_no_grace_and_carry_its_messages(cache: Cache, redis: Redis) -> None:
    """A write answered right after its invalidation (one statement sent on its own: `Refreshing.closing`) moves
    its generations with no grace and publishes its live messages in the same script, after the moves: one round
    trip, nothing left for the graces' end. The control: a write that is not closing sets a grace and keeps its
    messages for the graces' end."""
    channel = f"test-closing:{uuid.uuid4().hex}"
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel)
    assert (await pubsub.get_message(timeout=2))["type"] == "subscribe"
    for closing in (True, False):
        tag = f"author:{uuid.uuid4().int % 10**9}"
        await cache.invalidate_tags([tag])
        refreshing = Refreshing(4, 300, closing=closing)
        refreshing.messages.append((channel, b"closing" if closing else b"graced"))
        with pipelines_sent() as sent:
            await moved(cache, tag, refreshing)
        assert len(sent) == 1
        assert await redis.exists(keys.grace(tag)) == (not closing)
        assert bool(refreshing.graces) == (not closing) and bool(refreshing.messages) == (not closing)
        message = await pubsub.get_message(timeout=0.5 if not closing else 2)
        assert (message["data"] if message else None) == (b"closing" if closing else None)
    await pubsub.aclose()


async def test_refresh_indexes_are_bounded_and_expire(api_of: Any, redis: Redis) -> None:
    """A tag's refresh index keeps its INDEXED_PER_TAG most recent responses, and every key of the family
    expires."""
    api = api_of(4)
    writer, shout = await _page_read_under_writes(api)
    for limit in range(1, INDEXED_PER_TAG + 3):  # more pages of the same list, each read again after a comment
        page = {"query": f"query {{ load_reactions_by(by: {{}}, limit: {limit}) {{ id body }} }}"}
        await api.client.post("/graphql", json=page)
        await api(COMMENT, {"s": shout, "b": f"c{limit}"}, writer)
        await api.client.post("/graphql", json=page)
    index = keys.refresh_index(keys.TAG_REACTIONS)
    assert await redis.zcard(index) == INDEXED_PER_TAG
    assert await redis.ttl(index) > 0
    for member in await redis.zrange(index, 0, -1):
        assert await redis.ttl(member) > 0


@pytest.mark.parametrize("user_agent", ["reader", "another reader"], ids=["refresh", "control-a-second-reader"])
async def test_a_write_computing_a_shout_again_counts_no_view(api_of: Any, deps: Deps, user_agent: str) -> None:
    """A shout's page computed again by a write is no one's read: its views are those of its readers (one a
    client an hour). Control: a second reader's read of the refreshed page counts its view."""
    api = api_of(4)
    author = await api.user()
    shout = await api.published(author)
    query = {"query": "query($s: Int) { get_shout(shout_id: $s) { id authors { name } } }", "variables": {"s": shout}}
    rename = "mutation($n: String) { update_author(profile: {name: $n}) { error } }"

    async def read(agent: str) -> httpx.Response:
        return await api.client.post("/graphql", json=query, headers={"user-agent": agent})

    await read("reader")
    await api(rename, {"n": "Первое имя"}, author)
    assert (await read("reader")).headers["x-cache"] == "MISS"  # stale, computed again: noted
    await api(rename, {"n": "Второе имя"}, author)  # computes it again
    again = await read(user_agent)
    assert again.headers["x-cache"] == "HIT" and "Второе имя" in again.json()["data"]["get_shout"]["authors"][0]["name"]
    await api.count_hit_reads()
    assert await deps.views.get_many([shout]) == [1 if user_agent == "reader" else 2]


@pytest.mark.parametrize("done", [True, False], ids=["after-the-write", "control-during-it"])
async def test_an_invalidation_after_its_write_is_done_sets_no_grace(cache: Cache, redis: Redis, done: bool) -> None:
    """A task a write started inherits its REFRESHING; once the write is done (its graces ended, its answer
    sent), what such a task invalidates moves generations with no grace, which no one would end. Control: while
    the write runs, its invalidations set graces."""
    tag = f"author:{uuid.uuid4().int % 10**9}"
    await cache.invalidate_tags([tag])
    refreshing = Refreshing(4, 5000)
    refreshing.open = not done
    await moved(cache, tag, refreshing)
    assert bool(await redis.exists(keys.grace(tag))) is not done
