"""People, roles and invitations through the admin API: accounts listed, updated (address and slug unique)
and closed by the stated rule; roles per community set, added and removed, a community's role settings
and its own roles, the catalogue applied again, and the last-administrator rule; invitations moderated one
by one and in a batch. Each read is made once before the write it follows."""

from __future__ import annotations

import uuid
from typing import Any

from tests.helpers import PASSWORD, Api, User

USERS = ("query($s: String, $l: Int, $o: Int) { adminGetUsers(search: $s, limit: $l, offset: $o) "
         "{ total page perPage totalPages authors { id email name slug roles } } }")
UPDATE_USER = "mutation($u: AdminUserUpdateInput!) { adminUpdateUser(user: $u) { success error } }"
DELETE_USER = "mutation($i: Int!) { adminDeleteUser(id: $i) { success } }"
AUTHOR = "query($i: Int) { get_author(author_id: $i) { id name slug } }"
MEMBERS = ("query($c: Int!) { adminGetCommunityMembers(community_id: $c, limit: 50) { total community_id "
           "members { id slug email roles } } }")
ROLES_OF = ("query($a: Int!, $c: Int!) { adminGetUserCommunityRoles(author_id: $a, community_id: $c) "
            "{ author_id community_id roles } }")
ADD = ("mutation($a: Int!, $r: String!, $c: Int!) { adminAddUserToRole(author_id: $a, role_id: $r, community_id: $c) "
       "{ success roles role_id } }")
REMOVE = ("mutation($a: Int!, $r: String!, $c: Int!) { adminRemoveUserFromRole(author_id: $a, role_id: $r, "
          "community_id: $c) { success roles removed } }")
SET = ("mutation($a: Int!, $c: Int!, $r: [String!]!) { adminSetUserCommunityRoles(author_id: $a, community_id: $c, "
       "roles: $r) { success roles } }")
SETTINGS = ("query($c: Int!) { adminGetCommunityRoleSettings(community_id: $c) "
            "{ community_id default_roles available_roles } }")
UPDATE_SETTINGS = ("mutation($c: Int!, $d: [String!]!, $a: [String!]!) { adminUpdateCommunityRoleSettings("
                   "community_id: $c, default_roles: $d, available_roles: $a) { success default_roles } }")
CREATE_ROLE = "mutation($r: CustomRoleInput!) { adminCreateCustomRole(role: $r) { success role { id name } } }"
DELETE_ROLE = "mutation($r: String!, $c: Int!) { adminDeleteCustomRole(role_id: $r, community_id: $c) { success } }"
TOPIC = "mutation($t: TopicInput!) { create_topic(topic_input: $t) { error topic { id } } }"


async def _community(api: Api, founder: User) -> tuple[int, str]:
    slug = f"club-{uuid.uuid4().hex[:8]}"
    made = await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { community { id } } }",
                     {"c": {"slug": slug, "name": "Клуб"}}, founder)
    return int(made["community"]["id"]), slug


async def _join(api: Api, who: User, slug: str) -> None:
    await api("mutation($s: String!) { join_community(slug: $s) { error } }", {"s": slug}, who)


def _topic(community: int) -> dict[str, Any]:
    return {"t": {"slug": f"role-{uuid.uuid4().hex[:10]}", "title": "Тема", "community": community}}


