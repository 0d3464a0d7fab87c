"""The ways resolvers write: a transaction whose exit means committed *and* invalidated, or one statement sent
on its own with the same guarantees (`one_statement`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, AsyncSessionTransaction

from cache.refresh import refreshing_now
from orm.replicas import use_primary
from resolvers.deps import Deps
from triggers.changes import Changes
from triggers.listeners import Sink, announce, committed, settle

T = TypeVar("T")


@asynccontextmanager
async def transaction(deps: Deps) -> AsyncIterator[AsyncSession]:
    """Commits on success, rolls back on error. Before the commit it announces the live structures the
    write will change; after it, it waits until the triggers' invalidation and live updates have reached
    Redis, so a response sent after this block never lets a reader see the old data.

    A request cancelled (its timeout, its client gone) before the commit rolls back; once the commit has
    begun, it and its invalidation run to the end regardless, since PostgreSQL may already hold the write
    and a cache left unaware of it would serve stale data."""
    async with deps.db() as session:
        use_primary(session)  # its reads too: they may read what it wrote
        begun = await session.begin()
        try:
            yield session
            await announce(session)
        except BaseException:
            await begun.rollback()
            raise
        finishing = asyncio.ensure_future(_commit_and_settle(session, begun))
        try:
            await asyncio.shield(finishing)
        except asyncio.CancelledError:
            await finishing
            raise


async def _commit_and_settle(session: AsyncSession, begun: AsyncSessionTransaction) -> None:
    await begun.commit()
    await settle(session)


async def one_statement(sink: Sink, changes: Changes, send: Callable[[], Awaitable[T]],
                        sent: Callable[[T, Changes], None] | None = None) -> T:
    """A write that is a single statement, its own transaction (PostgreSQL commits it as it ends), sent
    without a session (orm/driver.py), with what `transaction` does around a commit: `changes` (what the
    rules say its rows touch, triggers.listeners.record_row) announced before it is sent, withdrawn if it
    fails, applied once it is done; `sent` adds what only its answer tells (a row it may or may not have
    written). Once sent it runs to the end and is applied, whatever happens to the request, as a commit is."""
    announced = bool(changes.live.by_entity) and await sink.announce(changes)

    async def send_and_settle() -> T:
        try:
            answer = await send()
        except BaseException:
            if announced:
                sink.withdraw(changes)  # never applied: let readers build again
            raise
        if sent is not None:
            sent(answer, changes)
        if (refreshing := refreshing_now()) is not None:
            refreshing.closing = True  # answered once this is applied: its graces would be ended at once
        task = committed(sink, changes, announced=announced)
        if task is not None:
            await task
        return answer

    finishing = asyncio.ensure_future(send_and_settle())
    try:
        return await asyncio.shield(finishing)
    except asyncio.CancelledError:
        await finishing
        raise


async def locked_row(session: AsyncSession, model: Any, key: Any) -> Any:
    """The row of `model` with primary key `key`, or None, locked until the transaction ends (FOR UPDATE;
    SQLite, which takes writes one at a time, has no such clause and needs none). A toggle reads a row and
    then acts on what it read: the same reader's requests sent together (two tabs, a retry) would each
    read it and each act, two deletes of one follow, the second deleting nothing while its listener still
    moved the counts (found by bench/soak.py). Locked, the second waits for the first to commit and reads
    what it left."""
    return await session.get(model, key, with_for_update=True, populate_existing=True)


async def added_once(session: AsyncSession, row: Any) -> bool:
    """Add `row` in a savepoint: False when a row with its key is there already, written since this
    transaction looked (the same reader's requests sent together: two tabs, a retry). The caller read that
    there was none, and the loser of that race keeps the winner's row instead of failing the request."""
    try:
        async with session.begin_nested():
            session.add(row)
    except IntegrityError:
        return False
    return True


async def sync_rows(session: AsyncSession, owner: Any, owner_id: int, wanted: dict[int, dict[str, Any]],
                    column: str) -> None:
    """Make the rows of a link table whose `owner` column (ShoutTopic.shout, DraftTopic.draft, …) is
    `owner_id` exactly `wanted` (the other column's value: the row's other values), row by row: the
    triggers then know which rows changed (a bulk DELETE would not say)."""
    model = owner.class_
    existing = {getattr(row, column): row for row in
                (await session.scalars(select(model).where(owner == owner_id))).all()}
    for other, row in existing.items():
        if other not in wanted:
            await session.delete(row)
        else:
            for name, value in wanted[other].items():
                setattr(row, name, value)
    session.add_all(model(**{owner.key: owner_id, column: other}, **values)
                    for other, values in wanted.items() if other not in existing)
