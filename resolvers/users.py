"""People, for the platform's administrators (the admin API): listed and searched by address, name, slug
or id; their address, name and slug changed (each unique), their roles in a community set; their account
closed.

Closing an account (`adminDeleteUser`) is the rule docs/accounts.md states: the person can no longer sign
in (their sessions end, their password, provider identities and address are removed, so the address can
sign up again), they leave every community's roles, and their profile is hidden from author lists; what
they wrote stays as it is, credited to them: shouts, drafts and reactions are the publication's, and
nothing of them is lost. Nobody closes their own account this way, nor the last administrator of a
community's. Every write is in the audit trail."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from auth.accounts import normal_address
from auth.permissions import Viewer
from orm import Author, CommunityAuthor
from orm.community import DEFAULT_COMMUNITY, role_list
from resolvers.access import require
from resolvers.audit import record
from resolvers.deps import Deps, holding
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.paging import counted_page, page
from resolvers.profile import LIMITS, SLUG
from resolvers.roles import change_member_roles, check_admin_kept, forget_member_roles
from resolvers.writes import transaction

MANAGE = "user:manage"
DEFAULT_LIMIT = 20


async def get_users(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None,
                    search: str | None) -> dict[str, Any]:
    """A page of open accounts, newest last, with their roles in the platform's community."""
    require(viewer, MANAGE)
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    platform = (CommunityAuthor.author == Author.id) & (CommunityAuthor.community == DEFAULT_COMMUNITY)
    stmt = select(Author.id, Author.email, Author.name, Author.slug, Author.created_at, Author.last_seen,
                  CommunityAuthor.roles).outerjoin(CommunityAuthor, platform).where(Author.deleted_at.is_(None))
    if text := (search or "").strip():
        stmt = stmt.where(holding(text, (Author.email, Author.name, Author.slug), Author.id))
    rows, fields = await counted_page(deps.db, stmt, (Author.id,), limit, offset)
    return {"authors": [{**row, "roles": role_list(row["roles"])} for row in rows], **fields}


async def update_user(deps: Deps, viewer: Viewer | None, user: dict[str, Any]) -> None:
    """Changes the address, name and slug given (each checked, address and slug unique); `roles` given
    sets the person's roles in `community` (the platform's when not said), by the rules of resolvers/roles.py."""
    signed_in = require(viewer, MANAGE)
    changes: dict[str, Any] = {}
    if user.get("email") is not None:
        if (email := normal_address(user["email"])) is None:
            raise BadInput("not an e-mail address", field="email")
        changes["email"] = email
    if user.get("slug") is not None:
        if not SLUG.match(user["slug"]):
            raise BadInput("slug: lower-case latin letters, digits, '-' and '_'", field="slug")
        changes["slug"] = user["slug"]
    if user.get("name") is not None:
        if not user["name"].strip() or len(user["name"]) > LIMITS["name"]:
            raise BadInput(f"a name of 1 to {LIMITS['name']} characters", field="name")
        changes["name"] = user["name"].strip()
    async with transaction(deps) as session:
        author = await session.get(Author, user["id"])
        if author is None or author.deleted_at is not None:
            raise NotFound("no such person", field="id")
        for name in ("email", "slug"):
            if name in changes and changes[name] != getattr(author, name) and await session.scalar(
                    select(Author.id).where(getattr(Author, name) == changes[name], Author.id != author.id)):
                raise Conflict(f"this {name} is taken", field=name)
        before = {name: getattr(author, name) for name in changes}
        for name, value in changes.items():
            setattr(author, name, value)
        if "email" in changes and changes["email"] != before["email"]:
            author.email_verified = False  # the new address is not confirmed
        author.updated_at = int(time.time())
        if changes:
            record(session, signed_in, "user.update", "user", author.id, community=None, before=before, after=changes)
        if user.get("roles") is not None:
            await change_member_roles(session, signed_in, author.id, user.get("community") or 1, "set", user["roles"])


async def delete_user(deps: Deps, viewer: Viewer | None, author_id: int) -> None:
    """Closes an account, by the rule of this module's docstring."""
    signed_in = require(viewer, MANAGE)
    if author_id == signed_in.author_id:
        raise BadInput("an administrator cannot close their own account", field="id")
    async with transaction(deps) as session:
        author = await session.get(Author, author_id)
        if author is None or author.deleted_at is not None:
            raise NotFound("no such person", field="id")
        for member in (await session.scalars(select(CommunityAuthor).where(CommunityAuthor.author == author_id))).all():
            if "admin" in role_list(member.roles):
                await check_admin_kept(session, signed_in, member.community, author_id)
        before = {"email": author.email, "slug": author.slug, "deleted_at": None}
        author.deleted_at = int(time.time())
        author.email, author.password, author.oauth, author.email_verified = None, None, None, False
        await forget_member_roles(session, author_id)
        record(session, signed_in, "user.delete", "user", author_id, community=None, before=before,
               after={"email": None, "deleted_at": author.deleted_at})
    await deps.accounts.sessions.revoke_all(author_id)
