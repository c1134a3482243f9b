"""Playing by mail (issue 11): the turn each mail showed, players' mail modes
and the reports held for a daily digest

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 12:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The game's turn when a mail was queued: a move answering it is tied
    # to that turn.
    with op.batch_alter_table('outbox') as batch:
        batch.add_column(sa.Column('turn', sa.Integer(), nullable=True))
        # A mail for one player's eyes (a hand, a sealed bid): a public mail
        # answering it may have quoted it.
        batch.add_column(sa.Column('secret', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    op.create_table(
        'mail_modes',
        sa.Column('game_id', sa.Integer(), sa.ForeignKey('games.id'), primary_key=True),
        sa.Column('player_id', sa.Integer(), sa.ForeignKey('players.id'), primary_key=True),
        sa.Column('mode', sa.String(length=16), nullable=False),
    )
    op.create_table(
        'digest_items',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('game_id', sa.Integer(), sa.ForeignKey('games.id'), nullable=False),
        sa.Column('player_id', sa.Integer(), sa.ForeignKey('players.id'), nullable=False),
        sa.Column('subject', sa.Text(), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
    )
    op.create_index('ix_digest_items_game_player', 'digest_items', ['game_id', 'player_id'])


def downgrade() -> None:
    op.drop_index('ix_digest_items_game_player', 'digest_items')
    op.drop_table('digest_items')
    op.drop_table('mail_modes')
    with op.batch_alter_table('outbox') as batch:
        batch.drop_column('secret')
        batch.drop_column('turn')
