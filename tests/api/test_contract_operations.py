"""Every read operation of the contract (tests/contract_files/operations) runs against the seeded database: it
validates against our schema, returns no errors, and returns data where the seed has some."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse, validate
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from orm import AuthorFollower, Reaction, Shout, Topic, TopicFollower
from orm.stats import is_listed
from schema.engine.seam import graphql_schema
from schema.schema import build_schema
from tests.contract import operations

# Operations that need a signed-in viewer, or are mutations: run in one user's story below.
SIGNED_IN = {
    "03_load_shouts_feed", "06_load_shouts_discussed", "20_load_drafts", "21_comments_my_rates",
    "22_m_follow", "23_m_create_reaction", "24_m_publish_draft", "25_m_login", "26_m_get_session",
}
READ_OPERATIONS = sorted(set(operations()) - SIGNED_IN)


async def _seed_facts(engine: AsyncEngine) -> dict[str, Any]:
    """Slugs and ids from the seeded data that make each operation return something."""
    async with engine.connect() as conn:
        # the most discussed of the seeded shouts whose comments have replies: other tests add shouts with
        # many comments and no reply at all, which would have no thread to show
        replied = select(Reaction.shout).where(Reaction.reply_to.is_not(None), Reaction.kind == "COMMENT",
                                               Reaction.deleted_at.is_(None))
        discussed = (await conn.execute(
            select(Shout.id, Shout.slug).join(Reaction, Reaction.shout == Shout.id)
            .where(is_listed(), Reaction.kind == "COMMENT", Reaction.reply_to.is_(None), Shout.id.in_(replied))
            .group_by(Shout.id, Shout.slug).order_by(func.count().desc(), Shout.id).limit(1)
        )).one()
        followed_author = await conn.scalar(
            select(AuthorFollower.author).group_by(AuthorFollower.author)
            .order_by(func.count().desc(), AuthorFollower.author).limit(1))
        following_author = await conn.scalar(
            select(TopicFollower.follower).where(TopicFollower.follower.in_(select(AuthorFollower.follower)))
            .order_by(TopicFollower.follower).limit(1))
        followed_topic = await conn.scalar(
            select(Topic.slug).join(TopicFollower, TopicFollower.topic == Topic.id)
            .group_by(Topic.slug).order_by(func.count().desc(), Topic.slug).limit(1))
    return {"shout_id": discussed.id, "shout_slug": discussed.slug,
            "followed_author": f"author-{followed_author}", "following_author": f"author-{following_author}",
            "topic": followed_topic}


def _variables(name: str, facts: dict[str, Any]) -> dict[str, Any]:
    return {
        "01_get_shout": {"slug": facts["shout_slug"]},
        "02_load_shouts_by": {"options": {"limit": 10, "offset": 0}},
        "04_load_shouts_random_top": {"options": {"limit": 5, "random_limit": 50}},
        "05_load_shouts_search": {"text": "город", "options": {"limit": 10}},
        "07_load_comments_branch": {"shout": facts["shout_id"], "limit": 10, "childrenLimit": 3},
        "08_load_reactions_by": {"by": {"shout": facts["shout_slug"]}, "limit": 20},
        "09_get_author": {"slug": facts["followed_author"]},
        "10_load_authors_by": {"by": {"order": "followers"}, "limit": 10},
        "11_load_authors_search": {"text": "author-1", "limit": 10},
        "12_get_author_follows": {"slug": facts["following_author"]},
        "13_get_author_followers": {"slug": facts["followed_author"]},
        "14_get_author_follows_topics": {"slug": facts["following_author"]},
        "15_get_topic": {"slug": facts["topic"]},
        "16_get_topics_all": {},
        "17_get_topics_by_community": {"community_id": 1, "limit": 50},
        "18_get_topic_followers": {"slug": facts["topic"]},
        "19_get_topic_authors": {"slug": facts["topic"]},
    }[name]


def _non_empty(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) > 0
    if isinstance(value, dict):
        return any(_non_empty(v) for k, v in value.items() if k != "error")
    return value is not None


@pytest.mark.parametrize("name", READ_OPERATIONS)
async def test_read_operation(name: str, gql: Any, engine: AsyncEngine) -> None:
    document = operations()[name]
    assert not validate(graphql_schema(build_schema()), parse(document)), f"{name} does not validate"
    result = await gql(document, _variables(name, await _seed_facts(engine)))
    assert "errors" not in result, result.get("errors")
    (payload,) = result["data"].values()
    assert _non_empty(payload), f"{name} returned no data: {payload}"


async def test_comment_branch_carries_first_replies(gql: Any, engine: AsyncEngine) -> None:
    facts = await _seed_facts(engine)
    result = await gql(operations()["07_load_comments_branch"],
                       {"shout": facts["shout_id"], "limit": 50, "childrenLimit": 2, "sort": "oldest"})
    comments = result["data"]["load_comments_branch"]
    assert all(c["reply_to"] is None for c in comments)
    with_replies = [c for c in comments if c["first_replies"]]
    assert with_replies, "the most discussed shout has threads"
    for comment in with_replies:
        assert len(comment["first_replies"]) <= 2
        assert all(r["reply_to"] == comment["id"] for r in comment["first_replies"])
        assert comment["stat"]["comments_count"] >= len(comment["first_replies"])


def test_signed_in_operations_are_known() -> None:
    assert SIGNED_IN <= set(operations())


async def test_a_signed_in_readers_story_runs_every_remaining_operation(client: Any, engine: AsyncEngine) -> None:
    """Login, session, follow, feed, comment, discussed, draft, publish, drafts, rates: the client's own
    documents, validated against our schema, with no errors and with data."""
    ops = operations()
    schema = graphql_schema(build_schema())
    for name in SIGNED_IN:
        assert not validate(schema, parse(ops[name])), f"{name} does not validate"
    facts = await _seed_facts(engine)
    token = ""

    async def run(name_or_doc: str, variables: dict[str, Any]) -> Any:
        document = ops.get(name_or_doc, name_or_doc)
        client.cookies.clear()
        response = await client.post("/graphql", json={"query": document, "variables": variables},
                                     headers={"authorization": f"Bearer {token}"} if token else {})
        body = response.json()
        assert "errors" not in body, (name_or_doc[:40], body)
        (payload,) = body["data"].values()
        assert _non_empty(payload), f"{name_or_doc[:40]} returned no data: {payload}"
        return payload

    email = f"reader-{id(client)}@example.org"
    await run("mutation($e: String!) { registerUser(email: $e, password: \"long enough pw\") { success } }",
              {"e": email})
    token = (await run("25_m_login", {"email": email, "password": "long enough pw"}))["token"]
    session = await run("26_m_get_session", {})
    assert session["token"] == token
    me = session["author"]["id"]
    followed = await run("22_m_follow", {"what": "AUTHOR", "slug": facts["followed_author"]})
    assert facts["followed_author"] in [a["slug"] for a in followed["authors"]]
    await run("22_m_follow", {"what": "TOPIC", "slug": facts["topic"]})
    await run("03_load_shouts_feed", {"options": {"limit": 10}})
    comment = await run("23_m_create_reaction", {"reaction": {"kind": "COMMENT", "shout": facts["shout_id"],
                                                               "body": "Хороший текст"}})
    assert comment["reaction"]["body"] == "Хороший текст"
    discussed = await run("06_load_shouts_discussed", {"options": {"limit": 10}})
    assert facts["shout_id"] in [s["id"] for s in discussed]
    draft = await run("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }",
                      {"d": {"title": "Черновик", "body": "<p>Текст</p>", "slug": f"story-{id(client)}"}})
    published = await run("24_m_publish_draft", {"draft_id": draft["draft"]["id"]})
    assert published["draft"]["title"] == "Черновик"
    drafts = await run("20_load_drafts", {})
    assert draft["draft"]["id"] in [d["id"] for d in drafts["drafts"]]
    others = await run("query($s: Int!) { load_comments_branch(shout: $s, limit: 5) { id created_by { id } } }",
                       {"s": facts["shout_id"]})
    target = next(c["id"] for c in others if c["created_by"]["id"] != me)
    await run("23_m_create_reaction", {"reaction": {"kind": "LIKE", "shout": facts["shout_id"], "reply_to": target}})
    rates = await run("21_comments_my_rates", {"comments": [target]})
    assert rates == [{"comment_id": target, "my_rate": "LIKE"}]
