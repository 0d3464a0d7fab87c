"""The authorization matrix: every query and mutation of the exported schema, called on a second person's
real objects by each kind of caller, answers as auth/operations.py declares.

A caller the table lets through gets an answer with no error; one it does not gets the declared refusal
(`extensions.code`, or a public answer); and no answer ever carries a private thing of the owner (their
e-mail or roles, their draft, their unpublished shout) to a caller not entitled to it. An operation of the
schema missing from the table, or from this test's arguments, fails the test."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
from graphql import GraphQLObjectType, GraphQLUnionType

from auth import verification
from auth.operations import OPERATIONS, Access, Refusal, Who
from schema.schema import build_schema
from tests.authz import CALLERS, People, Person, World, document, forget, grant, named_type, people
from tests.helpers import PASSWORD, Api

SCHEMA = build_schema()._schema

Args = Callable[[World, Person | None], Awaitable[dict[str, Any]]]


def fixed(values: dict[str, Any]) -> Args:
    async def args(_w: World, _caller: Person | None) -> dict[str, Any]:
        return values
    return args


def fresh_email() -> str:
    return f"new-{uuid.uuid4().hex[:12]}@example.org"


async def _draft(w: World, _c: Person | None) -> dict[str, Any]:
    return {"draft_id": await w.draft()}


async def _shout_id(w: World, _c: Person | None) -> dict[str, Any]:
    return {"shout_id": (await w.shout())["id"]}


async def _hidden_shout_id(w: World, _c: Person | None) -> dict[str, Any]:
    return {"shout_id": (await w.hidden_shout())["id"]}


async def _owner_slug(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": w.people.owner.slug}


async def _shout_slug(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": (await w.shout())["slug"]}


async def _shout_arg(w: World, _c: Person | None) -> dict[str, Any]:
    return {"shout": (await w.shout())["id"]}


async def _comment_arg(w: World, _c: Person | None) -> dict[str, Any]:
    return {"comment": await w.comment()}


async def _topic_slug(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": (await w.topic())["slug"]}


async def _community_slug(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": await w.own_community()}


async def _joined_community(w: World, caller: Person | None) -> dict[str, Any]:
    slug = await w.own_community()
    if caller is not None and caller != w.people.owner:
        await w.as_(caller, "mutation($s: String!) { join_community(slug: $s) { error } }", {"s": slug})
    return {"slug": slug}


async def _unfollow(w: World, caller: Person | None) -> dict[str, Any]:
    if caller is not None:
        await w.as_(caller, "mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }",
                    {"s": w.people.guest.slug})
    return {"what": "AUTHOR", "slug": w.people.guest.slug}


async def _login(w: World, _c: Person | None) -> dict[str, Any]:
    account = await w.account()
    return {"email": account.email, "password": PASSWORD}


async def _account_email(w: World, _c: Person | None) -> dict[str, Any]:
    return {"email": (await w.account()).email}


def _token(kind: str, **extra: Any) -> Args:
    async def args(w: World, _c: Person | None) -> dict[str, Any]:
        data = {"email": fresh_email()} if kind == verification.EMAIL_CHANGE else (
            {"email": (await w.account()).email} if kind == verification.EMAIL_VERIFICATION else None)
        return {"token": await w.verification(kind, data), **extra}
    return args


async def _change_password(_w: World, caller: Person | None) -> dict[str, Any]:
    return {"oldPassword": caller.password if caller else PASSWORD, "newPassword": PASSWORD}


async def _cancel_email_change(w: World, caller: Person | None) -> dict[str, Any]:
    if caller is not None:  # an e-mail change of the caller's own, pending
        await w.as_(caller, "mutation($e: String, $p: String) { updateSecurity(email: $e, old_password: $p) "
                    "{ error } }", {"e": fresh_email(), "p": caller.password})
    return {}


async def _update_security(_w: World, caller: Person | None) -> dict[str, Any]:
    return {"old_password": caller.password if caller else PASSWORD}


async def _reaction_update(w: World, _c: Person | None) -> dict[str, Any]:
    shout = await w.shout()
    return {"reaction": {"id": await w.comment(), "kind": "COMMENT", "shout": shout["id"], "body": "правка"}}


async def _comment_on_shout(w: World, _c: Person | None) -> dict[str, Any]:
    return {"reaction": {"kind": "COMMENT", "shout": (await w.shout())["id"], "body": "ответ"}}


async def _topic_update(w: World, _c: Person | None) -> dict[str, Any]:
    topic = await w.topic()
    return {"topic_input": {"id": topic["id"], "slug": topic["slug"], "title": "Новое имя"}}


async def _topic_id(w: World, _c: Person | None) -> dict[str, Any]:
    return {"id": (await w.topic())["id"]}


async def _community_update(w: World, _c: Person | None) -> dict[str, Any]:
    return {"community_input": {"slug": await w.own_community(), "name": "Новое имя"}}


async def _create_invite(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": (await w.shout())["slug"], "author_id": w.people.guest.id}


async def _remove_author(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": (await w.coauthored())["slug"], "author_id": w.people.guest.id}


async def _invite_by_owner(w: World, _c: Person | None) -> dict[str, Any]:
    return {"invite_id": await w.invite_by_owner()}


async def _invite_to_owner(w: World, _c: Person | None) -> dict[str, Any]:
    return {"invite_id": await w.invite_to_owner()}


async def _collection_update(w: World, _c: Person | None) -> dict[str, Any]:
    return {"collection_input": {"slug": await w.collection(), "title": "Новое имя"}}


async def _collection_slug(w: World, _c: Person | None) -> dict[str, Any]:
    return {"slug": await w.collection()}


async def _notification(w: World, _c: Person | None) -> dict[str, Any]:
    return {"notification_id": await w.notification()}


async def _thread(w: World, _c: Person | None) -> dict[str, Any]:
    return {"thread_id": f"shout:{(await w.shout())['id']}"}


NO_ARGS = fixed({})
OPTIONS = fixed({"options": {"limit": 5}})
ARGS: dict[str, dict[str, Args]] = {"Query": {
    "me": NO_ARGS, "logout": NO_ARGS, "isAdmin": NO_ARGS, "getOAuthProviders": NO_ARGS, "getRoles": NO_ARGS,
    "isEmailUsed": _account_email,
    "get_author_id": lambda w, c: _as({"user": w.people.owner.slug}),
    "getEnvVariables": NO_ARGS,
    "adminGetShouts": fixed({"community": 1, "status": "all", "limit": 5}),
    "adminGetReactions": fixed({"community": 1, "status": "all", "limit": 5}),
    "adminGetTopics": fixed({"community_id": 1}), "adminGetAuditLog": fixed({"limit": 5}),
    "adminGetInvites": fixed({"community": 1, "limit": 5}),
    "adminGetUsers": fixed({"limit": 5, "search": "owner"}),
    "adminGetRoles": lambda w, c: _in_own_community(w, "community"),
    "adminGetUserCommunityRoles": lambda w, c: _member_of_own_community(w),
    "adminGetCommunityMembers": lambda w, c: _in_own_community(w, "community_id"),
    "adminGetCommunityRoleSettings": lambda w, c: _in_own_community(w, "community_id"),
    "load_shouts_feed": OPTIONS, "load_shouts_unrated": OPTIONS, "load_shouts_coauthored": OPTIONS,
    "load_shouts_discussed": OPTIONS, "load_shouts_bookmarked": OPTIONS,
    "load_shouts_followed_by": lambda w, c: _as({"slug": w.people.owner.slug, "options": {"limit": 5}}),
    "get_my_rates_shouts": lambda w, c: _shouts_list(w),
    "get_my_rates_comments": lambda w, c: _comments_list(w),
    "get_my_shout": _hidden_shout_id,
    "load_reading_history": NO_ARGS, "load_search_history": NO_ARGS, "get_shouts_drafts": NO_ARGS,
    "load_drafts": NO_ARGS, "load_notifications": fixed({"after": 0}),
    "get_author": _owner_slug, "get_authors_all": NO_ARGS,
    "load_authors_around": _owner_slug,
    "load_authors_by": fixed({"by": {"order": "shouts"}, "limit": 5}),
    "load_authors_search": fixed({"text": "owner", "limit": 5}),
    "get_author_followers": _owner_slug, "get_author_follows": _owner_slug,
    "get_author_follows_topics": _owner_slug, "get_author_follows_authors": _owner_slug,
    "get_community": NO_ARGS, "get_communities_all": NO_ARGS, "get_communities_by_author": _owner_slug,
    "get_topic": fixed({"slug": "culture"}), "get_topics_all": NO_ARGS, "get_topics_by_author": _owner_slug,
    "get_topics_by_community": fixed({"community_id": 1, "limit": 5}),
    "get_topic_followers": fixed({"slug": "culture"}), "get_topic_authors": fixed({"slug": "culture"}),
    "get_shout_followers": _shout_slug,
    "get_collection": _collection_slug, "get_collections_all": NO_ARGS, "get_collections_by_author": _owner_slug,
    "get_search_results_count": fixed({"text": "текст"}),
    "load_reactions_by": lambda w, c: _reactions_by(w),
    "load_shout_comments": _shout_arg, "load_shout_ratings": _shout_arg, "load_comment_ratings": _comment_arg,
    "load_comments_branch": _shout_arg,
    "get_shout": _shout_slug, "load_shouts_by": OPTIONS,
    "load_shouts_with_topic": fixed({"slug": "culture", "options": {"limit": 5}}),
    "load_shouts_authored_by": lambda w, c: _as({"slug": w.people.owner.slug, "options": {"limit": 5}}),
    "load_shouts_random_top": OPTIONS,
    "load_shouts_top": fixed({"order_by": "rating", "limit": 5}),
    "load_shouts_search": fixed({"text": "текст", "options": {"limit": 5}}),
}, "Mutation": {
    "login": _login, "logout": NO_ARGS, "refreshToken": NO_ARGS,
    "registerUser": lambda w, c: _as({"email": fresh_email(), "password": PASSWORD, "name": "Новичок"}),
    "sendLink": _account_email, "confirmEmail": _token(verification.EMAIL_VERIFICATION), "getSession": NO_ARGS,
    "changePassword": _change_password,
    "resetPassword": _token(verification.PASSWORD_RESET, newPassword=PASSWORD),
    "requestPasswordReset": _account_email, "updateSecurity": _update_security,
    "confirmEmailChange": _token(verification.EMAIL_CHANGE), "cancelEmailChange": _cancel_email_change,
    "updateEnvVariable": fixed({"key": "MATRIX_PROBE", "value": "1"}),
    "updateEnvVariables": fixed({"variables": [{"key": "MATRIX_PROBE", "value": "2"}]}),
    "adminUpdateShout": lambda w, c: _admin_shout_update(w),
    "adminDeleteShout": lambda w, c: _shout_id_as(w, "id"),
    "adminRestoreShout": lambda w, c: _deleted(w, "shout"),
    "adminUpdateReaction": lambda w, c: _admin_reaction_update(w),
    "adminDeleteReaction": lambda w, c: _reaction_id(w),
    "adminRestoreReaction": lambda w, c: _deleted(w, "reaction"),
    "adminCreateTopic": lambda w, c: _as({"topic": {"id": 0, "slug": f"t-{uuid.uuid4().hex[:10]}", "title": "Тема"}}),
    "adminUpdateTopic": lambda w, c: _admin_topic_update(w),
    "adminMergeTopics": lambda w, c: _topic_merge(w),
    "adminUpdateInvite": lambda w, c: _invite_key(w, "invite", status="REJECTED"),
    "adminDeleteInvite": lambda w, c: _invite_key(w),
    "adminDeleteInvitesBatch": lambda w, c: _invite_key(w, "invites"),
    "adminUpdateUser": lambda w, c: _as({"user": {"id": w.people.owner.id, "name": "Владелец"}}),
    "adminDeleteUser": lambda w, c: _account_id(w),
    "adminUpdateUserCommunityRoles": lambda w, c: _member_of_own_community(w, roles=["reader", "author"]),
    "adminSetUserCommunityRoles": lambda w, c: _member_of_own_community(w, roles=["reader", "author"]),
    "adminAddUserToRole": lambda w, c: _member_of_own_community(w, role_id="expert"),
    "adminRemoveUserFromRole": lambda w, c: _member_of_own_community(w, role_id="author"),
    "adminUpdateCommunityRoleSettings": lambda w, c: _in_own_community(
        w, "community_id", default_roles=["reader", "author"], available_roles=["reader", "author", "editor", "admin"]),
    "adminCreateCustomRole": lambda w, c: _custom_role(w),
    "adminDeleteCustomRole": lambda w, c: _made_custom_role(w),
    "adminUpdatePermissions": NO_ARGS,
    "create_draft": lambda w, c: _as({"draft_input": {"title": "Новый", "body": "<p>b</p>"}}),
    "create_draft_from_shout": _shout_id,
    "update_draft": lambda w, c: _draft_update(w),
    "delete_draft": _draft, "publish_draft": _draft,
    "schedule_draft": lambda w, c: _schedule(w),
    "unpublish_draft": _draft,
    "publish_shout": _hidden_shout_id, "unpublish_shout": _shout_id,
    "create_reaction": _comment_on_shout, "update_reaction": _reaction_update,
    "delete_reaction": lambda w, c: _reaction_id(w),
    "clear_reading_history": NO_ARGS, "clear_search_history": NO_ARGS,
    "rate_author": lambda w, c: _as({"rated_slug": w.people.guest.slug, "value": 1}),
    "update_author": fixed({"profile": {"bio": "о себе"}}),
    "follow": lambda w, c: _as({"what": "AUTHOR", "slug": w.people.guest.slug}),
    "unfollow": _unfollow,
    "toggle_bookmark_shout": _shout_slug,
    "create_topic": lambda w, c: _as({"topic_input": {"slug": f"t-{uuid.uuid4().hex[:10]}", "title": "Тема"}}),
    "update_topic": _topic_update, "delete_topic": _topic_slug, "delete_topic_by_id": _topic_id,
    "set_topic_parent": lambda w, c: _topic_parent(w), "merge_topics": lambda w, c: _topic_merge(w),
    "create_community": lambda w, c: _as({"community_input": {"slug": f"c-{uuid.uuid4().hex[:10]}"}}),
    "update_community": _community_update, "delete_community": _community_slug,
    "join_community": _community_slug, "leave_community": _joined_community,
    "create_invite": _create_invite, "remove_author": _remove_author, "remove_invite": _invite_by_owner,
    "accept_invite": _invite_to_owner, "reject_invite": _invite_to_owner,
    "create_collection": lambda w, c: _as({"collection_input": {"slug": f"k-{uuid.uuid4().hex[:10]}",
                                                                "title": "Подборка"}}),
    "update_collection": _collection_update, "delete_collection": _collection_slug,
    "notification_mark_seen": _notification, "mark_seen": _notification,
    "notifications_seen_after": fixed({"after": 0}), "mark_seen_after": fixed({"after": 0}),
    "notifications_seen_thread": _thread,
    "mark_seen_thread": lambda w, c: _threadnamed_type(w),
    "notification_unsubscribe_thread": _thread,
}}


async def _shout_id_as(w: World, name: str) -> dict[str, Any]:
    return {name: (await w.shout())["id"]}


async def _admin_shout_update(w: World) -> dict[str, Any]:
    return {"shout": {"id": (await w.shout())["id"], "title": "Правка"}}


async def _admin_reaction_update(w: World) -> dict[str, Any]:
    return {"reaction": {"id": await w.comment(), "body": "правка"}}


async def _admin_topic_update(w: World) -> dict[str, Any]:
    return {"topic": {"id": (await w.topic())["id"], "title": "Новое имя"}}


async def _deleted(w: World, kind: str) -> dict[str, Any]:
    """The owner's shout or comment, hidden by an editor of its community: what a restore brings back."""
    async def hide() -> int:
        target = (await w.shout())["id"] if kind == "shout" else await w.comment()
        op = "adminDeleteShout(id: $i)" if kind == "shout" else "adminDeleteReaction(reaction_id: $i)"
        await w.as_(w.people.editor_1, f"mutation($i: Int!) {{ {op} {{ success }} }}", {"i": target})
        return target
    return {"id" if kind == "shout" else "reaction_id": await w.once(f"deleted {kind}", hide)}


