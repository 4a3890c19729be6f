"""Analytics (docs/analytics.md): each joust's battle statistics, packed,
beside its outcomes (`joust_stats`, by the same pair of code hashes; the
jousts stored before get theirs from a background replay); the pages of
`-test` trials (`test_pages`); and what the owners of programs that left
the hill are to be told (`notices`).  Self-contained: it creates its three
tables and touches no other.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "joust_stats",
        sa.Column("left_hash", sa.String(64), primary_key=True),
        sa.Column("right_hash", sa.String(64), primary_key=True),
        sa.Column("figures", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "test_pages",
        sa.Column("token", sa.String(32), primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("events.id"), nullable=False),
        sa.Column("program_id", sa.Integer, sa.ForeignKey("programs.id"), nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("event_id"),
    )
    op.create_index("ix_test_pages_expires_at", "test_pages", ["expires_at"])
    op.create_table(
        "notices",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("program_id", sa.Integer, sa.ForeignKey("programs.id"), nullable=False),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("events.id"), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("sent_at", sa.DateTime),
    )
    op.create_index("ix_notices_owner", "notices", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_notices_owner", "notices")
    op.drop_table("notices")
    op.drop_index("ix_test_pages_expires_at", "test_pages")
    op.drop_table("test_pages")
    op.drop_table("joust_stats")
