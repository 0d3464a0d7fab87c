"""No read after an admin write's answer returns what it changed: for each kind of admin write, a read made
(and cached) before it is made again after it and must show the write. The control runs the same with the
triggers' invalidation turned off and finds the stale reads, so the test can fail."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.helpers import Api, User

Read = Callable[[], Awaitable[Any]]
Scenario = Callable[[Api, dict[str, User]], Awaitable[tuple[Read, Callable[[], Awaitable[Any]], Callable[[Any], bool]]]]

THREAD = "query($s: Int!) { load_reactions_by(by: {shout_id: $s, kinds: [COMMENT, QUOTE]}, limit: 50) { id body } }"
FEED = "query { load_shouts_by(options: {limit: 100}) { id } }"
SHOUT = "query($i: Int) { get_shout(shout_id: $i) { id title authors { id } } }"
TOPIC = "query($s: String!) { get_topic(slug: $s) { id title parent_ids } }"
ALL_TOPICS = "{ get_topics_all { slug } }"
AUTHOR = "query($i: Int) { get_author(author_id: $i) { id name } }"
EVERYONE = "{ get_authors_all { id } }"
MY_ROLES = "query($i: Int) { get_author(author_id: $i) { id roles } }"


def _slug(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def _comment(api: Api, who: User, shout: int) -> int:
    made = await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }",
                     {"r": {"kind": "COMMENT", "shout": shout, "body": "комментарий"}}, who)
    return int(made["reaction"]["id"])


async def _topic(api: Api, editor: User, **values: Any) -> dict[str, Any]:
    made = await api("mutation($t: TopicInput!) { create_topic(topic_input: $t) { topic { id slug } } }",
                     {"t": {"slug": _slug("fresh"), "title": "Тема", **values}}, editor)
    return dict(made["topic"])


async def _hide(api: Api, editor: User, reaction: int, *, restore: bool = False) -> None:
    op = "adminRestoreReaction" if restore else "adminDeleteReaction"
    await api(f"mutation($i: Int!) {{ {op}(reaction_id: $i) {{ success }} }}", {"i": reaction}, editor)


async def _drop(api: Api, editor: User, shout: int, *, restore: bool = False) -> None:
    op = "adminRestoreShout" if restore else "adminDeleteShout"
    await api(f"mutation($i: Int!) {{ {op}(id: $i) {{ success }} }}", {"i": shout}, editor)


async def reaction_delete(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    comment = await _comment(api, p["reader"], shout)
    return (lambda: api(THREAD, {"s": shout}), lambda: _hide(api, p["editor"], comment),
            lambda thread: comment not in [c["id"] for c in thread])


async def reaction_restore(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    comment = await _comment(api, p["reader"], shout)
    await _hide(api, p["editor"], comment)
    return (lambda: api(THREAD, {"s": shout}), lambda: _hide(api, p["editor"], comment, restore=True),
            lambda thread: comment in [c["id"] for c in thread])


async def reaction_update(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    comment = await _comment(api, p["reader"], shout)
    edit = "mutation($r: AdminReactionUpdateInput!) { adminUpdateReaction(reaction: $r) { success } }"
    return (lambda: api(THREAD, {"s": shout}),
            lambda: api(edit, {"r": {"id": comment, "body": "исправлено"}}, p["editor"]),
            lambda thread: {"id": comment, "body": "исправлено"} in thread)


async def shout_delete(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    return (lambda: api(FEED), lambda: _drop(api, p["editor"], shout), lambda feed: {"id": shout} not in feed)


async def shout_restore(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    await _drop(api, p["editor"], shout)
    return (lambda: api(FEED), lambda: _drop(api, p["editor"], shout, restore=True), lambda feed: {"id": shout} in feed)


async def shout_update(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    update = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success } }"
    return (lambda: api(SHOUT, {"i": shout}), lambda: api(update, {"s": {"id": shout, "title": "Правка"}}, p["editor"]),
            lambda found: found["title"] == "Правка")


async def shout_topics(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    slug = _slug("moved")
    create = "mutation($t: AdminTopicInput!) { adminCreateTopic(topic: $t) { topic { id } } }"
    topic = (await api(create, {"t": {"id": 0, "slug": slug, "title": "Куда"}}, p["editor"]))["topic"]["id"]
    feed = "query($s: String) { load_shouts_with_topic(slug: $s, options: {limit: 50}) { id } }"
    update = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success } }"
    return (lambda: api(feed, {"s": slug}), lambda: api(update, {"s": {"id": shout, "topic_ids": [topic]}}, p["editor"]),
            lambda found: {"id": shout} in found)


async def topic_create(api: Api, p: dict[str, User]) -> Any:
    slug = _slug("fresh")
    create = "mutation($t: AdminTopicInput!) { adminCreateTopic(topic: $t) { success } }"
    return (lambda: api(ALL_TOPICS), lambda: api(create, {"t": {"id": 0, "slug": slug, "title": "Новая"}}, p["editor"]),
            lambda topics: {"slug": slug} in topics)


async def topic_update(api: Api, p: dict[str, User]) -> Any:
    topic = await _topic(api, p["editor"])
    update = "mutation($t: AdminTopicInput!) { adminUpdateTopic(topic: $t) { success } }"
    return (lambda: api(TOPIC, {"s": topic["slug"]}),
            lambda: api(update, {"t": {"id": topic["id"], "title": "Иначе"}}, p["editor"]),
            lambda found: found["title"] == "Иначе")


async def topic_parent(api: Api, p: dict[str, User]) -> Any:
    parent, child = await _topic(api, p["editor"]), await _topic(api, p["editor"])
    place = "mutation($t: Int!, $p: Int) { set_topic_parent(topic_id: $t, parent_id: $p) { success } }"
    return (lambda: api(TOPIC, {"s": child["slug"]}),
            lambda: api(place, {"t": child["id"], "p": parent["id"]}, p["editor"]),
            lambda found: found["parent_ids"] == [parent["id"]])


async def topic_merge(api: Api, p: dict[str, User]) -> Any:
    target, source = await _topic(api, p["editor"]), await _topic(api, p["editor"])
    merge = "mutation($m: TopicMergeInput!) { adminMergeTopics(merge_input: $m) { success } }"
    return (lambda: api(TOPIC, {"s": source["slug"]}),
            lambda: api(merge, {"m": {"target_topic_id": target["id"], "source_topic_ids": [source["id"]]}},
                        p["editor"]),
            lambda found: found is None)


async def member_roles(api: Api, p: dict[str, User]) -> Any:
    person = await api.user()
    add = "mutation($a: Int!) { adminAddUserToRole(author_id: $a, role_id: \"expert\", community_id: 1) { success } }"
    return (lambda: api(MY_ROLES, {"i": person.id}, person), lambda: api(add, {"a": person.id}, p["admin"]),
            lambda found: "expert" in found["roles"])


async def custom_role_delete(api: Api, p: dict[str, User]) -> Any:
    person, role = await api.user(), f"r{uuid.uuid4().hex[:8]}"
    await api("mutation($r: CustomRoleInput!) { adminCreateCustomRole(role: $r) { success } }",
              {"r": {"id": role, "name": "Временная", "community_id": 1}}, p["admin"])
    await api("mutation($a: Int!, $r: String!) { adminAddUserToRole(author_id: $a, role_id: $r, community_id: 1) "
              "{ success } }", {"a": person.id, "r": role}, p["admin"])
    drop = "mutation($r: String!) { adminDeleteCustomRole(role_id: $r, community_id: 1) { success } }"
    return (lambda: api(MY_ROLES, {"i": person.id}, person), lambda: api(drop, {"r": role}, p["admin"]),
            lambda found: role not in found["roles"])


async def user_update(api: Api, p: dict[str, User]) -> Any:
    person = await api.user()
    update = "mutation($u: AdminUserUpdateInput!) { adminUpdateUser(user: $u) { success } }"
    return (lambda: api(AUTHOR, {"i": person.id}),
            lambda: api(update, {"u": {"id": person.id, "name": "Переименован"}}, p["admin"]),
            lambda found: found["name"] == "Переименован")


async def user_delete(api: Api, p: dict[str, User]) -> Any:
    person = await api.user()
    return (lambda: api(EVERYONE), lambda: api("mutation($i: Int!) { adminDeleteUser(id: $i) { success } }",
                                                {"i": person.id}, p["admin"]),
            lambda everyone: {"id": person.id} not in everyone)


async def invite_accepted(api: Api, p: dict[str, User]) -> Any:
    shout = await api.published(p["author"])
    invitee = await api.user()
    slug = (await api("query($i: Int) { get_shout(shout_id: $i) { slug } }", {"i": shout}))["slug"]
    await api("mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }",
              {"s": slug, "a": invitee.id}, p["author"])
    update = "mutation($i: AdminInviteUpdateInput!) { adminUpdateInvite(invite: $i) { success } }"
    invite = {"inviter_id": p["author"].id, "author_id": invitee.id, "shout_id": shout, "status": "ACCEPTED"}
    return (lambda: api(SHOUT, {"i": shout}), lambda: api(update, {"i": invite}, p["editor"]),
            lambda found: {"id": invitee.id} in found["authors"])


SCENARIOS: dict[str, Scenario] = {
    "reaction.delete": reaction_delete, "reaction.restore": reaction_restore, "reaction.update": reaction_update,
    "shout.delete": shout_delete, "shout.restore": shout_restore, "shout.update": shout_update, "shout.topics": shout_topics,
    "topic.create": topic_create, "topic.update": topic_update, "topic.set_parent": topic_parent,
    "topic.merge": topic_merge, "member.roles": member_roles, "role.delete": custom_role_delete,
    "user.update": user_update, "user.delete": user_delete, "invite.update": invite_accepted,
}


async def _stale(api: Api) -> list[str]:
    """The kinds of admin write whose next read still answered what the write changed."""
    people = {"editor": await api.user("editor"), "admin": await api.user("admin"), "author": await api.user(),
              "reader": await api.user()}
    stale = []
    for kind, scenario in SCENARIOS.items():
        read, write, shows = await scenario(api, people)
        await read()
        assert not shows(await read()), kind  # cached, and without the write yet
        await write()
        if not shows(await read()):
            stale.append(kind)
    return stale


async def test_no_read_after_an_admin_write_answers_what_it_changed(api: Api) -> None:
    assert await _stale(api) == []


async def test_the_control_without_invalidation_finds_every_kind_stale(api: Api,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The writes' tags are not moved (their live structure updates still are); moved afterwards, so no
    stale value outlives the test."""
    cache, skipped = api.deps.cache, []
    invalidate = cache.invalidate_tags

    async def tags_kept(tags: Any, *, also: Any = None) -> None:
        skipped.extend(tags)
        await invalidate([], also=also)

    monkeypatch.setattr(cache, "invalidate_tags", tags_kept)
    try:
        assert await _stale(api) == list(SCENARIOS)
    finally:
        monkeypatch.undo()
        await invalidate(skipped)
