"""The private part of an author (email, verification, roles), cached per author under
`author:account:{id}` and readable only through the checks in `schema` (the author or an admin)."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select

from auth.permissions import PERMISSIONS, Viewer
from cache import keys
from cache.store import Cache
from orm import Author, CommunityAuthor, CommunityRole
from orm.community import role_list
from orm.engine import SessionFactory, read_session

# What an e-mail address looks like (checked on registration, on a change and on an import).
EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{1,63}$")


def normal_address(email: str | None) -> str | None:
    """An address as stored (trimmed, lower case), or None if it is not one."""
    value = (email or "").strip().lower()
    return value if EMAIL.match(value) else None


async def fetch_account(db: SessionFactory, author_id: int) -> dict[str, Any] | None:
    async with read_session(db) as session:
        author = await session.get(Author, author_id)
        if author is None or author.deleted_at is not None:
            return None
        memberships = (await session.execute(
            select(CommunityAuthor.community, CommunityAuthor.roles).where(CommunityAuthor.author == author_id)
        )).all()
        held = {(c, r) for c, roles in memberships for r in role_list(roles) if r not in PERMISSIONS}
        custom: dict[str, dict[str, list[str]]] = {}
        if held:  # the communities' own roles this author holds, with their permissions
            rows = (await session.execute(select(CommunityRole.community, CommunityRole.id, CommunityRole.permissions)
                                          .where(CommunityRole.community.in_({c for c, _ in held})))).all()
            for community, role, permissions in rows:
                if (community, role) in held:
                    custom.setdefault(str(community), {})[role] = list(permissions or [])
    return {
        "id": author.id,
        "slug": author.slug,
        "name": author.name,
        "email": author.email,
        "email_verified": bool(author.email_verified),
        "roles": {str(c): role_list(roles) for c, roles in memberships},
        "custom_roles": custom,
    }


async def get_account(author_id: int, *, cache: Cache, db: SessionFactory) -> dict[str, Any] | None:
    async def query() -> dict[str, Any] | None:
        return await fetch_account(db, author_id)

    account: dict[str, Any] | None = await cache.cached_query(
        keys.author_account(author_id), query,
        tags=[keys.tag_author(author_id), keys.tag_account(author_id), keys.tag_entities("account")])
    return account


def viewer_of(account: dict[str, Any], admin_emails: list[str]) -> Viewer:
    roles = {int(c): frozenset(r) for c, r in account.get("roles", {}).items()}
    email = (account.get("email") or "").lower()
    custom = {int(c): {role: frozenset(p) for role, p in held.items()}
              for c, held in account.get("custom_roles", {}).items()}
    return Viewer(author_id=account["id"], roles=roles, custom=custom,
                  system_admin=bool(email) and email in {e.lower() for e in admin_emails})
