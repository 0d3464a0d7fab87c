"""The delayed queue (seed 001) against real Redis and PostgreSQL: two consumers in two processes share
1,000 messages, one is killed mid-batch, and every message takes effect exactly once; a failing message
is retried and then parked where the CLI shows it; scheduled publication goes through the queue."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cache import keys
from cache.messaging.delayed import DelayedQueue
from config.settings import Settings
from devtools.round_trips import redis_round_trips
from telemetry import metrics
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER, TEST_REDIS_URL
from tests.helpers import ROOT, Api

MESSAGES = 1000
FAILING = 3


async def _count(engine: AsyncEngine, sql: str) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text(sql))).scalar_one())


async def _wait_for(condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


def _worker(name: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(  # started, not awaited: the consumers run beside the test
        [sys.executable, "-m", "tests.queue_worker", TEST_REDIS_URL, TEST_DATABASE_URL, name],
        cwd=ROOT, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
    return process


async def test_two_consumers_handle_each_message_once_even_when_one_is_killed(engine: AsyncEngine,
                                                                             redis: Redis) -> None:
    async with engine.begin() as conn:
        for table in ("queue_delivery", "queue_effect"):
            await conn.execute(text(f"DROP TABLE IF EXISTS {table}"))
        await conn.execute(text("CREATE TABLE queue_delivery (message int NOT NULL, worker int NOT NULL)"))
        await conn.execute(text("CREATE TABLE queue_effect (message int PRIMARY KEY, worker int NOT NULL)"))
    queue = DelayedQueue(redis, "probe", max_attempts=3)
    now = time.time()
    for n in range(MESSAGES):
        await queue.enqueue("probe", {"n": n}, at=now + (n % 10) * 0.05)
    for n in range(FAILING):
        await queue.enqueue("fail", {"n": n}, at=now)

    doomed, survivor = _worker("probe"), _worker("probe")
    try:
        async def doomed_is_busy() -> bool:
            return await _count(engine, f"SELECT count(*) FROM queue_delivery WHERE worker = {doomed.pid}") >= 60
        await _wait_for(doomed_is_busy)
        doomed.send_signal(signal.SIGKILL)  # mid-batch: it holds leased messages it will never acknowledge
        doomed.wait()
        leased_by_the_dead = await redis.zcard(keys.delayed_leased("probe"))

        async def all_done() -> bool:
            stats = await queue.stats()
            return stats["queued"] == stats["leased"] == 0 and stats["parked"] == FAILING
        await _wait_for(all_done)
    finally:
        for process in (doomed, survivor):
            process.kill()
            process.wait()

    assert leased_by_the_dead > 0  # the kill did leave work in flight, which the survivor took over
    assert await _count(engine, "SELECT count(*) FROM queue_effect") == MESSAGES
    assert await _count(engine, "SELECT count(DISTINCT worker) FROM queue_effect") == 2
    # A second delivery happens only to what the dead consumer had taken and not acknowledged.
    redelivered = await _count(engine, "SELECT count(*) FROM (SELECT message FROM queue_delivery "
                                       "GROUP BY message HAVING count(*) > 1) twice")
    assert redelivered <= 50  # at most one batch
    parked = await queue.parked()
    assert sorted(m.payload["n"] for m, _, _ in parked) == list(range(FAILING))
    assert all("always fails" in error for _, _, error in parked)
    assert await redis.hlen(keys.delayed_deliveries("probe")) == 0  # nothing left in flight


async def test_a_failing_message_is_retried_with_backoff_then_parked_and_requeued(redis: Redis) -> None:
    queue = DelayedQueue(redis, "unit", max_attempts=3, backoff=10)
    attempts: list[float] = []

    async def fail(_payload: dict[str, object]) -> None:
        attempts.append(time.time())
        raise ValueError("nope")

    queue.handlers["fail"] = fail
    member = await queue.enqueue("fail", {"n": 1}, at=time.time())
    assert await queue.run_once() == 0
    due = await redis.zscore(keys.delayed_queue("unit"), member)
    assert due is not None and 8 <= due - time.time() <= 12  # retried after backoff·2^0, with jitter
    await redis.zadd(keys.delayed_queue("unit"), {member: time.time()})  # the clock moves on
    await queue.run_once()
    due = await redis.zscore(keys.delayed_queue("unit"), member)
    assert due is not None and 16 <= due - time.time() <= 24  # backoff·2^1
    await redis.zadd(keys.delayed_queue("unit"), {member: time.time()})
    await queue.run_once()
    assert len(attempts) == 3 and await queue.stats() == {"queued": 0, "leased": 0, "parked": 1}
    assert await queue.requeue_parked() == 1
    queue.handlers["fail"] = lambda _payload: asyncio.sleep(0)
    assert await queue.run_once() == 1
    assert await queue.stats() == {"queued": 0, "leased": 0, "parked": 0}


async def test_the_cli_shows_parked_messages(redis: Redis) -> None:
    from resolvers.deps import DEFERRED_QUEUE

    queue = DelayedQueue(redis, DEFERRED_QUEUE, max_attempts=1)
    await queue.enqueue("no_such_kind", {"n": 7}, at=time.time())
    await queue.run_once()  # no handler: fails at once and, with one attempt allowed, is parked
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "app.cli.commands", "queue", cwd=ROOT,
                                                   stdout=subprocess.PIPE,
                                                   env={**os.environ, "REDIS_URL": TEST_REDIS_URL,
                                                        "REDIS_CLUSTER": str(TEST_REDIS_CLUSTER).lower()})
    out = (await process.communicate())[0].decode()
    assert process.returncode == 0
    assert "1 parked" in out and "no_such_kind" in out and "no handler" in out, out


SCHEDULE = "mutation($d: Int!, $at: Int) { schedule_draft(draft_id: $d, publish_at: $at) { error draft { publish_at } } }"
DRAFT = "mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }"
SHOUT = "query($s: String!) { get_shout(slug: $s) { id published_at } }"


async def test_a_scheduled_draft_is_published_when_due_and_not_before(api: Api, redis: Redis) -> None:
    user = await api.user()
    slug = f"scheduled-{int(time.time() * 1000)}"
    draft = (await api(DRAFT, {"d": {"title": "Завтра", "body": "<p>текст</p>", "slug": slug}}, user))["draft"]
    at = int(time.time()) + 3600
    assert (await api(SCHEDULE, {"d": draft["id"], "at": at}, user))["draft"]["publish_at"] == at
    assert (await api.raw(SCHEDULE, {"d": draft["id"], "at": at}))["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    past = await api.raw(SCHEDULE, {"d": draft["id"], "at": 1000}, user)
    assert past["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"

    queue = api.deps.delayed
    assert await queue.run_once() == 0 and await api(SHOUT, {"s": slug}) is None  # not due yet
    # Rescheduled for sooner: the first message stays queued but no longer matches the draft.
    sooner = int(time.time()) + 60
    await api(SCHEDULE, {"d": draft["id"], "at": sooner}, user)
    assert await redis.zcard(keys.delayed_queue("deferred")) == 2
    await redis.delete(keys.delayed_queue("deferred"))  # Redis lost the queue: the sweep restores it from SQL
    from resolvers.scheduled import sweep
    assert await sweep(api.deps) >= 1
    assert await redis.zcard(keys.delayed_queue("deferred")) == 1
    await queue.enqueue("publish_draft", {"draft": draft["id"], "at": at}, at=time.time())  # the stale one
    members = await redis.zrange(keys.delayed_queue("deferred"), 0, -1)
    await redis.zadd(keys.delayed_queue("deferred"), dict.fromkeys(members, time.time()))  # time passes
    assert await queue.run_once() == 2  # both handled: one published, the stale one did nothing
    shout = await api(SHOUT, {"s": slug})
    assert shout is not None and shout["published_at"] is not None
    drafts = (await api("{ load_drafts { drafts { id publish_at } } }", {}, user))["drafts"]
    assert [d["publish_at"] for d in drafts if d["id"] == draft["id"]] == [None]
    await redis.zadd(keys.delayed_queue("deferred"), dict.fromkeys(members, time.time()))  # delivered again
    await queue.run_once()
    assert await queue.stats() == {"queued": 0, "leased": 0, "parked": 0}
    assert (await api(SHOUT, {"s": slug}))["published_at"] == shout["published_at"]


pytestmark = pytest.mark.usefixtures("engine")


async def test_messages_due_together_are_queued_in_one_round_trip_and_once(redis: Redis) -> None:
    """A comment on a shout of three authors queues three digests: one command, and sent again (a second
    comment in the same window), each message keeps its place."""
    queue = DelayedQueue(redis, "together")
    await redis.delete(keys.delayed_queue("together"))
    due = time.time() + 60
    messages = [({"author": author}, f"digest-{author}") for author in (1, 2, 3)]
    with redis_round_trips() as sent:
        members = await queue.enqueue_many("digest", messages, at=due)
    assert sent == [1] and len(set(members)) == 3
    await queue.enqueue_many("digest", messages, at=due + 60)
    assert await redis.zrange(keys.delayed_queue("together"), 0, -1, withscores=True) == [
        (member.encode(), due) for member in sorted(members)]
    assert await queue.enqueue_many("digest", [], at=due) == []


async def test_a_message_queued_once_is_not_sent_again_until_it_is_due(redis: Redis) -> None:
    """A busy hour's events after the first queue their digests with no round trip (`enqueue_once`: the queue
    would keep the first anyway); a message this worker has not queued still goes. The controls: once due, it is
    sent again; and a queue Redis lost is filled again by `enqueue_many` (the sweeps), which does not look."""
    queue = DelayedQueue(redis, "once")
    await redis.delete(keys.delayed_queue("once"))
    due = time.time() + 60
    first, second = ({"author": 1}, "digest-1"), ({"author": 2}, "digest-2")
    with redis_round_trips() as sent:
        await queue.enqueue_once("digest", [first], at=due)
        await queue.enqueue_once("digest", [first], at=due)
    assert sent == [1]
    with redis_round_trips() as sent:
        await queue.enqueue_once("digest", [first, second], at=due)  # the second is new: both go in one
    assert sent == [1] and await redis.zcard(keys.delayed_queue("once")) == 2
    await redis.delete(keys.delayed_queue("once"))  # lost
    await queue.enqueue_many("digest", [first, second], at=due)
    assert await redis.zcard(keys.delayed_queue("once")) == 2
    with redis_round_trips() as sent:
        await queue.enqueue_once("digest", [({"author": 3}, "digest-3")], at=time.time() - 1)
        await queue.enqueue_once("digest", [({"author": 3}, "digest-3")], at=time.time() - 1)
    assert sent == [2]  # due already: nothing remembered


async def test_the_queue_holds_at_most_its_bound_and_counts_what_it_refuses(redis: Redis) -> None:
    """Seed 004: no sorted set over 5,000 members. Queued and leased messages together stay within
    `max_queued`: a message past it is refused and counted, one already queued keeps its place, an
    acknowledged one makes room, and a retry moves a message without passing the bound."""
    assert (Settings().queue_max_queued, Settings().queue_parked_cap) == (5000, 5000)
    queue = DelayedQueue(redis, "bounded", max_queued=3)
    queue_key, leased_key = keys.delayed_queue("bounded"), keys.delayed_leased("bounded")
    await redis.delete(queue_key, leased_key, keys.delayed_deliveries("bounded"))
    refused = metrics.total(metrics.QUEUE_REFUSED, kind="probe")
    now = time.time()
    members = await queue.enqueue_many("probe", [({"n": n}, f"p-{n}") for n in range(5)], at=now)
    assert len(members) == 3 and await redis.zcard(queue_key) == 3
    assert metrics.total(metrics.QUEUE_REFUSED, kind="probe") == refused + 2
    assert await queue.enqueue("probe", {"n": 0}, at=now, message_id="p-0") == members[0]  # queued already
    taken = await queue.fetch(now=now + 1)
    assert len(taken) == 3 and await redis.zcard(queue_key) == 0
    assert await queue.enqueue("probe", {"n": 9}, at=now, message_id="p-9") is None  # leased ones count
    assert await queue.enqueue("probe", {"n": 0}, at=now, message_id="p-0") == members[0]  # leased already
    await queue.ack(taken[0])
    assert await queue.enqueue("probe", {"n": 9}, at=now, message_id="p-9") is not None
    assert await queue.fail(taken[1], "later") == "retried"
    assert await redis.zcard(queue_key) + await redis.zcard(leased_key) == 3
    assert metrics.total(metrics.QUEUE_REFUSED, kind="probe") == refused + 3
