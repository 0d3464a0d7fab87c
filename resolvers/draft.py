"""Drafts and publishing: a draft is the editable working copy; publishing copies it into its shout.

Who may do what is asked of auth/permissions.py through `require`: a draft's or shout's authors act on
their own, editors on anyone's."""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer, can
from cache import keys
from cache.entities import fetch_shouts
from orm import Draft, DraftAuthor, DraftTopic, Shout, ShoutAuthor, ShoutTopic, Topic
from orm.community import DEFAULT_COMMUNITY
from orm.driver import SessionReads, reads
from resolvers.access import require, require_viewer
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, Forbidden, NotFound
from resolvers.events import draft_event, publication_event
from resolvers.writes import sync_rows, transaction

DRAFT_FIELDS = ("layout", "lead", "subtitle", "lang", "seo", "body", "title", "slug", "cover", "cover_caption")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,250}$")
MAX_TITLE = 1024
MAX_BODY = 1_000_000


def _check(values: dict[str, Any]) -> None:
    if (slug := values.get("slug")) is not None and not SLUG.match(slug):
        raise BadInput("slug: lower-case latin letters, digits and hyphens", field="slug")
    if len(values.get("title") or "") > MAX_TITLE:
        raise BadInput("title is too long", field="title")
    if len(values.get("body") or "") > MAX_BODY:
        raise BadInput("body is too long", field="body")


async def _draft_authors(session: AsyncSession, draft_id: int) -> list[int]:
    return list((await session.scalars(
        select(DraftAuthor.author).where(DraftAuthor.draft == draft_id).order_by(DraftAuthor.author))).all())


async def _shout_authors(session: AsyncSession, shout_id: int) -> list[int]:
    return list((await session.scalars(
        select(ShoutAuthor.author).where(ShoutAuthor.shout == shout_id).order_by(ShoutAuthor.author))).all())


async def draft_dicts(session: AsyncSession, drafts: list[Draft]) -> list[dict[str, Any]]:
    """Drafts with their authors, topics and publication: three statements for any number of drafts."""
    ids = [d.id for d in drafts]
    authors: dict[int, list[int]] = {i: [] for i in ids}
    topics: dict[int, list[int]] = {i: [] for i in ids}
    published: dict[int | None, dict[str, Any]] = {}
    if ids:
        for draft_id, author in await session.execute(
                select(DraftAuthor.draft, DraftAuthor.author).where(DraftAuthor.draft.in_(ids))
                .order_by(DraftAuthor.author)):
            authors[draft_id].append(author)
        for draft_id, topic in await session.execute(
                select(DraftTopic.draft, DraftTopic.topic).where(DraftTopic.draft.in_(ids))
                .order_by(DraftTopic.main.desc(), DraftTopic.topic)):
            topics[draft_id].append(topic)
        for shout_id, slug, published_at, of_draft in await session.execute(
                select(Shout.id, Shout.slug, Shout.published_at, Shout.draft)
                .where(Shout.draft.in_(ids), Shout.deleted_at.is_(None))):
            published[of_draft] = {"id": shout_id, "slug": slug, "published_at": published_at}
    return [{**d.dict(), "author_ids": authors[d.id], "topic_ids": topics[d.id],
             "publication": published.get(d.id)} for d in drafts]


async def _set_relations(session: AsyncSession, draft: Draft, viewer_id: int, author_ids: list[int] | None,
                         topic_ids: list[int] | None, main_topic: int | None) -> None:
    if author_ids is not None:
        # `author_ids` may drop co-authors and add the viewer, never add someone else: a co-author joins by
        # accepting an invite (create_invite, accept_invite), not because another user listed them.
        present = set(await _draft_authors(session, draft.id))
        wanted = set(author_ids) | {draft.created_by}
        if strangers := wanted - present - {viewer_id}:
            raise Forbidden(f"authors {sorted(strangers)} are not on this draft; a co-author joins by accepting "
                            "an invite (create_invite)", field="author_ids")
        await session.execute(delete(DraftAuthor).where(DraftAuthor.draft == draft.id,
                                                        DraftAuthor.author.not_in(wanted)))
        session.add_all(DraftAuthor(draft=draft.id, author=a) for a in sorted(wanted - present))
    if topic_ids is not None:
        known = set((await session.scalars(select(Topic.id).where(Topic.id.in_(topic_ids)))).all())
        if unknown := set(topic_ids) - known:
            raise BadInput(f"unknown topics {sorted(unknown)}", field="topic_ids")
        await session.execute(delete(DraftTopic).where(DraftTopic.draft == draft.id))
        main = main_topic if main_topic in known else (topic_ids[0] if topic_ids else None)
        session.add_all(DraftTopic(draft=draft.id, topic=t, main=t == main) for t in dict.fromkeys(topic_ids))


