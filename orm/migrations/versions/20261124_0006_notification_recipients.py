"""notification recipients and muted threads: notification_recipient, notification_muted

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'notification_recipient',
        sa.Column('notification', sa.Integer(), nullable=False),
        sa.Column('author', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['notification'], ['notification.id'],
                                name=op.f('fk_notification_recipient_notification_notification'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_notification_recipient_author_author'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('notification', 'author', name=op.f('pk_notification_recipient')),
    )
    with op.batch_alter_table('notification_recipient', schema=None) as batch_op:
        batch_op.create_index('ix_notification_recipient_author', ['author', 'notification'], unique=False)
    op.create_table(
        'notification_muted',
        sa.Column('viewer', sa.Integer(), nullable=False),
        sa.Column('thread', sa.String(length=100), nullable=False),
        sa.Column('created_at', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['viewer'], ['author.id'], name=op.f('fk_notification_muted_viewer_author'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('viewer', 'thread', name=op.f('pk_notification_muted')),
    )
    with op.batch_alter_table('notification_muted', schema=None) as batch_op:
        batch_op.create_index('ix_notification_muted_thread', ['thread'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('notification_muted', schema=None) as batch_op:
        batch_op.drop_index('ix_notification_muted_thread')
    op.drop_table('notification_muted')
    with op.batch_alter_table('notification_recipient', schema=None) as batch_op:
        batch_op.drop_index('ix_notification_recipient_author')
    op.drop_table('notification_recipient')
