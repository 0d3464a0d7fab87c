"""Curated collections of shouts."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Collection(Base):
    __tablename__ = "collection"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(255), unique=True)
    title: Mapped[str] = mapped_column(String(1024))
    body: Mapped[str | None] = mapped_column(Text)
    pic: Mapped[str | None] = mapped_column(String(1024))
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    created_by: Mapped[int] = mapped_column(ForeignKey("author.id"))
    published_at: Mapped[int | None] = mapped_column(Integer)


class ShoutCollection(Base):
    __tablename__ = "shout_collection"

    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"), primary_key=True)
    collection: Mapped[int] = mapped_column(ForeignKey("collection.id", ondelete="CASCADE"), primary_key=True)

    __table_args__ = (Index("ix_shout_collection_collection", "collection"),)
