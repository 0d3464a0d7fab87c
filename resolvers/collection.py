"""Curated collections of shouts."""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import delete, func, select

from auth.permissions import Viewer
from orm import Collection, ShoutCollection
from resolvers.access import require
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.writes import transaction

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,254}$")


def _check(collection_input: dict[str, Any]) -> None:
    if not SLUG.match(collection_input.get("slug") or ""):
        raise BadInput("slug: lower-case latin letters, digits and hyphens", field="slug")
    if len(collection_input.get("title") or "") > 1024:
        raise BadInput("title is too long", field="title")


async def collection_dict(deps: Deps, collection_id: int) -> dict[str, Any] | None:
    async with deps.db() as session:
        found = await session.get(Collection, collection_id)
        if found is None:
            return None
        amount = await session.scalar(select(func.count()).where(ShoutCollection.collection == collection_id))
    return {**found.dict(), "desc": found.body, "amount": amount}


async def create_collection(deps: Deps, viewer: Viewer | None, collection_input: dict[str, Any]) -> dict[str, Any]:
    signed_in = require(viewer, "collection:create")
    _check(collection_input)
    async with transaction(deps) as session:
        if await session.scalar(select(Collection.id).where(Collection.slug == collection_input["slug"])):
            raise Conflict("this slug is taken", field="slug")
        collection = Collection(slug=collection_input["slug"], title=collection_input.get("title") or "",
                                body=collection_input.get("desc"), pic=collection_input.get("pic"),
                                created_at=int(time.time()), created_by=signed_in.author_id)
        session.add(collection)
    return {"collection": await collection_dict(deps, collection.id), "error": None}


async def update_collection(deps: Deps, viewer: Viewer | None, collection_input: dict[str, Any]) -> dict[str, Any]:
    _check(collection_input)
    async with transaction(deps) as session:
        collection = await session.scalar(select(Collection).where(Collection.slug == collection_input["slug"]))
        if collection is None:
            raise NotFound("no such collection", field="slug")
        require(viewer, "collection:update", owners=[collection.created_by])
        if collection_input.get("title") is not None:
            collection.title = collection_input["title"]
        if collection_input.get("desc") is not None:
            collection.body = collection_input["desc"]
        if collection_input.get("pic") is not None:
            collection.pic = collection_input["pic"]
    return {"collection": await collection_dict(deps, collection.id), "error": None}


async def delete_collection(deps: Deps, viewer: Viewer | None, slug: str) -> dict[str, Any]:
    async with transaction(deps) as session:
        collection = await session.scalar(select(Collection).where(Collection.slug == slug))
        if collection is None:
            raise NotFound("no such collection", field="slug")
        require(viewer, "collection:delete", owners=[collection.created_by])
        await session.execute(delete(ShoutCollection).where(ShoutCollection.collection == collection.id))
        await session.delete(collection)
    return {"error": None}
