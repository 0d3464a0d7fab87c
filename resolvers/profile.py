"""A viewer's own profile."""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import select

from auth.permissions import Viewer
from cache.entities import get_cached_author
from orm import Author
from resolvers.access import require_own
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict
from resolvers.writes import transaction

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{1,63}$")
LIMITS = {"name": 255, "pic": 1024, "bio": 1000, "about": 20_000}


async def update_author(deps: Deps, viewer: Viewer | None, profile: dict[str, Any], *,
                        answer: bool = True) -> dict[str, Any]:
    """The viewer's profile changed; returns it as it is now, unless `answer` is False (not asked for)."""
    signed_in = require_own(viewer, "author:update")
    for name, limit in LIMITS.items():
        if len(profile.get(name) or "") > limit:
            raise BadInput(f"{name} is too long", field=name)
    links = profile.get("links")
    if links is not None and (len(links) > 20 or any(len(link or "") > 1024 for link in links)):
        raise BadInput("at most 20 links of 1024 characters", field="links")
    async with transaction(deps) as session:
        author = await session.get(Author, signed_in.author_id)
        assert author is not None
        slug = profile.get("slug")
        if slug is not None and slug != author.slug:
            if not SLUG.match(slug):
                raise BadInput("slug: lower-case latin letters, digits, '-' and '_'", field="slug")
            if await session.scalar(select(Author.id).where(Author.slug == slug)) is not None:
                raise Conflict("this slug is taken", field="slug")
            author.slug = slug
        for name in ("name", "pic", "bio", "about"):
            if profile.get(name) is not None:
                setattr(author, name, profile[name])
        if links is not None:
            author.links = [link for link in links if link]
        author.updated_at = int(time.time())
    if not answer:
        return {"error": None}
    return {"author": await get_cached_author(signed_in.author_id, cache=deps.cache, db=deps.db), "error": None}
