"""Helpers for tests against running servers: the app served by a real uvicorn on a loopback port (in the
test's own event loop, so the test and the server share one Deps), two uvicorn worker processes, and a
small graphql-transport-ws client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
import websockets
from redis.asyncio import Redis

from cache.redis.client import is_cluster, make_redis
from devtools.services import free_port
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER, TEST_REDIS_URL
from tests.helpers import until

ROOT = Path(__file__).resolve().parent.parent

TRANSPORT_WS = "graphql-transport-ws"
LEGACY_WS = "graphql-ws"


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1; yields the base URL (http://...)."""
    port = free_port()
    # an event stream a page still holds open (/connect) is cut after a second, not waited for
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=1))
    task = asyncio.get_running_loop().create_task(server.serve())
    await until(lambda: server.started or task.done(), "uvicorn starts")
    if task.done():  # it could not start (its error is the test's)
        task.result()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@contextlib.asynccontextmanager
async def two_workers(redis_url: str | None = None,
                      env: dict[str, str] | None = None) -> AsyncIterator[tuple[str, set[int], Redis]]:
    """`uvicorn --workers 2` on the test PostgreSQL and a Redis database of their own (emptied first), or, on
    the cluster pass, the test cluster (emptied first); yields (base URL, the two worker pids, a client of
    that Redis)."""
    port = free_port()
    cluster = (TEST_REDIS_CLUSTER and redis_url is None) or (env or {}).get("REDIS_CLUSTER") == "true"
    redis_url = redis_url or (TEST_REDIS_URL if TEST_REDIS_CLUSTER else TEST_REDIS_URL.rsplit("/", 1)[0] + "/10")
    redis = make_redis(redis_url, cluster=cluster)  # a Sentinel URL too
    await redis.flushdb()
    env = {**os.environ, "DATABASE_URL": TEST_DATABASE_URL, "REDIS_URL": redis_url, "JWT_SECRET": "c" * 40,
           "REDIS_CLUSTER": "true" if cluster else "false",
           "PASSWORD_TIME_COST": "1", "PASSWORD_MEMORY_COST": "1024", "CACHE_REVALIDATION_INTERVAL": "3600",
           "EXPOSE_WORKER": "true",
           # every test client shares one address: no per-address limits here
           "LOGINS_PER_ADDRESS": "0", "REGISTRATIONS_PER_ADDRESS": "0", "MAILS_PER_ADDRESS": "0",
           "COLD_SEARCHES_PER_ADDRESS": "0", **(env or {})}
    process = subprocess.Popen(  # noqa: ASYNC220 - starting, not waiting: the servers run beside the test
        [sys.executable, "-m", "uvicorn", "app.asgi:app", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "2", "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    pids: set[int] = set()
    try:
        for _ in range(150):  # until both workers have answered
            try:
                pids |= await worker_pids(base)
            except httpx.TransportError:
                pass
            if len(pids) >= 2:
                break
            await asyncio.sleep(0.2)
        yield base, pids, redis
    finally:
        process.terminate()
        process.wait(10)
        await redis.aclose()


async def worker_pids(base: str, probes: int = 40) -> set[int]:
    """Which processes answer: many fresh connections at once, which the kernel spreads over the workers."""
    async def probe() -> int:
        async with httpx.AsyncClient(base_url=base) as client:
            return int((await client.get("/healthz")).json()["worker"])

    return set(await asyncio.gather(*(probe() for _ in range(probes))))


class GqlWs:
    """One graphql-transport-ws connection: `init`, `subscribe`, `next_message`, raw `send`."""

    def __init__(self, socket_: Any) -> None:
        self.ws = socket_

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, base: str, *, protocol: str = TRANSPORT_WS,
                      headers: dict[str, str] | None = None) -> AsyncIterator[GqlWs]:
        url = base.replace("http://", "ws://") + "/graphql"
        async with websockets.connect(url, subprotocols=[protocol],  # type: ignore[list-item]
                                      additional_headers=headers, max_queue=None) as ws:
            yield cls(ws)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def receive(self, wait: float = 5.0) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), wait)
        assert isinstance(raw, str), "messages must be text frames"
        return json.loads(raw)  # type: ignore[no-any-return]

    async def init(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        await self.send({"type": "connection_init", **({"payload": payload} if payload is not None else {})})
        return await self.receive()

    async def subscribe(self, op_id: str, query: str, variables: dict[str, Any] | None = None) -> None:
        await self.send({"id": op_id, "type": "subscribe", "payload": {"query": query, "variables": variables or {}}})

    async def next_message(self, wait: float = 5.0) -> dict[str, Any]:
        """The next message that is not a ping/pong."""
        while True:
            message = await self.receive(wait)
            if message["type"] not in ("ping", "pong", "ka"):
                return message


async def subscribed(redis: Redis, channel: str, at_least: int = 1, wait: float = 5.0) -> None:
    """Wait until `channel` has `at_least` Redis subscribers: a subscription is live only from then."""
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        # on a cluster, summed over every node (the hub listens on one of them)
        options = {"target_nodes": "all"} if is_cluster(redis) else {}
        counts = dict(await redis.pubsub_numsub(channel, **options))
        if counts.get(channel.encode(), 0) >= at_least:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"nobody subscribed to {channel}")
        await asyncio.sleep(0.02)