async def create_draft(deps: Deps, viewer: Viewer | None, draft_input: dict[str, Any]) -> dict[str, Any]:
    signed_in = require(viewer, "draft:create")
    values = {k: draft_input.get(k) for k in DRAFT_FIELDS if draft_input.get(k) is not None}
    _check(values)
    now = int(time.time())
    async with transaction(deps) as session:
        draft = Draft(created_by=signed_in.author_id, created_at=now, updated_at=now, community=DEFAULT_COMMUNITY,
                      media=draft_input.get("media"), **values)
        session.add(draft)
        await session.flush()
        session.add(DraftAuthor(draft=draft.id, author=signed_in.author_id))
        await session.flush()
        await _set_relations(session, draft, signed_in.author_id, draft_input.get("author_ids"),
                             draft_input.get("topic_ids"), draft_input.get("main_topic_id"))
    return {"draft": await get_draft(deps, viewer, draft.id)}


async def create_draft_from_shout(deps: Deps, viewer: Viewer | None, shout_id: int) -> dict[str, Any]:
    """An editable draft of a shout, for its authors (or an editor): the shout's own draft if it has one,
    else a new one copied from the shout, with its authors and topics, that `publish_draft` publishes
    back into the same shout. Its authors are the shout's: they consented when they joined it."""
    async with transaction(deps) as session:
        shout = await session.get(Shout, shout_id, with_for_update=True)  # two calls make one draft
        if shout is None or shout.deleted_at is not None:
            raise NotFound("no such shout", field="shout_id")
        authors = await _shout_authors(session, shout.id)
        require(viewer, "shout:update", community_id=shout.community, owners=authors)
        existing = await session.get(Draft, shout.draft) if shout.draft is not None else None
        if existing is not None and existing.deleted_at is None:
            return {"draft": await get_draft(deps, viewer, existing.id)}
        now = int(time.time())
        draft = Draft(created_by=shout.created_by, created_at=now, updated_at=now, community=shout.community,
                      media=shout.media, **{name: getattr(shout, name) for name in DRAFT_FIELDS})
        session.add(draft)
        await session.flush()
        shout.draft = draft.id
        session.add_all(DraftAuthor(draft=draft.id, author=a) for a in authors)
        session.add_all(DraftTopic(draft=draft.id, topic=topic, main=bool(main)) for topic, main in
                        await session.execute(select(ShoutTopic.topic, ShoutTopic.main)
                                              .where(ShoutTopic.shout == shout.id)))
    return {"draft": await get_draft(deps, viewer, draft.id)}


async def _allowed_draft(session: AsyncSession, viewer: Viewer | None, draft_id: int, permission: str | None, *,
                         lock: bool = False) -> tuple[Draft, list[int]]:
    """The draft and its authors, if it exists and `viewer` has `permission` on it (its authors' own, or
    anyone's); None: checked elsewhere. `lock`: the row locked for the transaction."""
    draft = await session.get(Draft, draft_id, with_for_update=lock)
    if draft is None or draft.deleted_at is not None:
        raise NotFound("no such draft", field="draft_id")
    authors = await _draft_authors(session, draft.id)
    if permission is not None:
        require(viewer, permission, community_id=draft.community, owners=authors)
    return draft, authors


async def update_draft(deps: Deps, viewer: Viewer | None, draft_id: int, draft_input: dict[str, Any]) -> dict[str, Any]:
    values = {k: draft_input[k] for k in DRAFT_FIELDS if k in draft_input}
    _check(values)
    async with transaction(deps) as session:
        draft, authors = await _allowed_draft(session, viewer, draft_id, "draft:update")
        draft_event(session, draft.id, "update", viewer.author_id if viewer else None, authors)
        for name, value in values.items():
            setattr(draft, name, value)
        if "media" in draft_input:
            draft.media = draft_input["media"]
        draft.updated_at = int(time.time())
        draft.updated_by = viewer.author_id if viewer else None
        await _set_relations(session, draft, draft.updated_by or draft.created_by, draft_input.get("author_ids"),
                             draft_input.get("topic_ids"), draft_input.get("main_topic_id"))
    return {"draft": await get_draft(deps, viewer, draft_id)}


