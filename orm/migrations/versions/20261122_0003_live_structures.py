"""live structures: shout views table, feed-order index

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'shout_views',
        sa.Column('shout', sa.Integer(), nullable=False),
        sa.Column('views', sa.Integer(), nullable=False),
        sa.Column('updated_at', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_views_shout_shout'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('shout', name=op.f('pk_shout_views')),
    )
    with op.batch_alter_table('shout', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_shout_published_at_id'), ['published_at', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('shout', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_shout_published_at_id'))
    op.drop_table('shout_views')