async def test_roles_per_community_own_roles_and_the_last_administrator(api: Api) -> None:
    founder, member, steward, outsider = await api.user(), await api.user(), await api.user(), await api.user()
    club, slug = await _community(api, founder)
    await _join(api, member, slug)
    await _join(api, steward, slug)
    assert await api(ROLES_OF, {"a": member.id, "c": club}, founder) == {
        "author_id": member.id, "community_id": club, "roles": ["reader"]}  # the default for a new member
    members = await api(MEMBERS, {"c": club}, founder)
    assert members["total"] == 3 and all(m["email"] is None for m in members["members"])  # not a platform admin
    assert await api.error(MEMBERS, {"c": club}, outsider) == "FORBIDDEN"
    assert await api.error(MEMBERS, {"c": 10**9}, founder) == "NOT_FOUND"

    # A new editor can edit at their next request.
    assert await api.error(TOPIC, _topic(club), member) == "FORBIDDEN"
    assert (await api(ADD, {"a": member.id, "r": "editor", "c": club}, founder))["roles"] == ["reader", "editor"]
    assert (await api(TOPIC, _topic(club), member))["error"] is None
    assert await api.error(ADD, {"a": member.id, "r": "overlord", "c": club}, founder) == "BAD_USER_INPUT"
    assert await api.error(ADD, {"a": member.id, "r": "editor", "c": club}, outsider) == "FORBIDDEN"
    removed = await api(REMOVE, {"a": member.id, "r": "editor", "c": club}, founder)
    assert removed == {"success": True, "roles": ["reader"], "removed": True}
    assert await api.error(TOPIC, _topic(club), member) == "FORBIDDEN"

    # The community's own role, with its permissions: a steward manages roles and nothing else.
    made = await api(CREATE_ROLE, {"r": {"id": "steward", "name": "Распорядитель", "community_id": club,
                                         "permissions": ["community:manage_roles", "shout:read"]}}, founder)
    assert made == {"success": True, "role": {"id": "steward", "name": "Распорядитель"}}
    assert await api.error(CREATE_ROLE, {"r": {"id": "steward", "name": "x", "community_id": club}},
                           founder) == "CONFLICT"
    assert await api.error(CREATE_ROLE, {"r": {"id": "editor", "name": "x", "community_id": club}},
                           founder) == "BAD_USER_INPUT"  # a built-in role's id
    assert await api.error(CREATE_ROLE, {"r": {"id": "boss", "name": "x", "community_id": club,
                                               "permissions": ["everything:all"]}}, founder) == "BAD_USER_INPUT"
    assert "steward" in [r["id"] for r in await api("query($c: Int) { adminGetRoles(community: $c) { id } }",
                                                    {"c": club}, founder)]
    assert await api.error(MEMBERS, {"c": club}, steward) == "FORBIDDEN"
    await api(SET, {"a": steward.id, "c": club, "r": ["reader", "steward"]}, founder)
    assert (await api(MEMBERS, {"c": club}, steward))["total"] == 3
    assert await api.error(TOPIC, _topic(club), steward) == "FORBIDDEN"

    # Nobody takes away their own admin role, nor the last administrator's.
    assert await api.error(REMOVE, {"a": founder.id, "r": "admin", "c": club}, founder) == "BAD_USER_INPUT"
    assert await api.error(REMOVE, {"a": founder.id, "r": "admin", "c": club}, steward) == "BAD_USER_INPUT"
    assert "admin" in (await api(ROLES_OF, {"a": founder.id, "c": club}, founder))["roles"]
    await api(ADD, {"a": member.id, "r": "admin", "c": club}, founder)
    assert "admin" not in (await api(REMOVE, {"a": founder.id, "r": "admin", "c": club}, steward))["roles"]
    assert await api.error(SET, {"a": member.id, "c": club, "r": ["reader"]}, steward) == "BAD_USER_INPUT"

    # Deleting the role takes it from its members: the steward manages nothing any more.
    await api(DELETE_ROLE, {"r": "steward", "c": club}, member)
    assert await api.error(MEMBERS, {"c": club}, steward) == "FORBIDDEN"
    assert (await api(ROLES_OF, {"a": steward.id, "c": club}, member))["roles"] == ["reader"]
    assert await api.error(DELETE_ROLE, {"r": "steward", "c": club}, member) == "NOT_FOUND"

    trail = await api("query($c: Int) { adminGetAuditLog(community: $c, limit: 50) { total entries { action } } }",
                      {"c": club}, member)
    actions = [e["action"] for e in trail["entries"]]
    assert actions.count("member.roles") == 5 and {"role.create", "role.delete"} <= set(actions)


