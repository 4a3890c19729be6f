"""A ledger's changes (hill.tournaments.ledger) as table rows, for the two
places that keep them: a standalone run's state file (state_file.py) and
the hill's database (records.py).

Both keep a rounds table (number, bye) and a matches table (round, board,
a, b, status, margin); the hill's rows also carry their tournament's id
(`key`).  Only where a tournament's end is kept differs: the caller says
how (`end`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlalchemy.dialects.sqlite import insert

from hill.tournaments.ledger import (
    LedgerChange,
    MatchStatus,
    RoundOpened,
    ScheduledMatch,
    TournamentEnded,
)


def write_statement(
    change: LedgerChange,
    rounds: Any,
    matches: Any,
    end: Callable[[str], Any],
    key: Mapping[str, Any] | None = None,
) -> Any:
    """The statement that keeps `change`: a new round in `rounds`, a match
    inserted or updated (its status and margin) in `matches`, or `end(reason)`."""
    key = dict(key or {})
    if isinstance(change, RoundOpened):
        return insert(rounds).values(**key, number=change.number, bye=change.bye)
    if isinstance(change, TournamentEnded):
        return end(change.reason)
    statement = insert(matches).values(
        **key,
        round=change.round,
        board=change.board,
        a=change.a,
        b=change.b,
        status=change.status.value,
        margin=change.margin,
    )
    return statement.on_conflict_do_update(
        index_elements=[*key, "round", "board"],
        set_={"status": statement.excluded.status, "margin": statement.excluded.margin},
    )


def stored_changes(
    rounds: Iterable[Any], matches: Iterable[Any], ended: str | None
) -> list[LedgerChange]:
    """The changes that rows kept, in replay order: the rounds (by number),
    their matches (by round and board), then the end if there is one."""
    changes: list[LedgerChange] = [RoundOpened(row.number, row.bye) for row in rounds]
    changes += [
        ScheduledMatch(row.round, row.board, row.a, row.b, MatchStatus(row.status), row.margin)
        for row in matches
    ]
    if ended is not None:
        changes.append(TournamentEnded(ended))
    return changes
