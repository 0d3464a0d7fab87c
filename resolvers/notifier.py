"""Notifications: written in the same transaction as what they tell about, read grouped by thread.

A notification row says what happened (`entity`, `action`, `payload`); who it is for follows from the
data: a reaction concerns the shout's authors, the discussion's followers and the author of the comment
it answers; a follow concerns the followed author. Threads: `shout:{id}` for reactions on a shout,
`shout:{id}::{comment}` for replies, `followers` for new followers."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from cache import keys
from orm import Notification, NotificationSeen, Reaction, ShoutAuthor, ShoutReactionsFollower
from resolvers.access import require_viewer
from resolvers.deps import Deps, page
from resolvers.errors import BadInput, NotFound
from resolvers.writes import transaction

MAX_SCAN = 1000  # notifications looked at per request: a bound, not a page


def notify_reaction(session: AsyncSession, reaction: Reaction) -> None:
    session.add(Notification(entity="reaction", action="create", created_at=reaction.created_at, payload={
        "reaction": reaction.id, "shout": reaction.shout, "reply_to": reaction.reply_to,
        "created_by": reaction.created_by, "kind": reaction.kind}))


def notify_follow(session: AsyncSession, follower: int, author: int) -> None:
    session.add(Notification(entity="follower", action="follow", created_at=int(time.time()),
                             payload={"follower": follower, "author": author}))


def _for(me: int) -> Any:
    payload = Notification.payload
    shout, reply_to, creator = payload["shout"].as_integer(), payload["reply_to"].as_integer(), \
        payload["created_by"].as_integer()
    mine = select(ShoutAuthor.shout).where(ShoutAuthor.author == me)
    followed = select(ShoutReactionsFollower.shout).where(ShoutReactionsFollower.follower == me,
                                                          ShoutReactionsFollower.deleted_at.is_(None))
    my_comments = select(Reaction.id).where(Reaction.created_by == me)
    about_reactions = and_(Notification.entity == "reaction", creator != me,
                           or_(shout.in_(mine), shout.in_(followed), reply_to.in_(my_comments)))
    about_me = and_(Notification.entity == "follower", payload["author"].as_integer() == me)
    return or_(about_reactions, about_me)


def thread_of(note: Notification) -> str:
    payload = note.payload or {}
    if note.entity == "follower":
        return "followers"
    if payload.get("reply_to"):
        return f"shout:{payload['shout']}::{payload['reply_to']}"
    return f"shout:{payload.get('shout')}"


async def notifications_of(session: AsyncSession, me: int, after: int) -> list[tuple[Notification, bool]]:
    seen = select(NotificationSeen.notification).where(NotificationSeen.viewer == me)
    rows = (await session.execute(
        select(Notification, Notification.id.in_(seen)).where(Notification.created_at > after, _for(me))
        .order_by(Notification.created_at.desc(), Notification.id.desc()).limit(MAX_SCAN))).all()
    return [(note, bool(was_seen)) for note, was_seen in rows]


async def load_notifications(deps: Deps, viewer: Viewer | None, after: int, limit: int | None,
                             offset: int | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    limit, offset = page(limit, offset, default=20, maximum=deps.max_page_size)

    async def query() -> dict[str, Any]:
        async with deps.db() as session:
            found = await notifications_of(session, me, after)
        groups: dict[str, dict[str, Any]] = {}
        for note, was_seen in found:
            payload = note.payload or {}
            group = groups.setdefault(thread_of(note), {
                "thread": thread_of(note), "entity": note.entity, "action": note.action,
                "updated_at": note.created_at, "author_ids": [], "shout_id": payload.get("shout"),
                "reaction_ids": [], "seen": True})
            actor = payload.get("created_by") or payload.get("follower")
            if actor is not None and actor not in group["author_ids"]:
                group["author_ids"].append(actor)
            if payload.get("reaction"):
                group["reaction_ids"].append(payload["reaction"])
            group["seen"] = group["seen"] and was_seen
        ordered = sorted(groups.values(), key=lambda g: g["updated_at"], reverse=True)
        return {"notifications": ordered[offset:offset + limit], "total": len(ordered),
                "unread": sum(1 for g in ordered if not g["seen"]), "error": None}

    key = keys.viewer_list(me, "notifications", keys.digest(after, limit, offset))
    return dict(await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts,
                                              tags=[keys.TAG_NOTIFICATIONS, keys.tag_notifications_of(me)]))


async def _set_seen(session: AsyncSession, me: int, ids: list[int], seen: bool) -> None:
    if not ids:
        return
    if seen:
        already = set((await session.scalars(select(NotificationSeen.notification).where(
            NotificationSeen.viewer == me, NotificationSeen.notification.in_(ids)))).all())
        session.add_all(NotificationSeen(viewer=me, notification=i) for i in ids if i not in already)
    else:  # a bulk delete: the triggers invalidate every notification list (rare, and correct)
        await session.execute(delete(NotificationSeen).where(NotificationSeen.viewer == me,
                                                             NotificationSeen.notification.in_(ids)))


async def mark_seen(deps: Deps, viewer: Viewer | None, notification_id: int, seen: bool | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    async with transaction(deps) as session:
        if await session.scalar(select(Notification.id).where(Notification.id == notification_id, _for(me))) is None:
            raise NotFound("no such notification", field="notification_id")
        await _set_seen(session, me, [notification_id], seen is not False)
    return {"error": None}


async def mark_seen_after(deps: Deps, viewer: Viewer | None, after: int, seen: bool | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    async with transaction(deps) as session:
        ids = [note.id for note, _ in await notifications_of(session, me, after)]
        await _set_seen(session, me, ids, seen is not False)
    return {"error": None}


async def mark_seen_thread(deps: Deps, viewer: Viewer | None, thread: str, seen: bool | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    if not thread or len(thread) > 100:
        raise BadInput("a thread id like shout:12 or shout:12::345", field="thread_id")
    async with transaction(deps) as session:
        ids = [note.id for note, _ in await notifications_of(session, me, 0) if thread_of(note) == thread]
        await _set_seen(session, me, ids, seen is not False)
    return {"error": None}
