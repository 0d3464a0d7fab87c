"""SQLAlchemy models of the Discours tables. Importing this package registers every table on
`Base.metadata` (Alembic and the seeder rely on that)."""

from orm.audit import AuditEntry
from orm.author import Author, AuthorBookmark, AuthorFollower, AuthorRating
from orm.base import Base, now
from orm.collection import Collection, ShoutCollection
from orm.community import (
    COMMUNITY_ROLES,
    DEFAULT_COMMUNITY_ID,
    Community,
    CommunityAuthor,
    CommunityFollower,
    CommunityRole,
    CommunityRoleSettings,
)
from orm.draft import Draft, DraftAuthor, DraftTopic
from orm.invite import Invite, InviteStatus
from orm.notification import Notification, NotificationMuted, NotificationRecipient, NotificationSeen
from orm.reaction import COMMENT_KINDS, RATING_KINDS, Reaction, ReactionKind
from orm.shout import (
    Shout,
    ShoutAuthor,
    ShoutReactionsFollower,
    ShoutTopic,
    ShoutViews,
    ShoutViewsImported,
    ShoutViewsWeekly,
)
from orm.topic import Topic, TopicFollower

__all__ = [
    "COMMENT_KINDS",
    "COMMUNITY_ROLES",
    "DEFAULT_COMMUNITY_ID",
    "RATING_KINDS",
    "AuditEntry",
    "Author",
    "AuthorBookmark",
    "AuthorFollower",
    "AuthorRating",
    "Base",
    "Collection",
    "Community",
    "CommunityAuthor",
    "CommunityFollower",
    "CommunityRole",
    "CommunityRoleSettings",
    "Draft",
    "DraftAuthor",
    "DraftTopic",
    "Invite",
    "InviteStatus",
    "Notification",
    "NotificationMuted",
    "NotificationRecipient",
    "NotificationSeen",
    "Reaction",
    "ReactionKind",
    "Shout",
    "ShoutAuthor",
    "ShoutCollection",
    "ShoutReactionsFollower",
    "ShoutTopic",
    "ShoutViews",
    "ShoutViewsImported",
    "ShoutViewsWeekly",
    "Topic",
    "TopicFollower",
    "now",
]
