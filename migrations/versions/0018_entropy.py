"""Players' own entropy (issue 38): a table opened by mail draws and keeps
its seed when it opens; each seat keeps the entropy its player gave; the
game keeps the contributions its draws mix in (the ``mixed`` scheme)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 10:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A table opened before keeps none: it draws its seed at the start, as then.
    with op.batch_alter_table('club_tables') as batch:
        batch.add_column(sa.Column('seed', sa.String(length=64), nullable=True))
    with op.batch_alter_table('club_seats') as batch:
        batch.add_column(sa.Column('entropy', sa.Text(), nullable=True))
        batch.add_column(sa.Column('entropy_how', sa.String(length=16), nullable=True))
    with op.batch_alter_table('games') as batch:
        batch.add_column(sa.Column('entropy', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('games') as batch:
        batch.drop_column('entropy')
    with op.batch_alter_table('club_seats') as batch:
        batch.drop_column('entropy_how')
        batch.drop_column('entropy')
    with op.batch_alter_table('club_tables') as batch:
        batch.drop_column('seed')
