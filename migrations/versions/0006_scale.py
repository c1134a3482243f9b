"""Scale (issue 13): deadlines get the time their reminder is due, indexed,
so a sweep selects only what is due

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 13:00:00
"""

from collections.abc import Sequence
from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('deadlines') as batch:
        batch.add_column(sa.Column('remind_at', sa.DateTime(), nullable=True))
        batch.create_index('ix_deadlines_remind_at', ['remind_at'])
    conn = op.get_bind()
    deadlines = sa.table('deadlines', sa.column('id', sa.Integer), sa.column('game_id', sa.Integer),
                         sa.column('seat', sa.Integer), sa.column('due_at', sa.DateTime),
                         sa.column('reminded_at', sa.DateTime),
                         sa.column('remind_at', sa.DateTime))
    games = sa.table('games', sa.column('id', sa.Integer),
                     sa.column('reminder_seconds', sa.Integer))
    rows = conn.execute(
        sa.select(deadlines.c.id, deadlines.c.due_at, games.c.reminder_seconds)
        .join(games, games.c.id == deadlines.c.game_id)
        .where(deadlines.c.seat != 0, deadlines.c.reminded_at.is_(None))).all()
    for did, due_at, reminder in rows:
        conn.execute(deadlines.update().where(deadlines.c.id == did)
                     .values(remind_at=due_at - timedelta(seconds=reminder)))


def downgrade() -> None:
    with op.batch_alter_table('deadlines') as batch:
        batch.drop_index('ix_deadlines_remind_at')
        batch.drop_column('remind_at')
