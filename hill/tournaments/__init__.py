"""Tournaments: a fixed pool of programs played against each other and ranked.

They never change the hill (the spec is docs/tournaments.md). The rules are pure
functions over plain data, each in its own module:

- `match`: a joust's margin as a match result (win, draw, loss);
- `round_robin`: standings, crosstable and the reality show;
- `swiss`: the Swiss pairing (round 1 from the seed, byes, deadlocks);
- `criteria`: the Swiss tie-break criteria (Buchholz, Sonneborn-Berger, ...);
- `ledger`: matches created, checked out and committed, round by round.

Running one: `pools` reads the entrants, `runner` plays a tournament through
the arena (`hill.arena`: every local core, or `dask_executor`: a Dask
cluster), `state_file` keeps it in SQLite, and `commands` is `bfjoust
tournament ...`.
"""


class TournamentError(Exception):
    """Bad input to a tournament (a bad pool, option or cluster): one clear message."""
