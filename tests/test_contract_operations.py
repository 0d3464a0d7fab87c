"""Every read operation of ../shared/contract/operations runs against the seeded database: it
validates against our schema, returns no errors, and returns data where the seed has some."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse, validate
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from orm import AuthorFollower, Reaction, Shout, Topic, TopicFollower
from orm.stats import is_listed
from schema.schema import build_schema
from tests.contract import operations

# Operations that need a signed-in viewer, or are mutations: issues #3 (auth) and #4 (write side).
PENDING = {
    "03_load_shouts_feed", "06_load_shouts_discussed", "20_load_drafts", "21_comments_my_rates",
    "22_m_follow", "23_m_create_reaction", "24_m_publish_draft", "25_m_login", "26_m_get_session",
}
READ_OPERATIONS = sorted(set(operations()) - PENDING)


async def _seed_facts(engine: AsyncEngine) -> dict[str, Any]:
    """Slugs and ids from the seeded data that make each operation return something."""
    async with engine.connect() as conn:
        discussed = (await conn.execute(
            select(Shout.id, Shout.slug).join(Reaction, Reaction.shout == Shout.id)
            .where(is_listed(), Reaction.kind == "COMMENT", Reaction.reply_to.is_(None))
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
    assert not validate(build_schema()._schema, parse(document)), f"{name} does not validate"
    result = await gql(document, _variables(name, await _seed_facts(engine)))
    assert "errors" not in result, result.get("errors")
    (payload,) = result["data"].values()
    assert _non_empty(payload), f"{name} returned no data: {payload}"


async def test_comment_branch_carries_first_replies(gql: Any, engine: AsyncEngine) -> None:
    facts = await _seed_facts(engine)
    result = await gql(operations()["07_load_comments_branch"],
                       {"shout": facts["shout_id"], "limit": 50, "childrenLimit": 2})
    comments = result["data"]["load_comments_branch"]
    assert all(c["reply_to"] is None for c in comments)
    with_replies = [c for c in comments if c["first_replies"]]
    assert with_replies, "the most discussed shout has threads"
    for comment in with_replies:
        assert len(comment["first_replies"]) <= 2
        assert all(r["reply_to"] == comment["id"] for r in comment["first_replies"])
        assert comment["stat"]["comments_count"] >= len(comment["first_replies"])


def test_pending_operations_are_known() -> None:
    assert PENDING <= set(operations())
