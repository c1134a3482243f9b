"""A reused Message-ID drops no move (issue 22): each inbound record keeps
a digest of what its mail says, so a mail under a Message-ID seen before
is a duplicate only from the same sender saying the same

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('inbound') as batch:
        batch.add_column(sa.Column('body_digest', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('inbound') as batch:
        batch.drop_column('body_digest')
