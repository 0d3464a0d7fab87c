"""Communities: reads, and founding, editing, deleting, joining and leaving them."""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from cache import keys
from cache.entities import get_cached_communities
from orm import COMMUNITY_ROLES, DEFAULT_COMMUNITY_ID, Community, CommunityAuthor, CommunityFollower, Shout
from orm.driver import first_column
from resolvers.access import require
from resolvers.author_reads import resolve_author_id
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.roles import new_member_roles
from resolvers.writes import added_once, locked_row, transaction


async def communities_of_ids(deps: Deps, ids: list[int]) -> list[dict[str, Any]]:
    return [c for c in await get_cached_communities(ids, cache=deps.cache, db=deps.db) if c is not None]


async def get_community(deps: Deps) -> dict[str, Any] | None:
    """The contract's `get_community` takes no argument: it is the platform's default community."""
    found = await communities_of_ids(deps, [DEFAULT_COMMUNITY_ID])
    return found[0] if found else None


# Built once: on the driver a statement stays compiled for as long as it lives (orm/driver.py).
_EVERY_COMMUNITY = select(Community.id).order_by(Community.id)


async def get_communities_all(deps: Deps) -> list[dict[str, Any]]:
    async def query() -> list[int]:
        return await first_column(deps.db, _EVERY_COMMUNITY)

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
        return await first_column(deps.db, stmt)

    ids = await deps.cache.cached_query(keys.communities_by_author(resolved), query,
                                        tags=[keys.TAG_COMMUNITIES, keys.tag_author(resolved)])
    return await communities_of_ids(deps, ids)



# --- writes ---------------------------------------------------------------------------------------------

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")


def _check(community_input: dict[str, Any]) -> None:
    if not SLUG.match(community_input.get("slug") or ""):
        raise BadInput("slug: lower-case latin letters, digits and hyphens", field="slug")
    if len(community_input.get("name") or "") > 255:
        raise BadInput("name is too long", field="name")


async def _community(session: AsyncSession, slug: str | None) -> Community:
    found = await session.scalar(select(Community).where(Community.slug == slug))
    if found is None:
        raise NotFound("no such community", field="slug")
    return found


async def create_community(deps: Deps, viewer: Viewer | None, community_input: dict[str, Any]) -> dict[str, Any]:
    """Any author may found a community; its founder is its admin."""
    signed_in = require(viewer, "draft:create")
    _check(community_input)
    now = int(time.time())
    async with transaction(deps) as session:
        if await session.scalar(select(Community.id).where(Community.slug == community_input["slug"])):
            raise Conflict("this slug is taken", field="slug")
        community = Community(slug=community_input["slug"], name=community_input.get("name") or community_input["slug"],
                              desc=community_input.get("desc"), pic=community_input.get("pic") or "",
                              created_at=now, created_by=signed_in.author_id)
        session.add(community)
        await session.flush()
        session.add(CommunityAuthor(community=community.id, author=signed_in.author_id, joined_at=now,
                                    roles=",".join(COMMUNITY_ROLES)))
        session.add(CommunityFollower(community=community.id, follower=signed_in.author_id, created_at=now))
    return {"community": (await communities_of_ids(deps, [community.id]))[0], "error": None}


async def update_community(deps: Deps, viewer: Viewer | None, community_input: dict[str, Any]) -> dict[str, Any]:
    _check(community_input)
    async with transaction(deps) as session:
        community = await _community(session, community_input["slug"])
        require(viewer, "community:update", community_id=community.id)
        for name in ("name", "desc", "pic"):
            if community_input.get(name) is not None:
                setattr(community, name, community_input[name])
    return {"community": (await communities_of_ids(deps, [community.id]))[0], "error": None}


async def delete_community(deps: Deps, viewer: Viewer | None, slug: str) -> dict[str, Any]:
    async with transaction(deps) as session:
        community = await _community(session, slug)
        if community.id == DEFAULT_COMMUNITY_ID:
            raise BadInput("the default community cannot be deleted", field="slug")
        require(viewer, "community:delete", community_id=community.id)
        if await session.scalar(select(Shout.id).where(Shout.community == community.id).limit(1)) is not None:
            raise Conflict("the community still has shouts", field="slug")
        await session.execute(delete(CommunityAuthor).where(CommunityAuthor.community == community.id))
        await session.execute(delete(CommunityFollower).where(CommunityFollower.community == community.id))
        await session.delete(community)
    return {"error": None}


async def join_community(deps: Deps, viewer: Viewer | None, slug: str, *, join: bool) -> dict[str, Any]:
    signed_in = require(viewer, "community:join")
    now = int(time.time())
    async with transaction(deps) as session:
        community = await _community(session, slug)
        member = await locked_row(session, CommunityAuthor, (community.id, signed_in.author_id))
        follower = await locked_row(session, CommunityFollower, (signed_in.author_id, community.id))
        if join:  # a row not added: a join sent together added it first
            if member is None:
                roles = await new_member_roles(session, community.id)
                await added_once(session, CommunityAuthor(community=community.id, author=signed_in.author_id,
                                                          joined_at=now, roles=roles))
            if follower is None:
                await added_once(session, CommunityFollower(community=community.id, follower=signed_in.author_id,
                                                            created_at=now))
        else:
            if community.id == DEFAULT_COMMUNITY_ID:
                raise BadInput("everyone belongs to the default community", field="slug")
            for row in (member, follower):
                if row is not None:
                    await session.delete(row)
    return {"community": (await communities_of_ids(deps, [community.id]))[0], "error": None}
