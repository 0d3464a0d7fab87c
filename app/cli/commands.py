"""The `discours` command: serve, migrate, adopt, seed, rebuild, queue, cache, export-schema."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
from pathlib import Path

import shtab

from app import logs
from app.cli import adopt, cache_tools
from app.cli.progress import Bars
from config.settings import SettingsError, load_database_settings, load_settings
from telemetry.version import VERSION


def cmd_migrate(args: argparse.Namespace) -> int:
    from alembic import command

    from orm.migrations import alembic_config

    url = load_database_settings().database_url
    refused = adopt.refuse_migrating_a_discours_database(url)
    if refused is not None:
        print(f"discours migrate: {refused}", file=sys.stderr)
        return 2
    command.upgrade(alembic_config(url), args.revision)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.http.slow_clients import BODY_TIMEOUT_ENV, HEADER_TIMEOUT_ENV, ReadDeadlines

    settings = load_settings()
    host = args.host or settings.host
    port = args.port or settings.port
    workers = args.workers or settings.workers
    if args.reload and workers > 1:
        raise SettingsError(f"--reload restarts one worker; WORKERS or --workers asks for {workers}")
    if workers > 1 and settings.redis_url is None:
        raise SettingsError(f"REDIS_URL: {workers} workers need one Redis to share (without REDIS_URL each would "
                            "keep its own in-process one, and a session or a cached value one worker wrote "
                            "would be unknown to the others); set REDIS_URL=redis://127.0.0.1:6379/0 or serve "
                            "with one worker")
    if workers > 1 and settings.prometheus_multiproc_dir is None:
        # The workers add up their metrics through files here (prometheus-client's multiprocess mode): a
        # scrape that reaches any of them sees the whole server. Set before they start; they inherit it.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="discours-metrics-")
    # Each worker drains on SIGTERM (app/graceful.py), then has SHUTDOWN_TIMEOUT for what is in flight.
    # Slow clients (app/http/slow_clients.py): the workers' protocol reads its deadlines from here.
    os.environ[HEADER_TIMEOUT_ENV] = str(settings.header_read_timeout)
    os.environ[BODY_TIMEOUT_ENV] = str(settings.body_read_timeout)
    logs.configure(settings.log_level, settings.log_format)  # the supervisor's lines too, in the same form
    # --reload: uvicorn's supervisor (watchfiles) restarts the worker when a module of the server changes.
    uvicorn.run("app.asgi:app", host=host, port=port, workers=workers, factory=False, log_config=None,
                reload=args.reload, reload_dirs=_source_folders() if args.reload else None,
                log_level=settings.log_level.lower(), proxy_headers=True, ws_max_size=settings.max_body_bytes,
                timeout_graceful_shutdown=math.ceil(settings.shutdown_timeout),
                http=ReadDeadlines, timeout_keep_alive=settings.keep_alive_timeout,
                limit_concurrency=settings.max_connections)
    return 0


# The server's packages (pyproject's [tool.setuptools.packages.find]): what --reload watches, wherever installed.
SERVER_PACKAGES = ("config", "telemetry", "ambient", "app", "orm", "cache", "triggers", "resolvers", "schema", "auth")


def _source_folders() -> list[str]:
    from importlib.util import find_spec

    return [str(Path(spec.origin).parent) for name in SERVER_PACKAGES
            if (spec := find_spec(name)) is not None and spec.origin is not None]


def cmd_seed(args: argparse.Namespace) -> int:
    from app.cli.seed import SIZES, seed_database

    settings = load_settings()
    size = SIZES[args.size]
    if args.authors:
        size = size.scaled(authors=args.authors)
    inserted = asyncio.run(seed_database(settings.database_url, size, seed=args.seed,
                                         only_if_empty=args.if_empty, progress=not args.quiet))
    print("seeded" if inserted else "database already has data; nothing seeded")
    return 0


def cmd_queue(args: argparse.Namespace) -> int:
    """The delayed queue: how many messages wait, are being handled and are parked; the parked ones."""
    from datetime import UTC, datetime

    from cache.messaging.delayed import DelayedQueue
    from cache.redis.client import make_redis
    from resolvers.deps import DEFERRED_QUEUE

    async def run() -> None:
        settings = cache_tools.load_shared_redis_settings("the queue lives in")
        redis = make_redis(settings.state_redis_url, cluster=settings.redis_cluster)
        try:
            queue = DelayedQueue(redis, DEFERRED_QUEUE)
            if args.requeue_parked:
                print(f"requeued {await queue.requeue_parked()} parked messages")
            stats = await queue.stats()
            print(f"queue {DEFERRED_QUEUE}: {stats['queued']} queued, {stats['leased']} being handled, "
                  f"{stats['parked']} parked")
            for message, parked_at, error in await queue.parked(args.parked):
                when = datetime.fromtimestamp(parked_at, UTC).isoformat(timespec="seconds")
                print(f"  parked {when}  {message.kind} {message.id} {message.payload}: {error}")
        finally:
            await redis.aclose()

    asyncio.run(run())
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Rebuild the live structures (counters, follow sets, threads, leaderboards) from SQL."""
    from app.main import open_deps
    from cache.live.rebuild import rebuild_all

    settings = cache_tools.load_shared_redis_settings("the live structures are rebuilt into")

    async def run() -> dict[str, int]:
        bars = Bars(not args.quiet)
        async with open_deps(settings) as deps:
            counts = await rebuild_all(deps.live, deps.cache, deps.primary, bars.show)
        bars.close()
        return counts

    counts = asyncio.run(run())
    print("rebuilt the structures of " + ", ".join(f"{kind}: {n}" for kind, n in counts.items()))
    return 0


