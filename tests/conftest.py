"""Fixtures against real PostgreSQL and Redis (TEST_DATABASE_URL / TEST_REDIS_URL, defaulting to the
run's own database and redis-server, made at the start and removed at the end). The database is migrated
with Alembic and seeded once per session; Redis is flushed before each test that asks for a clean cache."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from alembic import command
from redis.asyncio import Redis
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.cli.seed import SIZES, seed_connection
from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache.redis.client import make_redis
from cache.store import Cache
from config.settings import Settings, load_settings
from devtools.mutant_tests import order_and_bound
from devtools.services import RedisServer, RunServices
from orm.engine import make_engine
from orm.migrations import alembic_config
from resolvers.deps import Deps

# A run uses a database and a redis-server of its own (devtools/services.py RunServices), made here and
# removed when the run ends; TEST_DATABASE_URL / TEST_REDIS_URL name others instead (the cluster pass, the
# mutation pass), which the run then empties. Subprocesses of the run inherit both variables.
_OWN = RunServices(database="TEST_DATABASE_URL" not in os.environ, redis="TEST_REDIS_URL" not in os.environ)
os.environ.update(_OWN.start())
TEST_DATABASE_URL = os.environ["TEST_DATABASE_URL"]
TEST_REDIS_URL = os.environ["TEST_REDIS_URL"]
# Set by devtools/on_cluster.py, which runs the Redis-heavy modules again on a three-master Redis Cluster.
TEST_REDIS_CLUSTER = os.environ.get("TEST_REDIS_CLUSTER", "") == "1"
# For tests that count the commands or round trips of one Redis server (a cluster client splits them by
# node), or that stop and start a server of their own.
single_redis = pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="counts a single Redis server's commands")


def pytest_unconfigure(config: pytest.Config) -> None:
    _OWN.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # under the mutation pass only: a mutant's tests fastest first, each with a deadline of its own
    order_and_bound(items)


@dataclass
class Counter:
    """Counts SQL statements sent by an engine (a `before_cursor_execute` listener)."""

    statements: list[str] = field(default_factory=list)

    def __call__(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.statements.append(statement)

    @property
    def count(self) -> int:
        return len(self.statements)

    def reset(self) -> None:
        self.statements.clear()


def _migrate_fresh(url: str) -> None:
    """Empty the test database and run the real migrations on it."""
    import asyncio

    async def drop() -> None:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
        await engine.dispose()

    asyncio.run(drop())
    command.upgrade(alembic_config(url), "head")


@pytest.fixture(scope="session")
def migrated_url() -> str:
    _migrate_fresh(TEST_DATABASE_URL)
    return TEST_DATABASE_URL


@pytest.fixture(scope="session")
async def engine(migrated_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(migrated_url)
    async with engine.begin() as conn:
        await seed_connection(conn, SIZES["test"], seed=7)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="session")
def sql_counter(engine: AsyncEngine) -> Iterator[Counter]:
    counter = Counter()
    event.listen(engine.sync_engine, "before_cursor_execute", counter)
    yield counter
    event.remove(engine.sync_engine, "before_cursor_execute", counter)


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    # configured as the app's (pool, timeouts, retries)
    client = make_redis(TEST_REDIS_URL, cluster=TEST_REDIS_CLUSTER)
    await client.flushdb()  # the tests' own logical database (or cluster); never done outside tests
    yield client
    await client.aclose()


@contextlib.asynccontextmanager
async def redis_gone() -> AsyncIterator[Cache]:
    """A cache whose Redis is gone: configured as the app's, on an address nothing listens on. Its breaker
    starts closed: its first call asks Redis, and fails."""
    cache = Cache(make_redis("redis://127.0.0.1:1", coalesce=False))
    try:
        yield cache
    finally:
        await cache.redis.aclose()


@pytest.fixture
async def down() -> AsyncIterator[Cache]:
    async with redis_gone() as cache:
        yield cache


@pytest.fixture
async def redis_server() -> AsyncIterator[RedisServer]:
    """A redis-server of the test's own on a free port, which the test may stop and start again."""
    async with RedisServer() as server:
        yield server


@pytest.fixture
def cache(redis: Redis) -> Cache:
    return Cache(redis)


@pytest.fixture
def settings() -> Settings:
    # Every test client comes from one address, so the per-address rate limits are off here; the
    # throttling tests (test_auth_load.py) set their own.
    return load_settings(database_url=TEST_DATABASE_URL, redis_url=TEST_REDIS_URL, redis_cluster=TEST_REDIS_CLUSTER,
                         jwt_secret="t" * 40,
                         password_time_cost=1, password_memory_cost=1024, admin_emails=["root@example.org"],
                         logins_per_address=0, registrations_per_address=0, mails_per_address=0,
                         mails_per_recipient=0, cold_searches_per_address=0)


@pytest.fixture
def mailer() -> LogMailer:
    return LogMailer()


@pytest.fixture
def deps(engine: AsyncEngine, cache: Cache, redis: Redis, settings: Settings, mailer: LogMailer) -> Deps:
    """Wired like the app: sessions whose commits invalidate the cache, and a revalidation manager
    whose loop is not started (tests run `process_revalidation` themselves)."""
    return wire(settings, engine, cache, auth=build_auth(settings, redis, mailer=mailer))


@pytest.fixture
async def app(deps: Deps, settings: Settings) -> AsyncIterator[Any]:
    """The app; stopped as a graceful stop does: the reads its hits noted are counted before the next test,
    whose statements and commands a count arriving late (app/http/hit_reads.py) would otherwise join."""
    from app.http.hit_reads import stop_hit_reads

    app = create_app(settings, deps=deps)
    yield app
    await stop_hit_reads(app)


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


@pytest.fixture
async def uncached_client(deps: Deps, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the response cache and rendered answers off: every read executes GraphQL over the
    entity and list caches."""
    app = create_app(settings.model_copy(update={"response_cache_ttl": 0, "rendered_answer_ttl": 0}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client


@pytest.fixture
def gql(client: httpx.AsyncClient):  # type: ignore[no-untyped-def]
    async def run(query: str, variables: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        response = await client.post("/graphql", json={"query": query, "variables": variables or {}, **extra})
        assert response.status_code == 200, response.text
        return response.json()

    return run


@pytest.fixture
def api(client: httpx.AsyncClient, deps: Deps):  # type: ignore[no-untyped-def]
    from tests.helpers import Api

    return Api(client, deps)
