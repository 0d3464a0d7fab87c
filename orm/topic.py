"""Topics (with parent topics) and their followers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Topic(Base):
    __tablename__ = "topic"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(255), unique=True)
    title: Mapped[str] = mapped_column(String(255))
    body: Mapped[str | None] = mapped_column(Text)
    pic: Mapped[str | None] = mapped_column(String(1024))
    community: Mapped[int] = mapped_column(ForeignKey("community.id"), default=1)
    oid: Mapped[str | None] = mapped_column(String(255))
    # Ids of parent topics; a topic may sit under several.
    parent_ids: Mapped[list[Any] | None] = mapped_column()

    __table_args__ = (Index("ix_topic_community", "community"),)


class TopicFollower(Base):
    __tablename__ = "topic_followers"

    follower: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    topic: Mapped[int] = mapped_column(ForeignKey("topic.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    auto: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (Index("ix_topic_followers_topic", "topic"),)
