"""Notification digests: deferred work on the delayed queue (seed 001, cache/messaging/delayed.py).

A write that notifies an author directly (a reaction on their shout, a reply to their comment, a new
follower) queues one message per author and digest window, `digest-{author}-{window}`, due when the
window ends: the queue keeps the first (ZADD NX), so a busy hour is one message, not one per event.
When it is due, the author gets one mail listing what they have not seen since the window began, if
anything, and if their address is verified. Followers of a discussion are not sent digests: one comment
would otherwise queue a message for each of thousands of followers; they have the in-app list.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import select

from auth.mailer import Message
from orm import Author
from resolvers.deps import Deps
from resolvers.notifications import note_thread, notifications_of

log = logging.getLogger(__name__)

DIGEST = "notification_digest"
MAX_LINES = 20  # threads listed in one mail


async def queue_digests(deps: Deps, authors: set[int], now: float) -> None:
    """After the commit that notified `authors`: their digests for the current window. Never fails the
    write: with Redis away the digest is skipped (the notifications themselves are in the database)."""
    window = deps.digest_window
    start = int(now) // window * window
    try:
        await deps.delayed.enqueue_many(DIGEST, [({"author": author, "since": start}, f"digest-{author}-{start}")
                                                 for author in sorted(authors)], at=start + window)
    except RedisError as exc:
        log.warning("notification digests not queued: %s", exc)


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
    lines = [f"{count} new in {thread}" for thread, count in list(threads.items())[:MAX_LINES]]
    accounts = deps.accounts
    await accounts.mailer.send(Message(
        to=account.email, subject=f"Discours: {len(unseen)} new notifications",
        body="\n".join(lines) + f"\n\n{accounts.settings.public_url.rstrip('/')}/inbox"))


def register(deps: Deps) -> None:
    async def handler(payload: dict[str, Any]) -> None:
        await send_digest(deps, payload)

    deps.delayed.handlers[DIGEST] = handler
