"""Read replicas, for real: a primary and a streaming replica of the test's own (devtools/postgres.py), the
replica replaying 1.5 s behind (`recovery_min_apply_delay`), the server given both (DATABASE_URL,
DATABASE_REPLICA_URLS). Cold reads go to the replica; a read never misses a commit the cache has been told
of (the WAL floor, cache/wal_floor.py): the freshness property (docs/operations.md) holds across two worker processes
with the replica that far behind, and the control (REPLICA_FLOOR=off: a replica-unaware server) shows the
stale reads the floor prevents. A replica that stops is passed over, and taken again once it is back; a read
it cannot finish (it stops, or cancels the read in a recovery conflict) is read again on the primary."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from alembic import command
from redis.asyncio import Redis
from sqlalchemy import case, event, func, literal, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.cli.seed import SIZES, seed_connection
from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache import keys
from cache.store import Cache
from config.settings import Settings, load_settings
from devtools.postgres import PostgresServer
from orm.driver import DriverReads, reads
from orm.engine import make_engine, read_session
from orm.migrations import alembic_config
from resolvers.deps import Deps
from telemetry import metrics
from tests.conftest import TEST_REDIS_URL
from tests.drills.test_concurrency import freshness_run
from tests.helpers import Api, until
from tests.live import two_workers

DATABASE = "replicas"
APPLY_DELAY = 1.5  # seconds the replica replays behind its primary
COLD_READS = 300


@pytest.fixture(scope="module")
async def pair() -> AsyncIterator[tuple[PostgresServer, PostgresServer]]:
    """The primary, migrated and seeded, and its replica once it has replayed all that."""
    async with PostgresServer() as primary, primary.standby(apply_delay=APPLY_DELAY) as replica:
        # No autovacuum: after a test's burst of writes its commits would reach the replica APPLY_DELAY late
        # for as long as it runs (tens of seconds on a slow machine), a lag no test made: the replica would
        # never look caught up when a test needs it to be.
        await primary.sql("ALTER SYSTEM SET autovacuum = off")
        await primary.sql("SELECT pg_reload_conf()")
        await primary.sql(f'CREATE DATABASE "{DATABASE}"')
        await asyncio.to_thread(command.upgrade, alembic_config(_url(primary)), "head")
        engine = make_engine(_url(primary))
        async with engine.begin() as conn:
            await seed_connection(conn, SIZES["test"], seed=11)
        await engine.dispose()
        await replica.caught_up()
        yield primary, replica


def _url(server: PostgresServer) -> str:
    return server.url.rsplit("/", 1)[0] + "/" + DATABASE


def _settings(pair: tuple[PostgresServer, PostgresServer], **overrides: Any) -> Settings:
    primary, replica = pair
    return load_settings(**{"database_url": _url(primary), "database_replica_urls": [_url(replica)],
                            "redis_url": TEST_REDIS_URL, "jwt_secret": "r" * 40, "password_time_cost": 1,
                            "password_memory_cost": 1024, "logins_per_address": 0,
                            "registrations_per_address": 0, "mails_per_address": 0, "mails_per_recipient": 0,
                            "response_cache_ttl": 0, **overrides})


def _engines(settings: Settings) -> tuple[AsyncEngine, AsyncEngine]:
    """The primary's engine and the replica's, as app/main.py `open_deps` makes them."""
    return make_engine(settings.database_url), make_engine(settings.database_replica_urls[0], replica=True)


class Transactions(Counter[str]):
    """The reads and writes sent to each database (not the router's own questions: where a replica's replay
    is, where the primary's WAL ends). Each statement of a read runs in a transaction of its own (READ
    COMMITTED), so on a replica these are its read transactions."""

    def watch(self, engine: AsyncEngine, role: str) -> None:
        def sent(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if "wal_" not in statement and "pg_is_in_recovery" not in statement:
                self.update([role])

        event.listen(engine.sync_engine, "before_cursor_execute", sent)


@pytest.fixture
async def served(pair: tuple[PostgresServer, PostgresServer],
                 redis: Redis) -> AsyncIterator[tuple[Api, Deps, Transactions]]:
    settings = _settings(pair)
    primary, replica = _engines(settings)
    transactions = Transactions()
    transactions.watch(primary, "primary")
    transactions.watch(replica, "replica")
    deps = wire(settings, primary, Cache(redis), auth=build_auth(settings, redis, mailer=LogMailer()),
                replicas=[replica])
    assert deps.routing is not None
    await deps.routing.check()
    transport = httpx.ASGITransport(app=create_app(settings, deps=deps))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield Api(client, deps), deps, transactions
    finally:
        await deps.routing.dispose()
        await primary.dispose()


SHOUTS = "query($o: Int!) { load_shouts_by(options: {limit: 3, offset: $o}) { id title authors { slug name } } }"
AUTHOR = "query($id: Int) { get_author(author_id: $id) { id name } }"
RENAME = "mutation($n: String) { update_author(profile: {name: $n}) { error } }"


async def test_cold_reads_are_served_by_the_replica(served: tuple[Api, Deps, Transactions]) -> None:
    api, deps, transactions = served
    for offset in range(0, 30, 3):  # live structures (counters) are built once, on the primary
        await api(SHOUTS, {"o": offset})
    transactions.clear()
    for n in range(COLD_READS):
        await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # every read a cold one (no commit: no new floor)
        await api(SHOUTS, {"o": n % 30})
    share = transactions["replica"] / sum(transactions.values())
    print(f"\n{COLD_READS} cold reads: {dict(transactions)} transactions, {share:.1%} on the replica")
    assert share >= 0.9, dict(transactions)


async def test_a_write_is_read_at_once_though_the_replica_is_behind(
        served: tuple[Api, Deps, Transactions], pair: tuple[PostgresServer, PostgresServer]) -> None:
    api, _deps, transactions = served
    _primary, replica = pair
    user = await api.user()
    await api(AUTHOR, {"id": user.id})  # cached
    for n in range(3):
        await api(RENAME, {"n": f"renamed {n}"}, user)
        await api.deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # read from a database, not as the write left it
        transactions.clear()
        assert (await api(AUTHOR, {"id": user.id}))["name"] == f"renamed {n}"  # not the replica's old name
        assert transactions["primary"] and not transactions["replica"], dict(transactions)
    await replica.caught_up()  # once the replica has replayed the write, reads go to it again
    await api.deps.cache.invalidate_tags([keys.GLOBAL_TAG])
    transactions.clear()
    assert (await api(AUTHOR, {"id": user.id}))["name"] == "renamed 2"
    assert transactions["replica"] and not transactions["primary"], dict(transactions)


async def test_a_replica_that_stops_is_passed_over_and_taken_again(
        served: tuple[Api, Deps, Transactions], pair: tuple[PostgresServer, PostgresServer]) -> None:
    api, deps, transactions = served
    _primary, replica = pair
    assert deps.routing is not None
    await asyncio.to_thread(replica.stop)
    try:
        answers = []
        for n in range(20):
            await deps.cache.invalidate_tags([keys.GLOBAL_TAG])
            answers.append(await api.raw(SHOUTS, {"o": n}))
            await deps.routing.check()
        # what was reading the replica when it went is read again on the primary; from then on the primary
        # answers
        assert [answer["errors"] for answer in answers if "errors" in answer] == []
    finally:
        await asyncio.to_thread(replica.start)
    await replica.replaying()
    await until(lambda: _checked(deps), "the replica is usable again", deadline=30)
    await replica.caught_up()
    # Back, it streams from the start of its last WAL segment, behind what it replayed from its own disk: it
    # has replayed all it received, so it is not behind at all, though its last commit is long past (a lag
    # taken as the time since that commit kept it over a tight bound until the primary wrote again).
    deps.routing.max_lag = APPLY_DELAY / 3
    await deps.routing.check()
    restarted = deps.routing.replicas[0]
    assert restarted.usable and restarted.lag == 0, restarted
    transactions.clear()
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])
    await api(SHOUTS, {"o": 0})
    assert transactions["replica"] and not transactions["primary"], dict(transactions)


async def test_a_read_session_holds_no_transaction_open_on_the_replica(
        served: tuple[Api, Deps, Transactions], pair: tuple[PostgresServer, PostgresServer]) -> None:
    """Between a session's statements its replica connection is idle, not idle in a transaction: no BEGIN
    and ROLLBACK round trips, and no lock that the replay of the primary's DDL would wait for."""
    _api, deps, transactions = served
    await pair[1].caught_up()
    async with read_session(deps.db) as session:
        transactions.clear()
        backend = await session.scalar(select(func.pg_backend_pid()))
        assert transactions["replica"] == 1 and not transactions["primary"], dict(transactions)
        state = await pair[1].sql("SELECT state FROM pg_stat_activity WHERE pid = $1", backend)
    assert state == "idle"


