"""Playing by mail (issue 11): the turn each mail showed, and whether it was
for one player's eyes

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 12:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The game's turn when a mail was queued: a move answering it is tied
    # to that turn.
    with op.batch_alter_table('outbox') as batch:
        batch.add_column(sa.Column('turn', sa.Integer(), nullable=True))
        # A mail for one player's eyes (a hand, a sealed bid): a public mail
        # answering it may have quoted it.
        batch.add_column(sa.Column('secret', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('outbox') as batch:
        batch.drop_column('secret')
        batch.drop_column('turn')
