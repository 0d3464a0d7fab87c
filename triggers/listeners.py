"""The listeners: record during the flush, act after the commit, forget on rollback.

Mapper events (`after_insert`, `after_update`, `after_delete`) and bulk statements (`do_orm_execute`)
only *record* into `session.info` what the rules say a change touches. `after_commit` hands the record
to the session's sink, which invalidates at once and marks counters for revalidation; the writer awaits
that (`orm.engine.settle`) before answering. A rollback drops the record: the cache is never touched by
a write that did not happen.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapper, ORMExecuteState, Session, SessionTransaction, object_session

from orm.engine import INFO_SINK, INFO_TASKS
from triggers.changes import Changes
from triggers.rules import BULK, BULK_MARKS, RULES

log = logging.getLogger(__name__)
INFO_PENDING = "cache_changes"


class Sink(Protocol):
    def schedule(self, changes: Changes) -> asyncio.Task[None] | None: ...


def _pending(session: Session) -> Changes:
    changes = session.info.get(INFO_PENDING)
    if changes is None:
        changes = session.info[INFO_PENDING] = Changes()
    return changes  # type: ignore[no-any-return]


def _record_row(_mapper: Mapper[Any], connection: Connection, target: Any) -> None:
    session = object_session(target)
    if session is None or session.info.get(INFO_SINK) is None:
        return
    rule = RULES.get(type(target))
    if rule is not None:
        rule(target, connection, _pending(session))


def _record_bulk(state: ORMExecuteState) -> None:
    if not (state.is_update or state.is_delete) or state.session.info.get(INFO_SINK) is None:
        return
    mapper = state.bind_mapper
    model = mapper.class_ if mapper is not None else None
    if model not in BULK:
        return
    changes = _pending(state.session)
    changes.tag(*BULK[model])
    for kind in BULK_MARKS.get(model, ()):
        changes.mark(kind, "all")


def _after_commit(session: Session) -> None:
    changes = session.info.pop(INFO_PENDING, None)
    sink = session.info.get(INFO_SINK)
    if not changes or sink is None:
        return
    task = sink.schedule(changes)
    if task is not None:
        session.info.setdefault(INFO_TASKS, []).append(task)


def _after_rollback(session: Session) -> None:
    session.info.pop(INFO_PENDING, None)


def _after_soft_rollback(session: Session, previous: SessionTransaction) -> None:
    # A savepoint's rollback keeps the record: invalidating too much is safe, too little is not.
    if not previous.nested:
        session.info.pop(INFO_PENDING, None)


def register() -> None:
    """Install the listeners (idempotent). Only the app factory (and tests) call this."""
    if event.contains(Session, "after_commit", _after_commit):
        return
    for model in RULES:
        for name in ("after_insert", "after_update", "after_delete"):
            event.listen(model, name, _record_row)
    event.listen(Session, "do_orm_execute", _record_bulk)
    event.listen(Session, "after_commit", _after_commit)
    event.listen(Session, "after_rollback", _after_rollback)
    event.listen(Session, "after_soft_rollback", _after_soft_rollback)
