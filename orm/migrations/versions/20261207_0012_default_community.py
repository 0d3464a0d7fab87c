"""default community: the community every new account joins (id 1), created when absent

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07 14:00:00
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SLUG = "discours"


def upgrade() -> None:
    # Registration adds every new account to community 1 (resolvers/auth.py create_account): a database that
    # was migrated but never seeded or adopted must have it too. Adopted and seeded databases keep theirs.
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT 1 FROM community WHERE id = 1")).first() is not None:
        return
    taken = bind.execute(sa.text("SELECT 1 FROM community WHERE slug = :slug"), {"slug": SLUG}).first()
    bind.execute(sa.text('INSERT INTO community (id, name, slug, "desc", pic, created_at) '
                         "VALUES (1, :name, :slug, NULL, '', :now)"),
                 {"name": "Дискурс", "slug": "community-1" if taken else SLUG, "now": int(time.time())})
    if bind.dialect.name == "postgresql":
        # the row has an explicit id: the sequence moves past it so the next community does not collide
        bind.execute(sa.text("SELECT setval(pg_get_serial_sequence('community', 'id'), "
                             "(SELECT MAX(id) FROM community))"))


def downgrade() -> None:
    # The row may hold members, topics and shouts by now: removing it would cascade through them.
    pass
