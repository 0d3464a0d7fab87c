"""Whether a PostgreSQL URL leads to a transaction pooler (PgBouncer with `pool_mode = transaction`), which
hands each transaction whichever server connection is free: the prepared statements asyncpg names on one
are missing on the next ("prepared statement ... does not exist" / "already exists"), and every write would
fail under load unless DB_TRANSACTION_POOLER tells the engine (orm/engine.py). The start asks, so that a
missing setting stops it, naming the setting, instead of answering writes with errors later.

Two client connections tell: the first asks for its backend's pid, then the second asks for its own inside
a transaction, and the first asks again meanwhile. Straight to PostgreSQL each connection keeps its backend
(two pids, the first one's unchanged); a session pooler too. A transaction pooler lends the server connection
the first one just freed to the second (PgBouncer reuses the last one freed first), or the first one gets
another: a pid shared, or changed. A prepared statement that collides on the way says the same.
"""

from __future__ import annotations

from typing import Any

from asyncpg.exceptions import DuplicatePreparedStatementError, InvalidSQLStatementNameError
from sqlalchemy.ext.asyncio import AsyncEngine

PID = "SELECT pg_backend_pid()"


async def shares_server_connections(engine: AsyncEngine) -> bool:
    """Whether `engine`'s database answers through a transaction pooler (see the module's docstring)."""
    if engine.dialect.name != "postgresql":
        return False
    async with engine.connect() as one, engine.connect() as two:
        first, second = await _driver(one), await _driver(two)
        try:
            before = await first.fetchval(PID)
            async with second.transaction():
                other = await second.fetchval(PID)
                after = await first.fetchval(PID)
        except (DuplicatePreparedStatementError, InvalidSQLStatementNameError):
            return True
    return bool(other == before or after != before)


async def _driver(connection: Any) -> Any:
    """asyncpg's own connection under a SQLAlchemy one, used before SQLAlchemy began a transaction on it."""
    raw = await connection.get_raw_connection()
    return raw.driver_connection
