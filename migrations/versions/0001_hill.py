"""The hill: programs, jousts, events.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "programs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("name", sa.String(48), nullable=False),
        sa.Column("code", sa.LargeBinary, nullable=False),
        sa.Column("submitted_at", sa.DateTime, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("left_at", sa.DateTime),
        sa.Column("left_reason", sa.String(16)),
        sa.Column("displaced_by_id", sa.Integer, sa.ForeignKey("programs.id")),
    )
    op.create_index("ix_programs_status", "programs", ["status"])
    op.create_index(
        "one_on_hill_per_name",
        "programs",
        ["owner", "name"],
        unique=True,
        sqlite_where=sa.text("status = 'hill'"),
    )
    op.create_table(
        "jousts",
        sa.Column("left_id", sa.Integer, sa.ForeignKey("programs.id"), primary_key=True),
        sa.Column("right_id", sa.Integer, sa.ForeignKey("programs.id"), primary_key=True),
        sa.Column("outcomes", sa.LargeBinary(42), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("time", sa.DateTime, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("program_id", sa.Integer, sa.ForeignKey("programs.id")),
        sa.Column("displaced_id", sa.Integer, sa.ForeignKey("programs.id")),
        sa.Column("summary", sa.String, nullable=False),
        sa.Column("standings", sa.JSON, nullable=False),
        sa.Column("commit", sa.String(40)),
    )


def downgrade() -> None:
    op.drop_table("events")
    op.drop_table("jousts")
    op.drop_table("programs")
