"""Signed-in writers at a fixed total rate, for bench/mixed.py (run as a process of its own, so that the
readers' load generator and the writers do not share a CPU's event loop).

Writes are sent open loop: one starts every 1/rate seconds whatever the others' latency, as users on a
site arrive, each as one of `--users` signed-up accounts. What a write is, by `--mix` weights:

- comment: a comment on one of `--shouts` (the read page's own shouts, when the bench passes them);
- vote: a like or a dislike of one of them;
- follow: a follow or unfollow of one of `--topics`, alternating per writer;
- edit: the writer renames itself (its author is in the cards of the shouts it wrote, if any).

At most `--outstanding` writes are awaiting an answer at once: a write due while that many are is not
sent and counted as unsent. Without the bound, a server answering slower than the rate made the writer
queue thousands of requests for a connection (in httpx's pool then, whose assignment of requests to
connections is quadratic in the queue: the writer fell behind at a whole core, and its count was lost).

The writes go out on `--connections` keep-alive HTTP/1.1 connections of the writer's own (`Connections`),
not httpx's: the writer runs on the server's machine, and with httpx it took 0.9 of a core at 300 writes a
second, CPU the server's worker lost (it had 0.78 of a core in the mixed round, against 0.99 read-only).

With `--wait` it signs its users up, says "ready" on stderr and starts on a line on stdin. At the end it
prints one JSON line: writes due, failed, refused (the site's rules), shed (503: the worker had no turn
for it, app/http/write_gate.py; nothing done), unsent (the writer's own bound), the rate answered (done or
refused) and the latency p50/p99 in ms.

    python -m bench.writers --url URL --rate 50 --seconds 10 --shouts 1,2,3 --topics a,b
                            [--mix comment=0.4,vote=0.3,follow=0.2,edit=0.1] [--users 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections import Counter
from typing import Any

import httpx
import orjson

PASSWORD = "bench password 1"
# Answers that refuse a write for what it asks (a vote given twice, an unfollow of what is not followed):
# the site's rules at work, not a failure of the server.
REFUSALS = {"CONFLICT", "BAD_USER_INPUT", "NOT_FOUND", "FORBIDDEN"}
# More than the writes a worker holds (WRITES_WAITING, 64, and its turns; two workers twice that): users
# each come on a connection of their own, so a write the server has no room for is refused by it, at
# once, rather than queued in the writer for a free connection (which the server never sees, and which
# made writes time out in the writer while the server refused none).
CONNECTIONS = 256
MUTATIONS = {
    "comment": "mutation($s: Int!, $b: String) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) "
               "{ error } }",
    "vote": "mutation($s: Int!, $k: ReactionKind!) { create_reaction(reaction: {kind: $k, shout: $s}) { error } }",
    "follow": "mutation($t: String!) { follow(what: TOPIC, slug: $t) { error } }",
    "unfollow": "mutation($t: String!) { unfollow(what: TOPIC, slug: $t) { error } }",
    "edit": "mutation($n: String) { update_author(profile: {name: $n}) { error } }",
}


class Connections:
    """POSTs on at most `size` keep-alive HTTP/1.1 connections to `host:port`, each carrying one request at
    a time; a request waits for a free one. Just what the writer needs of HTTP (a body by Content-Length or
    chunked), at a small fraction of httpx's CPU a request."""

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self._free = asyncio.Semaphore(size)
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """(status, body) of a POST of `body` as JSON."""
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n{head}\r\n").encode() + body
        async with self._free:
            reused = bool(self._idle)
            connection = self._idle.pop() if reused else await asyncio.open_connection(self.host, self.port)
            try:
                answer = await self._exchange(connection, request)
                if answer is None and reused:  # the server closed it while idle, before reading this request
                    connection[1].close()
                    connection = await asyncio.open_connection(self.host, self.port)
                    answer = await self._exchange(connection, request)
                if answer is None:
                    raise ConnectionError("the server closed the connection without answering")
            except BaseException:
                connection[1].close()
                raise
            self._idle.append(connection)
            return answer

    @staticmethod
    async def _exchange(connection: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                        request: bytes) -> tuple[int, bytes] | None:
        reader, writer = connection
        writer.write(request)
        status_line = await reader.readline()
        if not status_line:
            return None
        length, chunked = 0, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            return int(status_line.split()[1]), await reader.readexactly(length)
        parts = []
        while size := int((await reader.readline()).split(b";")[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readline()
        await reader.readline()
        return int(status_line.split()[1]), b"".join(parts)

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()


async def sign_up(http: httpx.AsyncClient, name: str) -> str:
    """A session of the account `name` (made on first use, kept: a run's writers are the last run's, so
    what they follow, and so whom a comment notifies, does not grow from run to run)."""
    email = f"bench-{name}@example.org"
    await http.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { registerUser(email: $e, "
                                               "password: $p, name: $e) { success } }",
                                      "variables": {"e": email, "p": PASSWORD}})
    answer = await http.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { login(email: $e, "
                                                        "password: $p) { token } }",
                                               "variables": {"e": email, "p": PASSWORD}})
    return str(answer.json()["data"]["login"]["token"])


def _write(kind: str, n: int, shouts: list[int], topics: list[str], following: dict[int, bool],
           writer: int, rng: random.Random) -> tuple[str, dict[str, Any]]:
    if kind == "comment":
        return MUTATIONS["comment"], {"s": rng.choice(shouts), "b": f"bench comment {n}"}
    if kind == "vote":
        return MUTATIONS["vote"], {"s": rng.choice(shouts), "k": rng.choice(["LIKE", "DISLIKE"])}
    if kind == "follow":
        following[writer] = not following.get(writer, False)
        return MUTATIONS["follow" if following[writer] else "unfollow"], {"t": topics[writer % len(topics)]}
    return MUTATIONS["edit"], {"n": f"Bench writer {writer} {n}"}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(1)
    mix = {kind: float(weight) for kind, weight in (part.split("=") for part in args.mix.split(","))}
    shouts = [int(s) for s in args.shouts.split(",")]
    topics = args.topics.split(",")
    address = httpx.URL(args.url)
    connections = Connections(address.host, address.port or 80, args.connections)
    async with httpx.AsyncClient(base_url=args.url, timeout=30) as http:
        tokens = [await sign_up(http, f"writer{n}") for n in range(args.users)]
        print("ready", file=sys.stderr, flush=True)
        if args.wait:  # signed up: start when told (bench/mixed.py starts its readers at the same moment)
            await asyncio.to_thread(sys.stdin.readline)
        latencies: list[float] = []
        outcomes: Counter[str] = Counter()
        failures: Counter[str] = Counter()  # what each failed write got: a status and codes, or an exception
        following: dict[int, bool] = {}

        async def one(n: int) -> None:
            writer = n % len(tokens)
            kind = rng.choices(list(mix), weights=list(mix.values()))[0]
            query, variables = _write(kind, n, shouts, topics, following, writer, rng)
            started = time.perf_counter()
            outcome, cause = "failed", ""
            try:
                status, raw = await asyncio.wait_for(connections.post(
                    "/graphql", orjson.dumps({"query": query, "variables": variables}),
                    {"Authorization": f"Bearer {tokens[writer]}"}), 30)
                body = orjson.loads(raw)
                codes = {error.get("extensions", {}).get("code") for error in body.get("errors") or ()}
                if status == 200 and not codes:
                    outcome = "refused" if next(iter(body["data"].values()))["error"] else "done"
                elif status == 200 and codes <= REFUSALS:
                    outcome = "refused"
                elif status == 503 and codes == {"SERVICE_UNAVAILABLE"}:
                    outcome = "shed"  # no turn for it (app/http/write_gate.py): nothing done, told to retry
                cause = f"{status} {','.join(sorted(str(code) for code in codes))}".strip()
            except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError, TypeError, KeyError,
                    StopIteration) as exc:
                cause = type(exc).__name__
            latencies.append((time.perf_counter() - started) * 1000)
            outcomes[outcome] += 1
            if outcome == "failed":
                failures[cause] += 1

        tasks = []
        outstanding: set[asyncio.Future[None]] = set()  # awaiting an answer: each leaves it when answered
        started = time.perf_counter()
        total = int(args.rate * args.seconds)
        for n in range(total):  # open loop: the n-th write starts at n / rate, whatever the others take
            delay = started + n / args.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(outstanding) >= args.outstanding:
                outcomes["unsent"] += 1
                continue
            task = asyncio.ensure_future(one(n))
            outstanding.add(task)
            task.add_done_callback(outstanding.discard)
            tasks.append(task)
        # what the server has not answered `--grace` seconds after the last write was due never will be
        # counted as done: given up on, it counts as failed
        _, late = await asyncio.wait(tasks, timeout=args.grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        outcomes["failed"] += len(late)
        if late:
            failures["no answer in the grace"] += len(late)
        elapsed = time.perf_counter() - started
    connections.close()
    latencies.sort()
    p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)] if latencies else float("nan")
    return {"writes": total, "failed": outcomes["failed"], "failed_by": dict(failures),
            "refused": outcomes["refused"], "shed": outcomes["shed"],
            "unsent": outcomes["unsent"], "per_second": (outcomes["done"] + outcomes["refused"]) / elapsed,
            "p50": statistics.median(latencies) if latencies else float("nan"), "p99": p99}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--rate", type=float, required=True, help="writes per second, in all")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--shouts", required=True, help="comma-separated shout ids to comment on and vote on")
    parser.add_argument("--topics", required=True, help="comma-separated topic slugs to follow")
    parser.add_argument("--mix", default="comment=0.4,vote=0.3,follow=0.2,edit=0.1")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    parser.add_argument("--wait", action="store_true", help="start writing on a line on stdin")
    parser.add_argument("--grace", type=float, default=15, help="seconds to wait for answers after the last write")
    parser.add_argument("--outstanding", type=int, default=512, help="writes awaiting an answer at most")
    print(orjson.dumps(asyncio.run(run(parser.parse_args()))).decode(), flush=True)


if __name__ == "__main__":
    main()
