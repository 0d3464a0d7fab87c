"""Authors and what they do to each other: follows, ratings, bookmarks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, ColumnElement, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Author(Base):
    __tablename__ = "author"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # `user` is the identity-provider id of the original Discours; kept for wire compatibility.
    user: Mapped[str | None] = mapped_column(String(64), unique=True)
    name: Mapped[str | None] = mapped_column(String(255))
    slug: Mapped[str] = mapped_column(String(255), unique=True)
    bio: Mapped[str | None] = mapped_column(Text)
    about: Mapped[str | None] = mapped_column(Text)
    pic: Mapped[str | None] = mapped_column(String(1024))
    links: Mapped[list[Any] | None] = mapped_column()
    seo: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    last_seen: Mapped[int] = mapped_column(Integer, default=now)
    updated_at: Mapped[int | None] = mapped_column(Integer, default=now)
    deleted_at: Mapped[int | None] = mapped_column(Integer)
    # The account (private: never in a public cached value). Discours keeps it on the author row.
    email: Mapped[str | None] = mapped_column(String(255), unique=True)
    email_verified: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    password: Mapped[str | None] = mapped_column(String(255))  # argon2 hash, never the password
    # Identities at OAuth providers: {"github": "12345", ...}
    oauth: Mapped[dict[str, Any] | None] = mapped_column()

    @classmethod
    def signs_in_with(cls, provider: str, subject: str) -> ColumnElement[bool]:
        """The author holding this provider identity (the one place that reads `oauth` by identity)."""
        held: ColumnElement[bool] = cls.oauth[provider].as_string() == subject
        return held

    __table_args__ = (
        Index("ix_author_created_at", "created_at"),
        Index("ix_author_last_seen", "last_seen"),
        Index("ix_author_name", "name"),
    )


class AuthorFollower(Base):
    __tablename__ = "author_follower"

    follower: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    auto: Mapped[bool] = mapped_column(Boolean, default=False)

    # The primary key serves "whom does X follow"; this serves "who follows X".
    __table_args__ = (Index("ix_author_follower_author", "author"),)


class AuthorRating(Base):
    __tablename__ = "author_rating"

    rater: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    plus: Mapped[bool] = mapped_column(Boolean, default=True)

    __table_args__ = (Index("ix_author_rating_author", "author"),)


class AuthorBookmark(Base):
    __tablename__ = "author_bookmark"

    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)

    __table_args__ = (Index("ix_author_bookmark_shout", "shout"),)
