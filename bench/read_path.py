"""Read-path benchmark, everything measured side by side in one run:

1. the same GraphQL operations served cold (every cached value a miss), warm through the entity and list
   caches (response cache off) and warm through the response cache: requests per second and ratios;
2. the SQL statements of a cold shouts page of 20 and of 100 (and whether any of them aggregates);
3. with `--size bench`: the same cold page at 5,000 shouts and at 50,000 (a second database seeded at a
   tenth of the size), interleaved.

    python -m bench.read_path [--database-url URL] [--redis-url URL] [--size test|demo|bench] [--requests N]

It runs where the settings say (DATABASE_URL, REDIS_URL) or, by default, on a scratch database and a
Redis server of its own, removed afterwards (bench/services.py); a named database is migrated and seeded
when it is empty, and kept. Cold requests bump the cache's global epoch (every cached value becomes a
miss); the live counters and follow sets are not cached values but structures the writes keep current
(cache/live/structures.py), so they stay.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx
from redis.asyncio import Redis
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from app.cli.seed import SIZES
from app.main import create_app
from bench import services
from cache import keys
from cache.store import Cache
from config.settings import load_settings
from orm.engine import make_engine, make_session_factory
from resolvers.deps import Deps

OPERATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "shouts page (20)": (
        """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title slug
        main_topic { slug title } authors { id slug name pic stat { shouts followers } }
        stat { rating comments_count viewed last_commented_at } } }""",
        {"o": {"limit": 20, "offset": 20}},
    ),
    "top by rating (20)": (
        "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title stat { rating } } }",
        {"o": {"limit": 20, "order_by": "rating"}},
    ),
    "author": (
        'query { get_author(slug: "author-2") { id name stat { shouts followers rating comments } } }',
        {},
    ),
    "topics all": ("query { get_topics_all { id slug title stat { shouts authors followers } } }", {}),
    "reactions (20)": (
        """query { load_reactions_by(by: {}, limit: 20) { id kind body created_at created_by { id name }
        shout { id slug } stat { rating comments_count } } }""",
        {},
    ),
}
PAGE = OPERATIONS["shouts page (20)"][0]


async def _measure(http: httpx.AsyncClient, cache: Cache, query: str, variables: dict[str, Any],
                   requests: int, cold: bool) -> float:
    timings = []
    await http.post("/graphql", json={"query": query, "variables": variables})  # warm the pool and caches
    for _ in range(requests):
        if cold:
            # Bumping the global epoch turns every cached value into a miss: a cold cache without a flush.
            await cache.invalidate_tags([keys.GLOBAL_TAG])
        started = time.perf_counter()
        response = await http.post("/graphql", json={"query": query, "variables": variables})
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200 and "errors" not in response.json(), response.text
    return 1.0 / statistics.median(timings)


async def _cold_statements(http: httpx.AsyncClient, cache: Cache, engine: AsyncEngine, limit: int) -> list[str]:
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    variables = {"o": {"limit": limit, "offset": 20}}
    await http.post("/graphql", json={"query": PAGE, "variables": variables})
    await cache.invalidate_tags([keys.GLOBAL_TAG])
    event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        response = await http.post("/graphql", json={"query": PAGE, "variables": variables})
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", count)
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    return statements


async def _scaling(big: httpx.AsyncClient, big_cache: Cache, small: httpx.AsyncClient, small_cache: Cache,
                   requests: int) -> tuple[float, float]:
    """Median seconds of the same cold page on each database, measured alternately."""
    timings: dict[str, list[float]] = {"big": [], "small": []}
    variables = {"o": {"limit": 20, "offset": 20}}
    for http in (big, small):
        await http.post("/graphql", json={"query": PAGE, "variables": variables})
    for _ in range(requests):
        for name, http, cache in (("small", small, small_cache), ("big", big, big_cache)):
            await cache.invalidate_tags([keys.GLOBAL_TAG])
            started = time.perf_counter()
            response = await http.post("/graphql", json={"query": PAGE, "variables": variables})
            timings[name].append(time.perf_counter() - started)
            assert response.status_code == 200 and "errors" not in response.json(), response.text
    return statistics.median(timings["small"]), statistics.median(timings["big"])


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=services.named_database(),
                        help="default: DATABASE_URL, else a scratch database dropped afterwards")
    parser.add_argument("--redis-url", default=services.named_redis(),
                        help="default: REDIS_URL, else a redis-server of the run's own")
    parser.add_argument("--size", choices=sorted(SIZES), default="demo")
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    async with services.database(args.database_url, SIZES[args.size]) as database_url, \
            services.redis(args.redis_url) as redis_url:
        await _run(database_url, redis_url, args)


async def _run(database_url: str, redis_url: str, args: argparse.Namespace) -> None:
    engine = make_engine(database_url)
    redis = Redis.from_url(redis_url)
    deps = Deps(cache=Cache(redis), db=make_session_factory(engine))
    settings = load_settings(database_url=database_url, jwt_secret="bench" * 8)
    entity_level = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
    whole = create_app(settings, deps=deps)
    print(f"{'operation':<22}{'cold':>9}{'warm':>9}{'response':>10}{'cold/warm':>11}{'warm/cold':>11}"
          f"{'resp/cold':>11}  (req/s)")
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=entity_level), base_url="http://b") as http, \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=whole), base_url="http://b") as cached:
            for name, (query, variables) in OPERATIONS.items():
                cold = await _measure(http, deps.cache, query, variables, args.requests, cold=True)
                warm = await _measure(http, deps.cache, query, variables, args.requests, cold=False)
                response = await _measure(cached, deps.cache, query, variables, args.requests, cold=False)
                print(f"{name:<22}{cold:>9.1f}{warm:>9.1f}{response:>10.1f}{cold / warm:>11.2f}"
                      f"{warm / cold:>10.1f}x{response / cold:>10.1f}x")
            for limit in (20, 100):
                statements = await _cold_statements(http, deps.cache, engine, limit)
                aggregating = sum("GROUP BY" in s or "count(" in s.lower() for s in statements)
                print(f"cold shouts page of {limit}: {len(statements)} SQL statements, {aggregating} aggregating")
            if args.size == "bench":
                await _compare_sizes(http, deps.cache, database_url, args.requests)
    finally:
        await redis.aclose()
        await engine.dispose()


async def _compare_sizes(big: httpx.AsyncClient, big_cache: Cache, big_url: str, requests: int) -> None:
    """The same cold page on a database a tenth of the size (scratch, on the same PostgreSQL server, with a
    Redis of its own), interleaved with the full one."""
    size = SIZES["bench"].scaled(authors=SIZES["bench"].authors // 10)
    server = make_url(big_url).set(database="postgres").render_as_string(hide_password=False)
    async with services.database(None, size, server=server) as url, services.redis(None) as redis_url:
        engine = make_engine(url)
        redis = Redis.from_url(redis_url)
        deps = Deps(cache=Cache(redis), db=make_session_factory(engine))
        settings = load_settings(database_url=url, jwt_secret="bench" * 8, response_cache_ttl=0)
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=deps)),
                                         base_url="http://b") as small:
                small_s, big_s = await _scaling(big, big_cache, small, deps.cache, requests)
        finally:
            await redis.aclose()
            await engine.dispose()
    print(f"cold shouts page (20): {size.shouts:,} shouts {small_s * 1000:.1f} ms, "
          f"{SIZES['bench'].shouts:,} shouts {big_s * 1000:.1f} ms: {big_s / small_s:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
