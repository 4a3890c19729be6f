"""The hill's tournaments' writer: it creates a tournament over one of the
hill's pools (hill.store.pools) and plays it (hill.play.tournament) through
an arena, storing its ledger and the jousts it plays in the hill's database
under the hill's lock (hill.store.records), as the hill's writer and the
ladder do: in short transactions (hill.writers.lock), so that a round of
half a million matches never keeps a player's request waiting.

Every joust the hill has stored is known before the first is played, so a
tournament over the hill plays none; those it plays are stored for the hill
and the ladder.  Killed at any moment, a tournament loses at most the last
fraction of a second of results (hill.play.tournament.WriteBehind), and
`run` of the same id finishes it with exactly the result it would have had.
An admin may cancel one (`cancel`): whoever plays it, in any process,
stops after its write transaction under way (Cancelled, CancelWatch), and
its result is the matches committed by then.
"""

from __future__ import annotations

import functools

from sqlalchemy import select

from hill import engine
from hill.engine.arena import Arena
from hill.errors import Cancelled, TournamentError
from hill.play.tournament import Checkpoint, Progress, Tournament
from hill.rules.contests import contest_of_pool
from hill.store.jousts import load_jousts
from hill.store.pools import hill_pool
from hill.store.queries import code_by_hash
from hill.store.records import (
    HillLedgerStore,
    TournamentSummary,
    TournamentView,
    add_tournament,
    cancel,
    entrants_of,
    plan_of,
    summary,
    tournament,
    unfinished_pools,
)
from hill.store.tables import TournamentRow
from hill.tournaments.criteria import CRITERIA
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import seed_for, tournament_format
from hill.writers.hill import Hill


class HillTournaments:
    """Create and play the hill's tournaments."""

    def __init__(self, hill: Hill) -> None:
        self.hill = hill

    def create(
        self,
        format: str,
        pool: str,
        *,
        all_versions: bool = False,
        seed: int | None = None,
        additional_rounds: int = 0,
        allow_repeat: bool = False,
        criteria: tuple[str, ...] = CRITERIA,
        started_by: str = "",
    ) -> int:
        """Store a new tournament over `pool` (not played yet); its id."""
        tournament_format(format)  # TournamentError if there is no such format
        with self.hill.db.session() as session:
            chosen = hill_pool(session, pool, all_versions=all_versions)
        seed = seed_for(format, seed)
        plan = TournamentPlan(
            format=format,
            entrants=tuple(chosen.programs),
            seed=seed,
            additional_rounds=additional_rounds,
            allow_repeat=allow_repeat,
            criteria=criteria,
        )
        hashes = [engine.code_hash(code) for code in chosen.programs.values()]
        with self.hill.lock.transaction() as session:
            return add_tournament(session, plan, chosen.label, hashes, started_by)

    def run(
        self,
        tournament_id: int,
        progress: Progress | None = None,
        jousts: Arena | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> TournamentView:
        """Play tournament `tournament_id` from wherever it stands to its end
        (on `jousts`, default the hill's arena); its final view."""
        self.prepare(tournament_id, jousts, checkpoint).run(progress)
        view = tournament(self.hill.db, tournament_id)
        assert view is not None
        return view

    def prepare(
        self,
        tournament_id: int,
        jousts: Arena | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> Tournament:
        """The stored tournament, ready to play on: its checked-out matches
        are queued again and every stored joust among its entrants is known.
        Between pieces of its work, `checkpoint` is called (it may wait, or
        raise to stop) and a cancellation is looked for (Cancelled)."""
        watch = CancelWatch(self.hill, tournament_id, checkpoint)
        with self.hill.db.session() as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"there is no tournament {tournament_id}")
            entrants = entrants_of(session, tournament_id)
            plan = plan_of(row, entrants)
            codes = {e.code_hash: code_by_hash(session, e.code_hash) for e in entrants}
            programs = {e.name: codes[e.code_hash] for e in entrants}
            known = load_jousts(session, codes)
        writes = functools.partial(self.hill.lock.in_short_transactions, between=watch.after_write)
        store = HillLedgerStore(self.hill.db, writes, tournament_id)
        return Tournament(plan, programs, store, jousts or self.hill.arena, known, watch)

    def cancel(self, tournament_id: int, by: str) -> TournamentSummary:
        """End an unfinished tournament where it stands, cancelled by `by`
        (TournamentError if there is none, or it is over); its summary from
        its counts (the matches committed so far are its result: its
        standings, a replay of them, are the view's).  Whoever plays it
        stops after the write transaction under way (CancelWatch)."""
        with self.hill.lock.transaction() as session:
            cancel(session, tournament_id, by)
        found = summary(self.hill.db, tournament_id)
        assert found is not None
        return found

    def unfinished(self, *, contests: bool = True) -> list[int]:
        """The tournaments to play on (after a restart), oldest first;
        without the contests' unless `contests`."""
        with self.hill.db.session() as session:
            found = unfinished_pools(session)
        return [id for id, pool in found if contests or contest_of_pool(pool) is None]


class CancelWatch:
    """A tournament's checkpoint between two pieces of its work: the
    caller's (`inner`: it may wait for more urgent work, or raise Stopped).
    After each of its write transactions, `after_write` also reads whether
    it was cancelled meanwhile (by this process or another), in the
    database it writes to: a cancelled tournament is played no further
    than the transaction under way (Cancelled)."""

    def __init__(self, hill: Hill, tournament_id: int, inner: Checkpoint | None) -> None:
        self.hill = hill
        self.id = tournament_id
        self.inner = inner
        self.ended = self._ended()  # a tournament over already is played no more anyway

    def __call__(self) -> None:
        if self.inner is not None:
            self.inner()

    def after_write(self) -> None:
        self()
        ended = self._ended()
        if ended != self.ended:
            raise Cancelled(f"tournament {self.id} was {ended}")

    def _ended(self) -> str | None:
        with self.hill.db.session() as session:
            return session.scalar(select(TournamentRow.ended).where(TournamentRow.id == self.id))
