"""The club's standings (issue 40): each player's rating per kind of game
and season, and a player's wish to be left out of published tables

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 10:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('players') as batch:
        batch.add_column(sa.Column('standings_hidden', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    op.create_table(
        'standings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('season', sa.String(length=16), nullable=False),
        sa.Column('player_id', sa.Integer(), nullable=False),
        sa.Column('mu', sa.Double(), nullable=False),
        sa.Column('sigma', sa.Double(), nullable=False),
        sa.Column('games', sa.Integer(), nullable=False),
        sa.Column('wins', sa.Integer(), nullable=False),
        sa.Column('last_game_id', sa.Integer(), nullable=False),
        sa.Column('last_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['last_game_id'], ['games.id']),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('kind', 'season', 'player_id'),
    )
    op.create_index('ix_standings_player_id', 'standings', ['player_id'])


def downgrade() -> None:
    op.drop_index('ix_standings_player_id', table_name='standings')
    op.drop_table('standings')
    with op.batch_alter_table('players') as batch:
        batch.drop_column('standings_hidden')
