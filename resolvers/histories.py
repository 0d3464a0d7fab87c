"""Reading: a shout read counts a view and enters the reader's history; searches enter theirs. Both
histories are the reader's own: listed and cleared only by them."""

from __future__ import annotations

import asyncio
from typing import Any

from auth.permissions import Viewer
from cache import keys, response_capture
from cache.live.views import READING_HISTORY, SEARCH_HISTORY
from resolvers.access import require_viewer
from resolvers.deps import Deps
from resolvers.paging import page
from resolvers.search import load_shouts_search
from resolvers.shout_query import ShoutsQuery
from resolvers.shout_reads import shouts_of_ids

MAX_REMEMBERED_TEXT = 100


async def count_read(deps: Deps, viewer: Viewer | None, client: str, shout_id: int, *, counted: bool = True) -> bool:
    """A shout was read: its view counted, and the reader's history told. Whether its counter had to be
    started (cache/live/views.py `count`). Not `counted`: no one read it (a write computes the answer again for
    its readers, cache/refresh.py); a response-cache hit on the answer still counts a view."""
    started = await count_views(deps, viewer.author_id if viewer else None, client, [shout_id]) if counted else False
    response_capture.viewed(shout_id)  # a response-cache hit on this answer counts the view again
    return started


async def count_views(deps: Deps, reader: int | None, client: str, shout_ids: list[int]) -> bool:
    """Shouts read: a view each (once per client and hour), and a place in a signed-in reader's history.
    Also for an answer served again from the response cache. Whether a counter had to be started."""
    counted = [deps.views.count(shout_id, client) for shout_id in shout_ids]
    remembered = ([deps.views.remember(keys.reading_history(reader), shout_id, READING_HISTORY)
                   for shout_id in shout_ids] if reader is not None else [])
    started = await asyncio.gather(*counted, *remembered)  # together: one round trip (cache/redis/coalesce.py)
    return any(started[:len(counted)])


async def search_shouts(deps: Deps, viewer: Viewer | None, text: str, query: ShoutsQuery, *,
                        client: str | None = None) -> list[Any]:
    found = await load_shouts_search(deps, text, query, client=client)
    needle = keys.normalize_query(text)[:MAX_REMEMBERED_TEXT]
    if viewer is not None and needle:
        await deps.views.remember(keys.search_history(viewer.author_id), needle, SEARCH_HISTORY)
    return found


async def reading_history(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None) -> list[Any]:
    """The shouts the viewer read, most recent first (those still published)."""
    me = require_viewer(viewer).author_id
    limit, offset = page(limit, offset, default=20, maximum=READING_HISTORY)
    ids = [int(i) for i in await deps.views.history(keys.reading_history(me), offset, limit)] if limit else []
    return await shouts_of_ids(deps, ids)


async def search_history(deps: Deps, viewer: Viewer | None, limit: int | None) -> list[str]:
    me = require_viewer(viewer).author_id
    limit, _ = page(limit, 0, default=SEARCH_HISTORY, maximum=SEARCH_HISTORY)
    return await deps.views.history(keys.search_history(me), 0, limit) if limit else []


async def clear_history(deps: Deps, viewer: Viewer | None, which: str) -> dict[str, Any]:
    me = require_viewer(viewer).author_id
    await deps.views.clear(keys.reading_history(me) if which == "reading" else keys.search_history(me))
    return {"error": None}
