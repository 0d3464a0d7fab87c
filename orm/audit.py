"""The audit trail: one row per administrative write (who, when, what, the values before and after)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from orm.base import Base, now


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[int] = mapped_column(Integer, default=now)
    # Who did it; the entry outlives an account that is deleted later.
    actor: Mapped[int | None] = mapped_column(ForeignKey("author.id", ondelete="SET NULL"))
    action: Mapped[str] = mapped_column(String(64))  # `reaction.delete`, `topic.merge`, ...
    entity: Mapped[str] = mapped_column(String(32))  # `reaction`, `shout`, `topic`, ...
    entity_id: Mapped[str] = mapped_column(String(64))  # its id (`inviter:author:shout` for an invite)
    community: Mapped[int | None] = mapped_column(Integer)
    before: Mapped[dict[str, Any] | None] = mapped_column()
    after: Mapped[dict[str, Any] | None] = mapped_column()

    __table_args__ = (
        Index("ix_audit_log_created_at", "created_at"),
        Index("ix_audit_log_entity_entity_id", "entity", "entity_id"),
        Index("ix_audit_log_actor", "actor"),
    )
