"""The Redis-heavy test modules again, on a local Redis Cluster of three masters, each with a replica
(`make test` runs this after the drills, beside the rest of the suite: devtools/test_all.py): the cache,
sessions and tokens, revalidation, live structures, the delayed queue, views and pub/sub, with REDIS_CLUSTER
on. The cluster is redis-server processes of its own on free loopback ports, removed afterwards.

    python -m devtools.on_cluster [pytest arguments...]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from devtools.redis_cluster import RedisClusterServers

ROOT = Path(__file__).resolve().parent.parent
MODULES = [
    "tests/cache/test_cache_read_path.py", "tests/cache/test_composite.py", "tests/triggers/test_invalidation.py",
    "tests/cache/test_invalidation_api.py", "tests/cache/test_response_cache.py", "tests/auth/test_auth.py",
    "tests/auth/test_permissions_and_settings_store.py",
    "tests/cache/test_revalidator.py", "tests/cache/test_live_structures.py", "tests/cache/test_boards.py",
    "tests/cache/test_views.py", "tests/cache/test_delayed_queue.py", "tests/cache/test_pubsub.py",
    "tests/schema/test_subscriptions.py", "tests/api/test_events.py",
    "tests/cache/test_cluster.py", "tests/cache/test_lua.py", "tests/cache/test_big_values.py",
    # one multi-worker run: two worker processes on the cluster client, readers checked for stale reads
    "tests/drills/test_concurrency.py::test_no_stale_reads_across_two_workers",
]


async def _run(arguments: list[str]) -> int:
    async with RedisClusterServers(3, replicas=1) as cluster:
        env = {**os.environ, "TEST_REDIS_URL": cluster.url, "TEST_REDIS_CLUSTER": "1"}
        print(f"Redis Cluster of {len(cluster.masters)} masters, each with a replica, at {cluster.url}", flush=True)
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "pytest", *arguments],
                                       cwd=ROOT, env=env)
    return done.returncode


if __name__ == "__main__":
    sys.exit(asyncio.run(_run(sys.argv[1:] or ["-q", *MODULES])))
