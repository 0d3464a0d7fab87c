"""Invitations to co-author a shout: its authors invite, the invitee accepts or rejects."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from orm import Author, DraftAuthor, Invite, InviteStatus, Shout, ShoutAuthor
from resolvers.access import require, require_viewer
from resolvers.deps import Deps
from resolvers.draft import own_shout
from resolvers.errors import BadInput, Conflict, Forbidden, NotFound
from resolvers.events import invite_event
from resolvers.writes import transaction


async def _shout_and_authors(session: AsyncSession, slug: str | None) -> tuple[Shout, list[int]]:
    shout = await session.scalar(select(Shout).where(Shout.slug == slug, Shout.deleted_at.is_(None)))
    if shout is None:
        raise NotFound("no such shout", field="slug")
    authors = list((await session.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == shout.id))).all())
    return shout, authors


async def _author_id(session: AsyncSession, author_id: int | None) -> int:
    if author_id is None or await session.get(Author, author_id) is None:
        raise NotFound("no such author", field="author_id")
    return author_id


async def create_invite(deps: Deps, viewer: Viewer | None, slug: str | None, author_id: int | None) -> dict[str, Any]:
    async with transaction(deps) as session:
        shout, authors = await _shout_and_authors(session, slug)
        signed_in = require(viewer, "invite:manage", community_id=shout.community, owners=authors)
        invitee = await _author_id(session, author_id)
        if invitee in authors:
            raise Conflict("already an author of this shout", field="author_id")
        existing = await session.scalar(select(Invite).where(
            Invite.inviter_id == signed_in.author_id, Invite.author_id == invitee, Invite.shout_id == shout.id))
        if existing is None:
            session.add(Invite(inviter_id=signed_in.author_id, author_id=invitee, shout_id=shout.id,
                               status=InviteStatus.PENDING.value))
        else:
            existing.status = InviteStatus.PENDING.value
    return {"shout": await own_shout(deps, shout.id), "error": None}


async def _invite(session: AsyncSession, invite_id: int) -> Invite:
    invite = await session.get(Invite, invite_id)
    if invite is None:
        raise NotFound("no such invite", field="invite_id")
    return invite


async def answer_invite(deps: Deps, viewer: Viewer | None, invite_id: int, *, accept: bool) -> dict[str, Any]:
    signed_in = require_viewer(viewer)
    async with transaction(deps) as session:
        invite = await _invite(session, invite_id)
        if invite.author_id != signed_in.author_id:
            raise Forbidden("this invite is for someone else")
        if invite.status != InviteStatus.PENDING.value:
            raise Conflict("this invite has been answered", field="invite_id")
        invite.status = (InviteStatus.ACCEPTED if accept else InviteStatus.REJECTED).value
        if accept:
            await join_as_author(session, invite.shout_id, invite.author_id)
            await invite_event(session, invite)
    return {"shout": await own_shout(deps, invite.shout_id), "error": None}


async def join_as_author(session: AsyncSession, shout_id: int, author_id: int) -> None:
    """An accepted invite makes its author a co-author of the shout and of the draft it is published from,
    so publishing the draft again keeps them."""
    if await session.get(ShoutAuthor, (shout_id, author_id)) is None:
        session.add(ShoutAuthor(shout=shout_id, author=author_id))
    draft_id = await session.scalar(select(Shout.draft).where(Shout.id == shout_id))
    if draft_id is not None and await session.get(DraftAuthor, (draft_id, author_id)) is None:
        session.add(DraftAuthor(draft=draft_id, author=author_id))


async def remove_invite(deps: Deps, viewer: Viewer | None, invite_id: int) -> dict[str, Any]:
    signed_in = require_viewer(viewer)
    async with transaction(deps) as session:
        invite = await _invite(session, invite_id)
        if invite.inviter_id != signed_in.author_id:
            raise Forbidden("only who invited can take an invite back")
        if invite.status != InviteStatus.PENDING.value:
            raise Conflict("an answered invite cannot be taken back", field="invite_id")
        await session.delete(invite)
    return {"error": None}


async def remove_author(deps: Deps, viewer: Viewer | None, slug: str | None, author_id: int | None) -> dict[str, Any]:
    async with transaction(deps) as session:
        shout, authors = await _shout_and_authors(session, slug)
        require(viewer, "shout:update", community_id=shout.community, owners=authors)
        removed = await _author_id(session, author_id)
        if removed not in authors:
            raise NotFound("not an author of this shout", field="author_id")
        if removed == shout.created_by or len(authors) == 1:
            raise BadInput("the shout's creator stays its author", field="author_id")
        await session.delete(await session.get(ShoutAuthor, (shout.id, removed)))
        if shout.draft is not None and (row := await session.get(DraftAuthor, (shout.draft, removed))):
            await session.delete(row)  # or publishing the draft again would bring them back
    return {"shout": await own_shout(deps, shout.id), "error": None}


async def pending_invites(deps: Deps, viewer: Viewer | None) -> list[dict[str, Any]]:
    signed_in = require_viewer(viewer)
    async with deps.db() as session:
        rows = (await session.scalars(select(Invite).where(
            Invite.author_id == signed_in.author_id, Invite.status == InviteStatus.PENDING.value)
            .order_by(Invite.id))).all()
    return [r.dict() for r in rows]



