"""The admin API's people: accounts (`adminGetUsers`, `adminUpdateUser`, `adminDeleteUser`), roles per
community and a community's role settings and own roles, and invitations as moderators see them."""

from __future__ import annotations

from typing import Any

import strawberry

from resolvers import invite_admin, roles, users
from schema.admin import AdminShoutInfo, OperationResult, Paged, admin_shout
from schema.context import Info, Soon
from schema.engine.execution import DIRECT
from schema.enums import InviteStatus
from schema.inputs import as_dict
from schema.types import Author, load_author


@strawberry.type
class Role:
    id: str
    name: str
    description: str | None = None


@strawberry.type
class AdminUserInfo:
    id: int
    email: str | None = None
    name: str | None = None
    slug: str | None = None
    roles: list[str] | None = None  # in the platform's community
    created_at: int | None = None
    last_seen: int | None = None


@strawberry.type
class AdminUserListResponse(Paged):
    authors: list[AdminUserInfo]


@strawberry.input
class AdminUserUpdateInput:
    id: int
    email: str | None = None
    name: str | None = None
    slug: str | None = None
    roles: list[str] | None = None
    community: int | None = None


@strawberry.type
class CommunityMember:
    id: int
    roles: list[str]
    name: str | None = None
    email: str | None = None  # for the platform's administrators only
    slug: str | None = None


@strawberry.type
class CommunityMembersResponse:
    members: list[CommunityMember]
    total: int
    community_id: int


@strawberry.type
class UserCommunityRoles:
    author_id: int
    community_id: int
    roles: list[str]


@strawberry.type
class RoleOperationResult:
    success: bool
    error: str | None = None
    author_id: int | None = None
    role_id: str | None = None
    community_id: int | None = None
    roles: list[str] | None = None
    removed: bool | None = None


@strawberry.type
class CommunityRoleUpdateResult:
    success: bool
    author_id: int
    community_id: int
    roles: list[str]
    error: str | None = None


@strawberry.type
class CommunityRoleSettings:
    community_id: int
    default_roles: list[str]
    available_roles: list[str]
    error: str | None = None


@strawberry.type
class CommunityRoleSettingsUpdateResult:
    success: bool
    community_id: int
    error: str | None = None
    default_roles: list[str] | None = None
    available_roles: list[str] | None = None


@strawberry.input
class CustomRoleInput:
    id: str
    name: str
    community_id: int
    description: str | None = None
    icon: str | None = None
    permissions: list[str] | None = strawberry.field(default=None, description=(
        "The role's permissions, of the catalogue (`resource:action`); none given, a reader's. An addition "
        "to the Discours contract."))


@strawberry.type
class CustomRoleResult:
    success: bool
    error: str | None = None
    role: Role | None = None


@strawberry.type
class AdminInviteInfo:
    inviter_id: int
    author_id: int
    shout_id: int
    status: InviteStatus
    created_at: int | None = None
    shout_data: strawberry.Private[dict[str, Any]]

    @strawberry.field(metadata=DIRECT, graphql_type=Author)
    def inviter(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self.inviter_id)

    @strawberry.field(metadata=DIRECT, graphql_type=Author)
    def author(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self.author_id)

    @strawberry.field
    def shout(self) -> AdminShoutInfo:
        return admin_shout(self.shout_data)


@strawberry.type
class AdminInviteListResponse(Paged):
    invites: list[AdminInviteInfo]


@strawberry.input
class AdminInviteUpdateInput:
    inviter_id: int
    author_id: int
    shout_id: int
    status: InviteStatus


@strawberry.input
class AdminInviteIdInput:
    inviter_id: int
    author_id: int
    shout_id: int


def _role_result(result: dict[str, Any], **extra: Any) -> RoleOperationResult:
    return RoleOperationResult(success=True, author_id=result["author_id"], community_id=result["community_id"],
                               roles=result["roles"], **extra)


@strawberry.type
class AdminPeopleQuery:
    @strawberry.field(name="adminGetUsers")
    async def admin_get_users(self, info: Info, limit: int | None = None, offset: int | None = None,
                              search: str | None = None) -> AdminUserListResponse:
        found = await users.get_users(info.context.deps, await info.context.viewer(), limit, offset, search)
        return AdminUserListResponse(authors=[AdminUserInfo(**a) for a in found.pop("authors")], **found)

    @strawberry.field(name="adminGetRoles")
    async def admin_get_roles(self, info: Info, community: int | None = None) -> list[Role] | None:
        return [Role(**r) for r in await roles.get_roles(info.context.deps, await info.context.viewer(), community)]

    @strawberry.field(name="adminGetUserCommunityRoles")
    async def admin_get_user_community_roles(self, info: Info, author_id: int,
                                             community_id: int) -> UserCommunityRoles:
        viewer = await info.context.viewer()
        return UserCommunityRoles(**await roles.get_member_roles(info.context.deps, viewer, author_id, community_id))

    @strawberry.field(name="adminGetCommunityMembers")
    async def admin_get_community_members(self, info: Info, community_id: int, limit: int | None = None,
                                          offset: int | None = None) -> CommunityMembersResponse:
        found = await roles.get_members(info.context.deps, await info.context.viewer(), community_id, limit, offset)
        return CommunityMembersResponse(members=[CommunityMember(**m) for m in found.pop("members")], **found)

    @strawberry.field(name="adminGetCommunityRoleSettings")
    async def admin_get_community_role_settings(self, info: Info, community_id: int) -> CommunityRoleSettings:
        return CommunityRoleSettings(**await roles.get_settings(info.context.deps, await info.context.viewer(),
                                                                community_id))

    @strawberry.field(name="adminGetInvites")
    async def admin_get_invites(self, info: Info, limit: int | None = None, offset: int | None = None,
                                search: str | None = None, status: str | None = None,
                                community: int | None = None) -> AdminInviteListResponse:
        found = await invite_admin.admin_get_invites(info.context.deps, await info.context.viewer(), limit, offset,
                                                     search, status, community)
        return AdminInviteListResponse(invites=[
            AdminInviteInfo(inviter_id=i["inviter_id"], author_id=i["author_id"], shout_id=i["shout_id"],
                            status=InviteStatus(i["status"]), shout_data=i["shout_data"])
            for i in found.pop("invites")], **found)


