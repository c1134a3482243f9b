"""A player's mailbox in order (issue 21): each game keeps the Date of its
latest mail, so the next is dated later; a held answer to a player's own
mail marks the mail it rides in as secret

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('games') as batch:
        batch.add_column(sa.Column('mail_clock', sa.DateTime(), nullable=True))
    with op.batch_alter_table('held_mail') as batch:
        batch.add_column(sa.Column('personal', sa.Boolean(), server_default=sa.false(),
                                   nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('held_mail') as batch:
        batch.drop_column('personal')
    with op.batch_alter_table('games') as batch:
        batch.drop_column('mail_clock')
