"""Notifications and who has seen them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class Notification(Base):
    __tablename__ = "notification"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    updated_at: Mapped[int | None] = mapped_column(Integer)
    entity: Mapped[str] = mapped_column(String(32))
    action: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any] | None] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default="unread")
    kind: Mapped[str] = mapped_column(String(32), default="general")

    __table_args__ = (Index("ix_notification_created_at", "created_at"),)


class NotificationRecipient(Base):
    """Who a notification is for, decided once when it happened (resolvers/events.py): the live message
    goes to exactly these people, and their lists show exactly these rows."""

    __tablename__ = "notification_recipient"

    notification: Mapped[int] = mapped_column(
        ForeignKey("notification.id", ondelete="CASCADE"), primary_key=True
    )
    author: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)

    __table_args__ = (Index("ix_notification_recipient_author", "author", "notification"),)


class NotificationSeen(Base):
    __tablename__ = "notification_seen"

    viewer: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    notification: Mapped[int] = mapped_column(
        ForeignKey("notification.id", ondelete="CASCADE"), primary_key=True
    )


class NotificationMuted(Base):
    """A thread a reader unsubscribed from (`notification_unsubscribe_thread`): its events neither reach
    them live nor show in their list. At most `MAX_MUTED_THREADS` per reader (resolvers/notifications.py)."""

    __tablename__ = "notification_muted"

    viewer: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"), primary_key=True)
    thread: Mapped[str] = mapped_column(String(100), primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)

    __table_args__ = (Index("ix_notification_muted_thread", "thread"),)
