"""Curated collections of shouts: reads (each list kept under the `collections` tag, which any change of
a collection or of its shouts moves), and creating, editing and deleting them."""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import ColumnElement, bindparam, delete, func, select

from auth.permissions import Viewer
from cache import keys
from orm import Collection, ShoutCollection
from orm.driver import reads
from resolvers.access import require
from resolvers.author_reads import resolve_author_id
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


# A collection as the contract shows it: its columns, `desc` for its body, and how many shouts it holds.
_AMOUNT = (select(func.count()).where(ShoutCollection.collection == Collection.id)
           .correlate(Collection).scalar_subquery().label("amount"))
_WITH_AMOUNT = select(*Collection.__table__.c, Collection.body.label("desc"), _AMOUNT)


async def _collections(deps: Deps, key: str, where: ColumnElement[bool] | None,
                       params: dict[str, Any]) -> list[dict[str, Any]]:
    async def query() -> list[dict[str, Any]]:
        stmt = _WITH_AMOUNT if where is None else _WITH_AMOUNT.where(where)
        async with reads(deps.db) as reading:
            return await reading.rows(stmt.order_by(Collection.id), params)

    return list(await deps.cache.cached_query(key, query, tags=[keys.TAG_COLLECTIONS]))


async def get_collection(deps: Deps, slug: str) -> dict[str, Any] | None:
    found = await _collections(deps, keys.collection_slug(slug), Collection.slug == bindparam("slug"), {"slug": slug})
    return found[0] if found else None


async def get_collections_all(deps: Deps) -> list[dict[str, Any]]:
    return await _collections(deps, keys.collections_all(), None, {})


async def get_collections_by_author(deps: Deps, slug: str | None, user: str | None,
                                    author_id: int | None) -> list[dict[str, Any]]:
    """The collections an author made."""
    resolved = await resolve_author_id(deps, slug, user, author_id)
    if resolved is None:
        return []
    return await _collections(deps, keys.collections_by_author(resolved),
                              Collection.created_by == bindparam("author"), {"author": resolved})


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
    """The collection `id` names (its slug then changes to the one given), or else the one `slug` names."""
    _check(collection_input)
    async with transaction(deps) as session:
        if collection_input.get("id") is not None:
            collection = await session.get(Collection, collection_input["id"])
        else:
            collection = await session.scalar(select(Collection).where(Collection.slug == collection_input["slug"]))
        if collection is None:
            raise NotFound("no such collection", field="id" if collection_input.get("id") is not None else "slug")
        require(viewer, "collection:update", owners=[collection.created_by])
        if collection_input["slug"] != collection.slug:
            if await session.scalar(select(Collection.id).where(Collection.slug == collection_input["slug"])):
                raise Conflict("this slug is taken", field="slug")
            collection.slug = collection_input["slug"]
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
