"""The club starts its own games by mail (issue 36): open tables, the
people at them, and the players the operator made members

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29 04:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A member who has played is one by their seats; this marks only the
    # players the operator adds, so every existing row stays as it was.
    with op.batch_alter_table('players') as batch:
        batch.add_column(sa.Column('member_since', sa.DateTime(), nullable=True))
    op.create_table(
        'club_tables',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('tag', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('options', sa.JSON(), nullable=False),
        sa.Column('opener_id', sa.Integer(), nullable=False),
        sa.Column('seats_min', sa.Integer(), nullable=False),
        sa.Column('seats_max', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=True),
        sa.Column('game_id', sa.Integer(), nullable=True),
        sa.Column('rematch_of_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['game_id'], ['games.id']),
        sa.ForeignKeyConstraint(['opener_id'], ['players.id']),
        sa.ForeignKeyConstraint(['rematch_of_id'], ['games.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('tag'),
    )
    op.create_index('ix_club_tables_opener_id', 'club_tables', ['opener_id'])
    op.create_index('ix_club_tables_status', 'club_tables', ['status'])
    op.create_index('ix_club_tables_expires_at', 'club_tables', ['expires_at'])
    op.create_table(
        'club_seats',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('table_id', sa.Integer(), nullable=False),
        sa.Column('player_id', sa.Integer(), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('team', sa.String(length=32), nullable=True),
        sa.Column('invited_by_id', sa.Integer(), nullable=True),
        sa.Column('invited_at', sa.DateTime(), nullable=True),
        sa.Column('told_at', sa.DateTime(), nullable=True),
        sa.Column('token', sa.String(length=32), nullable=True),
        sa.Column('answered_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['invited_by_id'], ['players.id']),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.ForeignKeyConstraint(['table_id'], ['club_tables.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('table_id', 'player_id'),
        sa.UniqueConstraint('token'),
    )
    op.create_index('ix_club_seats_player_id', 'club_seats', ['player_id'])
    op.create_index('ix_club_seats_invited_at', 'club_seats', ['invited_at'])


def downgrade() -> None:
    op.drop_index('ix_club_seats_invited_at', table_name='club_seats')
    op.drop_index('ix_club_seats_player_id', table_name='club_seats')
    op.drop_table('club_seats')
    op.drop_index('ix_club_tables_expires_at', table_name='club_tables')
    op.drop_index('ix_club_tables_status', table_name='club_tables')
    op.drop_index('ix_club_tables_opener_id', table_name='club_tables')
    op.drop_table('club_tables')
    with op.batch_alter_table('players') as batch:
        batch.drop_column('member_since')
