"""Redis failover without a stale read (cache/failover.py), for real: a master, its replica and a Sentinel
of the test's own (devtools/redis_sentinel.py). The replica is cut off (it hangs, and its master drops the
link), a write is acknowledged by the master alone, the master is killed, and the Sentinel promotes the
replica, which never had that write's generation bumps: its values from before the write look current.

Each new connection to the promoted replica sees that another server wrote its data and moves the epochs
before it carries anything: the write is read at once. The control (REDIS_OWNER_CHECK=off, a server
unaware of failovers) reads the old value from the promoted replica. Under the freshness load of
tests/drills/test_concurrency.py on two worker processes, the same failover leaves 0 stale reads and 0 failed
requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from app.main import create_app, open_deps
from config.settings import load_settings
from devtools.redis_sentinel import SentinelSet
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER
from tests.drills.test_concurrency import Tally, freshness_run
from tests.helpers import Api, until
from tests.live import two_workers

pytestmark = [pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="a Sentinel drill, run once on the single pass"),
              pytest.mark.usefixtures("engine")]  # the test database, migrated and seeded

AUTHOR = "query($id: Int) { get_author(author_id: $id) { name } }"
RENAME = "mutation($n: String) { update_author(profile: {name: $n}) { error } }"


async def _name_after_failover(owner_check: bool) -> tuple[str, str]:
    """(the name written while the replica was cut off, the name read once the promoted replica serves)."""
    async with SentinelSet() as redis:
        settings = load_settings(database_url=TEST_DATABASE_URL, redis_url=redis.url(12), jwt_secret="f" * 40,
                                 password_time_cost=1, password_memory_cost=1024, logins_per_address=0,
                                 registrations_per_address=0, mails_per_address=0, mails_per_recipient=0,
                                 redis_breaker_seconds=0.2, redis_owner_check=owner_check,
                                 environment="development")
        # as a server opens them: its pools' connections opened at start, every one to the master that fails
        async with open_deps(settings, serving=True) as deps, httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_app(settings, deps=deps)), base_url="http://test") as client:
            api = Api(client, deps)
            user = await api.user()
            await api(RENAME, {"n": "before the failover"}, user)
            for _ in range(2):  # cached, and found current by a hit at the invalidation clock's value: replicated
                assert (await api(AUTHOR, {"id": user.id}))["name"] == "before the failover"
            await until(lambda: _replicated(redis), "the replica has what the master took")
            await redis.cut_replica()
            await api(RENAME, {"n": "written to the master alone"}, user)
            await asyncio.to_thread(redis.master.kill)
            redis.replica.resume()
            await redis.promoted()
            await until(lambda: _answers(deps.cache.redis), "the client reaches the promoted replica")
            await until(lambda: deps.cache.available, "the breaker closes")
            read = [(await api(AUTHOR, {"id": user.id}))["name"] for _ in range(2)]  # the second from Redis
        return "written to the master alone", read[-1]


async def _replicated(redis: SentinelSet) -> bool:
    master, replica = Redis.from_url(redis.master.url), Redis.from_url(redis.replica.url)
    try:
        offset = (await master.info("replication"))["master_repl_offset"]
        return bool((await replica.info("replication"))["slave_repl_offset"] >= offset)
    finally:
        await master.aclose()
        await replica.aclose()


async def _answers(client: Any) -> bool:
    try:
        return bool(await client.ping())
    except Exception:
        return False


async def test_the_promoted_replica_is_not_trusted_with_what_it_missed() -> None:
    written, read = await _name_after_failover(owner_check=True)
    assert read == written


async def test_control_a_failover_unaware_server_reads_the_old_value() -> None:
    written, read = await _name_after_failover(owner_check=False)
    assert read == "before the failover" != written, "the lost bump must show here: the test would be blind"


async def test_a_killed_master_under_load_leaves_no_stale_read() -> None:
    async with SentinelSet() as redis:
        cut: dict[str, int] = {}

        async def fail_over(tally: Tally) -> None:
            await until(lambda: tally.operations >= 600, "the load is under way", deadline=120)
            await redis.cut_replica()
            started = tally.operations
            await until(lambda: tally.operations >= started + 60, "writes the replica misses", deadline=30)
            cut["operations"] = tally.operations - started
            await asyncio.to_thread(redis.master.kill)
            redis.replica.resume()
            await redis.promoted()

        async with two_workers(redis.url(10), env={"REDIS_BREAKER_SECONDS": "0.5"}) as (server_url, _pids, _c):
            tally = await freshness_run(server_url, during=fail_over)
    print(f"\nmaster killed, its replica cut off for {cut['operations']} operations: {tally.operations} operations, "
          f"{tally.checked} reads checked {tally.checked_by_kind}, {len(tally.stale)} stale, 0 failed")
    assert tally.checked >= 300
    assert tally.stale == [], tally.stale[:5]
