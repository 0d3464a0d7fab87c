"""Reads under writes: readers on the bench's five operations while signed-in writers change what they read.

A read-only bench shows the response cache answering nearly everything; on a live site comments, votes and
follows arrive every second, each invalidating the answers that show it, so the readers of the busiest
pages are served by the warm tier far more often. Three scenarios, measured side by side in interleaved
rounds on the same server:

- read-only: wrk on the five operations in turn (bench/over_http.py's documents), 16 connections;
- mixed: the same, while writers (bench/writers.py, a process of their own, open loop) send `--share` of all
  requests (5% by default: the rate the read-only round's reads/s gives) as comments and votes on the read
  page's own shouts, follows of topics and renames of the writers;
- comments: the same readers while writers comment on the read page's own shouts at `--comments` per second.

Each is reported with reads/s, the share of reads answered from the response cache (X-Cache: HIT, counted
by wrk), read p50/p99 (wrk), writes/s and write p50/p99, and what the writes cost in invalidations (tags
moved per write, from /metrics), with one worker and with two. A row is the median of its rounds, with the
range of reads/s against the read-only round beside it. A second table says where the reads' time went,
operation by operation: the servers' own `discours_request_seconds` histograms (the documents carry an
operation name each), split into reads answered from the response cache and reads computed.

    python -m bench.mixed [--size bench] [--workers 1,2] [--rounds 3] [--seconds 10] [--share 0.05]
                          [--comments 100] [--write-share 1]

Needs wrk (Debian: apt-get install wrk).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from bench import services
from bench.over_http import RESULTS, Uvicorn, bodies_of, milliseconds, server_env, write_section
from config.settings import load_settings

SCENARIOS = ("read-only", "mixed", "comments")
# The name each read document carries, so that the servers' metrics tell the operations apart.
OPERATION_NAMES = {"load_shouts_by(20)": "ShoutsPage", "get_shout": "Shout", "get_author": "Author",
                   "get_topics_all": "Topics", "load_reactions_by(20)": "ReactionsPage"}
# An operation's computed reads are shown from this share of all reads (below: the odd computation after a
# revalidation round, not the writes)
COMPUTED_SHOWN = 0.0005
# (operation, outcome, bucket's upper bound in seconds) -> requests so far, over every worker
Histograms = dict[tuple[str, str, float], float]
_BUCKET = re.compile(r'^discours_request_seconds_bucket\{([^}]*)\} (\S+)$', re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_HIT_COUNTER = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) hits = 0; answered = 0; n = 0 end
function request()
  n = n + 1
  return wrk.format("POST", "/graphql", {["Content-Type"] = "application/json", ["Accept-Encoding"] = "gzip"},
                    bodies[(n % #bodies) + 1])
end
function response(status, headers, body)
  answered = answered + 1
  if headers["x-cache"] == "HIT" or headers["X-Cache"] == "HIT" then hits = hits + 1 end
end
function done(summary, latency, requests)
  local h, a = 0, 0
  for _, t in ipairs(threads) do h = h + t:get("hits"); a = a + t:get("answered") end
  io.write(string.format("HITS %d %d\\n", h, a))
end
"""


@dataclass
class Measured:
    reads: list[float] = field(default_factory=list)  # reads/s
    hit_ratio: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    writes: list[float] = field(default_factory=list)  # writes/s
    write_p50: list[float] = field(default_factory=list)
    write_p99: list[float] = field(default_factory=list)
    failed: int = 0
    failed_by: Counter[str] = field(default_factory=Counter)  # what the failed writes got (bench/writers.py)
    refused: int = 0
    shed: int = 0
    tags_per_write: list[float] = field(default_factory=list)
    # request seconds by (operation, outcome): the count in each histogram bucket (by upper bound), summed
    # over the rounds
    seconds: dict[tuple[str, str], dict[float, float]] = field(default_factory=dict)

    def add_seconds(self, before: Histograms, after: Histograms) -> None:
        for (operation, outcome, bound), count in after.items():
            if operation in OPERATION_NAMES.values():
                buckets = self.seconds.setdefault((operation, outcome), {})
                buckets[bound] = buckets.get(bound, 0.0) + count - before.get((operation, outcome, bound), 0.0)


