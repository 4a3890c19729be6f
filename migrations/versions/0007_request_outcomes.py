"""A request's answer kept as data (hill/rules/requests.py, Outcome): the
writer stores what the request came to (the change's summary, its event,
the program, whether the hill changed) as JSON in `outcome`, and the bot
and the upload page put it in words when they say it.  The answer text
(`result`), `program` and `announce` columns go: an answer stored before is
kept as its text (an outcome without an event is said as it is).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

requests = sa.table(
    "requests",
    sa.column("id", sa.Integer),
    sa.column("state", sa.String),
    sa.column("result", sa.String),
    sa.column("program", sa.String),
    sa.column("announce", sa.Boolean),
    sa.column("outcome", sa.JSON),
)


def upgrade() -> None:
    with op.batch_alter_table("requests") as batch:
        batch.add_column(sa.Column("outcome", sa.JSON))
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(requests.c.id, requests.c.result, requests.c.program, requests.c.announce).where(
            requests.c.result.is_not(None)
        )
    ).all()
    for request_id, result, program, announce in rows:
        outcome = {"summary": result, "event": None, "program": program, "changed": announce}
        connection.execute(
            requests.update().where(requests.c.id == request_id).values(outcome=outcome)
        )
    with op.batch_alter_table("requests") as batch:
        batch.drop_column("result")
        batch.drop_column("program")
        batch.drop_column("announce")


def downgrade() -> None:
    with op.batch_alter_table("requests") as batch:
        batch.add_column(sa.Column("result", sa.String))
        batch.add_column(sa.Column("program", sa.String(128)))
        batch.add_column(
            sa.Column("announce", sa.Boolean, nullable=False, server_default=sa.false())
        )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(requests.c.id, requests.c.outcome).where(requests.c.outcome.is_not(None))
    ).all()
    for request_id, outcome in rows:
        connection.execute(
            requests.update()
            .where(requests.c.id == request_id)
            .values(
                result=outcome["summary"],
                program=outcome.get("program"),
                announce=bool(outcome.get("changed")),
            )
        )
    with op.batch_alter_table("requests") as batch:
        batch.drop_column("outcome")
