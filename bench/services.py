"""Where a benchmark runs: the database and Redis named by the settings (DATABASE_URL, REDIS_URL, or the
--database-url / --redis-url flags), or, when none is named, a PostgreSQL database and a Redis server of
the benchmark's own, created for the run and removed after it. A benchmark never borrows a database or a
Redis db number that may belong to someone else."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from alembic import command
from sqlalchemy.engine import make_url

from app.cli.seed import SIZES, Size, seed_database
from devtools.services import LOCAL_POSTGRES, RedisServer, scratch_database
from orm.engine import create_database_if_missing
from orm.migrations import alembic_config


def named_database() -> str | None:
    return os.environ.get("DATABASE_URL")


def named_redis() -> str | None:
    return os.environ.get("REDIS_URL")


async def _prepare(url: str, size: Size) -> None:
    """Migrate and, when it is empty, seed the database."""
    await create_database_if_missing(url)
    await asyncio.to_thread(command.upgrade, alembic_config(url), "head")
    await seed_database(url, size, only_if_empty=True, progress=True)


@contextlib.asynccontextmanager
async def database(url: str | None, size: Size, server: str = LOCAL_POSTGRES) -> AsyncIterator[str]:
    """The database at `url` (seeded if empty, kept), or a scratch one on `server` (seeded, dropped)."""
    if url:
        await _prepare(url, size)
        yield url
        return
    async with scratch_database(server, prefix="discours_bench") as scratch:
        print(f"benchmark database {make_url(scratch).database} (dropped afterwards)", flush=True)
        await _prepare(scratch, size)
        yield scratch


@contextlib.asynccontextmanager
async def redis(url: str | None) -> AsyncIterator[str]:
    """The Redis at `url`, or a redis-server of the run's own on a free loopback port."""
    if url:
        yield url
        return
    async with RedisServer() as server:
        yield server.url


def parser(*, wrk: bool = True) -> argparse.ArgumentParser:
    """A benchmark's command line with what every one of them takes: where it runs, at which size, and
    whether its table is written; `wrk`: it drives the server with wrk, which must be installed."""
    if wrk and shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--database-url", default=named_database(),
                           help="default: DATABASE_URL, else a scratch database dropped afterwards")
    arguments.add_argument("--redis-url", default=named_redis(),
                           help="default: REDIS_URL, else a redis-server of the run's own")
    arguments.add_argument("--size", choices=sorted(SIZES), default="demo")
    arguments.add_argument("--no-write", action="store_true", help="print the table only")
    return arguments


async def report(args: argparse.Namespace, run: Callable[[str, str, argparse.Namespace], Awaitable[str]],
                 results: Path, write_section: Callable[[Path, str], None]) -> None:
    """`run` on the database and Redis `args` name (or of its own), its table printed and, unless
    --no-write, put in place of its section of `results`."""
    async with database(args.database_url, SIZES[args.size]) as database_url, redis(args.redis_url) as redis_url:
        table = await run(database_url, redis_url, args)
    print(table)
    if not args.no_write:
        write_section(results, table)
