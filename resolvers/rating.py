"""Author ratings (karma) and the viewer's own votes on shouts and comments."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from auth.permissions import Viewer
from cache import keys
from cache.entities import get_cached_author, id_by_slug
from orm import AuthorRating, Reaction
from orm.reaction import RATING_KINDS
from resolvers.access import require, require_viewer
from resolvers.deps import Deps
from resolvers.errors import BadInput, NotFound
from resolvers.writes import added_once, locked_row, transaction

MAX_IDS = 500


async def rate_author(deps: Deps, viewer: Viewer | None, rated_slug: str, value: int) -> dict[str, Any]:
    """value > 0: plus, < 0: minus, 0: take one's rating back."""
    signed_in = require(viewer, "reaction:create")
    rated = await id_by_slug("author", rated_slug, cache=deps.cache, db=deps.db)
    if rated is None:
        raise NotFound("no such author", field="rated_slug")
    if rated == signed_in.author_id:
        raise BadInput("you cannot rate yourself", field="rated_slug")
    async with transaction(deps) as session:
        row = await locked_row(session, AuthorRating, (signed_in.author_id, rated))
        if row is None and value != 0 and not await added_once(
                session, AuthorRating(rater=signed_in.author_id, author=rated, plus=value > 0)):
            row = await locked_row(session, AuthorRating, (signed_in.author_id, rated))  # rated meanwhile
        if value == 0:
            if row is not None:
                await session.delete(row)
        elif row is not None:
            row.plus = value > 0
    return {"author": await get_cached_author(rated, cache=deps.cache, db=deps.db), "error": None}


def _check_ids(ids: list[int], field: str) -> list[int]:
    if len(ids) > MAX_IDS:
        raise BadInput(f"at most {MAX_IDS} ids at once", field=field)
    return sorted(set(ids))


async def get_my_rates_shouts(deps: Deps, viewer: Viewer | None, shouts: list[int]) -> list[dict[str, Any]]:
    author_id = require_viewer(viewer).author_id
    wanted = _check_ids(shouts, "shouts")

    async def query() -> list[list[Any]]:
        async with deps.db() as session:
            rows = await session.execute(select(Reaction.shout, Reaction.kind).where(
                Reaction.created_by == author_id, Reaction.shout.in_(wanted), Reaction.reply_to.is_(None),
                Reaction.kind.in_(RATING_KINDS), Reaction.deleted_at.is_(None)))
            return [[s, k] for s, k in rows]

    key = keys.viewer_list(author_id, "rates-shouts", keys.digest(wanted))
    found = await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=[keys.tag_reactions_by(author_id)])
    mine = {s: k for s, k in found}
    return [{"shout_id": s, "my_rate": mine.get(s)} for s in wanted]


async def get_my_rates_comments(deps: Deps, viewer: Viewer | None, comments: list[int]) -> list[dict[str, Any]]:
    author_id = require_viewer(viewer).author_id
    wanted = _check_ids(comments, "comments")

    async def query() -> list[list[Any]]:
        async with deps.db() as session:
            rows = await session.execute(select(Reaction.reply_to, Reaction.shout, Reaction.kind).where(
                Reaction.created_by == author_id, Reaction.reply_to.in_(wanted),
                Reaction.kind.in_(RATING_KINDS), Reaction.deleted_at.is_(None)))
            return [[c, s, k] for c, s, k in rows]

    key = keys.viewer_list(author_id, "rates-comments", keys.digest(wanted))
    found = await deps.cache.cached_query(key, query, ttl=deps.ttl_shouts, tags=[keys.tag_reactions_by(author_id)])
    mine = {c: (s, k) for c, s, k in found}
    return [{"comment_id": c, "shout_id": mine.get(c, (None, None))[0], "my_rate": mine.get(c, (None, None))[1]}
            for c in wanted]
