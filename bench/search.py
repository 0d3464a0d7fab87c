"""Search benchmark: shout search cold and warm, for rare, medium and common words, beside the substring
(`LIKE`) query the server ran before full-text search, on the same data; at benchmark size and at ten
times the shouts.

    python -m bench.search [--sizes bench,bench10] [--queries N]

For each word class it takes words of the seeded corpus by their frequency rank (app/cli/corpus.py), in
several of their forms, and measures, per query:

- cold: the search not cached (its `shouts` tag moved, as any shout's publication or edit moves it), the
  shouts it finds still cached: p50 and p99 milliseconds, and SQL statements per request;
- all cold: nothing cached at all (the cache's global epoch bumped);
- warm: the same query again, answered from `search_cache`;
- LIKE: the previous implementation's statement (`lower(column) LIKE '%word%'` over title, subtitle, lead
  and body, scored by where it matched) run on the same database.

It prints each class's document frequency (shouts that hold the word) and the plan of a cold search's
ranking statement (whether it reads the GIN index or scans `shout`). Each size runs on a scratch database
of its own (seeded, then dropped) and a Redis server of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from dataclasses import replace
from typing import Any

from sqlalchemy import case, event, func, literal, or_, select, text
from sqlalchemy.dialects import postgresql

from app.cli.corpus import COMMON, MEDIUM, RARE, Corpus
from app.cli.seed import SIZES, Size
from bench import services
from cache import keys
from cache.redis.client import make_redis
from cache.store import Cache
from orm import Shout
from orm.engine import make_engine, make_session_factory
from orm.search import shout_match
from resolvers.deps import Deps, like_pattern
from resolvers.search import full_text_ranking, load_shouts_search, window_start_query
from resolvers.shout_query import NO_FILTERS, ShoutsQuery
from resolvers.shout_reads import filtered

SEARCH_SIZES: dict[str, Size] = {
    "bench": SIZES["bench"],
    # ten times the shouts; fewer reactions and follows, which search does not read
    "bench10": replace(SIZES["bench"], shouts=SIZES["bench"].shouts * 10, reactions=50_000, follows=20_000),
}
CLASSES = {"rare": RARE, "medium": MEDIUM, "common": COMMON}
LIKE_SAMPLES = 4
PAGE = ShoutsQuery(limit=20)  # the page each search asks for


def _queries(per_class: int) -> dict[str, list[str]]:
    """Per class, `per_class` queries, Russian and English: forms of the lemmas at and around the class's
    rank (common, medium), or place names around theirs (rare)."""
    corpus = Corpus(random.Random(0))
    found: dict[str, list[str]] = {}
    for name, rank in CLASSES.items():
        queries: list[str] = []
        step = -1 if rank < 0 else 1
        for offset in range(per_class):
            lang = "ru" if offset % 3 else "en"
            at = rank + step * (offset // 3)
            lemma = corpus.place_at(lang, at) if name == "rare" else corpus.lemma_at(lang, at)
            queries.append(lemma.forms[offset % len(lemma.forms)])
        found[name] = queries
    return found


def _like_statement(word: str, limit: int) -> Any:
    """What load_shouts_search ran before full-text search (the same query, here for comparison)."""
    pattern = like_pattern(word)

    def matches(column: Any) -> Any:
        return func.lower(column).like(pattern, escape="\\")

    def hit(column: Any, weight: float) -> Any:
        return case((matches(column), literal(weight)), else_=literal(0.0))

    score = (hit(Shout.title, 3.0) + hit(Shout.subtitle, 2.0) + hit(Shout.lead, 2.0) + hit(Shout.body, 1.0)).label("s")
    return filtered(select(Shout.id, score), NO_FILTERS).where(
        or_(*(matches(c) for c in (Shout.title, Shout.subtitle, Shout.lead, Shout.body)))
    ).order_by(score.desc(), Shout.published_at.desc(), Shout.id.desc()).limit(limit)


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p99 {p99 * 1000:7.1f} ms"


async def _measure(url: str, redis_url: str, per_class: int) -> None:
    engine = make_engine(url)
    statements: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))
    redis = make_redis(redis_url)
    cache = Cache(redis)
    deps = Deps(cache=cache, db=make_session_factory(engine))
    async with engine.connect() as conn:
        await conn.execute(text("ANALYZE shout"))
        shouts = await conn.scalar(select(func.count()).select_from(Shout))
    print(f"{shouts:,} shouts")
    for name, queries in _queries(per_class).items():
        cold: list[float] = []
        all_cold: list[float] = []
        warm: list[float] = []
        like: list[float] = []
        spent: list[int] = []
        frequency: list[int] = []
        for query in queries:  # a first pass reads the pages the measured pass needs (both sizes in memory)
            await cache.invalidate_tags([keys.TAG_SHOUTS])
            await load_shouts_search(deps, query, PAGE)
        for n, query in enumerate(queries):
            await cache.invalidate_tags([keys.GLOBAL_TAG])  # every cached value a miss
            started = time.perf_counter()
            await load_shouts_search(deps, query, PAGE)
            all_cold.append(time.perf_counter() - started)
            await cache.invalidate_tags([keys.TAG_SHOUTS])  # the search a miss, the shouts still cached
            statements.clear()
            started = time.perf_counter()
            await load_shouts_search(deps, query, PAGE)
            cold.append(time.perf_counter() - started)
            spent.append(len(statements))
            started = time.perf_counter()
            await load_shouts_search(deps, query, PAGE)
            warm.append(time.perf_counter() - started)
            async with deps.db() as session:
                if n < LIKE_SAMPLES:  # seconds each at ten times the shouts: a few are enough
                    started = time.perf_counter()
                    await session.execute(_like_statement(query, 20))
                    like.append(time.perf_counter() - started)
                frequency.append(int(await session.scalar(select(func.count()).select_from(
                    filtered(select(Shout.id), NO_FILTERS).where(shout_match(query, ["russian", "english", "simple"]))
                    .subquery())) or 0))
        print(f"{name:>6} ({min(frequency):,}-{max(frequency):,} shouts hold the word, {len(queries)} queries)")
        print(f"         cold  {_ms(cold)}  {statistics.mean(spent):.1f} statements (the search a miss)")
        print(f"     all cold  {_ms(all_cold)}  (the shouts' entities missing too)")
        print(f"         warm  {_ms(warm)}")
        print(f"         LIKE  {_ms(like)}  (the statement alone, {len(like)} queries)")
        print(f"         LIKE / cold at p50: {statistics.median(like) / statistics.median(cold):.1f}x")
    async with engine.connect() as conn:
        for name, queries in _queries(1).items():
            since = await conn.scalar(window_start_query(deps.search.window))
            ranking = full_text_ranking(queries[0], ["russian", "english", "simple"], NO_FILTERS,
                                        deps.search.candidates, since)
            compiled = ranking.ranked.limit(deps.search.kept_results).compile(
                dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
            plan = [row[0] for row in await conn.execute(text(f"EXPLAIN {compiled}"))]
            scans = sorted({line.strip().removeprefix("->").strip().split("  ")[0] for line in plan if "Scan" in line})
            print(f"plan of a cold {name} search's ranking: {'; '.join(scans)}")
    await redis.aclose()
    await engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="bench,bench10")
    parser.add_argument("--queries", type=int, default=12, help="queries per word class")
    parser.add_argument("--database-url", default=services.named_database(),
                        help="one size only: this database (seeded if empty, kept)")
    args = parser.parse_args()
    async with services.redis(None) as redis_url:
        for size in args.sizes.split(","):
            print(f"== {size}")
            started = time.perf_counter()
            async with services.database(args.database_url, SEARCH_SIZES[size]) as url:
                print(f"seeded in {time.perf_counter() - started:.0f} s")
                await _measure(url, redis_url, args.queries)


if __name__ == "__main__":
    asyncio.run(main())
