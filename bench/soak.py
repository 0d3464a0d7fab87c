"""Flat memory: the mixed load of bench/mixed.py held for minutes, with what the server holds sampled every
`--every` seconds: each worker's RSS and open file descriptors (those it holds of its own, and apart the
connections its clients keep open to it, which the load decides: judged against the load's count, not by
growth), the connections Redis and PostgreSQL see,
and Redis's memory in all and per key family (keys and bytes, `discours cache stats`' walk; the families
of 1 MiB or more one by one, the others together). After the
warm-up (the first `--warm-up` seconds) no figure may grow by more than `--bound` (5%), each growth
printed beside it.

Growth is peak against peak: the highest sample of the second half of the samples after the warm-up
against the highest of the first half. The server's periodic work makes its figures saw-toothed, not
level: Redis memory climbs between revalidation rounds (the marked ids, the counters to recount) and drops
at each; open descriptors follow the connections open at the moment. A last sample against a first
compares two points of that saw (+26% or -13% from where each fell); a leak raises the peaks. The
revalidation manager runs every `--revalidation-interval` seconds (60; the server's default is 300), so
the run holds many rounds: what one round takes and gives back is seen again, and what it keeps adds up.

    python -m bench.soak [--size bench] [--workers 2] [--minutes 10] [--every 30] [--share 0.05]

Needs wrk (Debian: apt-get install wrk). The table is printed and written to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import text

from app.main import open_deps
from bench import services
from bench.mixed import failures_said, read_load, reader_script, written_targets
from bench.over_http import RESULTS, Uvicorn, bodies_of, server_env, write_section
from bench.writers import CONNECTIONS as WRITER_CONNECTIONS
from cache.inventory import family_stats
from config.settings import load_settings
from resolvers.deps import Deps

Sample = dict[str, float]
# A figure the load decides, not the server: reported with its bound (the load's connections), not judged by growth.
CLIENTS = "clients' connections to worker"
LARGE_FAMILY = 2**20  # bytes: a key family this large is a figure of its own
FAMILY = "Redis family "  # a sampled key family's figures, before the report folds the small ones


def _workers(pid: int) -> list[int]:
    """The serving processes: uvicorn's worker processes, or itself when it serves alone."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    workers = [int(child) for child in children
               if "spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace")]
    return workers or [pid]


