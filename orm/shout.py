"""Publications (shouts) with their authors, topics and reaction followers.

A shout is listed when `published_at` is set and `deleted_at` is null; the partial-looking
composite indexes below serve exactly that filter with each order the feeds use.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Shout(Base):
    __tablename__ = "shout"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    updated_at: Mapped[int | None] = mapped_column(Integer)
    published_at: Mapped[int | None] = mapped_column(Integer)
    featured_at: Mapped[int | None] = mapped_column(Integer)
    deleted_at: Mapped[int | None] = mapped_column(Integer)
    created_by: Mapped[int] = mapped_column(ForeignKey("author.id"))
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("author.id"))
    deleted_by: Mapped[int | None] = mapped_column(ForeignKey("author.id"))
    community: Mapped[int] = mapped_column(ForeignKey("community.id"), default=1)
    body: Mapped[str] = mapped_column(Text, default="")
    slug: Mapped[str] = mapped_column(String(255), unique=True)
    cover: Mapped[str | None] = mapped_column(String(1024))
    cover_caption: Mapped[str | None] = mapped_column(Text)
    lead: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str] = mapped_column(String(1024))
    subtitle: Mapped[str | None] = mapped_column(String(1024))
    layout: Mapped[str] = mapped_column(String(64), default="article")
    media: Mapped[list[Any] | None] = mapped_column()
    lang: Mapped[str] = mapped_column(String(16), default="ru")
    version_of: Mapped[int | None] = mapped_column(ForeignKey("shout.id"))
    oid: Mapped[str | None] = mapped_column(String(255))
    seo: Mapped[str | None] = mapped_column(Text)
    draft: Mapped[int | None] = mapped_column(ForeignKey("draft.id", ondelete="SET NULL"))

    __table_args__ = (
        Index("ix_shout_published_at_deleted_at", "published_at", "deleted_at"),
        # The default feed order (newest first, id breaking ties) read straight off the index.
        Index("ix_shout_published_at_id", "published_at", "id"),
        Index("ix_shout_featured_at", "featured_at"),
        Index("ix_shout_created_by", "created_by"),
        Index("ix_shout_community", "community"),
        Index("ix_shout_layout", "layout"),
    )


class ShoutAuthor(Base):
    __tablename__ = "shout_author"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    caption: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (Index("ix_shout_author_author", "author"),)


class ShoutTopic(Base):
    __tablename__ = "shout_topic"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    topic: Mapped[int] = mapped_column(ForeignKey("topic.id", ondelete="CASCADE"), primary_key=True)
    main: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (Index("ix_shout_topic_topic", "topic"),)


class ShoutViews(Base):
    """Views of a shout as last flushed from Redis (`viewed:{shout_id}` leads, this follows in batches):
    what a Redis flush falls back to."""

    __tablename__ = "shout_views"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    views: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[int] = mapped_column(Integer, default=now)


class ShoutViewsImported(Base):
    """Views a shout had before this server counted it (`discours adopt --views` / `--views-redis`): the part of
    `shout_views` that came from the Discours deployment. Kept so that importing again moves the total by the
    difference only: the import is idempotent and what this server counted since stays on top."""

    __tablename__ = "shout_views_imported"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    views: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[int] = mapped_column(Integer, default=now)


class ShoutViewsWeekly(Base):
    """Views of a shout counted in one ISO week (`2026-W47`), written by the same flush as `shout_views`
    (each flush adds what the total grew by): the source of the weekly views leaderboards."""

    __tablename__ = "shout_views_weekly"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    week: Mapped[str] = mapped_column(String(8), primary_key=True)
    views: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (Index("ix_shout_views_weekly_week_views", "week", "views"),)


class ShoutReactionsFollower(Base):
    __tablename__ = "shout_reactions_followers"

    follower: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    auto: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    deleted_at: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (Index("ix_shout_reactions_followers_shout", "shout"),)
