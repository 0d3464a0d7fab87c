"""The contract's enums."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum
class ReactionStatus(Enum):
    NEW = "NEW"
    UPDATED = "UPDATED"
    CHANGED = "CHANGED"
    EXPLAINED = "EXPLAINED"
    DELETED = "DELETED"


@strawberry.enum
class ReactionSort(Enum):
    newest = "newest"
    oldest = "oldest"
    like = "like"
    dislike = "dislike"


@strawberry.enum
class ShoutsOrderBy(Enum):
    last_commented_at = "last_commented_at"
    rating = "rating"
    comments_count = "comments_count"
    # An addition to the Discours contract: views as last flushed (the views leaderboard).
    views_count = "views_count"


@strawberry.enum
class ReactionKind(Enum):
    AGREE = "AGREE"
    DISAGREE = "DISAGREE"
    ASK = "ASK"
    PROPOSE = "PROPOSE"
    PROOF = "PROOF"
    DISPROOF = "DISPROOF"
    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    QUOTE = "QUOTE"
    COMMENT = "COMMENT"
    LIKE = "LIKE"
    DISLIKE = "DISLIKE"


@strawberry.enum
class FollowingEntity(Enum):
    TOPIC = "TOPIC"
    AUTHOR = "AUTHOR"
    SHOUT = "SHOUT"
    COMMUNITY = "COMMUNITY"


@strawberry.enum
class InviteStatus(Enum):
    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


@strawberry.enum
class AuthAction(Enum):
    LOGIN = "LOGIN"
    REGISTER = "REGISTER"
    CONFIRM_EMAIL = "CONFIRM_EMAIL"
    RESET_PASSWORD = "RESET_PASSWORD"
    CHANGE_PASSWORD = "CHANGE_PASSWORD"


@strawberry.enum
class RoleType(Enum):
    SYSTEM = "SYSTEM"
    COMMUNITY = "COMMUNITY"
    CUSTOM = "CUSTOM"