def named(bodies: dict[str, bytes]) -> dict[str, bytes]:
    """Each read document with its operation's name (`OPERATION_NAMES`)."""
    renamed = {}
    for operation, body in bodies.items():
        request = orjson.loads(body)
        name = OPERATION_NAMES[operation]
        query = request["query"].strip()
        request["query"] = re.sub(r"^query\b\s*", f"query {name} ", query) if query.startswith("query") \
            else f"query {name} {query}"
        request["operationName"] = name
        renamed[operation] = orjson.dumps(request)
    return renamed


async def metrics_text(server: str) -> str:
    """The server's /metrics as it reads now (every worker's)."""
    async with httpx.AsyncClient() as http:
        return (await http.get(server + "/metrics")).text


def counter_total(text: str, name: str, *labels: str) -> float:
    """The sum of the samples of counter `name` in a /metrics `text` whose labels include every one of `labels`
    (each as written there, `layer="response"`)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and all(label in line for label in labels))


async def scraped(server: str) -> tuple[float, Histograms]:
    """From one read of the servers' /metrics (every worker's): the cache tags invalidated so far, and the
    request-seconds histograms."""
    text = await metrics_text(server)
    tags = counter_total(text, "discours_cache_invalidations_total")
    found: Histograms = {}
    for labels, count in _BUCKET.findall(text):
        named_labels = dict(_LABEL.findall(labels))
        key = (named_labels["operation"], named_labels["outcome"], float(named_labels["le"]))
        found[key] = found.get(key, 0.0) + float(count)
    return tags, found


def _at_most_ms(buckets: dict[float, float], share: float) -> float:
    """The upper bound (ms) of the bucket the `share` quantile falls in (cumulative buckets)."""
    total = buckets.get(math.inf, 0.0)
    return next((bound * 1000 for bound, count in sorted(buckets.items()) if count >= share * total), math.inf)


@contextlib.contextmanager
def reader_script(bodies: list[bytes]) -> Iterator[str]:
    listed = ",\n".join(f"[==[{body.decode()}]==]" for body in bodies)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f"bodies = {{\n{listed}\n}}\n{_HIT_COUNTER}")
    try:
        yield script.name
    finally:
        os.unlink(script.name)


async def read_load(url: str, script: str, seconds: float, connections: int) -> tuple[float, float, float, float]:
    """(reads/s, hit ratio, p50 ms, p99 ms) of wrk reading through `script` for `seconds`."""
    done = await asyncio.to_thread(
        subprocess.run, ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "30s", "--latency", "-s",
                         script, url],
        capture_output=True, text=True, check=True)
    out = done.stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw failed reads on {url}:\n{out}")
    hits, answered = (int(n) for n in re.search(r"HITS (\d+) (\d+)", out).groups())  # type: ignore[union-attr]
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
            hits / max(answered, 1), milliseconds(re.search(r"\s50%\s+(\S+)", out).group(1)),  # type: ignore[union-attr]
            milliseconds(re.search(r"\s99%\s+(\S+)", out).group(1)))  # type: ignore[union-attr]


async def written_targets(url: str, bodies: dict[str, bytes]) -> tuple[list[int], list[str]]:
    """What the writers change: the read page's own shouts, and twenty topics to follow."""
    async with httpx.AsyncClient() as http:
        page = (await http.post(url, content=bodies["load_shouts_by(20)"],
                                headers={"content-type": "application/json"})).json()
        topics = (await http.post(url, json={"query": "{ get_topics_all { slug } }"})).json()
    return ([s["id"] for s in page["data"]["load_shouts_by"]],
            [t["slug"] for t in topics["data"]["get_topics_all"][:20]])


