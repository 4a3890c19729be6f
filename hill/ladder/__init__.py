"""The all-time ladder: rank a pool of programs from a fraction of its jousts.

- `ratings`: Bradley-Terry over battles (ties half), quasi-likelihood
  intervals;
- `estimate`: the markov ranking of the full round robin, estimated from
  the jousts played and a matchup model for the others;
- `pairing`: which jousts to play next (the ladder's rule, Paulson's rule,
  random; by bits or by bits per cycle);
- `seeding`: virtual results for a new version, and how they fade;
- `ladder`: the loop that plays rounds through a `Player` and the standing;
- `report`: the result as the JSON of `bfjoust ladder run` and as text.

Everything here is pure computation over plain arrays; playing jousts is
the Player's business.  `board`: the hill's all-time ladder as plain data
(hill.store.archive keeps it, hill.writers.ladder plays it).

May import: hill.engine (its Python face, not the arena), hill.rules, numpy,
scipy, threadpoolctl.  No I/O library at any depth.
"""
