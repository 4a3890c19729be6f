"""Contests (hill/store/contests.py, docs/contests.md): each contest, its
entrants (a player's latest entry or withdrawal, with the time its request
was heard; the controls), the hill events that publish a contest's files
(`events.contest_id`), and upload links that enter a contest
(`upload_links.contest`).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "contests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(32), nullable=False, unique=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("closes", sa.DateTime, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("state", sa.String(8), nullable=False, index=True),
        sa.Column("closed_at", sa.DateTime),
        sa.Column("closed_by", sa.String(64)),
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id")),
        sa.Column("void_reason", sa.Text),
        sa.Column("result", sa.JSON),
        sa.Column("winner", sa.String(64)),
        sa.Column("told", sa.JSON, nullable=False),
    )
    op.create_table(
        "contest_entries",
        sa.Column("contest_id", sa.Integer, sa.ForeignKey("contests.id"), primary_key=True),
        sa.Column("entrant", sa.String(64), primary_key=True),
        sa.Column("control", sa.Boolean, nullable=False),
        sa.Column("code", sa.LargeBinary),
        sa.Column("code_hash", sa.String(64), index=True),
        sa.Column("heard_at", sa.DateTime, nullable=False),
        sa.Column("request_id", sa.Integer, sa.ForeignKey("requests.id")),
    )
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("contest_id", sa.Integer))
        batch.create_foreign_key("fk_events_contest", "contests", ["contest_id"], ["id"])
    with op.batch_alter_table("upload_links") as batch:
        batch.add_column(
            sa.Column("contest", sa.Boolean, nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("upload_links") as batch:
        batch.drop_column("contest")
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("fk_events_contest", type_="foreignkey")
        batch.drop_column("contest_id")
    op.drop_table("contest_entries")
    op.drop_table("contests")
