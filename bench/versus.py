"""This checkout against an earlier commit, side by side in one run: how many times faster a change made an
operation, where bench/over_http.py measures against the stack's limit.

The earlier commit is checked out in a git worktree of its own and served by a uvicorn worker from there,
beside one of this checkout, both on the same database and Redis (the caches each keeps are warm for
both), with the same settings. Each round measures every operation on both servers back to back, the
earlier first; a row is the median of its rounds, with the range of the per-round ratio (how much the
machine moved). Cases:

- warm: the response cache off (RESPONSE_CACHE_TTL=0), every value cached, driven by wrk;
- cold: every cached value a miss (the global epoch bumped before each request), one request at a time;
  besides requests a second, the worker's CPU per request (/proc, as bench/write_cost.py reads it), which
  the client's own time and the machine's other work move far less;
- hit: the response cache on (a second worker of each checkout), every answer stored, driven by wrk.

    python -m bench.versus --against 84ef5bb [--size bench] [--cases warm,cold,hit]
                           [--operations get_topics_all,load_reactions_by(20)] [--rounds 3] [--seconds 3]

Needs wrk (Debian: apt-get install wrk). The table is printed and written to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

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
    wrk,
)
from cache import keys
from config.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
CASES = ("warm", "cold", "hit")
COLD_CPU = "cold, worker CPU"  # ms per request, measured with the cold case


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[tuple[Path, str]]:
    """A worktree of `ref` (and its short commit), removed afterwards."""
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    place = Path(tempfile.mkdtemp(prefix=f"versus-{commit}-"))
    subprocess.run(["git", "worktree", "add", "--detach", "--force", str(place), commit], cwd=ROOT,
                   capture_output=True, check=True)
    try:
        yield place, commit
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(place)], cwd=ROOT, capture_output=True)
        shutil.rmtree(place, ignore_errors=True)


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    with checkout(args.against) as (place, commit):
        return await _measure(place, commit, settings, args)


async def _measure(place: Path, commit: str, settings: Settings, args: argparse.Namespace) -> str:
    names = args.operations.split(",") if args.operations else list(OPERATIONS)
    cases = args.cases.split(",")
    measured: dict[tuple[str, str, str], list[float]] = {}
    async with contextlib.AsyncExitStack() as servers:
        async def both(**env: str) -> tuple[Uvicorn, Uvicorn]:
            """A worker of the earlier checkout and one of this, with these settings."""
            common = server_env(settings, **env)
            return (await servers.enter_async_context(Uvicorn("app.asgi:app", {**common, "PYTHONPATH": str(place)},
                                                              cwd=place)),
                    await servers.enter_async_context(Uvicorn("app.asgi:app", {**common, "PYTHONPATH": str(ROOT)})))

        uncached = await both(RESPONSE_CACHE_TTL="0")
        cached = await both() if "hit" in cases else None
        bodies = {name: body for name, body in (await bodies_of(uncached[1].url + "/graphql")).items()
                  if name in names}
        async with open_deps(settings) as deps:
            async def bump() -> None:
                await deps.cache.invalidate_tags([keys.GLOBAL_TAG])

            for body in bodies.values():  # a second of each first: nothing measured pays for warming
                for server in (*uncached, *(cached or ())):
                    await wrk(server.url + "/graphql", body, {}, 1, args.connections)
            for round_number in range(args.rounds):
                for name, body in bodies.items():
                    for case, pair in (("warm", uncached), ("hit", cached)):
                        for server, side in zip(pair or (), ("earlier", "this"), strict=False):
                            if case in cases:
                                rps = (await wrk(server.url + "/graphql", body, {}, args.seconds,
                                                 args.connections))[0]
                                measured.setdefault((name, case, side), []).append(rps)
                    for server, side in zip(uncached, ("earlier", "this"), strict=True):
                        if "cold" in cases:
                            before = cpu_seconds(server.pid)
                            rps = (await sequential_cold(server.url + "/graphql", body, bump, args.cold_requests))[0]
                            cpu_ms = (cpu_seconds(server.pid) - before) * 1000 / args.cold_requests
                            measured.setdefault((name, "cold", side), []).append(rps)
                            measured.setdefault((name, COLD_CPU, side), []).append(cpu_ms)
                print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    return render(measured, names, cases, commit, args)


def _chosen(args: argparse.Namespace) -> str:
    """The operations and cases a run was limited to, as its command line gave them."""
    chosen = f" --operations {args.operations}" if args.operations else ""
    return chosen + (f" --cases {args.cases}" if args.cases != ",".join(CASES) else "")


def render(measured: dict[tuple[str, str, str], list[float]], names: list[str], cases: list[str], commit: str,
           args: argparse.Namespace) -> str:
    lines = [
        "# This checkout against an earlier commit (`python -m bench.versus`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.versus --against {commit} --size "
        f"{args.size}{_chosen(args)} --rounds {args.rounds} --seconds {args.seconds}` on {os.cpu_count()} cores "
        f"({platform.machine()}, Python {platform.python_version()}), PostgreSQL and Redis on loopback: one "
        f"uvicorn worker of each checkout, the response cache off, on the same database and Redis. *warm*: wrk, "
        f"{args.connections} connections, {args.seconds} s per round; *cold*: {args.cold_requests} requests "
        "one at a time per round, each after an epoch bump"
        + ("; *hit*: as warm, on a second worker of each checkout with the response cache on" if "hit" in cases
           else "")
        + ". Requests/s are the median of the rounds; *rounds* is the range of the per-round ratio.",
        "",
        f"| operation | case | {commit} req/s | this req/s | this / {commit} | rounds |",
        "|---|---|---:|---:|---:|---:|",
    ]
    failed = 0
    for name in names:
        for case in cases:
            pairs = list(zip(measured.get((name, case, "this"), []), measured.get((name, case, "earlier"), []),
                             strict=True))
            # A round in which either side answered nothing (wrk got no response: the machine stalled) has no
            # ratio; it is left out and counted below, not a division by zero that loses the whole run.
            answered = [(new, old) for new, old in pairs if new > 0 and old > 0]
            failed += len(pairs) - len(answered)
            if not answered:
                continue
            this, earlier = [new for new, _ in answered], [old for _, old in answered]
            ratios = [new / old for new, old in answered]
            lines.append(f"| {name} | {case} | {statistics.median(earlier):,.0f} | {statistics.median(this):,.0f} "
                         f"| {statistics.median(this) / statistics.median(earlier):.2f}x | "
                         f"{min(ratios):.2f}-{max(ratios):.2f} |")
    if failed:
        lines += ["", f"{failed} round(s) in which a side answered nothing are left out."]
    if "cold" in cases:
        lines += ["", f"The worker's CPU per cold request (user and system time, /proc), the median of the rounds; "
                      f"*{commit} / this*: how many times less this checkout spends, with the range of the rounds.",
                  "", f"| operation | {commit} CPU ms | this CPU ms | {commit} / this | rounds |",
                  "|---|---:|---:|---:|---:|"]
        for name in names:
            answered = [(new, old) for new, old in zip(measured.get((name, COLD_CPU, "this"), []),
                                                        measured.get((name, COLD_CPU, "earlier"), []), strict=True)
                        if new > 0 and old > 0]
            if answered:
                this, earlier = [new for new, _ in answered], [old for _, old in answered]
                ratios = [old / new for new, old in answered]
                lines.append(f"| {name} | {statistics.median(earlier):.2f} | {statistics.median(this):.2f} | "
                             f"{statistics.median(earlier) / statistics.median(this):.2f}x | "
                             f"{min(ratios):.2f}-{max(ratios):.2f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--against", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--operations", default="", help=f"comma-separated, of: {', '.join(OPERATIONS)}")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--cold-requests", type=int, default=30)
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
