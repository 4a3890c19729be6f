"""Playing a tournament: pair a round, play its matches, commit them, repeat.

`Tournament` ties the rules (round robin, Swiss) to the ledger and the
arena, which plays the jousts (on local cores or a cluster). Every step is
written to the ledger's store before the next one, and the rules are pure
functions of the committed rounds, so a run picked up from its store (after
a crash) finishes exactly as an uninterrupted one.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from hill import engine
from hill.engine import Pair, Played, arena
from hill.engine.arena import Arena
from hill.tournaments.formats import Ended, Pairing
from hill.tournaments.ledger import Ledger, LedgerChange, LedgerStore, ScheduledMatch
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import result_json, rules_of

Progress = Callable[[int, int], None]  # (matches committed, matches expected)
# called between two pieces of work: it may wait (while a player's request
# is open), or raise to stop there (the bot stops, the tournament was
# cancelled); whatever was written is a state to resume from
Checkpoint = Callable[[], None]
WRITE_INTERVAL = 0.2  # seconds between writes of committed results
WRITE_MOST = 5000  # committed results written together at most (a short write)
CHECK_EVERY = 256  # results between two checkpoints
# a round's matches are played a block at a time: what a block needs (its
# pairs, the matches waiting for each) is a few megabytes, where a round
# robin of 1,000 at once needed a hundred
BLOCK = 20_000


class Tournament:
    """One tournament over `programs` (entrant name -> code), kept in `store`,
    its jousts played by `jousts` (default: an arena on every local core)
    unless `known` has them already; `checkpoint` is called between pieces
    of its work (see Checkpoint)."""

    def __init__(
        self,
        plan: TournamentPlan,
        programs: Mapping[str, bytes],
        store: LedgerStore,
        jousts: Arena | None = None,
        known: arena.Results | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        self.plan = plan
        self.checkpoint = checkpoint or (lambda: None)
        self.store = store
        self.arena = jousts or Arena()
        self.hashes = {name: engine.code_hash(programs[name]) for name in plan.entrants}
        self.code = {self.hashes[name]: programs[name] for name in plan.entrants}
        # jousts known (e.g. the hill's, from storage) and played: none is played twice
        self.results = known if known is not None else arena.Results()
        self.ledger = Ledger.replay(store.read())
        # a restart: matches checked out without a result go back to the
        # queue.  The store need not hear it: it keeps them checked out,
        # which every start reads as queued, and the checkout that follows
        # would only write them back (a round robin's: half a million rows)
        self.stored_out = {match.key for match in self.ledger.requeue_checked_out()}

    @property
    def ended(self) -> str | None:
        """None while it runs; COMPLETE or why it ended early once it is over."""
        return self.ledger.ended

    def run(self, progress: Progress | None = None) -> None:
        """Play until the end (from wherever the store left off)."""
        while self.ledger.ended is None:
            self.checkpoint()
            if self.ledger.round_complete():
                self._open_next_round()
            else:
                self._play_current_round(progress)

    def _open_next_round(self) -> None:
        decision = self._next_round()
        if isinstance(decision, Ended):
            self.store.write([self.ledger.end(decision.reason)])
        else:
            self.store.write(self.ledger.open_round(decision.bye, list(decision.pairs)))

    def _next_round(self) -> Pairing | Ended:
        return rules_of(self.plan).next_round(self.plan, self.ledger.played_rounds())

    def _play_current_round(self, progress: Progress | None) -> None:
        matches = self.ledger.check_out()
        self.store.write([match for match in matches if match.key not in self.stored_out])
        self.stored_out.clear()
        with WriteBehind(self.store) as writes:
            for start in range(0, len(matches), BLOCK):
                self._play_block(matches[start : start + BLOCK], writes, progress)

    def _play_block(
        self, matches: Sequence[ScheduledMatch], writes: WriteBehind, progress: Progress | None
    ) -> None:
        """Commit checked-out matches: from the jousts known (stored, or
        played already), else played; a joust serves every match of its
        pair (two entrants may have the same code)."""
        waiting: dict[Pair, list[tuple[ScheduledMatch, int]]] = defaultdict(list)
        for match in matches:
            pair, sign = arena.oriented(self.hashes[match.a], self.hashes[match.b])
            waiting[pair].append((match, sign))
        known = [pair for pair in waiting if pair in self.results]
        for done, pair in enumerate(known):
            if done % CHECK_EVERY == 0:
                self.checkpoint()
            margin = int(self.results.between(*pair).sum())
            writes.add(self._commit(waiting.pop(pair), margin, progress))
        jousts = self.arena.play(list(waiting), self.code.__getitem__)
        for done, (pair, result) in enumerate(jousts, 1):
            if done % CHECK_EVERY == 0:
                self.checkpoint()
            played = Played(pair, result)
            self.results.add([played])
            writes.add(self._commit(waiting.pop(pair), result.score, progress), played)
        if waiting:
            raise RuntimeError(f"the executor left {len(waiting)} jousts unplayed")

    def _commit(
        self,
        matches: Sequence[tuple[ScheduledMatch, int]],
        margin: int,
        progress: Progress | None,
    ) -> list[LedgerChange]:
        """Commit the matches of one joust: `margin` from its left side, each
        match's sign turning it to the match's a."""
        committed: list[LedgerChange] = [
            self.ledger.commit(match.key, sign * margin) for match, sign in matches
        ]
        if progress is not None:
            progress(self.ledger.committed, rules_of(self.plan).expected_matches(self.plan))
        return committed

    def to_json(self) -> dict[str, object]:
        """The result in the tool contract of docs/tournaments.md (field names exactly)."""
        return result_json(self.plan, self.ledger)


class WriteBehind:
    """Committed results written to the store together, every WRITE_INTERVAL
    seconds (or WRITE_MOST results) and on leaving (an error too): one
    transaction per result would cost more than many jousts. A crash loses
    at most the last interval's results, and those matches are played again."""

    def __init__(self, store: LedgerStore) -> None:
        self.store = store
        self.pending: list[LedgerChange] = []
        self.played: list[Played] = []
        self.written = time.monotonic()

    def add(self, changes: list[LedgerChange], played: Played | None = None) -> None:
        self.pending += changes
        if played is not None:
            self.played.append(played)
        if len(self.pending) >= WRITE_MOST or time.monotonic() - self.written >= WRITE_INTERVAL:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.store.write(self.pending, self.played)
        self.pending, self.played = [], []
        self.written = time.monotonic()

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(self, *exception: object) -> None:
        self.flush()
