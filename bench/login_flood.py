"""Anonymous reads during a flood of failing logins, side by side with reads on a quiet server.

One uvicorn worker with production password hashing (argon2id, time cost 3, 64 MiB) and production rate
limits. The flood: `--flooders` clients sending wrong-password logins back to back, each from a fresh
address (X-Forwarded-For, which uvicorn trusts from loopback, as behind a proxy) for a fresh email, so
neither the per-address limit nor the per-account lockout stops it: every login is hashed. Meanwhile
one reader sends an anonymous shouts page again and again. Quiet and flooded phases alternate, and the
reads' p50 and p99 of each kind are compared.

    python -m bench.login_flood [--database-url URL] [--redis-url URL] [--seconds S] [--rounds N]

Like bench.read_path, it runs where DATABASE_URL and REDIS_URL say, or on a scratch database and a Redis
server of its own (bench/services.py).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from app.cli.seed import SIZES
from bench import services
from bench.read_path import PAGE
from devtools.services import free_port

ROOT = Path(__file__).resolve().parent.parent
LOGIN = "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { success } }"


async def _reads(http: httpx.AsyncClient, until: float) -> list[float]:
    timings = []
    while time.perf_counter() < until:
        started = time.perf_counter()
        response = await http.post("/graphql", json={"query": PAGE, "variables": {"o": {"limit": 20}}})
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200 and "errors" not in response.json(), response.text
    return timings


async def _flood(http: httpx.AsyncClient, until: float, counter: itertools.count[int]) -> int:
    sent = 0
    while time.perf_counter() < until:
        n = next(counter)
        headers = {"x-forwarded-for": f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"}
        await http.post("/graphql", headers=headers,
                        json={"query": LOGIN, "variables": {"e": f"flood-{n}@example.org", "p": "wrong password"}})
        sent += 1
    return sent


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=services.named_database(),
                        help="default: DATABASE_URL, else a scratch database dropped afterwards")
    parser.add_argument("--redis-url", default=services.named_redis(),
                        help="default: REDIS_URL, else a redis-server of the run's own")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flooders", type=int, default=12)
    args = parser.parse_args()
    async with services.database(args.database_url, SIZES["demo"]) as database_url, \
            services.redis(args.redis_url) as redis_url:
        quiet, flooded, logins = await _run(database_url, redis_url, args)
    print(f"{args.rounds} rounds of {args.seconds:g} s, {args.flooders} flooders, "
          f"{logins} failed logins hashed ({logins / (args.rounds * args.seconds):.0f}/s)")
    print(f"{'reads':<10}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}")
    for name, timings in (("quiet", quiet), ("flooded", flooded)):
        print(f"{name:<10}{len(timings):>7}{statistics.median(timings) * 1000:>10.1f}"
              f"{_percentile(timings, 0.99) * 1000:>10.1f}")
    print(f"p99 flooded / quiet: {_percentile(flooded, 0.99) / _percentile(quiet, 0.99):.2f}x (target: within 2x)")


async def _run(database_url: str, redis_url: str, args: argparse.Namespace) -> tuple[list[float], list[float], int]:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "JWT_SECRET": "bench" * 8}
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.asgi:app", "--port", str(port),  # noqa: ASYNC220
                               "--log-level", "warning"], cwd=ROOT, env=env)
    quiet: list[float] = []
    flooded: list[float] = []
    logins = 0
    counter = itertools.count(int(time.time()) % 100_000 * 1000)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            for _ in range(100):
                try:
                    await http.get("/healthz")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            await _reads(http, time.perf_counter() + 1)  # warm
            for _ in range(args.rounds):
                quiet += await _reads(http, time.perf_counter() + args.seconds)
                until = time.perf_counter() + args.seconds
                reads = asyncio.ensure_future(_reads(http, until))
                sent = await asyncio.gather(*(_flood(http, until, counter) for _ in range(args.flooders)))
                flooded += await reads
                logins += sum(sent)
    finally:
        server.terminate()
        server.wait(10)  # the server's connections end before the scratch database is dropped
    return quiet, flooded, logins


if __name__ == "__main__":
    asyncio.run(main())
