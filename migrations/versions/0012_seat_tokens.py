"""seats.token: each seat's own private reply address, bound to its game
(issue 22): a mail to it vouches for its player in that game alone

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite cannot add a column with a unique constraint in place.
    # Existing seats get their token when the referee next writes to their player.
    with op.batch_alter_table('seats') as batch:
        batch.add_column(sa.Column('token', sa.String(length=32), nullable=True))
        batch.create_unique_constraint('uq_seats_token', ['token'])


def downgrade() -> None:
    with op.batch_alter_table('seats') as batch:
        batch.drop_constraint('uq_seats_token', type_='unique')
        batch.drop_column('token')
