"""Topics, communities, invites, collections and notifications through GraphQL: read (warming the
cache), mutate, read again."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import select

from orm import Collection
from tests.helpers import Api

TOPIC = "query($s: String!) { get_topic(slug: $s) { slug title body } }"
ALL_TOPICS = "{ get_topics_all { slug } }"


def _slug(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_topics_lifecycle(api: Api) -> None:
    editor, author = await api.user("editor"), await api.user()
    slug = _slug("topic")
    assert await api(TOPIC, {"s": slug}) is None
    all_before = [t["slug"] for t in await api(ALL_TOPICS)]
    create = "mutation($t: TopicInput!) { create_topic(topic_input: $t) { error topic { slug title } } }"
    assert await api.error(create, {"t": {"slug": slug, "title": "Новая"}}, author) == "FORBIDDEN"
    await api(create, {"t": {"slug": slug, "title": "Новая", "body": "о чём"}}, editor)
    assert await api(TOPIC, {"s": slug}) == {"slug": slug, "title": "Новая", "body": "о чём"}
    assert slug in [t["slug"] for t in await api(ALL_TOPICS)] and slug not in all_before
    assert await api.error(create, {"t": {"slug": slug}}, editor) == "CONFLICT"

    update = "mutation($t: TopicInput!) { update_topic(topic_input: $t) { topic { title } } }"
    await api(update, {"t": {"slug": slug, "title": "Переименована"}}, editor)
    assert (await api(TOPIC, {"s": slug}))["title"] == "Переименована"

    await api("mutation($s: String!) { delete_topic(slug: $s) { error } }", {"s": slug}, editor)
    assert await api(TOPIC, {"s": slug}) is None
    assert slug not in [t["slug"] for t in await api(ALL_TOPICS)]

    other = _slug("topic")
    created = await api(create, {"t": {"slug": other, "title": "Ещё"}}, editor)
    assert created["topic"]["slug"] == other
    topic_id = (await api("query($s: String!) { get_topic(slug: $s) { id } }", {"s": other}))["id"]
    await api("mutation($id: Int!) { delete_topic_by_id(id: $id) { error } }", {"id": topic_id}, editor)
    assert await api(TOPIC, {"s": other}) is None


async def test_deleting_a_topic_takes_it_off_its_shouts(api: Api) -> None:
    editor = await api.user("editor")
    slug = _slug("topic")
    await api("mutation($t: TopicInput!) { create_topic(topic_input: $t) { error } }", {"t": {"slug": slug}}, editor)
    topic_id = (await api("query($s: String!) { get_topic(slug: $s) { id } }", {"s": slug}))["id"]
    author = await api.user()
    draft = await api("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }",
                      {"d": {"title": "t", "body": "b", "slug": _slug("s"), "topic_ids": [topic_id]}}, author)
    shout = await api("mutation($id: Int!) { publish_draft(draft_id: $id) { shout { slug } } }",
                      {"id": draft["draft"]["id"]}, author)
    by_slug = "query($s: String) { get_shout(slug: $s) { topics { slug } main_topic { slug } } }"
    assert (await api(by_slug, {"s": shout["shout"]["slug"]}))["topics"] == [{"slug": slug}]
    await api("mutation($s: String!) { delete_topic(slug: $s) { error } }", {"s": slug}, editor)
    assert await api(by_slug, {"s": shout["shout"]["slug"]}) == {"topics": [], "main_topic": None}


async def test_communities_lifecycle(api: Api) -> None:
    founder, member = await api.user(), await api.user()
    slug = _slug("club")
    everything = "{ get_communities_all { slug name } }"
    assert slug not in [c["slug"] for c in await api(everything)]
    create = "mutation($c: CommunityInput!) { create_community(community_input: $c) { error community { slug } } }"
    await api(create, {"c": {"slug": slug, "name": "Клуб"}}, founder)
    assert {"slug": slug, "name": "Клуб"} in await api(everything)

    update = "mutation($c: CommunityInput!) { update_community(community_input: $c) { community { name } } }"
    assert await api.error(update, {"c": {"slug": slug, "name": "Захват"}}, member) == "FORBIDDEN"
    await api(update, {"c": {"slug": slug, "name": "Клуб любителей"}}, founder)
    assert {"slug": slug, "name": "Клуб любителей"} in await api(everything)

    mine = "query($id: Int) { get_communities_by_author(author_id: $id) { slug } }"
    assert slug not in [c["slug"] for c in await api(mine, {"id": member.id})]
    await api("mutation($s: String!) { join_community(slug: $s) { error } }", {"s": slug}, member)
    assert slug in [c["slug"] for c in await api(mine, {"id": member.id})]
    await api("mutation($s: String!) { leave_community(slug: $s) { error } }", {"s": slug}, member)
    assert slug not in [c["slug"] for c in await api(mine, {"id": member.id})]

    delete = "mutation($s: String!) { delete_community(slug: $s) { error } }"
    assert await api.error(delete, {"s": slug}, member) == "FORBIDDEN"
    await api(delete, {"s": slug}, founder)
    assert slug not in [c["slug"] for c in await api(everything)]
    assert await api.error(delete, {"s": "discours"}, founder) == "BAD_USER_INPUT"


async def _published(api: Api, author: object) -> tuple[int, str]:
    slug = _slug("shout")
    draft = await api("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }",
                      {"d": {"title": "Вместе", "body": "<p>b</p>", "slug": slug}}, author)  # type: ignore[arg-type]
    shout = await api("mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }",
                      {"id": draft["draft"]["id"]}, author)  # type: ignore[arg-type]
    return shout["shout"]["id"], slug


async def test_invites(api: Api) -> None:
    author, invitee, stranger = await api.user(), await api.user(), await api.user()
    shout_id, slug = await _published(api, author)
    authors = "query($s: String) { get_shout(slug: $s) { authors { id } } }"
    assert await api(authors, {"s": slug}) == {"authors": [{"id": author.id}]}
    invite = "mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }"
    assert await api.error(invite, {"s": slug, "a": invitee.id}, stranger) == "FORBIDDEN"
    await api(invite, {"s": slug, "a": invitee.id}, author)
    async with api.deps.db() as session:
        from orm import Invite

        invite_id = await session.scalar(select(Invite.id).where(Invite.shout_id == shout_id))
    accept = "mutation($id: Int!) { accept_invite(invite_id: $id) { error } }"
    assert await api.error(accept, {"id": invite_id}, stranger) == "FORBIDDEN"
    await api(accept, {"id": invite_id}, invitee)
    assert sorted(a["id"] for a in (await api(authors, {"s": slug}))["authors"]) == sorted([author.id, invitee.id])
    assert await api.error(accept, {"id": invite_id}, invitee) == "CONFLICT"

    remove = "mutation($s: String, $a: Int) { remove_author(slug: $s, author_id: $a) { error } }"
    await api(remove, {"s": slug, "a": invitee.id}, author)
    assert await api(authors, {"s": slug}) == {"authors": [{"id": author.id}]}
    assert await api.error(remove, {"s": slug, "a": author.id}, author) == "BAD_USER_INPUT"

    await api(invite, {"s": slug, "a": stranger.id}, author)
    async with api.deps.db() as session:
        from orm import Invite

        second = await session.scalar(select(Invite.id).where(Invite.shout_id == shout_id, Invite.author_id == stranger.id))
    await api("mutation($id: Int!) { reject_invite(invite_id: $id) { error } }", {"id": second}, stranger)
    assert await api(authors, {"s": slug}) == {"authors": [{"id": author.id}]}
    await api(invite, {"s": slug, "a": invitee.id}, author)
    async with api.deps.db() as session:
        from orm import Invite

        third = await session.scalar(select(Invite.id).where(Invite.shout_id == shout_id, Invite.author_id == invitee.id))
    await api("mutation($id: Int!) { remove_invite(invite_id: $id) { error } }", {"id": third}, author)
    assert await api.error(accept, {"id": third}, invitee) == "NOT_FOUND"


async def test_collections(api: Api) -> None:
    """No query of the contract reads collections: the rows are checked directly."""
    author, other = await api.user(), await api.user()
    slug = _slug("col")
    create = "mutation($c: CollectionInput!) { create_collection(collection_input: $c) { error } }"
    await api(create, {"c": {"slug": slug, "title": "Подборка", "desc": "лучшее"}}, author)
    update = "mutation($c: CollectionInput!) { update_collection(collection_input: $c) { error } }"
    assert await api.error(update, {"c": {"slug": slug, "title": "x"}}, other) == "FORBIDDEN"
    await api(update, {"c": {"slug": slug, "title": "Подборка года"}}, author)
    async with api.deps.db() as session:
        assert await session.scalar(select(Collection.title).where(Collection.slug == slug)) == "Подборка года"
    await api("mutation($s: String!) { delete_collection(slug: $s) { error } }", {"s": slug}, author)
    async with api.deps.db() as session:
        assert await session.scalar(select(Collection.id).where(Collection.slug == slug)) is None


async def test_notifications(api: Api) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    since = int(time.time()) - 5
    load = """query($a: Int!) { load_notifications(after: $a, limit: 10) { total unread
      notifications { id thread entity seen authors { id } shout { id } reactions } } }"""
    assert (await api(load, {"a": since}, author))["total"] == 0
    comment = await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }",
                        {"r": {"kind": "COMMENT", "shout": shout_id, "body": "Отличный текст"}}, reader)
    await api(f'mutation {{ follow(what: AUTHOR, slug: "{author.slug}") {{ error }} }}', user=reader)
    result = await api(load, {"a": since}, author)
    assert result["total"] == 2 and result["unread"] == 2
    threads = {n["thread"]: n for n in result["notifications"]}
    discussion = threads[f"shout:{shout_id}"]
    assert discussion["authors"] == [{"id": reader.id}] and discussion["shout"] == {"id": shout_id}
    assert discussion["reactions"] == [comment["reaction"]["id"]]
    assert threads["followers"]["authors"] == [{"id": reader.id}]

    await api("mutation($t: String!) { notifications_seen_thread(thread_id: $t) { error } }",
              {"t": f"shout:{shout_id}"}, author)
    assert (await api(load, {"a": since}, author))["unread"] == 1
    await api("mutation($a: Int!) { notifications_seen_after(after: $a) { error } }", {"a": since}, author)
    assert (await api(load, {"a": since}, author))["unread"] == 0
    await api("mutation($a: Int!) { notifications_seen_after(after: $a, seen: false) { error } }", {"a": since}, author)
    assert (await api(load, {"a": since}, author))["unread"] == 2
    async with api.deps.db() as session:
        from orm import Notification

        follow_note = await session.scalar(select(Notification.id).where(Notification.entity == "follower")
                                           .order_by(Notification.id.desc()).limit(1))
    await api("mutation($id: Int!) { notification_mark_seen(notification_id: $id) { error } }", {"id": follow_note},
              author)
    assert (await api(load, {"a": since}, author))["unread"] == 1
    assert (await api(load, {"a": since}, reader))["total"] == 0  # nobody is told of their own doing
