"""Roles and permissions per community: the one place that decides who may do what.

Permissions are `resource:action` strings. An action on something that has owners (a shout's or
draft's authors, a reaction's creator) is allowed by `resource:action_any`, or by
`resource:action_own` when the viewer is one of the owners. Roles inherit from weaker roles.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

DEFAULT_COMMUNITY = 1

_OWN = "_own"
_ANY = "_any"


@dataclass(frozen=True)
class RoleDef:
    id: str
    name: str
    description: str
    inherits: tuple[str, ...]
    grants: tuple[str, ...]


ROLES: dict[str, RoleDef] = {r.id: r for r in (
    RoleDef("reader", "Reader", "Reads, reacts, follows and bookmarks", (), (
        "shout:read", "reaction:create", "reaction:update_own", "reaction:delete_own",
        "bookmark:manage_own", "follow:manage_own", "author:update_own", "community:join",
    )),
    RoleDef("author", "Author", "Writes drafts and publishes their own shouts", ("reader",), (
        "draft:create", "draft:read_own", "draft:update_own", "draft:delete_own",
        "shout:publish_own", "shout:update_own", "shout:unpublish_own", "invite:manage_own",
        "collection:create", "collection:update_own", "collection:delete_own",
    )),
    RoleDef("artist", "Artist", "An author credited for art and media", ("author",), ("media:upload",)),
    RoleDef("expert", "Expert", "An author whose proofs and disproofs count", ("author",), (
        "reaction:create_proof",
    )),
    RoleDef("editor", "Editor", "Edits and publishes anyone's work, manages topics", ("artist", "expert"), (
        "shout:update_any", "shout:publish_any", "shout:unpublish_any", "shout:delete_any",
        "draft:read_any", "draft:update_any", "draft:delete_any", "reaction:delete_any",
        "topic:create", "topic:update", "topic:delete", "collection:update_any", "collection:delete_any",
        # moderation (the admin API): lists of everything, deleted included; edits and restores
        "shout:moderate", "shout:restore", "reaction:moderate", "reaction:restore", "invite:moderate",
    )),
    RoleDef("admin", "Administrator", "Manages the community, its members and its settings", ("editor",), (
        "community:update", "community:delete", "community:manage_roles", "author:update_any",
        "env:read", "env:write", "audit:read", "user:manage",
    )),
)}


def _expand(role: str, seen: set[str] | None = None) -> set[str]:
    seen = seen if seen is not None else set()
    if role in seen or role not in ROLES:
        return set()
    seen.add(role)
    definition = ROLES[role]
    granted = set(definition.grants)
    for parent in definition.inherits:
        granted |= _expand(parent, seen)
    return granted


PERMISSIONS: dict[str, frozenset[str]] = {role: frozenset(_expand(role)) for role in ROLES}
# Every permission there is: what a community's own role may be made of.
CATALOGUE: frozenset[str] = frozenset().union(*PERMISSIONS.values())
# A community's role settings where it has none (orm CommunityRoleSettings): a new member reads; a new
# account, in the platform's community, also writes; every built-in role is offered.
DEFAULT_ROLES: tuple[str, ...] = ("reader",)
NEW_ACCOUNT_ROLES: tuple[str, ...] = ("reader", "author")
AVAILABLE_ROLES: tuple[str, ...] = tuple(ROLES)


@dataclass(frozen=True)
class Viewer:
    """Who is asking: the author behind a valid session and their roles per community."""

    author_id: int
    roles: dict[int, frozenset[str]] = field(default_factory=dict)
    system_admin: bool = False  # from ADMIN_EMAILS: admin in every community
    # The permissions of the communities' own roles the viewer holds: {community: {role: permissions}}.
    custom: dict[int, dict[str, frozenset[str]]] = field(default_factory=dict)

    def roles_in(self, community_id: int) -> frozenset[str]:
        return self.roles.get(community_id, frozenset())

    @property
    def is_admin(self) -> bool:
        return self.system_admin or "admin" in self.roles_in(DEFAULT_COMMUNITY)


def permissions_of(viewer: Viewer | None, community_id: int = DEFAULT_COMMUNITY) -> frozenset[str]:
    if viewer is None:
        return frozenset()
    if viewer.system_admin:
        return PERMISSIONS["admin"]
    granted: set[str] = set()
    own = viewer.custom.get(community_id, {})
    for role in viewer.roles_in(community_id):
        granted |= PERMISSIONS.get(role) or own.get(role, frozenset())
    return frozenset(granted)


def can(viewer: Viewer | None, permission: str, *, community_id: int = DEFAULT_COMMUNITY,
        owners: Iterable[int] = ()) -> bool:
    """`can(viewer, "shout:update", owners=author_ids)`: any-permission, or own-permission for owners."""
    granted = permissions_of(viewer, community_id)
    if permission in granted or permission + _ANY in granted:
        return True
    return viewer is not None and permission + _OWN in granted and viewer.author_id in set(owners)