def cmd_export_schema(_args: argparse.Namespace) -> int:
    from schema.schema import build_schema

    print(str(build_schema()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="discours", description=__doc__)
    parser.add_argument("--version", action="version", version=f"discours {VERSION}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    # `discours --print-completion bash > /etc/bash_completion.d/discours` (or zsh, tcsh): every command
    # and option, from this parser.
    shtab.add_argument_to(parser, ["--print-completion"], help="print a shell completion script and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", help="the address to listen on (HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="the port to listen on (PORT, default 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (WORKERS, default 1; more need REDIS_URL)")
    serve.add_argument("--reload", action="store_true",
                       help="for development: restart when a source file changes (one worker)")
    serve.set_defaults(func=cmd_serve)

    migrate = sub.add_parser("migrate", help="alembic upgrade (head by default)")
    migrate.add_argument("revision", nargs="?", default="head",
                         help="the Alembic revision to upgrade to (default head)")
    migrate.set_defaults(func=cmd_migrate)

    seed = sub.add_parser("seed", help="fill the database with deterministic demo data")
    seed.add_argument("--size", choices=["demo", "test", "bench"], default="demo",
                      help="how much data: demo (default, a few hundred rows), test or bench (50,000 shouts)")
    seed.add_argument("--authors", type=int, help="override the number of authors (others scale)")
    seed.add_argument("--seed", type=int, default=1, help="the random seed (the same seed, the same data)")
    seed.add_argument("--if-empty", action="store_true", help="do nothing when the database has authors")
    seed.add_argument("--quiet", action="store_true", help="no progress bars (they show on a terminal only)")
    seed.set_defaults(func=cmd_seed)

    queue = sub.add_parser("queue", help="show the delayed queue and its parked messages")
    queue.add_argument("--parked", type=int, default=20, help="how many parked messages to list")
    queue.add_argument("--requeue-parked", action="store_true", help="give parked messages new attempts")
    queue.set_defaults(func=cmd_queue)

    rebuild = sub.add_parser("rebuild", help="rebuild counters, follow sets, threads and leaderboards from SQL")
    rebuild.add_argument("--quiet", action="store_true", help="no progress bars (they show on a terminal only)")
    rebuild.set_defaults(func=cmd_rebuild)

    cache_tools.add_parser(sub)
    adopt.add_parser(sub)

    export = sub.add_parser("export-schema", help="print the GraphQL SDL")
    export.set_defaults(func=cmd_export_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"discours {args.command}: {explain(exc)} (--debug shows the traceback)", file=sys.stderr)
        return 2


def explain(exc: BaseException) -> str:
    """One line that names the setting to fix, for the errors a start meets."""
    if isinstance(exc, SettingsError):
        return str(exc)
    from redis.exceptions import RedisError
    from sqlalchemy.exc import DBAPIError

    cause = exc
    while cause.__cause__ is not None or cause.__context__ is not None:
        if isinstance(cause, DBAPIError | RedisError):
            break
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    if isinstance(cause, RedisError):
        return f"REDIS_URL: Redis does not answer: {first_line}"
    if isinstance(cause, DBAPIError | OSError) or "asyncpg" in type(cause).__module__:
        if _unanswered(cause):
            return f"DATABASE_URL: the database does not answer or refuses: {first_line}"
        return f"DATABASE_URL: the database answers, but a statement failed (is it the database meant?): {first_line}"
    return f"{type(cause).__name__}: {first_line}"


# SQLSTATE classes that say the database was not reached or would not let us in: connection exceptions,
# authorization, no such database, too many connections, a server shutting down or starting.
_UNANSWERED_CLASSES = ("08", "28", "3D", "53", "57")


def _unanswered(cause: BaseException) -> bool:
    """Whether a database error says it did not answer (or refused the connection), as opposed to a
    statement it answered with an error (a column or table it lacks)."""
    if isinstance(cause, OSError | ConnectionError):
        return True
    original = getattr(cause, "orig", cause)
    code = getattr(original, "pgcode", None) or getattr(original, "sqlstate", None)
    if isinstance(code, str) and code:
        return code[:2] in _UNANSWERED_CLASSES
    sqlite_error = getattr(original, "sqlite_errorname", None)
    if isinstance(sqlite_error, str):  # a file it cannot open, or one that is not a database
        return sqlite_error.startswith(("SQLITE_CANTOPEN", "SQLITE_NOTADB", "SQLITE_PERM", "SQLITE_IOERR"))
    from sqlalchemy.exc import OperationalError

    return isinstance(cause, OperationalError) or isinstance(getattr(original, "__cause__", None), OSError)


if __name__ == "__main__":
    sys.exit(main())
