"""The read path over HTTP, against the stack's limit, everything measured side by side in one run:

- the limit: a Starlette route under the same uvicorn returning the operation's response bytes from one
  Redis GET (bench/limit_route.py);
- hit: the server with its response cache, anonymous; hit signed in: the same with a session token;
- warm: the server with the response cache off, its entity and list caches warm;
- cold: the same, every cached value a miss (the global epoch bumped before each request).

The first three are driven by wrk (16 connections, one thread, latency percentiles), each server one
uvicorn worker on loopback, in interleaved rounds; a row takes the median of its rounds. Cold requests
need an epoch bump before each, which wrk cannot do: they are sent one at a time from here, so their
requests/s is one over the mean latency. Redis round trips and SQL statements of one request per case are
counted in process (same code, ASGI transport). The table is printed and written to bench/RESULTS.md.

    python -m bench.over_http [--database-url URL] [--redis-url URL] [--size demo|bench] [--seconds 3]
                              [--rounds 2] [--connections 16]

Needs wrk (Debian: apt-get install wrk).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
from sqlalchemy import event

from app.main import create_app, open_deps
from bench import services
from bench.read_path import OPERATIONS as IN_PROCESS  # the same documents as the in-process bench
from cache import keys
from config.settings import Settings, load_settings
from devtools.round_trips import redis_round_trips
from devtools.services import free_port

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
# What a reader's screen asks for: fuller cards than bench.read_path's, whose topics document is the same.
OPERATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "load_shouts_by(20)": (
        """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title slug subtitle lead cover
        main_topic { slug title } authors { id slug name pic stat { shouts followers } }
        stat { rating comments_count viewed last_commented_at } } }""",
        {"o": {"limit": 20, "offset": 0}},
    ),
    "get_shout": (
        """query($s: String) { get_shout(slug: $s) { id title slug body lead cover published_at
        authors { id slug name pic } topics { id slug title } stat { rating comments_count viewed } } }""",
        {"s": None},  # filled with a real slug
    ),
    "get_author": (
        'query { get_author(slug: "author-2") { id slug name bio pic stat { shouts followers rating comments } } }',
        {},
    ),
    "get_topics_all": IN_PROCESS["topics all"],
    "load_reactions_by(20)": (
        """query { load_reactions_by(by: {}, limit: 20) { id kind body created_at created_by { id slug name }
        shout { id slug } stat { rating comments_count } } }""",
        {},
    ),
}
CASES = ("limit", "hit", "hit signed in", "warm", "cold")
PASSWORD = "bench password 1"


@dataclass
class Row:
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)  # ms
    p99: list[float] = field(default_factory=list)
    round_trips: int | None = None
    statements: int | None = None
    cache: str = ""

    def add(self, rps: float, p50: float, p99: float) -> None:
        self.rps.append(rps)
        self.p50.append(p50)
        self.p99.append(p99)


# --- servers ------------------------------------------------------------------------------------------

class Uvicorn:
    """One uvicorn worker on a free loopback port, without access logs (the limit route has none either)."""

    def __init__(self, target: str, env: dict[str, str], cwd: Path = ROOT, workers: int = 1) -> None:
        self.cwd = cwd  # the checkout whose code it runs
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._command = [sys.executable, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(self.port),
                         "--log-level", "warning", "--no-access-log", "--workers", str(workers)]
        self._env = {**os.environ, **env}
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(self._command, env=self._env, cwd=self.cwd)

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    async def __aenter__(self) -> Uvicorn:
        self.start()
        async with httpx.AsyncClient() as http:
            for _ in range(300):
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(self.url + "/healthz")).status_code == 200:
                        return self
                await asyncio.sleep(0.1)
        raise RuntimeError(f"{self._command} did not start")

    async def __aexit__(self, *exc_info: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def server_env(settings: Settings, **extra: str) -> dict[str, str]:
    return {"DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url or "",
            "JWT_SECRET": settings.jwt_secret or "", "LOGINS_PER_ADDRESS": "0", "REGISTRATIONS_PER_ADDRESS": "0",
            "MAILS_PER_ADDRESS": "0", "MAILS_PER_RECIPIENT": "0", "COLD_SEARCHES_PER_ADDRESS": "0", **extra}


# --- wrk ----------------------------------------------------------------------------------------------

_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def milliseconds(text: str) -> float:
    """A duration as wrk prints it (`812.00us`, `2.05ms`, `1.23s`), in milliseconds."""
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip()).groups()  # type: ignore[union-attr]
    return float(number) * _UNITS[unit]


@contextlib.contextmanager
def _script(body: bytes, headers: dict[str, str]) -> Iterator[str]:
    lines = ['wrk.method = "POST"', f"wrk.body = [==[{body.decode()}]==]"]
    lines += [f'wrk.headers["{name}"] = "{value}"' for name, value in headers.items()]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    try:
        yield script.name
    finally:
        os.unlink(script.name)


async def wrk(url: str, body: bytes, headers: dict[str, str], seconds: int,
              connections: int, *, accepts_gzip: bool = True) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) of POSTing `body` to `url` for `seconds`, as a client that accepts
    gzip, or one that sends no Accept-Encoding."""
    accepts = {"Accept-Encoding": "gzip"} if accepts_gzip else {}
    with _script(body, {"Content-Type": "application/json", **accepts, **headers}) as script:
        done = await asyncio.to_thread(
            subprocess.run, ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, url],
            capture_output=True, text=True, check=True)
    out = done.stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw failed requests on {url}:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = milliseconds(re.search(r"\s50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = milliseconds(re.search(r"\s99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    return rps, p50, p99


async def sequential_cold(url: str, body: bytes, bump: Any, requests: int) -> tuple[float, float, float]:
    """Cold requests one at a time, each after an epoch bump: (requests/s, p50 ms, p99 ms)."""
    timings = []
    async with httpx.AsyncClient(headers={"content-type": "application/json"}) as http:
        for _ in range(requests):
            await bump()
            started = time.perf_counter()
            response = await http.post(url, content=body)
            timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200 and b'"errors"' not in response.content, response.text[:300]
    timings.sort()
    return 1000 / statistics.mean(timings), statistics.median(timings), timings[int(len(timings) * 0.99) - 1]


# --- counting in process -------------------------------------------------------------------------------

@contextlib.contextmanager
def counting(engine: Any) -> Iterator[dict[str, int]]:
    """Redis round trips (as sent on the wire: a command, a script call, a pipeline or a coalesced batch)
    and SQL statements sent meanwhile."""
    counts = {"redis": 0, "sql": 0}

    def statement(*_args: Any) -> None:
        counts["sql"] += 1

    event.listen(engine.sync_engine, "before_cursor_execute", statement)
    try:
        with redis_round_trips() as sent:
            yield counts
    finally:
        counts["redis"] = sent[0]
        event.remove(engine.sync_engine, "before_cursor_execute", statement)


async def count_per_request(settings: Settings, token: str, bodies: dict[str, bytes],
                            table: dict[tuple[str, str], Row]) -> None:
    async with open_deps(settings) as deps:
        cached = create_app(settings, deps=deps)
        uncached = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
        engine = deps.db.kw["bind"]  # type: ignore[attr-defined]  # an async_sessionmaker
        for name, body in bodies.items():
            signed = {"authorization": f"Bearer {token}"}
            for case, app, headers in (("hit", cached, {}), ("hit signed in", cached, signed),
                                       ("warm", uncached, {}), ("cold", uncached, {})):
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b",
                                             headers={"content-type": "application/json", **headers}) as http:
                    await http.post("/graphql", content=body)  # stored, or the caches warmed
                    if case == "cold":
                        await deps.cache.invalidate_tags([keys.GLOBAL_TAG])
                    with counting(engine) as counts:
                        response = await http.post("/graphql", content=body)
                    assert response.status_code == 200, response.text[:300]
                    row = table[(name, case)]
                    row.round_trips, row.statements = counts["redis"], counts["sql"]
                    row.cache = response.headers.get("x-cache", "")


# --- the run ------------------------------------------------------------------------------------------

async def sign_up(url: str) -> str:
    async with httpx.AsyncClient() as http:
        email = f"bench-{time.time_ns()}@example.org"
        await http.post(url, json={"query": "mutation($e: String!, $p: String!) { registerUser(email: $e, "
                                            "password: $p, name: \"Bench\") { success } }",
                                   "variables": {"e": email, "p": PASSWORD}})
        answer = await http.post(url, json={"query": "mutation($e: String!, $p: String!) { login(email: $e, "
                                                     "password: $p) { token } }",
                                            "variables": {"e": email, "p": PASSWORD}})
        token = answer.json()["data"]["login"]["token"]
        assert token, answer.text
        return str(token)


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8,
                             logins_per_address=0, registrations_per_address=0, mails_per_address=0,
                             mails_per_recipient=0, cold_searches_per_address=0)
    table = {(name, case): Row() for name in OPERATIONS for case in CASES}
    async with Uvicorn("app.asgi:app", server_env(settings)) as cached, \
            Uvicorn("app.asgi:app", server_env(settings, RESPONSE_CACHE_TTL="0")) as uncached, \
            Uvicorn("bench.limit_route:app", {"REDIS_URL": redis_url}) as limit:
        token = await sign_up(cached.url + "/graphql")
        bodies = await bodies_of(cached.url + "/graphql")
        async with open_deps(settings) as deps:
            for name, body in bodies.items():  # the limit route answers each operation's own bytes
                async with httpx.AsyncClient() as http:
                    answer = await http.post(cached.url + "/graphql", content=body,
                                             headers={"content-type": "application/json"})
                await deps.cache.redis.set("bench:limit:" + name, answer.content)
                await deps.cache.redis.set("bench:limit:" + name + ":gzip", gzip.compress(answer.content))

            async def bump() -> None:
                await deps.cache.invalidate_tags([keys.GLOBAL_TAG])

            signed = {"Authorization": f"Bearer {token}"}
            limit_query = "&gzip=1" if args.gzip else ""
            for name, body in bodies.items():  # a second of each first: nothing measured pays for warming
                for url, headers in ((f"{limit.url}/graphql?op={name}{limit_query}", {}),
                                     (cached.url + "/graphql", {}), (cached.url + "/graphql", signed),
                                     (uncached.url + "/graphql", {})):
                    await wrk(url, body, headers, 1, args.connections, accepts_gzip=args.gzip)
            for round_number in range(args.rounds):
                for name, body in bodies.items():
                    runs: tuple[tuple[str, str, dict[str, str]], ...] = (
                        ("limit", f"{limit.url}/graphql?op={name}{limit_query}", {}),
                        ("hit", cached.url + "/graphql", {}),
                        ("hit signed in", cached.url + "/graphql", signed), ("warm", uncached.url + "/graphql", {}))
                    for case, url, headers in runs:
                        await _prime(url, body, headers)  # stored again after the last round's epoch bumps
                        table[(name, case)].add(*await wrk(url, body, headers, args.seconds, args.connections,
                                                           accepts_gzip=args.gzip))
                for name, body in bodies.items():  # last: their epoch bumps turn every stored answer stale
                    table[(name, "cold")].add(*await sequential_cold(uncached.url + "/graphql", body, bump,
                                                                     args.cold_requests))
                print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    await count_per_request(settings, token, bodies, table)
    return render(table, args)


