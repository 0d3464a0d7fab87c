"""The connection pool (orm/engine.py). Disconnect handling: a pooled connection that died while it sat
idle past the threshold is pinged and replaced before use; the control, a threshold it did not reach,
shows the statement would otherwise have failed on the dead connection. Read sessions: one in autocommit
gives its connection back where it ends, without a task of its own, and whatever ends it. JSON columns read
by orjson, and by the stdlib where orjson refuses a value."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest
from sqlalchemy import JSON, cast, literal, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import base as sqlalchemy_asyncio

from orm.driver import reads
from orm.engine import json_loads, make_engine, make_session_factory, read_session


@pytest.mark.parametrize(("ping_after_idle", "survives"), [(0.0, True), (3600.0, False)])
async def test_a_connection_killed_while_idle_is_replaced_before_use(
        migrated_url: str, ping_after_idle: float, survives: bool) -> None:
    engine = make_engine(migrated_url, pool_size=1, ping_after_idle=ping_after_idle)
    killer = make_engine(migrated_url, pool_size=1)
    try:
        async with engine.connect() as conn:
            pid = await conn.scalar(text("SELECT pg_backend_pid()"))
        async with killer.connect() as conn:  # the server ends the pooled connection's backend
            assert await conn.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        try:
            async with engine.connect() as conn:
                assert await conn.scalar(text("SELECT 1")) == 1
            served = True
        except DBAPIError as exc:
            assert exc.connection_invalidated
            served = False
        assert served is survives
        async with engine.connect() as conn:  # either way the pool recovers for the next request
            assert await conn.scalar(text("SELECT 1")) == 1
    finally:
        await engine.dispose()
        await killer.dispose()


async def test_an_autocommit_read_session_is_closed_where_it_ends(migrated_url: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No task (SQLAlchemy's exit closes in one: three turns of the loop before the reader goes on); the
    connection is back in the pool as the block ends. The control: SQLAlchemy's exit, for a session it
    leaves in a transaction (behind a pooler), does make its task."""
    engine = make_engine(migrated_url, pool_size=1)
    tasks: list[Any] = []
    create_task = asyncio.create_task

    def counted(coro: Any, **options: Any) -> asyncio.Task[Any]:
        tasks.append(coro)
        return create_task(coro, **options)

    monkeypatch.setattr(sqlalchemy_asyncio.asyncio, "create_task", counted)
    try:
        async with read_session(make_session_factory(engine)) as session:
            assert await session.scalar(text("SELECT 1")) == 1
            assert engine.pool.checkedout() == 1  # type: ignore[attr-defined]
        assert engine.pool.checkedout() == 0 and tasks == []  # type: ignore[attr-defined]
        async with make_session_factory(engine)() as session:  # the control
            await session.scalar(text("SELECT 1"))
        assert len(tasks) == 1
    finally:
        await engine.dispose()


async def test_a_read_session_ended_by_an_error_or_a_cancellation_gives_its_connection_back(
        migrated_url: str) -> None:
    engine = make_engine(migrated_url, pool_size=1)
    factory = make_session_factory(engine)
    try:
        with pytest.raises(DBAPIError):
            async with read_session(factory) as session:
                await session.execute(text("SELECT 1/0"))
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]

        reading_started = asyncio.Event()

        async def slow() -> None:
            async with read_session(factory) as session:
                reading_started.set()
                await session.execute(text("SELECT pg_sleep(5)"))

        reading = asyncio.ensure_future(slow())
        await reading_started.wait()
        await asyncio.sleep(0.05)  # the statement is sent
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
        async with read_session(factory) as session:  # and the pool serves the next reader
            assert await session.scalar(text("SELECT 1")) == 1
    finally:
        await engine.dispose()


async def test_json_columns_are_read_by_orjson_and_what_it_refuses_by_the_stdlib(engine: AsyncEngine) -> None:
    """A JSON column's value reads as orjson reads it, on the driver and in a session, and one orjson refuses
    (a number past a double's range) as the stdlib reads it instead of failing the row."""
    text_of = '[{"url": "https://example.org", "n": 1e400}, {"title": "Всё"}]'
    expected = json.loads(text_of)
    assert expected[0]["n"] == float("inf") and json_loads(text_of) == expected
    assert json_loads('{"n": [1, 2.5, "три"]}') == orjson.loads('{"n": [1, 2.5, "три"]}')
    statement = select(cast(literal(text_of), JSON).label("value"))
    async with reads(make_session_factory(engine)) as reading:
        assert (await reading.rows(statement, {}))[0]["value"] == expected
    async with engine.connect() as connection:
        assert (await connection.execute(text("SELECT CAST(:v AS json)"), {"v": text_of})).scalar() == expected
