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
and long-lived: in steady state this is two commands per new connection. What it costs after a failover
is one cold cache, as after an epoch bump by hand.

Not on a Redis Cluster yet: a node's failover would have to move the epoch, which lives on another node.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from cache import keys
from cache.store import GENERATION_TTL

log = logging.getLogger(__name__)

OWNER_TTL = GENERATION_TTL  # refreshed by every new connection, so it outlives the values it vouches for


async def check_data_owner(connection: Any) -> bool:
    """Run on a new connection before it is used (cache/seam.py `checked_on_connect`); True when the data
    was written by another server and the epochs were moved."""
    await connection.send_command("INFO", "server")
    info = await connection.read_response()
    run_id = _field(info, b"run_id")
    await connection.send_command("GET", keys.data_written_by())
    owner = await connection.read_response()
    if owner == run_id:
        return False
    commands: list[tuple[Any, ...]] = [
        ("SET", keys.generation(keys.GLOBAL_TAG), random.getrandbits(62) + 1, "EX", GENERATION_TTL),
        # a live epoch that exists moves to a random value (one missing starts at random when first read)
        *(("SET", keys.live_epoch(kind), random.getrandbits(48), "XX") for kind in keys.LIVE_KINDS),
        ("DEL", keys.wal_floor()),
        ("SET", keys.data_written_by(), run_id, "EX", OWNER_TTL),
    ]
    for command in commands:
        await connection.send_command(*command)
        await connection.read_response()
    if owner is not None:  # a first connection to a new, empty Redis moves epochs nobody used yet
        log.warning("Redis at %s holds data another server wrote (a failover or a restart): the cache and "
                    "live epochs moved, the WAL floor dropped", getattr(connection, "port", "?"))
    return True


def _field(info: bytes | str, name: bytes) -> bytes:
    raw = info if isinstance(info, bytes) else info.encode()
    for line in raw.splitlines():
        if line.startswith(name + b":"):
            return line.split(b":", 1)[1].strip()
    raise ValueError(f"INFO server has no {name.decode()}")
