"""Playing many jousts: tournaments run through the arena, on local cores or
a Dask cluster.

May import: the engine (its arena), the tournament rules, Dask (only where
a cluster is used).  Never the store: what is played is written through a
store the caller hands in (hill.tournaments.ledger.LedgerStore).
"""
