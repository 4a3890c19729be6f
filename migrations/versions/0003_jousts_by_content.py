"""Jousts kept by the contents of their programs, not by program ids.

A joust is a pure function of the two programs' code, so it is keyed by the
sha256 of each code (programs get that `code_hash`), stored once from the
side of the lower hash, and reused by the hill, tournaments and the ladder.
The existing jousts move over: each id pair becomes its hash pair, the
outcomes negated where the lower hash was the right program.  Two programs
with the same code are one: their jousts agree, the first one is kept.
Jousts now also keep what they cost (`game_cycles`), unknown for old ones.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

programs = sa.table(
    "programs", sa.column("id", sa.Integer), sa.column("code", sa.LargeBinary),
    sa.column("code_hash", sa.String),
)  # fmt: skip
by_id = sa.table(
    "jousts_by_id", sa.column("left_id", sa.Integer), sa.column("right_id", sa.Integer),
    sa.column("outcomes", sa.LargeBinary),
)  # fmt: skip
by_hash = sa.table(
    "jousts", sa.column("left_hash", sa.String), sa.column("right_hash", sa.String),
    sa.column("outcomes", sa.LargeBinary),
)  # fmt: skip


def _flip(outcomes: bytes) -> bytes:
    """The outcomes (each + 1) from the other side."""
    return bytes(2 - b for b in outcomes)


def _hash_programs(connection: sa.Connection) -> dict[int, str]:
    hashes = {}
    for program_id, code in connection.execute(sa.select(programs.c.id, programs.c.code)):
        hashes[program_id] = hashlib.sha256(code).hexdigest()
    for program_id, code_hash in hashes.items():
        connection.execute(
            programs.update().where(programs.c.id == program_id).values(code_hash=code_hash)
        )
    return hashes


def upgrade() -> None:
    # SQLite adds a column in place; a NOT NULL one needs a default first
    op.add_column(
        "programs", sa.Column("code_hash", sa.String(64), nullable=False, server_default="")
    )
    connection = op.get_bind()
    hashes = _hash_programs(connection)
    op.create_index("ix_programs_code_hash", "programs", ["code_hash"])

    op.drop_index("ix_jousts_right_id", "jousts")
    op.rename_table("jousts", "jousts_by_id")
    op.create_table(
        "jousts",
        sa.Column("left_hash", sa.String(64), primary_key=True),
        sa.Column("right_hash", sa.String(64), primary_key=True),
        sa.Column("outcomes", sa.LargeBinary(42), nullable=False),
        sa.Column("game_cycles", sa.Integer),
    )
    op.create_index("ix_jousts_right_hash", "jousts", ["right_hash"])
    moved: dict[tuple[str, str], bytes] = {}
    for left_id, right_id, outcomes in connection.execute(sa.select(by_id)):
        left, right = hashes[left_id], hashes[right_id]
        if left > right:
            left, right, outcomes = right, left, _flip(outcomes)
        moved.setdefault((left, right), outcomes)
    if moved:
        connection.execute(
            by_hash.insert(),
            [{"left_hash": a, "right_hash": b, "outcomes": o} for (a, b), o in moved.items()],
        )
    op.drop_table("jousts_by_id")


def downgrade() -> None:
    """Back to jousts by id: every pair of programs whose contents have a
    stored joust gets it (a superset of the pairs that shared the hill)."""
    connection = op.get_bind()
    ids: dict[str, list[int]] = {}
    for program_id, code_hash in connection.execute(
        sa.select(programs.c.id, programs.c.code_hash).order_by(programs.c.id)
    ):
        ids.setdefault(code_hash, []).append(program_id)
    rows: dict[tuple[int, int], bytes] = {}
    for left, right, outcomes in connection.execute(sa.select(by_hash)):
        for left_id in ids.get(left, []):
            for right_id in ids.get(right, []):
                if left_id < right_id:
                    rows[left_id, right_id] = outcomes
                elif right_id < left_id:
                    rows[right_id, left_id] = _flip(outcomes)
    op.drop_index("ix_jousts_right_hash", "jousts")
    op.drop_table("jousts")
    op.create_table(
        "jousts",
        sa.Column("left_id", sa.Integer, sa.ForeignKey("programs.id"), primary_key=True),
        sa.Column("right_id", sa.Integer, sa.ForeignKey("programs.id"), primary_key=True),
        sa.Column("outcomes", sa.LargeBinary(42), nullable=False),
    )
    op.create_index("ix_jousts_right_id", "jousts", ["right_id"])
    old = sa.table(
        "jousts", sa.column("left_id", sa.Integer), sa.column("right_id", sa.Integer),
        sa.column("outcomes", sa.LargeBinary),
    )  # fmt: skip
    if rows:
        connection.execute(
            old.insert(),
            [{"left_id": a, "right_id": b, "outcomes": o} for (a, b), o in rows.items()],
        )
    op.drop_index("ix_programs_code_hash", "programs")
    op.drop_column("programs", "code_hash")  # SQLite 3.35+ drops it in place
