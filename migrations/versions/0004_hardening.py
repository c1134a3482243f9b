"""Hardening: inbound digests, correspondents (reply budgets, loop breaker),
leases, the referee's own secrets, cursors keyed by account, seats by player

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 12:00:00
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('inbound') as batch:
        batch.add_column(sa.Column('digest', sa.String(length=64), nullable=True))
        batch.create_index('ix_inbound_digest', ['digest'])
    op.create_index('ix_seats_player_id', 'seats', ['player_id'])
    op.create_table(
        'correspondents',
        sa.Column('address', sa.String(length=320), primary_key=True),
        sa.Column('hour_start', sa.DateTime(), nullable=False),
        sa.Column('hour_count', sa.Integer(), nullable=False),
        sa.Column('day_start', sa.DateTime(), nullable=False),
        sa.Column('day_count', sa.Integer(), nullable=False),
        sa.Column('last_digest', sa.String(length=64), nullable=False),
        sa.Column('repeats', sa.Integer(), nullable=False),
        sa.Column('told_at', sa.DateTime(), nullable=True),
        sa.Column('not_verified_at', sa.DateTime(), nullable=True),
    )
    op.create_table(
        'leases',
        sa.Column('name', sa.String(length=64), primary_key=True),
        sa.Column('holder', sa.String(length=200), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
    )
    secrets_table = op.create_table(
        'secrets',
        sa.Column('name', sa.String(length=64), primary_key=True),
        sa.Column('value', sa.String(length=128), nullable=False),
    )
    op.bulk_insert(secrets_table, [{'name': 'mac', 'value': secrets.token_hex(32)}])
    # Cursors were keyed by the server's URL, so a host rename reread the
    # whole mailbox; they are keyed by the account now: imap:USER/FOLDER.
    conn = op.get_bind()
    cursors = sa.table('cursors', sa.column('mailbox', sa.String))
    for (old,) in conn.execute(sa.select(cursors.c.mailbox)).all():
        if old.startswith('imap://'):
            userhost, _, folder = old[len('imap://'):].partition('/')
            new = f"imap:{userhost.rpartition('@')[0]}/{folder}"
            conn.execute(cursors.update().where(cursors.c.mailbox == old)
                         .values(mailbox=new))


def downgrade() -> None:
    op.drop_table('secrets')
    op.drop_table('leases')
    op.drop_table('correspondents')
    op.drop_index('ix_seats_player_id', 'seats')
    with op.batch_alter_table('inbound') as batch:
        batch.drop_index('ix_inbound_digest')
        batch.drop_column('digest')
