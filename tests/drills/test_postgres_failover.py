"""PostgreSQL failover, for real: a primary and a streaming replica of the test's own (devtools/postgres.py),
the server given both in libpq's multi-host form with `target_session_attrs=read-write`. The primary dies
(an immediate stop, as a dead machine); during the gap a write is answered SERVICE_UNAVAILABLE (a GraphQL
error: never an HTTP 500, never reported done); the replica is promoted, and writes succeed again within
seconds without a restart. With synchronous replication every acknowledged write is on the new primary."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from alembic import command
from redis.asyncio import Redis

from app.cli.seed import SIZES, seed_connection
from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache.store import Cache
from config.settings import Settings, load_settings, postgres_url
from devtools.postgres import PostgresServer, libpq_url
from orm.engine import make_engine
from orm.migrations import alembic_config
from tests.conftest import TEST_REDIS_URL
from tests.helpers import Api

PROMOTED_WITHIN = 15.0  # seconds from the promotion to the first write that succeeds (the target)
TOPICS = "{ get_topics_all { id slug title } }"
DRAFT = "mutation($t: String!) { create_draft(draft_input: {title: $t, body: \"<p>b</p>\"}) { error draft { id } } }"


@pytest.fixture
async def pair() -> AsyncIterator[tuple[PostgresServer, PostgresServer]]:
    async with PostgresServer(synchronous=True) as primary, primary.standby() as replica:
        await primary.sql('CREATE DATABASE "failover"')
        await asyncio.to_thread(command.upgrade, alembic_config(primary.url.rsplit("/", 1)[0] + "/failover"), "head")
        yield primary, replica


@pytest.fixture
def settings(pair: tuple[PostgresServer, PostgresServer]) -> Settings:
    url = libpq_url(pair, "failover", target_session_attrs="read-write")
    return load_settings(database_url=url, redis_url=TEST_REDIS_URL, jwt_secret="f" * 40, password_time_cost=1,
                         password_memory_cost=1024, logins_per_address=0, registrations_per_address=0,
                         mails_per_address=0, mails_per_recipient=0)


async def test_the_libpq_form_names_every_host() -> None:
    url = postgres_url("postgresql://u@h1:5433,h2/db?target_session_attrs=read-write")
    assert url == "postgresql+asyncpg://u@/db?host=h1:5433&host=h2:5432&target_session_attrs=read-write"
    assert postgres_url("postgresql://u@h1:5433/db") == "postgresql+asyncpg://u@h1:5433/db"


async def test_writes_follow_a_promoted_replica(pair: tuple[PostgresServer, PostgresServer],
                                                settings: Settings, redis: Redis) -> None:
    primary, replica = pair
    engine = make_engine(settings.database_url)
    async with engine.begin() as conn:
        await seed_connection(conn, SIZES["test"], seed=3)
    deps = wire(settings, engine, Cache(redis), auth=build_auth(settings, redis, mailer=LogMailer()))
    transport = httpx.ASGITransport(app=create_app(settings, deps=deps))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            api = Api(client, deps)
            user = await api.user()
            acknowledged = [(await api(DRAFT, {"t": "before"}, user))["draft"]["id"]]
            topics = await api(TOPICS)  # read once: cached

            await asyncio.to_thread(primary.crash)
            refused = await _write(client, user.token, "in the gap")
            assert refused.status_code == 200, refused.text  # never an HTTP 500
            assert refused.json()["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE", refused.json()
            assert not (refused.json()["data"] or {}).get("create_draft")  # not reported done
            assert await api(TOPICS) == topics  # reads go on from Redis

            await asyncio.to_thread(replica.promote)
            promoted = time.monotonic()
            while True:  # the first write the new primary takes, within the deadline
                answer = await _write(client, user.token, "after")
                assert answer.status_code == 200, answer.text
                body = answer.json()
                if "errors" not in body:
                    acknowledged.append(body["data"]["create_draft"]["draft"]["id"])
                    break
                assert body["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE", body
                assert time.monotonic() - promoted < PROMOTED_WITHIN, "no write succeeded after the promotion"
                await asyncio.sleep(0.1)
            print(f"writes again {time.monotonic() - promoted:.2f} s after the promotion")
            for n in range(5):  # and go on succeeding
                acknowledged.append((await api(DRAFT, {"t": f"after {n}"}, user))["draft"]["id"])
        kept = await replica.sql("SELECT count(*) FROM draft WHERE id = ANY($1::int[])", acknowledged,
                                 database="failover")
        assert kept == len(acknowledged)  # synchronous replication: no acknowledged write lost
    finally:
        await engine.dispose()


async def _write(client: httpx.AsyncClient, token: str, title: str) -> Any:
    return await client.post("/graphql", json={"query": DRAFT, "variables": {"t": title}},
                             headers={"authorization": f"Bearer {token}"})
