"""scheduled publication: draft.publish_at

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 21:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.add_column(sa.Column('publish_at', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_draft_publish_at'), ['publish_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_draft_publish_at'))
        batch_op.drop_column('publish_at')
