"""Every operation the 2025 Discours web client sends (tests/contract_files/client-2025/core.graphql, its
own documents, unedited) validates against our schema and, run with realistic variables against the
seeded database, returns data and no errors: reads as an anonymous visitor or signed in where the
client needs a viewer, mutations in the stories a person using the client would go through."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from graphql import DocumentNode, OperationDefinitionNode, parse, validate
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from auth.mailer import LogMailer
from orm import AuthorFollower, Invite, Reaction, Shout, ShoutAuthor, Topic, TopicFollower
from orm.stats import is_listed
from schema.engine.seam import graphql_schema
from schema.schema import build_schema
from tests.contract import CONTRACT
from tests.helpers import Api, User

PASSWORD = "correct horse battery"


def client_operations() -> dict[str, str]:
    text = (CONTRACT / "client-2025" / "core.graphql").read_text()
    documents = [part.strip() for part in text.split("#---") if part.strip()]
    found: dict[str, str] = {}
    for document in documents:
        (operation,) = parse(document).definitions
        assert isinstance(operation, OperationDefinitionNode) and operation.name is not None
        found[operation.name.value] = document
    return found


OPERATIONS = client_operations()


def test_the_file_holds_the_clients_66_operations() -> None:
    assert len(OPERATIONS) == 66


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_validates(name: str) -> None:
    document: DocumentNode = parse(OPERATIONS[name])
    assert validate(graphql_schema(build_schema()), document) == []


def _non_empty(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) > 0
    if isinstance(value, dict):
        return any(_non_empty(v) for k, v in value.items() if k != "error")
    return value is not None and value is not False


class Client:
    """The web client: its documents by name; each call asserts data and no errors."""

    def __init__(self, api: Api) -> None:
        self.api = api

    async def __call__(self, name: str, variables: dict[str, Any] | None = None, user: User | None = None) -> Any:
        body = await self.api.raw(OPERATIONS[name], variables or {}, user)
        assert "errors" not in body, (name, body["errors"])
        (payload,) = body["data"].values()
        if isinstance(payload, dict):
            assert payload.get("error") is None, (name, payload)
            assert payload.get("success") is not False, (name, payload)
        if payload != {"error": None}:  # a mutation the client asks only whether it failed
            assert _non_empty(payload), f"{name} returned no data: {payload}"
        return payload


@pytest.fixture
def web(api: Api) -> Client:
    return Client(api)


async def _facts(engine: AsyncEngine) -> dict[str, Any]:
    """Seeded rows that make each read return something."""
    async with engine.connect() as conn:
        discussed = (await conn.execute(
            select(Shout.id, Shout.slug).join(Reaction, Reaction.shout == Shout.id)
            .where(is_listed(), Reaction.kind == "COMMENT", Reaction.reply_to.is_(None))
            .group_by(Shout.id, Shout.slug).order_by(func.count().desc(), Shout.id).limit(1))).one()
        followed = await conn.scalar(select(AuthorFollower.author).group_by(AuthorFollower.author)
                                     .order_by(func.count().desc(), AuthorFollower.author).limit(1))
        follower = await conn.scalar(
            select(TopicFollower.follower).where(TopicFollower.follower.in_(select(AuthorFollower.follower)))
            .order_by(TopicFollower.follower).limit(1))
        topic = await conn.scalar(select(Topic.slug).join(TopicFollower, TopicFollower.topic == Topic.id)
                                  .group_by(Topic.slug).order_by(func.count().desc(), Topic.slug).limit(1))
        coauthored = await conn.scalar(
            select(ShoutAuthor.author).join(Shout, Shout.id == ShoutAuthor.shout).where(is_listed())
            .where(ShoutAuthor.shout.in_(select(ShoutAuthor.shout).group_by(ShoutAuthor.shout)
                                         .having(func.count() > 1)))
            .order_by(ShoutAuthor.author).limit(1))
    return {"shout_id": discussed.id, "shout_slug": discussed.slug, "followed": followed,
            "follower": follower, "topic": topic, "coauthored": coauthored}


async def test_an_anonymous_visitor_reads_every_page(web: Client, engine: AsyncEngine) -> None:
    facts = await _facts(engine)
    shout = await web("LoadShoutQuery", {"slug": facts["shout_slug"]})
    assert shout["stat"]["views_count"] is not None
    await web("LoadShoutQuery", {"shout_id": facts["shout_id"]})
    await web("LoadShoutsQuery", {"options": {"limit": 10, "offset": 0, "order_by": "rating"}})
    await web("LoadRandomTopShoutsQuery", {"options": {"limit": 5, "random_limit": 50}})
    found = await web("LoadShoutsSearchQuery", {"text": "город", "options": {"limit": 10}})
    assert all(isinstance(r["id"], int) for r in found)
    await web("LoadCommentsBranch", {"shout": facts["shout_id"], "limit": 10, "childrenLimit": 3,
                                     "sort": "newest"})
    await web("LoadReactions", {"by": {"shout": facts["shout_slug"]}, "limit": 20})
    followed = f"author-{facts['followed']}"
    author = await web("GetAuthorBy", {"slug": followed})
    stat = author["stat"]
    assert {"coauthors", "replies_count", "viewed_shouts"} <= stat.keys()
    await web("GetAuthorBy", {"author_id": facts["followed"]})
    await web("UserFollowingCountersQuery", {"slug": followed})
    follower = f"author-{facts['follower']}"
    await web("GetAuthorFollowsAuthors", {"slug": follower})
    await web("GetAuthorFollowsTopics", {"slug": follower})
    await web("GetAuthorFollows", {"slug": follower})
    await web("LoadTopicsFollowedBy", {"slug": f"author-{facts['coauthored']}"})  # topics written in
    await web("LoadCommunitiesFollowedBy", {"slug": follower})
    await web("GetAuthorsAllQuery")
    await web("LoadAuthorsBy", {"by": {"order": "shouts"}, "limit": 10, "offset": 0})
    await web("LoadAuthorsSearch", {"text": "author-1", "limit": 10})
    await web("TopicBySlugQuery", {"slug": facts["topic"]})
    await web("TopicAuthorsQuery", {"slug": facts["topic"]})
    await web("TopicFollowersQuery", {"slug": facts["topic"]})
    await web("TopicsAllQuery")
    await web("TopicsByCommunityQuery", {"community_id": 1, "limit": 50, "offset": 0})
    assert await web.api("query($e: String!) { isEmailUsed(email: $e) }", {"e": "nobody@example.org"}) is False
    assert await web("IsEmailUsed", {"email": await _someone(web)}) is True


async def _someone(web: Client) -> str:
    """The address of an account that exists."""
    user = await web.api.user()
    me = await web.api("{ me { author { email } } }", user=user)
    return str(me["author"]["email"])


def _token(mailer: LogMailer, to: str, path: str) -> str:
    message = next(m for m in reversed(mailer.sent) if m.to == to and f"/{path}?" in m.body)
    match = re.search(r"token=([\w.\-]+)", message.body)
    assert match, message.body
    return match.group(1)


async def test_a_newcomer_registers_confirms_and_manages_the_account(web: Client, mailer: LogMailer) -> None:
    email = f"new-{uuid.uuid4().hex[:10]}@example.org"
    registered = await web("RegisterUser", {"email": email, "password": PASSWORD, "name": "Новичок"})
    assert registered["success"]
    await web("ResendVerifyEmail", {"email": email})
    confirmed = await web("ConfirmEmail", {"token": _token(mailer, email, "confirm")})
    token = confirmed["token"]
    login = await web("Login", {"email": email, "password": PASSWORD})
    me = User(id=login["author"]["id"], slug=login["author"]["slug"], token=login["token"])
    assert (await web("GetSession", user=me))["author"]["id"] == me.id
    refreshed = await web("RefreshToken", user=me)
    me = User(me.id, me.slug, refreshed["token"])
    await web("UpdateAuthor", {"profile": {"bio": "Пишу о городе", "links": ["https://example.org"]}}, user=me)
    await web("ProfileUpdateMutation", {"profile": {"name": "Новый Автор", "about": "<p>Обо мне</p>"}}, user=me)

    new_email = f"moved-{uuid.uuid4().hex[:10]}@example.org"
    await web("UpdateSecurity", {"email": new_email, "old_password": PASSWORD}, user=me)
    await web("CancelEmailChange", user=me)
    await web("UpdateSecurity", {"email": new_email, "old_password": PASSWORD}, user=me)
    changed = await web("ConfirmEmailChange", {"token": _token(mailer, new_email, "confirm-email-change")})
    assert changed["author"]["id"] == me.id  # the link's bearer is not signed in: no email shown

    await web("RequestPasswordReset", {"email": new_email})
    await web("ResetPassword", {"token": _token(mailer, new_email, "reset"), "newPassword": "another horse battery"})
    again = await web("Login", {"email": new_email, "password": "another horse battery"})
    assert again["author"]["id"] == me.id and token
    await web("Logout", user=User(me.id, me.slug, again["token"]))


async def test_a_reader_follows_rates_bookmarks_and_comments(web: Client, engine: AsyncEngine) -> None:
    facts = await _facts(engine)
    me = await web.api.user()
    followed = f"author-{facts['followed']}"
    await web("FollowMutation", {"what": "AUTHOR", "slug": followed}, user=me)
    await web("FollowMutation", {"what": "TOPIC", "slug": facts["topic"]}, user=me)
    await web("MyFeedQuery", {"options": {"limit": 10, "offset": 0}}, user=me)
    await web("UnfollowMutation", {"what": "TOPIC", "slug": facts["topic"]}, user=me)
    await web("AuthorRate", {"rated_slug": followed, "value": 1}, user=me)
    await web("ToggleBookmark", {"slug": facts["shout_slug"]}, user=me)
    await web("LoadBookmarkedShoutsQuery", {"options": {"limit": 10}}, user=me)
    await web("LoadUnratedShoutsQuery", {"options": {"limit": 10}}, user=me)

    comment = await web("CreateReactionMutation", {"reaction": {
        "kind": "COMMENT", "shout": facts["shout_id"], "body": "Хороший текст"}}, user=me)
    comment_id = comment["reaction"]["id"]
    await web("UpdateReactionMutation", {"reaction": {
        "id": comment_id, "kind": "COMMENT", "shout": facts["shout_id"], "body": "Очень хороший текст"}}, user=me)
    await web("LoadDiscussedShoutsQuery", {"options": {"limit": 10}}, user=me)
    await web("ShoutsFollowedByUserQuery", {"slug": me.slug, "options": {"limit": 10}}, user=me)
    others = await web.api("query($s: Int!) { load_comments_branch(shout: $s, limit: 10) { id created_by { id } } }",
                           {"s": facts["shout_id"]})
    target = next(c["id"] for c in others if c["created_by"]["id"] != me.id)
    await web("CreateReactionMutation", {"reaction": {"kind": "LIKE", "shout": facts["shout_id"],
                                                      "reply_to": target}}, user=me)
    await web("CreateReactionMutation", {"reaction": {"kind": "LIKE", "shout": facts["shout_id"]}}, user=me)
    assert await web("CommentsMyRates", {"comments": [target]}, user=me) == [
        {"comment_id": target, "my_rate": "LIKE"}]
    assert await web("ArticlesMyRates", {"shouts": [facts["shout_id"]]}, user=me) == [
        {"shout_id": facts["shout_id"], "my_rate": "LIKE"}]
    await web("DeleteReactionMutation", {"reaction_id": comment_id}, user=me)


async def test_authors_write_publish_invite_and_edit_again(web: Client, api: Api, engine: AsyncEngine) -> None:
    alice, bob, carol, dan = [await api.user() for _ in range(4)]
    slug = f"story-{uuid.uuid4().hex[:8]}"
    created = await web("CreateDraftMutation", {"draft_input": {"title": "Черновик", "layout": "article"}},
                        user=alice)
    draft_id = created["draft"]["id"]
    await web("UpdateDraftMutation", {"draft_id": draft_id, "draft_input": {
        "title": "Город и память", "body": "<p>Текст</p>", "slug": slug, "lead": "Вступление"}}, user=alice)
    published = await web("PublishDraftMutation", {"draft_id": draft_id}, user=alice)
    assert published["draft"]["title"] == "Город и память"
    drafts = (await web("LoadDraftsQuery", user=alice))["drafts"]
    mine = next(d for d in drafts if d["id"] == draft_id)
    assert mine["shout"]["slug"] == slug and mine["shout"]["published_at"]
    shout_id = mine["shout"]["id"]
    await web("GetMyShout", {"shout_id": shout_id}, user=alice)
    again = await web("CreateDraftFromShoutMutation", {"shout_id": shout_id}, user=alice)
    assert again["draft"]["id"] == draft_id  # the shout's own draft, not a copy of it

    await web("CollabInviteCreateMutation", {"author_id": bob.id, "slug": slug}, user=alice)
    await web("CollabInviteCreateMutation", {"author_id": carol.id, "slug": slug}, user=alice)
    await web("CollabInviteCreateMutation", {"author_id": dan.id, "slug": slug}, user=alice)
    invites = await _invites(engine, shout_id)
    await web("CollabInviteAcceptMutation", {"invite_id": invites[bob.id]}, user=bob)
    await web("CollabInviteRejectMutation", {"invite_id": invites[carol.id]}, user=carol)
    await web("CollabRemoveInviteMutation", {"invite_id": invites[dan.id]}, user=alice)
    coauthored = await web("LoadCoauthoredShoutsQuery", {"options": {"limit": 10}}, user=bob)
    assert slug in [s["slug"] for s in coauthored]
    assert (await web.api("query($s: String!) { get_author(slug: $s) { stat { coauthors } } }",
                          {"s": alice.slug}))["stat"]["coauthors"] == 1
    await web("CollabRemoveAuthorMutation", {"author_id": bob.id, "slug": slug}, user=alice)
    await web("UnpublishShoutMutation", {"shout_id": shout_id}, user=alice)

    other = await web("CreateDraftMutation", {"draft_input": {"title": "Лишнее"}}, user=alice)
    await web("DeleteDraftMutation", {"draft_id": other["draft"]["id"]}, user=alice)


async def _invites(engine: AsyncEngine, shout_id: int) -> dict[int, int]:
    async with engine.connect() as conn:
        return dict((await conn.execute(select(Invite.author_id, Invite.id).where(Invite.shout_id == shout_id))).all())


async def test_an_editor_edits_a_published_shout_through_a_new_draft(web: Client, api: Api,
                                                                     engine: AsyncEngine) -> None:
    """A seeded shout has no draft: the editor's draft is a copy of it, with its authors and topics, and
    publishing that draft updates the same shout."""
    editor = await api.user("editor")
    async with engine.connect() as conn:
        shout = (await conn.execute(select(Shout.id, Shout.slug, Shout.title).where(is_listed(), Shout.draft.is_(None))
                                    .order_by(Shout.id).limit(1))).one()
        authors = sorted((await conn.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == shout.id))).all())
    made = (await web("CreateDraftFromShoutMutation", {"shout_id": shout.id}, user=editor))["draft"]
    assert (made["title"], made["shout"]["id"]) == (shout.title, shout.id)
    assert sorted(a["id"] for a in made["authors"]) == authors
    again = (await web("CreateDraftFromShoutMutation", {"shout_id": shout.id}, user=editor))["draft"]
    assert again["id"] == made["id"]
    await api("mutation($d: Int!, $i: DraftInput!) { update_draft(draft_id: $d, draft_input: $i) { error } }",
              {"d": made["id"], "i": {"title": "Исправленный заголовок"}}, user=editor)
    await api("mutation($d: Int!) { publish_draft(draft_id: $d) { error } }", {"d": made["id"]}, user=editor)
    read = await api("query($s: Int) { get_shout(shout_id: $s) { slug title } }", {"s": shout.id})
    assert read == {"slug": shout.slug, "title": "Исправленный заголовок"}
    stranger = await api.user()
    assert await api.error("mutation($s: Int!) { create_draft_from_shout(shout_id: $s) { error } }",
                           {"s": shout.id}, user=stranger) == "FORBIDDEN"


async def test_a_community_admin_updates_and_removes_a_community(web: Client, api: Api) -> None:
    founder = await api.user()
    slug = f"club-{uuid.uuid4().hex[:8]}"
    await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { error } }",
              {"c": {"slug": slug, "name": "Клуб"}}, user=founder)
    updated = await web("CommunityUpdateMutation", {"community_input": {"slug": slug, "desc": "О городе"}},
                        user=founder)
    assert updated["community"]["desc"] == "О городе"
    await web("CommunityDestroyMutation", {"slug": slug}, user=founder)


def test_the_stories_run_every_operation() -> None:
    """Between them, the stories above call every one of the client's operations by name."""
    called = set(re.findall(r'web\("(\w+)"', Path(__file__).read_text()))
    assert set(OPERATIONS) - called == set()
