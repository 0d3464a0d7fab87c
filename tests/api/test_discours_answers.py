"""Answers as the Discours backend gives them, where a side-by-side run on the same rows found ours differing
(the adoption issue); each test states the Discours meaning it holds us to."""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import delete, func, select

from orm import Author, Community, Reaction, Shout, Topic
from orm.reaction import COMMENT_KINDS
from orm.stats import is_listed
from resolvers.author_query import WINDOW_STEP
from resolvers.writes import transaction
from tests.helpers import Api

AUTHORS_BY = "query($by: AuthorsBy!) { load_authors_by(by: $by, limit: 100) { id } }"


async def test_authors_by_last_seen_or_created_at_are_those_within_the_last_n_seconds(api: Api) -> None:
    """Discours: `before = now - by["last_seen"]; filter(Author.last_seen > before)` (and the same for
    `created_at`, when `last_seen` is not given): N is a span of seconds, not a time."""
    user = await api.user()  # created and seen just now
    for field in ("last_seen", "created_at"):
        listed = {a["id"] for a in await api(AUTHORS_BY, {"by": {field: 3600}})}
        earliest = int(time.time()) // WINDOW_STEP * WINDOW_STEP - 3600
        async with api.deps.db() as session:
            expected = await session.scalar(select(func.count()).select_from(Author).where(
                getattr(Author, field) > earliest, Author.deleted_at.is_(None)))
        assert user.id in listed, field
        assert len(listed) == min(100, expected or 0), field


async def test_a_communitys_topics_without_a_limit_are_all_of_them(api: Api) -> None:
    """Discours answers `get_topics_by_community` with every topic of the community (it takes no limit)."""
    slug = f"many-{uuid.uuid4().hex[:8]}"
    async with transaction(api.deps) as session:
        community = Community(name=slug, slug=slug, pic="")
        session.add(community)
        await session.flush()
        community_id = community.id
        session.add_all([Topic(slug=f"{slug}-{n}", title=f"Тема {n}", community=community_id) for n in range(130)])
    try:
        topics = await api("query($c: Int!) { get_topics_by_community(community_id: $c) { slug } }",
                           {"c": community_id})
        assert len(topics) == 130
        limited = await api("query($c: Int!) { get_topics_by_community(community_id: $c, limit: 7) { slug } }",
                            {"c": community_id})
        assert len(limited) == 7
    finally:
        async with transaction(api.deps) as session:
            await session.execute(delete(Topic).where(Topic.community == community_id))
            await session.execute(delete(Community).where(Community.id == community_id))


async def test_a_shout_without_comments_was_last_commented_at_zero(api: Api) -> None:
    """Discours' stat says 0 (not null) for `last_commented_at` of a shout nobody commented."""
    async with api.deps.db() as session:
        slug = await session.scalar(select(Shout.slug).where(is_listed(), ~Shout.id.in_(
            select(Reaction.shout).where(Reaction.kind.in_(COMMENT_KINDS), Reaction.deleted_at.is_(None))))
            .order_by(Shout.id).limit(1))
    assert slug is not None, "the test data has a published shout without comments"
    shout: Any = await api("query($s: String) { get_shout(slug: $s) { stat { last_commented_at } } }", {"s": slug})
    assert shout["stat"]["last_commented_at"] == 0


async def test_a_window_back_from_now_is_refused_when_negative_and_is_everyone_when_longer_than_time(
        api: Api) -> None:
    """Found by the fuzzer: a negative or huge N made a time out of PostgreSQL's integer range (a server
    error). A negative span is refused as bad input; one longer than the epoch is every author."""
    code = await api.error('{ load_authors_by(by: {created_at: -2147483647}) { id } }')
    assert code == "BAD_USER_INPUT"
    everyone = await api('{ load_authors_by(by: {last_seen: 2147483647}, limit: 5) { id } }')
    assert len(everyone) == 5
