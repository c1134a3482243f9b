"""Standings that notice a changed config (issue 40): the settings the
club's tables were worked out under (``[club] standings`` and ``season``,
the kinds left out for want of their package)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29 13:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0020'
down_revision: str | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'settings',
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('value', sa.String(length=2000), nullable=False),
        sa.PrimaryKeyConstraint('name'),
    )


def downgrade() -> None:
    op.drop_table('settings')
