"""A Redis Cluster of a test's own: redis-server processes on free loopback ports, masters with slots split
evenly (CLUSTER ADDSLOTSRANGE and CLUSTER MEET, no redis-cli needed) and, when asked, replicas of each
master. `url` names the first node; a cluster client finds the others from it.

The drills a deployment lives through, for the failover tests:

    async with RedisClusterServers(3, replicas=1) as cluster:
        master = await cluster.master_of("gen:epoch")
        await cluster.cut_replica(master); ...; master.kill(); cluster.replica_of(master).resume()
        await cluster.promoted(cluster.replica_of(master))     # the cluster elected it on its own
        await cluster.fail_over(replica)                       # CLUSTER FAILOVER: coordinated, nothing lost
        await cluster.migrate(range(5000, 5100), source, target)  # slots and their keys, MOVED / ASK meanwhile
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from redis.asyncio import Redis

from devtools.services import RedisServer, free_port, wait_until

SLOTS = 16384


class RedisClusterServers:
    def __init__(self, masters: int = 3, *, replicas: int = 0, options: tuple[str, ...] = (),
                 node_timeout_ms: int = 2000) -> None:
        """`replicas`: per master. `node_timeout_ms`: how long a master may not answer before the others
        call it failed and its replica takes over."""
        count = masters * (1 + replicas)
        # Each node's bus port is chosen too: by default it is port + 10000, which may be over 65535.
        self.bus_ports = [free_port() for _ in range(count)]
        self.nodes = [RedisServer(options=("--cluster-enabled", "yes", "--cluster-node-timeout", str(node_timeout_ms),
                                           "--cluster-config-file", f"nodes-{n}.conf",
                                           "--cluster-port", str(bus), "--repl-diskless-sync-delay", "0", *options))
                      for n, bus in enumerate(self.bus_ports)]
        self.masters = self.nodes[:masters]
        # replica r of master m is nodes[masters + m * replicas + r]
        self._replicas = {self.masters[m].port: self.nodes[masters + m * replicas: masters + (m + 1) * replicas]
                          for m in range(masters)}
        self.url = f"redis://127.0.0.1:{self.nodes[0].port}/0"

    async def __aenter__(self) -> RedisClusterServers:
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            await node.ready()
        share = SLOTS // len(self.masters)
        for n, master in enumerate(self.masters):
            last = SLOTS - 1 if n == len(self.masters) - 1 else (n + 1) * share - 1
            await _command(master, "CLUSTER", "ADDSLOTSRANGE", n * share, last)
        for node, bus in zip(self.nodes[1:], self.bus_ports[1:], strict=True):
            await _command(self.nodes[0], "CLUSTER", "MEET", "127.0.0.1", node.port, bus)
        await wait_until(self._all_known, "Redis Cluster: every node knows every other")
        for master in self.masters:
            master_id = await self.node_id(master)
            for replica in self._replicas[master.port]:
                await _command(replica, "CLUSTER", "REPLICATE", master_id)
        await wait_until(self._formed, "Redis Cluster: the cluster formed, every replica in sync")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for node in self.nodes:
            node.resume()  # a paused process does not take SIGTERM
            node.close()

    # --- reading the cluster ------------------------------------------------------------------------

    async def node_id(self, node: RedisServer) -> str:
        return _text(await _command(node, "CLUSTER", "MYID"))

    async def master_of(self, key: str) -> RedisServer:
        """The node serving `key`'s slot now."""
        slot = int(await _command(self.nodes[0], "CLUSTER", "KEYSLOT", key))
        for node in self.running():
            if await _serves(node, slot):
                return node
        raise LookupError(f"no running node serves slot {slot}")

    def replica_of(self, master: RedisServer) -> RedisServer:
        """The first replica the cluster was made with for `master` (its roles may have changed since)."""
        return self._replicas[master.port][0]

    def running(self) -> list[RedisServer]:
        return [node for node in self.nodes if node.running]

    async def _all_known(self) -> bool:
        infos = [await _info(node) for node in self.nodes]
        return all(int(i["cluster_known_nodes"]) == len(self.nodes) for i in infos)

    async def _formed(self) -> bool:
        """Every slot served, seen alike from every node, the masters' config epochs told apart (masters
        given slots by hand start alike, and vote for no failover until that is settled), and every
        replica's link to its master up."""
        for node in self.running():
            if (await _info(node))["cluster_state"] != "ok":
                return False
            lines = [line.split() for line in _text(await _command(node, "CLUSTER", "NODES")).splitlines()]
            epochs = [line[6] for line in lines if "master" in line[2] and "fail" not in line[2]]
            if len(set(epochs)) != len(epochs):
                return False
        for replicas in self._replicas.values():
            for replica in replicas:
                if replica.running:
                    replication = await _role(replica)
                    if replication.get("role") == "slave" and replication.get("master_link_status") != "up":
                        return False
        return True

    # --- drills -------------------------------------------------------------------------------------

    async def in_sync(self) -> None:
        """Wait until every replica has all its master wrote so far."""
        async def replicated() -> bool:
            for master in self.running():
                role = await _role(master)
                if role.get("role") != "master":
                    continue
                offset = role["master_repl_offset"]
                for n in range(int(role.get("connected_slaves", 0))):
                    if int(role[f"slave{n}"]["offset"]) < offset:
                        return False
            return True

        await wait_until(replicated, "Redis Cluster: every replica in sync")

    async def cut_replica(self, master: RedisServer) -> None:
        """`master`'s replicas stop taking its writes: they hang (SIGSTOP) and the master drops their
        links, so what it takes from now on reaches none of them (nothing is left in flight either)."""
        for replica in self._replicas[master.port]:
            replica.pause()
        await _command(master, "CLIENT", "KILL", "TYPE", "replica")

    async def promoted(self, replica: RedisServer, deadline: float = 30.0) -> None:
        """Wait until `replica` serves slots as a master and every running node sees the cluster whole."""
        async def serving() -> bool:
            role = (await _role(replica)).get("role")
            return role == "master" and await self._formed()

        await wait_until(serving, f"Redis Cluster: the node on port {replica.port} promoted", deadline)

    async def fail_over(self, replica: RedisServer) -> None:
        """A coordinated failover (CLUSTER FAILOVER, sent to the replica): its master stops taking writes
        until the replica has all it wrote, then the replica takes its slots; nothing is lost."""
        for _attempt in range(3):  # an election may lose its votes to one of the cluster's own epoch bumps
            await _command(replica, "CLUSTER", "FAILOVER")
            with contextlib.suppress(TimeoutError):
                return await self.promoted(replica, deadline=10)
        raise TimeoutError(f"Redis Cluster: CLUSTER FAILOVER to port {replica.port} did not happen")

    async def migrate(self, slots: Iterable[int], source: RedisServer, target: RedisServer,
                      batch: int = 100) -> int:
        """Move `slots` and their keys from `source` to `target`, as `redis-cli --cluster reshard` does:
        while a slot moves, clients asking the source for a key already moved get ASK (a multi-key command
        TRYAGAIN), and once it moved, MOVED. Returns how many keys moved."""
        source_id, target_id = await self.node_id(source), await self.node_id(target)
        others = [node for node in self.running() if node not in (source, target)]
        clients = {node.port: Redis.from_url(node.url, socket_timeout=5) for node in (source, target, *others)}
        into, out_of = clients[target.port], clients[source.port]
        moved = 0
        try:
            for slot in slots:
                await into.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
                await out_of.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
                while names := await out_of.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
                    await out_of.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
                    moved += len(names)
                for client in clients.values():  # the target first, as redis-cli does
                    with contextlib.suppress(Exception):  # a replica answers this too; none may refuse it
                        await client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
        finally:
            for client in clients.values():
                await client.aclose()
        await wait_until(self._formed, "Redis Cluster: every node agrees on the moved slots")
        return moved


async def _command(node: RedisServer, *command: object) -> Any:
    client = Redis.from_url(node.url, socket_timeout=5)
    try:
        return await client.execute_command(*command)
    finally:
        await client.aclose()


async def _info(node: RedisServer) -> dict[str, Any]:
    info = await _command(node, "CLUSTER INFO")  # one string: redis-py parses the reply of "CLUSTER INFO"
    return info if isinstance(info, dict) else {}


async def _role(node: RedisServer) -> dict[str, Any]:
    """INFO replication of `node`."""
    client = Redis.from_url(node.url, socket_timeout=5)
    try:
        return await client.info("replication")
    finally:
        await client.aclose()


async def _serves(node: RedisServer, slot: int) -> bool:
    myself = next(line for line in _text(await _command(node, "CLUSTER", "NODES")).splitlines()
                  if "myself" in line.split()[2])
    for part in myself.split()[8:]:
        if part.startswith("["):  # a slot on its way in or out
            continue
        first, _, last = part.partition("-")
        if int(first) <= slot <= int(last or first):
            return True
    return False


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
