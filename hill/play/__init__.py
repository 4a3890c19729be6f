"""Playing many jousts: tournaments run through the arena, on local cores or
a Dask cluster (`tournament`, `cluster`, `pools`); the ladder's jousts over
files (`ladder`).

May import: hill.engine (its arena), the rules (hill.tournaments,
hill.ladder), numpy, Dask's distributed (only where a cluster is used).
Never the store: what is played is written through a store the caller
hands in (hill.tournaments.ledger.LedgerStore).
"""
