"""`discours adopt`: take over a database the Discours backend created (orm/adopt/).

    discours adopt --check   what the database is, the plan table by table, the time and locks it expects,
                             and every blocker; writes nothing; exits 1 if anything blocks
    discours adopt           carry the plan out in one transaction, then run the later migrations
    --views FILE             then import a Discours views.json (slug -> views)
    --views-redis URL        then import the views a Discours Redis holds (read only; seed 000 section 5)
    --redis URL              this server's Redis, if it is running: its view counters move with the import
    --accounts FILE          then import the accounts Discours' auth service exported (CSV, auth/accounts_import.py)

Needs DATABASE_URL only, like `discours migrate`. The views import also runs on a database already adopted
(running it again changes nothing).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.progress import Bars
from config.settings import Settings, load_database_settings

if TYPE_CHECKING:
    from orm.adopt.database import Found
    from orm.adopt.plan import Plan

# Exit codes: 0 adopted or nothing to adopt, 1 blockers, 3 not a database the adopter knows.
BLOCKED, UNKNOWN = 1, 3


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    adopt = sub.add_parser("adopt", help="take over a database the Discours backend created (see --check)")
    adopt.add_argument("--check", action="store_true", help="print the plan and the blockers; write nothing")
    adopt.add_argument("--fanout", type=int, default=Settings.model_fields["notify_fanout_cap"].default,
                       help="at most this many recipients per adopted publication notification")
    adopt.add_argument("--views", type=Path, help="a Discours views.json (slug -> views) to import")
    adopt.add_argument("--views-redis", help="a Discours Redis to import views from (read only)")
    adopt.add_argument("--redis", help="this server's Redis, when it is running (its counters move too)")
    adopt.add_argument("--accounts", type=Path, help="a CSV of Discours' auth service: user,email[,email_verified]"
                       "[,password_hash][,provider,subject][,roles]")
    adopt.set_defaults(func=cmd_adopt)


def cmd_adopt(args: argparse.Namespace) -> int:
    url = load_database_settings().database_url
    code = asyncio.run(_adopt(url, check_only=args.check, fanout=args.fanout))
    if code != 0 or args.check:
        return code
    if args.views or args.views_redis:
        code = asyncio.run(_import_views(url, views=args.views, views_redis=args.views_redis, redis=args.redis))
    if code == 0 and args.accounts:
        code = asyncio.run(_import_accounts(url, args.accounts))
    return code


async def _import_accounts(url: str, path: Path) -> int:
    from auth.accounts_import import import_accounts, read_accounts
    from orm.engine import make_engine, make_session_factory

    rows, refused = read_accounts(path)
    engine = make_engine(url)
    try:
        done = await import_accounts(make_session_factory(engine), rows, refused)
    finally:
        await engine.dispose()
    print(done.describe())
    return 0


async def _import_views(url: str, *, views: Path | None, views_redis: str | None, redis: str | None) -> int:
    from redis.asyncio import Redis

    from cache.live.views_import import import_views, read_views_file, read_views_redis
    from orm.engine import make_engine, make_session_factory

    by_slug = read_views_file(views) if views else None
    by_id = None
    if views_redis:
        old = Redis.from_url(views_redis)
        try:
            by_id = await read_views_redis(old)
        finally:
            await old.aclose()
    engine = make_engine(url)
    ours = Redis.from_url(redis) if redis else None
    try:
        done = await import_views(make_session_factory(engine), by_slug=by_slug, by_id=by_id, redis=ours)
    finally:
        await engine.dispose()
        if ours is not None:
            await ours.aclose()
    print(f"Views imported: {done.shouts} shouts changed, {done.added:+} views"
          + (f"; {done.unknown_count} with no shout here ({', '.join(done.unknown)})" if done.unknown_count else ""))
    return 0


async def _adopt(url: str, *, check_only: bool, fanout: int) -> int:
    from sqlalchemy.ext.asyncio import create_async_engine

    from orm.adopt.run import NotAdoptable, adopt, check

    if not url.startswith("postgresql"):
        print("adoption reads a Discours database, which is PostgreSQL: DATABASE_URL names another kind")
        return UNKNOWN
    engine = create_async_engine(url)
    try:
        if check_only:
            async with engine.connect() as conn:
                found, plan = await check(conn)
            print(found.describe() if plan is None else plan.describe())
            return _refused_code(found, plan) if plan is None or plan.blockers else 0
        bars = Bars(True)
        try:  # planned once, inside the transaction that carries the plan out (or rolls back)
            async with engine.begin() as conn:
                adopted = await adopt(conn, fanout=fanout, progress=bars.show)
        except NotAdoptable as refused:
            bars.close()
            print(refused.found.describe() if refused.plan is None else refused.plan.describe())
            return _refused_code(refused.found, refused.plan)
    finally:
        await engine.dispose()
    print(adopted.plan.describe())
    await asyncio.to_thread(_migrate_to_head, url)
    print("\nAdopted: " + ", ".join(f"{table} {rows}" for table, rows in adopted.rows.items())
          + f"; {adopted.recipients} notification recipients. Next: give the server a fresh Redis, then "
          "`discours rebuild`.")
    return 0


def _refused_code(found: Found, plan: Plan | None) -> int:
    """0 for nothing to adopt (ours, or empty), BLOCKED for a plan with blockers, UNKNOWN otherwise."""
    if plan is not None:
        return BLOCKED
    return 0 if found.nothing_to_adopt else UNKNOWN


def _migrate_to_head(url: str) -> None:
    from alembic import command

    from orm.migrations import alembic_config

    command.upgrade(alembic_config(url), "head")


def refuse_migrating_a_discours_database(url: str) -> str | None:
    """Why `discours migrate` must not run here (a Discours database: its tables would collide with ours), or
    None."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from orm.adopt.database import Kind, read

    if not url.startswith("postgresql"):
        return None  # Discours runs on PostgreSQL only

    async def kind() -> Kind:
        engine = create_async_engine(url)
        try:
            async with engine.connect() as conn:
                return (await read(conn, count_rows=False)).kind
        finally:
            await engine.dispose()

    if asyncio.run(kind()) is Kind.DISCOURS:
        return ("DATABASE_URL names a database the Discours backend created: migrating it would collide with its "
                "tables. Run `discours adopt --check` to see how it would be taken over, then `discours adopt`.")
    return None