def _tcp_ports() -> dict[str, tuple[int, int]]:
    """Every TCP socket of the machine's network namespace, by inode: (local port, remote port)."""
    ports: dict[str, tuple[int, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                ports[inode] = (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16))
    return ports


def descriptors(pid: int, server_port: int, ports: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """A worker's open fds: (all of them, the connections its clients opened to it). A client's connection
    is the client's to keep open or close (the writer opens up to WRITER_CONNECTIONS as its requests wait),
    so the fds the server holds of its own are the others: its Redis and PostgreSQL connections, files,
    pipes, its loop."""
    total = clients = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        total += 1
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:[") and ports.get(target[8:-1], (0, 0))[0] == server_port:
                clients += 1
    return total, clients


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def sample(deps: Deps, workers: list[int], server_port: int, families: bool) -> Sample:
    figures: Sample = {}
    ports = _tcp_ports()
    for n, pid in enumerate(workers):
        total, clients = descriptors(pid, server_port, ports)
        figures[f"worker {n + 1} RSS MiB"] = _rss_kib(pid) / 1024
        figures[f"worker {n + 1} open fds, its own"] = total - clients
        figures[f"{CLIENTS} {n + 1}"] = clients
    redis = deps.cache.redis
    info = await redis.info()
    figures["Redis clients"] = info["connected_clients"]
    figures["Redis used MiB"] = info["used_memory"] / 2**20
    async with deps.db() as session:
        # Client backends only: a parallel query's workers are backends of the database too (a statement of the
        # counters' refresh starts two), and counting them read as the pools growing for a moment.
        figures["PostgreSQL connections"] = await session.scalar(text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND backend_type = 'client backend'")) or 0
    if families:  # every family: the report folds the small ones together (`_families_folded`)
        for name, family in (await family_stats(deps.cache)).items():
            figures[f"{FAMILY}{name} keys"] = family.keys
            figures[f"{FAMILY}{name} MiB"] = family.bytes / 2**20
    return figures


def _families_folded(samples: list[Sample]) -> list[Sample]:
    """The samples with each key family that reached LARGE_FAMILY in any of them as figures of its own and
    the others summed: decided over the whole run, so that a family near the size does not move between
    its own figures and the others' from one sample to the next."""
    large = {name.removeprefix(FAMILY).removesuffix(" MiB") for figures in samples for name, value in figures.items()
             if name.startswith(FAMILY) and name.endswith(" MiB") and value * 2**20 >= LARGE_FAMILY}
    folded = []
    for figures in samples:
        kept: Sample = {name: value for name, value in figures.items() if not name.startswith(FAMILY)}
        if any(name.startswith(FAMILY) for name in figures):
            kept["Redis other families keys"] = kept["Redis other families MiB"] = 0.0
            for name, value in figures.items():
                if name.startswith(FAMILY):
                    family, _, unit = name.removeprefix(FAMILY).rpartition(" ")
                    into = f"Redis {family} {unit}" if family in large else f"Redis other families {unit}"
                    kept[into] = kept.get(into, 0.0) + value
        folded.append(kept)
    return folded


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    env = server_env(settings, CACHE_REVALIDATION_INTERVAL=str(args.revalidation_interval))
    if args.workers > 1:
        env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bench-metrics-")
    seconds = args.minutes * 60
    samples: list[tuple[float, Sample]] = []
    async with Uvicorn("app.asgi:app", env, workers=args.workers) as server, open_deps(settings) as deps:
        url = server.url + "/graphql"
        bodies = await bodies_of(url)
        shouts, topic_slugs = await written_targets(url, bodies)
        workers = _workers(server.pid)
        with reader_script(list(bodies.values())) as script:
            reads, *_ = await read_load(url, script, 5, args.connections)
            rate = reads * args.share / (1 - args.share)
            writers = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.writers", "--url", server.url, "--rate", str(rate), "--seconds",
                str(seconds), "--mix", args.mix, "--shouts", ",".join(map(str, shouts)),
                "--topics", ",".join(topic_slugs), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
            started = time.monotonic()
            while (elapsed := time.monotonic() - started) < seconds:
                await read_load(url, script, max(1, round(min(args.every, seconds - elapsed))), args.connections)
                samples.append((time.monotonic() - started, await sample(deps, workers, server.port, args.families)))
                shown = _families_folded([samples[-1][1]])[0]  # as the report will (but for this sample alone)
                print(f"{samples[-1][0]:.0f} s: {orjson.dumps(shown).decode()}", file=sys.stderr)
            written = orjson.loads((await writers.communicate())[0].splitlines()[-1])
    return render(samples, written, rate, args)


def render(samples: list[tuple[float, Sample]], written: dict[str, Any], rate: float,
           args: argparse.Namespace) -> str:
    after = _families_folded([figures for at, figures in samples if at >= args.warm_up] or [samples[-1][1]])
    half = max(1, len(after) // 2)
    first, last = _peaks(after[:half]), _peaks(after[half:] or after)
    lines = [
        "# Soak: what the server holds under a long mixed load (`python -m bench.soak`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.soak --size {args.size} --workers "
        f"{args.workers} --minutes {args.minutes:g} --every {args.every:g} --share {args.share}` on "
        f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}): wrk readers on the "
        f"bench's five operations, writers at {rate:.0f} writes/s ({written['writes']} due, {written['failed']} "
        f"failed{failures_said(written.get('failed_by'))}, {written.get('shed', 0)} shed, {written.get('unsent', 0)} "
        "unsent: the writer's bound). Sampled "
        f"every {args.every:g} s, the revalidation manager running every {args.revalidation_interval} s; "
        f"*growth*: the highest sample of the second half after {args.warm_up:g} s of warm-up against the "
        f"highest of the first half ({len(after)} samples); a figure passes when it grew by at most "
        f"{args.bound:.0%}.",
        "",
        "| figure | first half's peak | second half's peak | growth | |",
        "|---|---:|---:|---:|---|",
    ]
    bound = args.connections + WRITER_CONNECTIONS
    for name in sorted(set(first) | set(last), key=lambda n: (not n.startswith("worker"), n)):
        start, end = first.get(name, 0.0), last.get(name, 0.0)
        growth = (end - start) / start if start else (0.0 if not end else float("inf"))
        if name.startswith(CLIENTS):  # a server that lost track of closed ones would hold more than were opened
            verdict = f"the load's: at most {bound}" if end <= bound else f"MORE than the load's {bound}"
        else:
            verdict = "ok" if growth <= args.bound else "GREW"
        lines.append(f"| {name} | {start:,.1f} | {end:,.1f} | {growth:+.1%} | {verdict} |")
    return "\n".join(lines) + "\n"


def _peaks(samples: list[Sample]) -> Sample:
    """Each figure's highest value among `samples`."""
    return {name: max(figures.get(name, 0.0) for figures in samples) for name in {n for f in samples for n in f}}


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--every", type=float, default=30)
    # the warm-up covers two rounds of every periodic task: the revalidation manager's first rounds take
    # memory once that the allocator keeps for the next ones (a step, not a growth)
    parser.add_argument("--warm-up", type=float, default=150)
    parser.add_argument("--revalidation-interval", type=int, default=60)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--mix", default="comment=0.4,vote=0.3,follow=0.2,edit=0.1")
    parser.add_argument("--bound", type=float, default=0.05)
    parser.add_argument("--families", action=argparse.BooleanOptionalAction, default=True,
                        help="Redis memory per key family (a SCAN of every key per sample)")
    parser.add_argument("--connections", type=int, default=16)
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())

