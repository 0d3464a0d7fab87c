"""Creating, editing, placing, merging and deleting topics (editors of the topic's community).

Topics form a tree per community: `parent_ids` names the topics one sits under (it may sit under several),
each in the same community, and no topic is ever its own ancestor."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from cache.entities import get_cached_topic
from orm import Community, DraftTopic, ShoutTopic, Topic, TopicFollower
from orm.engine import read_session
from resolvers.access import require, require_viewer
from resolvers.audit import record
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.writes import transaction

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,254}$")
# How many topics one merge may fold into its target: a merge holds its rows in one transaction.
MERGE_MAX_SOURCES = 100


def _check(topic_input: dict[str, Any]) -> None:
    if not SLUG.match(topic_input.get("slug") or ""):
        raise BadInput("slug: lower-case latin letters, digits and hyphens", field="slug")
    if len(topic_input.get("title") or "") > 255:
        raise BadInput("title is too long", field="title")


async def _parents(session: AsyncSession, topic_id: int | None, community: int, wanted: list[Any]) -> list[int] | None:
    """`wanted` as a topic's parents, checked: topics of the same community, the topic itself and its
    descendants not among them (no cycle); None for none."""
    parent_ids = sorted({p for p in wanted if p is not None})
    if not parent_ids:
        return None
    rows = (await session.execute(select(Topic.id, Topic.community, Topic.parent_ids)
                                  .where(Topic.community == community))).all()
    above = {row.id: [p for p in row.parent_ids or [] if isinstance(p, int)] for row in rows}
    missing = [p for p in parent_ids if p not in above]
    if missing:
        raise BadInput(f"no topic {missing[0]} in community {community}", field="parent_ids")
    if topic_id is not None:
        for parent in parent_ids:  # walk up from each new parent: reaching the topic is a cycle
            seen, todo = set(), [parent]
            while todo:
                current = todo.pop()
                if current == topic_id:
                    raise BadInput("a topic cannot sit under itself or under one of its own subtopics",
                                   field="parent_ids")
                if current not in seen:
                    seen.add(current)
                    todo.extend(above.get(current, ()))
    return parent_ids


def _shape(topic: Topic) -> dict[str, Any]:
    """What the audit trail keeps of a topic."""
    return {name: getattr(topic, name) for name in ("slug", "title", "body", "pic", "community", "parent_ids")}


async def _community(session: AsyncSession, community_id: int) -> int:
    if await session.get(Community, community_id) is None:
        raise NotFound("no such community", field="community")
    return community_id


async def _answer(deps: Deps, topic_id: int, **extra: Any) -> dict[str, Any]:
    return {"topic": await get_cached_topic(topic_id, cache=deps.cache, db=deps.db), "error": None, **extra}


async def create_topic(deps: Deps, viewer: Viewer | None, topic_input: dict[str, Any]) -> dict[str, Any]:
    community = topic_input.get("community") or 1
    require(viewer, "topic:create", community_id=community)
    _check(topic_input)
    async with transaction(deps) as session:
        await _community(session, community)
        if await session.scalar(select(Topic.id).where(Topic.slug == topic_input["slug"])) is not None:
            raise Conflict("this slug is taken", field="slug")
        topic = Topic(slug=topic_input["slug"], title=topic_input.get("title") or topic_input["slug"],
                      body=topic_input.get("body"), pic=topic_input.get("pic"), community=community,
                      parent_ids=await _parents(session, None, community, topic_input.get("parent_ids") or []))
        session.add(topic)
        await session.flush()
        record(session, require_viewer(viewer), "topic.create", "topic", topic.id, community=community, before=None,
               after=_shape(topic))
    return await _answer(deps, topic.id)


async def _topic(session: AsyncSession, topic_id: int | None, slug: str | None = None) -> Topic:
    topic = (await session.get(Topic, topic_id) if topic_id is not None
             else await session.scalar(select(Topic).where(Topic.slug == slug)))
    if topic is None:
        raise NotFound("no such topic", field="id" if topic_id is not None else "slug")
    return topic


async def update_topic(deps: Deps, viewer: Viewer | None, topic_input: dict[str, Any]) -> dict[str, Any]:
    """Edits the topic `id` names (else `slug`); a `community` given moves it there, which a topic with
    subtopics cannot do; `parent_ids` given replaces its parents."""
    if topic_input.get("slug") is not None or topic_input.get("id") is None:
        _check(topic_input)
    async with transaction(deps) as session:
        topic = await _topic(session, topic_input.get("id"), topic_input.get("slug"))
        require(viewer, "topic:update", community_id=topic.community)
        before = _shape(topic)
        slug = topic_input.get("slug")
        if slug is not None and slug != topic.slug:
            if await session.scalar(select(Topic.id).where(Topic.slug == slug)) is not None:
                raise Conflict("this slug is taken", field="slug")
            topic.slug = slug
        for name in ("title", "body", "pic"):
            if topic_input.get(name) is not None:
                setattr(topic, name, topic_input[name])
        community = topic_input.get("community")
        if community is not None and community != topic.community:
            require(viewer, "topic:update", community_id=community)
            await _community(session, community)
            if await _under(session, topic.community, [topic.id]):
                raise BadInput("a topic with subtopics stays in its community", field="community")
            topic.community = community
            if topic_input.get("parent_ids") is None:
                topic.parent_ids = None  # its parents were of the community it left
        if topic_input.get("parent_ids") is not None:
            topic.parent_ids = await _parents(session, topic.id, topic.community, topic_input["parent_ids"])
        record(session, require_viewer(viewer), "topic.update", "topic", topic.id, community=before["community"],
               before=before, after=_shape(topic))
    return await _answer(deps, topic.id)


async def set_topic_parent(deps: Deps, viewer: Viewer | None, topic_id: int, parent_id: int | None) -> dict[str, Any]:
    """Puts a topic under one parent, or (no parent) at the root of its community's tree."""
    async with transaction(deps) as session:
        topic = await _topic(session, topic_id)
        require(viewer, "topic:update", community_id=topic.community)
        before = _shape(topic)
        topic.parent_ids = await _parents(session, topic.id, topic.community, [parent_id])
        record(session, require_viewer(viewer), "topic.set_parent", "topic", topic.id, community=topic.community,
               before=before, after=_shape(topic))
    return await _answer(deps, topic_id)


