"""Redis Cluster failover without a stale read or a failed request (cache/failover.py, the cluster part),
on a cluster of the test's own: three masters, each with a replica (devtools/redis_cluster.py).

A master is killed (SIGKILL, no coordination) after its replica was cut off and a write was acknowledged
by the master alone: the replica the cluster promotes lacks that write's generation bump, so the values
computed before the write look current on it. Each new connection to the promoted node sees that another
server wrote its data and forgets its generations, live metas and WAL floor before it carries anything: the
write is read at once. The control (REDIS_OWNER_CHECK=off) reads the old value. Under the freshness load of
tests/drills/test_concurrency.py on two worker processes, the same kill leaves 0 stale reads and 0 failed
requests, and so do a coordinated CLUSTER FAILOVER and a migration of slots with their keys (clients told
MOVED and ASK meanwhile).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from app.main import create_app, open_deps
from cache import keys
from cache.live.structures import LiveOps
from cache.stamps import decode
from config.settings import load_settings
from devtools.redis_cluster import SLOTS, RedisClusterServers
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER
from tests.drills.test_concurrency import Tally, freshness_run
from tests.helpers import Api, until
from tests.live import two_workers

pytestmark = [pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="makes a cluster of its own: run once, on the single pass"),
              pytest.mark.usefixtures("engine")]  # the test database, migrated and seeded

AUTHOR = "query($id: Int) { get_author(author_id: $id) { name } }"
# asked for the author: the write reads it back, caching its new value at once (the failover's subject)
RENAME = "mutation($n: String) { update_author(profile: {name: $n}) { error author { name } } }"


async def _name_after_failover(owner_check: bool, replica_connection: bool = False) -> tuple[str, str]:
    """(the name written while the replica was cut off, the name read once the promoted replica serves).
    `replica_connection`: the client holds a connection it opened to the replica while it was one (as its
    topology refresh does: it asks any node it knows, replicas too, for the slots) and uses it once the
    replica serves the slots."""
    async with RedisClusterServers(3, replicas=1) as cluster:
        settings = load_settings(database_url=TEST_DATABASE_URL, redis_url=cluster.url, redis_cluster=True,
                                 jwt_secret="f" * 40, password_time_cost=1, password_memory_cost=1024,
                                 logins_per_address=0, registrations_per_address=0, mails_per_address=0,
                                 mails_per_recipient=0, redis_breaker_seconds=0.2, redis_owner_check=owner_check,
                                 environment="development")
        async with open_deps(settings) as deps, httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_app(settings, deps=deps)), base_url="http://test") as client:
            api = Api(client, deps)
            # an author whose cached value and generation live on one master: the write caches the value
            # again at once, and a value kept elsewhere would not be lost, so the control would miss anyway
            user = await api.user()
            master = await cluster.master_of(keys.generation(keys.tag_author(user.id)))
            while await cluster.master_of(keys.author_id(user.id)) is not master:
                user = await api.user()
                master = await cluster.master_of(keys.generation(keys.tag_author(user.id)))
            await api(RENAME, {"n": "before the failover"}, user)
            assert (await api(AUTHOR, {"id": user.id}))["name"] == "before the failover"  # cached, replicated
            await cluster.in_sync()
            if replica_connection:
                replica = deps.cache.redis.get_node(host="127.0.0.1", port=cluster.replica_of(master).port)
                await deps.cache.redis.execute_command("CLUSTER SLOTS", target_nodes=replica)
            await cluster.cut_replica(master)
            await api(RENAME, {"n": "written to the master alone"}, user)
            # what the write sets going after its answer (the author's value cached again) is done, so that
            # nothing of it is lost in the failover, which would move the epoch (Cache.lose) on its own
            await until(lambda: _cached_name(deps, user.id, "written to the master alone"), "the write settles")
            await asyncio.to_thread(master.kill)
            cluster.replica_of(master).resume()
            await cluster.promoted(cluster.replica_of(master))
            await until(lambda: _answers(deps.cache.redis), "the client reaches the promoted replica")
            await until(lambda: deps.cache.available, "the breaker closes")
            read = [(await api(AUTHOR, {"id": user.id}))["name"] for _ in range(2)]  # the second from Redis
        return "written to the master alone", read[-1]


async def _cached_name(deps: Any, author: int, name: str) -> bool:
    raw = await deps.cache.redis.get(keys.author_id(author))
    return raw is not None and decode(raw)[1]["name"] == name


async def _answers(client: Any) -> bool:
    try:
        await client.get(keys.generation(keys.GLOBAL_TAG))
    except Exception:
        return False
    return True


async def test_a_promoted_replica_is_not_trusted_with_what_it_missed() -> None:
    written, read = await _name_after_failover(owner_check=True)
    assert read == written


async def test_a_connection_opened_while_the_node_was_a_replica_is_checked_once_it_serves() -> None:
    written, read = await _name_after_failover(owner_check=True, replica_connection=True)
    assert read == written


async def test_control_a_failover_unaware_server_reads_the_old_value() -> None:
    written, read = await _name_after_failover(owner_check=False)
    assert read == "before the failover" != written, "the lost bump must show here: the test would be blind"


async def test_a_write_the_failover_interrupts_answers_once_no_other_master_serves_what_it_missed() -> None:
    """A write's pipeline fails on a killed master, and with it the write's updates to structures another
    master keeps: until the loss is contained, a second worker reads those as current. The write answers
    only once it is (every epoch forgotten, after the failover: the cluster refuses commands meanwhile);
    the second worker's reads during the write are the control, which sees the old structure."""
    async with RedisClusterServers(3, replicas=1) as cluster:
        settings = load_settings(database_url=TEST_DATABASE_URL, redis_url=cluster.url, redis_cluster=True,
                                 jwt_secret="f" * 40, redis_breaker_seconds=0.2, environment="development")
        async with open_deps(settings) as writer, open_deps(settings) as reader:
            # an author whose follow set lives with the live epoch of authors, and a tag on another master
            survivor = await cluster.master_of(keys.live_epoch("author"))
            author, other = 1, 1
            while await cluster.master_of(keys.live_meta("author", author)) is not survivor:
                author += 1
            while await cluster.master_of(keys.generation(keys.tag_author(other))) is survivor:
                other += 1
            tag = keys.tag_author(other)
            lost = await cluster.master_of(keys.generation(tag))
            name = "following:author"
            noted = await reader.live.note("author", name, [author])
            await reader.live.build("author", name, [(author, [time.time(), keys.member(77)])], noted,
                                    structure="zset")

            async def followed() -> list[bytes] | None:
                """The set as the reader finds it once Redis answers it: None when not built (read from SQL)."""
                for _ in range(200):
                    found, noted = await reader.live.read("author", name, [author],
                                                          lambda pipe, key: pipe.zrange(key, 0, -1))
                    if found[0] is not None or noted:
                        return found[0][0] if found[0] is not None else None
                    await asyncio.sleep(0.05)  # unavailable: the breaker's window, or the cluster down
                raise AssertionError("the reader never reached Redis")

            assert await followed() == [keys.member(77).encode()]
            unfollow = LiveOps()
            unfollow.zrem("author", author, name, 77)

            async def with_the_unfollow(pipe: Any) -> None:
                await writer.live.queue_apply(pipe, unfollow, announced=False)

            await asyncio.to_thread(lost.kill)
            write = asyncio.create_task(writer.cache.invalidate_tags([tag], also=with_the_unfollow))
            during = await followed()  # the cluster serves what the lost master did not hold a moment longer
            await write
            after = [await followed() for _ in range(3)]
            await cluster.promoted(cluster.replica_of(lost))
            after += [await followed() for _ in range(3)]
            # the write answered with the loss contained, or with its epochs only on the lost master (which
            # nobody read from meanwhile, and whose replica forgot them when promoted); the writer's next call
            # then has nothing it cannot do
            await writer.cache.recover_if_needed()
            assert not writer.cache.lost_invalidations
        assert during == [keys.member(77).encode()]  # the control: the old set, while the write is under way
        assert all(read is None for read in after), after  # not built: the reader goes to SQL