async def with_writers(url: str, rate: float, seconds: float, mix: str, shouts: list[int], topics: list[str],
                       reading: Any, users: int = 20) -> tuple[Any, dict[str, Any]]:
    """`reading` (an awaitable) while bench/writers.py writes at `rate` for as long, as `users` accounts: both
    results."""
    writers = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.writers", "--url", url, "--rate", str(rate), "--seconds", str(seconds),
        "--mix", mix, "--wait", "--shouts", ",".join(map(str, shouts)), "--topics", ",".join(topics),
        "--users", str(users),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.PIPE)
    assert writers.stderr is not None and writers.stdin is not None and writers.stdout is not None
    said = b""
    while (line := await writers.stderr.readline()) and line.strip() != b"ready":  # signed up: go
        said += line
    if not line:
        raise RuntimeError(f"bench.writers did not start:\n{said.decode()[-3000:]}")
    writers.stdin.write(b"go\n")
    await writers.stdin.drain()
    read, out, err = await asyncio.gather(reading, writers.stdout.read(), writers.stderr.read())
    if (code := await writers.wait()) != 0:
        raise RuntimeError(f"bench.writers exited with {code}:\n{err.decode()[-3000:]}\n{out.decode()[-500:]}")
    return read, orjson.loads(out.splitlines()[-1])


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8)
    table: dict[tuple[int, str], Measured] = {}
    for workers in (int(w) for w in args.workers.split(",")):
        env = server_env(settings, **({} if args.write_share is None else {"WRITE_SHARE": str(args.write_share)}))
        if workers > 1:
            env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bench-metrics-")
        async with Uvicorn("app.asgi:app", env, workers=workers) as server:
            url = server.url + "/graphql"
            bodies = named(await bodies_of(url))
            shouts, topic_slugs = await written_targets(url, bodies)
            with reader_script(list(bodies.values())) as script:
                await read_load(url, script, 2, args.connections)  # warm-up
                for round_number in range(args.rounds):
                    await _round(workers, server.url, url, script, shouts, topic_slugs, table, args)
                    print(f"{workers} worker(s): round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    return render(table, args)


async def _round(workers: int, server: str, url: str, script: str, shouts: list[int], topics: list[str],
                 table: dict[tuple[int, str], Measured], args: argparse.Namespace) -> None:
    _, before = await scraped(server)
    reads, hit_ratio, p50, p99 = await read_load(url, script, args.seconds, args.connections)
    tags, after = await scraped(server)
    row = table.setdefault((workers, "read-only"), Measured())
    row.add_seconds(before, after)
    row.reads.append(reads)
    row.hit_ratio.append(hit_ratio)
    row.p50.append(p50)
    row.p99.append(p99)
    share_rate = reads * args.share / (1 - args.share)
    for scenario, rate, mix in (("mixed", share_rate, args.mix), ("comments", args.comments, "comment=1")):
        tags_before, before = tags, after
        (reads, hit_ratio, p50, p99), written = await with_writers(
            server, rate, args.seconds, mix, shouts, topics, read_load(url, script, args.seconds, args.connections))
        tags, after = await scraped(server)
        moved = tags - tags_before
        row = table.setdefault((workers, scenario), Measured())
        row.add_seconds(before, after)
        row.reads.append(reads)
        row.hit_ratio.append(hit_ratio)
        row.p50.append(p50)
        row.p99.append(p99)
        row.writes.append(written["per_second"])
        row.write_p50.append(written["p50"])
        row.write_p99.append(written["p99"])
        row.failed += written["failed"]
        row.failed_by.update(written.get("failed_by") or {})
        row.refused += written["refused"]
        row.shed += written["shed"]
        row.tags_per_write.append(moved / max(written["writes"], 1))


def failures_said(causes: Mapping[str, int] | None) -> str:
    """What the failed writes got (bench/writers.py), when any failed: ` (504: 1, TimeoutError: 2)`."""
    return f" ({', '.join(f'{cause}: {n}' for cause, n in sorted(causes.items()))})" if causes else ""


def render(table: dict[tuple[int, str], Measured], args: argparse.Namespace) -> str:
    bounded = "" if args.write_share is None else f" --write-share {args.write_share:g}"
    titled = "" if args.write_share is None else f" with WRITE_SHARE={args.write_share:g}"
    lines = [
        f"# Reads under writes{titled} "
        f"(`python -m bench.mixed{bounded}`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.mixed --size {args.size} --workers "
        f"{args.workers} --rounds {args.rounds} --seconds {args.seconds:g} --share {args.share} --comments "
        f"{args.comments}{bounded}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), PostgreSQL and Redis on loopback, readers (wrk, one thread, "
        f"{args.connections} connections, the five operations in turn) and writers (bench/writers.py, open "
        "loop) on the same machine. *mixed*: writes at the share of all requests the read-only round's "
        f"reads/s gives ({args.share:.0%}: comments and votes on the read page's shouts, topic follows, "
        f"renames; {args.mix}); *comments*: {args.comments:g} comments a second on the read page's shouts. "
        "*of read-only*: reads/s against the read-only round of the same rounds (median, then the range of "
        "the per-round ratios); *p99 x*: read p99 against read-only's. *tags/write*: cache tags invalidated "
        "per write (/metrics); *failed*: a server error, a timeout or no answer; *refused*: the site's rules "
        "answering (a vote given twice, an unfollow of what is not followed); *shed*: answered 503 with "
        "Retry-After, nothing done, as a worker had no turn for them within WRITE_WAIT_SECONDS "
        "(app/http/write_gate.py). *writes/s*: writes done or refused.",
        "",
        "| workers | scenario | reads/s | of read-only | hit ratio | read p50 ms | read p99 ms | p99 x | "
        "writes/s | write p50 ms | write p99 ms | failed writes | refused | shed | tags/write |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for workers in (int(w) for w in args.workers.split(",")):
        base = table[(workers, "read-only")]
        for scenario in SCENARIOS:
            row = table[(workers, scenario)]
            ratios = [r / b for r, b in zip(row.reads, base.reads, strict=True)]
            med = statistics.median
            writes = (f"{med(row.writes):,.0f} | {med(row.write_p50):.1f} | {med(row.write_p99):.1f} | "
                      f"{row.failed}{failures_said(row.failed_by)} | {row.refused} | {row.shed} | "
                      f"{med(row.tags_per_write):.1f}"
                      ) if row.writes else "| | | | | |"
            lines.append(
                f"| {workers} | {scenario} | {med(row.reads):,.0f} | {med(ratios):.2f} ({min(ratios):.2f}-"
                f"{max(ratios):.2f}) | {med(row.hit_ratio):.2f} | {med(row.p50):.2f} | {med(row.p99):.2f} | "
                f"{med(row.p99) / med(base.p99):.1f} | {writes} |")
    return "\n".join([*lines, "", *_time_by_operation(table, args)]) + "\n"


def _time_by_operation(table: dict[tuple[int, str], Measured], args: argparse.Namespace) -> list[str]:
    """Where the reads' time went (the servers' histograms, all rounds together): the hits of all
    operations, then each operation that computed reads (at least `COMPUTED_SHOWN` of all reads), its hits
    (those that waited for a computation among them) and its computed reads: each with its share of all
    reads and the buckets its p50 and p99 fall in."""
    lines = [
        "Where the reads' time went (the servers' `discours_request_seconds`, all rounds together; *hit*: "
        "answered from the response cache, *computed*: executed; *share*: of all reads of the scenario; "
        "p50 and p99: the upper bound of the histogram bucket each falls in; an operation's computed reads from "
        f"{COMPUTED_SHOWN:.2%} of all reads):",
        "",
        "| workers | scenario | operation | answered | share of reads | p50 ms | p99 ms |",
        "|---:|---|---|---|---:|---:|---:|",
    ]

    def row(workers: int, scenario: str, operation: str, outcome: str, buckets: dict[float, float],
            reads: float) -> str:
        return (f"| {workers} | {scenario} | {operation} | {outcome} | {buckets.get(math.inf, 0.0) / reads:.2%} | "
                f"{_at_most_ms(buckets, 0.5):g} | {_at_most_ms(buckets, 0.99):g} |")

    for workers in (int(w) for w in args.workers.split(",")):
        for scenario in SCENARIOS:
            seconds = table[(workers, scenario)].seconds
            reads = max(sum(buckets.get(math.inf, 0.0) for (_, outcome), buckets in seconds.items()
                            if outcome in ("hit", "ok")), 1.0)
            hits: dict[float, float] = {}
            for (_, outcome), buckets in seconds.items():
                if outcome == "hit":
                    for bound, count in buckets.items():
                        hits[bound] = hits.get(bound, 0.0) + count
            lines.append(row(workers, scenario, "all", "hit", hits, reads))
            for operation in OPERATION_NAMES.values():
                computed = seconds.get((operation, "ok"), {})
                if computed.get(math.inf, 0.0) >= COMPUTED_SHOWN * reads:
                    lines.append(row(workers, scenario, operation, "hit", seconds.get((operation, "hit"), {}), reads))
                    lines.append(row(workers, scenario, operation, "computed", computed, reads))
    return lines


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--share", type=float, default=0.05, help="writes as a share of all requests")
    parser.add_argument("--mix", default="comment=0.4,vote=0.3,follow=0.2,edit=0.1")
    parser.add_argument("--comments", type=float, default=100, help="comments a second, the second scenario")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--write-share", type=float, default=None,
                        help="the worker's WRITE_SHARE (app/http/write_gate.py; unset: its default); when set, the "
                             "results go to a section of their own")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
