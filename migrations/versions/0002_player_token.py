"""players.token: the secret of each player's private reply address

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 23:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite cannot add a column with a unique constraint in place.
    # Existing players get their token when the referee next writes to them.
    with op.batch_alter_table('players') as batch:
        batch.add_column(sa.Column('token', sa.String(length=32), nullable=True))
        batch.create_unique_constraint('uq_players_token', ['token'])


def downgrade() -> None:
    with op.batch_alter_table('players') as batch:
        batch.drop_constraint('uq_players_token', type_='unique')
        batch.drop_column('token')