async def _in_own_community(w: World, name: str, **extra: Any) -> dict[str, Any]:
    """The community the owner founded (its roles are its administrators' to manage), as `name`."""
    await w.own_community()
    return {name: w.community, **extra}


async def _member_of_own_community(w: World, **extra: Any) -> dict[str, Any]:
    """The guest, a member of the owner's community (a reader and an author there)."""
    async def join() -> int:
        await w.own_community()
        await grant(w.api, w.people.guest, w.community, "author")
        return w.community
    return {"author_id": w.people.guest.id, "community_id": await w.once("guest joined", join), **extra}


async def _custom_role(w: World) -> dict[str, Any]:
    await w.own_community()
    return {"role": {"id": f"r{uuid.uuid4().hex[:10]}", "name": "Корректор", "community_id": w.community,
                     "permissions": ["shout:read", "reaction:create"]}}


async def _made_custom_role(w: World) -> dict[str, Any]:
    async def make() -> str:
        values = await _custom_role(w)
        await w.as_(w.people.admin_c, "mutation($r: CustomRoleInput!) { adminCreateCustomRole(role: $r) { success } }",
                    {"r": values["role"]})
        return str(values["role"]["id"])
    role_id = await w.once("custom role", make)
    return {"role_id": role_id, "community_id": w.community}


