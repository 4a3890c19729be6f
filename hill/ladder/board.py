"""The hill's all-time ladder as plain data: the versions in its pool and
its latest standing (a board), as the store reads them (hill.store.archive)
and the bot, the web and `bfjoust ladder show` show them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hill.rules import names
from hill.rules.versions import label


@dataclass(frozen=True)
class Version:
    """A version of a program, as plain data."""

    id: int
    program_id: int
    owner: str
    name: str
    version: int
    code_hash: str
    previous_id: int | None
    joined_at: dt.datetime

    @property
    def full_name(self) -> str:
        return names.full_name(self.owner, self.name)

    @property
    def label(self) -> str:
        """What the ladder calls it: `owner.name@version`."""
        return label(self.full_name, self.version)


@dataclass(frozen=True)
class Row:
    """A version's line in the ladder's standing."""

    rank: int
    version: Version
    rating: float
    rating_low: float
    rating_high: float
    jousts: int
    stats: dict[str, Any]
    on_hill: bool


@dataclass(frozen=True)
class Board:
    """The ladder's latest standing as plain data: its rows best first, and
    the versions that joined since (they are in the next one)."""

    id: int
    computed_at: dt.datetime
    jousts: int  # stored jousts among the ranked versions
    ladder_jousts: int  # of which the ladder played
    rows: tuple[Row, ...]
    waiting: tuple[Version, ...]

    @property
    def pool(self) -> int:
        return len(self.rows)

    @property
    def pairs(self) -> int:
        return self.pool * (self.pool - 1) // 2

    def find(self, words: str, identity: str = "") -> list[Row]:
        """The rows a player means: `owner.name@2`, or every version of
        `OWNER.NAME` or of NAME (the player's own first), newest first."""
        words = words.strip()
        base, at, number = words.partition("@")
        labels = [r.version.full_name for r in self.rows]
        found = [self.rows[i] for i in names.lookup(labels, base, identity)]
        if at:
            found = [r for r in found if str(r.version.version) == number]
        return sorted(found, key=lambda r: (r.version.full_name, -r.version.version))
