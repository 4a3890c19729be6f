"""What a hill change does, as pure functions over plain data: who leaves
when a program arrives, which event that is, the one-line summaries the
players read, and the titles of the git commits that record them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from hill.rules.events import HILL_CHANGES, EventKind, LeaveReason
from hill.rules.standings import Contestant, Entry, Standings, rank, worst_opponents

WORST = 3  # opponents an answer names (the test's, `-rank`'s)


@dataclass(frozen=True)
class Arrival:
    """A program arriving on the hill, or only tested against it."""

    full_name: str
    test_only: bool
    old: Entry | None  # its previous version on the hill
    displaced: Entry | None  # the one it replaces or pushes off (would, for a test)
    stay: tuple[Entry, ...]  # the programs it meets, in rank order

    @property
    def kind(self) -> EventKind:
        if self.test_only:
            return EventKind.TEST
        if self.old is not None:
            return EventKind.UPDATE
        return EventKind.CHALLENGE if self.displaced is not None else EventKind.JOIN

    @property
    def leaving(self) -> Entry | None:
        """Who leaves the hill (no one after a test)."""
        return None if self.test_only else self.displaced

    @property
    def reason(self) -> LeaveReason:
        """Why `leaving` leaves."""
        return LeaveReason.UPDATED if self.old is not None else LeaveReason.PUSHED_OFF


def arrival(current: Standings, full_name: str, size: int, *, test_only: bool) -> Arrival:
    """The rules of arrival: a program of the same name is replaced, wherever
    it ranks; otherwise a full hill (`size` programs) loses its last one,
    even if the newcomer ranks below it."""
    old = current.find(full_name)
    displaced = old or (current.entries[-1] if current.size >= size else None)
    stay = tuple(e for e in current.entries if e is not displaced)
    return Arrival(full_name, test_only, old, displaced, stay)


def previous_ranks(current: Standings, arrival: Arrival, newcomer_id: int) -> dict[int, int]:
    """Each program's rank before the arrival; a new version inherits its old one's."""
    ranks = {e.program.id: e.rank for e in current.entries}
    if arrival.old is not None:
        ranks[newcomer_id] = arrival.old.rank
    return ranks


def rank_arrival(
    ranking: str,
    current: Standings,
    arrival: Arrival,
    outcomes: np.ndarray,
    newcomer: Contestant,
) -> tuple[Standings, str]:
    """The standings after an arrival and its summary, as `-test` and a
    challenge give them: `outcomes` (N+1, N+1, 42) are the jousts among the
    programs that stay (`arrival.stay`, in that order) and the newcomer,
    last (outcomes[a, b] from a's side)."""
    contestants = [e.program for e in arrival.stay] + [newcomer]
    previous = previous_ranks(current, arrival, newcomer.id)
    standings = rank(contestants, outcomes, ranking, previous)
    changed = _battles_changed(current, arrival, outcomes[-1, :-1])
    return standings, arrival_summary(arrival, standings, newcomer.id, changed)


def rank_departure(
    ranking: str, current: Standings, leaving: Entry, kind: EventKind
) -> tuple[Standings, str]:
    """The standings once `leaving` has left (a withdrawal, a removal: the
    others' jousts as they were, ranked afresh) and the change's summary."""
    keep = [i for i, e in enumerate(current.entries) if e is not leaving]
    standings = rank(
        [current.entries[i].program for i in keep],
        current.outcomes[np.ix_(keep, keep)],
        ranking,
        {e.program.id: e.rank for e in current.entries},
    )
    return standings, departure_summary(leaving.program.full_name, kind, standings.size)


def _battles_changed(current: Standings, arrival: Arrival, after: np.ndarray) -> str | None:
    """How an update's battles changed against the programs that stay."""
    if arrival.old is None:
        return None
    old = current.entries.index(arrival.old)
    others = [i for i in range(current.size) if i != old]
    return battles_changed(current.outcomes[old, others], after)


def arrival_summary(
    arrival: Arrival, standings: Standings, newcomer_id: int, changed: str | None
) -> str:
    """`alice.rush: points 1.00, score 100.00, rank 1/2 (+1); pushed off bob.idle
    (it was last; the hill keeps 2 programs)`;
    `changed` says how an update's battles changed (`battles_changed`)."""
    entry = next(e for e in standings.entries if e.program.id == newcomer_id)
    line = (
        f"{arrival.full_name}: points {entry.points:.2f}, "
        f"score {entry.scores[standings.method]:.2f}, rank {entry.rank}/{standings.size}"
    )
    if entry.change is not None:
        line += " (--)" if entry.change == 0 else f" ({entry.change:+d})"
    notes = []
    if arrival.old is not None and changed is not None:
        notes.append(changed)
    elif arrival.displaced is not None:
        # the program last before the newcomer came leaves, so the hill keeps its size
        verb, was = ("would push off", "is") if arrival.test_only else ("pushed off", "was")
        notes.append(
            f"{verb} {arrival.displaced.program.full_name} "
            f"(it {was} last; the hill keeps {standings.size} programs)"
        )
    if arrival.test_only:
        notes.append("test only, the hill is unchanged")
        notes.append(worst_text(worst_opponents(standings, entry.rank - 1, WORST)))
    return "; ".join([line, *notes])


def worst_text(worst: list[tuple[str, int]]) -> str:
    """`worst against: bob.x (-20), carol.y (-4)`, or `loses to no one`."""
    if not worst:
        return "loses to no one"
    return "worst against: " + ", ".join(f"{name} ({margin:+d})" for name, margin in worst)


def left_notice(program: str, reason: LeaveReason, by: str, time: dt.datetime, page: str) -> str:
    """What the owner of a program that left without their doing is told:
    `your program alice.rush was pushed off the hill by bob.x (2026-11-24
    12:00 UTC); its page: URL`."""
    when = time.strftime("%Y-%m-%d %H:%M UTC")
    how = {
        LeaveReason.PUSHED_OFF: f"was pushed off the hill by {by}",
        LeaveReason.REMOVED: f"was removed from the hill by {by}",
    }.get(reason, f"left the hill ({reason})")
    return f"your program {program} {how} ({when}); its page: {page}"


def battles_changed(before: np.ndarray, after: np.ndarray) -> str:
    """How a new version's battles differ from the old one's: both (N, 42),
    the outcomes against the same opponents from the program's side."""
    better = int((after > before).sum())
    worse = int((after < before).sum())
    return f"{better + worse} of {before.size} battles changed ({better} better, {worse} worse)"


def departure_summary(full_name: str, kind: EventKind, size: int) -> str:
    verb = "withdrawn" if kind == EventKind.WITHDRAW else "removed"
    return f"{full_name} {verb}; {size} programs left on the hill"


def rescore_summary(standings: Standings, rejoust: bool) -> str:
    replayed = " after replaying every joust" if rejoust else ""
    return f"rescored {standings.size} programs by {standings.method}{replayed}"


COMMIT_MESSAGES = {
    EventKind.CHALLENGE: "Replacing {displaced} by {program}",
    EventKind.JOIN: "Adding {program}",
    EventKind.UPDATE: "Updating {program}",
    EventKind.WITHDRAW: "Withdrawing {displaced}",
    EventKind.REMOVE: "Removing {displaced}",
    EventKind.RESCORE: "Rescoring the hill",
    EventKind.CONTEST_ENTRIES: "Publishing the entries of contest {contest}",
    EventKind.CONTEST_RESULTS: "Publishing the results of contest {contest}",
}
assert set(COMMIT_MESSAGES) == HILL_CHANGES


def commit_title(
    kind: EventKind, program: str | None, left: str | None, contest: str | None = None
) -> str:
    """A change's commit title: `Adding alice.rush`, `Replacing bob.x by
    alice.rush`, `Publishing the entries of contest spring` ..."""
    return COMMIT_MESSAGES[kind].format(program=program, displaced=left, contest=contest)


def commit_message(
    kind: EventKind,
    program: str | None,
    left: str | None,
    summary: str,
    contest: str | None = None,
) -> str:
    """The title, then the event's summary."""
    return f"{commit_title(kind, program, left, contest)}\n\n{summary}"
