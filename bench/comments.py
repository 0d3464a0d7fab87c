"""A comment's latency alone and on a busy page, this checkout beside an earlier commit in one run (its worktree
served as bench/versus.py serves it).

For each checkout, one uvicorn worker with the response cache on, both on the same database and Redis. Each
round measures both, back to back (who goes first alternates):

- alone: comments on the read page's shouts offered open loop at `--alone-rate` a second by the writers
  (bench/writers.py, a process of its own: `--users` signed-up accounts, a connection each), nothing else
  running: the latency of a comment as one writer meets it;
- read-only: wrk on the page's five operations in turn (bench/mixed.py's readers, 16 connections);
- loaded: the same readers while the writers offer `--rate` comments a second on the page's shouts: the
  rate answered, the latency, the writes that failed or were shed (503), and the reads kept, against the
  read-only round of the same checkout and round; and the worker's CPU a comment took there (the loaded
  round's CPU less its reads at the read-only round's cost each), which the machine's other work moves less;
  and two counts, which it does not move: the Redis commands a comment took there (INFO commandstats, a
  script's own commands included, less the reads' at the read-only round's count each) and the look-ups per
  comment that found an answer stale (the worker's /metrics).

    python -m bench.comments --against REF [--size bench] [--rate 50] [--alone-rate 10] [--rounds 3]
                             [--seconds 10] [--users 20]

Needs wrk (Debian: apt-get install wrk). The table is printed and written to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
from datetime import UTC, datetime

from redis.asyncio import Redis

from bench import services
from bench.mixed import (
    counter_total,
    metrics_text,
    named,
    read_load,
    reader_script,
    with_writers,
    written_targets,
)
from bench.over_http import RESULTS, Uvicorn, bodies_of, cpu_seconds, server_env, write_section
from bench.versus import ROOT, checkout
from config.settings import load_settings

SIDES = ("earlier", "this")
# (side, measure) -> one value a round
Measured = dict[tuple[str, str], list[float]]


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    measured: Measured = {}
    redis = Redis.from_url(redis_url)
    with checkout(args.against) as (place, commit):
        common = server_env(settings)
        async with contextlib.AsyncExitStack() as servers:
            earlier = await servers.enter_async_context(
                Uvicorn("app.asgi:app", {**common, "PYTHONPATH": str(place)}, cwd=place))
            this = await servers.enter_async_context(Uvicorn("app.asgi:app", {**common, "PYTHONPATH": str(ROOT)}))
            bodies = named(await bodies_of(this.url + "/graphql"))
            shouts, topics = await written_targets(this.url + "/graphql", bodies)
            with reader_script(list(bodies.values())) as script:
                for server in (earlier, this):  # warm both: nothing measured pays for it
                    await read_load(server.url + "/graphql", script, 2, args.connections)
                for round_number in range(args.rounds):
                    order = list(zip((earlier, this), SIDES, strict=True))
                    for server, side in order if round_number % 2 == 0 else order[::-1]:
                        await _round(server, side, script, shouts, topics, measured, args, redis)
                    print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    await redis.aclose()
    return render(measured, commit, args)


async def _commands(redis: Redis) -> int:
    """The commands the Redis server has run so far (INFO commandstats, those of scripts included)."""
    stats = await redis.info("commandstats")
    return sum(int(value["calls"]) for name, value in stats.items() if name != "cmdstat_info")


async def _stale_look_ups(server: str) -> float:
    """The worker's response-cache look-ups so far that found an answer stale (its /metrics)."""
    return counter_total(await metrics_text(server), "discours_cache_reads_total", 'layer="response"',
                         'result="stale"')


