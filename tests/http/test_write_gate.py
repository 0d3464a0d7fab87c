"""Writes beyond what a worker takes at once (app/http/write_gate.py): they wait at most WRITE_WAIT_SECONDS
for a turn, then are answered 503 SERVICE_UNAVAILABLE with Retry-After, having changed nothing; past
WRITES_WAITING waiting they are answered so at once; reads are never held by the bound; a write sent again
once a turn is free is done. Up to WRITES_IN_FLIGHT writes run side by side. With WRITE_SHARE below 1, a write
that others waited for is followed by a pause that keeps the writes' turns to that share of the time, taken only
while reads are being answered."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from starlette.routing import Route

from app.http.guards import Refused
from app.http.write_gate import MAX_PAUSE, Readers, WriteGate
from app.main import create_app
from cache.response.responses import ResponseCache
from config.settings import Settings
from orm import Topic
from resolvers.deps import Deps
from telemetry import metrics
from tests.helpers import Api

FOLLOW = "mutation($s: String!) { follow(what: TOPIC, slug: $s) { error } }"
FOLLOWED = "query($s: String!) { get_topic_followers(slug: $s) { id } }"


def _view(app: Any) -> Any:
    return next(route.app for route in app.routes if isinstance(route, Route) and route.path == "/graphql")


def _gate(app: Any) -> WriteGate:
    return _view(app).writes.gate  # type: ignore[no-any-return]


async def _waited_after(gate: WriteGate, held: float) -> float:
    """Seconds a write that waited for its turn waits after a write that held it `held` seconds."""
    loop = asyncio.get_running_loop()
    released: list[float] = []
    taken = asyncio.Event()

    async def first() -> None:
        async with gate.turn():
            taken.set()
            await asyncio.sleep(held)
            released.append(loop.time())  # as the turn is given back

    holding = asyncio.create_task(first())
    await taken.wait()  # the first has its turn: the next waits for it
    async with gate.turn():
        waited = loop.time() - released[0]
    await holding
    return waited


async def test_a_write_without_a_turn_is_refused_unchanged_and_reads_go_on(
        api: Api, deps: Deps, settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"writes_in_flight": 1, "write_wait_seconds": 0.2}), deps=deps)
    reader = await api.user()
    async with deps.db() as session:
        slug = await session.scalar(select(Topic.slug).order_by(Topic.id).limit(1))
    headers = {"authorization": f"Bearer {reader.token}"}
    refused_before = metrics.WRITES_REFUSED._value.get()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        async with _gate(app).turn():  # the one turn taken, as by a write under way
            started = time.monotonic()
            refused = await client.post("/graphql", json={"query": FOLLOW, "variables": {"s": slug}}, headers=headers)
            waited = time.monotonic() - started
            read = await client.post("/graphql", json={"query": FOLLOWED, "variables": {"s": slug}})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1", refused.text
        assert refused.json()["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
        assert waited >= 0.2  # it waited its turn first
        assert metrics.WRITES_REFUSED._value.get() - refused_before == 1
        assert read.status_code == 200 and reader.id not in {a["id"] for a in read.json()["data"]["get_topic_followers"]}
        done = await client.post("/graphql", json={"query": FOLLOW, "variables": {"s": slug}}, headers=headers)
        assert done.status_code == 200 and done.json()["data"]["follow"]["error"] is None, done.text
        read = await client.post("/graphql", json={"query": FOLLOWED, "variables": {"s": slug}})
    assert reader.id in {a["id"] for a in read.json()["data"]["get_topic_followers"]}


async def test_no_bound_when_it_is_zero() -> None:
    gate = WriteGate(0, 0.01)
    async with gate.turn(), gate.turn(), gate.turn():  # nested turns: none waits
        pass


async def test_past_the_writes_waiting_the_next_is_refused_at_once() -> None:
    """With every turn taken and `waiting` writes waiting for one, the next write is refused without
    waiting (the backlog a worker holds stays bounded); once a waiter has its turn, a write may wait again."""
    gate = WriteGate(1, 30.0, waiting=1)
    refused_before = metrics.WRITES_REFUSED._value.get()
    holding, waited = asyncio.Event(), asyncio.Event()

    async def write(started: asyncio.Event | None = None) -> None:
        async with gate.turn():
            if started is not None:
                started.set()
                await waited.wait()

    first = asyncio.create_task(write(holding))
    await holding.wait()  # the one turn taken
    second = asyncio.create_task(write())  # waits for it: the one place to wait
    await asyncio.sleep(0)
    with pytest.raises(Refused) as refused:
        async with asyncio.timeout(5):  # at once: not after the 30 s wait
            async with gate.turn():
                pass
    assert refused.value.status == 503
    assert metrics.WRITES_REFUSED._value.get() - refused_before == 1
    waited.set()
    await asyncio.gather(first, second)
    async with gate.turn():  # nothing waits now: a turn again
        pass


async def test_a_share_pauses_after_each_write_others_wait_for_in_proportion_to_its_turn() -> None:
    """With a share of 1/3 and a read being answered, a write that held its turn 0.1 s while another waited is
    followed by 0.2 s without a turn: under more writes than the turns take, the writes hold them a third of
    the time. A write that would wait for its turn past its wait (0.4 s) is refused at once."""
    readers = Readers()
    readers.count = 1  # a read in flight throughout
    gate = WriteGate(1, 0.4, share=1 / 3, readers=readers)
    waited = await _waited_after(gate, 0.1)
    assert 0.19 <= waited < 0.3, waited
    await asyncio.sleep(0.25)
    holding = asyncio.create_task(_held(gate, 0.3))  # a pause of 0.6 s follows, past the next write's 0.4 s
    await asyncio.sleep(0)
    refused_before = metrics.WRITES_REFUSED._value.get()
    with pytest.raises(Refused):
        async with asyncio.timeout(0.5):  # refused as the turn is given back, not after its wait
            async with gate.turn():
                pass
    await holding
    assert metrics.WRITES_REFUSED._value.get() - refused_before == 1


async def _held(gate: WriteGate, seconds: float) -> None:
    async with gate.turn():
        await asyncio.sleep(seconds)


async def test_no_pause_after_a_write_no_other_waited_for() -> None:
    """Writes that come slower than the turns take them are never held back, readers or not: the pause is for a
    worker offered more writes than it does."""
    readers = Readers()
    readers.count = 1
    gate = WriteGate(1, 10.0, share=1 / 3, readers=readers)
    loop = asyncio.get_running_loop()
    await _held(gate, 0.1)
    began = loop.time()
    async with gate.turn():
        assert loop.time() - began < 0.05


async def test_without_a_reader_the_share_pauses_no_write() -> None:
    """The pause gives the worker's time to readers: with none being answered, the next write goes at once
    (an idle worker is not made to wait), and as soon as one is, the pause holds again."""
    readers = Readers()
    gate = WriteGate(1, 10.0, share=1 / 3, readers=readers)
    assert await _waited_after(gate, 0.1) < 0.05
    readers.count = 1
    assert await _waited_after(gate, 0.1) >= 0.19


async def test_the_pause_after_a_long_turn_is_at_most_a_second() -> None:
    """A turn held long was spent waiting (a failover, a lock): the writes after it are not held back for
    twice as long again."""
    gate = WriteGate(1, 10.0, share=1 / 3)
    loop = asyncio.get_running_loop()
    holding = asyncio.create_task(_held(gate, 0.8))  # 1.6 s of pause by the share alone
    await asyncio.sleep(0)
    waiting = asyncio.create_task(_held(gate, 0))
    await holding
    assert gate._next_turn - loop.time() <= MAX_PAUSE
    await waiting


async def test_without_a_share_the_next_write_goes_at_once() -> None:
    assert await _waited_after(WriteGate(1, 1.0), 0.1) < 0.05


def test_the_share_is_the_setting(deps: Deps, settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"write_share": 0.25}), deps=deps)
    assert _gate(app).share == 0.25 and _gate(create_app(settings, deps=deps)).share == 0.5
    assert _gate(create_app(settings, deps=deps)).in_flight == 8


async def test_hits_and_answered_queries_are_counted_as_readers_and_writes_are_not(
        api: Api, deps: Deps, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reads the share yields to: a hit while the front looks it up and sends it, a query while the
    view answers it (computed, or a miss that waited for it), never a write; none once they are answered."""
    app = create_app(settings.model_copy(update={"response_cache_ttl": 60}), deps=deps)
    view = _view(app)
    seen: list[tuple[str, int]] = []
    execute, look_up = view.execute, ResponseCache.look_up

    async def counting_execute(exchange: Any, *left: Any) -> Any:
        seen.append(("execute", view.readers.count))
        return await execute(exchange, *left)

    async def counting_look_up(self: ResponseCache, key: str) -> Any:
        seen.append(("lookup", view.readers.count))
        return await look_up(self, key)

    writer = await api.user()
    async with deps.db() as session:
        slug = await session.scalar(select(Topic.slug).order_by(Topic.id).limit(1))
    monkeypatch.setattr(view, "execute", counting_execute)
    monkeypatch.setattr(ResponseCache, "look_up", counting_look_up)  # the fixtures' own app is done with it
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        for _ in range(2):  # a miss, computed and kept, then a hit
            read = await client.post("/graphql", json={"query": FOLLOWED, "variables": {"s": slug}})
            assert read.status_code == 200, read.text
        assert read.headers["x-cache"] == "HIT"
        assert view.readers.count == 0
        miss_and_hit = list(seen)
        seen.clear()
        done = await client.post("/graphql", json={"query": FOLLOW, "variables": {"s": slug}},
                                 headers={"authorization": f"Bearer {writer.token}"})
        assert done.status_code == 200 and done.json()["data"]["follow"]["error"] is None, done.text
    assert miss_and_hit == [("lookup", 1), ("execute", 1), ("lookup", 1)]
    assert seen == [("execute", 0)] and view.readers.count == 0


