"""weekly leaderboards: shout_views_weekly

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'shout_views_weekly',
        sa.Column('shout', sa.Integer(), nullable=False),
        sa.Column('week', sa.String(length=8), nullable=False),
        sa.Column('views', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_views_weekly_shout_shout'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('shout', 'week', name=op.f('pk_shout_views_weekly')),
    )
    with op.batch_alter_table('shout_views_weekly', schema=None) as batch_op:
        batch_op.create_index('ix_shout_views_weekly_week_views', ['week', 'views'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('shout_views_weekly', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_views_weekly_week_views')
    op.drop_table('shout_views_weekly')
