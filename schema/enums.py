"""The contract's enums."""

from __future__ import annotations

from enum import Enum

import strawberry

from orm.reaction import ReactionKind as ReactionKind  # the contract's enum too

# The reaction kinds the database stores are the contract's: one class, which Strawberry marks as the
# GraphQL enum `ReactionKind` here (strawberry.enum sets its definition on the class and returns it).
strawberry.enum(ReactionKind)


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
