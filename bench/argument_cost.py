"""What converting a root field's arguments costs a cold request: Strawberry's conversion beside the planned one
(schema/engine/seam.py `PlannedArguments`), in one run.

In process, over the ASGI app with its lifespan's services and the response cache off: the reader's five
operations (bench/over_http.py), each cold (the global epoch bumped before each request), the two
conversions taking turns request by request. Per request, the thread's CPU time spent converting arguments
(every call of the converter, timed around it) and the whole request's, the medians of each side. Timed in
a request rather than in a loop: in a loop the conversion's code and data stay in the CPU's caches, which a
request's other work evicts.

    python -m bench.argument_cost [--size bench] [--requests 200]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from app.main import create_app, open_deps
from bench import services
from bench.over_http import RESULTS, bodies_of, write_section
from cache import keys
from config.settings import load_settings
from schema.engine.seam import (
    STRAWBERRYS_CONVERSION,
    PlannedArguments,
    argument_conversion,
    use_argument_conversion,
)

SIDES = ("Strawberry's", "planned")


def _timed(convert: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return convert(*args, **kwargs)
        finally:
            spent[0] += time.thread_time() - started
    return timed


async def run(database_url: str, redis_url: str, args: argparse.Namespace) -> str:
    settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8,
                             response_cache_ttl=0)
    # (operation, side) -> per request: (converting, the whole request), thread CPU seconds
    measured: dict[tuple[str, str], list[tuple[float, float]]] = {}
    async with open_deps(settings) as deps:
        app = create_app(settings, deps=deps)
        planned = argument_conversion()  # the schema's building installed it
        assert isinstance(planned, PlannedArguments)
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench",
                headers={"content-type": "application/json"}) as http:
            bodies = await bodies_of("http://bench/graphql", http)
            for name, body in bodies.items():
                for turn in range(args.requests + 10):  # the first ten of each side warm it
                    side = SIDES[turn % 2]
                    spent = [0.0]
                    use_argument_conversion(_timed(planned if side == "planned" else STRAWBERRYS_CONVERSION, spent))
                    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])
                    started = time.thread_time()
                    response = await http.post("/graphql", content=body)
                    whole = time.thread_time() - started
                    assert response.status_code == 200 and b'"errors"' not in response.content, response.text[:300]
                    if turn >= 10:
                        measured.setdefault((name, side), []).append((spent[0], whole))
            use_argument_conversion(planned)
    return render(measured, list(bodies), args)


def render(measured: dict[tuple[str, str], list[tuple[float, float]]], names: list[str],
           args: argparse.Namespace) -> str:
    def median_ms(name: str, side: str, part: int) -> float:
        return statistics.median(sample[part] for sample in measured[(name, side)]) * 1000

    lines = [
        "# What converting arguments costs a cold request (`python -m bench.argument_cost`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python -m bench.argument_cost --size {args.size} "
        f"--requests {args.requests}` on {platform.machine()} ({platform.python_implementation()} "
        f"{platform.python_version()}), PostgreSQL and Redis on loopback, in process (the ASGI app, the "
        "response cache off): each operation cold (an epoch bump before each request), Strawberry's "
        "conversion and the planned one taking turns; the thread's CPU time converting a request's "
        f"arguments and the whole request's, the medians of {args.requests // 2} requests each.",
        "",
        "| operation | converting, Strawberry's µs | converting, planned µs | times less | request, Strawberry's "
        "ms | request, planned ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        before, after = median_ms(name, SIDES[0], 0), median_ms(name, SIDES[1], 0)
        lines.append(f"| {name} | {before * 1000:.0f} | {after * 1000:.0f} | {before / max(after, 1e-9):.1f}x | "
                     f"{median_ms(name, SIDES[0], 1):.2f} | {median_ms(name, SIDES[1], 1):.2f} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = services.parser(wrk=False)
    parser.add_argument("--requests", type=int, default=200, help="cold requests of each operation, both sides")
    await services.report(parser.parse_args(), run, RESULTS, write_section)


if __name__ == "__main__":
    asyncio.run(main())