@pytest.mark.parametrize("path", ["session", "driver"])
async def test_a_read_the_replica_cancels_is_read_again_on_the_primary(
        served: tuple[Api, Deps, Transactions], pair: tuple[PostgresServer, PostgresServer], path: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """A recovery conflict: the primary vacuums away row versions a read running on the replica may need;
    the replica, replaying that, cancels the read after `max_standby_streaming_delay` (30 s by default, 10 ms
    here). The read is read again on the primary, in a session as on the driver (orm/driver.py): its caller
    gets the answer, not an error."""
    _api, deps, transactions = served
    primary, replica = pair
    assert deps.routing is not None
    caplog.set_level(logging.INFO, logger="orm")
    await _standby_delay(replica, "10ms")
    try:
        await replica.caught_up()
        long_on_the_replica = select(func.pg_sleep(case((func.current_setting("in_hot_standby") == "on", 20.0), else_=0.0)),
                                     literal("answered").label("answer"))

        async def read() -> object:
            if path == "driver":
                async with reads(deps.db) as reading:
                    assert isinstance(reading, DriverReads)
                    return (await reading.rows(long_on_the_replica, {}))[0]["answer"]
            async with read_session(deps.db) as session:
                return (await session.execute(long_on_the_replica)).one()[1]

        transactions.clear()
        retried = metrics.REPLICA_READS_RETRIED._value.get()
        reading = asyncio.create_task(read())
        await until(lambda: _sleeping(replica), "the read runs on the replica", deadline=10)
        for statement in ("CREATE TABLE conflict_probe AS SELECT generate_series(1, 1000) AS n",
                          "DELETE FROM conflict_probe", "VACUUM conflict_probe", "DROP TABLE conflict_probe"):
            await primary.sql(statement, database=DATABASE)
        assert await asyncio.wait_for(reading, timeout=15) == "answered"
    finally:
        await _standby_delay(replica, None)
    # the control: the replica did cancel the read
    assert "conflict with recovery" in caplog.text and metrics.REPLICA_READS_RETRIED._value.get() == retried + 1
    assert transactions["replica"] == 1 and transactions["primary"] == 1, dict(transactions)
    assert deps.routing.replicas[0].usable  # a replica that cancels a read is well: it is not passed over


async def _standby_delay(replica: PostgresServer, value: str | None) -> None:
    """How long the replica's replay waits for reads in its way before cancelling them (None: the default)."""
    await replica.sql("ALTER SYSTEM RESET max_standby_streaming_delay" if value is None
                      else f"ALTER SYSTEM SET max_standby_streaming_delay = '{value}'")
    await replica.sql("SELECT pg_reload_conf()")


async def _sleeping(replica: PostgresServer) -> bool:
    return bool(await replica.sql("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                                  "AND query LIKE 'SELECT pg_sleep(CASE%'"))


async def _checked(deps: Deps) -> bool:
    assert deps.routing is not None
    await deps.routing.check()
    return all(replica.usable for replica in deps.routing.replicas)


async def test_a_replica_past_the_lag_bound_is_passed_over_until_it_catches_up(
        pair: tuple[PostgresServer, PostgresServer], redis: Redis) -> None:
    settings = _settings(pair, replica_max_lag=APPLY_DELAY / 3)
    primary, replica_engine = _engines(settings)
    deps = wire(settings, primary, Cache(redis), auth=None, replicas=[replica_engine])
    assert deps.routing is not None
    replica = deps.routing.replicas[0]
    try:
        await pair[1].caught_up()
        # the primary may still write a little WAL of its own (earlier tests' cleanup, a checkpoint)
        await until(lambda: _checked(deps), "the replica is usable to begin with", deadline=30)
        await pair[0].sql("SELECT txid_current()")  # a commit it receives at once and replays APPLY_DELAY later
        await until(lambda: _lag_seen(deps), "the replica's lag passes the bound", deadline=10)
        assert not replica.usable
        assert await deps.routing.engine_for_read() is primary  # passed over: the primary serves
        await pair[1].caught_up()
        await until(lambda: _checked(deps), "the replica is taken again once caught up", deadline=30)
        # Reads go to it once it has replayed the floor. The floor may be ahead of what it replayed by WAL
        # the primary writes on its own (a standby snapshot every 15 s), which it replays APPLY_DELAY later.
        await until(lambda: _reads_the_replica(deps, replica_engine), "reads go to the replica again", deadline=30)
    finally:
        await deps.routing.dispose()
        await primary.dispose()


async def _reads_the_replica(deps: Deps, replica: AsyncEngine) -> bool:
    assert deps.routing is not None
    return await deps.routing.engine_for_read() is replica


async def _lag_seen(deps: Deps) -> bool:
    assert deps.routing is not None
    await deps.routing.check()
    return (deps.routing.replicas[0].lag or 0) > deps.routing.max_lag


def _workers_env(pair: tuple[PostgresServer, PostgresServer], **more: str) -> dict[str, str]:
    primary, replica = pair
    return {"DATABASE_URL": _url(primary), "DATABASE_REPLICA_URLS": json.dumps([_url(replica)]),
            "REPLICA_CHECK_INTERVAL": "0.2", **more}


async def test_no_stale_reads_across_two_workers_with_a_lagging_replica(
        pair: tuple[PostgresServer, PostgresServer]) -> None:
    async with two_workers(env=_workers_env(pair)) as (server_url, pids, _redis):
        tally = await freshness_run(server_url)
        reads = await _reads_by_role(server_url)
    print(f"\nwith a replica {APPLY_DELAY} s behind: {tally.checked} reads checked {tally.checked_by_kind}, "
          f"{len(tally.stale)} stale; reads by database {reads}")
    assert len(pids) >= 2
    assert tally.checked >= 300 and tally.crossed >= 100
    assert reads.get("replica", 0) > 0, reads  # the replica did serve reads
    assert tally.stale == [], tally.stale[:5]


async def test_control_a_replica_unaware_server_serves_stale_reads(
        pair: tuple[PostgresServer, PostgresServer]) -> None:
    drill = _workers_env(pair, REPLICA_FLOOR="off", ENVIRONMENT="development")
    async with two_workers(env=drill) as (server_url, _pids, _redis):
        tally = await freshness_run(server_url, registered=pair[1].caught_up)
    print(f"\ncontrol (REPLICA_FLOOR=off): {tally.checked} reads checked, {len(tally.stale)} stale "
          f"{tally.stale_by_kind}")
    assert tally.checked >= 300
    assert len(tally.stale) >= 30, "a replica-unaware server must serve stale reads here: the test would be blind"


async def _reads_by_role(server_url: str) -> dict[str, float]:
    """discours_db_reads by role, from /metrics (summed over the workers)."""
    async with httpx.AsyncClient(base_url=server_url) as client:
        text = (await client.get("/metrics")).text
    reads: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("discours_db_reads_total{"):
            role = line.split('role="', 1)[1].split('"', 1)[0]
            reads[role] = reads.get(role, 0) + float(line.rsplit(" ", 1)[1])
    return reads
