"""REDIS_URL may name Sentinels (`redis+sentinel://host:port[,host:port]/service[/db]`): the client asks
them for the service's master and talks to it through the one guard. Run against a real redis-server and a
real Sentinel (Debian's redis-server in sentinel mode) on loopback ports of the test's own."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from app.main import open_deps
from config.settings import SettingsError, load_settings, parse_sentinel_url
from devtools.services import RedisServer, free_port


@contextlib.asynccontextmanager
async def sentinel_for(master: RedisServer, service: str = "discours") -> AsyncIterator[str]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="sentinel-") as directory:
        config = Path(directory, "sentinel.conf")  # Sentinel rewrites its configuration: a file of its own
        await asyncio.to_thread(config.write_text, f"port {port}\nbind 127.0.0.1\ndir {directory}\n"
                                f"sentinel monitor {service} 127.0.0.1 {master.port} 1\n")
        process = subprocess.Popen([master.binary, str(config), "--sentinel"],  # noqa: ASYNC220 - runs beside
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            probe = Redis(host="127.0.0.1", port=port)
            for _ in range(100):
                with contextlib.suppress(Exception):
                    if await probe.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", service):
                        break
                await asyncio.sleep(0.05)
            await probe.aclose()
            yield f"redis+sentinel://127.0.0.1:{port}/{service}/3"
        finally:
            process.terminate()
            process.wait(10)


async def test_the_app_runs_on_the_master_the_sentinels_name(redis_server: RedisServer, settings: Any) -> None:
    async with sentinel_for(redis_server) as url:
        through_sentinel = settings.model_copy(update={"redis_url": url})
        async with open_deps(through_sentinel) as deps:
            session = await deps.accounts.sessions.create(7, "via-sentinel")
            assert (await deps.accounts.sessions.validate(session.token)).user_id == 7  # type: ignore[union-attr]
            await deps.cache.invalidate_tags(["author:7"])
            assert deps.cache.redis.guard is deps.cache.guard  # type: ignore[attr-defined]
        direct = Redis.from_url(redis_server.url.rsplit("/", 1)[0] + "/3")
        assert await direct.exists("gen:author:7") == 1  # written to the master, in db 3
        await direct.aclose()


def test_sentinel_urls_are_parsed_and_bad_ones_named() -> None:
    assert parse_sentinel_url("redis+sentinel://:secret@10.0.0.1:26379,10.0.0.2:26380/main/2") == (
        [("10.0.0.1", 26379), ("10.0.0.2", 26380)], "main", 2, "secret")
    assert parse_sentinel_url("redis+sentinel://sentinel/main") == ([("sentinel", 26379)], "main", 0, None)
    for bad in ("redis+sentinel://host:26379", "redis+sentinel:///main", "redis+sentinel://h:port/main"):
        with pytest.raises(SettingsError, match="REDIS_URL"):
            load_settings(redis_url=bad)
