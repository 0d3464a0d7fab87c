"""A comment (a reaction other than a vote) on PostgreSQL: two statements sent on the driver (orm/driver.py), not a
session's transaction of six.

Through a session, a comment sent BEGIN, its shout, the comment, its writer's follow of the discussion (in a
savepoint), its notification and COMMIT, and the session's and the ORM's work around each statement cost the worker
more than the rest of the comment did (bench/RESULTS.md, a comment alone and on a busy page). Here:

1. `_TARGET`: the shout, if listed, with its authors and topics (the cache's rules ask them), the comment it
   answers, and the new comment's id, taken from the table's sequence: the rules, and the announcement of the live
   structures they change, need it before the comment is written.
2. The rules run on the comment as the mapper's events run them (`triggers.listeners.record_row`), its live
   structures are announced, and one statement (`resolvers.writes.one_statement`) writes the comment, makes or
   restores its writer's follow of the discussion and stores the notification with its recipients: data-modifying
   CTEs of one SELECT, one transaction. The follow is recorded as the statement reports it.

What the session's path does between the two, this does too: the shout is read, not locked (under READ COMMITTED
either may see it unpublished a moment later), and a reply's comment must be live and of the same shout. Without
the driver (SQLite, a transaction pooler) a comment goes through the session (resolvers/reaction_write.py).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable
from typing import Any

from sqlalchemy import Integer, Select, bindparam, func, insert, select
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.orm import aliased

from orm import Notification, Reaction, Shout, ShoutAuthor, ShoutReactionsFollower, ShoutTopic
from orm.driver import DriverReads
from orm.stats import is_listed
from resolvers.access import ViewerCheck
from resolvers.afterwards import after_answer
from resolvers.deps import Deps
from resolvers.digests import queue_digests
from resolvers.errors import BadInput, NotFound
from resolvers.events import ReactionNotice, stored_recipients
from resolvers.reaction_input import checked_input
from resolvers.writes import one_statement
from triggers.changes import Changes
from triggers.listeners import Sink, record_bulk, record_row
from triggers.related import ShoutFacts

_ANSWERED = aliased(Reaction)
_TARGET = (
    select(Shout.slug, Shout.title, Shout.community,
           select(func.array_agg(ShoutAuthor.author)).where(ShoutAuthor.shout == Shout.id)
           .scalar_subquery().label("authors"),
           select(func.array_agg(ShoutTopic.topic)).where(ShoutTopic.shout == Shout.id)
           .scalar_subquery().label("topics"),
           _ANSWERED.shout.label("answered_shout"), _ANSWERED.deleted_at.label("answered_deleted_at"),
           _ANSWERED.created_by.label("answered_by"),
           func.nextval(func.pg_get_serial_sequence(Reaction.__tablename__, "id")).label("id"))
    .outerjoin(_ANSWERED, _ANSWERED.id == bindparam("reply_to", type_=Integer))
    .where(Shout.id == bindparam("shout", type_=Integer), is_listed()))

# The comment, by the parameters id, kind, shout, reply_to, body, quote, author and now.
_COMMENT = insert(Reaction).values(
    id=bindparam("id", type_=Integer), kind=bindparam("kind"), shout=bindparam("shout", type_=Integer),
    reply_to=bindparam("reply_to", type_=Integer), body=bindparam("body"), quote=bindparam("quote"),
    created_by=bindparam("author", type_=Integer), created_at=bindparam("now", type_=Integer),
).returning(Reaction.id).cte("comment")
# Whoever joins a discussion follows it (Discours: its notifications reach them): made, or restored if deleted;
# the row is returned only then.
_FOLLOWS = ShoutReactionsFollower
_JOINED = (postgres_insert(_FOLLOWS).values(
    follower=bindparam("author", type_=Integer), shout=bindparam("shout", type_=Integer), auto=True,
    created_at=bindparam("now", type_=Integer))
    .on_conflict_do_update(index_elements=[_FOLLOWS.follower, _FOLLOWS.shout], set_={"deleted_at": None},
                           where=_FOLLOWS.deleted_at.is_not(None))
    .returning(_FOLLOWS.created_at, _FOLLOWS.auto)).cte("joined")


@functools.cache  # built once for each notification statement (a module's constant)
def _write_for(together: Select[Any]) -> Select[Any]:
    """A notification's statement (resolvers/events.py `_Recipients.together`) that writes the comment and the
    follow too; each row also says when the follow made or restored was first made (None: untouched)."""
    joined_at = select(_JOINED.c.created_at).scalar_subquery().label("joined_at")
    joined_auto = select(_JOINED.c.auto).scalar_subquery().label("joined_auto")
    return together.add_cte(_COMMENT).add_columns(joined_at, joined_auto)


async def create_comment(deps: Deps, driver: DriverReads, sink: Sink, check: ViewerCheck, reaction: dict[str, Any],
                         now: int) -> dict[str, Any]:
    """`create_reaction` of a kind that is not a vote (resolvers/reaction_write.py). Its first statement depends
    on no one's rights: it is sent while the writer's session is checked, and its rows used once the writer
    and the input pass (`checked_input`, with the same errors as before anything is read)."""
    shout_id, reply_to = reaction["shout"], reaction.get("reply_to")

    def read_target() -> Awaitable[list[dict[str, Any]]]:
        return driver.rows(_TARGET, {"shout": shout_id, "reply_to": reply_to}, primary=True)

    viewer, found = await check.beside(read_target)
    signed_in, kind, body = checked_input(viewer, reaction)
    assert found is not None  # read for whoever is someone
    if not found:
        raise NotFound("no such shout", field="shout")
    target = found[0]
    if reply_to is not None and (target["answered_shout"] != shout_id or target["answered_deleted_at"] is not None):
        raise BadInput("reply_to is not a reaction of this shout", field="reply_to")
    created = Reaction(id=target["id"], kind=kind, shout=shout_id, reply_to=reply_to, body=body,
                       quote=reaction.get("quote"), created_by=signed_in.author_id, created_at=now)
    authors, topics = sorted(target["authors"] or []), list(target["topics"] or [])
    changes = Changes()
    known: dict[tuple[str, int], Any] = {("shout", shout_id): ShoutFacts(authors, topics, listed=True)}
    if reply_to is not None:
        known[("reaction_author", reply_to)] = target["answered_by"]
    record_row(changes, "insert", created, None, known)
    record_bulk(changes, Notification)  # as resolvers/events.py records the notification a session writes
    # The follow the statement may make moves the discussion's fans and its writer's follows: announced with
    # the rest, whether it is made or not (an announcement settled without operations).
    for entity in (("shout", shout_id), ("author", signed_in.author_id)):
        changes.live.by_entity.setdefault(entity, [])

    result = {**created.dict(), "stat": {"rating": 0, "comments_count": 0}}  # nothing answers it yet
    shout = {"id": shout_id, "slug": target["slug"], "title": target["title"], "community": target["community"]}
    notice = ReactionNotice.of(result, "create", shout, authors, public=True, answered=target["answered_by"], now=now)
    recipients = notice.recipients
    assert recipients is not None  # a reaction created notifies
    parameters = {**notice.parameters(deps.notify_fanout), "id": created.id, "kind": kind, "reply_to": reply_to,
                  "body": body, "quote": created.quote, "author": signed_in.author_id}
    # The driver takes a JSON value as its text: what the column type's bind processor makes of it in a session.
    parameters["payload"] = json.dumps(parameters["payload"])

    notified: set[int] = set()  # who gets a digest (ReactionNotice.direct), once the recipients are stored

    def sent(rows: list[dict[str, Any]], changes: Changes) -> None:
        note, people = stored_recipients(tuple(row.values()) for row in rows)
        first = rows[0]
        if first["joined_at"] is not None:  # made or restored: to the structures as a new follow
            follow = ShoutReactionsFollower(follower=signed_in.author_id, shout=shout_id, auto=first["joined_auto"],
                                            created_at=first["joined_at"], deleted_at=None)
            record_row(changes, "insert", follow, None, known)
        changes.messages.extend(notice.messages(note, people))
        notified.update(notice.concerned(people))

    await one_statement(sink, changes, lambda: driver.rows(_write_for(recipients.together), parameters,
                                                           primary=True), sent)
    await after_answer(lambda: queue_digests(deps, notified, now))
    return {"reaction": result, "error": None}
