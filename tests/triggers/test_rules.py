"""What each model's change makes wrong (triggers/rules.py), written out: for one row of each kind, the
tags a commit invalidates and the entities whose counters it marks; and what a bulk statement on each kind
invalidates. The behaviour these stand for is tested end to end elsewhere (tests/test_invalidation*.py,
tests/triggers/test_related.py); here every rule is pinned, so that a change to one is a deliberate change of this
table (the mutation pass found rules no test held: follows, ratings, invites, topics, communities)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from cache import keys
from orm import (
    Author,
    AuthorBookmark,
    AuthorFollower,
    AuthorRating,
    Collection,
    Community,
    CommunityAuthor,
    CommunityFollower,
    DraftAuthor,
    DraftTopic,
    Invite,
    Notification,
    NotificationMuted,
    NotificationSeen,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutCollection,
    ShoutReactionsFollower,
    ShoutTopic,
    Topic,
    TopicFollower,
)
from triggers import rules
from triggers.changes import Changes

# (row, tags, marks) for rules that read nothing else
PINNED: list[tuple[Any, set[str], set[tuple[str, str]]]] = [
    (Author(id=5, slug="ann", user="u-5"), {keys.tag_author(5), keys.tag_account(5), keys.TAG_AUTHORS, keys.tag_slug("author", "ann"),
                                          keys.tag_slug("author_user", "u-5")}, set()),
    (Topic(id=6, slug="art"), {keys.tag_topic(6), keys.TAG_TOPICS, keys.tag_slug("topic", "art")}, set()),
    (Community(id=7, slug="main"), {keys.tag_community(7), keys.TAG_COMMUNITIES, keys.tag_slug("community", "main")},
     set()),
    (CommunityFollower(community=7, follower=5),
     {keys.tag_author_follows(5), keys.tag_followers_of("community", 7)}, {("community", "7")}),
    (CommunityAuthor(community=7, author=5), {keys.tag_account(5), keys.tag_author(5), keys.tag_community(7)}, {("community", "7")}),
    (ShoutAuthor(shout=8, author=5), {keys.tag_shout(8), keys.TAG_SHOUTS, keys.tag_drafts_of(5)}, {("author", "5")}),
    (ShoutTopic(shout=8, topic=6), {keys.tag_shout(8), keys.TAG_SHOUTS}, {("topic", "6")}),
    (ShoutReactionsFollower(shout=8, follower=5), {keys.tag_author_follows(5), keys.tag_followers_of("shout", 8)},
     set()),
    (AuthorFollower(author=9, follower=5), {keys.tag_author_follows(5), keys.tag_followers_of("author", 9)},
     {("author", "5"), ("author", "9")}),
    (TopicFollower(topic=6, follower=5), {keys.tag_author_follows(5), keys.tag_followers_of("topic", 6)},
     {("topic", "6"), ("author", "5")}),
    (AuthorRating(rater=5, author=9, plus=True), set(), {("author", "9")}),
    (AuthorBookmark(author=5, shout=8), {keys.tag_bookmarks_of(5)}, set()),
    (DraftAuthor(draft=3, author=5), {keys.tag_draft(3), keys.tag_drafts_of(5)}, set()),
    (DraftTopic(draft=3, topic=6), {keys.tag_draft(3)}, set()),
    (Invite(inviter_id=9, author_id=5, shout_id=8), {keys.TAG_INVITES, keys.tag_shout(8), keys.tag_drafts_of(5)},
     set()),
    (Collection(id=2, slug="best"), {keys.TAG_COLLECTIONS, keys.tag_slug("collection", "best")}, set()),
    (ShoutCollection(shout=8, collection=2), {keys.TAG_COLLECTIONS}, set()),
    (Notification(id=1), {keys.TAG_NOTIFICATIONS}, set()),
    (NotificationSeen(viewer=5, notification=1), {keys.tag_notifications_of(5)}, set()),
    (NotificationMuted(viewer=5, thread="shout:8"), {keys.tag_notifications_of(5)}, set()),
]


@pytest.mark.parametrize("row, tags, marks", PINNED, ids=[type(p[0]).__name__ for p in PINNED])
def test_a_row_of_each_kind_invalidates_its_tags_and_marks_its_counters(row: Any, tags: set[str],
                                                                        marks: set[tuple[str, str]]) -> None:
    changes = Changes()
    rules.RULES[type(row)](row, None, changes)  # type: ignore[arg-type]  # these rules read nothing
    assert (changes.tags, changes.marks) == (tags, marks)


def test_a_changed_slug_invalidates_the_old_one_and_the_new_one() -> None:
    from sqlalchemy.orm.attributes import set_committed_value

    topic = Topic(id=6, title="Art")
    set_committed_value(topic, "slug", "art")  # as loaded
    topic.slug = "arts"
    changes = Changes()
    rules.topic(topic, None, changes)  # type: ignore[arg-type]
    assert changes.tags == {keys.tag_topic(6), keys.TAG_TOPICS, keys.tag_slug("topic", "art"),
                            keys.tag_slug("topic", "arts")}


async def test_the_rules_that_read_related_rows(engine: AsyncEngine) -> None:
    """A shout marks its authors and topics; a reply marks the replied comment's author; a draft tags its
    co-authors' draft lists (read with the flush's connection)."""
    from sqlalchemy.engine import Connection

    from orm import Draft

    async with engine.connect() as conn:
        shout_id, creator = (await conn.execute(select(Shout.id, Shout.created_by).order_by(Shout.id).limit(1))).one()
        authors = set((await conn.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == shout_id))).all())
        topics = set((await conn.scalars(select(ShoutTopic.topic).where(ShoutTopic.shout == shout_id))).all())
        comment, commenter = (await conn.execute(select(Reaction.id, Reaction.created_by)
                                                 .where(Reaction.shout == shout_id, Reaction.kind == "COMMENT")
                                                 .limit(1))).one()
        draft_id = await conn.scalar(select(DraftAuthor.draft).limit(1))
        co_authors = set((await conn.scalars(select(DraftAuthor.author).where(DraftAuthor.draft == draft_id))).all())

        def apply(sync: Connection) -> list[Changes]:
            found = []
            for rule, row in [
                # its authors are read (whoever created it); a shout with no author rows yet: its creator
                (rules.shout, Shout(id=shout_id, slug="s", created_by=9_998, draft=4)),
                (rules.shout, Shout(id=999_002, slug="new", created_by=creator)),
                (rules.reaction, Reaction(id=999_001, shout=shout_id, created_by=9_999, reply_to=comment,
                                          kind="COMMENT")),
                (rules.draft, Draft(id=draft_id, created_by=1)),
            ]:
                changes = Changes()
                rule(row, sync, changes)
                found.append(changes)
            return found

        shout, new_shout, reply, draft = await conn.run_sync(apply)
    assert shout.tags == {keys.tag_shout(shout_id), keys.TAG_SHOUTS, keys.tag_shout_reactions(shout_id),
                          keys.tag_slug("shout", "s"), keys.tag_draft(4),
                          *(keys.tag_drafts_of(a) for a in authors)}
    assert shout.marks == {("author", str(a)) for a in authors} | {("topic", str(t)) for t in topics}
    assert 9_998 not in authors and authors
    assert new_shout.marks == {("author", str(creator))} and keys.tag_drafts_of(creator) in new_shout.tags
    assert reply.tags == {keys.tag_shout_reactions(shout_id), keys.TAG_REACTIONS, keys.tag_reactions_by(9_999)}
    assert reply.marks == ({("shout", str(shout_id)), ("reaction", "999001"), ("reaction", str(comment)),
                            ("author", "9999"), ("author", str(commenter))}
                           | {("author", str(a)) for a in authors} | {("topic", str(t)) for t in topics})
    assert draft.tags == {keys.tag_draft(draft_id), keys.tag_drafts_of(1), *(keys.tag_drafts_of(a) for a in co_authors)}


def test_every_mapped_model_has_a_rule_or_says_why_it_needs_none() -> None:
    from orm import Base

    mapped = {mapper.class_ for mapper in Base.registry.mappers}
    assert not set(rules.RULES) & set(rules.EXEMPT)
    assert mapped == set(rules.RULES) | set(rules.EXEMPT), sorted(
        model.__name__ for model in mapped ^ (set(rules.RULES) | set(rules.EXEMPT)))


def test_every_model_with_a_rule_has_a_bulk_rule_and_the_bulk_rules_are_these() -> None:
    assert set(rules.RULES) == set(rules.BULK)
    assert {model.__name__: set(tags) for model, tags in rules.BULK.items()} == {
        "Author": {keys.tag_entities("author"), keys.tag_entities("account"), keys.TAG_AUTHORS},
        "Topic": {keys.tag_entities("topic"), keys.TAG_TOPICS},
        "Community": {keys.tag_entities("community"), keys.TAG_COMMUNITIES},
        "Shout": {keys.tag_entities("shout"), keys.TAG_SHOUTS, keys.tag_entities("reaction"),
                  keys.tag_entities("draft")},
        "ShoutAuthor": {keys.tag_entities("shout"), keys.TAG_SHOUTS, keys.tag_entities("draft")},
        "ShoutTopic": {keys.tag_entities("shout"), keys.TAG_SHOUTS},
        "Reaction": {keys.tag_entities("reaction"), keys.TAG_REACTIONS},
        "AuthorFollower": {keys.tag_entities("follow")}, "TopicFollower": {keys.tag_entities("follow")},
        "CommunityFollower": {keys.tag_entities("follow")}, "ShoutReactionsFollower": {keys.tag_entities("follow")},
        "CommunityAuthor": {keys.tag_entities("account"), keys.TAG_COMMUNITIES},
        "AuthorBookmark": {keys.tag_entities("bookmark")}, "AuthorRating": set(),
        "Draft": {keys.tag_entities("draft")}, "DraftAuthor": {keys.tag_entities("draft")},
        "DraftTopic": {keys.tag_entities("draft")}, "Invite": {keys.TAG_INVITES},
        "Collection": {keys.TAG_COLLECTIONS}, "ShoutCollection": {keys.TAG_COLLECTIONS},
        "Notification": {keys.TAG_NOTIFICATIONS}, "NotificationSeen": {keys.TAG_NOTIFICATIONS},
        "NotificationMuted": {keys.TAG_NOTIFICATIONS}, "CommunityRole": {keys.tag_entities("account")},
    }
    assert {model.__name__: set(kinds) for model, kinds in rules.BULK_MARKS.items()} == {
        "Reaction": {"shout", "author", "topic"}, "AuthorFollower": {"author"}, "TopicFollower": {"topic", "author"},
        "AuthorRating": {"author"}, "Shout": {"author", "topic", "community"}, "ShoutAuthor": {"author"},
        "ShoutTopic": {"topic"}, "CommunityFollower": {"community"}, "CommunityAuthor": {"community"},
    }


@pytest.mark.parametrize("part", ["tags", "marks", "live", "messages"])
def test_a_flush_with_anything_in_its_changes_is_carried_out(part: str) -> None:
    """The listeners hand a commit's changes to the sink only when there are some (`bool(changes)`):
    each part alone counts (a write that only moves live structures, or only publishes, is not dropped)."""
    from cache.live.structures import LiveOps

    changes = Changes()
    assert not changes
    if part == "tags":
        changes.tag(keys.TAG_SHOUTS)
    elif part == "marks":
        changes.mark("author", 1)
    elif part == "live":
        changes.live = LiveOps()
        changes.live.drop("topic", 5)
    else:
        changes.messages.append(("channel", b"message"))
    assert changes
