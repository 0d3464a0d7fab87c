"""What the read side returns: filters, orders and stats are real, checked against SQL on the same data."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from orm import Author, AuthorFollower, Reaction, Shout, ShoutAuthor, ShoutTopic, Topic
from orm.reaction import COMMENT_KINDS
from orm.stats import is_listed, vote_value

LIST = """query($options: LoadShoutsOptions) { load_shouts_by(options: $options) {
  id published_at featured_at layout stat { rating comments_count last_commented_at }
  topics { slug } authors { slug } } }"""


async def test_default_order_is_newest_published(gql: Any) -> None:
    shouts = (await gql(LIST, {"options": {"limit": 30}}))["data"]["load_shouts_by"]
    published = [s["published_at"] for s in shouts]
    assert published == sorted(published, reverse=True)


async def test_orders_by_stats(gql: Any) -> None:
    for order in ("rating", "comments_count"):
        shouts = (await gql(LIST, {"options": {"limit": 20, "order_by": order}}))["data"]["load_shouts_by"]
        values = [s["stat"][order] for s in shouts]
        assert values == sorted(values, reverse=True)
        ascending = (await gql(LIST, {"options": {"limit": 20, "order_by": order, "order_by_desc": False}}))
        values = [s["stat"][order] for s in ascending["data"]["load_shouts_by"]]
        assert values == sorted(values)


async def test_filters(gql: Any, engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        topic = await conn.scalar(select(Topic.slug).order_by(Topic.id).limit(1))
        expected_in_topic = await conn.scalar(
            select(func.count()).select_from(Shout).join(ShoutTopic, ShoutTopic.shout == Shout.id)
            .join(Topic, Topic.id == ShoutTopic.topic).where(Topic.slug == topic, is_listed()))
        author = await conn.scalar(  # an author with published shouts
            select(Author.slug).join(ShoutAuthor, ShoutAuthor.author == Author.id)
            .join(Shout, Shout.id == ShoutAuthor.shout).where(is_listed())
            .group_by(Author.slug).order_by(func.count().desc()).limit(1))
    shouts = (await gql(LIST, {"options": {"limit": 100, "filters": {"topic": topic}}}))["data"]["load_shouts_by"]
    assert len(shouts) == min(100, expected_in_topic)
    assert all(topic in [t["slug"] for t in s["topics"]] for s in shouts)

    featured = (await gql(LIST, {"options": {"limit": 50, "filters": {"featured": True}}}))["data"]["load_shouts_by"]
    assert featured and all(s["featured_at"] for s in featured)
    music = (await gql(LIST, {"options": {"limit": 50, "filters": {"layouts": ["music"]}}}))["data"]["load_shouts_by"]
    assert music and all(s["layout"] == "music" for s in music)
    by_author = (await gql(LIST, {"options": {"limit": 50, "filters": {"author": author}}}))["data"]["load_shouts_by"]
    assert by_author and all(author in [a["slug"] for a in s["authors"]] for s in by_author)


async def test_stats_are_real_counts(gql: Any, engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        author = await conn.scalar(select(AuthorFollower.author).group_by(AuthorFollower.author)
                                   .order_by(func.count().desc()).limit(1))
        followers = await conn.scalar(select(func.count()).where(AuthorFollower.author == author))
        shouts = await conn.scalar(select(func.count(func.distinct(ShoutAuthor.shout)))
                                   .join(Shout, Shout.id == ShoutAuthor.shout)
                                   .where(ShoutAuthor.author == author, is_listed()))
        comments = await conn.scalar(select(func.count()).where(
            Reaction.created_by == author, Reaction.kind.in_(COMMENT_KINDS), Reaction.deleted_at.is_(None)))
    result = await gql("query($id: Int) { get_author(author_id: $id) { stat { followers shouts comments } } }",
                       {"id": author})
    assert result["data"]["get_author"]["stat"] == {"followers": followers, "shouts": shouts, "comments": comments}


async def test_reaction_stats_are_real_counts(gql: Any, engine: AsyncEngine) -> None:
    """A page of reactions carries each one's rating (its live votes) and direct reply count, read in the
    same statement as the page: checked against a count of the replies in SQL."""
    async with engine.connect() as conn:
        shout = await conn.scalar(select(Shout.slug).join(Reaction, Reaction.shout == Shout.id)
                                  .where(is_listed(), Reaction.reply_to.is_not(None), Reaction.deleted_at.is_(None))
                                  .group_by(Shout.slug).order_by(func.count().desc()).limit(1))
    page = (await gql('query($s: String) { load_reactions_by(by: {shout: $s}, limit: 100) { id stat { rating '
                      'comments_count } } }', {"s": shout}))["data"]["load_reactions_by"]
    async with engine.connect() as conn:
        live = Reaction.deleted_at.is_(None)
        replies = dict((await conn.execute(select(Reaction.reply_to, func.count()).where(
            Reaction.reply_to.in_([r["id"] for r in page]), Reaction.kind.in_(COMMENT_KINDS), live)
            .group_by(Reaction.reply_to))).all())
        ratings = dict((await conn.execute(select(Reaction.reply_to, func.sum(vote_value())).where(
            Reaction.reply_to.in_([r["id"] for r in page]), live).group_by(Reaction.reply_to))).all())
    assert any(r["stat"]["comments_count"] for r in page), "the seeded shout has no answered reaction"
    assert [(r["id"], r["stat"]) for r in page] == [
        (r["id"], {"rating": int(ratings.get(r["id"]) or 0), "comments_count": replies.get(r["id"], 0)}) for r in page]


async def test_unpublished_and_deleted_shouts_are_not_public(gql: Any, engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        hidden = (await conn.scalars(select(Shout.slug).where(~is_listed()).limit(5))).all()
    assert hidden
    for slug in hidden:
        result = await gql("query($s: String) { get_shout(slug: $s) { id } }", {"s": slug})
        assert result["data"]["get_shout"] is None


async def test_random_top_samples_from_the_top(gql: Any) -> None:
    query = "query($o: LoadShoutsOptions) { load_shouts_random_top(options: $o) { id stat { rating } } }"
    top = (await gql(LIST, {"options": {"limit": 10, "order_by": "rating"}}))["data"]["load_shouts_by"]
    sample = (await gql(query, {"o": {"limit": 4, "random_limit": 10}}))["data"]["load_shouts_random_top"]
    assert len(sample) == 4
    assert {s["id"] for s in sample} <= {s["id"] for s in top}


async def test_every_reaction_filter_selects_what_sql_selects(gql: Any, engine: AsyncEngine) -> None:
    """Each filter of `load_reactions_by`, alone and together (its statement is put together once per set of
    filters, their values bound per request: resolvers/reaction_reads.py `_list_statement`), against the same
    selection written here in SQL, newest first."""
    live = select(Reaction.id).join(Shout, Shout.id == Reaction.shout).where(Reaction.deleted_at.is_(None),
                                                                               is_listed())
    async with engine.connect() as conn:
        reply = (await conn.execute(live.add_columns(Reaction.shout, Reaction.reply_to, Reaction.created_by,
                                                     Reaction.created_at)
                                    .where(Reaction.reply_to.is_not(None)).order_by(Reaction.id).limit(1))).one()
        shout_slugs = (await conn.scalars(select(Shout.slug).where(Shout.id == reply.shout))).all()
        other_slug = await conn.scalar(select(Shout.slug).join(Reaction, Reaction.shout == Shout.id)
                                       .where(is_listed(), Shout.id != reply.shout).order_by(Shout.id).limit(1))
        topic = await conn.scalar(select(Topic.slug).join(ShoutTopic, ShoutTopic.topic == Topic.id)
                                  .where(ShoutTopic.shout == reply.shout).limit(1))
        author_slug = await conn.scalar(select(Author.slug).where(Author.id == reply.created_by))
        in_topic = Reaction.shout.in_(select(ShoutTopic.shout).join(Topic, Topic.id == ShoutTopic.topic)
                                      .where(Topic.slug == topic))
        cases = [
            ({"shout": shout_slugs[0]}, Reaction.shout == reply.shout),
            ({"shouts": [shout_slugs[0], other_slug]}, Shout.slug.in_([shout_slugs[0], other_slug])),
            ({"kinds": ["LIKE", "DISLIKE"]}, Reaction.kind.in_(["LIKE", "DISLIKE"])),
            ({"reply_to": reply.reply_to}, Reaction.reply_to == reply.reply_to),
            ({"topic": topic}, in_topic),
            ({"created_by": reply.created_by}, Reaction.created_by == reply.created_by),
            ({"author": author_slug}, Reaction.created_by == reply.created_by),
            ({"after": reply.created_at}, Reaction.created_at >= reply.created_at),
            ({"topic": topic, "kinds": ["COMMENT"], "after": reply.created_at - 86_400 * 30},
             in_topic & (Reaction.kind == "COMMENT") & (Reaction.created_at >= reply.created_at - 86_400 * 30)),
            # an empty slug or list filters nothing (what the fuzzer sends: `shout: ""` once failed the bind)
            ({"shout": "", "shouts": [], "kinds": [], "topic": "", "author": ""}, Reaction.id.is_not(None)),
            ({"reply_to": 0, "created_by": 0}, (Reaction.reply_to == 0) & (Reaction.created_by == 0)),
        ]
        expected = [list((await conn.scalars(live.where(condition).order_by(Reaction.created_at.desc(),
                                                                             Reaction.id.desc()).limit(50))).all())
                    for _, condition in cases]
    assert all(expected[:-1]), "a filter selects nothing on the seeded data: the comparison would say little"
    for (by, _), ids in zip(cases, expected, strict=True):
        page = await gql("query($by: ReactionBy!) { load_reactions_by(by: $by, limit: 50) { id } }", {"by": by})
        assert [r["id"] for r in page["data"]["load_reactions_by"]] == ids, by


async def test_reactions_ordered_by_votes_follow_the_sum_of_their_live_votes(gql: Any, engine: AsyncEngine) -> None:
    """`sort: like` and `dislike`: by the sum of the live votes replying to each reaction (a like +1, a
    dislike -1), ties by id, the reverse for dislike; computed here in Python from plain rows. Lists narrowed to
    a person's or a comment's reactions sum their own votes only (resolvers/reaction_reads.py `_sorted`), the
    others the whole table's: both are compared."""
    live = (select(Reaction.id, Reaction.shout, Reaction.reply_to, Reaction.created_by, Reaction.kind)
            .join(Shout, Shout.id == Reaction.shout).where(Reaction.deleted_at.is_(None), is_listed()))
    async with engine.connect() as conn:
        rows = (await conn.execute(live)).all()
        scores = dict((await conn.execute(
            select(Reaction.reply_to, func.sum(vote_value())).where(
                Reaction.deleted_at.is_(None), Reaction.kind.in_(["LIKE", "DISLIKE"]), Reaction.reply_to.is_not(None))
            .group_by(Reaction.reply_to))).all())
        voted = max(rows, key=lambda r: (abs(scores.get(r.id, 0)), r.id))  # the reaction with the most net votes
        author_slug = await conn.scalar(select(Author.slug).where(Author.id == voted.created_by))
        shout_slug = await conn.scalar(select(Shout.slug).where(Shout.id == voted.shout))
        parent = next(r.reply_to for r in rows if r.reply_to is not None and scores.get(r.id, 0) != 0)
    cases = [({"created_by": voted.created_by}, lambda r: r.created_by == voted.created_by),
             ({"author": author_slug}, lambda r: r.created_by == voted.created_by),
             ({"reply_to": parent}, lambda r: r.reply_to == parent),
             ({"created_by": voted.created_by, "kinds": ["COMMENT"]},
              lambda r: r.created_by == voted.created_by and r.kind == "COMMENT"),
             ({"shout": shout_slug}, lambda r: r.shout == voted.shout),
             ({"kinds": ["COMMENT", "LIKE"]}, lambda r: r.kind in ("COMMENT", "LIKE")),
             ({}, lambda r: True)]
    for by, selected in cases:
        mine = [r for r in rows if selected(r)]
        assert any(scores.get(r.id, 0) for r in mine), f"no votes on the reactions of {by}: the order says little"
        for sort in ("like", "dislike"):
            expected = sorted(mine, key=lambda r: (scores.get(r.id, 0), r.id), reverse=sort == "like")[:50]
            page = await gql("query($by: ReactionBy!) { load_reactions_by(by: $by, limit: 50) { id } }",
                             {"by": {**by, "sort": sort}})
            assert [r["id"] for r in page["data"]["load_reactions_by"]] == [r.id for r in expected], (by, sort)