async def _under_load(drill: Any) -> Tally:
    async with RedisClusterServers(3, replicas=1) as cluster:
        async def during(tally: Tally) -> None:
            await until(lambda: tally.operations >= 600, "the load is under way", deadline=120)
            await drill(cluster, tally)

        env = {"REDIS_CLUSTER": "true", "REDIS_BREAKER_SECONDS": "0.5"}
        async with two_workers(cluster.url, env=env) as (server_url, _pids, _client):
            return await freshness_run(server_url, during=during)


async def test_a_killed_master_under_load_leaves_no_stale_read() -> None:
    cut: dict[str, int] = {}

    async def kill_a_master(cluster: RedisClusterServers, tally: Tally) -> None:
        master = await cluster.master_of(keys.generation(keys.GLOBAL_TAG))  # every stamp's first part
        await cluster.cut_replica(master)
        started = tally.operations
        await until(lambda: tally.operations >= started + 60, "writes the replica misses", deadline=30)
        cut["operations"] = tally.operations - started
        tally.note("master killed")
        await asyncio.to_thread(master.kill)
        cluster.replica_of(master).resume()
        await cluster.promoted(cluster.replica_of(master))
        tally.note("replica promoted")

    tally = await _under_load(kill_a_master)
    print(f"\ncluster master killed, its replica cut off for {cut['operations']} operations: {tally.operations} "
          f"operations, {tally.checked} reads checked {tally.checked_by_kind}, {len(tally.stale)} stale, 0 failed")
    assert tally.checked >= 300
    assert tally.stale == [], (tally.events, tally.stale[:5])


async def test_a_coordinated_failover_and_a_slot_migration_under_load_fail_nothing() -> None:
    moved: dict[str, int] = {}

    async def fail_over_and_reshard(cluster: RedisClusterServers, tally: Tally) -> None:
        await cluster.fail_over(cluster.replica_of(cluster.masters[1]))
        started = tally.operations
        await until(lambda: tally.operations >= started + 100, "load on the new master", deadline=30)
        source, target = cluster.masters[2], cluster.masters[0]
        # the last 2,000 slots of the source (its first, which holds its failover record, stays)
        started = tally.operations
        moved["keys"] = await cluster.migrate(range(SLOTS - 2000, SLOTS), source, target)
        moved["operations"] = tally.operations - started

    tally = await _under_load(fail_over_and_reshard)
    print(f"\nCLUSTER FAILOVER, then 2,000 slots with {moved['keys']} keys moved under {moved['operations']} operations: {tally.operations} operations, "
          f"{tally.checked} reads checked {tally.checked_by_kind}, {len(tally.stale)} stale, 0 failed")
    assert moved["keys"] >= 50, "too little moved: clients were never told MOVED or ASK"
    assert moved["operations"] >= 200, "the slots moved while little else happened"
    assert tally.checked >= 300
    assert tally.stale == [], tally.stale[:5]
