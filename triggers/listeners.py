"""The listeners: record during the flush, act after the commit, forget on rollback.

Mapper events (`after_insert`, `after_update`, `after_delete`) and bulk statements (`do_orm_execute`)
only *record* into `session.info` what the rules say a change touches. Just before the commit the writer
announces the entities whose live structures it will change (`announce`), so that no reader stores a
structure built from a snapshot that may hold this write. `after_commit` hands the record to the
session's sink, which invalidates at once, applies the live changes and marks counters for
revalidation; the writer awaits that (`settle`) before answering. A rollback drops the
record: the cache is never touched by a write that did not happen.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, Protocol, cast

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapper, ORMExecuteState, Session, SessionTransaction, object_session

from orm.engine import SessionFactory, make_session_factory
from orm.replicas import ReadRouting
from telemetry import metrics
from triggers.changes import Changes
from triggers.live_rules import LIVE_BULK, LIVE_RULES, Event
from triggers.related import INFO_KNOWN, one_event
from triggers.rules import BULK, BULK_MARKS, RULES

log = logging.getLogger(__name__)
# session.info keys: the sink that receives committed changes, the tasks (one per commit) that deliver
# them and that `settle` awaits before a response goes out, and what a flush recorded before the commit
INFO_SINK = "cache_sink"
INFO_TASKS = "cache_tasks"
INFO_PENDING = "cache_changes"
INFO_ANNOUNCED = "live_announced"
INFO_SAVEPOINTS = "savepoint_messages"


class Sink(Protocol):
    def schedule(self, changes: Changes, *, announced: bool) -> asyncio.Task[None] | None: ...

    async def announce(self, changes: Changes) -> bool: ...

    def withdraw(self, changes: Changes) -> None: ...


def writing_sessions(engine: AsyncEngine, sink: Sink, *,
                     routing: ReadRouting | None = None) -> async_sessionmaker[AsyncSession]:
    """Sessions whose commits `sink` receives (sessions made without one record nothing); with `routing`,
    their reads may go to replicas (orm/replicas.py)."""
    return make_session_factory(engine, info={INFO_SINK: sink}, routing=routing)


async def settle(session: AsyncSession) -> None:
    """Wait until what this session's commits changed has been invalidated in the cache."""
    tasks = session.sync_session.info.pop(INFO_TASKS, [])
    if tasks:
        await asyncio.gather(*tasks)


def _sink(session: Session) -> Sink | None:
    return session.info.get(INFO_SINK)


def sink_of(db: SessionFactory) -> Sink | None:
    """The sink of the sessions `db` makes (`writing_sessions`), if it makes such sessions."""
    if not isinstance(db, async_sessionmaker):
        return None
    info: dict[str, Any] = db.kw.get("info") or {}
    return info.get(INFO_SINK)


def _pending(session: Session) -> Changes:
    changes = session.info.get(INFO_PENDING)
    if changes is None:
        changes = session.info[INFO_PENDING] = Changes()
    return changes


def _record(event_name: Event, connection: Connection, target: Any) -> None:
    session = object_session(target)
    if session is None or session.info.get(INFO_SINK) is None:
        return
    record_row(_pending(session), event_name, target, connection, session.info.get(INFO_KNOWN))


def record_row(changes: Changes, event_name: Event, target: Any, connection: Connection | None,
               known: dict[tuple[str, int], Any] | None) -> None:
    """What the rules say the change of the row `target` touches, into `changes`. The mapper's events call it
    during a flush; a write sent without the ORM (resolvers/comment_driver.py) calls it with the row it
    writes and no connection, so everything its rules ask of related rows must be in `known`."""
    rule, live_rule = RULES.get(type(target)), LIVE_RULES.get(type(target))
    changes.writes[(type(target).__tablename__, event_name)] += 1
    reads = cast(Connection, connection)  # None: every read the rules make is answered from `known`
    # both rule sets share their reads of related rows, starting from what the writer knows (triggers/related.py)
    with one_event(known):
        if rule is not None:
            rule(target, reads, changes)
        if live_rule is not None:
            live_rule(target, reads, changes.live, event_name)


def _record_insert(_mapper: Mapper[Any], connection: Connection, target: Any) -> None:
    _record("insert", connection, target)


def _record_update(_mapper: Mapper[Any], connection: Connection, target: Any) -> None:
    _record("update", connection, target)


def _record_delete(_mapper: Mapper[Any], connection: Connection, target: Any) -> None:
    _record("delete", connection, target)


def _record_bulk(state: ORMExecuteState) -> None:
    if not (state.is_update or state.is_delete) or state.session.info.get(INFO_SINK) is None:
        return
    mapper = state.bind_mapper
    model = mapper.class_ if mapper is not None else None
    if model in BULK:
        record_bulk(_pending(state.session), model)


def record_statement(session: AsyncSession, model: type) -> None:
    """Rows of `model` written by a statement the mapper does not see (a plain INSERT, a data-modifying CTE):
    recorded as a bulk change of the kind (triggers/rules.py BULK), invalidated at the commit as any."""
    if session.sync_session.info.get(INFO_SINK) is not None:
        record_bulk(_pending(session.sync_session), model)


