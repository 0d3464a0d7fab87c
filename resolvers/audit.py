"""The audit trail of administrative writes: recorded in the write's own transaction (an entry exists
exactly when the write committed), read by administrators, newest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from auth.permissions import Viewer
from orm import AuditEntry
from resolvers.access import require
from resolvers.deps import Deps
from resolvers.paging import counted_page, page

DEFAULT_LIMIT = 20


def record(session: AsyncSession, viewer: Viewer, action: str, entity: str, entity_id: Any, *,
           community: int | None, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
    """Adds the entry for a write made in `session` (what it changed, before and after)."""
    if before is not None and after is not None:  # an edit: only what it changed
        changed = sorted(k for k in after if before.get(k) != after[k])
        before, after = {k: before.get(k) for k in changed}, {k: after[k] for k in changed}
    session.add(AuditEntry(actor=viewer.author_id, action=action, entity=entity, entity_id=str(entity_id),
                           community=community, before=before, after=after))


async def audit_log(deps: Deps, viewer: Viewer | None, limit: int | None, offset: int | None, *,
                    entity: str | None = None, entity_id: str | None = None, action: str | None = None,
                    actor: int | None = None, community: int | None = None) -> dict[str, Any]:
    """A page of the trail with its total, filtered; administrators of a community read its entries,
    ADMIN_EMAILS' administrators every entry."""
    signed_in = require(viewer, "audit:read", community_id=community or 1)
    limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=deps.max_page_size)
    conditions = [column == value for column, value in ((AuditEntry.entity, entity), (AuditEntry.entity_id, entity_id),
                                                         (AuditEntry.action, action), (AuditEntry.actor, actor))
                  if value is not None]
    if community is not None or not signed_in.system_admin:
        conditions.append(AuditEntry.community == (community or 1))
    entries, fields = await counted_page(deps.db, select(*AuditEntry.__table__.c).where(*conditions),
                                         (AuditEntry.id.desc(),), limit, offset)
    return {"entries": entries, **fields}
