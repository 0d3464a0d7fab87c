"""Creating, editing and deleting topics (editors)."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, select

from auth.permissions import Viewer
from cache.entities import get_cached_topic
from orm import ShoutTopic, Topic, TopicFollower
from resolvers.access import require
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.writes import transaction

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,254}$")


def _check(topic_input: dict[str, Any]) -> None:
    if not SLUG.match(topic_input.get("slug") or ""):
        raise BadInput("slug: lower-case latin letters, digits and hyphens", field="slug")
    if len(topic_input.get("title") or "") > 255:
        raise BadInput("title is too long", field="title")


async def create_topic(deps: Deps, viewer: Viewer | None, topic_input: dict[str, Any]) -> dict[str, Any]:
    require(viewer, "topic:create")
    _check(topic_input)
    async with transaction(deps) as session:
        if await session.scalar(select(Topic.id).where(Topic.slug == topic_input["slug"])) is not None:
            raise Conflict("this slug is taken", field="slug")
        topic = Topic(slug=topic_input["slug"], title=topic_input.get("title") or topic_input["slug"],
                      body=topic_input.get("body"), pic=topic_input.get("pic"), community=1)
        session.add(topic)
    return {"topic": await get_cached_topic(topic.id, cache=deps.cache, db=deps.db), "error": None}


async def update_topic(deps: Deps, viewer: Viewer | None, topic_input: dict[str, Any]) -> dict[str, Any]:
    _check(topic_input)
    async with transaction(deps) as session:
        if topic_input.get("id") is not None:
            topic = await session.get(Topic, topic_input["id"])
        else:
            topic = await session.scalar(select(Topic).where(Topic.slug == topic_input["slug"]))
        if topic is None:
            raise NotFound("no such topic", field="slug")
        require(viewer, "topic:update", community_id=topic.community)
        if topic_input["slug"] != topic.slug:
            if await session.scalar(select(Topic.id).where(Topic.slug == topic_input["slug"])) is not None:
                raise Conflict("this slug is taken", field="slug")
            topic.slug = topic_input["slug"]
        for name in ("title", "body", "pic"):
            if topic_input.get(name) is not None:
                setattr(topic, name, topic_input[name])
    return {"topic": await get_cached_topic(topic.id, cache=deps.cache, db=deps.db), "error": None}


async def delete_topic(deps: Deps, viewer: Viewer | None, *, slug: str | None = None,
                       topic_id: int | None = None) -> dict[str, Any]:
    async with transaction(deps) as session:
        topic = (await session.get(Topic, topic_id) if topic_id is not None
                 else await session.scalar(select(Topic).where(Topic.slug == slug)))
        if topic is None:
            raise NotFound("no such topic", field="slug" if slug else "id")
        require(viewer, "topic:delete", community_id=topic.community)
        # Through the ORM, not the database's ON DELETE CASCADE, so the triggers see the shouts change.
        await session.execute(delete(ShoutTopic).where(ShoutTopic.topic == topic.id))
        await session.execute(delete(TopicFollower).where(TopicFollower.topic == topic.id))
        await session.delete(topic)
    return {"error": None}
