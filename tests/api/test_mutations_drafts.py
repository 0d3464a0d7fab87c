"""Drafts and publishing through GraphQL: read (warming the cache), mutate, read again."""

from __future__ import annotations

import uuid
from typing import Any

from tests.helpers import Api

DRAFTS = "{ load_drafts { drafts { id title body slug topics { slug } authors { id } publication { slug } } } }"
CREATE = "mutation($d: DraftInput!) { create_draft(draft_input: $d) { error draft { id title } } }"
SHOUT = "query($s: String) { get_shout(slug: $s) { id title authors { id } topics { slug } } }"
FIRST_PAGE = "{ load_shouts_by(options: {limit: 5}) { id slug } }"


def _slug() -> str:
    return f"text-{uuid.uuid4().hex[:10]}"


async def _draft(api: Api, user: Any, **fields: Any) -> int:
    values = {"title": "Заголовок", "body": "<p>Текст</p>", "slug": _slug(), "topic_ids": [1, 2],
              "main_topic_id": 2, **fields}
    return int((await api(CREATE, {"d": values}, user))["draft"]["id"])


async def test_create_update_delete_draft(api: Api) -> None:
    author = await api.user()
    assert (await api(DRAFTS, user=author))["drafts"] == []
    draft_id = await _draft(api, author, title="Первый")
    drafts = (await api(DRAFTS, user=author))["drafts"]
    assert [(d["id"], d["title"]) for d in drafts] == [(draft_id, "Первый")]
    assert {t["slug"] for t in drafts[0]["topics"]} == {"culture", "society"}

    update = "mutation($id: Int!, $d: DraftInput!) { update_draft(draft_id: $id, draft_input: $d) { draft { title } } }"
    await api(update, {"id": draft_id, "d": {"title": "Второй", "topic_ids": [3]}}, author)
    drafts = (await api(DRAFTS, user=author))["drafts"]
    assert drafts[0]["title"] == "Второй" and [t["slug"] for t in drafts[0]["topics"]] == ["art"]

    await api("mutation($id: Int!) { delete_draft(draft_id: $id) { error } }", {"id": draft_id}, author)
    assert (await api(DRAFTS, user=author))["drafts"] == []


async def test_only_authors_and_editors_edit_a_draft(api: Api) -> None:
    author, stranger, editor = await api.user(), await api.user(), await api.user("editor")
    draft_id = await _draft(api, author)
    update = "mutation($id: Int!, $d: DraftInput!) { update_draft(draft_id: $id, draft_input: $d) { error } }"
    assert await api.error(update, {"id": draft_id, "d": {"title": "x"}}, stranger) == "FORBIDDEN"
    assert await api.error(update, {"id": draft_id, "d": {"title": "x"}}) == "UNAUTHENTICATED"
    await api(update, {"id": draft_id, "d": {"title": "Правка редактора"}}, editor)
    assert (await api(DRAFTS, user=author))["drafts"][0]["title"] == "Правка редактора"
    reader = await api.user()
    assert await api.error("mutation { create_draft(draft_input: {title: \"t\"}) { error } }",
                           user=await _demote(api, reader)) == "FORBIDDEN"


async def _demote(api: Api, user: Any) -> Any:
    from sqlalchemy import update

    from orm import CommunityAuthor
    from resolvers.writes import transaction

    async with transaction(api.deps) as session:
        await session.execute(update(CommunityAuthor).where(CommunityAuthor.author == user.id).values(roles="reader"))
    return user


async def test_publish_and_unpublish_draft(api: Api) -> None:
    author = await api.user()
    slug = _slug()
    draft_id = await _draft(api, author, slug=slug, title="Опубликуем")
    assert await api(SHOUT, {"s": slug}) is None
    first = [s["id"] for s in await api(FIRST_PAGE)]
    result = await api("mutation($id: Int!) { publish_draft(draft_id: $id) { error draft { id } shout { id } } }",
                       {"id": draft_id}, author)
    shout_id = result["shout"]["id"]
    shout = await api(SHOUT, {"s": slug})
    assert shout["title"] == "Опубликуем" and [a["id"] for a in shout["authors"]] == [author.id]
    assert {t["slug"] for t in shout["topics"]} == {"culture", "society"}
    assert next(s["id"] for s in await api(FIRST_PAGE)) == shout_id != first[0]
    assert (await api(DRAFTS, user=author))["drafts"][0]["publication"]["slug"] == slug

    await api("mutation($id: Int!) { unpublish_draft(draft_id: $id) { error } }", {"id": draft_id}, author)
    assert await api(SHOUT, {"s": slug}) is None
    assert shout_id not in [s["id"] for s in await api(FIRST_PAGE)]
    mine = await api("{ get_shouts_drafts { shouts { id } } }", user=author)
    assert shout_id in [s["id"] for s in mine["shouts"]]


