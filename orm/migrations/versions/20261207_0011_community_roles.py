"""community roles: per-community role settings (default and offered roles) and a community's own roles

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'community_role_settings',
        sa.Column('community', sa.Integer(), nullable=False),
        sa.Column('default_roles', sa.JSON(), nullable=False),
        sa.Column('available_roles', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['community'], ['community.id'],
                                name=op.f('fk_community_role_settings_community_community'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('community', name=op.f('pk_community_role_settings')),
    )
    op.create_table(
        'community_role',
        sa.Column('community', sa.Integer(), nullable=False),
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('icon', sa.String(length=255), nullable=True),
        sa.Column('permissions', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_community_role_community_community'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('community', 'id', name=op.f('pk_community_role')),
    )


def downgrade() -> None:
    op.drop_table('community_role')
    op.drop_table('community_role_settings')
