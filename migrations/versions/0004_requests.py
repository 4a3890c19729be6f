"""The request book: the players' hill jobs and their answers, durable across
a crash (hill/requests.py), and the one-time upload links (hill/uploads.py).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("nick", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64)),
        sa.Column("origin", sa.String(8), nullable=False),
        sa.Column("command", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("code", sa.LargeBinary),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("result", sa.String),
        sa.Column("program", sa.String(128)),
        sa.Column("announce", sa.Boolean, nullable=False),
        sa.Column("delivered", sa.Boolean, nullable=False),
        sa.Column("finished_at", sa.DateTime),
    )
    op.create_index("ix_requests_state", "requests", ["state"])
    op.create_index("ix_requests_delivered", "requests", ["delivered"])
    op.create_table(
        "upload_links",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("nick", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64)),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("name", sa.String(48), nullable=False),
        sa.Column("test_only", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime),
        sa.Column("request_id", sa.Integer, sa.ForeignKey("requests.id")),
    )
    op.create_index("ix_upload_links_expires_at", "upload_links", ["expires_at"])


def downgrade() -> None:
    op.drop_table("upload_links")
    op.drop_table("requests")
