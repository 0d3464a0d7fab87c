"""A bystander's latency while a burst of subscriptions opens at once, side by side in one run:

- quiet: no burst, the bystander alone;
- SSE, N at once: 300 subscriptions over server-sent events opened together, their starts in turns of N
  (SUBSCRIPTION_STARTS_AT_ONCE; `--at-once`, the default's first);
- SSE, no turns: the same with room for every start at once (the control: what the turns remove);
- WebSocket: 300 graphql-transport-ws sockets opened together, each subscribing once acknowledged (its
  starts in turns of the default).

Each case runs on a fresh uvicorn worker (one process, loopback), its subscriptions all to one shout, held
for a while and then closed. The opener and the bystander are processes of their own: the bystander sends
`get_topics_all` (a response-cache hit) one at a time, every 2 ms, from just before the burst until its
last stream is open, and again while they are held. A row is the median over `--rounds` fresh workers of
each figure; "worst" is the worst of all rounds.

    python -m bench.sse_burst [--database-url URL] [--redis-url URL] [--streams 300] [--rounds 3]
                              [--at-once 4,16]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import platform
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.synchronize import Event
from typing import Any

import httpx
import orjson
import websockets

from bench import services
from bench.over_http import RESULTS, Uvicorn, server_env, write_section
from config.settings import load_settings

SUBSCRIPTION = "subscription($s: Int!) { shout_reactions(shout_id: $s) { action reaction { id body } } }"
BYSTANDER = b'{"query":"{ get_topics_all { id slug } }"}'
HELD = 1.0  # seconds the streams stay open after the last one opened


@dataclass
class Row:
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    worst: list[float] = field(default_factory=list)
    opened_in: list[float] = field(default_factory=list)


# --- the opener and the bystander, each a process of its own --------------------------------------------

async def _sse(port: int, shout: int) -> Any:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = orjson.dumps({"query": SUBSCRIPTION, "variables": {"s": shout}})
    writer.write(b"POST /graphql HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
                 b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
    status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 200"), status
    return writer


async def _websocket(port: int, shout: int) -> Any:
    socket = await websockets.connect(f"ws://127.0.0.1:{port}/graphql",
                                      subprotocols=[websockets.Subprotocol("graphql-transport-ws")])
    await socket.send(orjson.dumps({"type": "connection_init"}).decode())
    await socket.recv()
    await socket.send(orjson.dumps({"id": "1", "type": "subscribe",
                                    "payload": {"query": SUBSCRIPTION, "variables": {"s": shout}}}).decode())
    return socket


def _opener(port: int, shout: int, streams: int, kind: str, go: Event, opened: Any, done: Event) -> None:
    async def main() -> None:
        go.wait()
        began = time.perf_counter()
        open_one = _sse if kind == "sse" else _websocket
        held = await asyncio.gather(*(open_one(port, shout) for _ in range(streams)))
        opened.value = time.perf_counter() - began
        await asyncio.sleep(HELD)
        done.set()
        for stream in held:
            await stream.close() if kind == "ws" else stream.close()

    asyncio.run(main())


def _bystander(url: str, go: Event, done: Event, latencies: Any) -> None:
    async def main() -> None:
        seen: list[float] = []
        async with httpx.AsyncClient(base_url=url) as http:
            for _ in range(50):  # warm: the connection, the cached answer
                await http.post("/graphql", content=BYSTANDER, headers={"content-type": "application/json"})
            go.set()
            while not done.is_set():
                began = time.perf_counter()
                await http.post("/graphql", content=BYSTANDER, headers={"content-type": "application/json"})
                seen.append((time.perf_counter() - began) * 1000)
                await asyncio.sleep(0.002)
        latencies.put(seen)

    asyncio.run(main())


async def _case(url: str, port: int, shout: int, streams: int, kind: str | None) -> tuple[list[float], float]:
    """The bystander's latencies (ms) while `streams` of `kind` open and are held (none: for as long), and
    the seconds their opening took."""
    context = multiprocessing.get_context("spawn")
    go, done, latencies, opened = context.Event(), context.Event(), context.Queue(), context.Value("d", 0.0)
    processes = [context.Process(target=_bystander, args=(url, go, done, latencies))]
    if kind is not None:
        processes.append(context.Process(target=_opener, args=(port, shout, streams, kind, go, opened, done)))
    for process in processes:
        process.start()
    if kind is None:
        await asyncio.to_thread(go.wait)
        await asyncio.sleep(HELD + 0.5)
        done.set()
    seen = await asyncio.to_thread(latencies.get)
    for process in processes:
        await asyncio.to_thread(process.join)
    return seen, opened.value


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


# --- the run --------------------------------------------------------------------------------------------

async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    at_once = [int(n) for n in args.at_once.split(",")]
    runs: dict[str, tuple[str | None, int]] = {
        "quiet": (None, at_once[0]), **{f"SSE, {n} at once": ("sse", n) for n in at_once},
        "SSE, no turns": ("sse", args.streams), "WebSocket": ("ws", at_once[0])}
    table = {case: Row() for case in runs}
    for round_number in range(args.rounds):
        for case, (kind, starts) in runs.items():
            env = server_env(settings, SUBSCRIPTION_STARTS_AT_ONCE=str(starts), SHUTDOWN_DRAIN_SECONDS="0")
            async with Uvicorn("app.asgi:app", env) as server:
                async with httpx.AsyncClient(base_url=server.url) as http:
                    shouts = (await http.post("/graphql", json={
                        "query": "{ load_shouts_by(options: {limit: 1}) { id } }"})).json()
                shout = shouts["data"]["load_shouts_by"][0]["id"]
                seen, opened_in = await _case(server.url, server.port, shout, args.streams, kind)
            row = table[case]
            row.p50.append(_percentile(seen, 0.5))
            row.p99.append(_percentile(seen, 0.99))
            row.worst.append(max(seen))
            row.opened_in.append(opened_in)
        print(f"round {round_number + 1} of {args.rounds} done", flush=True)
    return render(table, args)


def render(table: dict[str, Row], args: argparse.Namespace) -> str:
    lines = [f"# A bystander during a burst of {args.streams} subscriptions (`python -m bench.sse_burst`)", "",
             f"{datetime.now(UTC):%Y-%m-%d}, {platform.machine()}, Python {platform.python_version()}, one uvicorn "
             f"worker per case, {args.rounds} rounds (median; worst of all rounds). The bystander sends a "
             "response-cache hit every 2 ms while the burst opens and is held.", "",
             "| case | bystander p50 ms | p99 ms | worst ms (median) | worst ms (all rounds) | opened in s |",
             "|---|---|---|---|---|---|"]
    for case, row in table.items():
        opened = f"{statistics.median(row.opened_in):.2f}" if case != "quiet" else "–"
        lines.append(f"| {case} | {statistics.median(row.p50):.1f} | {statistics.median(row.p99):.1f} | "
                     f"{statistics.median(row.worst):.1f} | {max(row.worst):.1f} | {opened} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser(wrk=False)
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--at-once", default="4,16", help="SUBSCRIPTION_STARTS_AT_ONCE values, comma-separated")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
