"""Operator's tables (issue 38): ``referee game new`` opens a table with
every seat filled by the operator; it starts when each player has given
their entropy, or at its start deadline (``expires_at``); its bot seats

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0021'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('club_tables') as batch:
        batch.add_column(sa.Column('by_operator', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column('bots', sa.Integer(), nullable=False,
                                   server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('club_tables') as batch:
        batch.drop_column('bots')
        batch.drop_column('by_operator')
