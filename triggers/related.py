"""Rows related to the row being flushed (a shout's authors, topics and whether it is public, a reaction's
author), read by both rule sets (triggers/rules.py and triggers/live_rules.py) with the flush's connection.

The answers are shared for the length of one row event only (`triggers.listeners._record` opens the
scope): both rule sets, and a rule's before and after states, ask the same questions of the same rows
at the same moment, so one statement serves them all. Nothing outlives the event, so a later event of
the same flush, which may follow inserts of those related rows, reads them afresh.

A writer that has read a shout's facts in its transaction already, and changes none of them (a reaction
written on it), hands them over (`known_shout`): every event of its session starts from them, and the
statement each write would wait for is not sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import bindparam, literal, select, union_all
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter

from ambient import RELATED_ANSWERS
from orm import Reaction, Shout, ShoutAuthor, ShoutTopic
from orm.stats import is_listed

T = TypeVar("T")

# Session.info key: the answers a writer handed over (`known_shout`), which its events start from.
INFO_KNOWN = "related_known"


@contextlib.contextmanager
def one_event(known: dict[tuple[str, int], Any] | None = None) -> Iterator[None]:
    token = RELATED_ANSWERS.set(dict(known) if known else {})
    try:
        yield
    finally:
        RELATED_ANSWERS.reset(token)


def _shared(question: str, entity_id: int, ask: Callable[[], T]) -> T:
    answers = RELATED_ANSWERS.get()
    if answers is None:
        return ask()
    key = (question, entity_id)
    if key not in answers:
        answers[key] = ask()
    found: T = answers[key]  # what `ask` answered for this key
    return found


@dataclass(frozen=True, slots=True)
class ShoutFacts:
    authors: list[int]
    topics: list[int]
    listed: bool  # public (orm.stats.is_listed)


_AUTHOR, _TOPIC, _LISTED = 1, 2, 3


_SHOUT: BindParameter[int] = bindparam("shout")
# Built once (each write's rules ask it): by the parameter `shout`.
_SHOUT_FACTS = union_all(
    select(literal(_AUTHOR), ShoutAuthor.author).where(ShoutAuthor.shout == _SHOUT),
    select(literal(_TOPIC), ShoutTopic.topic).where(ShoutTopic.shout == _SHOUT),
    select(literal(_LISTED), Shout.id).where(Shout.id == _SHOUT, is_listed()))


def shout_facts(conn: Connection, shout_id: int) -> ShoutFacts:
    """A shout's authors, topics and whether it is public, in one statement: a reaction's rules ask all
    three of its shout, and each statement is a round trip of the write that waits for it."""
    def ask() -> ShoutFacts:
        rows = conn.execute(_SHOUT_FACTS, {"shout": shout_id}).all()
        return ShoutFacts([i for what, i in rows if what == _AUTHOR], [i for what, i in rows if what == _TOPIC],
                          any(what == _LISTED for what, _ in rows))
    return _shared("shout", shout_id, ask)


def known_shout(info: dict[str, Any], shout_id: int, facts: ShoutFacts) -> None:
    """`facts` of a shout, read by the writer of the session whose `info` this is, in its transaction, which
    changes none of them: its rules take them instead of reading them again."""
    info.setdefault(INFO_KNOWN, {})[("shout", shout_id)] = facts


def shout_authors(conn: Connection, shout_id: int) -> list[int]:
    return shout_facts(conn, shout_id).authors


def shout_topics(conn: Connection, shout_id: int) -> list[int]:
    return shout_facts(conn, shout_id).topics


def shout_listed(conn: Connection, shout_id: int) -> bool:
    return shout_facts(conn, shout_id).listed


_REACTION_AUTHOR = select(Reaction.created_by).where(Reaction.id == bindparam("reaction"))


def reaction_author(conn: Connection, reaction_id: int) -> int | None:
    def ask() -> int | None:
        author: int | None = conn.scalar(_REACTION_AUTHOR, {"reaction": reaction_id})
        return author
    return _shared("reaction_author", reaction_id, ask)