async def _prime(url: str, body: bytes, headers: dict[str, str]) -> None:
    async with httpx.AsyncClient(headers={"content-type": "application/json", **headers}) as http:
        await http.post(url, content=body)


async def bodies_of(url: str, http: httpx.AsyncClient | None = None) -> dict[str, bytes]:
    """Each operation's request body, with a real shout slug for get_shout (asked with `http` when given)."""
    async with contextlib.nullcontext(http) if http is not None else httpx.AsyncClient() as client:
        page = await client.post(url, json={"query": "{ load_shouts_by(options: {limit: 1}) { slug } }"})
    slug = page.json()["data"]["load_shouts_by"][0]["slug"]
    bodies = {}
    for name, (query, variables) in OPERATIONS.items():
        filled = {k: (slug if v is None else v) for k, v in variables.items()}
        bodies[name] = orjson.dumps({"query": " ".join(query.split()), "variables": filled})
    return bodies


def render(table: dict[tuple[str, str], Row], args: argparse.Namespace) -> str:
    lines = [
        "# Read path over HTTP, against the stack's limit" + ("" if args.gzip else " (clients without gzip)"),
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.over_http --size {args.size} "
        f"--seconds {args.seconds} --rounds {args.rounds} --connections {args.connections}"
        f"{'' if args.gzip else ' --no-gzip'}` on "
        f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}), PostgreSQL and "
        "Redis on loopback.",
        "",
        "Each server is one uvicorn worker; wrk drives it with one thread and "
        f"{args.connections} connections on the same machine, in {args.rounds} interleaved rounds of "
        f"{args.seconds} s per case (a row is the median of its rounds), after a second of each to warm up. "
        "*limit* is a Starlette route returning the same response bytes from one Redis GET"
        + (" (gzipped, as the clients accept gzip); " if args.gzip else
           " (plain: the clients send no Accept-Encoding, nor does wrk); ")
        + "*cold* requests "
        f"go one at a time, each after an epoch bump ({args.cold_requests} per round, after the other cases). "
        "Round trips (as sent on the wire: commands coalesced into one pipeline count once) and SQL "
        "statements are of one request, counted in process; X-Cache says how it was answered. *rounds* is "
        "the range of the ratio within each round (the case against the limit measured just before it): "
        "how much the machine moved during the run.",
        "",
        "| operation | case | req/s | p50 ms | p99 ms | of limit | rounds | Redis round trips | SQL | X-Cache |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name in OPERATIONS:
        limits = table[(name, "limit")].rps
        limit = statistics.median(limits)
        for case in CASES:
            row = table[(name, case)]
            rps = statistics.median(row.rps)
            trips = "1 (GET)" if case == "limit" else row.round_trips
            sql = 0 if case == "limit" else row.statements
            spread = ""
            if case not in ("limit", "cold"):  # cold requests are not measured beside the limit
                ratios = [case_rps / limit_rps for case_rps, limit_rps in zip(row.rps, limits, strict=True)]
                spread = f"{min(ratios):.3f}-{max(ratios):.3f}"
            lines.append(f"| {name} | {case} | {rps:,.0f} | {statistics.median(row.p50):.2f} | "
                         f"{statistics.median(row.p99):.2f} | {rps / limit:.3f} | {spread} | {trips} | {sql} | "
                         f"{row.cache} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser()
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--cold-requests", type=int, default=30)
    parser.add_argument("--no-gzip", dest="gzip", action="store_false",
                        help="clients that send no Accept-Encoding (the limit route then answers plain bytes)")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


def write_section(path: Path, section: str) -> None:
    """`section` in place of the one of the same title in `path` (the other benches' sections stay)."""
    title = section.split("\n", 1)[0]
    text = path.read_text() if path.exists() else ""
    start = text.find(title + "\n")
    if start < 0:
        path.write_text(section + ("\n" + text if text else ""))
        return
    end = text.find("\n# ", start + len(title))
    path.write_text(text[:start] + section + (text[end:] if end >= 0 else ""))


if __name__ == "__main__":
    asyncio.run(main())