async def _invite_key(w: World, name: str | None = None, **extra: Any) -> dict[str, Any]:
    await w.invite_by_owner()
    shout = await w.shout()
    key = {"inviter_id": w.people.owner.id, "author_id": w.people.guest.id, "shout_id": shout["id"]}
    if name is None:
        return key
    return {name: {**key, **extra}} if name == "invite" else {name: [key]}


async def _account_id(w: World) -> dict[str, Any]:
    return {"id": (await w.account()).id}


async def _topic_parent(w: World) -> dict[str, Any]:
    return {"topic_id": (await w.topic())["id"], "parent_id": (await w.topic("parent"))["id"]}


async def _topic_merge(w: World) -> dict[str, Any]:
    return {"merge_input": {"target_topic_id": (await w.topic())["id"],
                            "source_topic_ids": [(await w.topic("parent"))["id"]]}}


async def _as(values: dict[str, Any]) -> dict[str, Any]:
    return values


async def _shouts_list(w: World) -> dict[str, Any]:
    return {"shouts": [(await w.shout())["id"]]}


async def _comments_list(w: World) -> dict[str, Any]:
    return {"comments": [await w.comment()]}


async def _reactions_by(w: World) -> dict[str, Any]:
    return {"by": {"shout": (await w.shout())["slug"]}, "limit": 5}