async def test_role_settings_give_a_new_member_its_roles(api: Api) -> None:
    founder, first, second = await api.user(), await api.user(), await api.user()
    club, slug = await _community(api, founder)
    settings = await api(SETTINGS, {"c": club}, founder)
    assert settings["default_roles"] == ["reader"] and {"reader", "admin"} <= set(settings["available_roles"])
    await _join(api, first, slug)
    assert (await api(ROLES_OF, {"a": first.id, "c": club}, founder))["roles"] == ["reader"]

    offered = ["reader", "author", "editor", "admin"]
    assert (await api(UPDATE_SETTINGS, {"c": club, "d": ["reader", "author"], "a": offered}, founder))["success"]
    assert (await api(SETTINGS, {"c": club}, founder))["default_roles"] == ["reader", "author"]
    await _join(api, second, slug)
    assert (await api(ROLES_OF, {"a": second.id, "c": club}, founder))["roles"] == ["reader", "author"]
    assert await api.error(ADD, {"a": second.id, "r": "expert", "c": club}, founder) == "BAD_USER_INPUT"  # not offered

    for default, available in ((["expert"], offered), (["reader"], ["reader", "author"]), (["reader"], ["nobody"]),
                               ([], offered)):
        assert await api.error(UPDATE_SETTINGS, {"c": club, "d": default, "a": available},
                               founder) == "BAD_USER_INPUT", (default, available)
    assert await api.error(UPDATE_SETTINGS, {"c": club, "d": ["reader"], "a": offered}, first) == "FORBIDDEN"

    platform_admin = await api.user("admin")
    update = "mutation { adminUpdatePermissions { success } }"
    assert await api(update, user=platform_admin) == {"success": True}
    assert await api.error(update, user=founder) == "FORBIDDEN"  # a community's administrator, not the platform's


async def test_people_are_listed_updated_and_closed_by_the_rule(api: Api) -> None:
    admin, reader = await api.user("admin"), await api.user()
    person, other = await api.user(), await api.user()
    shout = await api.published(person)
    comment = await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }",
                        {"r": {"kind": "COMMENT", "shout": shout, "body": "моё"}}, person)
    found = await api(USERS, {"s": person.slug}, admin)
    assert found["total"] == 1 and found["authors"][0]["id"] == person.id
    assert found["authors"][0]["roles"] == ["reader", "author"] and "@" in found["authors"][0]["email"]
    assert await api.error(USERS, {"s": person.slug}, reader) == "FORBIDDEN"
    paged = await api(USERS, {"l": 2, "o": 2}, admin)
    assert paged["page"] == 2 and paged["perPage"] == 2 and len(paged["authors"]) == 2

    assert (await api(AUTHOR, {"i": person.id}))["name"] != "Новое Имя"
    assert await api(UPDATE_USER, {"u": {"id": person.id, "name": "Новое Имя"}}, admin) == {"success": True,
                                                                                             "error": None}
    assert (await api(AUTHOR, {"i": person.id}))["name"] == "Новое Имя"
    assert await api.error(UPDATE_USER, {"u": {"id": person.id, "slug": other.slug}}, admin) == "CONFLICT"
    other_email = (await api(USERS, {"s": other.slug}, admin))["authors"][0]["email"]
    assert await api.error(UPDATE_USER, {"u": {"id": person.id, "email": other_email}}, admin) == "CONFLICT"
    assert await api.error(UPDATE_USER, {"u": {"id": person.id, "email": "not-an-address"}}, admin) == "BAD_USER_INPUT"
    assert await api.error(UPDATE_USER, {"u": {"id": 10**9, "name": "x"}}, admin) == "NOT_FOUND"
    new_address = f"moved-{uuid.uuid4().hex[:8]}@example.org"
    await api(UPDATE_USER, {"u": {"id": person.id, "email": new_address, "roles": ["reader", "author", "expert"]}},
              admin)
    assert (await api(USERS, {"s": person.slug}, admin))["authors"][0] == {
        "id": person.id, "email": new_address, "name": "Новое Имя", "slug": person.slug,
        "roles": ["reader", "author", "expert"]}

    assert await api.error(DELETE_USER, {"i": admin.id}, admin) == "BAD_USER_INPUT"  # not oneself
    assert await api.error(DELETE_USER, {"i": person.id}, reader) == "FORBIDDEN"
    everyone = "{ get_authors_all { id } }"
    assert person.id in [a["id"] for a in await api(everyone)]
    assert await api(DELETE_USER, {"i": person.id}, admin) == {"success": True}
    # The account is closed: no session, no sign-in, no profile in lists, no roles; the address is free.
    assert await api.error("{ me { success } }", user=person) == "UNAUTHENTICATED"
    signing_in = await api.raw("mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }",
                               {"e": new_address, "p": PASSWORD})
    assert signing_in.get("errors") or signing_in["data"]["login"]["token"] is None
    assert person.id not in [a["id"] for a in await api(everyone)]
    assert (await api(USERS, {"s": person.slug}, admin))["total"] == 0
    # What they wrote stays, credited to them.
    kept = await api("query($i: Int) { get_shout(shout_id: $i) { id authors { id } } }", {"i": shout})
    assert kept == {"id": shout, "authors": [{"id": person.id}]}
    thread = await api("query($s: Int!) { load_reactions_by(by: {shout_id: $s}, limit: 10) { id } }", {"s": shout})
    assert {"id": comment["reaction"]["id"]} in thread
    assert await api.error(DELETE_USER, {"i": person.id}, admin) == "NOT_FOUND"
    reused = await api("mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { success } }",
                       {"e": new_address, "p": PASSWORD})
    assert reused == {"success": True}


