"""Moderation of shouts and reactions (the admin API's): lists for moderators by status, kind, shout,
community and text, paged with their totals; edits, soft deletes and restores, each recorded in the audit
trail (resolvers/audit.py) and written through `transaction`, so the triggers' invalidation covers them.

A delete is soft (`deleted_at`, `deleted_by`); a restore clears both, and the live structures (threads,
counters, feeds) take the row back where it was, since they follow `deleted_at` (triggers/live_rules.py).
Who may: the `*_any` and `moderate` permissions of auth/permissions.py in the community of the shout."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer, permissions_of
from cache.entities import fetch_shouts
from orm import Community, DraftTopic, Reaction, Shout, ShoutTopic, Topic
from orm.driver import SessionReads
from orm.engine import read_session
from orm.reaction import ReactionKind
from resolvers.access import require, require_viewer
from resolvers.audit import record
from resolvers.deps import Deps, checked_status, holding
from resolvers.errors import BadInput, Forbidden, NotFound
from resolvers.paging import counted_page, page
from resolvers.writes import sync_rows, transaction

DEFAULT_LIMIT = 20
SHOUT_STATUSES = ("all", "published", "draft", "deleted")
REACTION_STATUSES = ("all", "active", "deleted")
# What adminUpdateShout may set, and adminUpdateReaction.
SHOUT_FIELDS = ("title", "body", "lead", "subtitle", "cover", "cover_caption", "media", "seo", "published_at",
                "featured_at", "deleted_at")
REACTION_FIELDS = ("body", "deleted_at")


def moderated_communities(viewer: Viewer | None, permission: str, community: int | None) -> list[int] | None:
    """The communities whose lists the viewer moderates: the one asked for, else every one where they hold
    `permission` (None: all, for ADMIN_EMAILS' administrators)."""
    signed_in = require_viewer(viewer)
    if community is not None:
        require(signed_in, permission, community_id=community)
        return [community]
    if signed_in.system_admin:
        return None
    mine = sorted(c for c in signed_in.roles if permission in permissions_of(signed_in, c))
    if not mine:
        raise Forbidden(f"not allowed: {permission}")
    return mine


async def moderated_by(deps: Deps, viewer: Viewer | None, permission: str = "reaction:moderate") -> list[int]:
    """Every community whose comments `viewer` moderates (each one for ADMIN_EMAILS' administrators)."""
    if viewer is None:
        return []
    if viewer.system_admin:
        async with read_session(deps.db) as session:
            return list((await session.scalars(select(Community.id).order_by(Community.id))).all())
    return sorted(c for c in viewer.roles if permission in permissions_of(viewer, c))


async def shouts_by_id(deps: Deps, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Shouts whatever their state, with their authors' and topics' ids, uncached (a moderator's view)."""
    if not ids:
        return {}
    async with read_session(deps.db) as session:
        return await fetch_shouts(SessionReads(session), ids, listed_only=False)


# --- shouts ---------------------------------------------------------------------------------------------

def _shout_status(status: str) -> ColumnElement[bool] | None:
    return {"published": Shout.published_at.is_not(None) & Shout.deleted_at.is_(None),
            "draft": Shout.published_at.is_(None) & Shout.deleted_at.is_(None),
            "deleted": Shout.deleted_at.is_not(None)}.get(status)


async def admin_get_shouts(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None,
                           search: str | None, status: str | None, community: int | None) -> dict[str, Any]:
    communities = moderated_communities(viewer, "shout:moderate", community)
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt = select(Shout.id)
    if (condition := _shout_status(checked_status(status, SHOUT_STATUSES))) is not None:
        stmt = stmt.where(condition)
    if communities is not None:
        stmt = stmt.where(Shout.community.in_(communities))
    if text := (search or "").strip():
        stmt = stmt.where(holding(text, (Shout.title, Shout.slug, Shout.body), Shout.id))
    rows, fields = await counted_page(deps.db, stmt, (Shout.id.desc(),), limit, offset)
    shouts = await shouts_by_id(deps, [r["id"] for r in rows])
    return {"shouts": [shouts[r["id"]] for r in rows if r["id"] in shouts], **fields}


async def _moderated_shout(session: AsyncSession, viewer: Viewer | None, shout_id: int, permission: str) -> Shout:
    shout = await session.get(Shout, shout_id)
    if shout is None:
        raise NotFound("no such shout", field="id")
    require(viewer, permission, community_id=shout.community)
    return shout


def _values(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in names}


async def admin_update_shout(deps: Deps, viewer: Viewer | None, changes: dict[str, Any]) -> None:
    values = {k: v for k, v in changes.items() if k in SHOUT_FIELDS}
    if "title" in values and not str(values["title"]).strip():
        raise BadInput("a shout needs a title", field="title")
    async with transaction(deps) as session:
        shout = await _moderated_shout(session, viewer, changes["id"], "shout:update")
        before = _values(shout, tuple(values))
        for name, value in values.items():
            setattr(shout, name, value)
        if changes.get("topic_ids") is not None:
            topics = await _set_topics(session, shout, changes["topic_ids"], changes.get("main_topic_id"))
            before["topic_ids"], values = topics, {**values, "topic_ids": sorted(changes["topic_ids"])}
        shout.updated_at, shout.updated_by = int(time.time()), require_viewer(viewer).author_id
        record(session, require_viewer(viewer), "shout.update", "shout", shout.id, community=shout.community,
               before=before, after=values)


async def _set_topics(session: AsyncSession, shout: Shout, topic_ids: list[int], main: int | None) -> list[int]:
    """The shout's topics (and its draft's, which a later publication copies) made `topic_ids`, all of its
    community, `main` the main one (else the main one kept, else the first); the topics it had."""
    wanted = list(dict.fromkeys(topic_ids))
    found = set((await session.scalars(select(Topic.id).where(Topic.id.in_(wanted),
                                                              Topic.community == shout.community))).all())
    if missing := [t for t in wanted if t not in found]:
        raise BadInput(f"topics {missing} are not topics of the shout's community", field="topic_ids")
    had = dict((await session.execute(select(ShoutTopic.topic, ShoutTopic.main)
                                      .where(ShoutTopic.shout == shout.id))).all())
    if main is not None and main not in wanted:
        raise BadInput("the main topic must be one of topic_ids", field="main_topic_id")
    main = main if main is not None else next((t for t in wanted if had.get(t)), wanted[0] if wanted else None)
    rows = {t: {"main": t == main} for t in wanted}
    await sync_rows(session, ShoutTopic.shout, shout.id, rows, "topic")
    if shout.draft is not None:
        await sync_rows(session, DraftTopic.draft, shout.draft, rows, "topic")
    return sorted(had)


async def admin_delete_shout(deps: Deps, viewer: Viewer | None, shout_id: int, *, restore: bool) -> None:
    """Soft-deletes a shout (it leaves every feed, its page and its topics' and authors' counts), or
    restores a deleted one as it was."""
    async with transaction(deps) as session:
        shout = await _moderated_shout(session, viewer, shout_id, "shout:restore" if restore else "shout:delete")
        if (shout.deleted_at is None) == restore:
            raise BadInput("the shout is not deleted" if restore else "the shout is deleted already", field="id")
        before = _values(shout, ("deleted_at", "deleted_by"))
        signed_in = require_viewer(viewer)
        shout.deleted_at, shout.deleted_by = (None, None) if restore else (int(time.time()), signed_in.author_id)
        record(session, signed_in, "shout.restore" if restore else "shout.delete", "shout", shout.id,
               community=shout.community, before=before, after=_values(shout, ("deleted_at", "deleted_by")))


# --- reactions ------------------------------------------------------------------------------------------

async def admin_get_reactions(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None,
                              search: str | None, kind: str | None, shout_id: int | None,
                              status: str | None, community: int | None = None) -> dict[str, Any]:
    communities = moderated_communities(viewer, "reaction:moderate", community)
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    stmt = select(*Reaction.__table__.c).join(Shout, Shout.id == Reaction.shout)
    state = checked_status(status, REACTION_STATUSES)
    if state != "all":
        stmt = stmt.where(Reaction.deleted_at.is_(None) if state == "active" else Reaction.deleted_at.is_not(None))
    if kind is not None:
        stmt = stmt.where(Reaction.kind == ReactionKind(kind).value)
    if shout_id is not None:
        stmt = stmt.where(Reaction.shout == shout_id)
    if communities is not None:
        stmt = stmt.where(Shout.community.in_(communities))
    if text := (search or "").strip():
        stmt = stmt.where(holding(text, (Reaction.body,), Reaction.id))
    rows, fields = await counted_page(deps.db, stmt, (Reaction.created_at.desc(), Reaction.id.desc()), limit, offset)
    shouts = await shouts_by_id(deps, sorted({r["shout"] for r in rows}))
    return {"reactions": [{**r, "shout_data": shouts.get(r["shout"])} for r in rows], **fields}


async def _moderated_reaction(session: AsyncSession, viewer: Viewer | None, reaction_id: int,
                              permission: str) -> tuple[Reaction, int]:
    reaction = await session.get(Reaction, reaction_id)
    if reaction is None:
        raise NotFound("no such reaction", field="id")
    community = await session.scalar(select(Shout.community).where(Shout.id == reaction.shout))
    require(viewer, permission, community_id=community or 1)
    return reaction, community or 1


async def admin_update_reaction(deps: Deps, viewer: Viewer | None, changes: dict[str, Any]) -> None:
    values = {k: v for k, v in changes.items() if k in REACTION_FIELDS}
    async with transaction(deps) as session:
        reaction, community = await _moderated_reaction(session, viewer, changes["id"], "reaction:moderate")
        if "body" in values and reaction.kind in ("LIKE", "DISLIKE"):
            raise BadInput("a vote has no body to edit", field="body")
        before = _values(reaction, tuple(values))
        for name, value in values.items():
            setattr(reaction, name, value)
        if "deleted_at" in values:
            reaction.deleted_by = None if values["deleted_at"] is None else require_viewer(viewer).author_id
        reaction.updated_at = int(time.time())
        record(session, require_viewer(viewer), "reaction.update", "reaction", reaction.id, community=community,
               before=before, after=values)


async def admin_delete_reaction(deps: Deps, viewer: Viewer | None, reaction_id: int, *,
                                restore: bool) -> None:
    """Hides a reaction (soft delete: its thread keeps its shape, its counts drop), or brings back a hidden
    one, its counts and its place in its thread with it."""
    async with transaction(deps) as session:
        reaction, community = await _moderated_reaction(session, viewer, reaction_id,
                                                        "reaction:restore" if restore else "reaction:delete")
        if (reaction.deleted_at is None) == restore:
            raise BadInput("the reaction is not deleted" if restore else "the reaction is deleted already", field="id")
        before = _values(reaction, ("deleted_at", "deleted_by"))
        signed_in = require_viewer(viewer)
        reaction.deleted_at, reaction.deleted_by = (None, None) if restore else (int(time.time()), signed_in.author_id)
        record(session, signed_in, "reaction.restore" if restore else "reaction.delete", "reaction", reaction.id,
               community=community, before=before, after=_values(reaction, ("deleted_at", "deleted_by")))
