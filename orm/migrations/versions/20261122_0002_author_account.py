"""author account

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 00:01:37.979168
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('author', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('email_verified', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column('password', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('oauth', sa.JSON(), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_author_email'), ['email'])



def downgrade() -> None:
    with op.batch_alter_table('author', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_author_email'), type_='unique')
        batch_op.drop_column('oauth')
        batch_op.drop_column('password')
        batch_op.drop_column('email_verified')
        batch_op.drop_column('email')

