"""Notification digests: deferred work on the delayed queue (seed 001, cache/messaging/delayed.py).

A write that notifies an author directly (a reaction on their shout, a reply to their comment, a new
follower) queues one message per author and digest window, `digest-{author}-{window}`, due when the
window ends: the queue keeps the first (ZADD NX), so a busy hour is one message, not one per event.
When it is due, the author gets one mail listing what they have not seen since the window began, if
anything, and if their address is verified. Followers of a discussion are not sent digests: one comment
would otherwise queue a message for each of thousands of followers; they have the in-app list.

The database says which digests are pending: the authors notified directly since the current window
began (a new follower; a comment on their shout, or an answer to their comment). `sweep` queues them
again, so a Redis that lost its queue, or a queue that was full, loses no digest. Only the current
window: a past window's message was due already and may have been mailed, and mailing it twice is worse
than the loss of the few seconds between a window's end and its digest.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import CompoundSelect, and_, exists, select, union
from sqlalchemy.orm import aliased

from auth.mailer import Message
from orm import Author, Notification, NotificationRecipient, Reaction, ShoutAuthor
from resolvers.deps import Deps
from resolvers.notifications import note_thread, notifications_of

log = logging.getLogger(__name__)

DIGEST = "notification_digest"
MAX_LINES = 20  # threads listed in one mail


def _window_start(deps: Deps, now: float) -> int:
    return int(now) // deps.digest_window * deps.digest_window


def _digests(authors: list[int], start: int) -> list[tuple[dict[str, Any], str]]:
    """The digest message of each author for the window beginning at `start`, with its id."""
    return [({"author": author, "since": start}, f"digest-{author}-{start}") for author in authors]


async def queue_digests(deps: Deps, authors: set[int], now: float) -> None:
    """After the commit that notified `authors`: their digests for the current window. Never fails the
    write: with Redis away the digest waits for the sweep (the notifications are in the database)."""
    start = _window_start(deps, now)
    try:
        await deps.delayed.enqueue_once(DIGEST, _digests(sorted(authors), start), at=start + deps.digest_window)
    except RedisError as exc:
        log.warning("notification digests not queued: %s", exc)


_ANSWERED = aliased(Reaction)
_COMMENTED = and_(Notification.entity == "reaction", Notification.action == "create")


def _recipient(author: Any) -> Any:
    """`author` is a recipient of the notification (by the recipients' primary key)."""
    return exists().where(NotificationRecipient.notification == Notification.id,
                          NotificationRecipient.author == author)


def _notified_directly(start: int) -> CompoundSelect[Any]:
    """The recipients notified directly since `start` (what `queue_digests` was given when each notification was
    made): the followed author of a follow; of a comment, its shout's authors and the author of the comment it
    answers, each when a recipient. Each comment's few candidates are looked for among its recipients by their
    key: asking of every recipient of every comment whether it is one of them reads all the window's
    recipients and parses the comment's payload for each, twelve times the time (bench/RESULTS.md, figures
    behind the code's rules). A comment that answers none is not looked up as an answer."""
    since = Notification.created_at >= start
    shouts = (select(ShoutAuthor.author)
              .join(Notification, ShoutAuthor.shout == Notification.payload["shout"].as_integer())
              .where(since, _COMMENTED, _recipient(ShoutAuthor.author)))
    reply_to = Notification.payload["reply_to"].as_integer()
    answered = (select(_ANSWERED.created_by).join(Notification, _ANSWERED.id == reply_to)
                .where(since, _COMMENTED, reply_to.is_not(None), _recipient(_ANSWERED.created_by)))
    followed = (select(NotificationRecipient.author)
                .join(Notification, Notification.id == NotificationRecipient.notification)
                .where(since, Notification.entity == "follower"))
    return union(shouts, answered, followed)


async def sweep(deps: Deps, now: float) -> int:
    """Queue again the digests of the current window (idempotent: a queued message keeps its place);
    returns how many authors have one."""
    start = _window_start(deps, now)
    async with deps.db() as session:
        authors = sorted((await session.scalars(_notified_directly(start))).all())
    await deps.delayed.enqueue_many(DIGEST, _digests(authors, start), at=start + deps.digest_window)
    return len(authors)


async def send_digest(deps: Deps, payload: dict[str, Any]) -> None:
    """The queue's handler: mail the author what they have not seen since the window began."""
    author_id, since = int(payload["author"]), int(payload["since"])
    async with deps.db() as session:
        account = (await session.execute(select(Author.email, Author.email_verified, Author.deleted_at)
                                         .where(Author.id == author_id))).first()
        if account is None or not account.email or not account.email_verified or account.deleted_at:
            return
        unseen = [note for note, seen in await notifications_of(session, author_id, since - 1) if not seen]
    if not unseen:
        return
    threads: dict[str, int] = {}
    for note in unseen:
        threads[note_thread(note)] = threads.get(note_thread(note), 0) + 1
    accounts = deps.accounts
    lang = accounts.settings.default_language  # the reader is not asking: the deployment's language
    written = accounts.templates.write("digest", lang, count=len(unseen), threads=list(threads.items())[:MAX_LINES],
                                       inbox=f"{accounts.settings.public_url.rstrip('/')}/inbox")
    await accounts.mailer.send(Message(account.email, written.subject, written.text, written.html, lang))


def register(deps: Deps) -> None:
    async def handler(payload: dict[str, Any]) -> None:
        await send_digest(deps, payload)

    deps.delayed.handlers[DIGEST] = handler
