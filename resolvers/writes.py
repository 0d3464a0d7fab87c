"""The one way resolvers write: a transaction whose exit means committed *and* invalidated."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession

from orm.engine import settle
from resolvers.deps import Deps
from triggers.listeners import announce


@asynccontextmanager
async def transaction(deps: Deps) -> AsyncIterator[AsyncSession]:
    """Commits on success, rolls back on error. Before the commit it announces the live structures the
    write will change; after it, it waits until the triggers' invalidation and live updates have reached
    Redis, so a response sent after this block never lets a reader see the old data."""
    async with deps.db() as session:
        async with session.begin():
            yield session
            await announce(session)
        await settle(session)
