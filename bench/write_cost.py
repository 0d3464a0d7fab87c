"""What one write costs the worker that does it: CPU milliseconds per write, by kind, read from the
worker's own /proc counters (user + system time) around a run of writes sent one at a time by a signed-in
writer, so that nothing else runs in the worker meanwhile (no reader, no other writer; its background
loops are idle between rounds). The writes are those of bench/writers.py: a comment on the read page's
shouts, a vote (LIKE and DISLIKE in turn: each replaces the last), a topic follow and unfollow in turn, a
rename of the writer.

    python -m bench.write_cost [--size bench] [--writes 300] [--rounds 3]

A write's CPU bounds how many writes a worker does a second, and what is left of it for readers
(bench/mixed.py): at 10 ms a write, 100 writes a second take a whole core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from bench import services
from bench.mixed import written_targets
from bench.over_http import RESULTS, Uvicorn, bodies_of, server_env, write_section
from bench.writers import MUTATIONS, sign_up
from config.settings import load_settings

KINDS = ("comment", "vote", "follow", "edit")
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


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
    costs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}  # (cpu ms, wall ms) per write
    async with Uvicorn("app.asgi:app", server_env(settings)) as server:
        url = server.url + "/graphql"
        shouts, topics = await written_targets(url, await bodies_of(url))
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            token = await sign_up(http, "write-cost")
            done = 0
            for round_number in range(args.rounds):
                for kind in KINDS:
                    await _writes(http, token, kind, done, 10, shouts, topics, warming=True)  # statements prepared
                    before, started = cpu_seconds(server.pid), time.perf_counter()
                    await _writes(http, token, kind, done + 10, args.writes, shouts, topics)
                    cpu, wall = cpu_seconds(server.pid) - before, time.perf_counter() - started
                    costs[kind].append((cpu * 1000 / args.writes, wall * 1000 / args.writes))
                    done += args.writes + 10
                print(f"round {round_number + 1} of {args.rounds} done", flush=True)
    lines = [
        "# What a write costs the worker (`python -m bench.write_cost`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.write_cost --size {args.size} "
        f"--writes {args.writes} --rounds {args.rounds}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), PostgreSQL and Redis on loopback: one uvicorn worker, one signed-in "
        f"writer sending {args.writes} writes of a kind one at a time per round. *CPU ms*: the worker's user and "
        "system time per write (/proc), the median of the rounds and their range; *wall ms*: per write as "
        "the writer waited for it.",
        "",
        "| write | CPU ms | rounds | wall ms |",
        "|---|---:|---:|---:|",
    ]
    for kind in KINDS:
        cpus, walls = [c for c, _ in costs[kind]], [w for _, w in costs[kind]]
        lines.append(f"| {kind} | {statistics.median(cpus):.2f} | {min(cpus):.2f}-{max(cpus):.2f} | "
                     f"{statistics.median(walls):.2f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser(wrk=False)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
