"""What status shows of a game, stored beside its state (issue 13): a
status of ten thousand games reads no state

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 23:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Null in the games there are: status reads their states until they next move.
    with op.batch_alter_table('games') as batch:
        batch.add_column(sa.Column('public_view', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('games') as batch:
        batch.drop_column('public_view')
