"""A quiet table (issue 11): each seat's mail mode, and the mail held for
players who asked for less of it

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 20:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('seats') as batch:
        batch.add_column(sa.Column('mail_mode', sa.String(length=16), nullable=True))
    op.create_table(
        'held_mail',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('game_id', sa.Integer(), sa.ForeignKey('games.id'), nullable=False),
        sa.Column('player_id', sa.Integer(), sa.ForeignKey('players.id'), nullable=False),
        sa.Column('headline', sa.Text(), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
    )
    op.create_index('ix_held_mail_game_player', 'held_mail', ['game_id', 'player_id'])
    op.create_index('ix_held_mail_created_at', 'held_mail', ['created_at'])


def downgrade() -> None:
    op.drop_index('ix_held_mail_created_at', 'held_mail')
    op.drop_index('ix_held_mail_game_player', 'held_mail')
    op.drop_table('held_mail')
    with op.batch_alter_table('seats') as batch:
        batch.drop_column('mail_mode')
