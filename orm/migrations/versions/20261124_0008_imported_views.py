"""imported views: shout_views_imported (the part of a shout's views a Discours deployment counted)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 14:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'shout_views_imported',
        sa.Column('shout', sa.Integer(), nullable=False),
        sa.Column('views', sa.Integer(), nullable=False),
        sa.Column('imported_at', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_views_imported_shout_shout'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('shout', name=op.f('pk_shout_views_imported')),
    )


def downgrade() -> None:
    op.drop_table('shout_views_imported')
