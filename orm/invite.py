"""Invitations to co-author a shout."""

from __future__ import annotations

import enum

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base


class InviteStatus(enum.StrEnum):
    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


class Invite(Base):
    __tablename__ = "invite"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inviter_id: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"))
    author_id: Mapped[int] = mapped_column(ForeignKey("author.id", ondelete="CASCADE"))
    shout_id: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default=InviteStatus.PENDING.value)

    __table_args__ = (
        UniqueConstraint("inviter_id", "author_id", "shout_id"),
        Index("ix_invite_author_id", "author_id"),
    )
