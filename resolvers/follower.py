"""Who follows a shout (its reaction followers)."""

from __future__ import annotations

from typing import Any

from cache.follows import get_cached_shout_followers
from resolvers.author import authors_of_ids
from resolvers.deps import Deps
from resolvers.reader import get_shout


async def get_shout_followers(deps: Deps, slug: str | None = None,
                              shout_id: int | None = None) -> list[dict[str, Any]]:
    shout = await get_shout(deps, slug=slug, shout_id=shout_id)
    if shout is None:
        return []
    return await authors_of_ids(deps, await get_cached_shout_followers(shout["id"], cache=deps.cache, db=deps.db))