async def _round(worker: Uvicorn, side: str, script: str, shouts: list[int], topics: list[str], measured: Measured,
                 args: argparse.Namespace, redis: Redis) -> None:
    server, url = worker.url, worker.url + "/graphql"

    def note(measure: str, value: float) -> None:
        measured.setdefault((side, measure), []).append(value)

    _, alone = await with_writers(server, args.alone_rate, args.seconds, "comment=1", shouts, topics,
                                  asyncio.sleep(0), users=args.users)
    note("alone p50", alone["p50"])
    note("alone p99", alone["p99"])
    before, commands = cpu_seconds(worker.pid), await _commands(redis)
    reads = (await read_load(url, script, args.seconds, args.connections))[0]
    read_cpu = (cpu_seconds(worker.pid) - before) / max(reads * args.seconds, 1)  # seconds a read
    read_commands = (await _commands(redis) - commands) / max(reads * args.seconds, 1)

    async def reading() -> tuple[float, float, float, float]:
        """The loaded round's reads a second, and the worker's CPU, the Redis commands and the stale look-ups
        meanwhile (the writers signed in before)."""
        start, commands, stale = cpu_seconds(worker.pid), await _commands(redis), await _stale_look_ups(server)
        rate = (await read_load(url, script, args.seconds, args.connections))[0]
        return (rate, cpu_seconds(worker.pid) - start, await _commands(redis) - commands,
                await _stale_look_ups(server) - stale)

    (loaded_reads, loaded_cpu, loaded_commands, stale), written = await with_writers(
        server, args.rate, args.seconds, "comment=1", shouts, topics, reading(), users=args.users)
    # The worker's CPU the comments took under the reads, their refreshes and the reads they made stale
    # included: the loaded round's, less its reads at the read-only round's cost each. A ratio of rates moves
    # with whatever else the machine runs; this moves with what the worker does.
    comments_cpu = loaded_cpu - loaded_reads * args.seconds * read_cpu
    comments = max(written["per_second"] * args.seconds, 1)
    note("comment CPU", comments_cpu * 1000 / comments)
    note("comment commands", (loaded_commands - loaded_reads * args.seconds * read_commands) / comments)
    note("stale look-ups", stale / comments)
    note("reads", reads)
    note("reads kept", loaded_reads / reads)
    note("answered", written["per_second"])
    note("p50", written["p50"])
    note("p99", written["p99"])
    note("errors", written["failed"] + written["shed"])


def render(measured: Measured, commit: str, args: argparse.Namespace) -> str:
    med = statistics.median

    def cell(side: str, measure: str, form: str) -> str:
        values = measured.get((side, measure), [])
        return format(med(values), form) if values else ""

    rows = [("comment alone, p50 ms", "alone p50", ".1f"), ("comment alone, p99 ms", "alone p99", ".1f"),
            ("reads/s, read-only", "reads", ",.0f"),
            (f"comments/s answered of {args.rate:g} offered, loaded", "answered", ".1f"),
            ("comment p50 ms, loaded", "p50", ".1f"), ("comment p99 ms, loaded", "p99", ".1f"),
            ("failed or shed comments, loaded (all rounds)", "errors", ",.0f"),
            ("reads kept, loaded / read-only", "reads kept", ".2f"),
            ("worker CPU ms a comment, loaded (its reads' share taken out)", "comment CPU", ".2f"),
            ("Redis commands a comment, loaded (its reads' share taken out)", "comment commands", ".0f"),
            ("look-ups finding an answer stale a comment, loaded", "stale look-ups", ".1f")]
    lines = [
        "# A comment alone and on a busy page, against an earlier commit (`python -m bench.comments`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.comments --against {commit} --size "
        f"{args.size} --rate {args.rate:g} --alone-rate {args.alone_rate:g} --rounds {args.rounds} --seconds "
        f"{args.seconds:g} --users {args.users}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), PostgreSQL and Redis on loopback: one uvicorn worker of each checkout, "
        "the response cache on, on the same database and Redis, measured back to back in each round. *alone*: "
        f"comments offered open loop at {args.alone_rate:g} a second by bench/writers.py ({args.users} accounts), "
        f"nothing else running; *loaded*: {args.rate:g} comments a second offered the same way while wrk reads the "
        f"page's five operations on {args.connections} connections; *read-only*: wrk alone. *answered*: comments "
        "done a second; *failed or shed*: a server error, a timeout or a 503; *worker CPU a comment*: the worker's "
        "CPU (/proc) in the loaded round, less its reads at the read-only round's CPU a read, per comment answered "
        "(its refreshes and the misses it caused included); *Redis commands a comment*: the same for the commands "
        "Redis ran (INFO commandstats, a script's own included); *look-ups finding an answer stale*: the worker's "
        "response-cache look-ups that did, per comment (/metrics). The median of the rounds.",
        "",
        f"| measure | {commit} | this |",
        "|---|---:|---:|",
    ]
    for title, measure, form in rows:
        if measure == "errors":
            total = {side: sum(measured.get((side, measure), [])) for side in SIDES}
            lines.append(f"| {title} | {total['earlier']:,.0f} | {total['this']:,.0f} |")
        else:
            lines.append(f"| {title} | {cell('earlier', measure, form)} | {cell('this', measure, form)} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--against", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--rate", type=float, default=50, help="comments a second offered under the read load")
    parser.add_argument("--alone-rate", type=float, default=10, help="comments a second offered alone")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--users", type=int, default=20, help="the writers' accounts")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
