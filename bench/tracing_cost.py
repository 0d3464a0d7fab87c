"""What traces cost (telemetry/tracing.py): the same server with traces off and on, side by side in one run.

Six servers, one uvicorn worker each: traces off, on for a tenth of the requests, and on for every one
(spans sent by OTLP over HTTP to a collector this process runs, which reads and drops them), each with
the response cache (a hit) and without it (a warm read: the operation executed over the entity and list
caches). wrk drives each with 16 connections in interleaved rounds; a row is the median of its rounds,
*of off* its rate against traces off. The collector counts what it received, so the table says that
spans were sent.

    python -m bench.tracing_cost [--size demo] [--seconds 3] [--rounds 3]

Needs wrk (Debian: apt-get install wrk).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench import services
from bench.over_http import RESULTS, Row, Uvicorn, _prime, bodies_of, server_env, write_section, wrk
from config.settings import load_settings

OPERATION = "load_shouts_by(20)"
CASES = ("hit", "warm")


class Collector:
    """An OTLP/HTTP endpoint that takes every export and counts its bytes and requests."""

    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                collector.bytes += len(self.rfile.read(int(self.headers.get("content-length", 0))))
                collector.requests += 1
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


# Traces off; on for a tenth of the requests; on for every one.
MODES = {"off": {}, "on 10%": {"OTEL_TRACES_SAMPLE_RATE": "0.1"}, "on 100%": {"OTEL_TRACES_SAMPLE_RATE": "1.0"}}


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    collector = Collector()
    table = {(case, mode): Row() for case in CASES for mode in MODES}
    async with contextlib.AsyncExitStack() as stack:
        servers = {}
        for case in CASES:
            for mode, env in MODES.items():
                traced = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, **env} if env else {}
                uncached = {"RESPONSE_CACHE_TTL": "0"} if case == "warm" else {}
                servers[(case, mode)] = await stack.enter_async_context(
                    Uvicorn("app.asgi:app", server_env(settings, **traced, **uncached)))
        body = (await bodies_of(servers[("hit", "off")].url + "/graphql"))[OPERATION]
        for server in servers.values():  # a second of each first: nothing measured pays for warming
            await _prime(server.url + "/graphql", body, {})
            await wrk(server.url + "/graphql", body, {}, 1, args.connections)
        for round_number in range(args.rounds):
            for key, server in servers.items():
                table[key].add(*await wrk(server.url + "/graphql", body, {}, args.seconds, args.connections))
            print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    return render(table, collector, args)


def render(table: dict[tuple[str, str], Row], collector: Collector, args: argparse.Namespace) -> str:
    lines = [
        "# What traces cost",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.tracing_cost --size {args.size} "
        f"--seconds {args.seconds} --rounds {args.rounds}` on {os.cpu_count()} cores ({platform.machine()}, "
        f"Python {platform.python_version()}), PostgreSQL and Redis on loopback.",
        "",
        f"`{OPERATION}`, one uvicorn worker per server, wrk with {args.connections} connections, "
        f"{args.rounds} interleaved rounds of {args.seconds} s (a row is the median of its rounds). *off*: no "
        "OTLP endpoint (nothing installed); *on 10%*, *on 100%*: that share of the requests traced "
        "(OTEL_TRACES_SAMPLE_RATE), their spans sent by OTLP/HTTP to a local collector, which received "
        f"{collector.requests:,} exports ({collector.bytes / 1e6:,.1f} MB). *hit*: the response cache answers "
        "(one span a request); *warm*: the operation executed over warm entity and list caches (a span for the "
        "request, the operation and each Redis round trip). *of off*: the rate against the same case with "
        "traces off, and its range over the rounds.",
        "",
        "| case | traces | req/s | of off | rounds | p50 ms | p99 ms |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for case in CASES:
        off = table[(case, "off")]
        for mode in MODES:
            row = table[(case, mode)]
            ratios = [b / a for a, b in zip(off.rps, row.rps, strict=True)]
            lines.append(
                f"| {case} | {mode} | {statistics.median(row.rps):,.0f} | "
                f"{statistics.median(row.rps) / statistics.median(off.rps):.2f} | "
                f"{min(ratios):.2f}-{max(ratios):.2f} | {statistics.median(row.p50):.2f} | "
                f"{statistics.median(row.p99):.2f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