async def admin_get_topics(deps: Deps, viewer: Viewer | None, community_id: int) -> list[dict[str, Any]]:
    """Every topic of a community, for its editors (the whole list, never a page of it), by title."""
    require(viewer, "topic:update", community_id=community_id)
    async with read_session(deps.db) as session:
        rows = (await session.scalars(select(Topic).where(Topic.community == community_id)
                                      .order_by(Topic.title, Topic.id))).all()
        return [row.dict() for row in rows]


async def merge_topics(deps: Deps, viewer: Viewer | None, merge: dict[str, Any]) -> dict[str, Any]:
    """Folds the source topics into the target, in one transaction: their followers, shouts and drafts
    move to it (a shout or draft that had a source as its main topic has the target as its main one),
    their subtopics sit under it, and the sources are deleted. `preserve_target_properties` false: the
    target also takes the sources' parents."""
    target_id, sources = merge["target_topic_id"], sorted(set(merge["source_topic_ids"]))
    if not sources:
        raise BadInput("name at least one topic to merge", field="source_topic_ids")
    if len(sources) > MERGE_MAX_SOURCES:
        raise BadInput(f"at most {MERGE_MAX_SOURCES} topics in one merge", field="source_topic_ids")
    if target_id in sources:
        raise BadInput("the target cannot be one of the sources", field="source_topic_ids")
    stats = {"followers_moved": 0, "publications_moved": 0, "drafts_moved": 0, "source_topics_deleted": 0}
    dry = False
    try:
        await _merge(deps, viewer, merge, target_id, sources, stats)
    except _DryRun:  # rolled back: nothing changed, nothing invalidated
        dry = True
    answer = await _answer(deps, target_id, stats=stats)
    slug = (answer["topic"] or {}).get("slug")
    answer["message"] = ("a dry run: nothing was merged" if dry
                         else f"{stats['source_topics_deleted']} topics merged into {slug}")
    return answer


class _DryRun(Exception):
    """Ends a merge's transaction before its commit, the merge's counts made."""


