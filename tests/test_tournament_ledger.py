"""Matches checked out and committed (docs/tournaments.md), and a tournament
picked up from its ledger after an interruption finishing as it would have."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from support.reference import REFERENCE

from hill.engine import Pair, Played
from hill.engine.arena import Arena, CodeOf, LocalExecutor, ProgramCache
from hill.errors import LedgerError
from hill.play.tournament import Tournament
from hill.tournaments.ledger import Ledger, MatchStatus, MemoryStore
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.round_robin import ROUND_ROBIN
from hill.tournaments.swiss import SWISS


def test_a_round_is_created_whole_checked_out_and_committed() -> None:
    ledger = Ledger()
    assert ledger.round_complete() and ledger.current_round == 0
    changes = ledger.open_round("e", [("a", "b"), ("c", "d")])
    assert len(changes) == 3 and ledger.current_round == 1
    assert [m.status for m in ledger.round_matches(1)] == [MatchStatus.QUEUED] * 2
    with pytest.raises(LedgerError):
        ledger.open_round(None, [("a", "c")])  # the round is not committed
    first = ledger.check_out(limit=1)
    assert [m.key for m in first] == [(1, 0)]
    with pytest.raises(LedgerError):
        ledger.commit((1, 1), 3)  # still queued: never checked out
    ledger.commit((1, 0), 3)
    assert ledger.commit((1, 0), 3).margin == 3  # the same result again is harmless
    with pytest.raises(LedgerError):
        ledger.end("done")  # between rounds only
    assert ledger.played_rounds() == []
    ledger.check_out()
    ledger.commit((1, 1), -2)
    (round_,) = ledger.played_rounds()
    assert (round_.bye, [(m.a, m.b, m.margin) for m in round_.matches]) == (
        "e", [("a", "b", 3), ("c", "d", -2)],
    )  # fmt: skip
    ledger.open_round("a", [("b", "c")])
    assert ledger.current_round == 2 and ledger.committed == 2


def test_a_restart_puts_checked_out_matches_back_in_the_queue() -> None:
    store = MemoryStore()
    ledger = Ledger()
    store.write(ledger.open_round(None, [("a", "b"), ("c", "d"), ("e", "f")]))
    store.write(ledger.check_out())
    store.write([ledger.commit((1, 1), 7)])
    # the process dies here: two matches checked out, one committed
    again = Ledger.replay(store.read())
    assert [m.status for m in again.round_matches(1)] == [
        MatchStatus.CHECKED_OUT, MatchStatus.COMMITTED, MatchStatus.CHECKED_OUT,
    ]  # fmt: skip
    requeued = again.requeue_checked_out()
    assert [m.key for m in requeued] == [(1, 0), (1, 2)]
    assert [m.status for m in again.round_matches(1)] == [
        MatchStatus.QUEUED, MatchStatus.COMMITTED, MatchStatus.QUEUED,
    ]  # fmt: skip
    assert again.round_matches(1)[1].margin == 7


class Interrupted(Exception):
    pass


class StopsAfter:
    """The arena's local executor, interrupted after `count` jousts (a crash mid-round)."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.local = LocalExecutor(ProgramCache(), jobs=2)

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        for played in self.local(pairs, code_of):
            if self.left == 0:
                raise Interrupted
            self.left -= 1
            yield played


def reference_programs(count: int) -> dict[str, bytes]:
    names = (REFERENCE / "index.txt").read_text().split()[:count]
    return {name: (REFERENCE / "warriors" / name).read_bytes() for name in names}


@pytest.mark.parametrize(
    ("fmt", "count", "stops"), [(SWISS, 11, (3, 9, 0, 6)), (ROUND_ROBIN, 8, (5, 20))]
)
def test_an_interrupted_tournament_finishes_as_an_uninterrupted_one(
    fmt: str, count: int, stops: tuple[int, ...]
) -> None:
    programs = reference_programs(count)
    plan = TournamentPlan(fmt, tuple(programs), seed=11, additional_rounds=1)
    whole = Tournament(plan, programs, MemoryStore(), Arena(jobs=2))
    whole.run()
    assert whole.ended == "complete"
    store = MemoryStore()
    for stop in stops:  # each run is cut short; the next picks up the same store
        with pytest.raises(Interrupted):
            Tournament(plan, programs, store, Arena(StopsAfter(stop))).run()
    resumed = Tournament(plan, programs, store, Arena(jobs=2))
    assert resumed.ended is None
    resumed.run()
    assert resumed.to_json() == whole.to_json()


def test_progress_counts_committed_matches_against_those_expected() -> None:
    programs = reference_programs(5)
    plan = TournamentPlan(SWISS, tuple(programs), seed=1)  # 3 rounds of 2 matches, 1 bye
    seen: list[tuple[int, int]] = []
    Tournament(plan, programs, MemoryStore(), Arena(jobs=1)).run(
        lambda done, total: seen.append((done, total))
    )
    assert seen == [(done, 6) for done in range(1, 7)]


class Counting(LocalExecutor):
    """The arena's local executor, counting the jousts it plays."""

    def __init__(self) -> None:
        super().__init__(ProgramCache(), jobs=2)
        self.played = 0

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        self.played += len(pairs)
        return super().__call__(pairs, code_of)


def test_known_jousts_and_rematches_are_not_played_again() -> None:
    """A Swiss tournament of 4 with rematches plays each pair once (6 jousts
    for 2 + 2 + 2 + 2 matches); given those jousts (as the hill's would be,
    from storage), the same tournament plays none and ends the same."""
    programs = reference_programs(4)
    plan = TournamentPlan(SWISS, tuple(programs), seed=4, additional_rounds=2, allow_repeat=True)
    first = Counting()
    played = Tournament(plan, programs, MemoryStore(), Arena(first))
    played.run()
    assert len(played.to_json()["rounds"]) == 4 and first.played == 6
    again = Counting()
    known = Tournament(plan, programs, MemoryStore(), Arena(again), known=played.results)
    known.run()
    assert again.played == 0 and known.to_json() == played.to_json()
