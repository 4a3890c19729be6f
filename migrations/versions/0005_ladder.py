"""The all-time ladder over the archive (hill/ladder/archive.py): its pool of
program versions with their seeding, its counters, and its latest standing.
Its jousts are the hill's own table's.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ladder_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("program_id", sa.Integer, sa.ForeignKey("programs.id"), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("name", sa.String(48), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("previous_id", sa.Integer, sa.ForeignKey("ladder_versions.id")),
        sa.Column("joined_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("owner", "name", "code_hash", name="one_version_per_code"),
    )
    op.create_table(
        "ladder_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("programs_read", sa.Integer, nullable=False),
        sa.Column("ladder_jousts", sa.Integer, nullable=False),
    )
    op.create_table(
        "ladder_snapshots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("computed_at", sa.DateTime, nullable=False),
        sa.Column("jousts", sa.Integer, nullable=False),
        sa.Column("ladder_jousts", sa.Integer, nullable=False),
        sa.Column("ranking", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ladder_snapshots")
    op.drop_table("ladder_state")
    op.drop_table("ladder_versions")
