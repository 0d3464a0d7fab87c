"""SQLAlchemy past its public API: every such use of the project is here, and only here, each with a
canary in `tests/schema/test_seams.py` that fails naming SQLAlchemy, the internal and what to do.

Routing a read to a replica (orm/replicas.py) happens in `Session.get_bind`, which SQLAlchemy calls
synchronously, inside the greenlet its asyncio extension runs a session's work in; deciding needs a Redis
read and maybe a replica's answer, both awaited. SQLAlchemy's own drivers do exactly this with
`sqlalchemy.util.await_` (`await_only` before 2.1), which its documentation describes but does not list
as public. Whether a SELECT locks rows (FOR UPDATE: the primary's business) is its `_for_update_arg`.

Reads sent straight to asyncpg (orm/driver.py) need a statement's SQL as asyncpg takes it. SQLAlchemy
compiles an expanding IN (a list bound at execution) to a `__[POSTCOMPILE_name]` placeholder it fills in
per call; `driver_sql` turns each into one array parameter instead, and `DriverSQLByShape` keeps what a
statement compiles to by its cache key (`_generate_cache_key`), whose values it binds as SQLAlchemy's own
compiled cache does (`construct_params(extracted_parameters=...)`). And the engine's
cursor event listeners (statement counters in tests and benches, error reports' and traces' spans) are
called through the engine's `dispatch`, as SQLAlchemy calls them around a statement it sends. Connections
lent to those reads without the pool's checkout (orm/held.py) are checked as the checkout checks them:
whether the pool was invalidated since they connected (`_invalidate_time`, `_ConnectionRecord.starttime`),
and which pool they came from (`_pool`); the pool that holds them (`HoldingPool`) takes one back in
`QueuePool._do_get`, where a checkout takes its connection, and logs under SQLAlchemy's loggers by
`_sqla_logger_namespace`.

The SQLAlchemy versions these were written against are the bounds in `pyproject.toml`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar, cast

from sqlalchemy import Select
from sqlalchemy.engine import Compiled, Connection, Dialect, Engine
from sqlalchemy.pool import Pool, PoolProxiedConnection
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import LRUCache, await_

T = TypeVar("T")


def await_in_session(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` from synchronous code a session runs for an AsyncSession (`Session.get_bind`)."""
    return await_(awaitable)


def locks_rows(select: Select[Any]) -> bool:
    """Whether `select` is a SELECT ... FOR UPDATE / FOR SHARE."""
    return select._for_update_arg is not None


_EXPANDING = re.compile(r"(NOT )?IN \(__\[POSTCOMPILE_(\w+)\]\)")


def driver_sql(select: Select[Any], dialect: Dialect) -> tuple[str, list[str], dict[str, Any]]:
    """`select` compiled for asyncpg: its SQL with `$n` parameters, each parameter's name in `$n` order,
    and the values the statement holds itself (constants, and lists given to `in_`). An expanding IN is
    `= ANY($n)` (NOT IN: `<> ALL($n)`), one array parameter, so that the text is the same whatever the
    list's length (asyncpg prepares it once per connection) and an empty list selects nothing (or, NOT IN,
    everything) as SQLAlchemy's empty IN does."""
    compiled = select.compile(dialect=dialect)
    return (*_driver_text(compiled), compiled.params)


def _driver_text(compiled: Compiled) -> tuple[str, list[str]]:
    """`driver_sql`'s SQL and parameter names of a compiled statement."""
    names = [name for name in compiled.positiontup or () if not compiled.binds[name].expanding]  # type: ignore[attr-defined]
    numbers: dict[str, int] = {}

    def one_array(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in numbers:
            names.append(name)
            numbers[name] = len(names)
        return f"{'<> ALL' if match.group(1) else '= ANY'}(${numbers[name]})"

    sql = _EXPANDING.sub(one_array, compiled.string)
    if "__[POSTCOMPILE_" in sql:
        raise ValueError(f"a parameter rendered at execution that is not an IN list: {sql}")
    return sql, names


class DriverSQLByShape:
    """`driver_sql` of statements by their shape, the key SQLAlchemy's own compiled cache uses (a statement's
    cache key: its structure, without the values it holds): a statement built for each request (a page's
    filters, order and bounds) is compiled once per shape, not at every read, and takes its values from its
    own key. A statement SQLAlchemy does not cache (no key) is compiled each time. At most `size` shapes are
    kept (the least recently used go)."""

    def __init__(self, dialect: Dialect, size: int) -> None:
        self.dialect = dialect
        self._shapes: LRUCache[Any, tuple[str, list[str], SQLCompiler]] = LRUCache(size)

    def __call__(self, select: Select[Any]) -> tuple[str, list[str], dict[str, Any]]:
        key = select._generate_cache_key()
        if key is None:
            return driver_sql(select, self.dialect)
        known = self._shapes.get(key.key)
        if known is None:
            compiled = cast(SQLCompiler, select.compile(dialect=self.dialect, cache_key=key))
            known = self._shapes[key.key] = (*_driver_text(compiled), compiled)
        sql, names, compiled = known
        # `_check=False`, as `Compiled.params` asks: a parameter given at execution (`ids`) has no value here.
        return sql, names, dict(compiled.construct_params(extracted_parameters=key.bindparams, _check=False))


class DriverStatement:
    """What a cursor event's listeners get for a statement sent without SQLAlchemy, in place of its execution
    context: its dialect, and room for what a listener keeps between a statement's two events (Sentry's and
    OpenTelemetry's SQLAlchemy integrations keep their span on the context)."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect


@contextlib.contextmanager
def cursor_events(engine: Engine, connection: PoolProxiedConnection, sql: str, parameters: Any) -> Iterator[None]:
    """Call the `before_cursor_execute` listeners of `engine` before a statement sent on `connection` (one of
    its pool's) without SQLAlchemy, and its `after_cursor_execute` listeners after it, failed or not: they
    see it as they see any other, with a `Connection` over it and a `DriverStatement` (made only when there
    are listeners: none in production unless error reports or traces are on), and no cursor."""
    before, after = engine.dispatch.before_cursor_execute, engine.dispatch.after_cursor_execute
    if not before and not after:
        yield
        return
    over, context = Connection(engine, connection), DriverStatement(engine.dialect)
    if before:
        before(over, None, sql, parameters, context, False)
    try:
        yield
    finally:
        if after:
            after(over, None, sql, parameters, context, False)


def pool_of(connection: PoolProxiedConnection) -> Pool:
    """The pool `connection` was checked out of (the engine's may have been replaced since: `dispose`)."""
    pool: Pool = connection._pool
    return pool


def invalidated_since_connected(connection: PoolProxiedConnection) -> bool:
    """Whether the pool saw its connections fail (a disconnect: every connection made before is suspect) or
    this one was soft-invalidated, since `connection` connected: what the pool's checkout checks
    (`_ConnectionRecord.get_connection`), for a connection lent without one (orm/held.py)."""
    record = connection._connection_record
    if record is None:  # checked in or detached
        return True
    started = record.starttime
    return bool(pool_of(connection)._invalidate_time > started or record._soft_invalidate_time > started)
