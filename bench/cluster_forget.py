"""What a Redis Cluster node's failover check costs (cache/failover.py): the script that forgets a promoted
node's generations, live metas and WAL floor walks every key of the node, once, before the node carries
anything. Measured on a one-node cluster of its own filled with DEBUG POPULATE: `keys` values, of which
one in twenty are generations.

    python -m bench.cluster_forget [--keys 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from redis.asyncio import Redis

from cache import keys
from cache.failover import FORGET_ON_NODE
from devtools.redis_cluster import RedisClusterServers


async def measure(count: int) -> tuple[int, int, float]:
    """(keys on the node, keys forgotten, seconds the script held the node)."""
    async with RedisClusterServers(1, options=("--enable-debug-command", "yes")) as cluster:
        client = Redis.from_url(cluster.url)
        try:
            await client.execute_command("DEBUG", "POPULATE", count, "value")
            await client.execute_command("DEBUG", "POPULATE", count // 20, keys.generation("bench"))
            total = await client.dbsize()
            started = time.perf_counter()
            forgotten = await client.eval(FORGET_ON_NODE, 1, keys.node_data_written_by(0), "a new run id", 60,
                                          *keys.FORGOTTEN_ON_FAILOVER)
            return total, int(forgotten), time.perf_counter() - started
        finally:
            await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    total, forgotten, seconds = asyncio.run(measure(parser.parse_args().keys))
    print(f"a node of {total:,} keys: {forgotten:,} forgotten in {seconds:.2f} s "
          f"({seconds / total * 1e6:.2f} s per million keys)")


if __name__ == "__main__":
    main()
