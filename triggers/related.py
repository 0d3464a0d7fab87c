"""Rows related to the row being flushed (a shout's authors and topics, a reaction's author), read by
both rule sets (triggers/rules.py and triggers/live_rules.py) with the flush's connection.

The answers are shared for the length of one row event only (`triggers.listeners._record` opens the
scope): both rule sets, and a rule's before and after states, ask the same questions of the same rows
at the same moment, so one statement serves them all. Nothing outlives the event, so a later event of
the same flush, which may follow inserts of those related rows, reads them afresh.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from orm import Reaction, ShoutAuthor, ShoutTopic

_answers: contextvars.ContextVar[dict[tuple[str, int], Any] | None] = contextvars.ContextVar(
    "related_answers", default=None)


@contextlib.contextmanager
def one_event() -> Iterator[None]:
    token = _answers.set({})
    try:
        yield
    finally:
        _answers.reset(token)


def _shared(question: str, entity_id: int, ask: Callable[[], Any]) -> Any:
    answers = _answers.get()
    if answers is None:
        return ask()
    key = (question, entity_id)
    if key not in answers:
        answers[key] = ask()
    return answers[key]


def shout_authors(conn: Connection, shout_id: int) -> list[int]:
    return _shared("shout_authors", shout_id, lambda: list(
        conn.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == shout_id))))


def shout_topics(conn: Connection, shout_id: int) -> list[int]:
    return _shared("shout_topics", shout_id, lambda: list(
        conn.scalars(select(ShoutTopic.topic).where(ShoutTopic.shout == shout_id))))


def reaction_author(conn: Connection, reaction_id: int) -> int | None:
    return _shared("reaction_author", reaction_id, lambda: conn.scalar(
        select(Reaction.created_by).where(Reaction.id == reaction_id)))