async def _merge(deps: Deps, viewer: Viewer | None, merge: dict[str, Any], target_id: int, sources: list[int],
                 stats: dict[str, int]) -> None:
    async with transaction(deps) as session:
        target = await _topic(session, target_id)
        found = {t.id: t for t in (await session.scalars(select(Topic).where(Topic.id.in_(sources)))).all()}
        if missing := [s for s in sources if s not in found]:
            raise NotFound(f"no topic {missing[0]}", field="source_topic_ids")
        if any(t.community != target.community for t in found.values()):
            raise BadInput("topics of different communities cannot be merged", field="source_topic_ids")
        require(viewer, "topic:update", community_id=target.community)
        require(viewer, "topic:delete", community_id=target.community)
        stats["followers_moved"] = await _move_links(session, TopicFollower, "follower", target_id, sources)
        stats["publications_moved"] = await _move_links(session, ShoutTopic, "shout", target_id, sources)
        stats["drafts_moved"] = await _move_links(session, DraftTopic, "draft", target_id, sources)
        gone = {*sources, target_id}
        for child in await _under(session, target.community, sources):
            moved_up = {target_id if p in sources else p for p in child.parent_ids or []} - {child.id}
            child.parent_ids = sorted(moved_up) or None
        parents = set(target.parent_ids or [])
        if merge.get("preserve_target_properties") is False:
            for source in found.values():
                parents |= set(source.parent_ids or [])
        target.parent_ids = sorted(parents - gone) or None
        for source in found.values():
            await session.delete(source)
        stats["source_topics_deleted"] = len(found)
        if merge.get("dry_run"):
            raise _DryRun
        record(session, require_viewer(viewer), "topic.merge", "topic", target_id, community=target.community,
               before={"sources": [_shape(t) for t in found.values()]}, after={**_shape(target), **stats})


async def _under(session: AsyncSession, community: int, parents: list[int]) -> list[Topic]:
    candidates = (await session.scalars(select(Topic).where(Topic.community == community,
                                                            Topic.parent_ids.is_not(None)))).all()
    return [t for t in candidates if set(t.parent_ids or []) & set(parents)]


async def _move_links(session: AsyncSession, model: Any, owner: str, target: int, sources: list[int]) -> int:
    """Moves the rows linking something (`owner`: a follower, a shout, a draft) to the sources onto the
    target, row by row so the triggers see each; what is linked to the target already keeps its row (and
    becomes main on it when a source was its main). The number of rows the target gained."""
    rows = (await session.scalars(select(model).where(model.topic.in_(sources)))).all()
    owners = {getattr(row, owner) for row in rows}
    existing = {getattr(row, owner): row for row in (await session.scalars(
        select(model).where(model.topic == target, getattr(model, owner).in_(owners)))).all()} if owners else {}
    moved = 0
    for row in rows:
        key = getattr(row, owner)
        main = bool(getattr(row, "main", False))
        if key in existing:
            if main and hasattr(existing[key], "main"):
                existing[key].main = True
        else:
            values = {c.key: getattr(row, c.key) for c in model.__table__.c if c.key != "topic"}
            existing[key] = model(topic=target, **values)
            session.add(existing[key])
            moved += 1
        await session.delete(row)
    return moved


async def delete_topic(deps: Deps, viewer: Viewer | None, *, slug: str | None = None,
                       topic_id: int | None = None) -> dict[str, Any]:
    async with transaction(deps) as session:
        topic = await _topic(session, topic_id, slug)
        require(viewer, "topic:delete", community_id=topic.community)
        record(session, require_viewer(viewer), "topic.delete", "topic", topic.id, community=topic.community,
               before=_shape(topic), after=None)
        # Through the ORM, not the database's ON DELETE CASCADE, so the triggers see the shouts change.
        await session.execute(delete(ShoutTopic).where(ShoutTopic.topic == topic.id))
        await session.execute(delete(TopicFollower).where(TopicFollower.topic == topic.id))
        for child in await _under(session, topic.community, [topic.id]):  # its subtopics move up a level
            child.parent_ids = sorted(set(child.parent_ids or []) - {topic.id} | set(topic.parent_ids or [])) or None
        await session.delete(topic)
    return {"error": None}
