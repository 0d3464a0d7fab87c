"""Behind PgBouncer in transaction pooling (Debian's, started by the test: two server connections shared by
the server's pool of ten): with DB_TRANSACTION_POOLER the server answers concurrent cold reads and writes
without an error. The control, the same without the setting, sees the prepared-statement failures a
deployment would (`prepared statement "__asyncpg_stmt_N__" already exists` / `does not exist`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from app.main import create_app, open_deps, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache import keys
from cache.store import Cache
from config.settings import Settings, SettingsError
from devtools.pgbouncer import PgBouncer
from orm.engine import make_engine
from orm.pooler import shares_server_connections
from tests.conftest import TEST_DATABASE_URL
from tests.helpers import Api

ROUNDS = 4
READERS = 12  # concurrent cold reads per round, over ten pooled client connections and two server ones
READ = "query($o: Int!) { load_shouts_by(options: {limit: 3, offset: $o}) { id title authors { slug } } }"
# by slug: a slug's id and its entity read on one session in autocommit elsewhere (cache/entities.py)
BY_SLUG = "query($s: String!) { get_author(slug: $s) { id slug } }"
WRITE = "mutation($t: String!) { create_draft(draft_input: {title: $t, body: \"<p>b</p>\"}) { draft { id } } }"


async def _failures(bouncer: PgBouncer, settings: Settings, redis: Redis, *, pooler: bool) -> list[str]:
    """The errors of ROUNDS rounds of concurrent cold reads and a write each, through the bouncer."""
    database = make_url(TEST_DATABASE_URL).database or "postgres"
    engine = make_engine(bouncer.url(database), pool_size=10, transaction_pooler=pooler)
    settings = settings.model_copy(update={"response_cache_ttl": 0})
    deps = wire(settings, engine, Cache(redis), auth=build_auth(settings, redis, mailer=LogMailer()))
    failures: list[str] = []
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=deps)),
                                     base_url="http://test") as client:
            api = Api(client, deps)
            try:
                user = await api.user()
            except AssertionError as failed:  # the control may fail here already
                return [str(failed)]
            for round_ in range(ROUNDS):
                await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # every read a cold one
                answers = await asyncio.gather(
                    *(api.raw(READ, {"o": n * 3}) for n in range(READERS)),
                    *(api.raw(BY_SLUG, {"s": f"author-{n + 1}"}) for n in range(READERS)),
                    api.raw(WRITE, {"t": f"через pgbouncer {round_}"}, user))
                failures += [error["message"] for answer in answers for error in answer.get("errors") or ()]
    finally:
        await engine.dispose()
    return failures


@pytest.fixture
async def bouncer(engine: AsyncEngine) -> Any:  # the session's engine: the test database migrated and seeded
    async with PgBouncer(server_port=make_url(TEST_DATABASE_URL).port or 5432, pool_size=2) as running:
        yield running


async def test_behind_pgbouncer_in_transaction_pooling(bouncer: PgBouncer, settings: Settings,
                                                       redis: Redis) -> None:
    assert await _failures(bouncer, settings, redis, pooler=True) == []


async def test_control_without_the_setting_prepared_statements_collide(bouncer: PgBouncer, settings: Settings,
                                                                        redis: Redis) -> None:
    failures = await _failures(bouncer, settings, redis, pooler=False)
    assert failures, "the control saw no failure: the test would not see the setting's absence"


async def test_the_start_finds_a_transaction_pooler_and_names_the_setting(bouncer: PgBouncer,
                                                                          settings: Settings) -> None:
    database = make_url(TEST_DATABASE_URL).database or "postgres"
    through = settings.model_copy(update={"database_url": bouncer.url(database), "database_replica_urls": []})
    with pytest.raises(SettingsError, match="DB_TRANSACTION_POOLER") as refused:
        async with open_deps(through, serving=True):
            pass
    assert str(refused.value).startswith("DATABASE_URL:")
    async with open_deps(through.model_copy(update={"db_transaction_pooler": True}), serving=True):
        pass  # with the setting it starts


@pytest.mark.parametrize("where", ["PostgreSQL itself", "PgBouncer in session pooling"])
async def test_no_transaction_pooler_is_found_where_there_is_none(engine: AsyncEngine, where: str) -> None:
    """The control: a connection that keeps its server connection is not taken for a transaction pooler."""
    async with contextlib.AsyncExitStack() as stack:
        url = TEST_DATABASE_URL
        if where != "PostgreSQL itself":
            session_pooler = await stack.enter_async_context(PgBouncer(
                server_port=make_url(TEST_DATABASE_URL).port or 5432, pool_mode="session", pool_size=2))
            url = session_pooler.url(make_url(TEST_DATABASE_URL).database or "postgres")
        kept = make_engine(url)
        try:
            assert not await shares_server_connections(kept)
        finally:
            await kept.dispose()


async def test_a_transaction_pooler_is_found_by_its_engine(bouncer: PgBouncer) -> None:
    database = make_url(TEST_DATABASE_URL).database or "postgres"
    for pooler in (False, True):  # with asyncpg's named statements, or unnamed ones (DB_TRANSACTION_POOLER)
        through = make_engine(bouncer.url(database), transaction_pooler=pooler)
        try:
            assert await shares_server_connections(through)
        finally:
            await through.dispose()
