"""Reactions: comments (threaded through `reply_to`), ratings (LIKE/DISLIKE) and the rest of the kinds."""

from __future__ import annotations

import enum

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class ReactionKind(enum.StrEnum):
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


RATING_KINDS = (ReactionKind.LIKE.value, ReactionKind.DISLIKE.value)
# Kinds that show up in a discussion thread (everything that is not a bare vote).
COMMENT_KINDS = (ReactionKind.COMMENT.value, ReactionKind.QUOTE.value)


class Reaction(Base):
    __tablename__ = "reaction"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    body: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    updated_at: Mapped[int | None] = mapped_column(Integer)
    deleted_at: Mapped[int | None] = mapped_column(Integer)
    deleted_by: Mapped[int | None] = mapped_column(ForeignKey("author.id"))
    reply_to: Mapped[int | None] = mapped_column(ForeignKey("reaction.id", ondelete="SET NULL"))
    quote: Mapped[str | None] = mapped_column(Text)
    shout: Mapped[int] = mapped_column(ForeignKey("shout.id", ondelete="CASCADE"))
    created_by: Mapped[int] = mapped_column(ForeignKey("author.id"))
    kind: Mapped[str] = mapped_column(String(16))
    oid: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (
        # Threads of a shout, newest/oldest first; counts per shout and kind.
        Index("ix_reaction_shout_kind_created_at", "shout", "kind", "created_at"),
        Index("ix_reaction_reply_to", "reply_to"),
        Index("ix_reaction_created_by_kind", "created_by", "kind"),
        Index("ix_reaction_created_at", "created_at"),
    )
