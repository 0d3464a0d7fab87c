"""Engine and session factories. Nothing here runs at import time: the app's lifespan (or a CLI
command, or a test fixture) calls these and owns what they return."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import orjson
import sqlalchemy.ext.asyncio
from sqlalchemy import event, exc
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import QueuePool

from orm.held import HELD_MOST, IDLE_SINCE, HoldingPool
from orm.replicas import ReadRouting, RoutingSession
from telemetry import metrics

if TYPE_CHECKING:
    from config.settings import DatabaseSettings


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    # WAL lets readers run beside the single writer; foreign keys are off by default in SQLite.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def json_loads(text: str | bytes) -> Any:
    """A JSON column's value as read (an author's links, a shout's media): by orjson, in a fifth of the stdlib's
    time (the stdlib's decoder was 1.5% of a cold page of reactions' CPU), and read as the cache reads it (an
    integer past 64 bits is a float, as everywhere orjson reads); by the stdlib where orjson refuses what a
    column may hold (a number past a double's range, or NaN, which the stdlib's serializer writes), so that
    no row fails to read."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _ping_after_idle(engine: AsyncEngine, idle_seconds: float) -> None:
    """Pessimistic disconnect handling at a lower price. `pool_pre_ping` pings at every checkout, a
    round trip that costs a cold read more than its query (0.6 ms of 1.5 ms for a session here); a
    connection checked in moments ago is alive unless the server died since, so only one idle longer
    than `idle_seconds` is pinged. One that fails is replaced before use (SQLAlchemy's documented
    checkout recipe); a server lost within the window fails the statements then running, and the
    first disconnect it reports makes SQLAlchemy replace every pooled connection."""
    dialect = engine.dialect

    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[IDLE_SINCE] = time.monotonic()

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(IDLE_SINCE, None)
        if since is None or time.monotonic() - since <= idle_seconds:
            return
        try:
            alive = dialect.do_ping(dbapi_connection)
        except Exception:  # whatever the driver raises for a dead socket
            alive = False
        if not alive:
            raise exc.DisconnectionError("connection found dead on checkout")

    event.listen(engine.sync_engine, "checkin", checkin)
    event.listen(engine.sync_engine, "checkout", checkout)


def _measure(engine: AsyncEngine) -> None:
    """Connections in use and failed statements, for /metrics. Listened after the idle ping, whose
    failed checkout is retried with another connection and must not count twice."""

    def checkout(*_args: Any) -> None:
        metrics.DB_POOL_IN_USE.inc()

    def checkin(*_args: Any) -> None:
        metrics.DB_POOL_IN_USE.dec()

    def failed(context: Any) -> None:
        metrics.DATABASE_ERRORS.labels(type(context.original_exception).__name__).inc()

    event.listen(engine.sync_engine, "checkout", checkout)
    event.listen(engine.sync_engine, "checkin", checkin)
    event.listen(engine.sync_engine, "handle_error", failed)


# Engines whose URL names a transaction pooler: their reads keep their transaction (`reads_only`).
_BEHIND_POOLER: weakref.WeakSet[Engine] = weakref.WeakSet()


def behind_pooler(engine: AsyncEngine) -> bool:
    """Whether `engine`'s URL names a transaction pooler."""
    return engine.sync_engine in _BEHIND_POOLER


def engines_of(settings: DatabaseSettings) -> list[AsyncEngine]:
    """The primary's engine (DATABASE_URL), then one per replica (DATABASE_REPLICA_URLS)."""
    return [make_engine(url, pool_size=settings.db_pool_size, ping_after_idle=settings.db_ping_after_idle,
                        held_for_reads=settings.db_held_for_reads, transaction_pooler=settings.db_transaction_pooler,
                        replica=n > 0)
            for n, url in enumerate((settings.database_url, *settings.database_replica_urls))]


def make_engine(url: str, *, pool_size: int = 10, echo: bool = False, ping_after_idle: float = 5.0,
                held_for_reads: int = HELD_MOST, transaction_pooler: bool = False,
                replica: bool = False) -> AsyncEngine:
    """`held_for_reads`: connections the pool holds for reads on the driver (DB_HELD_FOR_READS, orm/held.py).
    `transaction_pooler`: `url` names PgBouncer in transaction pooling (DB_TRANSACTION_POOLER).
    `replica`: a streaming replica, only ever read (orm/replicas.py): every statement in autocommit, as
    `reads_only` puts a primary's read sessions. A session's replica connection then holds no transaction
    between its statements: no BEGIN and ROLLBACK round trips, and no lock that the replay of the
    primary's DDL would wait for (a recovery conflict). Behind a transaction pooler the transaction stays,
    for `reads_only`'s reason."""
    # Through the module's attribute, read now: when traces are on, OpenTelemetry's SQLAlchemy
    # instrumentation has wrapped it (telemetry/tracing.py), and the engine's statements become spans.
    create = sqlalchemy.ext.asyncio.create_async_engine
    if url.startswith("sqlite"):
        engine = create(url, echo=echo, json_deserializer=json_loads)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    else:
        options: dict[str, Any] = {"isolation_level": "AUTOCOMMIT"} if replica and not transaction_pooler else {}
        engine = create(url, echo=echo, pool_size=pool_size, max_overflow=pool_size,
                                     json_deserializer=json_loads, poolclass=HoldingPool,
                                     connect_args=_through_pooler() if transaction_pooler else {}, **options)
        pool = engine.sync_engine.pool
        assert isinstance(pool, HoldingPool)
        pool.idle_seconds, pool.held_most = ping_after_idle, held_for_reads
        if transaction_pooler:
            _BEHIND_POOLER.add(engine.sync_engine)
        _ping_after_idle(engine, ping_after_idle)
    _measure(engine)
    return engine


