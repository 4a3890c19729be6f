"""A ledger's changes (hill.tournaments.ledger) as table rows, for the two
places that keep them: a standalone run's state file (state_file.py) and
the hill's database (records.py).

Both keep a rounds table (number, bye) and a matches table (round, board,
a, b, status, margin); the hill's rows also carry their tournament's id
(`key`).  Only where a tournament's end is kept differs: the caller says
how (`end`).

Changes are written many rows a statement (a round robin of 1,000 entrants
opens a round of half a million matches), and in an order whose every
prefix is a consistent ledger, so that they may be committed in several
short transactions: a round's matches before the round itself (matches of
a round not opened yet are ignored when read back: the round is opened
again, with the same pairs, as the rules are pure), the end last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from sqlalchemy.dialects.sqlite import insert

from hill.tournaments.ledger import (
    LedgerChange,
    MatchStatus,
    RoundOpened,
    ScheduledMatch,
    TournamentEnded,
)

ROWS = 500  # rows a statement: a few milliseconds of SQLite's time
STATUS = {status.value: status for status in MatchStatus}  # quicker than MatchStatus(value)

Statement = tuple[Any, list[dict[str, Any]] | None]  # a statement and its rows (executemany)


def write_statements(
    changes: Iterable[LedgerChange],
    rounds: Any,
    matches: Any,
    end: Callable[[str], Any],
    key: Mapping[str, Any] | None = None,
) -> Iterator[Statement]:
    """The statements that keep `changes`, each with up to ROWS rows, in
    an order whose every prefix is consistent: the matches (inserted, or
    updated: a match opened again after a cut-off opening, a status, a
    margin) in the order given, then the rounds opened, then `end(reason)`.
    Made as they are taken (half a million rows at once would be hundreds
    of megabytes)."""
    key = dict(key or {})
    upsert = insert(matches)
    upsert = upsert.on_conflict_do_update(
        index_elements=[*key, "round", "board"],
        set_={name: upsert.excluded[name] for name in ("a", "b", "status", "margin")},
    )
    match_rows: list[dict[str, Any]] = []
    round_rows: list[dict[str, Any]] = []
    ends: list[str] = []
    for change in changes:
        if isinstance(change, ScheduledMatch):
            match_rows.append(
                {
                    **key,
                    "round": change.round,
                    "board": change.board,
                    "a": change.a,
                    "b": change.b,
                    "status": change.status.value,
                    "margin": change.margin,
                }
            )
            if len(match_rows) == ROWS:
                yield upsert, match_rows
                match_rows = []
        elif isinstance(change, RoundOpened):
            round_rows.append({**key, "number": change.number, "bye": change.bye})
        else:
            ends.append(change.reason)
    if match_rows:
        yield upsert, match_rows
    yield from ((insert(rounds), rows) for rows in slices(round_rows))
    yield from ((end(reason), None) for reason in ends)


def slices(rows: list[Any], size: int = ROWS) -> list[list[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def stored_changes(
    rounds: Iterable[Any], matches: Iterable[Any], ended: str | None
) -> list[LedgerChange]:
    """The changes that rows kept, in replay order: the rounds (by number),
    their matches (by round and board; those of a round whose opening was
    cut off are left out), then the end if there is one."""
    opened_rounds = [RoundOpened(row.number, row.bye) for row in rounds]
    opened = {change.number for change in opened_rounds}
    changes: list[LedgerChange] = [*opened_rounds]
    names: dict[str, str] = {}  # one string a name, not one a row (half a million rows)
    changes += [
        ScheduledMatch(
            row.round,
            row.board,
            names.setdefault(row.a, row.a),
            names.setdefault(row.b, row.b),
            STATUS[row.status],
            row.margin,
        )
        for row in matches
        if row.round in opened
    ]
    if ended is not None:
        changes.append(TournamentEnded(ended))
    return changes
