"""A community's lists under seed 002's key families, each with its reader: the main feed (`shouts:feed`), a
community's feed
(`load_shouts_by` filtered by community: `community:shouts:{id}:limit=..:offset=..`), its members
(`load_authors_by` by community: `community:authors:{id}:...`) and its topics (`get_topics_by_community`:
`topics:stats:limit=..:offset=..:sort=title:community=..`); each equal to SQL, and moved by the writes that
change it."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis
from sqlalchemy import select

from cache import keys
from orm import CommunityAuthor, Shout, Topic
from orm.stats import is_listed
from resolvers.writes import transaction
from tests.helpers import Api

CREATE = "mutation($c: CommunityInput!) { create_community(community_input: $c) { error community { id } } }"
JOIN = "mutation($s: String!) { join_community(slug: $s) { error } }"
FEED = """query($c: Int, $f: Boolean) {
  load_shouts_by(options: {limit: 5, filters: {community: $c, featured: $f}}) { id }
}"""
MEMBERS = "query($c: Int) { load_authors_by(by: {community: $c}, limit: 50) { id } }"
TOPICS = "query($c: Int!) { get_topics_by_community(community_id: $c, limit: 10) { id } }"


async def _keys(redis: Redis, pattern: str) -> list[bytes]:
    return [key async for key in redis.scan_iter(match=pattern)]


async def test_a_communitys_feed_members_and_topics_are_kept_under_seed_002s_keys(api: Api, redis: Redis) -> None:
    founder, member = await api.user(), await api.user()
    slug = f"club-{uuid.uuid4().hex[:8]}"
    community = (await api(CREATE, {"c": {"slug": slug, "name": "Клуб"}}, founder))["community"]["id"]
    assert await api(FEED, {"c": community}) == []
    assert await _keys(redis, f"community:shouts:{community}:*") == [keys.community_shouts(community, 5, 0).encode()]

    shouts = [await api.published(founder) for _ in range(2)]
    async with transaction(api.deps) as session:
        for shout_id in shouts:
            shout = await session.get(Shout, shout_id)
            assert shout is not None
            shout.community = community
    feed = [s["id"] for s in await api(FEED, {"c": community})]
    assert feed == sorted(shouts, reverse=True)  # the move reached the kept page at its commit
    async with api.deps.db() as session:
        default = list((await session.scalars(select(Shout.id).where(is_listed(), Shout.community == 1)
                                              .order_by(Shout.published_at.desc(), Shout.id.desc()).limit(5))).all())
    assert [s["id"] for s in await api(FEED, {"c": 1})] == default
    assert await api(FEED, {}) and await redis.exists(keys.shouts_feed(5, 0))  # the main feed: `shouts:feed`
    assert sorted(s["id"] for s in await api(FEED, {"c": community, "f": False})) == sorted(shouts)
    assert len(await _keys(redis, f"community:shouts:{community}:*")) == 1  # another filter: `shouts:by`

    assert [a["id"] for a in await api(MEMBERS, {"c": community})] == [founder.id]
    assert (await api(JOIN, {"s": slug}, member))["error"] is None
    members = {a["id"] for a in await api(MEMBERS, {"c": community})}
    async with api.deps.db() as session:
        in_sql = set((await session.scalars(select(CommunityAuthor.author)
                                            .where(CommunityAuthor.community == community))).all())
    assert members == in_sql == {founder.id, member.id}  # the join moved the community's tag
    assert len(await _keys(redis, f"community:authors:{community}:*")) == 1

    assert await api(TOPICS, {"c": community}) == []
    async with transaction(api.deps) as session:
        topic = Topic(slug=f"t-{uuid.uuid4().hex[:8]}", title="Тема клуба", community=community)
        session.add(topic)
    assert [t["id"] for t in await api(TOPICS, {"c": community})] == [topic.id]
    assert await redis.exists(keys.topics_stats(10, 0, "title", community))
