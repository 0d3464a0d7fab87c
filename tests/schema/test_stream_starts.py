"""Subscriptions start in turns (schema/engine/stream_starts.py, app/http/stream_turns.py): a burst of them over
server-sent events runs at most SUBSCRIPTION_STARTS_AT_ONCE starts together, every one of them still
subscribed whole; a stream never goes through the response cache. Counted, not timed: the starts running
together, the streams subscribed, the response cache's look-ups. The bystander's latency during a burst of
300 is measured in bench/sse_burst.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import orjson
import pytest

from app.main import create_app
from cache import keys
from cache.response.responses import ResponseCache
from config.settings import Settings
from resolvers.deps import Deps
from schema import subscription
from schema.engine.stream_starts import StreamStarts, started
from tests.helpers import Api
from tests.live import serve, subscribed

SHOUT_REACTIONS = "subscription($s: Int!) { shout_reactions(shout_id: $s) { action reaction { id body } } }"
CREATE = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"
BURST = 24


class Together:
    """How many of the counted sections ran at once, at most."""

    def __init__(self) -> None:
        self.now = self.most = 0

    @contextlib.asynccontextmanager
    async def section(self) -> AsyncIterator[None]:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.005)  # a start's round trips: the others run meanwhile, if they may
            yield
        finally:
            self.now -= 1


# --- the turns themselves ---------------------------------------------------------------------------------

async def _starts(starts: StreamStarts, count: int, body: Callable[[Together], Awaitable[None]]) -> Together:
    together = Together()

    async def one() -> None:
        async with starts.turn():
            await body(together)

    await asyncio.gather(*(one() for _ in range(count)))
    return together


async def _subscribes(together: Together) -> None:
    async with together.section():
        started()
    await asyncio.sleep(0.02)  # the stream goes on, its turn given back


async def test_at_most_at_once_starts_run_together() -> None:
    assert (await _starts(StreamStarts(at_once=3, hold=10), 30, _subscribes)).most == 3
    # the control: with room for all, all run together
    assert (await _starts(StreamStarts(at_once=30, hold=10), 30, _subscribes)).most == 30


async def test_a_turn_ends_when_subscribed_not_when_the_stream_ends() -> None:
    live, over = [0], asyncio.Event()

    async def stream(together: Together) -> None:
        started()
        live[0] += 1
        if live[0] == 10:
            over.set()
        await over.wait()  # the stream goes on, inside its `turn` block, until every one is live

    # one turn at a time: ten streams all live at once only if each gave its turn back when subscribed
    await asyncio.wait_for(_starts(StreamStarts(at_once=1, hold=10), 10, stream), 5)


async def test_a_start_waiting_on_a_service_gives_its_turn_back_after_hold() -> None:
    starts = StreamStarts(at_once=1, hold=0.05)

    async def stuck(together: Together) -> None:  # never subscribes: waits for a service that does not answer
        async with together.section():
            await asyncio.sleep(0.5)

    together = await asyncio.wait_for(_starts(starts, 4, stuck), 2)
    assert together.most == 4  # each let the next one go after `hold`, not after 0.5 s


async def test_a_turn_inside_a_turn_is_the_outer_one() -> None:
    starts = StreamStarts(at_once=1, hold=10)
    async with starts.turn():
        async with asyncio.timeout(1):  # a second turn of its own would wait for the first: forever
            async with starts.turn():
                pass


async def test_a_paced_stream_closes_its_source() -> None:
    closed = asyncio.Event()

    async def source() -> Any:
        try:
            yield 1
            yield 2
        finally:
            closed.set()

    paced = StreamStarts(at_once=1, hold=10).paced(source())
    assert await anext(paced) == 1
    await paced.aclose()
    assert closed.is_set()


# --- over server-sent events, against a real uvicorn ---------------------------------------------------------

@contextlib.asynccontextmanager
async def _counting_starts(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Together]:
    """Counts the subscriptions checking who may listen at once: the part of a start that waits on Redis."""
    together = Together()
    check = subscription.watchable_shout

    async def counted(deps: Deps, shout_id: int, viewer: int | None) -> Any:
        async with together.section():
            return await check(deps, shout_id, viewer)

    monkeypatch.setattr(subscription, "watchable_shout", counted)
    yield together


async def _burst(base: str, shout_id: int, count: int, api: Api, deps: Deps) -> tuple[int, list[int]]:
    """`count` subscriptions opened at once; a comment then created: it, and the comment each one received."""
    body = {"query": SHOUT_REACTIONS, "variables": {"s": shout_id}}
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=20,
                                                                 limits=httpx.Limits(max_connections=count)))
        streams = await asyncio.gather(*(stack.enter_async_context(
            http.stream("POST", "/graphql", json=body, headers={"accept": "text/event-stream"}))
            for _ in range(count)))
        assert all(response.status_code == 200 for response in streams)
        await subscribed(deps.cache.redis, keys.channel_shout(shout_id))
        await _hub_holds(deps, count)
        reader = await api.user()
        comment = (await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout_id, "body": "в очереди"}},
                             reader))["reaction"]["id"]
        return comment, list(await asyncio.gather(*(_next_comment(response) for response in streams)))


async def _hub_holds(deps: Deps, count: int) -> None:
    """Every stream subscribed, in this worker's hub."""
    async with asyncio.timeout(10):
        while True:
            if deps.hub.subscribers >= count:
                return
            await asyncio.sleep(0.01)