async def delete_draft(deps: Deps, viewer: Viewer | None, draft_id: int) -> dict[str, Any]:
    async with transaction(deps) as session:
        draft, authors = await _allowed_draft(session, viewer, draft_id, "draft:delete")
        draft_event(session, draft.id, "delete", viewer.author_id if viewer else None, authors)
        draft.deleted_at = int(time.time())
        draft.deleted_by = viewer.author_id if viewer else None
    return {"draft": await get_draft(deps, viewer, draft_id)}


async def draft_to_publish(session: AsyncSession, viewer: Viewer | None, draft_id: int, *,
                           scheduled: bool = False) -> tuple[Draft, list[int]]:
    """The draft and its authors, if it exists and `viewer` may publish it. `scheduled`: the delayed queue
    publishes it (locked against a concurrent reschedule), on the permission checked when it was
    scheduled."""
    return await _allowed_draft(session, viewer, draft_id, None if scheduled else "shout:publish", lock=scheduled)


def require_content(draft: Draft) -> None:
    if not (draft.title or "").strip() or not (draft.body or "").strip():
        raise BadInput("a draft needs a title and a body to be published", field="draft_id")


async def publish_draft(deps: Deps, viewer: Viewer | None, draft_id: int, *,
                        scheduled_for: int | None = None) -> dict[str, Any]:
    """Create or update the draft's shout from the draft and publish it. `scheduled_for`: the delayed
    queue publishes a draft scheduled for that time (permission was checked when it was scheduled); a
    draft rescheduled or unscheduled since is left alone."""
    now = int(time.time())
    async with transaction(deps) as session:
        draft, authors = await draft_to_publish(session, viewer, draft_id, scheduled=scheduled_for is not None)
        if scheduled_for is not None and draft.publish_at != scheduled_for:
            return {"draft": None, "shout": None}
        draft.publish_at = None
        require_content(draft)
        shout = await session.scalar(select(Shout).where(Shout.draft == draft.id))
        slug = draft.slug or f"draft-{draft.id}"
        clash = await session.scalar(select(Shout.id).where(Shout.slug == slug,
                                                            Shout.id != (shout.id if shout else -1)))
        if clash is not None:
            raise Conflict(f"the slug {slug!r} is taken by another shout", field="slug")
        was_public = shout is not None and shout.published_at is not None and shout.deleted_at is None
        if shout is None:
            shout = Shout(created_at=now, created_by=draft.created_by, community=draft.community, draft=draft.id,
                          slug=slug, title=draft.title or "")
            session.add(shout)
        for name in ("title", "subtitle", "lead", "body", "cover", "cover_caption", "lang", "seo", "media"):
            setattr(shout, name, getattr(draft, name))
        shout.slug, shout.layout = slug, draft.layout or "article"
        shout.updated_at, shout.updated_by = now, viewer.author_id if viewer else draft.created_by
        shout.published_at, shout.deleted_at = shout.published_at or now, None
        await session.flush()
        topics = dict((await session.execute(select(DraftTopic.topic, DraftTopic.main)
                                             .where(DraftTopic.draft == draft.id))).all())
        await sync_rows(session, ShoutAuthor.shout, shout.id, {a: {} for a in authors}, "author")
        await sync_rows(session, ShoutTopic.shout, shout.id, {t: {"main": m} for t, m in topics.items()}, "topic")
        if not was_public:
            await session.flush()
            await publication_event(session, shout.id, viewer.author_id if viewer else draft.created_by,
                                    cap=deps.notify_fanout)
    return {"draft": await get_draft(deps, viewer, draft_id), "shout": await own_shout(deps, shout.id)}


async def unpublish_draft(deps: Deps, viewer: Viewer | None, draft_id: int) -> dict[str, Any]:
    """Unpublish the draft's shout. The draft's own authors (or an editor) may, whether or not it was ever
    published: a draft that was not is answered as it is, to them alone."""
    async with deps.db() as session:
        await _allowed_draft(session, viewer, draft_id, "shout:unpublish")
        shout_id = await session.scalar(select(Shout.id).where(Shout.draft == draft_id))
    if shout_id is not None:
        await _set_published(deps, viewer, shout_id, publish=False)
    return {"draft": await get_draft(deps, viewer, draft_id)}


