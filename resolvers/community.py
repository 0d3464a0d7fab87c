"""Community reads."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from cache import keys
from cache.entities import get_cached_communities
from orm import DEFAULT_COMMUNITY_ID, Community, CommunityAuthor
from resolvers.author import resolve_author_id
from resolvers.deps import Deps


async def communities_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    return [c for c in await get_cached_communities(ids, cache=deps.cache, db=deps.db) if c is not None]


async def get_community(deps: Deps) -> dict[str, Any] | None:
    """The contract's `get_community` takes no argument: it is the platform's default community."""
    found = await communities_of_ids(deps, [DEFAULT_COMMUNITY_ID])
    return found[0] if found else None


async def get_communities_all(deps: Deps) -> list[dict[str, Any]]:
    async def query() -> list[int]:
        async with deps.db() as session:
            return list((await session.scalars(select(Community.id).order_by(Community.id))).all())

    ids = await deps.cache.cached_query(keys.communities_all(), query, tags=[keys.TAG_COMMUNITIES])
    return await communities_of_ids(deps, ids)


async def get_communities_by_author(deps: Deps, slug: str | None = None, user: str | None = None,
                                    author_id: int | None = None) -> list[dict[str, Any]]:
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return []

    async def query() -> list[int]:
        stmt = (select(CommunityAuthor.community).where(CommunityAuthor.author == resolved)
                .order_by(CommunityAuthor.community))
        async with deps.db() as session:
            return list((await session.scalars(stmt)).all())

    ids = await deps.cache.cached_query(keys.communities_by_author(resolved), query,
                                        tags=[keys.TAG_COMMUNITIES, keys.tag_author(resolved)])
    return await communities_of_ids(deps, ids)

