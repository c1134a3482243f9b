"""Costs that follow the work (issue 39): the kinds of the stored games and
the failed mails found through indexes, so that a pass with nothing due and
``status`` read nothing per game or per mail sent

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_games_kind', 'games', ['kind'])
    # The failed alone (partial on SQLite; on PostgreSQL a whole index, whose
    # dialect option would load the dialect in every command on SQLite):
    # the unsent are found by ix_outbox_unsent.
    op.create_index('ix_outbox_failed', 'outbox', ['failed_at'],
                    sqlite_where=sa.text('failed_at IS NOT NULL'))


def downgrade() -> None:
    op.drop_index('ix_outbox_failed', table_name='outbox')
    op.drop_index('ix_games_kind', table_name='games')