async def _next_comment(response: httpx.Response) -> int:
    lines = response.aiter_lines()
    event = None
    async with asyncio.timeout(10):
        async for line in lines:
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "next":
                return int(orjson.loads(line.split(":", 1)[1])["data"]["shout_reactions"]["reaction"]["id"])
    raise AssertionError("the stream ended without an event")


async def _a_shout(api: Api) -> int:
    shouts = await api("query { load_shouts_by(options: {limit: 1}) { id } }")
    return int(shouts[0]["id"])


@pytest.mark.parametrize("at_once", [3, BURST], ids=["in turns", "control: room for all"])
async def test_a_burst_of_event_streams_starts_in_turns(api: Api, deps: Deps, settings: Settings,
                                                         monkeypatch: pytest.MonkeyPatch, at_once: int) -> None:
    shout_id = await _a_shout(api)
    # a hold longer than the test: a start let go by its hold on a slow machine would count as running along
    app = create_app(settings.model_copy(update={"subscription_starts_at_once": at_once,
                                                 "subscription_start_hold": 60}), deps=deps)
    async with _counting_starts(monkeypatch) as together, serve(app) as base:
        comment, received = await _burst(base, shout_id, BURST, api, deps)
    assert received == [comment] * BURST  # every stream subscribed whole, and got the comment
    if at_once < BURST:
        assert together.most == at_once
    else:
        assert together.most > 3  # the control: without turns the starts do run together


async def test_an_event_stream_never_goes_through_the_response_cache(api: Api, app: Any, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    shout_id = await _a_shout(api)
    looked: list[str] = []
    look_up, claim = ResponseCache.look_up, ResponseCache.claim

    async def looking_up(self: ResponseCache, key: str, *args: Any, **kwargs: Any) -> Any:
        looked.append(key)
        return await look_up(self, key, *args, **kwargs)

    async def claiming(self: ResponseCache, key: str, *args: Any, **kwargs: Any) -> Any:
        looked.append(key)
        return await claim(self, key, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "look_up", looking_up)
    monkeypatch.setattr(ResponseCache, "claim", claiming)
    body = {"query": SHOUT_REACTIONS, "variables": {"s": shout_id}}
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        async with http.stream("POST", "/graphql", json=body, headers={"accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            await subscribed(api.deps.cache.redis, keys.channel_shout(shout_id))
        assert looked == []
        # the control: a query is looked up (by the front) and claimed, once computed
        await http.post("/graphql", json={"query": "query { get_topics_all { id } }"})
        assert looked


async def test_a_client_sending_its_body_slowly_holds_no_turn(api: Api, deps: Deps, settings: Settings) -> None:
    shout_id = await _a_shout(api)
    # one turn, held for as long as the test: a slow body holding it would keep every other start waiting
    app = create_app(settings.model_copy(update={"subscription_starts_at_once": 1, "subscription_start_hold": 60}),
                     deps=deps)
    body = orjson.dumps({"query": SHOUT_REACTIONS, "variables": {"s": shout_id}})
    async with serve(app) as base:
        host, port = base.removeprefix("http://").split(":")
        _, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /graphql HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
                     b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body[:10]))
        await writer.drain()  # the rest of the body never comes
        try:
            async with httpx.AsyncClient(base_url=base, timeout=10) as http, http.stream(
                    "POST", "/graphql", json={"query": SHOUT_REACTIONS, "variables": {"s": shout_id}},
                    headers={"accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                await _hub_holds(deps, 1)  # subscribed, while the slow one is still sending
        finally:
            writer.close()
