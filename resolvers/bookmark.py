"""Bookmarks: a viewer's private list of shouts."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from auth.permissions import Viewer
from cache import keys
from cache.entities import get_cached_shouts, id_by_slug
from orm import AuthorBookmark, Shout
from orm.stats import is_listed
from resolvers.access import require_viewer
from resolvers.deps import Deps
from resolvers.errors import NotFound
from resolvers.shout_query import ShoutsQuery
from resolvers.writes import added_once, locked_row, transaction


async def toggle_bookmark_shout(deps: Deps, viewer: Viewer | None, slug: str) -> dict[str, Any]:
    author_id = require_viewer(viewer).author_id
    shout_id = await id_by_slug("shout", slug, cache=deps.cache, db=deps.db)
    shout = (await get_cached_shouts([shout_id], cache=deps.cache, db=deps.db))[0] if shout_id else None
    if shout is None:
        raise NotFound("no such shout", field="slug")
    async with transaction(deps) as session:
        row = await locked_row(session, AuthorBookmark, (author_id, shout["id"]))
        if row is None:
            # not added: a toggle sent together added it first; the two toggles leave it bookmarked
            await added_once(session, AuthorBookmark(author=author_id, shout=shout["id"], created_at=int(time.time())))
        else:
            await session.delete(row)
    return {"shout": shout, "error": None}


async def load_shouts_bookmarked(deps: Deps, viewer: Viewer | None, query: ShoutsQuery) -> list[Any]:
    """The viewer's bookmarks, the newest first (the query's page; its filters and order do not apply)."""
    author_id = require_viewer(viewer).author_id
    limit, offset = query.limit, query.offset

    async def ids() -> list[int]:
        async with deps.db() as session:
            return list((await session.scalars(
                select(Shout.id).join(AuthorBookmark, AuthorBookmark.shout == Shout.id)
                .where(AuthorBookmark.author == author_id, is_listed())
                .order_by(AuthorBookmark.created_at.desc(), Shout.id.desc()).limit(limit).offset(offset))).all())

    key = keys.viewer_list(author_id, "bookmarks", keys.digest(limit, offset))
    found = await deps.cache.cached_query(key, ids, ttl=deps.ttl_shouts,
                                          tags=[keys.tag_bookmarks_of(author_id), keys.TAG_SHOUTS,
                                                keys.tag_entities("bookmark")])
    return [s for s in await get_cached_shouts(found, cache=deps.cache, db=deps.db) if s is not None]
