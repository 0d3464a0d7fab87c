"""discours schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-21 23:46:38.715711
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('author',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user', sa.String(length=64), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('slug', sa.String(length=255), nullable=False),
    sa.Column('bio', sa.Text(), nullable=True),
    sa.Column('about', sa.Text(), nullable=True),
    sa.Column('pic', sa.String(length=1024), nullable=True),
    sa.Column('links', sa.JSON(), nullable=True),
    sa.Column('seo', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('last_seen', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.Integer(), nullable=True),
    sa.Column('deleted_at', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_author')),
    sa.UniqueConstraint('slug', name=op.f('uq_author_slug')),
    sa.UniqueConstraint('user', name=op.f('uq_author_user'))
    )
    with op.batch_alter_table('author', schema=None) as batch_op:
        batch_op.create_index('ix_author_created_at', ['created_at'], unique=False)
        batch_op.create_index('ix_author_last_seen', ['last_seen'], unique=False)
        batch_op.create_index('ix_author_name', ['name'], unique=False)

    op.create_table('notification',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.Integer(), nullable=True),
    sa.Column('entity', sa.String(length=32), nullable=False),
    sa.Column('action', sa.String(length=32), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notification'))
    )
    with op.batch_alter_table('notification', schema=None) as batch_op:
        batch_op.create_index('ix_notification_created_at', ['created_at'], unique=False)

    op.create_table('author_follower',
    sa.Column('follower', sa.Integer(), nullable=False),
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('auto', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_author_follower_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['follower'], ['author.id'], name=op.f('fk_author_follower_follower_author'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('follower', 'author', name=op.f('pk_author_follower'))
    )
    with op.batch_alter_table('author_follower', schema=None) as batch_op:
        batch_op.create_index('ix_author_follower_author', ['author'], unique=False)

    op.create_table('author_rating',
    sa.Column('rater', sa.Integer(), nullable=False),
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('plus', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_author_rating_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['rater'], ['author.id'], name=op.f('fk_author_rating_rater_author'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('rater', 'author', name=op.f('pk_author_rating'))
    )
    with op.batch_alter_table('author_rating', schema=None) as batch_op:
        batch_op.create_index('ix_author_rating_author', ['author'], unique=False)

    op.create_table('collection',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=255), nullable=False),
    sa.Column('title', sa.String(length=1024), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('pic', sa.String(length=1024), nullable=True),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=False),
    sa.Column('published_at', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['author.id'], name=op.f('fk_collection_created_by_author')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collection')),
    sa.UniqueConstraint('slug', name=op.f('uq_collection_slug'))
    )
    op.create_table('community',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('slug', sa.String(length=255), nullable=False),
    sa.Column('desc', sa.Text(), nullable=True),
    sa.Column('pic', sa.String(length=1024), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['author.id'], name=op.f('fk_community_created_by_author'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_community')),
    sa.UniqueConstraint('slug', name=op.f('uq_community_slug'))
    )
    op.create_table('notification_seen',
    sa.Column('viewer', sa.Integer(), nullable=False),
    sa.Column('notification', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['notification'], ['notification.id'], name=op.f('fk_notification_seen_notification_notification'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['viewer'], ['author.id'], name=op.f('fk_notification_seen_viewer_author'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('viewer', 'notification', name=op.f('pk_notification_seen'))
    )
    op.create_table('community_author',
    sa.Column('community', sa.Integer(), nullable=False),
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('joined_at', sa.Integer(), nullable=False),
    sa.Column('roles', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_community_author_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_community_author_community_community'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('community', 'author', name=op.f('pk_community_author'))
    )
    with op.batch_alter_table('community_author', schema=None) as batch_op:
        batch_op.create_index('ix_community_author_author', ['author'], unique=False)

    op.create_table('community_follower',
    sa.Column('follower', sa.Integer(), nullable=False),
    sa.Column('community', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_community_follower_community_community'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['follower'], ['author.id'], name=op.f('fk_community_follower_follower_author'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('follower', 'community', name=op.f('pk_community_follower'))
    )
    with op.batch_alter_table('community_follower', schema=None) as batch_op:
        batch_op.create_index('ix_community_follower_community', ['community'], unique=False)

    op.create_table('draft',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=False),
    sa.Column('community', sa.Integer(), nullable=False),
    sa.Column('layout', sa.String(length=64), nullable=True),
    sa.Column('slug', sa.String(length=255), nullable=True),
    sa.Column('title', sa.String(length=1024), nullable=True),
    sa.Column('subtitle', sa.String(length=1024), nullable=True),
    sa.Column('lead', sa.Text(), nullable=True),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('media', sa.JSON(), nullable=True),
    sa.Column('cover', sa.String(length=1024), nullable=True),
    sa.Column('cover_caption', sa.Text(), nullable=True),
    sa.Column('lang', sa.String(length=16), nullable=True),
    sa.Column('seo', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.Integer(), nullable=True),
    sa.Column('deleted_at', sa.Integer(), nullable=True),
    sa.Column('updated_by', sa.Integer(), nullable=True),
    sa.Column('deleted_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_draft_community_community')),
    sa.ForeignKeyConstraint(['created_by'], ['author.id'], name=op.f('fk_draft_created_by_author')),
    sa.ForeignKeyConstraint(['deleted_by'], ['author.id'], name=op.f('fk_draft_deleted_by_author')),
    sa.ForeignKeyConstraint(['updated_by'], ['author.id'], name=op.f('fk_draft_updated_by_author')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_draft'))
    )
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.create_index('ix_draft_created_by', ['created_by'], unique=False)

    op.create_table('topic',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=255), nullable=False),
    sa.Column('title', sa.String(length=255), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('pic', sa.String(length=1024), nullable=True),
    sa.Column('community', sa.Integer(), nullable=False),
    sa.Column('oid', sa.String(length=255), nullable=True),
    sa.Column('parent_ids', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_topic_community_community')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_topic')),
    sa.UniqueConstraint('slug', name=op.f('uq_topic_slug'))
    )
    with op.batch_alter_table('topic', schema=None) as batch_op:
        batch_op.create_index('ix_topic_community', ['community'], unique=False)

    op.create_table('draft_author',
    sa.Column('draft', sa.Integer(), nullable=False),
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('caption', sa.String(length=255), nullable=True),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_draft_author_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['draft'], ['draft.id'], name=op.f('fk_draft_author_draft_draft'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('draft', 'author', name=op.f('pk_draft_author'))
    )
    with op.batch_alter_table('draft_author', schema=None) as batch_op:
        batch_op.create_index('ix_draft_author_author', ['author'], unique=False)

    op.create_table('draft_topic',
    sa.Column('draft', sa.Integer(), nullable=False),
    sa.Column('topic', sa.Integer(), nullable=False),
    sa.Column('main', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['draft'], ['draft.id'], name=op.f('fk_draft_topic_draft_draft'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic'], ['topic.id'], name=op.f('fk_draft_topic_topic_topic'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('draft', 'topic', name=op.f('pk_draft_topic'))
    )
    with op.batch_alter_table('draft_topic', schema=None) as batch_op:
        batch_op.create_index('ix_draft_topic_topic', ['topic'], unique=False)

    op.create_table('shout',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.Integer(), nullable=True),
    sa.Column('published_at', sa.Integer(), nullable=True),
    sa.Column('featured_at', sa.Integer(), nullable=True),
    sa.Column('deleted_at', sa.Integer(), nullable=True),
    sa.Column('created_by', sa.Integer(), nullable=False),
    sa.Column('updated_by', sa.Integer(), nullable=True),
    sa.Column('deleted_by', sa.Integer(), nullable=True),
    sa.Column('community', sa.Integer(), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('slug', sa.String(length=255), nullable=False),
    sa.Column('cover', sa.String(length=1024), nullable=True),
    sa.Column('cover_caption', sa.Text(), nullable=True),
    sa.Column('lead', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('title', sa.String(length=1024), nullable=False),
    sa.Column('subtitle', sa.String(length=1024), nullable=True),
    sa.Column('layout', sa.String(length=64), nullable=False),
    sa.Column('media', sa.JSON(), nullable=True),
    sa.Column('lang', sa.String(length=16), nullable=False),
    sa.Column('version_of', sa.Integer(), nullable=True),
    sa.Column('oid', sa.String(length=255), nullable=True),
    sa.Column('seo', sa.Text(), nullable=True),
    sa.Column('draft', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['community'], ['community.id'], name=op.f('fk_shout_community_community')),
    sa.ForeignKeyConstraint(['created_by'], ['author.id'], name=op.f('fk_shout_created_by_author')),
    sa.ForeignKeyConstraint(['deleted_by'], ['author.id'], name=op.f('fk_shout_deleted_by_author')),
    sa.ForeignKeyConstraint(['draft'], ['draft.id'], name=op.f('fk_shout_draft_draft'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['updated_by'], ['author.id'], name=op.f('fk_shout_updated_by_author')),
    sa.ForeignKeyConstraint(['version_of'], ['shout.id'], name=op.f('fk_shout_version_of_shout')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_shout')),
    sa.UniqueConstraint('slug', name=op.f('uq_shout_slug'))
    )
    with op.batch_alter_table('shout', schema=None) as batch_op:
        batch_op.create_index('ix_shout_community', ['community'], unique=False)
        batch_op.create_index('ix_shout_created_by', ['created_by'], unique=False)
        batch_op.create_index('ix_shout_featured_at', ['featured_at'], unique=False)
        batch_op.create_index('ix_shout_layout', ['layout'], unique=False)
        batch_op.create_index('ix_shout_published_at_deleted_at', ['published_at', 'deleted_at'], unique=False)

    op.create_table('topic_followers',
    sa.Column('follower', sa.Integer(), nullable=False),
    sa.Column('topic', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('auto', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['follower'], ['author.id'], name=op.f('fk_topic_followers_follower_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic'], ['topic.id'], name=op.f('fk_topic_followers_topic_topic'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('follower', 'topic', name=op.f('pk_topic_followers'))
    )
    with op.batch_alter_table('topic_followers', schema=None) as batch_op:
        batch_op.create_index('ix_topic_followers_topic', ['topic'], unique=False)

    op.create_table('author_bookmark',
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_author_bookmark_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_author_bookmark_shout_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('author', 'shout', name=op.f('pk_author_bookmark'))
    )
    with op.batch_alter_table('author_bookmark', schema=None) as batch_op:
        batch_op.create_index('ix_author_bookmark_shout', ['shout'], unique=False)

    op.create_table('invite',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('inviter_id', sa.Integer(), nullable=False),
    sa.Column('author_id', sa.Integer(), nullable=False),
    sa.Column('shout_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['author_id'], ['author.id'], name=op.f('fk_invite_author_id_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['inviter_id'], ['author.id'], name=op.f('fk_invite_inviter_id_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['shout_id'], ['shout.id'], name=op.f('fk_invite_shout_id_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invite')),
    sa.UniqueConstraint('inviter_id', 'author_id', 'shout_id', name=op.f('uq_invite_inviter_id_author_id_shout_id'))
    )
    with op.batch_alter_table('invite', schema=None) as batch_op:
        batch_op.create_index('ix_invite_author_id', ['author_id'], unique=False)

    op.create_table('reaction',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.Integer(), nullable=True),
    sa.Column('deleted_at', sa.Integer(), nullable=True),
    sa.Column('deleted_by', sa.Integer(), nullable=True),
    sa.Column('reply_to', sa.Integer(), nullable=True),
    sa.Column('quote', sa.Text(), nullable=True),
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('oid', sa.String(length=255), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['author.id'], name=op.f('fk_reaction_created_by_author')),
    sa.ForeignKeyConstraint(['deleted_by'], ['author.id'], name=op.f('fk_reaction_deleted_by_author')),
    sa.ForeignKeyConstraint(['reply_to'], ['reaction.id'], name=op.f('fk_reaction_reply_to_reaction'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_reaction_shout_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reaction'))
    )
    with op.batch_alter_table('reaction', schema=None) as batch_op:
        batch_op.create_index('ix_reaction_created_at', ['created_at'], unique=False)
        batch_op.create_index('ix_reaction_created_by_kind', ['created_by', 'kind'], unique=False)
        batch_op.create_index('ix_reaction_reply_to', ['reply_to'], unique=False)
        batch_op.create_index('ix_reaction_shout_kind_created_at', ['shout', 'kind', 'created_at'], unique=False)

    op.create_table('shout_author',
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('author', sa.Integer(), nullable=False),
    sa.Column('caption', sa.String(length=255), nullable=True),
    sa.ForeignKeyConstraint(['author'], ['author.id'], name=op.f('fk_shout_author_author_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_author_shout_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('shout', 'author', name=op.f('pk_shout_author'))
    )
    with op.batch_alter_table('shout_author', schema=None) as batch_op:
        batch_op.create_index('ix_shout_author_author', ['author'], unique=False)

    op.create_table('shout_collection',
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('collection', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['collection'], ['collection.id'], name=op.f('fk_shout_collection_collection_collection'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_collection_shout_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('shout', 'collection', name=op.f('pk_shout_collection'))
    )
    with op.batch_alter_table('shout_collection', schema=None) as batch_op:
        batch_op.create_index('ix_shout_collection_collection', ['collection'], unique=False)

    op.create_table('shout_reactions_followers',
    sa.Column('follower', sa.Integer(), nullable=False),
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('auto', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.Integer(), nullable=False),
    sa.Column('deleted_at', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['follower'], ['author.id'], name=op.f('fk_shout_reactions_followers_follower_author'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_reactions_followers_shout_shout'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('follower', 'shout', name=op.f('pk_shout_reactions_followers'))
    )
    with op.batch_alter_table('shout_reactions_followers', schema=None) as batch_op:
        batch_op.create_index('ix_shout_reactions_followers_shout', ['shout'], unique=False)

    op.create_table('shout_topic',
    sa.Column('shout', sa.Integer(), nullable=False),
    sa.Column('topic', sa.Integer(), nullable=False),
    sa.Column('main', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['shout'], ['shout.id'], name=op.f('fk_shout_topic_shout_shout'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic'], ['topic.id'], name=op.f('fk_shout_topic_topic_topic'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('shout', 'topic', name=op.f('pk_shout_topic'))
    )
    with op.batch_alter_table('shout_topic', schema=None) as batch_op:
        batch_op.create_index('ix_shout_topic_topic', ['topic'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('shout_topic', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_topic_topic')

    op.drop_table('shout_topic')
    with op.batch_alter_table('shout_reactions_followers', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_reactions_followers_shout')

    op.drop_table('shout_reactions_followers')
    with op.batch_alter_table('shout_collection', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_collection_collection')

    op.drop_table('shout_collection')
    with op.batch_alter_table('shout_author', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_author_author')

    op.drop_table('shout_author')
    with op.batch_alter_table('reaction', schema=None) as batch_op:
        batch_op.drop_index('ix_reaction_shout_kind_created_at')
        batch_op.drop_index('ix_reaction_reply_to')
        batch_op.drop_index('ix_reaction_created_by_kind')
        batch_op.drop_index('ix_reaction_created_at')

    op.drop_table('reaction')
    with op.batch_alter_table('invite', schema=None) as batch_op:
        batch_op.drop_index('ix_invite_author_id')

    op.drop_table('invite')
    with op.batch_alter_table('author_bookmark', schema=None) as batch_op:
        batch_op.drop_index('ix_author_bookmark_shout')

    op.drop_table('author_bookmark')
    with op.batch_alter_table('topic_followers', schema=None) as batch_op:
        batch_op.drop_index('ix_topic_followers_topic')

    op.drop_table('topic_followers')
    with op.batch_alter_table('shout', schema=None) as batch_op:
        batch_op.drop_index('ix_shout_published_at_deleted_at')
        batch_op.drop_index('ix_shout_layout')
        batch_op.drop_index('ix_shout_featured_at')
        batch_op.drop_index('ix_shout_created_by')
        batch_op.drop_index('ix_shout_community')

    op.drop_table('shout')
    with op.batch_alter_table('draft_topic', schema=None) as batch_op:
        batch_op.drop_index('ix_draft_topic_topic')

    op.drop_table('draft_topic')
    with op.batch_alter_table('draft_author', schema=None) as batch_op:
        batch_op.drop_index('ix_draft_author_author')

    op.drop_table('draft_author')
    with op.batch_alter_table('topic', schema=None) as batch_op:
        batch_op.drop_index('ix_topic_community')

    op.drop_table('topic')
    with op.batch_alter_table('draft', schema=None) as batch_op:
        batch_op.drop_index('ix_draft_created_by')

    op.drop_table('draft')
    with op.batch_alter_table('community_follower', schema=None) as batch_op:
        batch_op.drop_index('ix_community_follower_community')

    op.drop_table('community_follower')
    with op.batch_alter_table('community_author', schema=None) as batch_op:
        batch_op.drop_index('ix_community_author_author')

    op.drop_table('community_author')
    op.drop_table('notification_seen')
    op.drop_table('community')
    op.drop_table('collection')
    with op.batch_alter_table('author_rating', schema=None) as batch_op:
        batch_op.drop_index('ix_author_rating_author')

    op.drop_table('author_rating')
    with op.batch_alter_table('author_follower', schema=None) as batch_op:
        batch_op.drop_index('ix_author_follower_author')

    op.drop_table('author_follower')
    with op.batch_alter_table('notification', schema=None) as batch_op:
        batch_op.drop_index('ix_notification_created_at')

    op.drop_table('notification')
    with op.batch_alter_table('author', schema=None) as batch_op:
        batch_op.drop_index('ix_author_name')
        batch_op.drop_index('ix_author_last_seen')
        batch_op.drop_index('ix_author_created_at')

    op.drop_table('author')