INVITES = ("query($s: String, $st: String) { adminGetInvites(search: $s, status: $st, limit: 50) { total invites "
           "{ inviter_id author_id shout_id status inviter { id } author { id } shout { id title } } } }")


async def _invite(api: Api, inviter: User, invitee: User, shout: int) -> dict[str, int]:
    slug = (await api("query($i: Int) { get_shout(shout_id: $i) { slug } }", {"i": shout}))["slug"]
    await api("mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }",
              {"s": slug, "a": invitee.id}, inviter)
    return {"inviter_id": inviter.id, "author_id": invitee.id, "shout_id": shout}


async def test_invites_are_moderated_one_by_one_and_in_a_batch(api: Api) -> None:
    editor, author, first, second, third = (await api.user("editor"), await api.user(), await api.user(),
                                            await api.user(), await api.user())
    shout = await api.published(author)
    keys = [await _invite(api, author, who, shout) for who in (first, second, third)]
    listed = await api(INVITES, {"s": str(shout), "st": "pending"}, editor)
    mine = [i for i in listed["invites"] if i["shout_id"] == shout]
    assert len(mine) == 3 and all(i["status"] == "PENDING" and i["inviter"] == {"id": author.id} for i in mine)
    assert await api.error(INVITES, {}, author) == "FORBIDDEN"

    authors = "query($i: Int) { get_shout(shout_id: $i) { authors { id } } }"
    assert await api(authors, {"i": shout}) == {"authors": [{"id": author.id}]}
    update = "mutation($i: AdminInviteUpdateInput!) { adminUpdateInvite(invite: $i) { success } }"
    await api(update, {"i": {**keys[0], "status": "ACCEPTED"}}, editor)
    assert {a["id"] for a in (await api(authors, {"i": shout}))["authors"]} == {author.id, first.id}
    assert await api.error(update, {"i": {**keys[0], "shout_id": 10**9, "status": "REJECTED"}}, editor) == "NOT_FOUND"

    batch = "mutation($i: [AdminInviteIdInput!]!) { adminDeleteInvitesBatch(invites: $i) { success } }"
    unknown = {**keys[1], "author_id": 10**9}
    assert await api.error(batch, {"i": [keys[1], unknown]}, editor) == "NOT_FOUND"
    assert len([i for i in (await api(INVITES, {"s": str(shout)}, editor))["invites"]
                if i["shout_id"] == shout]) == 3  # all or nothing
    await api(batch, {"i": keys[1:]}, editor)
    left = [i for i in (await api(INVITES, {"s": str(shout)}, editor))["invites"] if i["shout_id"] == shout]
    assert [(i["author_id"], i["status"]) for i in left] == [(first.id, "ACCEPTED")]
    one = "mutation($a: Int!, $b: Int!, $s: Int!) { adminDeleteInvite(inviter_id: $a, author_id: $b, shout_id: $s) " \
          "{ success } }"
    assert await api(one, {"a": author.id, "b": first.id, "s": shout}, editor) == {"success": True}
    assert await api.error(one, {"a": author.id, "b": first.id, "s": shout}, editor) == "NOT_FOUND"
