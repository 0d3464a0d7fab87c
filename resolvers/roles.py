"""Roles per community (the admin API): a member's roles set, added and removed; a community's role
settings (the roles a new member is given, the roles it offers); a community's own roles, each a set of
permissions of the catalogue; the catalogue re-applied. The model is auth/permissions.py's: built-in
roles with their grants, plus a community's own roles (orm CommunityRole), which a member's account
carries (auth/accounts.py).

A community's administrators manage it (`community:manage_roles`); nobody can take away the last
administrator of a community, nor their own admin role. Every write is in the audit trail."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import AVAILABLE_ROLES, CATALOGUE, DEFAULT_ROLES, PERMISSIONS, ROLES, Viewer
from orm import Author, Community, CommunityAuthor, CommunityRole, CommunityRoleSettings
from orm.community import role_list
from orm.engine import read_session
from resolvers.access import require, require_viewer
from resolvers.audit import record
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict, Forbidden, NotFound
from resolvers.paging import counted_page, page
from resolvers.writes import transaction

MANAGE = "community:manage_roles"
ROLE_ID = re.compile(r"^[a-z][a-z0-9_-]{1,31}$")
DEFAULT_MEMBERS_LIMIT = 20
# How many roles of its own a community may have (each is carried by its members' accounts).
CUSTOM_ROLES_MAX = 50


async def _community(session: AsyncSession, community_id: int) -> Community:
    community = await session.get(Community, community_id)
    if community is None:
        raise NotFound("no such community", field="community_id")
    return community


async def _own_roles(session: AsyncSession, community_id: int) -> list[CommunityRole]:
    return list((await session.scalars(select(CommunityRole).where(CommunityRole.community == community_id)
                                       .order_by(CommunityRole.id))).all())


async def role_settings(session: AsyncSession, community_id: int) -> tuple[list[str], list[str]]:
    """A community's default and offered roles (its own roles are offered where it has not said)."""
    row = await session.get(CommunityRoleSettings, community_id)
    if row is None:
        return list(DEFAULT_ROLES), [*AVAILABLE_ROLES, *(r.id for r in await _own_roles(session, community_id))]
    return list(row.default_roles), list(row.available_roles)


async def new_member_roles(session: AsyncSession, community_id: int, fallback: tuple[str, ...] = DEFAULT_ROLES) -> str:
    """The roles a new member of the community is given, as a membership row keeps them."""
    row = await session.get(CommunityRoleSettings, community_id)
    return ",".join(row.default_roles if row is not None else fallback)


def _role(role_id: str, name: str, description: str | None) -> dict[str, Any]:
    return {"id": role_id, "name": name, "description": description}


async def get_roles(deps: Deps, viewer: Viewer | None, community: int | None) -> list[dict[str, Any]]:
    """The roles there are: built-in ones, and in a community, those it offers and its own."""
    built_in = [_role(r.id, r.name, r.description) for r in ROLES.values()]
    if community is None:
        require(viewer, MANAGE)
        return built_in
    async with read_session(deps.db) as session:
        await _community(session, community)
        require(viewer, MANAGE, community_id=community)
        _, available = await role_settings(session, community)
        own = [_role(r.id, r.name, r.description) for r in await _own_roles(session, community)]
    return [r for r in [*built_in, *own] if r["id"] in available]


async def get_member_roles(deps: Deps, viewer: Viewer | None, author_id: int, community_id: int) -> dict[str, Any]:
    async with read_session(deps.db) as session:
        await _community(session, community_id)
        require(viewer, MANAGE, community_id=community_id)
        if await session.get(Author, author_id) is None:
            raise NotFound("no such author", field="author_id")
        member = await session.get(CommunityAuthor, (community_id, author_id))
    return {"author_id": author_id, "community_id": community_id, "roles": role_list(member.roles if member else None)}


async def get_members(deps: Deps, viewer: Viewer | None, community_id: int, limit: int | None,
                      offset: int | None) -> dict[str, Any]:
    """A page of a community's members with their roles; their e-mail only for platform administrators."""
    limit, offset = page(limit, offset, default=DEFAULT_MEMBERS_LIMIT, maximum=deps.max_page_size)
    async with read_session(deps.db) as session:
        await _community(session, community_id)
    signed_in = require(viewer, MANAGE, community_id=community_id)
    members = (select(Author.id, Author.name, Author.slug, Author.email, CommunityAuthor.roles)
               .join(CommunityAuthor, CommunityAuthor.author == Author.id)
               .where(CommunityAuthor.community == community_id))
    rows, fields = await counted_page(deps.db, members, (Author.id,), limit, offset)
    return {"community_id": community_id, "total": fields["total"], "members": [
        {**row, "email": row["email"] if signed_in.is_admin else None, "roles": role_list(row["roles"])}
        for row in rows]}


