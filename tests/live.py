"""Helpers for the live tests: the app served by a real uvicorn on a loopback port (in the test's own event
loop, so the test and the server share one Deps), and a small graphql-transport-ws client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
import websockets
from redis.asyncio import Redis

TRANSPORT_WS = "graphql-transport-ws"
LEGACY_WS = "graphql-ws"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1; yields the base URL (http://...)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(200):
        if server.started:
            break
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


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
        counts = dict(await redis.pubsub_numsub(channel))
        if counts.get(channel.encode(), 0) >= at_least:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"nobody subscribed to {channel}")
        await asyncio.sleep(0.02)
