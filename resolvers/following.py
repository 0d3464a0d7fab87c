"""Following: who follows a shout, and follow / unfollow of topics, authors, shouts and communities."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from cache.live.follows import fan_ids
from orm import (
    Author,
    AuthorFollower,
    Community,
    CommunityFollower,
    Shout,
    ShoutReactionsFollower,
    Topic,
    TopicFollower,
)
from orm.stats import is_listed
from resolvers.access import require_own
from resolvers.afterwards import after_answer
from resolvers.author_reads import authors_of_ids, get_author_follows
from resolvers.deps import Deps
from resolvers.digests import queue_digests
from resolvers.errors import BadInput, NotFound
from resolvers.events import follow_event
from resolvers.shout_reads import get_shout
from resolvers.writes import added_once, locked_row, transaction


async def get_shout_followers(deps: Deps, slug: str | None = None,
                              shout_id: int | None = None) -> list[dict[str, Any]]:
    shout = await get_shout(deps, slug=slug, shout_id=shout_id)
    if shout is None:
        return []
    return await authors_of_ids(deps, await fan_ids("shout", shout["id"], live=deps.live, db=deps.db, cache=deps.cache))


# --- follow / unfollow ------------------------------------------------------------------------------------

_TARGETS: dict[str, tuple[Any, Any, str]] = {
    # what -> (model with a slug, follower model, the follower model's column naming the target)
    "TOPIC": (Topic, TopicFollower, "topic"),
    "AUTHOR": (Author, AuthorFollower, "author"),
    "SHOUT": (Shout, ShoutReactionsFollower, "shout"),
    "COMMUNITY": (Community, CommunityFollower, "community"),
}


async def _target_id(session: AsyncSession, what: str, slug: str) -> int:
    model = _TARGETS[what][0]
    query = select(model.id).where(model.slug == slug)
    if model is Shout:
        query = query.where(is_listed())
    target = await session.scalar(query)
    if target is None:
        raise NotFound(f"no {what.lower()} with this slug", field="slug")
    return int(target)


async def follow(deps: Deps, viewer: Viewer | None, what: str, slug: str, *, on: bool,
                 answer: bool = True) -> dict[str, Any]:
    """Follow (on=True) or unfollow; idempotent. Returns what the viewer follows afterwards, unless
    `answer` is False (the client asked for none of it: three lists read for nothing)."""
    signed_in = require_own(viewer, "follow:manage")
    _, follower_model, column = _TARGETS[what]
    notified: set[int] = set()
    async with transaction(deps) as session:
        target = await _target_id(session, what, slug)
        if what == "AUTHOR" and target == signed_in.author_id:
            raise BadInput("you cannot follow yourself", field="slug")
        row = await locked_row(session, follower_model, (signed_in.author_id, target))
        if on and row is None:
            # not added: the same reader's request sent together followed first, and it is followed, as asked
            added = await added_once(session, follower_model(follower=signed_in.author_id, **{column: target},
                                                             created_at=int(time.time())))
            if added and what == "AUTHOR":
                await follow_event(session, signed_in.author_id, target)
                notified.add(target)
        elif on and row is not None and getattr(row, "deleted_at", None) is not None:
            row.deleted_at = None  # a shout follow that was switched off
        elif not on and row is not None:
            await session.delete(row)
    now = time.time()
    await after_answer(lambda: queue_digests(deps, notified, now))
    return await follows_of(deps, signed_in.author_id) if answer else {"error": None}


async def follows_of(deps: Deps, author_id: int) -> dict[str, Any]:
    return await get_author_follows(deps, author_id=author_id)