async def _draft_update(w: World) -> dict[str, Any]:
    return {"draft_id": await w.draft(), "draft_input": {"subtitle": "подзаголовок"}}


async def _schedule(w: World) -> dict[str, Any]:
    return {"draft_id": await w.draft(), "publish_at": int(time.time()) + 86_400}


async def _reaction_id(w: World) -> dict[str, Any]:
    return {"reaction_id": await w.comment()}


async def _threadnamed_type(w: World) -> dict[str, Any]:
    return {"thread": f"shout:{(await w.shout())['id']}"}


def _person(crowd: People, caller: str, world: World) -> Person | None:
    here = world.community != 1
    return {"anonymous": None, "reader": crowd.reader, "owner": crowd.owner,
            "editor_elsewhere": crowd.editor_e, "admin_elsewhere": crowd.admin_e,
            "editor": crowd.editor_c if here else crowd.editor_1,
            "admin": crowd.admin_c if here else crowd.admin_1}[caller]


def allowed(access: Access, caller: str) -> bool:
    who = access.who
    return (Who.ANYONE in who or (caller != "anonymous" and Who.SIGNED_IN in who)
            or (caller == "owner" and Who.OWNERS in who) or (caller == "editor" and Who.EDITORS in who)
            or (caller == "admin" and bool(who & {Who.EDITORS, Who.ADMINS})))


