"""players.bounced_at and players.bounce: the last bounce of a player's mail

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 01:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('players') as batch:
        batch.add_column(sa.Column('bounced_at', sa.DateTime(), nullable=True))
        batch.add_column(sa.Column('bounce', sa.Text(), nullable=False, server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('players') as batch:
        batch.drop_column('bounce')
        batch.drop_column('bounced_at')
