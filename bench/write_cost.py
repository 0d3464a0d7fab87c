"""What one write costs the worker that does it: CPU milliseconds per write, by kind, read from the
worker's own /proc counters (user + system time) around a run of writes sent one at a time by a signed-in
writer, so that nothing else runs in the worker meanwhile (no reader, no other writer; its background
loops are idle between rounds). The writes are those of bench/writers.py: a comment on the read page's
shouts, a vote (LIKE and DISLIKE in turn: each replaces the last), a topic follow and unfollow in turn, a
rename of the writer.

    python -m bench.write_cost [--size bench] [--writes 300] [--rounds 3] [--kinds comment,vote]
    python -m bench.write_cost --against REF ...   # beside a worktree of an earlier commit, interleaved

A write's CPU bounds how many writes a worker does a second, and what is left of it for readers
(bench/mixed.py): at 10 ms a write, 100 writes a second take a whole core.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import services
from bench.mixed import written_targets
from bench.over_http import RESULTS, Uvicorn, bodies_of, cpu_seconds, server_env, write_section
from bench.versus import ROOT, checkout
from bench.writers import MUTATIONS, sign_up
from config.settings import Settings, load_settings

KINDS = ("comment", "vote", "follow", "edit")


def _write(kind: str, n: int, shouts: list[int], topics: list[str]) -> tuple[str, dict[str, Any]]:
    if kind == "comment":
        return MUTATIONS["comment"], {"s": shouts[n % len(shouts)], "b": f"write cost {n}"}
    if kind == "vote":
        return MUTATIONS["vote"], {"s": shouts[0], "k": "LIKE" if n % 2 else "DISLIKE"}
    if kind == "follow":
        return MUTATIONS["follow" if n % 2 == 0 else "unfollow"], {"t": topics[0]}
    return MUTATIONS["edit"], {"n": f"Write cost {n}"}


async def _writes(http: httpx.AsyncClient, token: str, kind: str, start: int, count: int, shouts: list[int],
                  topics: list[str], *, warming: bool = False) -> None:
    """`count` writes of a kind, each of them done (`warming`: the first may be refused, as the same vote
    or follow as the last run's ended with; the ones after it alternate)."""
    for n in range(start, start + count):
        query, variables = _write(kind, n, shouts, topics)
        answer = (await http.post("/graphql", content=orjson.dumps({"query": query, "variables": variables}),
                                  headers={"authorization": f"Bearer {token}",
                                           "content-type": "application/json"})).json()
        outcome = next(iter((answer.get("data") or {}).values()), None)
        if (answer.get("errors") or not outcome or outcome.get("error")) and not (warming and n == start):
            raise RuntimeError(f"a {kind} was not done: {answer}")


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    if not args.against:
        return _table(args, await _measure(settings, args, {"this": ROOT}))
    with checkout(args.against) as (place, commit):
        return _table(args, await _measure(settings, args, {commit: place, "this": ROOT}), commit)


async def _measure(settings: Settings, args: argparse.Namespace, sides: dict[str, Path]
                   ) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(cpu ms, wall ms) per write, by side and kind, a pair per round; the sides take turns within each
    round and kind, so that both see the same machine, the first of each round going second in the next."""
    kinds = args.kinds.split(",")
    costs: dict[tuple[str, str], list[tuple[float, float]]] = {(side, kind): [] for side in sides for kind in kinds}
    async with contextlib.AsyncExitStack() as stack:
        servers = {side: await stack.enter_async_context(
            Uvicorn("app.asgi:app", {**server_env(settings), "PYTHONPATH": str(place)}, cwd=place))
            for side, place in sides.items()}
        url = servers["this"].url + "/graphql"
        shouts, topics = await written_targets(url, await bodies_of(url))
        clients = {side: await stack.enter_async_context(httpx.AsyncClient(base_url=server.url, timeout=30))
                   for side, server in servers.items()}
        tokens = {side: await sign_up(http, "write-cost") for side, http in clients.items()}
        done = 0
        for round_number in range(args.rounds):
            for kind in kinds:
                turns = list(servers.items())  # who goes first alternates: the second may find what the first warmed
                for side, server in turns[::-1] if round_number % 2 else turns:
                    http, token = clients[side], tokens[side]
                    await _writes(http, token, kind, done, 10, shouts, topics, warming=True)  # statements prepared
                    before, started = cpu_seconds(server.pid), time.perf_counter()
                    await _writes(http, token, kind, done + 10, args.writes, shouts, topics)
                    cpu, wall = cpu_seconds(server.pid) - before, time.perf_counter() - started
                    costs[(side, kind)].append((cpu * 1000 / args.writes, wall * 1000 / args.writes))
                    done += args.writes + 10
            print(f"round {round_number + 1} of {args.rounds} done", flush=True)
    return costs


def _table(args: argparse.Namespace, costs: dict[tuple[str, str], list[tuple[float, float]]],
           against: str | None = None) -> str:
    kinds = args.kinds.split(",")
    command = (f"`python -m bench.write_cost --size {args.size} --writes {args.writes} --rounds {args.rounds}"
               + (f" --kinds {args.kinds}" if args.kinds != ",".join(KINDS) else "")
               + (f" --against {args.against}" if against else "") + "`")
    machine = (f"on {os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}), PostgreSQL "
               "and Redis on loopback")
    if against is None:
        lines = [
            "# What a write costs the worker (`python -m bench.write_cost`)",
            "",
            f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by {command} {machine}: one uvicorn worker, one "
            f"signed-in writer sending {args.writes} writes of a kind one at a time per round. *CPU ms*: the "
            "worker's user and system time per write (/proc), the median of the rounds and their range; "
            "*wall ms*: per write as the writer waited for it.",
            "",
            "| write | CPU ms | rounds | wall ms |",
            "|---|---:|---:|---:|",
        ]
        for kind in kinds:
            cpus, walls = [c for c, _ in costs[("this", kind)]], [w for _, w in costs[("this", kind)]]
            lines.append(f"| {kind} | {statistics.median(cpus):.2f} | {min(cpus):.2f}-{max(cpus):.2f} | "
                         f"{statistics.median(walls):.2f} |")
        return "\n".join(lines) + "\n"
    lines = [
        "# What a write costs the worker, against an earlier commit (`python -m bench.write_cost --against`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by {command} {machine}: a uvicorn worker of each "
        f"checkout on the same database and Redis, one signed-in writer sending {args.writes} writes of a kind "
        "one at a time to each in turn (who goes first alternates), per round. *CPU ms*: the worker's user and "
        f"system time per write (/proc), the median of the rounds; *this / {against}*: the median of the "
        "per-round ratios of CPU per write (below 1: this checkout spends less), and their range.",
        "",
        f"| write | {against} CPU ms | this CPU ms | this / {against} | rounds |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        earlier, this = [c for c, _ in costs[(against, kind)]], [c for c, _ in costs[("this", kind)]]
        ratios = [t / e for t, e in zip(this, earlier, strict=True)]
        lines.append(f"| {kind} | {statistics.median(earlier):.2f} | {statistics.median(this):.2f} | "
                     f"{statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser(wrk=False)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"of {','.join(KINDS)}")
    parser.add_argument("--against", help="an earlier commit, measured beside this checkout (a git worktree)")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
