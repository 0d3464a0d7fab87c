"""What a subscription may listen to, checked before it subscribes (schema/subscription.py streams it)."""

from __future__ import annotations

from sqlalchemy import select

from cache.entities import get_cached_shouts
from orm import ShoutAuthor, Topic
from resolvers.deps import Deps
from resolvers.errors import NotFound


async def watchable_shout(deps: Deps, shout_id: int, viewer_id: int | None) -> None:
    """A shout whose reactions `viewer_id` may follow: a public one, or one of their own. Read now, not
    through a connection's loaders, which may hold what an earlier event loaded."""
    if (await get_cached_shouts([shout_id], cache=deps.cache, db=deps.db))[0] is not None:
        return
    if viewer_id is not None:
        async with deps.db() as session:
            if await session.get(ShoutAuthor, (shout_id, viewer_id)) is not None:
                return
    raise NotFound("no such shout", field="shout_id")


async def watchable_topic(deps: Deps, slug: str) -> int:
    """The id of the topic whose new shouts a subscriber follows."""
    async with deps.db() as session:
        topic_id = await session.scalar(select(Topic.id).where(Topic.slug == slug))
    if topic_id is None:
        raise NotFound("no such topic", field="slug")
    return topic_id
