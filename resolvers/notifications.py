"""Notifications as a reader sees them: listed grouped by thread, marked seen, threads muted.

The rows are written with the events they tell about, with the people they are for
(`resolvers/events.py`), the same people the live messages went to. Threads
(`events.thread_of`): `shout:{id}` for reactions on a shout, `shout:{id}::{comment}` for replies,
`followers`, `publication:{id}`, `invite:{id}`.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from cache import keys
from orm import Notification, NotificationMuted, NotificationRecipient, NotificationSeen, ShoutReactionsFollower
from resolvers.access import require_viewer
from resolvers.deps import Deps
from resolvers.errors import BadInput, NotFound
from resolvers.events import thread_of
from resolvers.paging import page
from resolvers.writes import transaction

MAX_SCAN = 1000  # notifications looked at per request: a bound, not a page
MAX_MUTED_THREADS = 1000  # threads one reader may mute: client input never grows a table without bound
MAX_THREAD_ID = 100


def _for(me: int) -> Any:
    """Notifications that concern `me`: decided when they happened (resolvers/events.py)."""
    return Notification.id.in_(select(NotificationRecipient.notification).where(NotificationRecipient.author == me))


def note_thread(note: Notification) -> str:
    return thread_of(note.entity, note.payload or {})


async def notifications_of(session: AsyncSession, me: int, after: int) -> list[tuple[Notification, bool]]:
    """(notification, seen) newest first, at most MAX_SCAN, muted threads left out."""
    seen = select(NotificationSeen.notification).where(NotificationSeen.viewer == me)
    rows = (await session.execute(
        select(Notification, Notification.id.in_(seen)).where(Notification.created_at > after, _for(me))
        .order_by(Notification.created_at.desc(), Notification.id.desc()).limit(MAX_SCAN))).all()
    muted = set((await session.scalars(select(NotificationMuted.thread).where(NotificationMuted.viewer == me))).all())
    return [(note, bool(was_seen)) for note, was_seen in rows if note_thread(note) not in muted]


async def notifications_since(deps: Deps, me: int, last_id: int, limit: int) -> list[Notification]:
    """The notifications for `me` after the one whose id is `last_id`, oldest first, at most `limit`, muted
    threads left out: what a live stream that reconnects missed (app/routes/connect.py)."""
    async with deps.db() as session:
        found = list((await session.scalars(
            select(Notification).where(Notification.id > last_id, _for(me))
            .order_by(Notification.id).limit(limit))).all())
        muted = set((await session.scalars(
            select(NotificationMuted.thread).where(NotificationMuted.viewer == me))).all())
    return [note for note in found if note_thread(note) not in muted]


def _groups(found: list[tuple[Notification, bool]]) -> list[dict[str, Any]]:
    """One group per thread, newest first; a group's id is its newest notification's."""
    groups: dict[str, dict[str, Any]] = {}
    for note, was_seen in found:
        payload = note.payload or {}
        thread = note_thread(note)
        group = groups.setdefault(thread, {
            "id": note.id, "thread": thread, "entity": note.entity, "action": note.action,
            "updated_at": note.created_at, "author_ids": [], "shout_id": payload.get("shout"),
            "reaction_ids": [], "seen": True})
        actor = payload.get("created_by") or payload.get("follower") or payload.get("author")
        if actor is not None and actor not in group["author_ids"]:
            group["author_ids"].append(actor)
        if payload.get("reaction"):
            group["reaction_ids"].append(payload["reaction"])
        group["seen"] = group["seen"] and was_seen
    return sorted(groups.values(), key=lambda g: (g["updated_at"], g["id"]), reverse=True)


async def load_notifications(deps: Deps, viewer: Viewer | None, after: int, limit: int | None,
                             offset: int | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    limit, offset = page(limit, offset, default=20, maximum=deps.max_page_size)

    async def query() -> dict[str, Any]:
        async with deps.db() as session:
            ordered = _groups(await notifications_of(session, me, after))
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


async def _mine(session: AsyncSession, me: int, notification_id: int) -> Notification:
    note = await session.scalar(select(Notification).where(Notification.id == notification_id, _for(me)))
    if note is None:
        raise NotFound("no such notification", field="notification_id")
    return note


async def mark_seen(deps: Deps, viewer: Viewer | None, notification_id: int, seen: bool | None) -> dict[str, Any]:
    """One notification (the contract's `notification_mark_seen`)."""
    me = require_viewer(viewer).author_id
    async with transaction(deps) as session:
        await _mine(session, me, notification_id)
        await _set_seen(session, me, [notification_id], seen is not False)
    return {"error": None}


async def mark_group_seen(deps: Deps, viewer: Viewer | None, notification_id: int) -> dict[str, Any]:
    """The 2025 client's `mark_seen(notification_id)`: it passes a group's id, and a reader who opened a
    group has seen the whole thread up to that notification."""
    me = require_viewer(viewer).author_id
    async with transaction(deps) as session:
        note = await _mine(session, me, notification_id)
        thread = note_thread(note)
        ids = [n.id for n, _ in await notifications_of(session, me, 0)
               if note_thread(n) == thread and (n.created_at, n.id) <= (note.created_at, note.id)]
        await _set_seen(session, me, ids, True)
    return {"error": None}


async def mark_seen_after(deps: Deps, viewer: Viewer | None, after: int | None, seen: bool | None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    async with transaction(deps) as session:
        ids = [note.id for note, _ in await notifications_of(session, me, after or 0)]
        await _set_seen(session, me, ids, seen is not False)
    return {"error": None}


def _thread_id(thread: str | None) -> str:
    if not thread or len(thread) > MAX_THREAD_ID:
        raise BadInput("a thread id like shout:12 or shout:12::345", field="thread_id")
    return thread


async def mark_seen_thread(deps: Deps, viewer: Viewer | None, thread: str, seen: bool | None,
                           after: int | None = None) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    thread = _thread_id(thread)
    async with transaction(deps) as session:
        ids = [note.id for note, _ in await notifications_of(session, me, after or 0) if note_thread(note) == thread]
        await _set_seen(session, me, ids, seen is not False)
    return {"error": None}


async def unsubscribe_thread(deps: Deps, viewer: Viewer | None, thread: str) -> dict[str, Any]:
    """Mute a thread: its events no longer reach the reader, live or listed; following a discussion
    (`shout:{id}`) stops too."""
    me = require_viewer(viewer).author_id
    thread = _thread_id(thread)
    async with transaction(deps) as session:
        if await session.get(NotificationMuted, (me, thread)) is None:
            count = await session.scalar(select(func.count()).select_from(NotificationMuted)
                                         .where(NotificationMuted.viewer == me))
            if (count or 0) >= MAX_MUTED_THREADS:
                raise BadInput(f"at most {MAX_MUTED_THREADS} threads can be muted", field="thread_id")
            session.add(NotificationMuted(viewer=me, thread=thread, created_at=int(time.time())))
        kind, _, rest = thread.partition(":")
        if kind == "shout" and rest.isdigit():
            follows = await session.get(ShoutReactionsFollower, (me, int(rest)))
            if follows is not None and follows.deleted_at is None:
                follows.deleted_at = int(time.time())
    return {"success": True, "error": None}
