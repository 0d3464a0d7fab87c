"""Scheduled publication: `schedule_draft(draft_id, publish_at)` records the time on the draft (the
database is the source of truth) and queues a message on the delayed queue (cache/messaging/delayed.py), whose
consumer publishes the draft when it is due.

The message names the draft and the time it was scheduled for, and publishing checks that the draft is
still scheduled for that time, so rescheduling or unscheduling needs no queue surgery, and a message
delivered twice publishes once. A sweep re-queues every scheduled draft from the database (at start and
every `sweep_interval`), so a Redis that lost its queue loses no publication.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from auth.permissions import Viewer
from cache.messaging.delayed import DelayedQueue
from orm import Draft
from resolvers import draft as drafts
from resolvers.deps import Deps
from resolvers.errors import BadInput, NotFound
from resolvers.writes import transaction

PUBLISH = "publish_draft"
MAX_AHEAD = 366 * 86_400  # how far ahead a publication may be scheduled


def _message_id(draft_id: int, at: int) -> str:
    return f"draft-{draft_id}-{at}"


async def _enqueue(queue: DelayedQueue, draft_id: int, at: int) -> None:
    await queue.enqueue(PUBLISH, {"draft": draft_id, "at": at}, at=at, message_id=_message_id(draft_id, at))


async def schedule_draft(deps: Deps, viewer: Viewer | None, draft_id: int, publish_at: int | None) -> dict[str, Any]:
    """Publish the draft at `publish_at` (unix seconds); None unschedules it."""
    now = int(time.time())
    if publish_at is not None and not now < publish_at <= now + MAX_AHEAD:
        raise BadInput("publish_at must be in the future, at most a year ahead", field="publish_at")
    async with transaction(deps) as session:
        draft, _ = await drafts.draft_to_publish(session, viewer, draft_id)
        if publish_at is not None:
            drafts.require_content(draft)
        draft.publish_at = publish_at
    if publish_at is not None:
        await _enqueue(deps.delayed, draft_id, publish_at)  # if Redis is away, the next sweep queues it
    return {"draft": await drafts.get_draft(deps, viewer, draft_id)}


async def publish_when_due(deps: Deps, payload: dict[str, Any]) -> None:
    """The queue's handler: publish the draft if it is still scheduled for this time."""
    try:
        await drafts.publish_draft(deps, None, int(payload["draft"]), scheduled_for=int(payload["at"]))
    except NotFound:
        return  # deleted since: nothing to publish


async def sweep(deps: Deps) -> int:
    """Queue every scheduled draft again (idempotent: a queued message keeps its place)."""
    async with deps.db() as session:
        rows: Any = (await session.execute(select(Draft.id, Draft.publish_at)
                                      .where(Draft.publish_at.is_not(None), Draft.deleted_at.is_(None)))).all()
    for draft_id, at in rows:
        await _enqueue(deps.delayed, draft_id, at)
    return len(rows)


def register(deps: Deps) -> None:
    async def handler(payload: dict[str, Any]) -> None:
        await publish_when_due(deps, payload)

    deps.delayed.handlers[PUBLISH] = handler
