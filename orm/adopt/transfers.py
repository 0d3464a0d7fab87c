"""How each of our tables is filled from a Discours database's rows: one INSERT … SELECT per table, in an
order that satisfies the foreign keys, each with the rules it applies beyond copying (which the plan prints).

A column mapped to `s.<name>` is copied as it is (every value kept; the plan checks that it fits our column
and that what it refers to exists); anything else is an expression with a rule. Notifications are converted
in Python (notifications.py). `{L}` is the schema the Discours tables were moved to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orm.adopt.notifications import NOTIFICATION_RULES
from orm.reaction import ReactionKind

# Reaction kinds Discours retired in late 2023; rows of them are kept as comments (their text, quote, place
# in the thread and author unchanged): they were remarks and footnotes on a text, shown as comments since.
RETIRED_KINDS = {"REMARK": "COMMENT", "FOOTNOTE": "COMMENT"}
KNOWN_KINDS = frozenset(kind.value for kind in ReactionKind) | frozenset(RETIRED_KINDS)

# The community a topic or draft without one belongs to: Discours' own ('discours'), else the first.
MAIN_COMMUNITY = ("coalesce((SELECT id FROM {L}.community WHERE slug = 'discours'), "
                  "(SELECT min(id) FROM {L}.community))")


def generated_slug(prefix: str, table: str) -> str:
    """`s.slug` if it has one, else `{prefix}-{id}`, or `{prefix}-{id}-{6 hex}` if that is taken."""
    return (f"CASE WHEN nullif(trim(s.slug), '') IS NOT NULL THEN s.slug "
            f"WHEN NOT EXISTS (SELECT 1 FROM {{L}}.{table} t WHERE t.slug = '{prefix}-' || s.id) "
            f"THEN '{prefix}-' || s.id "
            f"ELSE '{prefix}-' || s.id || '-' || left(md5('{table}' || s.id), 6) END")


@dataclass(frozen=True)
class Absent:
    """What a transfer reads instead of a column some Discours versions lack, and the rule that makes, as
    the plan prints it."""

    sql: str
    says: str


@dataclass(frozen=True)
class Transfer:
    target: str  # our table
    source: str | None  # the Discours table read (None: ours alone; it starts empty)
    columns: dict[str, str] = field(default_factory=dict)  # our column -> SQL over the source row `s`
    rules: tuple[str, ...] = ()  # what is done beyond copying, as the plan says it
    from_sql: str | None = None  # FROM … instead of `{L}.{source} s` (merges)
    optional_columns: dict[str, Absent] = field(default_factory=dict)  # source columns some versions lack
    dropped_columns: dict[str, str] = field(default_factory=dict)  # source columns not carried over -> why
    optional_source: bool = False  # absent in a database Discours' start made (only a full create_all makes it)
    in_python: bool = False  # converted row by row (notifications.py), not by one INSERT … SELECT

    def copied(self) -> dict[str, str]:
        """Our columns copied as they are, with the Discours column each comes from."""
        return {target: m[1] for target, sql in self.columns.items() if (m := re.fullmatch(r's\."?(\w+)"?', sql))}

    def reads(self) -> set[str]:
        """The Discours columns this transfer reads."""
        found = set()
        for sql in self.columns.values():
            found |= set(re.findall(r"\bs\.\"?(\w+)\"?", sql))
        if self.from_sql:
            found |= set(re.findall(r"\bs\.\"?(\w+)\"?", self.from_sql))
        return found


def _plain(*names: str) -> dict[str, str]:
    return {name: f's."{name}"' if name in ("user", "desc") else f"s.{name}" for name in names}


TRANSFERS: tuple[Transfer, ...] = (
    Transfer("author", "author", {
        **_plain("id", "user", "name"), "slug": generated_slug("author", "author"),
        **_plain("bio", "about", "pic", "links"), "seo": "NULL",
        **_plain("created_at", "last_seen", "updated_at", "deleted_at"),
        "email": "NULL", "email_verified": "false", "password": "NULL", "oauth": "NULL"},
        rules=("a missing slug is made: author-{id}, or author-{id}-{hash} where that is taken",
               "no e-mail, password or OAuth link: people sign in as the sign-ins issue describes",
               "`user` (the Authorizer id) must be unique: duplicates block")),
    Transfer("community", "community", _plain("id", "name", "slug", "desc", "pic", "created_at", "created_by")),
    Transfer("topic", "topic", {
        "id": "s.id", "slug": generated_slug("topic", "topic"), "title": "coalesce(s.title, s.slug, 'topic-' || s.id)",
        **_plain("body", "pic"), "community": f"coalesce(s.community, {MAIN_COMMUNITY})",
        **_plain("oid", "parent_ids")},
        rules=("a missing slug is made: topic-{id}, or topic-{id}-{hash} where that is taken",
               "a topic without a community is put in the main one (slug 'discours', else the first)",
               "a topic without a title is titled by its slug")),
    Transfer("draft", "draft", {
        **_plain("id", "created_at", "created_by"), "community": f"coalesce(s.community, {MAIN_COMMUNITY})",
        **_plain("layout", "slug", "title", "subtitle", "lead", "description", "body", "media", "cover",
                 "cover_caption", "lang", "seo", "updated_at", "deleted_at", "updated_by", "deleted_by"),
        "publish_at": "NULL"},
        rules=("a draft without a community is put in the main one",
               "`description` is kept (our drafts gained the column for it)"),
        optional_columns={"description": Absent("NULL", "no draft has a description"),
                          "community": Absent("NULL", "every draft is put in the main community")}),
    Transfer("shout", "shout", {
        **_plain("id", "created_at", "updated_at", "published_at", "featured_at", "deleted_at", "created_by",
                 "updated_by", "deleted_by", "community", "body"), "slug": generated_slug("shout", "shout"),
        **_plain("cover", "cover_caption", "lead", "description", "title", "subtitle", "layout", "media", "lang",
                 "version_of", "oid", "seo", "draft")},
        rules=("a missing slug is made: shout-{id}, or shout-{id}-{hash} where that is taken",),
        optional_columns={"draft": Absent("NULL", "no shout names its draft"),
                          "seo": Absent("NULL", "no shout has an SEO text"),
                          "oid": Absent("NULL", "no shout keeps an id of the old site")}),
    Transfer("community_author", "community_author", {
        "community": "s.community", "author": "s.author", "joined_at": "s.joined_at", "roles": "s.roles"},
        from_sql=("(SELECT m.community, m.author, m.joined_at, CASE WHEN m.rows = 1 THEN "
                  "coalesce(nullif(m.first_roles, ''), 'reader') ELSE coalesce((SELECT string_agg(DISTINCT "
                  "trim(r), ',' ORDER BY trim(r)) FROM {L}.community_author x, unnest(string_to_array(x.roles, ',')) r "
                  "WHERE x.community = m.community AND x.author = m.author AND trim(r) <> ''), 'reader') END AS roles "
                  "FROM (SELECT community, author, min(joined_at) AS joined_at, count(*) AS rows, "
                  "min(roles) AS first_roles FROM {L}.community_author GROUP BY community, author) m) s"),
        rules=("one member per (community, author): duplicate rows merged, joined at the earliest, roles unioned",
               "a member without roles is a reader"),
        dropped_columns={"id": "a second mapping's key, not a fact", "community_id": "repeats `community`",
                         "author_id": "repeats `author`"}),
    Transfer("community_follower", "community_author", {
        "follower": "s.author", "community": "s.community", "created_at": "s.joined_at"},
        from_sql=("(SELECT author, community, min(joined_at) AS joined_at FROM {L}.community_author "
                  "GROUP BY author, community) s"),
        rules=("every member also follows the community (in Discours the same rows are both)",)),
    Transfer("topic_followers", "topic_followers", _plain("follower", "topic", "created_at", "auto")),
    Transfer("author_follower", "author_follower", _plain("follower", "author", "created_at", "auto")),
    Transfer("author_rating", "author_rating", {"rater": "s.rater", "author": "s.author",
                                                "plus": "coalesce(s.plus, false)"},
             rules=("a rating without a sign counts as a minus, as Discours counts it (`plus` false)",)),
    Transfer("shout_author", "shout_author", _plain("shout", "author", "caption")),
    Transfer("shout_topic", "shout_topic", {"shout": "s.shout", "topic": "s.topic",
                                            "main": "coalesce(s.main, false)"},
             rules=("`main` left unset is false",)),
    Transfer("shout_reactions_followers", "shout_reactions_followers",
             _plain("follower", "shout", "auto", "created_at", "deleted_at")),
    Transfer("draft_author", "draft_author", {"draft": "s.shout", "author": "s.author", "caption": "s.caption"},
             rules=("`shout` is named `draft` here",)),
    Transfer("draft_topic", "draft_topic", {"draft": "s.shout", "topic": "s.topic", "main": "coalesce(s.main, false)"},
             rules=("`shout` is named `draft` here; `main` left unset is false",)),
    Transfer("reaction", "reaction", {
        **_plain("id", "body", "created_at", "updated_at", "deleted_at", "deleted_by", "reply_to", "quote", "shout",
                 "created_by"),
        "kind": "CASE s.kind " + " ".join(f"WHEN '{old}' THEN '{new}'" for old, new in RETIRED_KINDS.items())
                + " ELSE s.kind END", "oid": "s.oid"},
        rules=("the retired kinds REMARK and FOOTNOTE become COMMENT (their text, quote and thread kept)",
               "any other kind our server does not know blocks"),
        optional_columns={"oid": Absent("NULL", "no reaction keeps an id of the old site")}),
    Transfer("notification", "notification", {
        **_plain("id", "updated_at", "entity", "action", "payload"),
        "created_at": "coalesce(s.created_at, s.updated_at, extract(epoch from now())::integer)",
        "status": "coalesce(s.status, 'unread')", "kind": "coalesce(s.kind, 'general')"},
        rules=NOTIFICATION_RULES, in_python=True,
        # Discours' models (Feb 2025 and the schema of Aug 2025) have none of the three; read where present
        optional_columns={"updated_at": Absent("NULL", "no notification was updated"),
                          "status": Absent("NULL", "every notification is unread"),
                          "kind": Absent("NULL", "every notification is of kind `general`, as ours")}),
    Transfer("notification_seen", "notification_seen", {"viewer": "s.viewer", "notification": "s.notification"},
             from_sql="(SELECT DISTINCT viewer, notification FROM {L}.notification_seen) s",
             rules=("one row per (viewer, notification): duplicates merged",),
             dropped_columns={"id": "a key column without a default, not a fact"}),
    Transfer("invite", "invite", {"id": "s.id", "inviter_id": "s.inviter_id", "author_id": "s.author_id",
                                  "shout_id": "s.shout_id", "status": "s.status"},
             from_sql=("(SELECT CASE WHEN h.shared = 1 THEN h.id ELSE (SELECT coalesce(max(id), 0) FROM {L}.invite) "
                       "+ row_number() OVER (ORDER BY h.id, h.inviter_id, h.author_id, h.shout_id) END AS id, "
                       "h.inviter_id, h.author_id, h.shout_id, h.status FROM (SELECT g.*, count(*) OVER "
                       "(PARTITION BY g.id) AS shared FROM (SELECT min(id) AS id, inviter_id, author_id, shout_id, "
                       "coalesce((array_agg(status ORDER BY id DESC) FILTER (WHERE status IS NOT NULL))[1], "
                       "'PENDING') AS status FROM {L}.invite GROUP BY inviter_id, author_id, shout_id) g) h) s"),
             rules=("one invite per (inviter, author, shout): duplicates merged, the latest status kept",
                    "an invite without a status is pending",
                    "ids kept; an id two invites share is given a new one"),
             optional_source=True),
    Transfer("collection", "collection", {
        **_plain("id", "slug", "title", "body", "pic"),
        "created_at": "coalesce(s.created_at, s.published_at, extract(epoch from now())::integer)",
        "created_by": ("coalesce(s.created_by, (SELECT created_by FROM {L}.community WHERE id = "
                       f"{MAIN_COMMUNITY}), (SELECT min(id) FROM {{L}}.author))"),
        "published_at": "s.published_at"},
        rules=("a collection without a creation time gets its publication time, else the adoption's",
               "a collection without a creator gets the main community's"),
        optional_source=True),
    Transfer("shout_collection", "shout_collection", _plain("shout", "collection"), optional_source=True,
             dropped_columns={"id": "a key column without a default, not a fact"}),
    Transfer("author_bookmark", "author_bookmark", {
        "author": "s.author", "shout": "s.shout", "created_at": "extract(epoch from now())::integer"},
        rules=("Discours keeps no bookmark time: bookmarks are dated at the adoption",),
        optional_source=True),
    Transfer("shout_views", None, rules=("views come from `--views` / `--views-redis`",)),
    Transfer("shout_views_weekly", None),
    Transfer("notification_muted", None),
)

# Our tables with an id sequence: set past the highest id copied.
SEQUENCED = ("author", "community", "topic", "draft", "shout", "reaction", "notification", "invite", "collection")
