"""Moves the referee makes for a player (issue 37): whether a seat's
forced moves play themselves, and its standing orders, kept secret

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Both null on every existing seat: autoplay as the game says, no orders.
    with op.batch_alter_table('seats') as batch:
        batch.add_column(sa.Column('autoplay', sa.Boolean(), nullable=True))
        batch.add_column(sa.Column('orders', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('seats') as batch:
        batch.drop_column('orders')
        batch.drop_column('autoplay')