def record_bulk(changes: Changes, model: type) -> None:
    """Rows of `model` written that nobody names: what `record_statement` records, into `changes`."""
    changes.tag(*BULK[model])
    for kind in BULK_MARKS.get(model, ()):
        changes.mark(kind, "all")
    changes.live.lose(*LIVE_BULK.get(model, ()))


async def announce(session: AsyncSession) -> None:
    """Before the commit: flush, then tell Redis which entities' live structures this write will change.
    Called by the one writing path (resolvers/writes.transaction); a commit that was not announced still
    works, its live changes are then applied as drops (see cache/live/structures.py)."""
    await session.flush()
    sync = session.sync_session
    changes, sink = sync.info.get(INFO_PENDING), _sink(sync)
    if changes and sink is not None and changes.live.by_entity:
        sync.info[INFO_ANNOUNCED] = await sink.announce(changes)


def publish_after_commit(session: AsyncSession, messages: Iterable[tuple[str, bytes]]) -> None:
    """Publish (channel, message) pairs once this session's transaction commits, after its cache
    changes; a rollback drops them with the rest of the record."""
    _pending(session.sync_session).messages.extend(messages)


def _after_commit(session: Session) -> None:
    if session.in_nested_transaction():
        # SQLAlchemy fires this for RELEASE SAVEPOINT too (the savepoint still current): nothing is
        # committed yet, and applying the record now would invalidate before the rows change, so that a
        # reader could store the old row under the new generation. The transaction's commit applies it.
        return
    session.info.pop(INFO_SAVEPOINTS, None)
    session.info.pop(INFO_KNOWN, None)  # what the writer knew holds within its transaction only
    changes = session.info.pop(INFO_PENDING, None)
    announced = bool(session.info.pop(INFO_ANNOUNCED, False))
    sink = _sink(session)
    if changes is None or sink is None:
        return
    task = committed(sink, changes, announced=announced)
    if task is not None:
        session.info.setdefault(INFO_TASKS, []).append(task)


def committed(sink: Sink, changes: Changes, *, announced: bool) -> asyncio.Task[None] | None:
    """Hand what a committed write changed to `sink`: the task that invalidates and applies it, if any."""
    for (entity, action), rows in changes.writes.items():
        metrics.WRITES.labels(entity, action).inc(rows)
    return sink.schedule(changes, announced=announced) if changes else None


def _after_rollback(session: Session) -> None:
    if session.in_nested_transaction():
        # SQLAlchemy fires this for ROLLBACK TO SAVEPOINT too (the savepoint still current): the outer
        # transaction goes on and its record must stay; `_after_soft_rollback` trims the savepoint's part.
        return
    session.info.pop(INFO_SAVEPOINTS, None)
    session.info.pop(INFO_KNOWN, None)
    changes = session.info.pop(INFO_PENDING, None)
    sink = _sink(session)
    if session.info.pop(INFO_ANNOUNCED, False) and changes and sink is not None:
        sink.withdraw(changes)  # the announced write will never be applied: let readers build again


def _after_transaction_create(session: Session, transaction: SessionTransaction) -> None:
    if transaction.nested and _sink(session) is not None:  # where this savepoint's messages will start
        pending = _pending(session)
        session.info.setdefault(INFO_SAVEPOINTS, {})[transaction] = (len(pending.messages), pending.writes.copy())


def _after_soft_rollback(session: Session, previous: SessionTransaction) -> None:
    # A savepoint's rollback keeps the cache record (invalidating too much is safe, too little is not)
    # but not its messages, nor its rows in the write counts: they did not happen.
    if not previous.nested:
        _after_rollback(session)
        return
    start = session.info.get(INFO_SAVEPOINTS, {}).pop(previous, None)
    changes = session.info.get(INFO_PENDING)
    if start is not None and changes is not None:
        messages_before, writes_before = start
        del changes.messages[messages_before:]
        changes.writes = writes_before


def register() -> None:
    """Install the listeners (idempotent). Only the app factory (and tests) call this.

    Not mutated by the mutation pass: mutmut forks each mutant's run from a process that installed the
    listeners already, so a mutant of this body never runs there, and each one sat through the whole
    selection to survive (mutation/triggers.listeners.md explains the three recorded)."""
    if event.contains(Session, "after_commit", _after_commit):  # pragma: no mutate
        return  # pragma: no mutate
    for model in dict.fromkeys([*RULES, *LIVE_RULES]):  # pragma: no mutate
        event.listen(model, "after_insert", _record_insert)  # pragma: no mutate
        event.listen(model, "after_update", _record_update)  # pragma: no mutate
        event.listen(model, "after_delete", _record_delete)  # pragma: no mutate
    event.listen(Session, "do_orm_execute", _record_bulk)  # pragma: no mutate
    event.listen(Session, "after_commit", _after_commit)  # pragma: no mutate
    event.listen(Session, "after_rollback", _after_rollback)  # pragma: no mutate
    event.listen(Session, "after_soft_rollback", _after_soft_rollback)  # pragma: no mutate
    event.listen(Session, "after_transaction_create", _after_transaction_create)  # pragma: no mutate
