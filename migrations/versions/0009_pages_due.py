"""Game pages written as games change (issue 13): each game counts, indexed,
the changes its page does not show yet, so a pass rewrites only the pages
that are behind

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every game there is starts one change ahead of its page: the first
    # pass that writes pages writes them all, once.
    with op.batch_alter_table('games') as batch:
        batch.add_column(sa.Column('page_due', sa.Integer(), server_default='1', nullable=True))
        batch.add_column(sa.Column('listing', sa.JSON(), nullable=True))
        batch.create_index('ix_games_page_due', ['page_due'])


def downgrade() -> None:
    with op.batch_alter_table('games') as batch:
        batch.drop_index('ix_games_page_due')
        batch.drop_column('listing')
        batch.drop_column('page_due')
