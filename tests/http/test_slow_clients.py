"""Slow clients cut off, over real sockets to a real uvicorn with the protocol and options `discours serve`
gives it (app/http/slow_clients.py): headers a byte at a time, a body a byte at a time, an idle keep-alive
connection, and connections over the cap; while an open WebSocket outlives every deadline."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from app.http.slow_clients import ReadDeadlines
from app.main import create_app
from config.settings import Settings
from devtools.services import free_port
from resolvers.deps import Deps
from tests.helpers import until
from tests.live import GqlWs

DEADLINE = 1.0  # seconds, for headers and body alike here


@contextlib.asynccontextmanager
async def served(deps: Deps, settings: Settings, **options: Any) -> AsyncIterator[int]:
    app = create_app(settings, deps=deps)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                            http=ReadDeadlines, **options)
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    await until(lambda: server.started or task.done(), "uvicorn starts")
    try:
        yield port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.fixture(autouse=True)
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ReadDeadlines, "header_timeout", DEADLINE)
    monkeypatch.setattr(ReadDeadlines, "body_timeout", DEADLINE)


async def _drip(port: int, head: bytes, drip: bytes, every: float = 0.2) -> tuple[bytes, float]:
    """Send `head`, then `drip` a byte every `every` seconds until the server closes; what it answered and
    after how long."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    began = time.monotonic()
    writer.write(head)
    answer = b""

    async def read() -> None:
        nonlocal answer
        while chunk := await reader.read(4096):
            answer += chunk

    reading = asyncio.create_task(read())
    try:
        for byte in drip:
            if reading.done():
                break
            writer.write(bytes([byte]))
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            await asyncio.sleep(every)
        await asyncio.wait_for(reading, 5)
    finally:
        writer.close()
    return answer, time.monotonic() - began


async def test_headers_a_byte_at_a_time_are_cut_off(deps: Deps, settings: Settings) -> None:
    async with served(deps, settings) as port:
        results = await asyncio.gather(*(_drip(port, b"GET /healthz HTTP/1.1\r\n", b"X-Slow: " + b"a" * 200)
                                         for _ in range(50)))
    for answer, took in results:
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        assert took < DEADLINE + 1.5


async def test_a_body_a_byte_at_a_time_is_cut_off(deps: Deps, settings: Settings) -> None:
    head = (b"POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n"
            b'{"query": "')
    async with served(deps, settings) as port:
        results = await asyncio.gather(*(_drip(port, head, b" " * 200) for _ in range(20)))
    for answer, took in results:
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        assert took < DEADLINE + 1.5


async def test_a_prompt_request_is_answered(deps: Deps, settings: Settings) -> None:
    """Control: the same requests sent at once are served."""
    async with served(deps, settings) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"query": "{ __typename }"}'
        writer.write(b"POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        answer = await asyncio.wait_for(reader.read(4096), 5)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


async def test_an_idle_keep_alive_connection_is_closed(deps: Deps, settings: Settings) -> None:
    async with served(deps, settings, timeout_keep_alive=1) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        began = time.monotonic()
        answer = b""
        while chunk := await asyncio.wait_for(reader.read(4096), 5):
            answer += chunk
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200")
    assert time.monotonic() - began < 3


async def test_a_websocket_outlives_the_read_deadlines(deps: Deps, settings: Settings) -> None:
    async with served(deps, settings) as port, GqlWs.connect(f"http://127.0.0.1:{port}") as ws:
        assert (await ws.init())["type"] == "connection_ack"
        await asyncio.sleep(DEADLINE * 2.5)
        await ws.send({"type": "ping"})
        assert (await ws.receive())["type"] == "pong"


async def test_connections_over_the_cap_are_answered_503(deps: Deps, settings: Settings) -> None:
    async with served(deps, settings, limit_concurrency=3) as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(4096), 5)
        for _, other in [*held, (reader, writer)]:
            other.close()
    assert answer.startswith(b"HTTP/1.1 503"), answer[:80]


def test_serve_starts_uvicorn_with_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli import commands as cli

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setenv("HEADER_READ_TIMEOUT", "7")
    monkeypatch.setenv("KEEP_ALIVE_TIMEOUT", "4")
    monkeypatch.setenv("MAX_CONNECTIONS", "1500")
    cli.cmd_serve(argparse.Namespace(host=None, port=None, workers=None, reload=False))
    assert seen["http"] is ReadDeadlines
    assert (seen["timeout_keep_alive"], seen["limit_concurrency"]) == (4, 1500)
    import os

    assert os.environ["HEADER_READ_TIMEOUT"] == "7.0"
