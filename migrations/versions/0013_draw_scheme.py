"""Keyed draws (issue 23): each game records how it draws from its seed,
so the games played before, with one generator per action, still replay

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every game there is was played with the counter scheme; the referee
    # makes new games with keyed draws (``Game.draws``'s default).
    with op.batch_alter_table('games') as batch:
        batch.add_column(sa.Column('draws', sa.String(length=16), server_default='counter',
                                   nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('games') as batch:
        batch.drop_column('draws')