async def _admins_besides(session: AsyncSession, community_id: int, author_id: int) -> int:
    rows = (await session.scalars(select(CommunityAuthor.roles).where(
        CommunityAuthor.community == community_id, CommunityAuthor.author != author_id))).all()
    return sum("admin" in role_list(roles) for roles in rows)


async def check_admin_kept(session: AsyncSession, viewer: Viewer, community_id: int, author_id: int) -> None:
    """Refuses a change that takes the admin role from the viewer themself or from the last administrator."""
    if author_id == viewer.author_id:
        raise BadInput("an administrator cannot take away their own admin role", field="roles")
    if not await _admins_besides(session, community_id, author_id):
        raise BadInput("a community keeps at least one administrator", field="roles")


async def set_member_roles(deps: Deps, viewer: Viewer | None, author_id: int, community_id: int,
                           change: str, roles: list[str]) -> dict[str, Any]:
    """`change`: `set` (these roles, replacing the member's), `add` or `remove`. A member left with no role
    leaves the community; someone who is not a member becomes one."""
    signed_in = require_viewer(viewer)
    async with transaction(deps) as session:
        after = await change_member_roles(session, signed_in, author_id, community_id, change, roles)
    return {"success": True, "error": None, "author_id": author_id, "community_id": community_id, "roles": after}


async def change_member_roles(session: AsyncSession, signed_in: Viewer, author_id: int, community_id: int,
                              change: str, roles: list[str]) -> list[str]:
    """`set_member_roles` in a transaction of the caller's: the member's roles after it."""
    await _community(session, community_id)
    require(signed_in, MANAGE, community_id=community_id)
    if await session.get(Author, author_id) is None:
        raise NotFound("no such author", field="author_id")
    _, available = await role_settings(session, community_id)
    if change != "remove" and (unknown := [r for r in roles if r not in available]):
        raise BadInput(f"community {community_id} offers no role {unknown[0]}", field="roles")
    member = await session.get(CommunityAuthor, (community_id, author_id))
    before = role_list(member.roles if member else None)
    after = {"set": list(dict.fromkeys(roles)), "add": list(dict.fromkeys([*before, *roles])),
             "remove": [r for r in before if r not in roles]}[change]
    if "admin" in before and "admin" not in after:
        await check_admin_kept(session, signed_in, community_id, author_id)
    if after and member is None:
        session.add(CommunityAuthor(community=community_id, author=author_id, roles=",".join(after)))
    elif after and member is not None:
        member.roles = ",".join(after)
    elif member is not None:
        await session.delete(member)
    record(session, signed_in, "member.roles", "member", f"{community_id}:{author_id}", community=community_id,
           before={"roles": before}, after={"roles": after})
    return after


async def get_settings(deps: Deps, viewer: Viewer | None, community_id: int) -> dict[str, Any]:
    async with read_session(deps.db) as session:
        await _community(session, community_id)
        require(viewer, MANAGE, community_id=community_id)
        default, available = await role_settings(session, community_id)
    return {"community_id": community_id, "default_roles": default, "available_roles": available, "error": None}


async def update_settings(deps: Deps, viewer: Viewer | None, community_id: int, default_roles: list[str],
                          available_roles: list[str]) -> dict[str, Any]:
    signed_in = require(viewer, MANAGE, community_id=community_id)
    default, available = list(dict.fromkeys(default_roles)), list(dict.fromkeys(available_roles))
    async with transaction(deps) as session:
        await _community(session, community_id)
        known = {*ROLES, *(r.id for r in await _own_roles(session, community_id))}
        if unknown := [r for r in available if r not in known]:
            raise BadInput(f"no role {unknown[0]}", field="available_roles")
        if "admin" not in available:
            raise BadInput("a community offers the admin role (or nobody could manage it)", field="available_roles")
        if not default or (outside := [r for r in default if r not in available]):
            raise BadInput("default roles are some of the roles offered" + (f": {outside[0]} is not" if default
                           else ""), field="default_roles")
        before = await role_settings(session, community_id)
        row = await session.get(CommunityRoleSettings, community_id)
        if row is None:
            session.add(CommunityRoleSettings(community=community_id, default_roles=default, available_roles=available))
        else:
            row.default_roles, row.available_roles = default, available
        record(session, signed_in, "community.role_settings", "community", community_id, community=community_id,
               before={"default_roles": before[0], "available_roles": before[1]},
               after={"default_roles": default, "available_roles": available})
    return {"success": True, "error": None, "community_id": community_id, "default_roles": default,
            "available_roles": available}