def entitled(crowd: People, person: Person | None, secret: str) -> bool:
    """Who may see the owner's private things: the owner; drafts, editors and administrators of the
    drafts' community (community 1); e-mail and roles, administrators (of community 1)."""
    if person is None:
        return False
    if person == crowd.owner:
        return True
    return person in ((crowd.editor_1, crowd.admin_1) if secret == "draft" else (crowd.admin_1,))


def _private_fields(crowd: People, value: Any) -> list[str]:
    """The owner's private fields found in an answer: an Author of theirs with e-mail or roles."""
    found: list[str] = []
    if isinstance(value, dict):
        if value.get("slug") == crowd.owner.slug and value.get("id") == crowd.owner.id:
            found += [k for k in ("email", "email_verified", "roles") if value.get(k) is not None]
        for inner in value.values():
            found += _private_fields(crowd, inner)
    elif isinstance(value, list):
        for inner in value:
            found += _private_fields(crowd, inner)
    return found


def leaks(crowd: People, world: World, person: Person | None, body: dict[str, Any]) -> list[str]:
    text = orjson.dumps(body).decode()
    found = [f"{kind} {secret}" for secret, kind in world.secrets.items()
             if secret in text and not entitled(crowd, person, kind)]
    if crowd.owner.email in text and not entitled(crowd, person, "account"):
        found.append("the owner's e-mail")
    if not entitled(crowd, person, "account"):
        # a community's administrators manage, so see, its members' roles there
        manages_roles = world.community != 1 and person == crowd.admin_c
        found += [f"the owner's {name}" for name in _private_fields(crowd, body.get("data"))
                  if not (name == "roles" and manages_roles)]
    return found


