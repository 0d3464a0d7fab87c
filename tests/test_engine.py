"""Disconnect handling of the connection pool (orm/engine.py): a pooled connection that died while it
sat idle past the threshold is pinged and replaced before use; the control, a threshold it did not
reach, shows the statement would otherwise have failed on the dead connection."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from orm.engine import make_engine


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
