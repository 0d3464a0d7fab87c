"""A Redis master, its replica and a Sentinel watching them, of a test's own (Debian's redis-server, on free
loopback ports): what a deployment runs for Redis failover. A test cuts the replica off (it misses
what the master takes from then on), kills the master (SIGKILL: no shutdown), lets the replica go on, and
waits for the Sentinel to promote it: the new master lacks writes the old one acknowledged.

    async with SentinelSet() as redis:
        redis.url(10)                    # redis+sentinel://127.0.0.1:PORT/discours/10
        await redis.cut_replica(); ...; redis.master.kill(); redis.replica.resume(); await redis.promoted()
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile

from redis.asyncio import Redis

from devtools.services import RedisServer, free_port, wait_until

SERVICE = "discours"


class SentinelSet:
    def __init__(self, *, down_after_ms: int = 500) -> None:
        self.master = RedisServer()
        self.replica = RedisServer(options=("--replicaof", "127.0.0.1", str(self.master.port)))
        self.port = free_port()
        self.down_after_ms = down_after_ms
        self._directory = tempfile.TemporaryDirectory(prefix="sentinel-")
        self._process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis+sentinel://127.0.0.1:{self.port}/{SERVICE}/{db}"

    async def _sentinel(self, *command: object) -> object:
        client = Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        try:
            return await client.execute_command(*command)
        finally:
            await client.aclose()

    async def _replica_online(self) -> bool:
        client = Redis.from_url(self.master.url)
        try:
            info = await client.info("replication")
        finally:
            await client.aclose()
        return info.get("connected_slaves") == 1 and info.get("slave0", {}).get("state") == "online"

    async def __aenter__(self) -> SentinelSet:
        self.master.start()
        await self.master.ready()
        self.replica.start()
        await self.replica.ready()
        await wait_until(self._replica_online, "Sentinel set: the replica is in sync")
        await asyncio.to_thread(self._start_sentinel)

        async def knows_the_replica() -> bool:
            return len(await self._sentinel("SENTINEL", "REPLICAS", SERVICE)) == 1  # type: ignore[arg-type]

        await wait_until(knows_the_replica, "Sentinel set: the Sentinel knows the master and its replica")
        return self

    def _start_sentinel(self) -> None:
        config = os.path.join(self._directory.name, "sentinel.conf")  # Sentinel rewrites it: a file of its own
        with open(config, "w") as conf:
            conf.write(f"port {self.port}\nbind 127.0.0.1\ndir {self._directory.name}\n"
                       f"sentinel monitor {SERVICE} 127.0.0.1 {self.master.port} 1\n"
                       f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                       f"sentinel failover-timeout {SERVICE} 5000\n"
                       f"sentinel parallel-syncs {SERVICE} 1\n")
        self._process = subprocess.Popen([self.master.binary, config, "--sentinel"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)

    async def cut_replica(self) -> None:
        """The replica stops taking its master's writes: it hangs (SIGSTOP) and the master drops its link,
        so what the master takes from now on reaches no replica (nothing is left in flight to it either)."""
        self.replica.pause()
        client = Redis.from_url(self.master.url)
        try:
            await client.execute_command("CLIENT", "KILL", "TYPE", "replica")
        finally:
            await client.aclose()

    async def promoted(self, deadline: float = 30.0) -> None:
        """Wait until the Sentinel names the replica as the master and the replica acts as one."""
        async def replica_is_master() -> bool:
            address: list[bytes] = await self._sentinel("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)  # type: ignore[assignment]
            port = address[1]
            client = Redis.from_url(self.replica.url)
            try:
                role = (await client.info("replication")).get("role")
            finally:
                await client.aclose()
            return int(port) == self.replica.port and role == "master"

        await wait_until(replica_is_master, "Sentinel set: the replica promoted", deadline)

    async def __aexit__(self, *exc_info: object) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(10)
        self.replica.close()
        self.master.close()
        self._directory.cleanup()