def verdict(access: Access, caller: str, name: str, body: dict[str, Any]) -> str | None:
    """What is wrong with an answer, or None."""
    errors = body.get("errors") or []
    code = errors[0].get("extensions", {}).get("code") if errors else None
    if allowed(access, caller):
        answer = (body.get("data") or {}).get(name)
        if errors:
            return f"let through, but answered {code}: {errors[0]['message']}"
        if isinstance(answer, dict) and answer.get("error"):
            return f"let through, but answered error {answer['error']!r}"
        return None
    refusal = access.anonymous if caller == "anonymous" else access.others
    if refusal is Refusal.PUBLIC:
        return f"should answer a public view, answered {code}" if errors else None
    if code != refusal.value:
        return f"should be refused {refusal.value}, answered {code or 'data'}: {str(body)[:200]}"
    return None


def test_every_operation_is_in_the_table() -> None:
    for kind, root in (("Query", SCHEMA.query_type), ("Mutation", SCHEMA.mutation_type),
                       ("Subscription", SCHEMA.subscription_type)):
        assert root is not None
        assert sorted(root.fields) == sorted(OPERATIONS[kind]), kind
        if kind != "Subscription":
            assert sorted(root.fields) == sorted(ARGS[kind]), kind


@pytest.fixture(autouse=True)
async def forgotten_after(api: Api) -> Any:
    yield
    await forget(api, await people(api))


