"""draft.description: the text Discours drafts carry (kept by `discours adopt`)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.add_column(sa.Column('description', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.drop_column('description')
