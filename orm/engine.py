"""Engine and session factories. Nothing here runs at import time: the app's lifespan (or a CLI
command, or a test fixture) calls these and owns what they return."""

from __future__ import annotations

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    # WAL lets readers run beside the single writer; foreign keys are off by default in SQLite.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str, *, pool_size: int = 10, echo: bool = False) -> AsyncEngine:
    if url.startswith("sqlite"):
        engine = create_async_engine(url, echo=echo)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(
        url, echo=echo, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
    )


def make_session_factory(engine: AsyncEngine, *, sink: object | None = None) -> async_sessionmaker[AsyncSession]:
    """`sink` receives what each commit changed (triggers/); without one, sessions record nothing."""
    info = {INFO_SINK: sink} if sink is not None else {}
    return async_sessionmaker(engine, expire_on_commit=False, info=info)



# session.info keys shared with triggers/: the sink that receives committed changes, and the tasks
# (one per commit) that deliver them; `settle` awaits those before a response goes out.
INFO_SINK = "cache_sink"
INFO_TASKS = "cache_tasks"


async def settle(session: AsyncSession) -> None:
    """Wait until what this session's commits changed has been invalidated in the cache."""
    import asyncio

    tasks = session.sync_session.info.pop(INFO_TASKS, [])
    if tasks:
        await asyncio.gather(*tasks)