async def test_writes_run_side_by_side_up_to_the_bound_and_the_next_waits_for_a_turn() -> None:
    """Writes of different viewers do not wait for one another: up to `in_flight` hold turns at once, readers
    or not; the next waits for a turn given back, and, others having waited, the pause after it."""
    readers = Readers()
    readers.count = 1
    gate = WriteGate(3, 5.0, share=0.5, readers=readers)
    loop = asyncio.get_running_loop()
    holding, release = [asyncio.Event() for _ in range(3)], asyncio.Event()

    async def write(began: asyncio.Event) -> None:
        async with gate.turn():
            began.set()
            await release.wait()

    began = loop.time()
    writes = [asyncio.create_task(write(event)) for event in holding]
    async with asyncio.timeout(1):
        for event in holding:  # all three at once: none waited for another
            await event.wait()
    fourth_began = asyncio.Event()
    fourth = asyncio.create_task(write(fourth_began))
    await asyncio.sleep(0.1)
    assert not fourth_began.is_set()  # every turn is taken
    release.set()
    await asyncio.gather(*writes)
    held, ended = loop.time() - began, loop.time()
    await asyncio.wait_for(fourth_began.wait(), 2)
    assert loop.time() - ended >= held * 0.9  # the pause after a turn it waited for, as long (share 0.5)
    await fourth
