"""Indexes for the hill's frequent queries: the latest hill event, and the
jousts of a program.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_events_kind", "events", ["kind"])
    op.create_index("ix_jousts_right_id", "jousts", ["right_id"])


def downgrade() -> None:
    op.drop_index("ix_jousts_right_id", "jousts")
    op.drop_index("ix_events_kind", "events")
