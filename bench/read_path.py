"""Read-path benchmark: the same GraphQL operations served cold (every cached value a miss), warm through
the entity and list caches (response cache off), and warm through the response cache, side by side in
one run, printed as requests per second and ratios.

    python -m bench.read_path [--database-url URL] [--redis-url URL] [--size test|demo|bench] [--requests N]

It migrates and seeds the database when it is empty. Cold requests bump the cache's global epoch (every
value becomes a miss); the Redis database defaults to redis://127.0.0.1:6379/14.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx
from redis.asyncio import Redis

from alembic import command
from app.cli import alembic_config
from app.main import create_app
from app.seed import SIZES, seed_database
from app.settings import load_settings
from cache import keys
from cache.store import Cache
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
}


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


async def _create_database_if_missing(url: str) -> None:
    if not url.startswith("postgresql"):
        return
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    base, name = url.rsplit("/", 1)
    admin = create_async_engine(base + "/postgres", isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        exists = await conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
        if not exists:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/discours_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--size", choices=sorted(SIZES), default="demo")
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()

    await _create_database_if_missing(args.database_url)
    await asyncio.to_thread(command.upgrade, alembic_config(args.database_url), "head")
    await seed_database(args.database_url, SIZES[args.size], only_if_empty=True, progress=True)
    engine = make_engine(args.database_url)
    redis = Redis.from_url(args.redis_url)
    deps = Deps(cache=Cache(redis), db=make_session_factory(engine))
    settings = load_settings(database_url=args.database_url, jwt_secret="bench" * 8)
    entity_level = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
    whole = create_app(settings, deps=deps)
    print(f"{'operation':<22}{'cold':>9}{'warm':>9}{'response':>10}{'warm/cold':>11}{'resp/cold':>11}  (req/s)")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=entity_level), base_url="http://b") as http, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=whole), base_url="http://b") as cached:
        for name, (query, variables) in OPERATIONS.items():
            cold = await _measure(http, deps.cache, query, variables, args.requests, cold=True)
            warm = await _measure(http, deps.cache, query, variables, args.requests, cold=False)
            response = await _measure(cached, deps.cache, query, variables, args.requests, cold=False)
            print(f"{name:<22}{cold:>9.1f}{warm:>9.1f}{response:>10.1f}{warm / cold:>10.1f}x{response / cold:>10.1f}x")
    await redis.aclose()
    await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
