"""The hill's tournaments (hill/tournaments/records.py): each tournament's
plan and pool, its entrants with their programs by content, and the ledger
of its rounds and matches (queued, checked out, committed).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("pool", sa.String(64), nullable=False),
        sa.Column("seed", sa.Integer),
        sa.Column("additional_rounds", sa.Integer, nullable=False),
        sa.Column("allow_repeat", sa.Boolean, nullable=False),
        sa.Column("criteria", sa.String(128), nullable=False),
        sa.Column("started_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("ended", sa.Text),
    )
    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("code_hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "tournament_rounds",
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("number", sa.Integer, primary_key=True),
        sa.Column("bye", sa.String(128)),
    )
    op.create_table(
        "tournament_matches",
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("round", sa.Integer, primary_key=True),
        sa.Column("board", sa.Integer, primary_key=True),
        sa.Column("a", sa.String(128), nullable=False),
        sa.Column("b", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("margin", sa.Integer),
    )


def downgrade() -> None:
    op.drop_table("tournament_matches")
    op.drop_table("tournament_rounds")
    op.drop_table("tournament_entrants")
    op.drop_table("tournaments")