async def open_connections(engine: AsyncEngine, count: int) -> None:
    """Open `count` connections of `engine`'s pool now (at most its size) and give them back to it, which
    keeps them: a pool left to open its connections as concurrency first asks for them grows at each new
    peak of load, at a moment the load decides, and a new connection's handshake is paid by the request
    that meets that peak. None on SQLite, whose connections are files."""
    pool = engine.sync_engine.pool
    if engine.url.get_backend_name() == "sqlite" or not isinstance(pool, QueuePool):
        return
    async with contextlib.AsyncExitStack() as held:  # held together, so each is a connection of its own
        for _ in range(min(count, pool.size())):
            await held.enter_async_context(engine.connect())


def _through_pooler() -> dict[str, Any]:
    """asyncpg behind a transaction pooler, as SQLAlchemy documents it: a statement is prepared on whichever
    server connection the pooler lends for its transaction, so it gets a name no other statement has (the
    default `__asyncpg_stmt_N__` counts per client connection, and two clients' names collide on one server
    connection), and neither asyncpg nor SQLAlchemy keeps it for later (the next transaction may run on a
    server connection that never saw it)."""
    return {"prepared_statement_name_func": lambda: f"__asyncpg_{uuid.uuid4().hex}__",
            "statement_cache_size": 0, "prepared_statement_cache_size": 0}


def make_session_factory(engine: AsyncEngine, *, info: dict[str, Any] | None = None,
                         routing: ReadRouting | None = None) -> async_sessionmaker[AsyncSession]:
    """`info` starts each session's `session.info` (triggers/ keeps its sink there: `writing_sessions`).
    With `routing`, the sessions' reads may go to replicas (orm/replicas.py); `engine` is the primary."""
    if routing is None:
        return async_sessionmaker(engine, expire_on_commit=False, info=info or {})
    return async_sessionmaker(engine, expire_on_commit=False, info=info or {}, sync_session_class=RoutingSession,
                              routing=routing)


async def reads_only(session: AsyncSession) -> AsyncSession:
    """Put a session that will only read in autocommit: under READ COMMITTED each statement sees a snapshot
    of its own anyway, so a transaction around the reads buys nothing but its BEGIN and ROLLBACK, two round
    trips of every cold read. A session already in a transaction (a shared one, a writer's) is left as it
    is. What is written through such a session is committed statement by statement: writes go through
    `resolvers.writes.transaction`, which begins its own. Behind a transaction pooler the transaction
    stays: asyncpg prepares a statement and then runs it, and outside a transaction PgBouncer may send the
    two to different server connections (`prepared statement ... does not exist`)."""
    await _autocommits(session)
    return session


async def _autocommits(session: AsyncSession) -> bool:
    """`reads_only`'s work; whether it put the session in autocommit."""
    bind = session.bind
    if session.in_transaction() or bind is None or bind.sync_engine in _BEHIND_POOLER:
        return False
    await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    return True


# What reads and writes open sessions with: an `async_sessionmaker`, or a shared session's lender for reads
# (cache/entities.shared_session).
SessionFactory = Callable[[], AbstractAsyncContextManager[AsyncSession]]


@contextlib.asynccontextmanager
async def read_session(db: SessionFactory) -> AsyncIterator[AsyncSession]:
    """A session of `db` for reads only (`reads_only`).

    A session in autocommit is closed where it ends: it holds no transaction, so closing it waits on nothing
    (its connection goes back to the pool with nothing to roll back), and nothing can cancel it halfway.
    SQLAlchemy's exit closes in a task of its own, shielded from cancellation: three turns of the event
    loop between a cold read's rows and its reader, and under load each turn runs the other requests'
    ready work. A session in a transaction (behind a pooler) is closed by SQLAlchemy's exit."""
    made = db()
    if not isinstance(made, AsyncSession):  # a shared session's lender: it knows how its sessions end
        async with made as session:
            yield await reads_only(session)
        return
    try:
        autocommit = await _autocommits(made)
        yield made
    except BaseException:
        await made.__aexit__(None, None, None)
        raise
    if autocommit:
        await made.close()
    else:
        await made.__aexit__(None, None, None)


async def create_database_if_missing(url: str) -> None:
    """Create a PostgreSQL database named by `url` unless it exists (SQLite files create themselves)."""
    if not url.startswith("postgresql"):
        return
    from sqlalchemy import text

    base, name = url.rsplit("/", 1)
    admin = create_async_engine(base + "/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            exists = await conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            if not exists:
                await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()
