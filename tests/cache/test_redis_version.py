"""The Redis version is checked on a connection's first round trip (cache/failover.py): a server older than
6.2 stops the start with a message naming the setting and both versions, not "cannot connect". The server
here speaks just enough RESP over a real socket to report a version of its choosing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from app.main import check_services, open_deps
from config.settings import SettingsError, load_settings


@contextlib.asynccontextmanager
async def reporting(version: str) -> AsyncIterator[str]:
    """A server on a free loopback port that answers INFO as Redis `version` would, and +OK or PONG to the
    rest; its URL."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                header = await reader.readline()
                if not header:
                    return
                words = []
                for _ in range(int(header[1:])):
                    await reader.readline()  # $<length>
                    words.append((await reader.readline()).strip().upper())
                if words[0] == b"INFO":
                    text = (f"redis_version:{version}\r\nrun_id:{'f' * 40}\r\n" if words[1] == b"SERVER"
                            else "cluster_enabled:0\r\n").encode()
                    writer.write(b"$%d\r\n%s\r\n" % (len(text), text))
                elif words[0] == b"PING":
                    writer.write(b"+PONG\r\n")
                elif words[0] == b"GETEX":
                    writer.write(b"$-1\r\n")
                else:
                    writer.write(b"+OK\r\n")
                await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"redis://127.0.0.1:{port}/0"


async def _start(url: str) -> None:
    settings = load_settings(database_url="sqlite+aiosqlite:///:memory:", redis_url=url, jwt_secret="v" * 40,
                             redis_connections_at_start=0, redis_breaker_seconds=0)
    async with open_deps(settings) as deps:
        await check_services(settings, deps, database=False)


async def test_a_redis_older_than_6_2_stops_the_start_naming_both_versions() -> None:
    async with reporting("6.0.16") as url:
        with pytest.raises(SettingsError) as refused:
            await _start(url)
    message = str(refused.value)
    assert message.startswith("REDIS_URL:") and "6.0.16" in message and "6.2" in message
    assert "cannot connect" not in message


@pytest.mark.parametrize("version", ["6.2.0", "7.0.15", "8.2.1"])
async def test_a_redis_of_6_2_or_newer_starts(version: str) -> None:
    async with reporting(version) as url:
        await _start(url)  # the control: the same server, a version it may run on
