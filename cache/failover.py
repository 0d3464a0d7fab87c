"""A Redis that is not the one that wrote its data: a replica Sentinel promoted after its master died, or a
server restarted from its persistence files. Either may lack the last writes the previous master (or the
server before its restart) acknowledged: generation bumps, live-structure updates, a WAL floor raise.
A bump lost that way brings an older generation back, and the values stamped with it, computed before
the write it stood for, would be served as current: a stale read that lasts until the next write.

So every new connection to a Redis asks it who it is (`run_id`, which no replica copies and a restart
changes) and who wrote its data (`keys.data_written_by`, a key that replicates with the data). When they
differ, before the connection carries anything else, it moves the global epoch (every cached value and
response becomes a miss), the live structures' epochs (they are built again from SQL) and drops the WAL
floor (set again from the primary's position), then writes its own `run_id` there. Connections are pooled
and long-lived: in steady state this is two round trips per new connection (three on a cluster node). What it
costs after a failover is one cold cache, as after an epoch bump by hand.

On a Redis Cluster each node holds its own `run_id` record (in the first slot it serves), and a node that
holds another's data cannot move the epochs: they live on other nodes, which a request may have read
before the check ran. So it forgets, by itself and at once (one script, which nothing else interleaves
with), what its lost writes could have made wrong: every generation and epoch it holds (they start again
at random), every live structure's meta (rebuilt from SQL) and the WAL floor if it holds it. A value
stamped with one of its generations then never matches again, whichever node keeps the value, and what
other nodes hold was not lost. The script walks the node's keys (SCAN, in the script): it holds the node
for about 1.3 s per million keys (bench/cluster_forget.py), once, when it has just taken over.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from redis.exceptions import RedisError

from cache import keys
from cache.generations import GENERATION_TTL
from cache.lua import load_lua

log = logging.getLogger(__name__)

OWNER_TTL = GENERATION_TTL  # refreshed by every new connection, so it outlives the values it vouches for
# The oldest Redis the server runs on: GETEX (below) and ZADD GT (cache/live/structures.py) came in 6.2.
LEAST_REDIS = (6, 2)


class RedisTooOld(RedisError):
    """The Redis answering is older than LEAST_REDIS: refused on its first connection, naming both versions,
    rather than failing later on the first command it does not know."""


FORGET_ON_NODE = load_lua("forget_on_node")


async def check_data_owner(connection: Any) -> bool:
    """Run on a new connection before it is used (cache/redis/seam.py `checked_on_connect`); True when the data
    was written by another server and what it may have lost was made harmless."""
    replies = await _send(connection, ("INFO", "server"), ("INFO", "cluster"))
    _check_version(_field(replies[0], b"redis_version", b"0"))
    run_id = _field(replies[0], b"run_id")
    if _field(replies[1], b"cluster_enabled", b"0") == b"1":
        return await _check_node(connection, run_id)
    [owner] = await _send(connection, ("GETEX", keys.data_written_by(), "EX", OWNER_TTL))
    if owner == run_id:
        return False
    commands: list[tuple[Any, ...]] = [
        ("SET", keys.generation(keys.GLOBAL_TAG), random.getrandbits(62) + 1, "EX", GENERATION_TTL),
        # after the epoch (cache/store.py `_forget_epochs`): responses checked at its value check it again
        ("DEL", keys.invalidation_clock()),
        # a live epoch that exists moves to a random value (one missing starts at random when first read)
        *(("SET", keys.live_epoch(kind), random.getrandbits(48), "XX") for kind in keys.LIVE_KINDS),
        ("DEL", keys.wal_floor()),
        ("SET", keys.data_written_by(), run_id, "EX", OWNER_TTL),
    ]
    await _send(connection, *commands)
    if owner is not None:  # a first connection to a new, empty Redis moves epochs nobody used yet
        log.warning("Redis at %s holds data another server wrote (a failover or a restart): the cache and "
                    "live epochs moved, the WAL floor dropped", getattr(connection, "port", "?"))
    return True


async def _check_node(connection: Any, run_id: bytes) -> bool:
    """The same for a node of a Redis Cluster: its record is in the first slot it serves; one serving
    none (a replica) holds nothing a client reads."""
    [nodes] = await _send(connection, ("CLUSTER", "NODES"))
    slot = _first_slot(nodes)
    if slot is None:
        return False
    record = keys.node_data_written_by(slot)
    [owner] = await _send(connection, ("GETEX", record, "EX", OWNER_TTL))
    if owner == run_id:
        return False
    [forgotten] = await _send(connection, ("EVAL", FORGET_ON_NODE, 1, record, run_id, OWNER_TTL,
                                           *keys.FORGOTTEN_ON_FAILOVER))
    if owner is not None and forgotten != -1:
        log.warning("Redis Cluster node at %s holds data another server wrote (a failover or a restart): "
                    "forgot its %s generations, live metas and WAL floor", getattr(connection, "port", "?"),
                    forgotten)
    return bool(forgotten != -1)


def _check_version(reported: bytes) -> None:
    numbers = tuple(int(part) if part.isdigit() else 0 for part in reported.decode().split(".")[:2])
    if numbers < LEAST_REDIS:
        least = ".".join(map(str, LEAST_REDIS))
        raise RedisTooOld(f"the server is Redis {reported.decode()}; this server needs Redis {least} or newer "
                          "(or a Valkey, which reports a Redis version of at least that)")


async def _send(connection: Any, *commands: tuple[Any, ...]) -> list[Any]:
    """`commands` in one round trip on a connection that is not in use yet; their replies."""
    for command in commands:
        await connection.send_command(*command)
    return [await connection.read_response() for _ in commands]


def _first_slot(nodes: bytes | str) -> int | None:
    """The first slot the node answering CLUSTER NODES serves (its `myself` line), None if it serves none."""
    raw = nodes.decode() if isinstance(nodes, bytes) else nodes
    for line in raw.splitlines():
        fields = line.split()
        if len(fields) > 2 and "myself" in fields[2].split(","):
            served = [int(part.split("-")[0]) for part in fields[8:] if not part.startswith("[")]
            return min(served) if served else None
    return None


def _field(info: bytes | str, name: bytes, default: bytes | None = None) -> bytes:
    raw = info if isinstance(info, bytes) else info.encode()
    for line in raw.splitlines():
        if line.startswith(name + b":"):
            return line.split(b":", 1)[1].strip()
    if default is not None:
        return default
    raise ValueError(f"INFO has no {name.decode()}")
