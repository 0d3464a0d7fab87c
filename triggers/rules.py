"""For each model: which cached values a change of one row makes wrong (tags, invalidated at once
after the commit) and which entities' counters it moves (marks, revalidated in batches).

Rules run inside the flush, with its connection: they may read related rows (a shout's authors,
a comment's author) but never touch Redis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection

from cache import keys
from orm import (
    AuditEntry,
    Author,
    AuthorBookmark,
    AuthorFollower,
    AuthorRating,
    Collection,
    Community,
    CommunityAuthor,
    CommunityFollower,
    CommunityRole,
    CommunityRoleSettings,
    Draft,
    DraftAuthor,
    DraftTopic,
    Invite,
    Notification,
    NotificationMuted,
    NotificationRecipient,
    NotificationSeen,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutCollection,
    ShoutReactionsFollower,
    ShoutTopic,
    ShoutViews,
    ShoutViewsImported,
    ShoutViewsWeekly,
    Topic,
    TopicFollower,
)
from triggers.changes import Changes
from triggers.related import reaction_author, shout_authors, shout_topics

Rule = Callable[[Any, Connection, Changes], None]


def _values(target: Any, attribute: str) -> set[Any]:
    """Current and previous values of an attribute (the previous one from the flush's history)."""
    history = inspect(target).attrs[attribute].history
    found = {getattr(target, attribute)}
    found.update(history.deleted or ())
    return {v for v in found if v is not None}


def _slugs(changes: Changes, kind: str, target: Any, attribute: str = "slug") -> None:
    changes.tag(*(keys.tag_slug(kind, s) for s in _values(target, attribute)))


def author(a: Author, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_author(a.id), keys.tag_account(a.id), keys.TAG_AUTHORS)
    _slugs(c, "author", a)
    _slugs(c, "author_user", a, "user")


def topic(t: Topic, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_topic(t.id), keys.TAG_TOPICS)
    _slugs(c, "topic", t)


def community(cm: Community, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_community(cm.id), keys.TAG_COMMUNITIES)
    _slugs(c, "community", cm)


def community_follower(f: CommunityFollower, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_author_follows(f.follower), keys.tag_followers_of("community", f.community))
    c.mark("community", f.community)


def community_author(m: CommunityAuthor, _conn: Connection, c: Changes) -> None:
    # roles live in the account; `communities_by_author` lists are tagged with the author, and a community's
    # members (`load_authors_by` by community) with the community
    c.tag(keys.tag_account(m.author), keys.tag_author(m.author), keys.tag_community(m.community))
    c.mark("community", m.community)


def community_role(_r: CommunityRole, _conn: Connection, c: Changes) -> None:
    # a community's own role lives in the account of everyone who holds it (auth/accounts.py)
    c.tag(keys.tag_entities("account"))


def shout(s: Shout, conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_shout(s.id), keys.TAG_SHOUTS, keys.tag_shout_reactions(s.id))
    _slugs(c, "shout", s)
    if s.draft is not None:
        c.tag(keys.tag_draft(s.draft))
    authors = shout_authors(conn, s.id) or [s.created_by]
    c.mark("author", *authors)
    c.tag(*(keys.tag_drafts_of(a) for a in authors))
    c.mark("topic", *shout_topics(conn, s.id))


def shout_author(sa: ShoutAuthor, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_shout(sa.shout), keys.TAG_SHOUTS, keys.tag_drafts_of(sa.author))
    c.mark("author", sa.author)


def shout_topic(st: ShoutTopic, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_shout(st.shout), keys.TAG_SHOUTS)
    c.mark("topic", st.topic)


def shout_reactions_follower(f: ShoutReactionsFollower, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_author_follows(f.follower), keys.tag_followers_of("shout", f.shout))


def reaction(r: Reaction, conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_shout_reactions(r.shout), keys.TAG_REACTIONS, keys.tag_reactions_by(r.created_by))
    c.mark("shout", r.shout)
    c.mark("reaction", r.id)
    c.mark("author", r.created_by, *shout_authors(conn, r.shout))
    if r.reply_to is not None:
        c.mark("reaction", r.reply_to)
        c.mark("author", reaction_author(conn, r.reply_to))
    c.mark("topic", *shout_topics(conn, r.shout))


def author_follower(f: AuthorFollower, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_author_follows(f.follower), keys.tag_followers_of("author", f.author))
    c.mark("author", f.follower, f.author)


def topic_follower(f: TopicFollower, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_author_follows(f.follower), keys.tag_followers_of("topic", f.topic))
    c.mark("topic", f.topic)
    c.mark("author", f.follower)


def author_rating(r: AuthorRating, _conn: Connection, c: Changes) -> None:
    c.mark("author", r.author)


def author_bookmark(b: AuthorBookmark, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_bookmarks_of(b.author))


def draft(d: Draft, conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_draft(d.id), keys.tag_drafts_of(d.created_by))
    c.tag(*(keys.tag_drafts_of(a) for a in conn.scalars(select(DraftAuthor.author).where(DraftAuthor.draft == d.id))))


def draft_author(da: DraftAuthor, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_draft(da.draft), keys.tag_drafts_of(da.author))


def draft_topic(dt: DraftTopic, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_draft(dt.draft))


def invite(i: Invite, _conn: Connection, c: Changes) -> None:
    c.tag(keys.TAG_INVITES, keys.tag_shout(i.shout_id), keys.tag_drafts_of(i.author_id))


def collection(col: Collection, _conn: Connection, c: Changes) -> None:
    c.tag(keys.TAG_COLLECTIONS)
    _slugs(c, "collection", col)


def shout_collection(_sc: ShoutCollection, _conn: Connection, c: Changes) -> None:
    c.tag(keys.TAG_COLLECTIONS)


def notification(_n: Notification, _conn: Connection, c: Changes) -> None:
    c.tag(keys.TAG_NOTIFICATIONS)


def notification_seen(ns: NotificationSeen, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_notifications_of(ns.viewer))


def notification_muted(nm: NotificationMuted, _conn: Connection, c: Changes) -> None:
    c.tag(keys.tag_notifications_of(nm.viewer))


RULES: dict[type, Rule] = {
    Author: author, Topic: topic, Community: community, CommunityFollower: community_follower,
    CommunityAuthor: community_author, Shout: shout, ShoutAuthor: shout_author, ShoutTopic: shout_topic,
    ShoutReactionsFollower: shout_reactions_follower, Reaction: reaction, AuthorFollower: author_follower,
    TopicFollower: topic_follower, AuthorRating: author_rating, AuthorBookmark: author_bookmark, Draft: draft,
    DraftAuthor: draft_author, DraftTopic: draft_topic, Invite: invite, Collection: collection,
    ShoutCollection: shout_collection, Notification: notification, NotificationSeen: notification_seen,
    NotificationMuted: notification_muted, CommunityRole: community_role,
}

# Mapped models with no rule, and why: a new model gets a rule or a line here (tests/triggers/test_rules.py fails
# on a model that has neither).
EXEMPT: dict[type, str] = {
    CommunityRoleSettings: "read uncached: by administrators, and by the write that gives a new member its roles",
    AuditEntry: "the audit trail, written beside each administrative write and read uncached, by administrators only",
    ShoutViews: "written by the views flush (cache/live/views.py), a copy of the live `viewed:` counters, which "
                "every cached read takes its views from",
    ShoutViewsWeekly: "written by the same flush; the weekly leaderboards are live structures, rebuilt from it",
    ShoutViewsImported: "written by `discours adopt --views` beside shout_views, which it only explains",
    NotificationRecipient: "inserted with its Notification, whose rule invalidates every notification list",
}

# A bulk UPDATE or DELETE does not say which rows it touched: everything of the kind goes.
BULK: dict[type, tuple[str, ...]] = {
    Author: (keys.tag_entities("author"), keys.tag_entities("account"), keys.TAG_AUTHORS),
    Topic: (keys.tag_entities("topic"), keys.TAG_TOPICS),
    Community: (keys.tag_entities("community"), keys.TAG_COMMUNITIES),
    Shout: (keys.tag_entities("shout"), keys.TAG_SHOUTS, keys.tag_entities("reaction"), keys.tag_entities("draft")),
    ShoutAuthor: (keys.tag_entities("shout"), keys.TAG_SHOUTS, keys.tag_entities("draft")),
    ShoutTopic: (keys.tag_entities("shout"), keys.TAG_SHOUTS),
    Reaction: (keys.tag_entities("reaction"), keys.TAG_REACTIONS),
    AuthorFollower: (keys.tag_entities("follow"),),
    TopicFollower: (keys.tag_entities("follow"),),
    CommunityFollower: (keys.tag_entities("follow"),),
    ShoutReactionsFollower: (keys.tag_entities("follow"),),
    CommunityAuthor: (keys.tag_entities("account"), keys.TAG_COMMUNITIES),
    AuthorBookmark: (keys.tag_entities("bookmark"),),
    AuthorRating: (),
    Draft: (keys.tag_entities("draft"),),
    DraftAuthor: (keys.tag_entities("draft"),),
    DraftTopic: (keys.tag_entities("draft"),),
    Invite: (keys.TAG_INVITES,),
    Collection: (keys.TAG_COLLECTIONS,),
    ShoutCollection: (keys.TAG_COLLECTIONS,),
    Notification: (keys.TAG_NOTIFICATIONS,),
    NotificationSeen: (keys.TAG_NOTIFICATIONS,),
    NotificationMuted: (keys.TAG_NOTIFICATIONS,),
    CommunityRole: (keys.tag_entities("account"),),
}
# Counters of every entity of these kinds may have moved after a bulk change.
BULK_MARKS: dict[type, tuple[str, ...]] = {
    Reaction: ("shout", "author", "topic"), AuthorFollower: ("author",), TopicFollower: ("topic", "author"),
    AuthorRating: ("author",), Shout: ("author", "topic", "community"), ShoutAuthor: ("author",),
    ShoutTopic: ("topic",), CommunityFollower: ("community",), CommunityAuthor: ("community",),
}
