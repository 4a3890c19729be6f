"""The checkout/commit model of matches (docs/tournaments.md "Matches are checked
out and committed"), as a pure state machine.

A round's matches are all created (queued) before any is played; a worker
checks matches out, plays them and commits each result. The next round is
opened only when every match of the current one is committed. On a restart,
matches checked out without a result go back to the queue.

Each change returns what it changed (`LedgerChange`s), which a `LedgerStore`
writes; `MemoryStore` keeps them in memory, a SQLite store writes them in
one transaction or, when they are many, in several short ones whose every
prefix is a consistent ledger (hill.store.ledger_rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from hill.engine import Played
from hill.errors import LedgerError
from hill.tournaments.match import MatchResult, Round


class MatchStatus(StrEnum):
    QUEUED = "queued"
    CHECKED_OUT = "checked_out"
    COMMITTED = "committed"


@dataclass(frozen=True, slots=True)  # slots: a round robin of 1,000 keeps half a million
class ScheduledMatch:
    """A match of a round: `board` is its place in the round (0-based)."""

    round: int
    board: int
    a: str
    b: str
    status: MatchStatus = MatchStatus.QUEUED
    margin: int | None = None

    @property
    def key(self) -> tuple[int, int]:
        return self.round, self.board

    def now(self, status: MatchStatus, margin: int | None = None) -> ScheduledMatch:
        """The same match in `status` (with `margin`); built directly, as
        dataclasses.replace costs several times more (half a million a round)."""
        return ScheduledMatch(self.round, self.board, self.a, self.b, status, margin)

    def result(self) -> MatchResult:
        if self.margin is None:
            raise LedgerError(f"match {self.key} has no result yet")
        return MatchResult(self.a, self.b, self.margin)


@dataclass(frozen=True)
class RoundOpened:
    number: int
    bye: str | None


@dataclass(frozen=True)
class TournamentEnded:
    reason: str


LedgerChange = RoundOpened | ScheduledMatch | TournamentEnded


@dataclass
class Ledger:
    """Every round opened so far and its matches; `ended` once it is over."""

    byes: dict[int, str | None] = field(default_factory=dict)  # round number -> bye
    matches: dict[tuple[int, int], ScheduledMatch] = field(default_factory=dict)
    ended: str | None = None
    committed: int = 0  # how many matches are committed (kept as they change)

    @classmethod
    def replay(cls, changes: list[LedgerChange]) -> Ledger:
        """The ledger that these changes, in order, leave behind."""
        ledger = cls()
        for change in changes:
            ledger._apply(change)
        return ledger

    def _apply(self, change: LedgerChange) -> LedgerChange:
        if isinstance(change, RoundOpened):
            self.byes[change.number] = change.bye
        elif isinstance(change, ScheduledMatch):
            old = self.matches.get(change.key)
            self.committed += (change.status is MatchStatus.COMMITTED) - (
                old is not None and old.status is MatchStatus.COMMITTED
            )
            self.matches[change.key] = change
        else:
            self.ended = change.reason
        return change

    @property
    def current_round(self) -> int:
        return max(self.byes, default=0)

    def round_matches(self, number: int) -> list[ScheduledMatch]:
        matches = [m for m in self.matches.values() if m.round == number]
        return sorted(matches, key=lambda m: m.board)

    def round_complete(self) -> bool:
        """Every match of the current round is committed (true before round 1)."""
        return self.committed == len(self.matches)

    def open_round(self, bye: str | None, pairs: list[tuple[str, str]]) -> list[LedgerChange]:
        """Round current+1 with its matches, all queued."""
        if self.ended is not None or not self.round_complete():
            raise LedgerError("a round opens only when the last one is committed, before the end")
        number = self.current_round + 1
        changes: list[LedgerChange] = [RoundOpened(number, bye)]
        changes += [ScheduledMatch(number, board, a, b) for board, (a, b) in enumerate(pairs)]
        return [self._apply(change) for change in changes]

    def check_out(self, limit: int | None = None) -> list[ScheduledMatch]:
        """Up to `limit` queued matches (all by default), now checked out."""
        queued = [m for m in self.matches.values() if m.status is MatchStatus.QUEUED]
        return [self._checked(m, MatchStatus.CHECKED_OUT) for m in queued[:limit]]

    def commit(self, key: tuple[int, int], margin: int) -> ScheduledMatch:
        """A checked-out match's result (committing the same result twice is harmless)."""
        match = self.matches[key]
        if match.status is MatchStatus.COMMITTED and match.margin == margin:
            return match
        if match.status is not MatchStatus.CHECKED_OUT:
            raise LedgerError(f"match {key} is {match.status}, not checked out")
        changed = match.now(MatchStatus.COMMITTED, margin)
        self._apply(changed)
        return changed

    def requeue_checked_out(self) -> list[ScheduledMatch]:
        """On restart: matches checked out without a result go back to the queue."""
        out = [m for m in self.matches.values() if m.status is MatchStatus.CHECKED_OUT]
        return [self._checked(m, MatchStatus.QUEUED) for m in out]

    def end(self, reason: str) -> TournamentEnded:
        if not self.round_complete():
            raise LedgerError("a tournament ends only between rounds")
        self._apply(TournamentEnded(reason))
        return TournamentEnded(reason)

    def played_rounds(self, *, partial: bool = False) -> list[Round]:
        """The committed rounds as plain data for the rules; with `partial`,
        then the committed matches of the first round not complete (the
        result of a tournament cut short)."""
        rounds = []
        for number in sorted(self.byes):
            matches = self.round_matches(number)
            done = [m for m in matches if m.status is MatchStatus.COMMITTED]
            if len(done) < len(matches) and not (partial and done):
                break
            rounds.append(Round(number, self.byes[number], tuple(m.result() for m in done)))
            if len(done) < len(matches):
                break
        return rounds

    def _checked(self, match: ScheduledMatch, status: MatchStatus) -> ScheduledMatch:
        changed = match.now(status, match.margin)
        self._apply(changed)
        return changed


class LedgerStore(Protocol):
    """Where a ledger's changes are kept: each `write` all or nothing, or
    in pieces of which any prefix kept is a consistent ledger, with the
    jousts played for them (a store that keeps jousts keeps those too)."""

    def write(self, changes: list[LedgerChange], played: Sequence[Played] = ()) -> None: ...

    def read(self) -> list[LedgerChange]: ...


@dataclass
class MemoryStore:
    """A ledger kept in memory (a standalone run without a state file)."""

    changes: list[LedgerChange] = field(default_factory=list)

    def write(self, changes: list[LedgerChange], played: Sequence[Played] = ()) -> None:
        self.changes.extend(changes)

    def read(self) -> list[LedgerChange]:
        return list(self.changes)
