"""What a cold request costs as the site grows: the same checkout on a database of one size and on one of ten
times its content, side by side in one run.

Two uvicorn workers of this checkout, the response cache off, each on its own database and Redis: one seeded at
`--size` (bench: 50,000 shouts), one at `--large` (bench10: ten times the authors, shouts, reactions and
follows under the same 300 topics, so every answer is as big on both). Each round sends each operation's cold
requests (the global epoch bumped before each, one at a time) to both workers in turn; a row is the median of
the rounds of the worker's CPU per request (user and system time, /proc) and of its requests a second. The
ratio is what ten times the data costs the worker per request; the database's own time shows in the rate only.

    python -m bench.scale [--size bench] [--large bench10] [--large-database-url URL] [--large-redis-url URL]
                          [--rounds 3] [--cold-requests 60]

The table is printed and written to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import httpx

from app.cli.seed import SIZES
from app.main import open_deps
from bench import services
from bench.over_http import (
    OPERATIONS,
    RESULTS,
    Uvicorn,
    bodies_of,
    cpu_seconds,
    sequential_cold,
    server_env,
    write_section,
)
from cache import keys
from cache.store import Cache
from config.settings import load_settings

SIDES = ("base", "large")
# (operation, side) -> one value a round
Measured = dict[tuple[str, str], list[float]]


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    async with services.database(args.large_database_url, SIZES[args.large]) as large_database, \
            services.redis(args.large_redis_url) as large_redis:
        sides = {"base": (database_url, redis_url), "large": (large_database, large_redis)}
        cpu: Measured = {}
        rate: Measured = {}
        async with contextlib.AsyncExitStack() as stack:
            workers, bumps, bodies = {}, {}, {}
            for side, (database, redis) in sides.items():
                settings = load_settings(database_url=database, redis_url=redis, jwt_secret="bench" * 8)
                worker = workers[side] = await stack.enter_async_context(
                    Uvicorn("app.asgi:app", server_env(settings, RESPONSE_CACHE_TTL="0")))
                deps = await stack.enter_async_context(open_deps(settings))
                bumps[side] = _bump(deps.cache)
                bodies[side] = await bodies_of(worker.url + "/graphql")  # get_shout's slug is each database's
            names = args.operations.split(",") if args.operations else list(OPERATIONS)
            for side in SIDES:  # a database's pages read from disk first: a cold read may take seconds then
                await _warm(workers[side].url + "/graphql", [bodies[side][name] for name in names], bumps[side])
            for round_number in range(args.rounds + 1):  # the first round warms both and is not counted
                for name in names:
                    for side in SIDES if round_number % 2 == 0 else SIDES[::-1]:
                        worker = workers[side]
                        before = cpu_seconds(worker.pid)
                        rps = (await sequential_cold(worker.url + "/graphql", bodies[side][name], bumps[side],
                                                     args.cold_requests))[0]
                        if round_number:
                            cpu.setdefault((name, side), []).append(
                                (cpu_seconds(worker.pid) - before) * 1000 / args.cold_requests)
                            rate.setdefault((name, side), []).append(rps)
                if round_number:
                    print(f"round {round_number} of {args.rounds} done", file=sys.stderr)
    return render(cpu, rate, names, args)


async def _warm(url: str, bodies: list[bytes], bump: Callable[[], Awaitable[None]]) -> None:
    """Each body answered once cold, given all the time it takes (the rounds' client gives five seconds)."""
    async with httpx.AsyncClient(headers={"content-type": "application/json"}, timeout=300) as http:
        for body in bodies:
            await bump()
            (await http.post(url, content=body)).raise_for_status()


def _bump(cache: Cache) -> Callable[[], Awaitable[None]]:
    async def bump() -> None:
        await cache.invalidate_tags([keys.GLOBAL_TAG])

    return bump


def render(cpu: Measured, rate: Measured, names: list[str], args: argparse.Namespace) -> str:
    base, large = SIZES[args.size], SIZES[args.large]
    lines = [
        "# A cold request as the data grows (`python -m bench.scale`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.scale --size {args.size} --large "
        f"{args.large} --rounds {args.rounds} --cold-requests {args.cold_requests}` on {os.cpu_count()} cores "
        f"({platform.machine()}, Python {platform.python_version()}), PostgreSQL and Redis on loopback: one uvicorn "
        f"worker of this checkout on each database, the response cache off, each with a Redis of its own. "
        f"*{args.size}*: {base.shouts:,} shouts, {base.reactions:,} reactions, {base.authors:,} authors, "
        f"{base.follows:,} follows, {base.topics:,} topics; *{args.large}*: {large.shouts:,}, {large.reactions:,}, "
        f"{large.authors:,}, {large.follows:,}, {large.topics:,}. Cold: {args.cold_requests} requests one at a "
        "time per round, each after an epoch bump; the worker's CPU per request (user and system time, /proc) and "
        "the requests a second are the medians of the rounds; *rounds* is the range of the per-round ratio.",
        "",
        f"| operation | {args.size} CPU ms | {args.large} CPU ms | {args.large} / {args.size} | rounds | "
        f"{args.size} req/s | {args.large} req/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        small_cpu, large_cpu = cpu.get((name, "base"), []), cpu.get((name, "large"), [])
        if not small_cpu or not large_cpu:
            continue
        ratios = [big / small for small, big in zip(small_cpu, large_cpu, strict=True) if small > 0]
        lines.append(f"| {name} | {statistics.median(small_cpu):.2f} | {statistics.median(large_cpu):.2f} | "
                     f"{statistics.median(large_cpu) / statistics.median(small_cpu):.2f}x | "
                     f"{min(ratios):.2f}-{max(ratios):.2f} | {statistics.median(rate[(name, 'base')]):,.0f} | "
                     f"{statistics.median(rate[(name, 'large')]):,.0f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser(wrk=False)
    parser.set_defaults(size="bench")
    parser.add_argument("--large", choices=sorted(SIZES), default="bench10")
    parser.add_argument("--large-database-url", default=None,
                        help="the larger database (seeded if empty); default: a scratch one dropped afterwards")
    parser.add_argument("--large-redis-url", default=None, help="default: a redis-server of the run's own")
    parser.add_argument("--operations", default="", help=f"comma-separated, of: {', '.join(OPERATIONS)}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold-requests", type=int, default=60)
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