@strawberry.type
class AdminPeopleMutation:
    @strawberry.mutation(name="adminUpdateUser")
    async def admin_update_user(self, info: Info, user: AdminUserUpdateInput) -> OperationResult:
        await users.update_user(info.context.deps, await info.context.viewer(), as_dict(user))
        return OperationResult(success=True)

    @strawberry.mutation(name="adminDeleteUser", description="Closes an account: the rule is in docs/accounts.md.")
    async def admin_delete_user(self, info: Info, id: int) -> OperationResult:
        await users.delete_user(info.context.deps, await info.context.viewer(), id)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminUpdateUserCommunityRoles")
    async def admin_update_user_community_roles(self, info: Info, author_id: int, community_id: int,
                                                roles: list[str]) -> CommunityRoleUpdateResult:
        done = await _roles_of(info, author_id, community_id, "set", roles)
        return CommunityRoleUpdateResult(success=True, author_id=author_id, community_id=community_id,
                                         roles=done["roles"])

    @strawberry.mutation(name="adminSetUserCommunityRoles")
    async def admin_set_user_community_roles(self, info: Info, author_id: int, community_id: int,
                                             roles: list[str]) -> RoleOperationResult:
        return _role_result(await _roles_of(info, author_id, community_id, "set", roles))

    @strawberry.mutation(name="adminAddUserToRole")
    async def admin_add_user_to_role(self, info: Info, author_id: int, role_id: str,
                                     community_id: int) -> RoleOperationResult:
        return _role_result(await _roles_of(info, author_id, community_id, "add", [role_id]), role_id=role_id)

    @strawberry.mutation(name="adminRemoveUserFromRole")
    async def admin_remove_user_from_role(self, info: Info, author_id: int, role_id: str,
                                          community_id: int) -> RoleOperationResult:
        done = await _roles_of(info, author_id, community_id, "remove", [role_id])
        return _role_result(done, role_id=role_id, removed=True)

    @strawberry.mutation(name="adminUpdateCommunityRoleSettings")
    async def admin_update_community_role_settings(self, info: Info, community_id: int, default_roles: list[str],
                                                   available_roles: list[str]) -> CommunityRoleSettingsUpdateResult:
        done = await roles.update_settings(info.context.deps, await info.context.viewer(), community_id,
                                           default_roles, available_roles)
        return CommunityRoleSettingsUpdateResult(**done)

    @strawberry.mutation(name="adminCreateCustomRole")
    async def admin_create_custom_role(self, info: Info, role: CustomRoleInput) -> CustomRoleResult:
        done = await roles.create_custom_role(info.context.deps, await info.context.viewer(), as_dict(role))
        return CustomRoleResult(success=True, role=Role(**done["role"]))

    @strawberry.mutation(name="adminDeleteCustomRole")
    async def admin_delete_custom_role(self, info: Info, role_id: str, community_id: int) -> OperationResult:
        await roles.delete_custom_role(info.context.deps, await info.context.viewer(), role_id, community_id)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminUpdatePermissions", description="Applies the permission catalogue again to "
                         "every community: roles, role settings and members keep only what still exists.")
    async def admin_update_permissions(self, info: Info) -> OperationResult:
        await roles.reapply_catalogue(info.context.deps, await info.context.viewer())
        return OperationResult(success=True)

    @strawberry.mutation(name="adminUpdateInvite")
    async def admin_update_invite(self, info: Info, invite: AdminInviteUpdateInput) -> OperationResult:
        await invite_admin.admin_update_invite(info.context.deps, await info.context.viewer(), as_dict(invite))
        return OperationResult(success=True)

    @strawberry.mutation(name="adminDeleteInvite")
    async def admin_delete_invite(self, info: Info, inviter_id: int, author_id: int, shout_id: int) -> OperationResult:
        invite = {"inviter_id": inviter_id, "author_id": author_id, "shout_id": shout_id}
        await invite_admin.admin_delete_invites(info.context.deps, await info.context.viewer(), [invite])
        return OperationResult(success=True)

    @strawberry.mutation(name="adminDeleteInvitesBatch")
    async def admin_delete_invites_batch(self, info: Info, invites: list[AdminInviteIdInput]) -> OperationResult:
        await invite_admin.admin_delete_invites(info.context.deps, await info.context.viewer(), as_dict(invites))
        return OperationResult(success=True)


async def _roles_of(info: Info, author_id: int, community_id: int, change: str, wanted: list[str]) -> dict[str, Any]:
    return await roles.set_member_roles(info.context.deps, await info.context.viewer(), author_id, community_id,
                                        change, wanted)
