"""Drafts: a shout's editable working copy, with its own authors and topics."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Draft(Base):
    __tablename__ = "draft"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    created_by: Mapped[int] = mapped_column(ForeignKey("author.id"))
    community: Mapped[int] = mapped_column(ForeignKey("community.id"), default=1)
    layout: Mapped[str | None] = mapped_column(String(64), default="article")
    slug: Mapped[str | None] = mapped_column(String(255))
    title: Mapped[str | None] = mapped_column(String(1024))
    subtitle: Mapped[str | None] = mapped_column(String(1024))
    lead: Mapped[str | None] = mapped_column(Text)
    # Discours drafts carry a description (text of their own, kept when a Discours database is adopted)
    description: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    media: Mapped[list[Any] | None] = mapped_column()
    cover: Mapped[str | None] = mapped_column(String(1024))
    cover_caption: Mapped[str | None] = mapped_column(Text)
    lang: Mapped[str | None] = mapped_column(String(16), default="ru")
    seo: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[int | None] = mapped_column(Integer)
    deleted_at: Mapped[int | None] = mapped_column(Integer)
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("author.id"))
    deleted_by: Mapped[int | None] = mapped_column(ForeignKey("author.id"))
    # When the draft is to be published by the delayed queue (schedule_draft); None: not scheduled.
    publish_at: Mapped[int | None] = mapped_column(Integer, index=True)

    __table_args__ = (Index("ix_draft_created_by", "created_by"),)


class DraftAuthor(Base):
    __tablename__ = "draft_author"

    draft: Mapped[int] = mapped_column(ForeignKey("draft.id", ondelete="CASCADE"), primary_key=True)
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    caption: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (Index("ix_draft_author_author", "author"),)


class DraftTopic(Base):
    __tablename__ = "draft_topic"

    draft: Mapped[int] = mapped_column(ForeignKey("draft.id", ondelete="CASCADE"), primary_key=True)
    topic: Mapped[int] = mapped_column(ForeignKey("topic.id", ondelete="CASCADE"), primary_key=True)
    main: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (Index("ix_draft_topic_topic", "topic"),)