async def test_publish_and_unpublish_shout(api: Api) -> None:
    author, stranger = await api.user(), await api.user()
    slug = _slug()
    draft_id = await _draft(api, author, slug=slug)
    shout_id = (await api("mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }",
                          {"id": draft_id}, author))["shout"]["id"]
    assert (await api(SHOUT, {"s": slug}))["id"] == shout_id
    unpublish = "mutation($id: Int!) { unpublish_shout(shout_id: $id) { error shout { published_at } } }"
    assert await api.error(unpublish, {"id": shout_id}, stranger) == "FORBIDDEN"
    assert (await api(unpublish, {"id": shout_id}, author))["shout"]["published_at"] is None
    assert await api(SHOUT, {"s": slug}) is None
    my = "query($id: Int!) { get_my_shout(shout_id: $id) { error shout { id published_at } } }"
    assert (await api(my, {"id": shout_id}, author))["shout"]["id"] == shout_id
    await api("mutation($id: Int!) { publish_shout(shout_id: $id) { shout { published_at } } }", {"id": shout_id},
              author)
    assert (await api(SHOUT, {"s": slug}))["id"] == shout_id


async def test_publishing_needs_title_and_body_and_a_free_slug(api: Api) -> None:
    author = await api.user()
    empty = await _draft(api, author, body=None, title=None)
    publish = "mutation($id: Int!) { publish_draft(draft_id: $id) { error } }"
    assert await api.error(publish, {"id": empty}) == "UNAUTHENTICATED"
    assert await api.error(publish, {"id": empty}, author) == "BAD_USER_INPUT"
    taken = await _draft(api, author, slug="shout-1")
    assert await api.error(publish, {"id": taken}, author) == "CONFLICT"
    assert await api.error(publish, {"id": 99999999}, author) == "NOT_FOUND"


async def test_nobody_becomes_a_co_author_without_accepting_an_invite(api: Api) -> None:
    """Listing someone in `author_ids` is refused; an invite they accept makes them a co-author of the
    shout and of its draft, so publishing again keeps them; removing them removes them from both."""
    from sqlalchemy import select

    from orm import Invite

    author, other = await api.user(), await api.user()
    slug = _slug()
    refused = await api.raw(CREATE, {"d": {"title": "t", "body": "<p>b</p>", "slug": slug, "author_ids": [other.id]}},
                            author)
    assert refused["errors"][0]["extensions"] == {"code": "FORBIDDEN", "field": "author_ids"}
    assert (await api(DRAFTS, user=other))["drafts"] == []
    unknown = await api.raw(CREATE, {"d": {"title": "t", "body": "b", "author_ids": [987654321]}}, author)
    assert unknown["errors"][0]["extensions"]["code"] == "FORBIDDEN"

    draft_id = await _draft(api, author, slug=slug, author_ids=[author.id])
    update = "mutation($id: Int!, $d: DraftInput!) { update_draft(draft_id: $id, draft_input: $d) { error } }"
    assert await api.error(update, {"id": draft_id, "d": {"author_ids": [author.id, other.id]}}, author) == "FORBIDDEN"
    publish = "mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id authors { id } } } }"
    shout = (await api(publish, {"id": draft_id}, author))["shout"]
    assert shout["authors"] == [{"id": author.id}]

    await api("mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }",
              {"s": slug, "a": other.id}, author)
    assert [a["id"] for a in (await api(SHOUT, {"s": slug}))["authors"]] == [author.id]  # pending: not yet
    async with api.deps.db() as session:
        invite_id = await session.scalar(select(Invite.id).where(Invite.shout_id == shout["id"]))
    await api("mutation($id: Int!) { accept_invite(invite_id: $id) { error } }", {"id": invite_id}, other)
    republished = (await api(publish, {"id": draft_id}, author))["shout"]
    assert sorted(a["id"] for a in republished["authors"]) == sorted([author.id, other.id])
    assert [d["id"] for d in (await api(DRAFTS, user=other))["drafts"]] == [draft_id]

    await api("mutation($s: String, $a: Int) { remove_author(slug: $s, author_id: $a) { error } }",
              {"s": slug, "a": other.id}, author)
    assert (await api(publish, {"id": draft_id}, author))["shout"]["authors"] == [{"id": author.id}]
