"""Graceful restarts (app/graceful.py), for real: `discours serve` processes told SIGTERM.

A server told to stop answers `/readyz` 503 at once and goes on serving through its drain; then it closes
its WebSockets with 1012 (Service Restart), writes the views it counted down, and exits 0. Behind Debian's
HAProxy (devtools/haproxy.py: health checks on /readyz, only connection failures retried), a rolling
restart of two servers under a load of reads and writes fails no request and loses no acknowledged write.
HAProxy retries a connection a stopped server refused, so uvicorn's own shutdown would do there too; the
drain is what keeps a balancer that never retries from failing requests, and the control (no drain, no
retries) shows the failures the test would otherwise see.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from devtools.haproxy import HAProxy
from devtools.services import free_port
from orm import Draft, ShoutViews
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER, TEST_REDIS_URL
from tests.helpers import until
from tests.live import ROOT, GqlWs

DRAIN = 1.0  # seconds a told server goes on serving (SHUTDOWN_DRAIN_SECONDS)
PASSWORD = "long password"

pytestmark = [pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="process drills run once, on the single Redis"),
              pytest.mark.usefixtures("engine")]  # the test database, migrated and seeded


class Server:
    """One `discours serve` on a loopback port, started again on the same port after it stops."""

    def __init__(self, *, workers: int = 1, **env: str) -> None:
        self.port = free_port()
        self.workers = workers
        self.env = {**os.environ, "DATABASE_URL": TEST_DATABASE_URL,
                    "REDIS_URL": TEST_REDIS_URL.rsplit("/", 1)[0] + "/11", "JWT_SECRET": "g" * 40,
                    "PASSWORD_TIME_COST": "1", "PASSWORD_MEMORY_COST": "1024", "CACHE_REVALIDATION_INTERVAL": "3600",
                    "SHUTDOWN_DRAIN_SECONDS": str(DRAIN), "LOGINS_PER_ADDRESS": "0",
                    "REGISTRATIONS_PER_ADDRESS": "0", "MAILS_PER_ADDRESS": "0", "PRECACHE_ON_START": "false",
                    **env}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: ASYNC220 - it runs beside the test
            [sys.executable, "-m", "app.cli.commands", "serve", "--port", str(self.port), "--workers", str(self.workers)],
            cwd=ROOT, env=self.env)
        async with httpx.AsyncClient(base_url=self.url, timeout=2) as client:
            async def ready() -> bool:
                assert self.process is not None and self.process.poll() is None, "the server exited at start"
                with contextlib.suppress(httpx.TransportError):
                    return (await client.get("/readyz")).status_code == 200
                return False

            await until(ready, f"the server on port {self.port} is ready", deadline=60)

    def terminate(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    async def exit_code(self, deadline: float = 60) -> int:
        assert self.process is not None
        return await asyncio.to_thread(self.process.wait, deadline)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@contextlib.asynccontextmanager
async def servers(*made: Server) -> AsyncIterator[None]:
    try:
        await asyncio.gather(*(server.start() for server in made))
        yield
    finally:
        for server in made:
            server.kill()


async def _gql(client: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None,
               token: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return await client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers)


async def _sign_in(client: httpx.AsyncClient) -> str:
    email = f"graceful-{time.time_ns()}@example.org"
    await _gql(client, "mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { success } }",
               {"e": email, "p": PASSWORD})
    login = await _gql(client, "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }",
                       {"e": email, "p": PASSWORD})
    return str(login.json()["data"]["login"]["token"])


READ = "query($o: Int!) { load_shouts_by(options: {limit: 3, offset: $o}) { id slug title } }"
SHOUT = "query($s: String) { get_shout(slug: $s) { id stat { viewed } } }"
DRAFT = "mutation($t: String!) { create_draft(draft_input: {title: $t, body: \"<p>b</p>\"}) { error draft { id } } }"


async def test_sigterm_drains_then_closes_websockets_flushes_views_and_exits_0(engine: AsyncEngine) -> None:
    # the views flushed only at the shutdown; a drain long enough that a busy machine (the SIGTERM passed
    # on by uvicorn's supervisor to each worker) still answers within it
    drain = 4 * DRAIN
    server = Server(workers=2, VIEWS_FLUSH_INTERVAL="3600", SHUTDOWN_DRAIN_SECONDS=str(drain))
    async with servers(server), httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        shout = (await _gql(client, READ, {"o": 0})).json()["data"]["load_shouts_by"][0]
        viewed = (await _gql(client, SHOUT, {"s": shout["slug"]})).json()["data"]["get_shout"]["stat"]["viewed"]
        async with GqlWs.connect(server.url) as ws:
            assert (await ws.init())["type"] == "connection_ack"
            await ws.subscribe("1", "subscription($s: Int!) { shout_reactions(shout_id: $s) { action } }",
                               {"s": shout["id"]})
            server.terminate()
            told = time.monotonic()

            async def draining() -> bool:  # each worker of the two answers 503
                answers = [await client.get("/readyz") for _ in range(6)]
                return all(answer.status_code == 503 and answer.json()["status"] == "draining" for answer in answers)

            await until(draining, "/readyz answers 503 draining", deadline=drain / 2)
            during = await _gql(client, READ, {"o": 3})  # still served while the balancer takes note
            assert during.status_code == 200 and "errors" not in during.json(), during.text
            assert time.monotonic() - told < drain
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.next_message(wait=drain + 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012, closed.value  # Service Restart
        assert await server.exit_code() == 0
    async with engine.connect() as conn:
        kept = await conn.scalar(select(ShoutViews.views).where(ShoutViews.shout == shout["id"]))
    assert kept is not None and kept >= viewed  # the counted views reached the database at the shutdown


@dataclass
class Load:
    requests: int = 0
    failures: list[str] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)
    running: bool = True


async def _load(url: str, token: str, load: Load, seed: int) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        n = 0
        while load.running:
            n += 1
            write = (n + seed) % 4 == 0
            try:
                answer = (await _gql(client, DRAFT, {"t": f"rolling {seed}-{n}"}, token) if write
                          else await _gql(client, READ, {"o": (n * 3) % 30}))
            except httpx.TransportError as error:
                load.failures.append(f"{type(error).__name__}: {error}")
                continue
            load.requests += 1
            body = answer.json() if answer.headers.get("content-type", "").startswith("application") else None
            if answer.status_code != 200 or body is None or body.get("errors"):
                load.failures.append(f"{answer.status_code} {answer.text[:200]}")
            elif write:
                load.acknowledged.append(body["data"]["create_draft"]["draft"]["id"])


async def _rolling_restart(drain: float, *, retry: bool = True) -> Load:
    """Two servers behind HAProxy under load, each told SIGTERM, waited for, and started again in turn."""
    a, b = Server(SHUTDOWN_DRAIN_SECONDS=str(drain)), Server(SHUTDOWN_DRAIN_SECONDS=str(drain))
    async with servers(a, b), HAProxy({"a": a.port, "b": b.port}, retry=retry) as balancer:
        await balancer.until("a", "UP")
        await balancer.until("b", "UP")
        async with httpx.AsyncClient(base_url=balancer.url, timeout=30) as client:
            token = await _sign_in(client)
        load = Load()
        clients = [asyncio.create_task(_load(balancer.url, token, load, seed)) for seed in range(8)]
        try:
            for name, server in (("a", a), ("b", b)):
                before = load.requests
                server.terminate()
                assert await server.exit_code() == 0
                await balancer.until(name, "DOWN", deadline=5)
                await server.start()
                await balancer.until(name, "UP")
                assert load.requests > before, "the load went on through the restart"
        finally:
            load.running = False
            await asyncio.gather(*clients)
    return load


async def test_a_rolling_restart_behind_haproxy_fails_no_request(engine: AsyncEngine) -> None:
    load = await _rolling_restart(DRAIN)
    print(f"\nrolling restart of 2 servers behind HAProxy: {load.requests} requests "
          f"({len(load.acknowledged)} acknowledged writes), {len(load.failures)} failed")
    assert load.failures == [], load.failures[:5]
    assert load.requests >= 100 and load.acknowledged
    async with engine.connect() as conn:
        kept = await conn.scalar(select(func.count()).select_from(Draft).where(Draft.id.in_(load.acknowledged)))
    assert kept == len(load.acknowledged)  # no acknowledged write lost


async def test_the_drain_alone_keeps_a_balancer_that_never_retries_from_failing() -> None:
    load = await _rolling_restart(DRAIN, retry=False)
    print(f"\nno retries, drained: {load.requests} requests, {len(load.failures)} failed")
    assert load.failures == [], load.failures[:5]


async def test_control_without_the_drain_a_balancer_that_never_retries_fails_requests() -> None:
    load = await _rolling_restart(0.0, retry=False)
    print(f"\ncontrol (no retries, SHUTDOWN_DRAIN_SECONDS=0): {load.requests} requests, {len(load.failures)} failed")
    assert load.failures, "without the drain such a balancer must see failures: the test would be blind to it"
