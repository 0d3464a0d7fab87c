"""A serving worker opens the connections its pools keep before its first request (DB_CONNECTIONS_AT_START,
REDIS_CONNECTIONS_AT_START), so they do not step up at the load's first peaks (bench/soak.py saw them do so
minutes into a run). Counted from the servers' side: PostgreSQL's backends for the test database, and the
clients of a Redis of the test's own. The control, the same deps opened as the cache CLI opens them (not
serving), opens none; a count past the pool's size opens the pool's size."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis
from sqlalchemy import text

from app.main import open_deps
from config.settings import load_settings
from devtools.services import RedisServer
from tests.conftest import TEST_DATABASE_URL

SERVER_SIDE = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
               "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")


async def _backends(engine: Any) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(text(SERVER_SIDE)))


async def _clients(server: RedisServer) -> int:
    counter = aioredis.from_url(server.url)
    try:
        return int((await counter.info("clients"))["connected_clients"]) - 1  # itself
    finally:
        await counter.aclose()


@pytest.mark.parametrize(("serving", "asked", "pool_size", "opened_db", "opened_redis"),
                         [(True, 3, 10, 3, 3), (True, 7, 2, 2, 7), (False, 3, 10, 0, 0)],
                         ids=["serving", "capped-at-the-pool-size", "control-not-serving"])
async def test_a_serving_worker_opens_its_pools_connections_at_start(
        engine: Any, redis_server: RedisServer, serving: bool, asked: int, pool_size: int,
        opened_db: int, opened_redis: int) -> None:
    settings = load_settings(database_url=TEST_DATABASE_URL, redis_url=redis_server.url, jwt_secret="t" * 40,
                             db_pool_size=pool_size, db_connections_at_start=asked,
                             redis_connections_at_start=asked, redis_max_connections=max(asked, 4))
    before_db, before_redis = await _backends(engine), await _clients(redis_server)
    async with open_deps(settings, serving=serving):
        assert await _backends(engine) - before_db == opened_db
        assert await _clients(redis_server) - before_redis == opened_redis