OPERATION_NAMES = [(kind, name) for kind in ("Query", "Mutation") for name in OPERATIONS[kind]]


@pytest.mark.parametrize(("kind", "name"), OPERATION_NAMES, ids=[f"{k}.{n}" for k, n in OPERATION_NAMES])
async def test_operation_answers_as_the_table_says(api: Api, kind: str, name: str) -> None:
    access, make_args = OPERATIONS[kind][name], ARGS[kind][name]
    crowd = await people(api)
    problems: list[str] = []
    shared: World | None = None
    for caller in sorted(CALLERS, key=lambda c: allowed(access, c)):  # refusals first, on one world
        let_through = allowed(access, caller)
        if shared is None or (let_through and kind == "Mutation"):
            shared = World(api, crowd)  # a write that is let through acts on objects of its own
            if kind == "Query":
                await shared.everything()
        world = shared
        person_before = _person(crowd, caller, world)
        variables = await make_args(world, person_before)
        person = _person(crowd, caller, world)  # the objects' community is known now
        if person is not None and person != person_before:
            variables = await make_args(world, person)
        user = await world.user(person) if person is not None else None
        body = await api.raw(document(SCHEMA, kind, name, variables), variables, user)
        if (wrong := verdict(access, caller, name, body)) is not None:
            problems.append(f"{caller}: {wrong}")
        problems += [f"{caller}: leaked {what}" for what in leaks(crowd, world, person, body)]
    assert not problems, f"{kind}.{name}:\n" + "\n".join(problems)


def _reaches(gtype: Any, target: str, seen: set[str] | None = None) -> bool:
    """Whether an answer of `gtype` can hold an object of type `target`."""
    seen = set() if seen is None else seen
    named = named_type(gtype)
    if named.name == target:
        return True
    if named.name in seen or not isinstance(named, GraphQLObjectType | GraphQLUnionType):
        return False
    seen.add(named.name)
    inner = named.types if isinstance(named, GraphQLUnionType) else [f.type for f in named.fields.values()]
    return any(_reaches(t, target, seen) for t in inner)


DRAFT_OPERATIONS = [(kind, name) for kind, root in (("Query", SCHEMA.query_type), ("Mutation", SCHEMA.mutation_type))
                    for name, fld in (root.fields.items() if root else ()) if _reaches(fld.type, "Draft")]


async def test_no_operation_shows_someone_elses_draft(api: Api) -> None:
    """Every operation whose answer can hold a draft, called by nobody and by another reader while the owner
    has a draft never published: the draft's title and body appear in no answer, and an operation aimed at
    the draft (or at the shout it belongs to) is refused."""
    assert len(DRAFT_OPERATIONS) > 40  # every CommonResult holds a draft
    crowd = await people(api)
    problems = []
    for kind, name in DRAFT_OPERATIONS:
        world = World(api, crowd)
        draft = await world.draft()
        for caller in ("anonymous", "reader"):
            person = crowd.reader if caller == "reader" else None
            variables = await ARGS[kind][name](world, person)
            body = await api.raw(document(SCHEMA, kind, name, variables), variables,
                                 await world.user(person) if person else None)
            problems += [f"{name} as {caller}: leaked {what}" for what in leaks(crowd, world, person, body)]
            if variables.get("draft_id") == draft and not body.get("errors"):
                problems.append(f"{name} as {caller}: not refused")
    assert not problems, "\n".join(problems)
