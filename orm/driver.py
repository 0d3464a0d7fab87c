"""Reads straight on the driver: the statements every cold page runs (entities by id, a page of reactions, a
list of shouts' ids, a slug's id) sent to asyncpg as they are, without SQLAlchemy's session, ORM and result
layers; and, on the primary (`primary=True`), a comment's two statements, each its own transaction
(resolvers/comment_driver.py).

For such a read those layers cost several times the driver's own work (bench/RESULTS.md, figures behind
the code's rules), and a cold page of reactions runs three such statements. A statement is compiled once
(`orm.seam.driver_sql`: an IN list is one array parameter; one built per request is compiled once per shape,
`DriverSQLByShape`) and asyncpg prepares its text once per connection.

What SQLAlchemy did for these reads is done here too: the connection comes from the engine's pool (lent
without a checkout when the pool holds one for such reads, checked as a checkout would: orm/held.py), a
read goes where orm/replicas.py routes it and is read again on the primary if a replica fails it, a
connection the error leaves closed is invalidated, and the engine's cursor event listeners see the statement
(tests and benches count statements; error reports and traces make it a span).
Without asyncpg (SQLite), behind a transaction pooler (a statement's prepare and execute may reach two
server connections outside a transaction) or in a shared session, a read goes through a session as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from orm.engine import SessionFactory, behind_pooler, read_session
from orm.errors import is_recovery_conflict, is_unavailable
from orm.held import discard, give_back, lend
from orm.replicas import ReadRouting
from orm.seam import DriverSQLByShape, cursor_events
from orm.search import is_postgres
from telemetry import metrics

log = logging.getLogger(__name__)
# Shapes of statements built per request kept compiled (a page's filters and order make a few hundred).
COMPILED_SHAPES = 500


class Reads(Protocol):
    """Where a read's statements go: a session (`SessionReads`) or the driver (`DriverReads`)."""

    postgres: bool

    async def rows(self, statement: Select[Any], params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The rows `statement` selects, each a dict of its columns by name, in order."""
        ...


class SessionReads:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.postgres = is_postgres(session)

    async def rows(self, statement: Select[Any], params: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [dict(row) for row in (await self.session.execute(statement, dict(params))).mappings()]


class DriverReads:
    postgres = True

    def __init__(self, engine: AsyncEngine, routing: ReadRouting | None) -> None:
        self.engine = engine
        self.routing = routing
        # What each statement compiles to, while it lives: one built once per process (a module's constant, a
        # bounded cache's) is looked up by itself; one built for a request, by its shape.
        self._compiled: weakref.WeakKeyDictionary[Select[Any], tuple[str, list[str], dict[str, Any]]] = (
            weakref.WeakKeyDictionary())
        self._by_shape = DriverSQLByShape(engine.dialect, COMPILED_SHAPES)

    async def rows(self, statement: Select[Any], params: Mapping[str, Any], *,
                   primary: bool = False) -> list[dict[str, Any]]:
        """`primary`: on the primary, whatever routes the reads (a write's statement, or a read it acts on)."""
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = self._compiled[statement] = self._by_shape(statement)
        sql, names, constants = compiled
        arguments = [params[name] if name in params else constants[name] for name in names]
        engine = self.engine if self.routing is None or primary else await self.routing.engine_for_read()
        try:
            return await _fetch(engine, sql, arguments)
        except Exception as error:
            if engine is self.engine or not (is_recovery_conflict(error) or is_unavailable(error)):
                raise
            assert self.routing is not None
            if not is_recovery_conflict(error):  # it cancelled the read to replay on: it is well, not lost
                self.routing.lost(engine, error)
            log.info("a read on a replica failed (%s); reading it on the primary", error)
            metrics.REPLICA_READS_RETRIED.inc()
            return await _fetch(self.engine, sql, arguments)


async def _fetch(engine: AsyncEngine, sql: str, arguments: list[Any]) -> list[dict[str, Any]]:
    connection = await lend(engine)  # orm/held.py: a connection held for such reads, or one checked out
    driver = connection.driver_connection
    try:
        with cursor_events(engine.sync_engine, connection, sql, arguments):
            records = await driver.fetch(sql, *arguments)  # type: ignore[union-attr]
    except asyncio.CancelledError:
        await discard(connection)  # cut off mid-statement: what state it is in is not known
        raise
    except Exception as error:
        metrics.DATABASE_ERRORS.labels(type(error).__name__).inc()
        if driver.is_closed():  # type: ignore[union-attr]  # lost: not back to the pool
            await discard(connection)
            if not is_unavailable(error):
                raise ConnectionError(f"the database connection was lost: {error}") from error
        else:  # a statement's error (a bad value, a cancelled query): the connection is as it was
            await give_back(connection)
        raise
    await give_back(connection)
    return [dict(record) for record in records]


_DRIVERS: weakref.WeakKeyDictionary[async_sessionmaker[AsyncSession], DriverReads | None] = (
    weakref.WeakKeyDictionary())


def driver_of(db: SessionFactory) -> DriverReads | None:
    """`db`'s reads on the driver, if they can go there (asyncpg, no transaction pooler, not a shared session)."""
    if not isinstance(db, async_sessionmaker):
        return None
    if db not in _DRIVERS:
        engine: AsyncEngine = db.kw["bind"]
        usable = engine.dialect.driver == "asyncpg" and not behind_pooler(engine)
        _DRIVERS[db] = DriverReads(engine, db.kw.get("routing")) if usable else None
    return _DRIVERS[db]


def on_the_driver(db: SessionFactory) -> bool:
    """Whether `db`'s reads go on the driver."""
    return driver_of(db) is not None


@contextlib.asynccontextmanager
async def reads(db: SessionFactory) -> AsyncIterator[Reads]:
    """Reads of `db`: on the driver where they can be, else in a read session (orm.engine.read_session)."""
    driver = driver_of(db)
    if driver is not None:
        yield driver
        return
    async with read_session(db) as session:
        yield SessionReads(session)


async def first_column(db: SessionFactory, statement: Select[Any],
                       params: Mapping[str, Any] | None = None) -> list[Any]:
    """The first column of each row `statement` selects (a list's ids), read where `reads` reads."""
    async with reads(db) as reading:
        return [next(iter(row.values())) for row in await reading.rows(statement, params or {})]