async def create_custom_role(deps: Deps, viewer: Viewer | None, role: dict[str, Any]) -> dict[str, Any]:
    """A community's own role: an id of its own (not a built-in one), a name, and permissions of the
    catalogue (none given: a reader's). Offered by the community at once."""
    community_id = role["community_id"]
    signed_in = require(viewer, MANAGE, community_id=community_id)
    if not ROLE_ID.match(role["id"]) or role["id"] in ROLES:
        raise BadInput("id: 2-32 lower-case latin letters, digits, - and _, not a built-in role's", field="id")
    if not (role.get("name") or "").strip() or len(role["name"]) > 255:
        raise BadInput("a role needs a name (at most 255 characters)", field="name")
    permissions = sorted(set(role.get("permissions") or PERMISSIONS["reader"]))
    if unknown := [p for p in permissions if p not in CATALOGUE]:
        raise BadInput(f"no permission {unknown[0]} in the catalogue", field="permissions")
    async with transaction(deps) as session:
        await _community(session, community_id)
        own = await _own_roles(session, community_id)
        if any(r.id == role["id"] for r in own):
            raise Conflict("the community has this role already", field="id")
        if len(own) >= CUSTOM_ROLES_MAX:
            raise BadInput(f"a community has at most {CUSTOM_ROLES_MAX} roles of its own", field="id")
        session.add(CommunityRole(community=community_id, id=role["id"], name=role["name"].strip(),
                                  description=role.get("description"), icon=role.get("icon"), permissions=permissions))
        settings = await session.get(CommunityRoleSettings, community_id)
        if settings is not None:
            settings.available_roles = [*settings.available_roles, role["id"]]
        record(session, signed_in, "role.create", "role", f"{community_id}:{role['id']}", community=community_id,
               before=None, after={"name": role["name"], "permissions": permissions})
    return {"success": True, "error": None, "role": _role(role["id"], role["name"].strip(), role.get("description"))}


async def delete_custom_role(deps: Deps, viewer: Viewer | None, role_id: str, community_id: int) -> None:
    """Deletes a community's own role; its members lose it (one who held nothing else leaves)."""
    signed_in = require(viewer, MANAGE, community_id=community_id)
    async with transaction(deps) as session:
        own = await session.get(CommunityRole, (community_id, role_id))
        if own is None:
            raise NotFound("the community has no such role of its own", field="role_id")
        members = (await session.scalars(select(CommunityAuthor).where(
            CommunityAuthor.community == community_id, CommunityAuthor.roles.contains(role_id)))).all()
        for member in members:
            left = [r for r in role_list(member.roles) if r != role_id]
            if left:
                member.roles = ",".join(left)
            else:
                await session.delete(member)
        settings = await session.get(CommunityRoleSettings, community_id)
        if settings is not None:
            settings.available_roles = [r for r in settings.available_roles if r != role_id]
            settings.default_roles = [r for r in settings.default_roles if r != role_id] or list(DEFAULT_ROLES)
        record(session, signed_in, "role.delete", "role", f"{community_id}:{role_id}", community=community_id,
               before={"name": own.name, "permissions": own.permissions}, after=None)
        await session.delete(own)


async def reapply_catalogue(deps: Deps, viewer: Viewer | None) -> None:
    """The permission catalogue applied again to every community: its own roles keep only permissions the
    catalogue still has, its settings only roles that still exist, and its members only roles it has
    (built-in or its own). For ADMIN_EMAILS' administrators and the platform community's."""
    signed_in = require(viewer, MANAGE, community_id=1)
    if not signed_in.is_admin:
        raise Forbidden("for the platform's administrators")
    changed = {"roles": 0, "settings": 0, "members": 0}
    async with transaction(deps) as session:
        own: dict[int, set[str]] = {}
        for role in (await session.scalars(select(CommunityRole))).all():
            own.setdefault(role.community, set()).add(role.id)
            kept = [p for p in role.permissions or [] if p in CATALOGUE]
            if kept != list(role.permissions or []):
                role.permissions, changed["roles"] = kept, changed["roles"] + 1
        for settings in (await session.scalars(select(CommunityRoleSettings))).all():
            known = {*ROLES, *own.get(settings.community, set())}
            available = [r for r in settings.available_roles if r in known]
            default = [r for r in settings.default_roles if r in available] or list(DEFAULT_ROLES)
            if (available, default) != (list(settings.available_roles), list(settings.default_roles)):
                settings.available_roles, settings.default_roles = available, default
                changed["settings"] += 1
        for member in (await session.scalars(select(CommunityAuthor))).all():
            known = {*ROLES, *own.get(member.community, set())}
            kept_roles = [r for r in role_list(member.roles) if r in known]
            if kept_roles != role_list(member.roles):
                member.roles, changed["members"] = ",".join(kept_roles) or "reader", changed["members"] + 1
        record(session, signed_in, "permissions.reapply", "catalogue", "all", community=None, before=None,
               after=changed)


async def forget_member_roles(session: AsyncSession, author_id: int) -> None:
    """Takes every role from an author (an account closed): their memberships go."""
    await session.execute(delete(CommunityAuthor).where(CommunityAuthor.author == author_id))
