"""A player away from all their games at once (issue 37): their absences,
each with the days drawn from the year's bank and the games it moved

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'absences',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('player_id', sa.Integer(), nullable=False),
        sa.Column('game_id', sa.Integer(), nullable=True),
        sa.Column('start_at', sa.DateTime(), nullable=False),
        sa.Column('end_at', sa.DateTime(), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=True),
        sa.Column('days', sa.Integer(), nullable=False),
        sa.Column('games', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id']),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_absences_player_id', 'absences', ['player_id'])


def downgrade() -> None:
    op.drop_index('ix_absences_player_id', table_name='absences')
    op.drop_table('absences')
