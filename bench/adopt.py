"""How long `discours adopt` takes at a deployment's size, against what `--check` promises.

A scratch database is given the Discours schema and the fixture's rows (devtools/discours_db.py), then grown
to the benchmark's size with generated rows of the same shapes (authors, shouts with authors and topics,
threaded reactions, follows, notifications); `--check` and the adoption are timed, and the rows per second
compared with the plan's estimate (orm/adopt/plan.py ROWS_PER_SECOND).

    python -m bench.adopt [--shouts 50000] [--reactions 300000] [--authors 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from devtools.discours_db import T0, create_discours_schema, fill_discours_rows
from devtools.services import scratch_database
from orm.adopt.plan import ROWS_PER_SECOND
from orm.adopt.run import adopt, check


def _grow(authors: int, shouts: int, reactions: int) -> list[str]:
    """Rows after the fixture's (ids from 1,000 up), in the shapes a deployment holds."""
    return [
        f"""INSERT INTO author ("user", name, slug, bio, created_at, last_seen, updated_at, id)
            SELECT 'auth0|g' || n, 'Автор ' || n, CASE WHEN n % 50 = 0 THEN NULL ELSE 'author-g' || n END,
                   'о себе ' || n, {T0} + n, {T0} + 2 * n, {T0} + n, 1000 + n
            FROM generate_series(1, {authors}) n""",
        f"""INSERT INTO community_author (author, community, joined_at, roles, id)
            SELECT 1000 + n, 1, {T0} + n, CASE WHEN n % 3 = 0 THEN NULL ELSE 'reader,author' END, 1
            FROM generate_series(1, {authors}) n""",
        """INSERT INTO topic (slug, title, community, id)
            SELECT 'topic-g' || n, 'Тема ' || n, CASE WHEN n % 10 = 0 THEN NULL ELSE 1 END, 1000 + n
            FROM generate_series(1, 300) n""",
        f"""INSERT INTO shout (created_at, published_at, featured_at, deleted_at, created_by, community, body, slug,
                               lead, title, layout, lang, id)
            SELECT {T0} + n, CASE WHEN n % 7 = 0 THEN NULL ELSE {T0} + n END,
                   CASE WHEN n % 11 = 0 THEN {T0} + n END, CASE WHEN n % 97 = 0 THEN {T0} + 2 * n END,
                   1000 + 1 + n % {authors}, 1, repeat('<p>текст публикации ' || n || '</p>', 20),
                   CASE WHEN n % 200 = 0 THEN NULL ELSE 'shout-g' || n END, '<p>лид</p>', 'Публикация ' || n,
                   'article', 'ru', 1000 + n
            FROM generate_series(1, {shouts}) n""",
        f"""INSERT INTO shout_author (shout, author) SELECT 1000 + n, 1000 + 1 + n % {authors}
            FROM generate_series(1, {shouts}) n""",
        f"""INSERT INTO shout_topic (shout, topic, main) SELECT 1000 + n, 1000 + 1 + n % 300,
                   CASE WHEN n % 2 = 0 THEN true END FROM generate_series(1, {shouts}) n""",
        f"""INSERT INTO reaction (body, created_at, shout, created_by, kind, reply_to, id)
            SELECT CASE WHEN n % 4 = 0 THEN NULL ELSE 'комментарий ' || n END, {T0} + n,
                   1000 + 1 + n % {shouts}, 1000 + 1 + n % {authors},
                   CASE n % 4 WHEN 0 THEN 'LIKE' WHEN 1 THEN 'COMMENT' WHEN 2 THEN 'COMMENT' ELSE 'QUOTE' END,
                   NULL, 1000 + n
            FROM generate_series(1, {reactions}) n""",
        f"""INSERT INTO author_follower (follower, author, created_at, auto)
            SELECT DISTINCT 1000 + 1 + n % {authors}, 1000 + 1 + (n * 7) % {authors}, {T0} + n, false
            FROM generate_series(1, {authors * 5}) n WHERE n % {authors} <> (n * 7) % {authors}
            ON CONFLICT DO NOTHING""",
        f"""INSERT INTO notification (created_at, entity, action, payload)
            SELECT {T0} + n, 'reaction', 'create', json_build_object('id', 1000 + n, 'shout', 1000 + 1 + n % {shouts},
                   'reply_to', NULL, 'created_by', 1000 + 1 + n % {authors}, 'kind', 'COMMENT')
            FROM generate_series(1, {reactions // 10}) n""",
        "SELECT setval('author_id_seq', (SELECT max(id) FROM author))",
        "SELECT setval('shout_id_seq', (SELECT max(id) FROM shout))",
        "SELECT setval('reaction_id_seq', (SELECT max(id) FROM reaction))",
    ]


async def run(authors: int, shouts: int, reactions: int) -> None:
    async with scratch_database(prefix="adopt_bench") as url:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await create_discours_schema(conn)
            await fill_discours_rows(conn)
            for statement in _grow(authors, shouts, reactions):
                await conn.execute(text(statement))
            await conn.execute(text("ANALYZE"))
        started = time.perf_counter()
        async with engine.connect() as conn:
            found, plan = await check(conn)
        checked = time.perf_counter() - started
        assert plan is not None and not plan.blockers, plan.describe() if plan else found.describe()
        started = time.perf_counter()
        async with engine.begin() as conn:
            adopted = await adopt(conn, fanout=1000)
        took = time.perf_counter() - started
        await engine.dispose()
    rows = plan.rows
    print(f"| Discours rows | check | adopt | rows/s | the plan's estimate |\n|---:|---:|---:|---:|---:|\n"
          f"| {rows:,} | {checked:.1f} s | {took:.1f} s | {rows / took:,.0f} | {max(1, rows // ROWS_PER_SECOND)} s |")
    print(f"adopted: {sum(adopted.rows.values()):,} rows in our tables, {adopted.recipients:,} recipients")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--authors", type=int, default=2000)
    parser.add_argument("--shouts", type=int, default=50_000)
    parser.add_argument("--reactions", type=int, default=300_000)
    args = parser.parse_args()
    asyncio.run(run(args.authors, args.shouts, args.reactions))