async def _set_published(deps: Deps, viewer: Viewer | None, shout_id: int, *, publish: bool) -> None:
    async with transaction(deps) as session:
        shout = await session.get(Shout, shout_id)
        if shout is None or shout.deleted_at is not None:
            raise NotFound("no such shout", field="shout_id")
        require(viewer, "shout:publish" if publish else "shout:unpublish", community_id=shout.community,
                owners=await _shout_authors(session, shout.id))
        now = int(time.time())
        was_public = shout.published_at is not None
        shout.published_at = (shout.published_at or now) if publish else None
        shout.updated_at, shout.updated_by = now, viewer.author_id if viewer else None
        if publish and not was_public:
            await session.flush()
            await publication_event(session, shout.id, viewer.author_id if viewer else None, cap=deps.notify_fanout)


async def publish_shout(deps: Deps, viewer: Viewer | None, shout_id: int) -> dict[str, Any]:
    await _set_published(deps, viewer, shout_id, publish=True)
    return {"shout": await own_shout(deps, shout_id)}


async def unpublish_shout(deps: Deps, viewer: Viewer | None, shout_id: int) -> dict[str, Any]:
    await _set_published(deps, viewer, shout_id, publish=False)
    return {"shout": await own_shout(deps, shout_id)}


# --- reads of one's own work (per viewer, never in a shared key) -----------------------------------------

def readable(viewer: Viewer | None, draft: dict[str, Any]) -> bool:
    """Whether `viewer` may see this draft: its authors, and whom auth/permissions.py lets read any."""
    return can(viewer, "draft:read", community_id=draft["community"], owners=draft["author_ids"])


async def draft_dicts_of(deps: Deps, viewer: Viewer | None, ids: list[int]) -> list[dict[str, Any]]:
    """The drafts of `ids` that `viewer` may read. Every answer that carries a draft comes through here, so
    a write path that forgot its own check still shows no one else's draft."""
    async with deps.db() as session:
        drafts = list((await session.scalars(select(Draft).where(Draft.id.in_(ids)))).all())
        return [d for d in await draft_dicts(session, drafts) if readable(viewer, d)]


async def get_draft(deps: Deps, viewer: Viewer | None, draft_id: int) -> dict[str, Any] | None:
    found = await draft_dicts_of(deps, viewer, [draft_id])
    return found[0] if found else None


async def own_shout(deps: Deps, shout_id: int) -> dict[str, Any] | None:
    async with reads(deps.db) as reading:
        return (await fetch_shouts(reading, [shout_id], listed_only=False)).get(shout_id)


async def load_drafts(deps: Deps, viewer: Viewer | None) -> dict[str, Any]:
    author_id = require_viewer(viewer).author_id  # one's own drafts: no permission beyond signing in

    async def query() -> list[dict[str, Any]]:
        async with deps.db() as session:
            drafts = list((await session.scalars(
                select(Draft).where(Draft.deleted_at.is_(None), or_(
                    Draft.created_by == author_id,
                    Draft.id.in_(select(DraftAuthor.draft).where(DraftAuthor.author == author_id))))
                .order_by(Draft.updated_at.desc().nulls_last(), Draft.id.desc()))).all())
            return await draft_dicts(session, drafts)

    drafts = await deps.cache.cached_query(keys.drafts_by_author(author_id), query,
                                           tags=[keys.tag_drafts_of(author_id), keys.tag_entities("draft")])
    return {"drafts": drafts}


async def get_shouts_drafts(deps: Deps, viewer: Viewer | None) -> dict[str, Any]:
    """The viewer's shouts that are not published (Discours' "shouts drafts")."""
    signed_in = require_viewer(viewer)
    async with deps.db() as session:
        ids = list((await session.scalars(
            select(Shout.id).join(ShoutAuthor, ShoutAuthor.shout == Shout.id)
            .where(ShoutAuthor.author == signed_in.author_id, Shout.published_at.is_(None),
                   Shout.deleted_at.is_(None)).order_by(Shout.updated_at.desc().nulls_last(), Shout.id.desc()))).all())
        shouts = await fetch_shouts(SessionReads(session), ids, listed_only=False)
    return {"shouts": [shouts[i] for i in ids if i in shouts]}


async def get_my_shout(deps: Deps, viewer: Viewer | None, shout_id: int) -> dict[str, Any]:
    async with deps.db() as session:
        shout = await session.get(Shout, shout_id)
        if shout is None or shout.deleted_at is not None:
            return {"error": "no such shout"}
        require(viewer, "shout:update", community_id=shout.community, owners=await _shout_authors(session, shout_id))
    return {"shout": await own_shout(deps, shout_id), "error": None}


