"""Invitations as moderators see them (the admin API): every invite of the communities they moderate,
paged, by status and by the names of who invited, who is invited and the shout; a status set (an
accepted invite makes its author a co-author, as accepting it does), invites deleted one by one or in
a batch, in one transaction. Each write is recorded in the audit trail."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import aliased

from auth.permissions import Viewer
from orm import Author, Invite, InviteStatus, Shout
from resolvers.access import require, require_viewer
from resolvers.audit import record
from resolvers.deps import Deps, checked_status, holding
from resolvers.errors import BadInput, NotFound
from resolvers.invite import join_as_author
from resolvers.moderation import moderated_communities, shouts_by_id
from resolvers.paging import counted_page, page
from resolvers.writes import transaction

DEFAULT_LIMIT = 20
STATUSES = ("all", *(s.value.lower() for s in InviteStatus))
# How many invites one batch may delete: a batch is one transaction.
BATCH_MAX = 100


def _key(invite: dict[str, Any]) -> tuple[int, int, int]:
    return invite["inviter_id"], invite["author_id"], invite["shout_id"]


async def admin_get_invites(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None,
                            search: str | None, status: str | None, community: int | None = None) -> dict[str, Any]:
    communities = moderated_communities(viewer, "invite:moderate", community)
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    state = checked_status(status, STATUSES)
    stmt: Select[Any] = select(*Invite.__table__.c).join(Shout, Shout.id == Invite.shout_id)
    if state != "all":
        stmt = stmt.where(Invite.status == state.upper())
    if communities is not None:
        stmt = stmt.where(Shout.community.in_(communities))
    if text := (search or "").strip():
        inviter, invited = aliased(Author), aliased(Author)
        stmt = stmt.join(inviter, inviter.id == Invite.inviter_id).join(invited, invited.id == Invite.author_id)
        names = (who_column for who in (inviter, invited) for who_column in (who.name, who.slug))
        stmt = stmt.where(holding(text, (Shout.title, Shout.slug, *names), Invite.shout_id))
    rows, fields = await counted_page(deps.db, stmt, (Invite.id.desc(),), limit, offset)
    shouts = await shouts_by_id(deps, sorted({r["shout_id"] for r in rows}))
    return {"invites": [{**r, "shout_data": shouts[r["shout_id"]]} for r in rows if r["shout_id"] in shouts],
            **fields}


async def _invite(session: Any, viewer: Viewer | None, key: tuple[int, int, int]) -> tuple[Invite, int]:
    """The invite `key` names and its shout's community, if the viewer moderates it."""
    inviter_id, author_id, shout_id = key
    invite = await session.scalar(select(Invite).where(Invite.inviter_id == inviter_id, Invite.author_id == author_id,
                                                       Invite.shout_id == shout_id))
    if invite is None:
        raise NotFound("no such invite", field="shout_id")
    community = await session.scalar(select(Shout.community).where(Shout.id == shout_id))
    require(viewer, "invite:moderate", community_id=community or 1)
    return invite, community or 1


async def admin_update_invite(deps: Deps, viewer: Viewer | None, changes: dict[str, Any]) -> None:
    status = InviteStatus(changes["status"]).value
    async with transaction(deps) as session:
        invite, community = await _invite(session, viewer, _key(changes))
        before = invite.status
        invite.status = status
        if status == InviteStatus.ACCEPTED.value and before != status:
            await join_as_author(session, invite.shout_id, invite.author_id)
        record(session, require_viewer(viewer), "invite.update", "invite", ":".join(map(str, _key(changes))),
               community=community, before={"status": before}, after={"status": status})


async def admin_delete_invites(deps: Deps, viewer: Viewer | None, invites: list[dict[str, Any]]) -> None:
    """Deletes the invites named, all or none: an unknown or refused one fails the whole batch."""
    keys = list(dict.fromkeys(_key(i) for i in invites))
    if not keys:
        raise BadInput("name at least one invite", field="invites")
    if len(keys) > BATCH_MAX:
        raise BadInput(f"at most {BATCH_MAX} invites in one batch", field="invites")
    async with transaction(deps) as session:
        for key in keys:
            invite, community = await _invite(session, viewer, key)
            record(session, require_viewer(viewer), "invite.delete", "invite", ":".join(map(str, key)),
                   community=community, before={"status": invite.status}, after=None)
            await session.delete(invite)
