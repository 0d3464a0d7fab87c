"""Communities, their followers and their members with per-community roles."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now

# Roles of a community member, weakest first (the auth issue attaches permissions to them).
COMMUNITY_ROLES = ("reader", "author", "artist", "expert", "editor", "admin")
DEFAULT_COMMUNITY_ID = 1


# The platform's community: every new account joins it, a draft starts in it (migration 0012 creates it).
DEFAULT_COMMUNITY = 1


class Community(Base):
    __tablename__ = "community"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    slug: Mapped[str] = mapped_column(String(255), unique=True)
    desc: Mapped[str | None] = mapped_column(Text)
    pic: Mapped[str] = mapped_column(String(1024), default="")
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("author.id", ondelete="SET NULL"))


class CommunityFollower(Base):
    __tablename__ = "community_follower"

    follower: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    community: Mapped[int] = mapped_column(ForeignKey("community.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)

    __table_args__ = (Index("ix_community_follower_community", "community"),)


def role_list(roles: str | None) -> list[str]:
    """A membership's roles (`CommunityAuthor.roles`, comma-separated) as a list, in their order."""
    return [role for role in (roles or "").split(",") if role]


class CommunityAuthor(Base):
    """Membership: an author in a community with a comma-separated list of roles."""

    __tablename__ = "community_author"

    community: Mapped[int] = mapped_column(ForeignKey("community.id", ondelete="CASCADE"), primary_key=True)
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    joined_at: Mapped[int] = mapped_column(Integer, default=now)
    roles: Mapped[str] = mapped_column(String(255), default="reader")

    __table_args__ = (Index("ix_community_author_author", "author"),)


class CommunityRoleSettings(Base):
    """A community's role settings: the roles a new member is given, and the roles it offers. No row: the
    defaults of auth/permissions.py."""

    __tablename__ = "community_role_settings"

    community: Mapped[int] = mapped_column(ForeignKey("community.id", ondelete="CASCADE"), primary_key=True)
    default_roles: Mapped[list[Any]] = mapped_column()
    available_roles: Mapped[list[Any]] = mapped_column()


class CommunityRole(Base):
    """A community's own role: a name for a set of permissions of the catalogue (auth/permissions.py)."""

    __tablename__ = "community_role"

    community: Mapped[int] = mapped_column(ForeignKey("community.id", ondelete="CASCADE"), primary_key=True)
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)
    icon: Mapped[str | None] = mapped_column(String(255))
    permissions: Mapped[list[Any]] = mapped_column()
